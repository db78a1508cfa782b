"""SSE lines end at CR, LF or CRLF only, whatever the chunking."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from headwire.wire.sse_lines import SseLineSplitter, split_sse_lines

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
