"""A small local web server for ``web_fetch`` tests (stdlib, 127.0.0.1 only).

Routes: ``/page`` (HTML with a script, a style, an image and a link), ``/text``, ``/json``,
``/big?n=BYTES`` (HTML of that size), ``/huge`` (more than 10 MiB, streamed without a
length), ``/same`` (302 to ``/page``), ``/cross`` (302 to the same path on ``localhost``),
``/loop`` (302 to itself), ``/slow?s=SECONDS``, ``/bin`` (PNG bytes), ``/missing`` (404),
``/bomb?mib=N&enc=gzip,gzip`` (N MiB of zeros as text, sent with that ``Content-Encoding``:
a decompression bomb, 2.5 KB for 1 GiB under ``gzip, gzip``).
Every request path is recorded in ``requests``.
"""

from __future__ import annotations

import functools
import gzip
import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE = (
    "<html><head><title>T</title><style>p{color:red}</style>"
    "<script>var secret = 1;</script></head><body><h1>Docs</h1>"
    "<p>Hello <a href='https://example.org/x'>the link</a> <img src='i.png' alt='pic'></p>"
    "<ul><li>one</li><li>two</li></ul><pre><code>x = 1</code></pre></body></html>"
)
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


@functools.lru_cache(maxsize=8)
def bomb(mib: int, encodings: tuple[str, ...]) -> bytes:
    """``mib`` MiB of zeros encoded by ``encodings`` in order (``gzip``, ``deflate``), built
    without compressing it all: after a full flush the compressor starts over, so every MiB
    compresses to the same bytes."""
    zeros = bytes(1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    raw = block * mib + packer.flush()
    first, *rest = encodings
    if first == "gzip":
        crc = functools.reduce(lambda c, _: zlib.crc32(zeros, c), range(mib), 0)
        trailer = struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)
        data = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + raw + trailer
    else:
        adler = functools.reduce(lambda a, _: zlib.adler32(zeros, a), range(mib), 1)
        data = b"\x78\xda" + raw + struct.pack(">I", adler)
    for name in rest:
        data = gzip.compress(data) if name == "gzip" else zlib.compress(data, 9)
    return data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(
        self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        self.server.requests.append(self.path)
        port = self.server.server_address[1]
        route = parts.path
        if route == "/page":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif route == "/text":
            self._send(200, "plain é text".encode(), "text/plain; charset=utf-8")
        elif route == "/json":
            self._send(200, b'{"a": 1}', "application/json")
        elif route == "/big":
            n = int(query.get("n", ["100000"])[0])
            body = ("<html><body>" + "<p>" + "y" * 96 + "</p>" * 0).encode()
            line = b"<p>" + b"z" * 92 + b"</p>\n"
            self._send(200, body + line * (n // len(line)), "text/html")
        elif route == "/huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"h" * 65536
            try:
                for _ in range(200):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
        elif route == "/same":
            self._send(302, b"", "text/plain", {"Location": "/page"})
        elif route == "/cross":
            self._send(302, b"", "text/plain", {"Location": f"http://localhost:{port}/page"})
        elif route == "/loop":
            self._send(302, b"", "text/plain", {"Location": "/loop"})
        elif route == "/slow":
            time.sleep(float(query.get("s", ["5"])[0]))
            self._send(200, b"late", "text/plain")
        elif route == "/bomb":
            encodings = query.get("enc", ["gzip"])[0]
            body = bomb(int(query.get("mib", ["64"])[0]), tuple(encodings.split(",")))
            try:
                self._send(200, body, "text/plain", {"Content-Encoding": encodings})
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
        elif route == "/bin":
            self._send(200, PNG, "image/png")
        else:
            self._send(404, b"no", "text/plain")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        self.requests: list[str] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early (a capped or cancelled fetch) is not an error."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class WebServer:
    """The server in a background thread, as a context manager."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def requests(self) -> list[str]:
        return self._server.requests

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
