"""The one writer: frames arrive whole and in order, written by the caller or by the thread."""

from __future__ import annotations

import os
import socket
import sys
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.io.writer import DIRECT_BYTES, WireWriter

FRAMES = st.lists(
    st.one_of(
        st.binary(min_size=1, max_size=64),
        st.integers(DIRECT_BYTES - 2, DIRECT_BYTES + 2).map(lambda n: b"x" * n),
        st.integers(1, 300_000).map(lambda n: bytes([n % 251]) * n),
    ),
    max_size=20,
)


def _drain(fd: int, into: bytearray) -> None:
    while chunk := os.read(fd, 65_536):
        into += chunk


def _roundtrip(frames: list[bytes], *, nonblocking: bool, use_socket: bool) -> bytes:
    if use_socket:
        a, b = socket.socketpair()
        read_fd, write_fd = os.dup(a.fileno()), os.dup(b.fileno())
        a.close()
        b.close()
    else:
        read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, not nonblocking)
    got = bytearray()
    reader = threading.Thread(target=_drain, args=(read_fd, got))
    reader.start()
    writer = WireWriter(write_fd)
    try:
        for frame in frames:
            writer.write(frame)
        writer.close()
    finally:
        os.close(write_fd)
        reader.join(30)
        os.close(read_fd)
    assert not writer.closed
    return bytes(got)


@settings(max_examples=40, deadline=None)
@given(frames=FRAMES, nonblocking=st.booleans(), use_socket=st.booleans())
def test_every_frame_arrives_whole_and_in_order(
    frames: list[bytes], nonblocking: bool, use_socket: bool
) -> None:
    """Invariant: the reader gets exactly the frames' concatenation, whoever wrote each one
    (the caller for a small frame with nothing pending, else the thread), on a blocking or
    non-blocking pipe or socket."""
    assert _roundtrip(frames, nonblocking=nonblocking, use_socket=use_socket) == b"".join(frames)


def test_a_small_frame_with_nothing_pending_is_written_by_the_caller() -> None:
    read_fd, write_fd = os.pipe()
    try:
        writer = WireWriter(write_fd)
        writer.write(b'{"type":"result"}\n')
        # written before write() returned: no thread involved
        assert os.read(read_fd, 100) == b'{"type":"result"}\n'
        assert writer.buffered == 0
        writer.close()
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_a_full_pipe_hands_the_frame_to_the_thread_without_blocking_the_caller() -> None:
    read_fd, write_fd = os.pipe()
    try:
        writer = WireWriter(write_fd)
        filler = b"f" * 1_000_000  # more than the pipe holds: the thread waits on the reader
        writer.write(filler)
        writer.write(b"small\n")  # queued behind it, not written (nor blocked on) by the caller
        assert writer.buffered >= len(b"small\n")
        got = bytearray()
        while len(got) < len(filler) + 6:
            got += os.read(read_fd, 1 << 20)
        assert bytes(got) == filler + b"small\n"
        writer.close()
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_a_closed_reader_closes_the_writer_on_a_direct_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # the writer swaps it for /dev/null on EPIPE
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    try:
        writer = WireWriter(write_fd)
        writer.write(b"lost\n")
        assert writer.closed
        assert writer.error is not None
        writer.write(b"ignored\n")  # a no-op from now on
        writer.close()
    finally:
        os.close(write_fd)


def test_a_terminal_is_always_written_by_the_thread() -> None:
    import pty

    main_fd, tty_fd = pty.openpty()
    try:
        writer = WireWriter(tty_fd)
        assert writer._direct is None  # a stopped terminal could block a direct write
        writer.write(b"hello\r\n")
        writer.close()
        assert b"hello" in os.read(main_fd, 100)
    finally:
        os.close(main_fd)
        os.close(tty_fd)
