"""The model calls' HTTP/1.1 client: ``asyncio`` streams and the ``h11`` state machine.

Every model call is one request whose answer is streamed; ``httpx`` does that too, but brings
``httpcore``, ``anyio`` and their imports to every run (a fifth of a short run's time).  This
client is what a model call needs and no more:

* ``http`` and ``https`` (TLS with ``certifi``'s certificates, or ``SSL_CERT_FILE`` /
  ``SSL_CERT_DIR`` when set, as ``httpx`` reads them), HTTP/1.1, keep-alive: an answer read to
  its end leaves its connection for the next request to the same origin; an answer left early
  (an error body read in part, a cancelled call) closes its connection;
* a pooled connection the server closed while idle is replaced once, before anything of the
  request was answered (as ``httpcore`` does);
* ``connect_timeout_s`` bounds connecting (TLS included); ``timeout_s`` bounds sending and the
  wait for the answer's head, ``idle_timeout_s`` (by default ``timeout_s``) each wait for the
  next bytes of its body (an idle gap), not the whole answer;
* a URL's ``user:password@`` is sent as ``Basic`` credentials unless the request has its own
  ``Authorization``;
* failures are :class:`ConnectError`, :class:`ConnectTimeout`, :class:`ReadTimeout`,
  :class:`WriteTimeout`, :class:`ReadError` and :class:`RemoteProtocolError` (all
  :class:`HttpError`);
* the answer's body is given raw (:meth:`Response.aiter_raw`): :mod:`headwire.runtime.http_body`
  decodes it in bounded steps.

A request that must go through a proxy (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``) is not
this client's: :func:`proxied` says so and the caller uses ``httpx``, which speaks to proxies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import h11

from headwire.errors import HeadwireError

__all__ = [
    "ConnectError",
    "ConnectTimeout",
    "Headers",
    "HttpClient",
    "HttpError",
    "InvalidRequest",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Response",
    "WriteTimeout",
    "proxied",
]

READ_BYTES = 64 * 1024
"""The most bytes one read of the socket asks for."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_NO_ANSWER = "Server disconnected without sending a response."


class HttpError(HeadwireError):
    """A request that did not get a whole answer (the base of this module's errors)."""


class ConnectError(HttpError):
    """The server could not be reached (refused, unknown host, TLS handshake failed)."""


class ConnectTimeout(ConnectError):
    """Connecting took longer than ``connect_timeout_s``."""


class ReadTimeout(HttpError):
    """No byte of the answer came for ``timeout_s``."""


class WriteTimeout(HttpError):
    """The request could not be sent within ``timeout_s``."""


class ReadError(HttpError):
    """The connection failed while the answer was read."""


class InvalidRequest(HttpError):
    """The request cannot be sent as HTTP/1.1 (a header value with a newline or another
    control character, say); nothing was sent.  The message never quotes the value: it may
    be a key."""


class RemoteProtocolError(HttpError):
    """The server broke HTTP/1.1 or closed the connection before the answer's end."""


