"""Linear-time regular expressions (RE2) for patterns that come from a model or a repository.

Python's ``re`` backtracks: ``(\\w+\\s?)+$`` over one line of code, a glob such as
``*a*a*a*a*a*a*a*a*a*a*b`` over a long name, or ``.*foo`` over a 100 KB line take seconds to
centuries, and ``re`` holds the GIL while it runs, so not even a signal handler gets through.
RE2 runs in time linear in the subject and releases the GIL, so a search stays cancellable.

:func:`translate` maps Python's syntax onto RE2's with Python's meaning kept: ``\\w``, ``\\d``
and ``\\s`` are Unicode classes in Python (ASCII in RE2), ``\\Z`` is RE2's ``\\z``, a JavaScript
named group ``(?<n>...)`` is ``(?P<n>...)``.  What RE2 cannot mean the same way (backreferences,
look-around, ``\\b``/``\\B`` on Unicode text, ``{,n}``, negated Unicode classes inside brackets)
raises :class:`NotLinear`; callers run such a pattern where it can be killed instead.
"""

from __future__ import annotations

from typing import Any, cast

from headwire.errors import ToolError

_WORD = r"\p{L}\p{N}_"
_SPACE = r"\s\x0b\p{Z}\x1c-\x1f\x85"
_DIGIT = r"\p{Nd}"
_OUTSIDE = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "d": _DIGIT,
    "D": r"\P{Nd}",
    "Z": r"\z",
}
_INSIDE = {"w": _WORD, "s": _SPACE, "d": _DIGIT, "D": r"\P{Nd}"}


class NotLinear(ToolError):
    """The pattern has no linear-time equivalent with the same meaning (or RE2 rejects it)."""


def translate(pattern: str) -> str:
    """``pattern`` (Python ``re`` syntax) in RE2 syntax with the same meaning, or
    :class:`NotLinear`.  One pass over the pattern; escapes and bracket expressions are
    tracked so that ``\\\\w`` (a literal backslash, then ``w``) stays as it is."""
    if "{," in pattern:
        raise NotLinear("'{,n}' repetition")
    out: list[str] = []
    index, size, in_class = 0, len(pattern), False
    while index < size:
        char = pattern[index]
        if char == "\\" and index + 1 < size:
            escaped = pattern[index + 1]
            if escaped in "bB" and not in_class:
                raise NotLinear("Unicode word boundary")
            if escaped.isdigit() and escaped != "0" and not in_class:
                raise NotLinear("backreference")
            table = _INSIDE if in_class else _OUTSIDE
            if escaped in table:
                out.append(table[escaped])
            elif in_class and escaped in "WS":
                raise NotLinear("negated class inside brackets")
            else:
                out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "]" and not _class_start(pattern, index):
                in_class = False
            elif char == "[" and pattern.startswith("[:", index):
                raise NotLinear("POSIX class (Python reads it literally)")
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
        elif char == "(" and pattern.startswith("(?<", index) and pattern[index + 3 : index + 4]:
            if pattern[index + 3] in "=!":
                raise NotLinear("look-behind")
            out.append("(?P<")
            index += 3
            continue
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _class_start(pattern: str, index: int) -> bool:
    """Whether the ``]`` at ``index`` is a literal first member (``[]...]`` or ``[^]...]``)."""
    return pattern[index - 1] == "[" or (
        pattern[index - 1] == "^" and index >= 2 and pattern[index - 2] == "["
    )


class LinearPattern:
    """A compiled RE2 pattern (capturing nothing: only the whole match's span is used)."""

    def __init__(self, regex: str, *, ignore_case: bool = False, multiline: bool = False) -> None:
        import re2  # type: ignore[import-untyped]  # imported lazily: a native library

        options = re2.Options()
        options.never_capture = True
        options.log_errors = False
        options.case_sensitive = not ignore_case
        options.max_mem = 64 << 20
        flags = "(?m)" if multiline else ""
        try:
            self._regex: Any = re2.compile(flags + regex, options)
        except re2.error as exc:
            raise NotLinear(f"RE2 rejects the pattern: {exc}") from None

    @property
    def program_size(self) -> int:
        """The size of RE2's compiled program: a search costs at most about this many steps
        per byte searched (when RE2's DFA gives up on the pattern and it falls back to its
        NFA, about 10 ns a step)."""
        return int(self._regex.programsize)

    def search(
        self, data: bytes, pos: int = 0, endpos: int | None = None
    ) -> tuple[int, int] | None:
        """The span of the leftmost match in ``data[pos:endpos]`` (in context), or ``None``."""
        found = self._regex.search(data, pos, len(data) if endpos is None else endpos)
        return None if found is None else cast(tuple[int, int], found.span())

    def match(self, subject: str) -> bool:
        """Whether the pattern matches at the start of ``subject`` (a path: a name that is not
        valid UTF-8 is matched with U+FFFD in place of each undecodable byte)."""
        return self._regex.match(_utf8(subject)) is not None


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes of a non-UTF-8 file name
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace").encode()


def compile_linear(
    pattern: str, *, ignore_case: bool = False, multiline: bool = False
) -> LinearPattern:
    """Compile a Python-syntax ``pattern`` for RE2 (:func:`translate`), or :class:`NotLinear`."""
    return LinearPattern(translate(pattern), ignore_case=ignore_case, multiline=multiline)
