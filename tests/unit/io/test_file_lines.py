"""``open_regular`` and ``file_lines``: a hostile file is read without blocking and with
bounded memory."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.io.lines import NotRegularFile, SkippedLine, file_lines, open_regular


def lines_of(data: bytes, *, limit: int, chunk: int, hold: int) -> list[bytes | SkippedLine]:
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        f.seek(0)
        return list(file_lines(f.fileno(), limit=limit, chunk=chunk, hold=hold))


def expected(data: bytes, *, limit: int, hold: int) -> list[bytes | SkippedLine]:
    """The docstring's promise, spelled out on a whole bytes value."""
    pieces = data.split(b"\n")
    last = pieces.pop()
    out: list[bytes | SkippedLine] = [
        piece if len(piece) <= limit else SkippedLine(number, len(piece), "too_long")
        for number, piece in enumerate(pieces, 1)
    ]
    if last:
        fits = len(last) <= min(hold, limit)
        out.append(last if fits else SkippedLine(len(pieces) + 1, len(last), "torn"))
    return out


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(
        st.one_of(st.binary(max_size=40), st.just(b"\n"), st.just(b"\n\n")), max_size=30
    ).map(b"".join),
    limit=st.integers(1, 60),
    chunk=st.integers(1, 50),
    hold=st.integers(1, 60),
)
def test_lines_are_the_split_lines_and_a_long_torn_tail_is_skipped(
    data: bytes, limit: int, chunk: int, hold: int
) -> None:
    assert lines_of(data, limit=limit, chunk=chunk, hold=hold) == expected(
        data, limit=limit, hold=hold
    )


def test_a_torn_tail_is_never_read_whole(tmp_path: Path) -> None:
    """The tail is sparse: 1 GiB read whole would be seen in the time and memory; it is read in
    chunks and dropped."""
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    os.truncate(path, 64 << 20)
    fd = open_regular(path)
    try:
        found = list(file_lines(fd, limit=1 << 30))
    finally:
        os.close(fd)
    assert found == [b'{"a":1}', SkippedLine(2, (64 << 20) - 8, "torn")]


def test_open_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "r.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(NotRegularFile):
        open_regular(fifo)
    assert time.monotonic() - started < 5
    link = tmp_path / "link.jsonl"
    (tmp_path / "real").write_text("x\n")
    link.symlink_to(tmp_path / "real")
    with pytest.raises(OSError):
        open_regular(link, follow_symlinks=False)
    os.close(open_regular(link))
