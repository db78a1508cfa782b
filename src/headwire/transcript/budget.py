"""How many bytes of each text an exported page shows (pure).

A page shows every prompt, message, argument list, wire view and output of a transcript.  Each
gets at most the same cap, chosen by :func:`headwire.transcript.excerpt.fair_cap` so that the
shown bytes add up to at most :data:`PAGE_TEXT_BYTES`: a short text shows whole and leaves its
share to the long ones.  A session with 200 tool outputs of 5 MB each shows about 8 KiB of each
one's wire view and of its full output.
"""

from __future__ import annotations

from collections.abc import Iterator

from headwire.transcript.excerpt import Excerpt, fair_cap
from headwire.transcript.model import Text, ToolCall, Transcript

__all__ = [
    "MIN_SHOWN_BYTES",
    "PAGE_TEXT_BYTES",
    "excerpts",
    "page_cap",
]

PAGE_TEXT_BYTES = 3 * 1024 * 1024
"""Bytes of recorded text an exported page shows in all (before HTML escaping)."""

MIN_SHOWN_BYTES = 1024
"""A text shows at least this much, however many texts a page holds."""


def _entry_excerpts(entry: Text | ToolCall) -> Iterator[Excerpt]:
    if isinstance(entry, Text):
        yield entry.text
        if entry.thinking is not None:
            yield entry.thinking
        return
    yield entry.args
    if entry.result is not None:
        if entry.result.wire is not None:
            yield entry.result.wire
        if entry.result.output is not None:
            yield entry.result.output
    for child in entry.children:
        yield from _entry_excerpts(child)


def excerpts(transcript: Transcript) -> Iterator[Excerpt]:
    """Every excerpt a page of ``transcript`` shows, in page order."""
    for turn in transcript.turns:
        yield turn.prompt
        for entry in turn.entries:
            yield from _entry_excerpts(entry)


def page_cap(transcript: Transcript, total: int = PAGE_TEXT_BYTES) -> int:
    """The most bytes any one text of ``transcript`` shows on a page."""
    return fair_cap([e.shown_bytes for e in excerpts(transcript)], total, MIN_SHOWN_BYTES)
