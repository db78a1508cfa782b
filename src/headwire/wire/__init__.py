"""Wire encoding: bytes identical to Node's ``JSON.stringify``, exact payload accounting, and
the JSON reader that reads back everything the writers write (lone surrogates included)."""

from headwire.wire.decode import JsonDecodeError, loads
from headwire.wire.encode import dumps, encode, encode_str, js_number
from headwire.wire.size import json_size, payload_bytes, plain_payload_bytes
from headwire.wire.sse_lines import SseLineSplitter, SseLineTooLong, split_sse_lines

__all__ = [
    "JsonDecodeError",
    "SseLineSplitter",
    "SseLineTooLong",
    "dumps",
    "encode",
    "encode_str",
    "js_number",
    "json_size",
    "loads",
    "payload_bytes",
    "plain_payload_bytes",
    "split_sse_lines",
]
