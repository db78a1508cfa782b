"""Strict UTF-8 validation: whether bytes are text on the wire, without building a ``str``.

"Strict" is Python's ``bytes.decode("utf-8")`` and the JSON text rule: no overlong forms, no
surrogates (``ED A0``-``ED BF``), nothing above U+10FFFF, no lone continuation byte, no
truncated sequence.  :func:`is_utf8` answers exactly what that decode answers, and answers it
with simdjson's SIMD validator (``simdjson::validate_utf8``, about 10 GB/s here against about
1 GB/s for a decode of mixed text) when the ``pysimdjson`` package's compiled library carries
it.  That library is found the way ``import csimdjson`` would find it and loaded with
``ctypes`` on the first call that meets a byte above 127, so a run that never does pays
nothing; where it is absent (another build, another platform), the check is Python's decode.
``tests/unit/wire/test_utf8.py`` holds both paths to the decode's verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

__all__ = ["is_utf8", "native_validator"]

_SYMBOL: Final = "_ZN8simdjson13validate_utf8EPKcm"
"""``bool simdjson::validate_utf8(const char *buf, size_t len)``: simdjson's public API, under
its Itanium C++ name (Linux and macOS).  It needs no padding after the buffer."""

_LIBRARY_MODULE: Final = "csimdjson"
"""pysimdjson's compiled module, which carries the whole simdjson library."""

Validator = Callable[[bytes, int, int], bool]
"""``validate(data, start, end)``: whether ``data[start:end]`` is strict UTF-8 (no copy)."""

_native: Validator | None = None
_looked = False


def _load() -> Validator | None:
    """simdjson's validator from pysimdjson's library, or ``None`` if it cannot be had."""
    try:
        import ctypes
        import importlib.util

        spec = importlib.util.find_spec(_LIBRARY_MODULE)
        if spec is None or spec.origin is None:
            return None
        function = getattr(ctypes.CDLL(spec.origin), _SYMBOL)
    except (ImportError, OSError, AttributeError, ValueError):
        return None
    function.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    function.restype = ctypes.c_bool
    cast, pointer, chars = ctypes.cast, ctypes.c_void_p, ctypes.c_char_p

    def validate(data: bytes, start: int, end: int) -> bool:
        if not 0 <= start <= end <= len(data):  # the library would read outside ``data``
            raise ValueError(f"no bytes {start}:{end} in {len(data)}")
        # the address of the bytes' own buffer: ``data`` stays referenced across the call,
        # and the library only reads ``end - start`` bytes of it
        base = cast(chars(data), pointer).value or 0
        return bool(function(base + start, end - start))

    # the library answers a known case before it is trusted with any other
    if validate(b"a\xc3\xa9", 1, 3) and not validate(b"\xed\xa0\x80", 0, 3):
        return validate
    return None


def native_validator() -> Validator | None:
    """The compiled validator (loaded once), or ``None`` where this machine has none."""
    global _native, _looked
    if not _looked:
        _native, _looked = _load(), True
    return _native


def is_utf8(data: bytes | bytearray | memoryview, start: int = 0, end: int | None = None) -> bool:
    """Whether ``data[start:end]`` is strict UTF-8: exactly when ``bytes.decode("utf-8")``
    would succeed on that slice (``start`` and ``end`` mean what they mean in a slice).

    A ``bytes`` object goes to the compiled validator without a copy; a ``bytearray`` or a
    ``memoryview`` (short lines) is decoded.
    """
    start, stop, _ = slice(start, end).indices(len(data))
    if stop <= start:
        return True  # an empty slice: the native call never sees a negative length
    if type(data) is bytes:
        if start == 0 and stop == len(data) and data.isascii():
            return True  # stops at the first byte above 127: cheap either way
        validate = native_validator()
        if validate is not None:
            return validate(data, start, stop)
    try:
        str(memoryview(data)[start:stop], "utf-8")
    except UnicodeDecodeError:
        return False
    return True
