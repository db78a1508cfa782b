"""JSON reading that accepts everything headwire's writers write: the text rule's reading half.

headwire's text rule (docs/reference.md, "Text at every boundary"): a string is a sequence of
UTF-16 code units, as in JavaScript, so it may hold a lone surrogate: a surrogate-escaped byte
of a file name or of command output that is not UTF-8 (``\\udce9``), or one that a client, a
model or an MCP server sent as an escape.  Every writer writes a lone surrogate as the JSON escape
``\\udxxx`` (``JSON.stringify``'s form, :func:`headwire.wire.encode`, :func:`dumps`), and every
reader reads that escape back as the same lone surrogate (``JSON.parse``'s reading, :func:`loads`),
so a value written by headwire is read back exactly.  Bytes that are not UTF-8 are not JSON
text: :func:`loads` refuses them with a one-line reason naming the byte, or, with
``replace_invalid=True`` (output of a server headwire drives, which cannot be asked again), reads
each bad sequence as U+FFFD as Node's ``TextDecoder`` does.

orjson reads almost every line at C speed; what it refuses although ``JSON.parse`` accepts it
(escaped lone surrogates, integers beyond 64 bits) is read again by the standard library's C
scanner, so no per-character Python loop runs either way.
"""

from __future__ import annotations

import json as _stdlib_json
from typing import Any

import orjson

from headwire.errors import RemoteProtocolError
from headwire.wire.deep_json import loads_any_depth

__all__ = ["JsonDecodeError", "loads"]


class JsonDecodeError(RemoteProtocolError, orjson.JSONDecodeError):
    """A line that is not JSON text (invalid JSON, not UTF-8, nested too deeply to read).

    It is also an ``orjson.JSONDecodeError`` (and so a ``ValueError``): code that caught
    orjson's error catches this one unchanged.
    """


_TOO_DEEP = "depth limit"
"""Part of orjson's message for a text nested over 1,024 levels."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # orjson's message is the one reported


def loads(
    data: bytes | bytearray | memoryview | str,
    *,
    replace_invalid: bool = False,
    any_depth: bool = False,
) -> Any:
    """The JSON value of ``data``, read as ``JSON.parse`` reads it.

    An escaped lone surrogate (``"\\ud800"``) becomes that lone surrogate in the ``str``; an
    escaped pair becomes the one code point it stands for; ``NaN`` and ``Infinity`` are not
    JSON.  Bytes that are not UTF-8 raise :class:`JsonDecodeError` (``invalid UTF-8 at byte N``)
    unless ``replace_invalid`` is true, when each bad sequence reads as U+FFFD.  A text nested
    over 1,024 levels is refused (a client's line), unless ``any_depth`` is true (headwire's own
    recording, which :func:`headwire.wire.encode` writes at any depth).  Invariant:
    ``loads(encode(v), any_depth=True) == v`` for every JSON value ``v`` whose numbers are
    integers within ``2**53`` or finite floats, whatever its strings hold and however deep.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        refused = exc  # its message describes invalid JSON best (and as it always did)
    too_deep = _TOO_DEEP in refused.msg
    if too_deep and not any_depth:  # over 1,024 levels: refused whatever the stack depth
        raise JsonDecodeError(refused.msg, refused.doc, refused.pos) from None
    if isinstance(data, str):
        text = data
    else:
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not replace_invalid:
                raise JsonDecodeError(f"invalid UTF-8 at byte {exc.start}", "", exc.start) from None
            text = raw.decode("utf-8", "replace")
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError as exc:
                refused = exc
    try:
        if not too_deep:
            return _stdlib_json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        if not any_depth:
            raise JsonDecodeError(refused.msg, refused.doc, refused.pos) from None
    except ValueError:  # not JSON for the standard library either
        raise JsonDecodeError(refused.msg, refused.doc, refused.pos) from None
    try:
        return loads_any_depth(text)
    except ValueError:
        raise JsonDecodeError(refused.msg, refused.doc, refused.pos) from None
