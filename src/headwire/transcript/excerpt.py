"""Bounded views of long texts, and a fair split of one byte budget among many of them (pure).

A transcript may hold a 5 MB tool output per call; a page a person opens holds a head and a
tail of each.  :class:`Excerpt` is that view and :func:`fair_cap` decides how many bytes each
view gets when a whole page has a budget.

Invariants (hypothesis properties in ``tests/unit/transcript/test_excerpt.py``):

* ``excerpt_of(text, n)`` shows at most ``n`` UTF-8 bytes, and the bytes shown plus
  ``omitted_bytes`` equal the text's UTF-8 size;
* an excerpt of a text that fits is the whole text (``head == text``, ``tail == ""``);
* ``head`` is a prefix and ``tail`` a suffix of the text (after replacing lone surrogates);
* ``shrink(e, n)`` shows at most ``n`` bytes, keeps ``total_bytes``, and is ``e`` when ``e``
  already fits;
* ``fair_cap(sizes, total)``: ``sum(min(s, cap)) <= total`` whenever the floor allows it, and
  the cap is the largest such (one more byte would overflow), or the largest size if all fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from headwire.records import dataclass

__all__ = [
    "Excerpt",
    "excerpt_of",
    "fair_cap",
    "shrink",
    "utf8",
]


def utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate (possible in JSON read back) as U+FFFD's ``?``."""
    return text.encode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A head and a tail of a text whose UTF-8 size is ``total_bytes``.

    ``omitted_bytes`` is what lies between them; ``0`` means ``head`` is the whole text and
    ``tail`` is empty.
    """

    head: str
    tail: str
    total_bytes: int
    omitted_bytes: int

    @property
    def whole(self) -> bool:
        """Whether nothing was left out."""
        return self.omitted_bytes == 0

    @property
    def shown_bytes(self) -> int:
        """UTF-8 bytes of ``head`` and ``tail`` together."""
        return self.total_bytes - self.omitted_bytes

    @classmethod
    def of_parts(cls, head: bytes, tail: bytes, total_bytes: int) -> Excerpt:
        """An excerpt of raw bytes (a file's first and last bytes): a character cut at either
        edge is dropped, invalid UTF-8 becomes U+FFFD."""
        head_text = _decode_prefix(head)
        tail_text = _decode_suffix(tail)
        shown = len(utf8(head_text)) + len(utf8(tail_text))
        omitted = max(0, total_bytes - len(head) - len(tail))
        return cls(head_text, tail_text, shown + omitted, omitted)


def _decode_prefix(data: bytes) -> str:
    """``data`` decoded, without a multi-byte character cut at its end."""
    for cut in range(min(3, len(data)) + 1):
        try:
            return data[: len(data) - cut].decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.end < len(data) - cut:  # invalid in the middle, not a cut character
                break
    return data.decode("utf-8", "replace")


def _decode_suffix(data: bytes) -> str:
    """``data`` decoded, without a multi-byte character cut at its start."""
    for cut in range(min(3, len(data)) + 1):
        try:
            return data[cut:].decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start > 0:
                break
    return data.decode("utf-8", "replace")


def _head_bytes(data: bytes, n: int) -> str:
    return data[: max(0, n)].decode("utf-8", "ignore")


def _tail_bytes(data: bytes, n: int) -> str:
    return data[len(data) - max(0, n) :].decode("utf-8", "ignore") if n > 0 else ""


def excerpt_of(text: str, budget: int, head_share: float = 0.2) -> Excerpt:
    """At most ``budget`` UTF-8 bytes of ``text``: all of it, or ``head_share`` of the budget
    from its start and the rest from its end (cut on character boundaries)."""
    budget = max(0, budget)
    if len(text) > budget:  # each character is one byte at least: only the prefix matters
        window = budget + 1
        head_data = utf8(text[:window])
        tail_data = utf8(text[-window:])
        total = len(utf8(text))
    else:
        data = utf8(text)
        if len(data) <= budget:
            return Excerpt(data.decode("utf-8"), "", len(data), 0)
        head_data = tail_data = data
        total = len(data)
    head_n = int(budget * head_share)
    head = _head_bytes(head_data, head_n)
    tail = _tail_bytes(tail_data, budget - head_n)
    shown = len(utf8(head)) + len(utf8(tail))
    return Excerpt(head, tail, total, total - shown)


def shrink(excerpt: Excerpt, budget: int, head_share: float = 0.2) -> Excerpt:
    """``excerpt`` cut further to at most ``budget`` shown bytes (``excerpt`` if it fits)."""
    budget = max(0, budget)
    if excerpt.shown_bytes <= budget:
        return excerpt
    if excerpt.whole:
        return excerpt_of(excerpt.head, budget, head_share)
    head_data = utf8(excerpt.head)
    tail_data = utf8(excerpt.tail)
    head_n = min(len(head_data), int(budget * head_share))
    tail_n = min(len(tail_data), budget - head_n)
    head_n = min(len(head_data), budget - tail_n)
    head = _head_bytes(head_data, head_n)
    tail = _tail_bytes(tail_data, tail_n)
    shown = len(utf8(head)) + len(utf8(tail))
    return Excerpt(head, tail, excerpt.total_bytes, excerpt.total_bytes - shown)


def fair_cap(sizes: Sequence[int], total: int, floor: int = 0) -> int:
    """The largest cap with ``sum(min(size, cap)) <= total`` (water filling), at least ``floor``.

    Small items keep all they have; what they leave is shared by the large ones.  When
    everything fits the cap is the largest size.
    """
    ordered = sorted(max(0, s) for s in sizes)
    if not ordered:
        return max(floor, 0)
    remaining = max(0, total)
    count = len(ordered)
    for index, size in enumerate(ordered):
        left = count - index
        if size * left > remaining:
            return max(floor, remaining // left)
        remaining -= size
    return max(floor, ordered[-1])
