"""Wire encoding: bytes identical to Node's ``JSON.stringify`` and exact payload accounting."""

from headwire.wire.encode import encode, encode_str, js_number, payload_bytes

__all__ = ["encode", "encode_str", "js_number", "payload_bytes"]
