"""Wire encoding: bytes identical to Node's ``JSON.stringify`` and exact payload accounting;
decoding that reads back everything the encoder writes."""

from headwire.wire.decode import loads
from headwire.wire.encode import encode, encode_str, js_number, payload_bytes

__all__ = ["encode", "encode_str", "js_number", "loads", "payload_bytes"]
