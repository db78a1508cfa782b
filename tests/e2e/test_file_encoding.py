"""How ``write_file`` and ``edit`` store what they write, side by side with Qwen Code 0.24.4.

A file they replace keeps its byte order mark (UTF-8, UTF-16), its encoding and its CRLF line
endings; a file they create is plain UTF-8, or starts with UTF-8's mark under
``general.defaultFileEncoding: "utf-8-bom"``.  Each case starts from a file (or none), runs a
scripted model through the real CLI and records the bytes on disk after the run.  What upstream
wrote is committed in ``tests/data/file-encoding/upstream-0.24.4.json`` (with
``HEADWIRE_ORACLE_PKG_DIR`` upstream runs live and must still write it;
``HEADWIRE_WRITE_CAPTURE=1`` rewrites it).
"""

from __future__ import annotations

import codecs
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.helpers import (
    check_capture,
    each_case,
    needs_upstream,
    run_cli,
    side_by_side,
    write_script,
)
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

CAPTURE = ROOT / "tests" / "data" / "file-encoding" / "upstream-0.24.4.json"
BOM_SETTING = {"general": {"defaultFileEncoding": "utf-8-bom"}}
UTF16 = codecs.BOM_UTF16_LE + "h\u00e9llo\r\nworld\r\n".encode("utf-16-le")

CASES: dict[str, tuple[bytes | None, list[dict[str, Any]], dict[str, Any]]] = {
    "new file": (None, [{"tool": "write_file", "content": "a\nb\n"}], {}),
    "new file, utf-8-bom": (None, [{"tool": "write_file", "content": "a\nb\n"}], BOM_SETTING),
    "new file from edit, utf-8-bom": (
        None,
        [{"tool": "edit", "old_string": "", "new_string": "x = 1\n"}],
        BOM_SETTING,
    ),
    "new file with a mark in the text, utf-8-bom": (
        None,
        [{"tool": "write_file", "content": "\ufeffa\n"}],
        BOM_SETTING,
    ),
    "new file with a lone surrogate": (
        None,
        [{"tool": "write_file", "content": "a\ud800b\n"}],
        {},
    ),
    "crlf file rewritten": (
        b"one\r\ntwo\r\n",
        [{"tool": "read_file"}, {"tool": "write_file", "content": "one\nthree\n"}],
        {},
    ),
    "mixed endings rewritten": (
        b"a\r\nb\nc\r",
        [{"tool": "read_file"}, {"tool": "write_file", "content": "c\nd\re\r\n"}],
        {},
    ),
    "lf file given crlf": (
        b"a\n",
        [{"tool": "read_file"}, {"tool": "write_file", "content": "b\r\nc\n"}],
        {},
    ),
    "utf-8 bom file rewritten": (
        codecs.BOM_UTF8 + b"x\n",
        [{"tool": "read_file"}, {"tool": "write_file", "content": "y\n"}],
        {},
    ),
    "utf-8 bom file given a mark": (
        codecs.BOM_UTF8 + b"x\n",
        [{"tool": "read_file"}, {"tool": "write_file", "content": "\ufeffy\n"}],
        {},
    ),
    "utf-16 file rewritten": (
        UTF16,
        [{"tool": "read_file"}, {"tool": "write_file", "content": "caf\u00e9\nbye\n"}],
        {},
    ),
    "plain file, utf-8-bom": (
        b"p\n",
        [{"tool": "read_file"}, {"tool": "write_file", "content": "q\n"}],
        BOM_SETTING,
    ),
    "crlf bom file edited": (
        codecs.BOM_UTF8 + b"k = 1\r\nv = 2\r\n",
        [{"tool": "read_file"}, {"tool": "edit", "old_string": "v = 2", "new_string": "v = 3"}],
        {},
    ),
}
"""Each case: the file's bytes before the run (``None``: no file), the model's tool calls on
it (``file_path`` added) and the user settings."""


