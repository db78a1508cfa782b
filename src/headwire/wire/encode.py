"""JSON encoding whose bytes equal Node's ``JSON.stringify`` followed by UTF-8 encoding.

A Python ``str`` may hold what a JavaScript string holds: astral code points, and surrogate
code points either alone or in adjacent high/low pairs.  The wire form is the one V8 writes:

* compact separators, non-ASCII as raw UTF-8, object keys in JavaScript's own-property order:
  array-index keys (``"0"`` .. ``"4294967294"``, canonical) first in ascending numeric order,
  then the other keys in insertion order;
* short escapes for ``"`` ``\\`` ``\\b`` ``\\t`` ``\\n`` ``\\f`` ``\\r``, lowercase ``\\u00xx`` for
  the other C0 controls; DEL, ``/`` and U+2028/U+2029 raw;
* an adjacent high+low surrogate pair as the one 4-byte UTF-8 character it stands for;
* a lone surrogate as the six ASCII bytes ``\\udxxx`` (lowercase hex).

Numbers follow ECMAScript ``Number::toString``: integers with ``|n| <= 2**53`` print exactly,
larger integers and floats print as the shortest round-tripping double in JavaScript's layout
(``100`` not ``100.0``, ``1e+21``, ``1e-7``, ``0.000001``), ``-0`` prints as ``0`` and
non-finite numbers, like integers beyond the double range, as ``null``.

The fast path is a single ``orjson.dumps`` call; only values holding floats, very large
integers, array-index keys or surrogate code points take the exact slow path, and that path
still encodes every string run with orjson, so no per-character Python loop ever runs.
"""

from __future__ import annotations

import json as _stdlib_json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson

