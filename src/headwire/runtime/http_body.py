"""HTTP bodies read with bounded memory: decoded here, as they arrive, in bounded steps.

``httpx`` inflates each received chunk through every ``Content-Encoding`` layer in one call,
with no limit on what one call produces: 980 bytes of ``gzip, gzip`` become a gigabyte before a
caller can count a single byte.  Every body headwire reads (``web_fetch``'s pages, a model's
stream, a model server's error and JSON bodies) is therefore read raw (``aiter_raw``) and
decoded by :class:`ContentDecoder`:

* the encodings it asks for and decodes are :data:`ACCEPT_ENCODING` (``gzip``, ``deflate``,
  stacked in any order and number); ``identity`` and tokens nobody registered pass bytes
  through unchanged (as ``httpx`` does); ``br``, ``zstd`` and ``compress``, never asked for,
  are refused (:class:`BodyUndecodable`);
* no decode step produces more than :data:`STEP_BYTES` (``zlib``'s ``max_length``), whatever
  the compression ratio, so memory follows what the caller keeps, not what the server packed;
* with ``max_bytes``, the raw body and the output of every layer are each capped: past it,
  :class:`BodyTooLarge` is raised at once, before more is decoded.

:func:`read_body` reads a whole body under a cap (an error); :func:`read_head` reads at most a
cap and stops there (the rest is never read; closing the response drops the connection).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from typing import Any, Protocol

from headwire.errors import RemoteProtocolError

STEP_BYTES = 64 * 1024
"""The most bytes one decode step produces."""
ACCEPT_ENCODING = "gzip, deflate"
"""The ``Accept-Encoding`` header of every request whose body is read here."""
_REFUSED = frozenset({"br", "zstd", "compress", "x-compress"})


class HeaderFields(Protocol):
    """An answer's header fields (``httpx.Headers``,
    :class:`~headwire.runtime.models.http_client.Headers`)."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def get_list(self, key: str, split_commas: bool = False) -> list[str]: ...


class Answer(Protocol):
    """An HTTP answer whose body is read here (``httpx.Response``,
    :class:`~headwire.runtime.models.http_client.Response`)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> HeaderFields: ...

    def aiter_raw(self) -> AsyncIterator[bytes]: ...


class BodyTooLarge(RemoteProtocolError):
    """The body (raw, or once decoded through one of its layers) passed its cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than the {limit}-byte limit")
        self.limit = limit


class BodyUndecodable(RemoteProtocolError):
    """The body's ``Content-Encoding`` is one headwire does not decode, or its data is corrupt."""


class _Zlib:
    """One ``gzip`` or ``deflate`` layer: ``deflate`` as zlib data, or raw as some servers send
    it; ``gzip`` with any number of members (bytes after the last one that do not start
    another are ignored, as ``httpx`` ignores them)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._raw_tried = gzip
        self._started = False
        self._next_member = False
        self._done = False
        self._obj = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        pending = data
        while not self._done:
            try:
                out = self._obj.decompress(pending, STEP_BYTES)
            except zlib.error as exc:
                if self._next_member:  # trailing bytes, not another member
                    self._done = True
                    return
                if self._started or self._raw_tried:
                    name = "gzip" if self._gzip else "deflate"
                    raise BodyUndecodable(f"corrupt {name} data ({exc})") from None
                self._raw_tried = True  # "deflate" sent as raw deflate, without the zlib header
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self._started = True
            if out:
                self._next_member = False
                yield out
            if self._obj.eof:
                if not self._gzip:
                    self._done = True
                    return
                pending = self._obj.unused_data  # perhaps another member, perhaps later
                self._obj = zlib.decompressobj(zlib.MAX_WBITS | 16)
                self._next_member = True
                if not pending:
                    return
                continue
            pending = self._obj.unconsumed_tail
            if not pending and len(out) < STEP_BYTES:
                return


class _Identity:
    def feed(self, data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), STEP_BYTES):
            yield data[start : start + STEP_BYTES]


class ContentDecoder:
    """The decoded bytes of a body sent with ``Content-Encoding`` ``encodings`` (in the order
    they were applied), fed raw chunks as they arrive.

    Invariants: for any split of the raw body into chunks, the pieces :meth:`feed` yields,
    joined, are the decoded body; no piece is longer than :data:`STEP_BYTES`; with
    ``max_bytes``, :class:`BodyTooLarge` is raised as soon as the raw bytes or one layer's
    output pass ``max_bytes``, so at most ``max_bytes`` plus one step is ever produced.
    """

    def __init__(self, encodings: list[str], max_bytes: int | None = None) -> None:
        self._max = max_bytes
        self._layers: list[_Zlib | _Identity] = []
        for raw in reversed(encodings):  # the last applied is undone first
            name = raw.strip().lower()
            if name in ("gzip", "x-gzip"):
                self._layers.append(_Zlib(gzip=True))
            elif name == "deflate":
                self._layers.append(_Zlib(gzip=False))
            elif name in _REFUSED:
                raise BodyUndecodable(f"Content-Encoding {name!r} is not supported")
        if not self._layers:
            self._layers.append(_Identity())
        self._counts = [0] * (len(self._layers) + 1)

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """The decoded pieces ``chunk`` completes (each at most :data:`STEP_BYTES`)."""
        self._count(0, len(chunk))
        return self._through(0, chunk)

    def _count(self, index: int, size: int) -> None:
        self._counts[index] += size
        if self._max is not None and self._counts[index] > self._max:
            raise BodyTooLarge(self._max)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        for piece in self._layers[index].feed(data):
            self._count(index + 1, len(piece))
            if index + 1 == len(self._layers):
                yield piece
            else:
                yield from self._through(index + 1, piece)


def decoder_for(response: Answer, max_bytes: int | None = None) -> ContentDecoder:
    """The :class:`ContentDecoder` of ``response``'s ``Content-Encoding``."""
    return ContentDecoder(
        response.headers.get_list("content-encoding", split_commas=True), max_bytes
    )


async def iter_body(response: Answer, max_bytes: int | None = None) -> AsyncGenerator[bytes, None]:
    """``response``'s body, decoded, in pieces of at most :data:`STEP_BYTES` (see
    :class:`ContentDecoder` for ``max_bytes``)."""
    decoder = decoder_for(response, max_bytes)
    async for chunk in response.aiter_raw():
        for piece in decoder.feed(chunk):
            yield piece


async def read_body(response: Answer, max_bytes: int) -> bytes:
    """The whole decoded body; :class:`BodyTooLarge` past ``max_bytes``."""
    pieces = [piece async for piece in iter_body(response, max_bytes)]
    return b"".join(pieces)


async def read_head(response: Answer, max_bytes: int) -> bytes:
    """At most the first ``max_bytes`` of the decoded body; the rest is not read."""
    pieces: list[bytes] = []
    kept = 0
    try:
        async with contextlib.aclosing(iter_body(response, 4 * max_bytes + STEP_BYTES)) as body:
            async for piece in body:
                pieces.append(piece[: max_bytes - kept])
                kept += len(pieces[-1])
                if kept >= max_bytes:
                    break
    except (BodyTooLarge, BodyUndecodable):
        pass  # what was decoded is all there is to show
    return b"".join(pieces)


__all__ = [
    "ACCEPT_ENCODING",
    "STEP_BYTES",
    "Answer",
    "BodyTooLarge",
    "BodyUndecodable",
    "ContentDecoder",
    "HeaderFields",
    "decoder_for",
    "iter_body",
    "read_body",
    "read_head",
]
