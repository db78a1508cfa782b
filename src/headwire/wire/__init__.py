"""Wire encoding: bytes identical to Node's ``JSON.stringify``, exact payload accounting, and
the JSON reader that reads back everything the writers write (lone surrogates included)."""

from headwire.wire.decode import JsonDecodeError, loads
from headwire.wire.encode import dumps, encode, encode_str, js_number, payload_bytes
from headwire.wire.lines import LineSplitter, split_lines

__all__ = [
    "JsonDecodeError",
    "LineSplitter",
    "dumps",
    "encode",
    "encode_str",
    "js_number",
    "loads",
    "payload_bytes",
    "split_lines",
]
