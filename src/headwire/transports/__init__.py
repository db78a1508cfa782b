"""Sans-IO output transports: wire messages in, bytes out (pure; ``io`` writes the bytes)."""

from headwire.transports.headless import (
    HeadlessTransport,
    JsonTransport,
    StreamJsonTransport,
    TextTransport,
    make_transport,
)

__all__ = [
    "HeadlessTransport",
    "JsonTransport",
    "StreamJsonTransport",
    "TextTransport",
    "make_transport",
]
