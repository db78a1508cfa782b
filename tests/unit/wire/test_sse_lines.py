"""SSE lines end at CR, LF or CRLF only, whatever the chunking."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from headwire.wire.sse_lines import SseLineSplitter, SseLineTooLong, split_sse_lines

PIECES = st.sampled_from(
    [b"a", b"\r", b"\n", b"\r\n", "\u2028".encode(), "\x85".encode(), b"\x1c", b"\xff", b"\xe2"]
)


@given(st.lists(st.one_of(PIECES, st.binary(max_size=5)), max_size=40), st.data())
def test_any_chunking_gives_the_lines_of_the_whole(parts: list[bytes], data: st.DataObject) -> None:
    """Invariant: feeding ``data`` in any chunks, then closing, gives ``split_sse_lines(data)``."""
    whole = b"".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(whole)), max_size=8)))
    splitter = SseLineSplitter()
    lines: list[str] = []
    for start, end in zip([0, *cuts], [*cuts, len(whole)], strict=True):
        lines += splitter.feed(whole[start:end])
    lines += splitter.close()
    assert lines == split_sse_lines(whole)


def test_only_cr_lf_and_crlf_end_a_line() -> None:
    data = "a\u2028b\x85c\x1cd\re\nf\r\ng\r".encode() + b"\xffh"
    assert split_sse_lines(data) == ["a\u2028b\x85c\x1cd", "e", "f", "g", "\ufffdh"]
    splitter = SseLineSplitter()
    assert splitter.feed(b"x\r") == [] and splitter.feed(b"\ny") == ["x"]
    assert splitter.close() == ["y"] and splitter.close() == []


@given(
    st.lists(st.binary(max_size=40) | st.sampled_from([b"\r", b"\n", b"\r\n"]), max_size=30),
    st.integers(0, 30),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_a_capped_splitter_raises_exactly_when_a_line_is_too_long(
    parts: list[bytes], limit: int, cuts: list[int]
) -> None:
    """``max_line_bytes``: the lines come out as without a cap when none is longer than the
    cap; otherwise :class:`SseLineTooLong` is raised, by the chunk that makes one too long."""
    data = b"".join(parts)
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(points)]
    longest = max((len(line) for line in re.split(rb"\r\n|\r|\n", data)), default=0)
    splitter = SseLineSplitter(limit)
    lines: list[str] = []
    try:
        for chunk in chunks:
            lines += splitter.feed(chunk)
        lines += splitter.close()
    except SseLineTooLong:
        assert longest > limit
        return
    assert longest <= limit
    assert lines == split_sse_lines(data)
