"""Wire encoding: bytes identical to Node's ``JSON.stringify`` and exact payload accounting;
decoding that reads back everything the encoder writes."""

from headwire.wire.decode import loads
from headwire.wire.encode import encode, encode_str, js_number
from headwire.wire.size import json_size, payload_bytes, plain_payload_bytes

__all__ = [
    "encode",
    "encode_str",
    "js_number",
    "json_size",
    "loads",
    "payload_bytes",
    "plain_payload_bytes",
]