__all__ = ["dumps", "encode", "encode_str", "js_number"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_ARRAY_INDEX = re.compile("(?:0|[1-9][0-9]{0,9})\\Z")
_MAX_ARRAY_INDEX = 2**32 - 2
_MAX_SAFE_INT = 2**53
_ORJSON_INT_MIN = -(2**63)
_ORJSON_INT_MAX = 2**64 - 1


def _join_pairs(s: str) -> str:
    """Return ``s`` with every adjacent high+low surrogate pair joined into one code point."""
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def encode_str(s: str) -> bytes:
    """Return the exact ``JSON.stringify(s)`` UTF-8 bytes of a string, quotes included."""
    try:
        return orjson.dumps(s)
    except TypeError:
        pass
    # Surrogates: join real pairs, then let the stdlib's C encoder escape the rest of the
    # string exactly as V8 does (short escapes, lowercase \u00xx, U+2028/DEL raw) and turn
    # each remaining lone surrogate into \udxxx while encoding to UTF-8.
    joined = _join_pairs(s) if _PAIR.search(s) is not None else s
    return _stdlib_json.dumps(joined, ensure_ascii=False).encode("utf-8", "backslashreplace")


def js_number(x: float) -> str:
    """Format a number the way ECMAScript ``Number::toString`` (and so ``JSON.stringify``) does."""
    if isinstance(x, int) and not isinstance(x, bool) and -_MAX_SAFE_INT <= x <= _MAX_SAFE_INT:
        return str(x)
    try:
        f = float(x)
    except OverflowError:  # an integer beyond the double range: JavaScript's Infinity
        return "null"
    if not math.isfinite(f):
        return "null"
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    text, _, exp_text = repr(abs(f)).partition("e")
    int_part, _, frac_part = text.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    mantissa = stripped
    n = point
    mantissa = mantissa.rstrip("0")
    k = len(mantissa)
    if k <= n <= 21:
        return sign + mantissa + "0" * (n - k)
    if 0 < n <= 21:
        return sign + mantissa[:n] + "." + mantissa[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + mantissa
    e = n - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + mantissa + "e" + exp
    return sign + mantissa[0] + "." + mantissa[1:] + "e" + exp


def _is_array_index(key: object) -> bool:
    """Whether ``key`` is an array index ("0" .. "4294967294", canonical): JavaScript objects
    list such keys first, in ascending numeric order, whatever the insertion order."""
    return (
        isinstance(key, str)
        and _ARRAY_INDEX.match(key) is not None
        and int(key) <= _MAX_ARRAY_INDEX
    )


def _js_items(value: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """The members of ``value`` in JavaScript's own-property order."""
    items = list(value.items())
    indexed = [item for item in items if _is_array_index(item[0])]
    if not indexed:
        return items
    indexed.sort(key=lambda item: int(item[0]))
    return indexed + [item for item in items if not _is_array_index(item[0])]


def _number_fragment(value: int | float) -> orjson.Fragment:
    return orjson.Fragment(js_number(value).encode())


_ORJSON_DEPTH = 254
"""orjson writes at most this many levels of arrays and objects."""


_PLAIN = frozenset({str, bool, type(None)})
"""Types orjson writes exactly as JavaScript does (a surrogate aside, which orjson refuses)."""


def _may_have_index_keys(value: dict[Any, Any]) -> bool:
    """Whether some key of ``value`` may be an array index: one sorts below ``":"`` (an index
    starts with a digit, and ``"9..." < ":"``).  ``min`` compares the keys in C; a key that is
    not a string makes the answer yes (the caller then looks at each key)."""
    try:
        return bool(min(value) < ":")
    except TypeError:
        return True


def _fixed(value: Any, depth: int = 0) -> Any:
    """``value`` made ready for ``orjson.dumps`` to write JavaScript's bytes: every float and
    every integer past ``2**53`` becomes a pre-encoded fragment, every object with array-index
    keys is rebuilt in JavaScript's key order.  Containers are copied only on the path to such a
    number or object; a value with none is returned as it is (no copy).  Strings are left alone
    (a lone surrogate makes orjson refuse, and the caller then rebuilds with :func:`_exact`).
    Raises ``RecursionError`` past orjson's depth, so :func:`encode` writes level by level.

    Called on every message written, so the common types are tested by identity first and
    the keys are matched against the index pattern only when one sorts before ``":"``.
    """
    kind = type(value)
    if depth > _ORJSON_DEPTH:
        raise RecursionError(_TOO_DEEP)
    if kind is dict or kind is list or kind is tuple:
        is_dict = kind is dict
        if is_dict and value and _may_have_index_keys(value) and any(map(_is_array_index, value)):
            return _exact(value)  # reordered keys: rebuild this object whole
        copy: Any = None
        for key, item in value.items() if is_dict else enumerate(value):
            t = type(item)
            if t in _PLAIN:
                continue
            if t is int:
                if -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                    continue
                new: Any = _number_fragment(item)
            elif t is float:
                new = _number_fragment(item)
            else:
                new = _fixed(item, depth + 1)
                if new is item:
                    continue
            if copy is None:
                copy = dict(value) if is_dict else list(value)
            copy[key] = new
        return value if copy is None else copy
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        return value if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT else _number_fragment(value)
    if kind is float:
        return _number_fragment(value)
    if isinstance(value, bool) or (isinstance(value, str) and _SURROGATE.search(value) is None):
        return value
    return _exact(value)  # subclasses (an IntEnum, a Mapping, a str subclass): rebuilt whole


def _exact(value: Any) -> Any:
    """Rebuild ``value`` with numbers and surrogate strings as pre-encoded orjson fragments."""
    if isinstance(value, str):
        if _SURROGATE.search(value) is None:
            return value
        return orjson.Fragment(encode_str(value))
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            return value
        return orjson.Fragment(js_number(value).encode())
    if isinstance(value, float):
        return orjson.Fragment(js_number(value).encode())
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in _js_items(value):
            if not isinstance(k, str):
                raise TypeError(f"JSON object keys must be str, not {type(k).__name__}")
            if _SURROGATE.search(k) is not None:
                # orjson cannot take a fragment as a key; encode this object by hand.
                return _ManualObject(value)
            out[k] = _exact(v)
        return out
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return [_exact(v) for v in value]
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


class _ManualObject:
    """An object whose keys hold surrogates; encoded member by member."""

    def __init__(self, value: Mapping[str, Any]) -> None:
        self.value = value

    def fragment(self) -> orjson.Fragment:
        parts = [encode_str(k) + b":" + encode(v) for k, v in _js_items(self.value)]
        return orjson.Fragment(b"{" + b",".join(parts) + b"}")


def _default(obj: Any) -> Any:
    if isinstance(obj, _ManualObject):
        return obj.fragment()
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"Type is not JSON serializable: {type(obj).__name__}")


def _encode_flat(value: Any) -> bytes:
    """:func:`encode` for values orjson can nest (at most 254 levels)."""
    try:
        return orjson.dumps(_fixed(value), default=_default)
    except TypeError as exc:
        if "surrogates" not in str(exc) and "str is not valid UTF-8" not in str(exc):
            raise
    return orjson.dumps(_exact(value), default=_default)


_TOO_DEEP = "Recursion limit reached"
"""orjson's message for a value nested over 254 levels."""


def _too_deep(exc: Exception) -> bool:
    return isinstance(exc, RecursionError) or _TOO_DEEP in str(exc)


class _Raw:
    """Bytes :func:`_encode_deep` writes as they are (brackets, separators, keys)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


_FLAT_HEIGHT = 200
"""Subtrees at most this many levels high are written whole by orjson (which stops at 254)."""


def _heights(value: Any) -> dict[int, int]:
    """``id(container) -> its height`` (levels of arrays and objects, itself included) for
    every array and object in ``value``, found with an explicit stack (any depth)."""
    heights: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, done = stack.pop()
        children = (
            item.values()
            if isinstance(item, Mapping)
            else item
            if isinstance(item, list | tuple)
            else None
        )
        if children is None or (not done and id(item) in heights):
            continue
        if done:
            below = [heights.get(id(c), 0) for c in children]
            heights[id(item)] = 1 + max(below, default=0)
        else:
            heights[id(item)] = 0  # visiting (guards a shared container)
            stack.append((item, True))
            stack += [(c, False) for c in children]
    return heights


def _encode_deep(value: Any, flat: Callable[[Any], bytes]) -> bytes:
    """Write ``value`` whatever its depth: each subtree at most :data:`_FLAT_HEIGHT` levels
    high is written by ``flat`` whole; the containers above them are opened by hand, with an
    explicit stack (no recursion), members in JavaScript's order.  Every node is visited a
    fixed number of times: linear in the size of the value."""
    heights = _heights(value)
    out: list[bytes] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item.data)
        elif heights.get(id(item), 0) <= _FLAT_HEIGHT:
            out.append(flat(item))
        elif isinstance(item, Mapping):
            stack.append(_Raw(b"}"))
            members = _js_items(item)
            for i in range(len(members) - 1, -1, -1):
                key, member = members[i]
                if not isinstance(key, str):
                    raise TypeError(f"JSON object keys must be str, not {type(key).__name__}")
                stack += [member, _Raw((b"," if i else b"") + encode_str(key) + b":")]
            stack.append(_Raw(b"{"))
        else:
            stack.append(_Raw(b"]"))
            for i in range(len(item) - 1, -1, -1):
                stack += [item[i], _Raw(b"," if i else b"")]
            stack.append(_Raw(b"["))
    return b"".join(out)


def encode(value: Any) -> bytes:
    """Return the UTF-8 bytes of ``JSON.stringify(value)`` for any JSON value.

    ``value`` is a dict (insertion order kept), list or tuple, str, int, float, bool or None.
    Encoding never raises for strings holding surrogates, nor for values nested deeper than
    orjson writes (254 levels): those are written level by level, as V8 writes them.
    """
    try:
        return _encode_flat(value)
    except (TypeError, RecursionError) as exc:
        if not _too_deep(exc):
            raise
    return _encode_deep(value, _encode_flat)


_EXACT_FALLBACK = ("surrogates", "str is not valid UTF-8", "Integer exceeds 64-bit range")
"""orjson's refusals that :func:`_exact` removes (lone surrogates, integers past 64 bits)."""


def _dumps_flat(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_default)
    except TypeError as exc:
        if not any(reason in str(exc) for reason in _EXACT_FALLBACK):
            raise
    return orjson.dumps(_exact(value), default=_default)


def dumps(value: Any) -> bytes:
    """Compact JSON of ``value`` for a peer that reads JSON (a model server, an MCP server, the
    CLI under the SDK): ``orjson.dumps`` at C speed, except that a string holding a surrogate,
    which orjson refuses, is written as :func:`encode` writes it (a lone surrogate as the
    escape ``\\udxxx``), an integer past 64 bits as the double it rounds to, and a value
    nested deeper than orjson writes level by level.  Unlike :func:`encode` it keeps orjson's
    number and key layout, which JSON readers treat alike; :func:`headwire.wire.loads` reads
    every output back.
    """
    try:
        return _dumps_flat(value)
    except (TypeError, RecursionError) as exc:
        if not _too_deep(exc):
            raise
    return _encode_deep(value, _dumps_flat)
