"""The model calls' HTTP/1.1 client against real sockets: local servers written here, each
answering in one way a server can (keep-alive, closing while idle, chunked, silent, cut short,
1xx first, TLS), and its header fields against ``httpx``'s."""

from __future__ import annotations

import asyncio
import math
import shutil
import ssl
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.models import http_client
from headwire.runtime.models.http_client import HttpClient

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class _Serving:
    """A server on 127.0.0.1 for the ``async with`` block: its port and a count of its
    connections.  Leaving the block closes the listening socket and aborts every connection
    still open (``Server.wait_closed`` waits for them on Python 3.12 and later)."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections: list[asyncio.StreamWriter] = []
        self.port = 0

    async def __aenter__(self) -> _Serving:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections.append(writer)
            try:
                await self.handler(reader, writer)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self.server = await asyncio.start_server(on_connect, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for writer in self.connections:
            writer.transport.abort()
        await self.server.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    """One request's head and body (by ``Content-Length``)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return head + await reader.readexactly(length)


def _answer(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s" % (len(body), extra, body)


def _client(timeout_s: float = 5.0) -> HttpClient:
    return HttpClient(timeout_s=timeout_s, connect_timeout_s=5.0, trust_env=False)


async def _get(client: HttpClient, url: str, body: bytes = b"") -> tuple[int, bytes]:
    async with client.stream("POST", url, content=body, headers={"X-Test": "1"}) as response:
        return response.status_code, await response.aread()


def test_keep_alive_reuses_one_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await _read_request(reader)
            assert b"x-test: 1" in request.lower() and request.endswith(b"hello")
            writer.write(_answer(b"ok"))
            await writer.drain()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            for _ in range(3):
                assert await _get(client, f"http://127.0.0.1:{port}/v1/x?a=b", b"hello") == (
                    200,
                    b"ok",
                )
            await client.aclose()
        assert len(served.connections) == 1

    asyncio.run(main())


def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_answer(b"once"))  # keep-alive by default, then closed anyway
        await writer.drain()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            assert await _get(client, f"http://127.0.0.1:{port}/") == (200, b"once")
            await asyncio.sleep(0.1)  # the server has closed the idle connection
            assert await _get(client, f"http://127.0.0.1:{port}/") == (200, b"once")
            await client.aclose()
        assert len(served.connections) == 2

    asyncio.run(main())


def test_a_pooled_connection_closed_as_the_request_goes_out_is_retried_once() -> None:
    """The race a keep-alive timeout makes: the server reads the next request on an idle
    connection and closes it without an answer; the request goes again on a new connection
    (once: a new connection that fails the same way is the caller's error)."""
    served: list[int] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(1)
        await _read_request(reader)
        writer.write(_answer(b"first" if len(served) == 1 else b"again"))
        await writer.drain()
        if len(served) == 1:
            await _read_request(reader)  # then closed, unanswered

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            assert await _get(client, f"http://127.0.0.1:{port}/") == (200, b"first")
            assert await _get(client, f"http://127.0.0.1:{port}/") == (200, b"again")
            await client.aclose()
        assert len(served.connections) == 2

    asyncio.run(main())


def test_a_new_connection_closed_without_an_answer_is_an_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            with pytest.raises(http_client.RemoteProtocolError):
                await _get(client, f"http://127.0.0.1:{port}/")
        assert len(served.connections) == 1

    asyncio.run(main())


def test_a_chunked_answer_streams_in_pieces() -> None:
    pieces = [b"data: 1\n\n", b"data: 2\n\n", b"x" * 100_000]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            async with client.stream("POST", f"http://127.0.0.1:{served.port}/") as response:
                got = [chunk async for chunk in response.aiter_raw()]
            await client.aclose()
        assert b"".join(got) == b"".join(pieces) and len(got) >= 3

    asyncio.run(main())


def test_a_body_ended_by_closing_is_read_whole_and_not_pooled() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end")
        await writer.drain()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            for _ in range(2):
                assert await _get(client, f"http://127.0.0.1:{port}/") == (200, b"until the end")
            await client.aclose()
        assert len(served.connections) == 2

    asyncio.run(main())


def test_a_silent_server_is_a_read_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await reader.read()  # no answer: until the client gives up

    async def main() -> None:
        client = _client(timeout_s=0.3)
        async with _Serving(handler) as served:
            port = served.port
            with pytest.raises(http_client.ReadTimeout):
                await _get(client, f"http://127.0.0.1:{port}/")
        await client.aclose()

    asyncio.run(main())


def test_the_head_and_each_gap_of_the_body_have_their_own_timeouts() -> None:
    """``timeout_s`` bounds the wait for the answer's head, ``idle_timeout_s`` each wait for the
    body's next bytes (``model.generationConfig.timeout`` and ``streamIdleTimeoutMs``)."""
    head_delay: list[float] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(head_delay[0])
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n")
        await writer.drain()
        await asyncio.sleep(0.6)  # a gap in the body
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()

    async def fetch(client: HttpClient, port: int) -> bytes:
        async with client.stream("POST", f"http://127.0.0.1:{port}/") as response:
            return await response.aread()

    async def main() -> None:
        async with _Serving(handler) as served:
            # a slow head within timeout_s, a body gap within idle_timeout_s: read whole
            head_delay[:] = [0.4]
            client = HttpClient(timeout_s=1.5, connect_timeout_s=5, idle_timeout_s=1.5)
            assert await fetch(client, served.port) == b"abcd"
            await client.aclose()
            # the same head, the gap longer than idle_timeout_s: the body read times out
            client = HttpClient(timeout_s=1.5, connect_timeout_s=5, idle_timeout_s=0.2)
            with pytest.raises(http_client.ReadTimeout, match=r"no data for 0\.2s"):
                await fetch(client, served.port)
            await client.aclose()
            # a head slower than timeout_s times out, however long the idle timeout
            head_delay[:] = [0.6]
            client = HttpClient(timeout_s=0.2, connect_timeout_s=5, idle_timeout_s=math.inf)
            with pytest.raises(http_client.ReadTimeout, match=r"no data for 0\.2s"):
                await fetch(client, served.port)
            await client.aclose()

    asyncio.run(main())


