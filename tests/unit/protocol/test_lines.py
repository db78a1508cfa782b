"""The one line splitter: any chunking gives the same lines (hypothesis)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from headwire.protocol.lines import LineSplitter


def split_all(data: bytes, cuts: list[int]) -> list[bytes]:
    splitter = LineSplitter()
    lines: list[bytes] = []
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for start, end in itertools.pairwise(points):
        lines += splitter.feed(data[start:end])
    return lines + splitter.close()


def reference(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0), max_size=30))
def test_any_chunking_gives_the_same_lines(data: bytes, cuts: list[int]) -> None:
    assert split_all(data, cuts) == reference(data)


@given(st.lists(st.binary(max_size=50).filter(lambda b: b"\n" not in b), max_size=20))
def test_byte_at_a_time(lines: list[bytes]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    splitter = LineSplitter()
    out: list[bytes] = []
    for i in range(len(data)):
        out += splitter.feed(data[i : i + 1])
    assert out == lines and splitter.close() == [] and splitter.buffered == 0


def test_a_long_line_is_one_line() -> None:
    splitter = LineSplitter()
    for _ in range(100):
        assert splitter.feed(b"x" * 10_000) == []
    assert splitter.buffered == 1_000_000
    assert splitter.feed(b"\n") == [b"x" * 1_000_000]
