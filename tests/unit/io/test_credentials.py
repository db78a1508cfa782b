"""Finding the key in argv and overwriting it in place."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

from headwire.io.credentials import _mask_in_place, flag_values

ROOT = Path(__file__).resolve().parents[3]


def test_every_spelling_argparse_accepts_is_found() -> None:
    argv = ["-p", "x", "--openai-api-key", "k1", "--openai-api-key=k2", "--openai-a", "k3"]
    argv += ["--openai-api=k4", "--openai", "not-a-key", "--", "--openai-api-key", "k5"]
    assert list(flag_values(argv)) == ["k1", "k2", "k3", "k4"]
    assert list(flag_values(["--openai-api-key"])) == []


def test_mask_in_place_overwrites_every_occurrence() -> None:
    buffer = ctypes.create_string_buffer(b"A=sk-1\x00B=x sk-1 sk-1\x00")
    start = ctypes.addressof(buffer)
    assert _mask_in_place(start, start + len(buffer.raw), [b"sk-1"]) == 3
    assert buffer.raw == b"A=****\x00B=x **** ****\x00\x00"
    assert _mask_in_place(0, 0, [b"x"]) == 0


def test_a_process_shows_no_key_once_withheld() -> None:
    code = (
        "import os, sys; from headwire.io.credentials import withhold_credentials; "
        "n = withhold_credentials(sys.argv[1:]); "
        "print(n, 'OPENAI_API_KEY' in os.environ, sys.argv[-1]); "
        "print(open('/proc/self/environ', 'rb').read().count(b'sk-proc-' + b'test-key')); "
        "print(open('/proc/self/cmdline', 'rb').read().count(b'sk-flag-' + b'test-key'))"
    )
    env = {**os.environ, "OPENAI_API_KEY": "sk-proc-test-key", "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code, "--openai-api-key", "sk-flag-test-key"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    # two overwritten (one in each block); os.environ no longer holds the variable; the
    # Python-level argv is untouched (argparse still reads the key from it)
    assert done.stdout.split() == ["2", "False", "sk-flag-test-key", "0", "0"]