def test_a_header_outside_ascii_is_an_invalid_request_not_a_crash() -> None:
    """An API key or header value with a character h11 cannot write (``é``, a lone surrogate)
    fails before anything is sent, as one with a line break does."""

    async def main() -> None:
        client = _client()
        for value in ("sk-caf\u00e9", "lone \ud800", "line\nbreak"):
            with pytest.raises(http_client.InvalidRequest):
                async with client.stream("POST", "http://127.0.0.1:9/", headers={"X-K": value}):
                    pass
        await client.aclose()

    asyncio.run(main())


def test_nothing_listening_is_a_connect_error() -> None:
    async def main() -> None:
        async with _Serving(lambda r, w: asyncio.sleep(0)) as served:
            port = served.port
        with pytest.raises(http_client.ConnectError):
            await _get(_client(), f"http://127.0.0.1:{port}/")

    asyncio.run(main())


def test_an_answer_left_early_closes_its_connection() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await _read_request(reader)
            writer.write(_answer(b"y" * 200_000))
            await writer.drain()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            async with client.stream("POST", f"http://127.0.0.1:{port}/") as response:
                async for _ in response.aiter_raw():
                    break  # the rest is never read
            assert await _get(client, f"http://127.0.0.1:{port}/") == (200, b"y" * 200_000)
            await client.aclose()
        assert len(served.connections) == 2

    asyncio.run(main())


def test_a_body_cut_short_is_a_protocol_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
        await writer.drain()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            with pytest.raises(http_client.RemoteProtocolError):
                await _get(client, f"http://127.0.0.1:{port}/")
        await client.aclose()

    asyncio.run(main())


def test_an_informational_answer_is_skipped_and_headers_read() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Encoding: gzip\r\n"
            b"content-encoding: deflate\r\nContent-Length: 2\r\n\r\nno"
        )
        await writer.drain()
        await reader.read()

    async def main() -> None:
        client = _client()
        async with (
            _Serving(handler) as served,
            client.stream("POST", f"http://127.0.0.1:{served.port}/") as response,
        ):
            assert (response.status_code, response.reason_phrase) == (429, "Too Many Requests")
            assert not response.is_success
            assert response.headers.get("retry-after") == "3"
            assert response.headers.get_list("Content-Encoding", split_commas=True) == [
                "gzip",
                "deflate",
            ]
            assert await response.aread() == b"no"
        await client.aclose()

    asyncio.run(main())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_https_checks_the_certificate(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(_answer(b"secure"))
        await writer.drain()
        await reader.read()

    async def main() -> None:
        async with _Serving(handler, tls) as served:
            port = served.port
            with pytest.raises(http_client.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await _get(_client(), f"https://127.0.0.1:{port}/")  # certifi's roots only
            trusting = HttpClient(timeout_s=5, connect_timeout_s=5, trust_env=True)
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("SSL_CERT_FILE", str(cert))
                assert await _get(trusting, f"https://127.0.0.1:{port}/") == (200, b"secure")
            await trusting.aclose()

    asyncio.run(main())


def test_a_urls_credentials_are_sent_unless_the_request_has_its_own() -> None:
    seen: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            seen.append(await _read_request(reader))
            writer.write(_answer(b"ok"))
            await writer.drain()

    async def main() -> None:
        client = _client()
        async with _Serving(handler) as served:
            port = served.port
            await _get(client, f"http://us%40er:p%3Ass@127.0.0.1:{port}/")
            async with client.stream(
                "GET", f"http://u:p@127.0.0.1:{port}/", headers={"Authorization": "Bearer k"}
            ) as response:
                await response.aread()
            await client.aclose()

    asyncio.run(main())
    assert b"Authorization: Basic dXNAZXI6cDpzcw==\r\n" in seen[0]  # us@er:p:ss
    assert b"Authorization: Bearer k\r\n" in seen[1] and b"Basic" not in seen[1]
    assert b"Host: 127.0.0.1:" in seen[0]


def test_a_proxy_variable_hands_the_request_to_httpx() -> None:
    assert http_client.proxied("https://api.example/v1", {"HTTPS_PROXY": "http://p:3128"})
    assert http_client.proxied("http://api.example/v1", {"all_proxy": "socks5://p"})
    assert not http_client.proxied("https://api.example/v1", {"HTTP_PROXY": "http://p:3128"})
    assert not http_client.proxied("https://api.example/v1", {})


_NAMES = st.sampled_from(["Content-Encoding", "content-encoding", "Retry-After", "X-A", "x-a"])
_VALUES = st.text(st.sampled_from("ab, 1"), max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NAMES, _VALUES), max_size=6), _NAMES, st.booleans())
def test_header_fields_read_as_httpx_reads_them(
    fields: list[tuple[str, str]], name: str, split: bool
) -> None:
    raw = [(k.encode(), v.strip().encode()) for k, v in fields]
    ours = http_client.Headers(raw)
    theirs = httpx.Headers(raw)
    assert ours.get(name) == theirs.get(name)
    assert ours.get_list(name, split_commas=split) == theirs.get_list(name, split_commas=split)
    assert (name in ours) == (name in theirs)
