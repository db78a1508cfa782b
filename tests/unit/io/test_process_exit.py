"""``leave``: the steps of a normal exit, in order, then the process ends with the code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from headwire.io import process_exit, stdio


def _run(body: str) -> subprocess.CompletedProcess[bytes]:
    code = "import sys\nsys.settrace(None)\n" + textwrap.dedent(body)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as usual
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False, env=env
    )


def test_threads_atexit_and_buffered_output_all_happen_before_the_exit() -> None:
    done = _run(
        """
        import atexit, threading, time
        from headwire.io.process_exit import leave

        def late() -> None:
            time.sleep(0.2)
            sys.stdout.write("thread\\n")

        threading.Thread(target=late).start()
        atexit.register(lambda: sys.stdout.write("atexit\\n"))
        sys.stdout.write("buffered")  # no newline, no flush: leave flushes it
        sys.stderr.write("err")
        leave(3)
        sys.stdout.write("never\\n")
        """
    )
    assert done.returncode == 3
    assert done.stdout == b"bufferedthread\natexit\n"
    assert done.stderr == b"err"


def test_a_file_left_open_loses_nothing(tmp_path: Path) -> None:
    """What the skipped teardown would have flushed reaches the disk: a text file and a
    binary file written, never flushed nor closed, still referenced."""
    text, binary = tmp_path / "t.txt", tmp_path / "b.bin"
    done = _run(
        f"""
        from headwire.io.process_exit import leave

        kept = [open({str(text)!r}, "w"), open({str(binary)!r}, "ab")]
        kept[0].write("text" * 10)
        kept[1].write(b"bytes" * 10)
        leave(0)
        """
    )
    assert done.returncode == 0, done.stderr
    assert text.read_text() == "text" * 10
    assert binary.read_bytes() == b"bytes" * 10


def test_a_writer_on_a_full_pipe_does_not_hold_the_exit() -> None:
    """A buffered writer on a pipe nobody reads (already full) is left alone: the process
    ends at once instead of waiting, deaf to signals, for a reader."""
    done = _run(
        """
        import os
        from headwire.io.process_exit import leave

        read, write = os.pipe()
        os.set_blocking(write, False)
        try:
            while True:
                os.write(write, b"x" * 4096)  # fill the pipe
        except BlockingIOError:
            pass
        os.set_blocking(write, True)
        kept = open(write, "wb")
        kept.write(b"pending")  # a flush would block for ever
        leave(4)
        """
    )
    assert done.returncode == 4, done.stderr


def test_a_flush_that_fails_turns_success_into_120_and_keeps_a_failure_code() -> None:
    for code, expected in ((0, 120), (7, 7)):
        done = _run(
            f"""
            import os
            from headwire.io.process_exit import leave

            read, write = os.pipe()
            os.close(read)
            os.dup2(write, 1)  # stdout is a pipe nobody reads
            sys.stdout.write("x" * 10)
            leave({code})
            """
        )
        assert done.returncode == expected, done.stderr


def test_under_a_tracer_it_is_an_ordinary_system_exit() -> None:
    sys.settrace(lambda *a: None)
    try:
        with pytest.raises(SystemExit) as raised:
            process_exit.leave(5)
    finally:
        sys.settrace(None)
    assert raised.value.code == 5


def test_a_closed_stream_is_skipped() -> None:
    class Closed:
        closed = True

        def flush(self) -> None:
            raise AssertionError("a closed stream is not flushed")

    saved = sys.stdout
    sys.stdout = Closed()  # type: ignore[assignment]
    try:
        assert stdio.flush_standard_streams()
    finally:
        sys.stdout = saved