def run_case(tmp: Path, which: str, case: str) -> dict[str, Any]:
    """The file's bytes after one run of ``which`` (hex) and whether each call failed."""
    before, calls, settings = CASES[case]
    tmp = tmp / case.replace(" ", "-").replace(",", "") / which
    home, proj = tmp / "home", tmp / "proj"
    folder = home / (".qwen" if which == "upstream" else ".headwire")
    folder.mkdir(parents=True)
    proj.mkdir()
    (folder / "settings.json").write_text(json.dumps(settings))
    target = proj / "f.txt"
    if before is not None:
        target.write_bytes(before)
    replies: list[dict[str, Any]] = [
        {"tool": call["tool"], "args": {"file_path": str(target)} | call} for call in calls
    ]
    for reply in replies:
        del reply["args"]["tool"]
    flags = ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p", "go"]
    with FakeOpenAI([*replies, {"text": "done"}]) as fake:
        argv, env = side_by_side(which, home, flags, fake.base_url)
        done = subprocess.run(argv, env=env, cwd=proj, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    results = [
        block["is_error"]
        for line in map(json.loads, done.stdout.splitlines())
        if line.get("type") == "user"
        for block in line["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    return {"after": target.read_bytes().hex(" ") if target.exists() else None, "errors": results}


@pytest.mark.slow
def test_headwire_writes_what_the_capture_says(tmp_path: Path) -> None:
    expected = json.loads(CAPTURE.read_text())
    got = each_case(lambda case: run_case(tmp_path, "headwire", case), CASES)
    for case in CASES:
        assert got[case] == expected[case], case


@pytest.mark.slow
@needs_upstream
def test_upstream_writes_what_the_capture_says(tmp_path: Path) -> None:
    check_capture(CAPTURE, each_case(lambda case: run_case(tmp_path, "upstream", case), CASES))


# -- the format itself ------------------------------------------------------------------------

TEXT = st.text(alphabet=st.sampled_from("ab\r\n\ufeff\u00e9\U0001f600"), max_size=40)
STORED = st.sampled_from(
    [
        b"",
        b"x\n",
        b"x\r\ny",
        codecs.BOM_UTF8 + b"x\n",
        codecs.BOM_UTF8 + b"x\r\n",
        codecs.BOM_UTF16_LE + "x\r\n".encode("utf-16-le"),
        codecs.BOM_UTF16_BE + "x\n".encode("utf-16-be"),
        codecs.BOM_UTF32_LE + "x\r\n".encode("utf-32-le"),
    ]
)


@given(STORED, TEXT)
def test_a_replaced_file_keeps_its_format_and_the_text(stored: bytes, text: str) -> None:
    """What :class:`FileFormat` writes decodes, by the same format, to the text given (less a
    leading mark where one is written, with CRLF endings where the file had them); reading the
    written file back finds the same format."""
    import tempfile

    from headwire.runtime.tools.write_file import read_existing

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        path.write_bytes(stored)
        _, _, kept = read_existing(path)
        data = kept.encode(text)
        assert data.startswith(kept.bom)
        back = data[len(kept.bom) :].decode(kept.codec)
        want = text.removeprefix("\ufeff") if kept.bom else text
        if kept.crlf:
            want = want.replace("\r\n", "\n").replace("\n", "\r\n")
        assert back == want
        path.write_bytes(data)
        _, again_text, again = read_existing(path)
        assert again.crlf == ("\r\n" in want)
        if kept.bom or not want.startswith("\ufeff"):
            assert (again.codec, again.bom, again_text) == (kept.codec, kept.bom, back)
        else:  # a plain file given a leading U+FEFF now starts with UTF-8's mark
            assert (again.bom, again_text) == (codecs.BOM_UTF8, back[1:])


def test_a_large_file_is_read_until_its_first_crlf(tmp_path: Path) -> None:
    """A file too large to diff is not read whole: its format is found in chunks."""
    from headwire.runtime.tools.write_file import (
        CRLF_SCAN_BYTES,
        DIFF_MAX_CHARS,
        FileFormat,
        read_existing,
    )

    big = tmp_path / "big"
    big.write_bytes(b"a\r\n" + b"b" * (4 * DIFF_MAX_CHARS))
    existed, text, stored = read_existing(big)
    assert existed and text is None and stored.crlf
    across = 4_096 + (1 << 20) - 1  # the CR ends the first chunk after the sniffed head
    big.write_bytes(b"b" * across + b"\r\n" + b"b" * DIFF_MAX_CHARS)
    assert read_existing(big)[2].crlf
    big.write_bytes(b"b\r" * DIFF_MAX_CHARS)
    assert not read_existing(big)[2].crlf
    late = "b" * (2 * DIFF_MAX_CHARS) + "\r\n"
    big.write_bytes(codecs.BOM_UTF16_LE + late.encode("utf-16-le"))
    assert read_existing(big)[2] == FileFormat("utf-16-le", codecs.BOM_UTF16_LE, crlf=True)
    for mark, codec in ((b"", "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le")):
        with big.open("wb") as sparse:  # a CRLF after the scanned part: taken for LF
            sparse.write(mark + "a\n".encode(codec) * 4_096)
            sparse.seek(CRLF_SCAN_BYTES + (1 << 20))
            sparse.write("\r\n".encode(codec))
        assert not read_existing(big)[2].crlf
    big.write_bytes(b"\0binary\r\n" * 10)
    assert read_existing(big)[2] == read_existing(tmp_path / "missing")[2]


def test_a_lone_surrogate_is_written_as_a_replacement_character() -> None:
    """JSON lets a model send ``"\\ud800"``; Node writes it as U+FFFD, and so do the file
    tools (before: the write failed with a Python traceback as the tool's error)."""
    from headwire.runtime.tools.write_file import PLAIN, UTF8_BOM, FileFormat

    assert PLAIN.encode("a\ud800b") == "a\ufffdb".encode()
    assert PLAIN.encode("\ud83d\ude00 \udc00") == "\U0001f600 \ufffd".encode()
    utf16 = FileFormat("utf-16-le", codecs.BOM_UTF16_LE, crlf=True)
    assert utf16.encode("x\udfff\n") == codecs.BOM_UTF16_LE + "x\ufffd\r\n".encode("utf-16-le")
    assert UTF8_BOM.encode("\ufeff\ud800") == codecs.BOM_UTF8 + "\ufffd".encode()


def test_only_a_trusted_project_marks_the_files_the_tools_create(tmp_path: Path) -> None:
    """A mark before a script's ``#!`` stops the script running, so a project folder's
    ``general.defaultFileEncoding`` counts only once the folder is trusted (the user's own
    settings always count)."""
    proj = tmp_path / "proj"
    (proj / ".headwire").mkdir(parents=True)
    (proj / ".headwire" / "settings.json").write_text(json.dumps(BOM_SETTING))
    written = []
    for n, trust in enumerate(([], ["--trust-project"])):
        target = proj / f"run{n}.sh"
        call = {"tool": "write_file", "args": {"file_path": str(target), "content": "#!/bin/sh\n"}}
        script = write_script(tmp_path / f"s{n}.jsonl", [call, {"text": "done"}])
        done = run_cli(["--script", str(script), "--yolo", *trust, "-p", "go"], tmp_path)
        assert done.returncode == 0, done.stderr
        written.append((target.read_bytes(), "ignoring general.defaultFileEncoding" in done.stderr))
    assert written == [(b"#!/bin/sh\n", True), (codecs.BOM_UTF8 + b"#!/bin/sh\n", False)]