def proxied(url: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether a proxy variable applies to ``url`` (then ``httpx`` makes the request).  A
    ``NO_PROXY`` naming the host, or ``*``, is left to ``httpx`` too: it reads the rules."""
    scheme = urlsplit(url).scheme
    names = (f"{scheme}_proxy", "all_proxy")
    return any(environ.get(name) or environ.get(name.upper()) for name in names)


class Headers:
    """An answer's header fields: names compared without case, values as text (Latin-1)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        self._items = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in items]

    def get(self, name: str, default: Any = None) -> Any:
        """The values of ``name`` joined by ``", "``, or ``default`` when absent."""
        values = self.get_list(name)
        return ", ".join(values) if values else default

    def get_list(self, name: str, split_commas: bool = False) -> list[str]:
        """Every value of ``name``, in order; with ``split_commas``, each comma-separated part
        (stripped) as its own value."""
        key = name.lower()
        values = [v for k, v in self._items if k == key]
        if not split_commas:
            return values
        return [part.strip() for value in values for part in value.split(",")]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and any(k == name.lower() for k, _ in self._items)

    def items(self) -> list[tuple[str, str]]:
        """The fields as ``(lower-case name, value)`` pairs, in order."""
        return list(self._items)


class _Connection:
    """One connection: its streams and the ``h11`` state of the exchange on it."""

    __slots__ = ("h11", "origin", "reader", "writer")

    def __init__(
        self, origin: tuple[str, str, int], reader: asyncio.StreamReader, writer: Any
    ) -> None:
        self.origin = origin
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class Response:
    """An answer whose head has arrived; its body is read through :meth:`aiter_raw`."""

    def __init__(
        self, client: HttpClient, connection: _Connection, head: h11.Response, timeout_s: float
    ) -> None:
        self.status_code: int = head.status_code
        self.reason_phrase: str = head.reason.decode("latin-1", "replace")
        self.headers = Headers(head.headers)
        self._client = client
        self._connection: _Connection | None = connection
        self._timeout_s = timeout_s

    @property
    def is_success(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status_code < 300

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, as sent (no ``Content-Encoding`` undone)."""
        connection = self._connection
        if connection is None:
            return
        while True:
            event = await _next_event(connection, self._timeout_s)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._finish(connection)
                return

    async def aread(self) -> bytes:
        """The whole raw body."""
        return b"".join([chunk async for chunk in self.aiter_raw()])

    def _finish(self, connection: _Connection) -> None:
        """The answer was read to its end: the connection goes back to the pool if both sides
        may go on, else it is closed."""
        self._connection = None
        state = connection.h11
        if state.our_state is h11.DONE and state.their_state is h11.DONE:
            state.start_next_cycle()
            self._client._release(connection)
        else:
            connection.close()

    def close(self) -> None:
        """Drop what is left of the answer (its connection is closed)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()


async def _next_event(connection: _Connection, timeout_s: float) -> Any:
    """The next ``h11`` event of the answer, reading the socket as needed."""
    state = connection.h11
    while True:
        try:
            event = state.next_event()
        except h11.RemoteProtocolError as exc:
            raise RemoteProtocolError(str(exc) or "malformed HTTP answer") from exc
        if event is not h11.NEED_DATA:
            if isinstance(event, h11.ConnectionClosed):
                raise RemoteProtocolError(_NO_ANSWER)
            return event
        try:
            async with asyncio.timeout(timeout_s):  # no task per read, as wait_for makes
                data = await connection.reader.read(READ_BYTES)
        except TimeoutError as exc:
            raise ReadTimeout(f"no data for {timeout_s:g}s") from exc
        except (OSError, ssl.SSLError) as exc:
            raise ReadError(str(exc) or type(exc).__name__) from exc
        if not data and state.their_state is h11.SEND_RESPONSE:
            raise RemoteProtocolError(_NO_ANSWER)
        try:
            state.receive_data(data)  # b"" is the end of the stream
        except h11.RemoteProtocolError as exc:
            raise RemoteProtocolError(str(exc) or "malformed HTTP answer") from exc


class HttpClient:
    """Requests with streamed answers over a small keep-alive pool (one event loop's)."""

    def __init__(
        self,
        *,
        timeout_s: float,
        connect_timeout_s: float,
        trust_env: bool = True,
        idle_timeout_s: float | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.idle_timeout_s = timeout_s if idle_timeout_s is None else idle_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._trust_env = trust_env
        self._idle: list[_Connection] = []
        self._tls: ssl.SSLContext | None = None

    @contextlib.asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> AsyncIterator[Response]:
        """Send the request; the answer, once its head is in, for the ``async with`` body.
        Leaving the block closes what is left of the answer."""
        response = await self._send(method, url, content, headers or {})
        try:
            yield response
        finally:
            response.close()

    async def aclose(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    # -- the exchange ----------------------------------------------------------------------

    async def _send(
        self, method: str, url: str, content: bytes, headers: dict[str, str]
    ) -> Response:
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ConnectError(f"not an http or https URL: {url}")
        port = parts.port or _DEFAULT_PORTS[parts.scheme]
        origin = (parts.scheme, parts.hostname, port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        if parts.port is not None and parts.port != _DEFAULT_PORTS[parts.scheme]:
            host = f"{host}:{port}"
        fields = [("Host", host), *headers.items()]
        if parts.username is not None and not any(k.lower() == "authorization" for k in headers):
            fields.append(("Authorization", _basic(parts.username, parts.password or "")))
        if content or method in ("POST", "PUT", "PATCH"):
            fields.append(("Content-Length", str(len(content))))
        try:
            request = h11.Request(method=method, target=target, headers=fields)
        except (h11.LocalProtocolError, UnicodeEncodeError):  # h11 takes ASCII text only
            raise InvalidRequest(
                "a header or the URL holds a character HTTP does not allow (a newline, "
                "another control character or a character outside ASCII)"
            ) from None
        while True:
            connection, reused = self._take(origin), True
            if connection is None:
                connection, reused = await self._connect(origin), False
            try:
                return await self._exchange(connection, request, content)
            except (RemoteProtocolError, ReadError) as exc:
                connection.close()
                if not reused or not _closed_while_idle(exc):
                    raise
            except BaseException:
                connection.close()
                raise

    async def _exchange(
        self, connection: _Connection, request: h11.Request, content: bytes
    ) -> Response:
        state = connection.h11
        data = state.send(request) or b""
        if content:
            data += state.send(h11.Data(data=content)) or b""
        data += state.send(h11.EndOfMessage()) or b""
        connection.writer.write(data)
        try:
            async with asyncio.timeout(self.timeout_s):
                await connection.writer.drain()
        except TimeoutError as exc:
            raise WriteTimeout(f"could not send for {self.timeout_s:g}s") from exc
        except (OSError, ssl.SSLError) as exc:
            raise _SendFailed(str(exc) or type(exc).__name__) from exc
        while True:
            event = await _next_event(connection, self.timeout_s)
            if isinstance(event, h11.Response):
                return Response(self, connection, event, self.idle_timeout_s)
            # an informational (1xx) answer: the real one follows

    def _take(self, origin: tuple[str, str, int]) -> _Connection | None:
        """An idle connection to ``origin`` the server has not closed, taken out of the pool
        (those it closed are dropped on the way)."""
        while True:
            found = next((c for c in self._idle if c.origin == origin), None)
            if found is None:
                return None
            self._idle.remove(found)
            if not found.reader.at_eof():
                return found
            found.close()

    def _release(self, connection: _Connection) -> None:
        self._idle.append(connection)

    async def _connect(self, origin: tuple[str, str, int]) -> _Connection:
        scheme, host, port = origin
        tls = self._tls_context() if scheme == "https" else None
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=tls, server_hostname=host if tls else None, limit=READ_BYTES
                )
        except TimeoutError as exc:
            raise ConnectTimeout(f"no connection in {self.connect_timeout_s:g}s") from exc
        except (OSError, ssl.SSLError, ssl.CertificateError) as exc:
            raise ConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(origin, reader, writer)

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            cafile = os.environ.get("SSL_CERT_FILE") if self._trust_env else None
            capath = os.environ.get("SSL_CERT_DIR") if self._trust_env else None
            if not cafile and not capath:
                import certifi

                cafile = certifi.where()
            context = ssl.create_default_context(cafile=cafile or None, capath=capath or None)
            context.set_alpn_protocols(["http/1.1"])
            self._tls = context
        return self._tls


def _basic(user: str, password: str) -> str:
    """The ``Basic`` credentials of a URL's ``user:password@`` (percent-decoded)."""
    from base64 import b64encode
    from urllib.parse import unquote

    return "Basic " + b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()


class _SendFailed(ReadError):
    """The request could not be written (on a pooled connection: the server closed it)."""


def _closed_while_idle(exc: HttpError) -> bool:
    """Whether ``exc``, raised before the answer's head, is what a connection the server
    closed while it sat in the pool gives: a failed send, a reset, or the end of the stream
    instead of a head."""
    if isinstance(exc, ReadError):
        return isinstance(exc, _SendFailed) or isinstance(exc.__cause__, ConnectionError)
    return str(exc) == _NO_ANSWER
