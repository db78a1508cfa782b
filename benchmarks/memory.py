"""Peak memory of ``headwire`` against the size of a tool's output, whatever its shape.

    PYTHONPATH=src python benchmarks/memory.py [--cases ...] [--modes ...] [--src DIR]

Each case runs the real CLI with the scripted model calling one tool, in each mode (``text``,
``stream-json``, ``acp``), and samples the headwire process's own peak RSS (``VmHWM``; the
tool's processes are not counted):

* ``mcp-blocks``: an MCP result of ``--blocks-mb`` MB in text blocks of ``--block-bytes``
  bytes each (default 56 MB in 150-byte blocks: 374,000 blocks);
* ``mcp-line``: an MCP result that is one text block of ``--line-mb`` MB (default 200): one
  200 MB line;
* ``shell-binary``: ``run_shell_command`` printing ``--binary-mb`` MiB of random bytes
  (default 64, the shell's capture cap), the first one NUL (so it is binary by upstream's
  sniff of the first 512 bytes in every run, not only in the 87% of runs where random bytes
  hold a NUL there);
* ``shell-random``: the same size of random bytes with no NUL anywhere (the first 512 bytes
  do not tell it from text);
* ``shell-text``: the same size of ASCII text lines (decoded, shown, saved as an artifact).

The raw tool output is what the tool wrote: the MCP response line, the shell's stdout bytes.
Target: peak RSS at most 2 x raw + 100 MB.  ``--src`` runs another checkout's code (e.g. the
code before a change) with this script, for a before/after in one session.  Exit status 1
when a run misses the target (0 with ``--no-fail``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "tests" / "fakes" / "blob_mcp_server.py"
MB = 1 << 20
TARGET_FACTOR = 2.0
TARGET_EXTRA = 100 * MB


@dataclass
class Case:
    """One tool call: its script entry, its MCP server (if any) and the raw output size."""

    name: str
    tool: str
    args: dict[str, Any]
    raw_bytes: int
    server_env: dict[str, str] | None = None


def mcp_line_bytes(blocks: int, block_bytes: int) -> int:
    """Size of the response line ``_mcp_blob.py`` writes (id 1 digit wide or so)."""
    return 55 + blocks * (block_bytes + 25) + blocks - 1


def cases(options: argparse.Namespace, tmp: Path) -> dict[str, Case]:
    blocks = max(1, options.blocks_mb * MB // options.block_bytes)
    binary = tmp / "binary.bin"
    if "shell-binary" in options.cases:
        with binary.open("wb") as f:  # a NUL first: binary by upstream's sniff, every run
            f.write(b"\0" + os.urandom(options.binary_mb * MB - 1))
    text_file = tmp / "text.txt"
    if "shell-text" in options.cases:
        line = b"%08d the quick brown fox jumps over the lazy dog 0123456789\n"
        with text_file.open("wb") as f:
            count = options.binary_mb * MB // len(line % 0)
            f.write(b"".join(line % i for i in range(count)))
    random_bytes = tmp / "random.bin"
    if "shell-random" in options.cases:
        with random_bytes.open("wb") as f:  # no NUL anywhere
            f.write(os.urandom(options.binary_mb * MB).replace(b"\0", b"\1"))
    return {
        "mcp-blocks": Case(
            "mcp-blocks",
            "mcp__blob__blob",
            {},
            mcp_line_bytes(blocks, options.block_bytes),
            {"MCP_BLOB_BLOCKS": str(blocks), "MCP_BLOB_BLOCK_BYTES": str(options.block_bytes)},
        ),
        "mcp-line": Case(
            "mcp-line",
            "mcp__blob__blob",
            {},
            mcp_line_bytes(1, options.line_mb * MB),
            {"MCP_BLOB_BLOCKS": "1", "MCP_BLOB_BLOCK_BYTES": str(options.line_mb * MB)},
        ),
        "shell-binary": Case(
            "shell-binary",
            "run_shell_command",
            {"command": f"cat {binary}"},
            options.binary_mb * MB,
        ),
        "shell-text": Case(
            "shell-text",
            "run_shell_command",
            {"command": f"cat {text_file}"},
            options.binary_mb * MB,
        ),
        "shell-random": Case(
            "shell-random",
            "run_shell_command",
            {"command": f"cat {random_bytes}"},
            options.binary_mb * MB,
        ),
    }


def _peak_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _servers(case: Case) -> dict[str, Any]:
    if case.server_env is None:
        return {}
    return {"blob": {"command": sys.executable, "args": [str(SERVER)], "env": case.server_env}}


def _acp_frames(case: Case, proj: Path) -> list[dict[str, Any]]:
    servers = [
        {
            "name": name,
            "command": spec["command"],
            "args": spec["args"],
            "env": [{"name": k, "value": v} for k, v in spec["env"].items()],
        }
        for name, spec in _servers(case).items()
    ]
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(proj), "mcpServers": servers},
        },
    ]


def run_case(case: Case, mode: str, src: Path, tmp: Path) -> tuple[float, float]:
    """Run one case in one mode; returns (peak RSS in bytes, seconds)."""
    work = Path(tempfile.mkdtemp(dir=tmp))
    home, proj = work / "home", work / "proj"
    home.mkdir()
    proj.mkdir()
    script = work / "script.jsonl"
    script.write_text(json.dumps({"tool": case.tool, "args": case.args}) + '\n{"text":"done"}\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEADWIRE_"))}
    env.update(HOME=str(home), HEADWIRE_HOME=str(home / ".headwire"), PYTHONPATH=str(src))
    argv = [sys.executable, "-m", "headwire", "--script", str(script), "--yolo"]
    if mode == "acp":
        argv.append("--acp")
    else:
        argv += ["-o", mode, "-p", "go"]
        if case.server_env is not None:
            argv += ["--mcp-config", json.dumps({"mcpServers": _servers(case)})]
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=proj,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _peak_kib(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    err = bytearray()
    threading.Thread(target=lambda: err.extend(proc.stderr.read()), daemon=True).start()  # type: ignore[union-attr]
    if mode == "acp":
        _drive_acp(proc, case, proj)
    else:
        proc.stdin.close()
        while proc.stdout.read(1 << 20):
            pass
    proc.wait(timeout=600)
    done.set()
    sampler.join()
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"{case.name} {mode}: exit {proc.returncode}\n{err.decode()[-2000:]}")
    return peak * 1024.0, seconds


def _drive_acp(proc: subprocess.Popen[bytes], case: Case, proj: Path) -> None:
    assert proc.stdin is not None and proc.stdout is not None

    def send(frame: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(frame).encode() + b"\n")
        proc.stdin.flush()

    def until(msg_id: int) -> dict[str, Any]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"{case.name} acp: stdout closed early")
            frame: dict[str, Any] = json.loads(line)
            if frame.get("id") == msg_id and "method" not in frame:
                return frame

    for frame in _acp_frames(case, proj):
        send(frame)
        reply = until(frame["id"])
        if "result" not in reply:
            raise SystemExit(f"{case.name} acp: {reply}")
    session = reply["result"]["sessionId"]
    prompt = [{"type": "text", "text": "go"}]
    send(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": prompt},
        }
    )
    until(3)
    proc.stdin.close()
    while proc.stdout.read(1 << 20):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases",
        nargs="+",
        default=["mcp-blocks", "mcp-line", "shell-binary", "shell-random", "shell-text"],
        choices=["mcp-blocks", "mcp-line", "shell-binary", "shell-random", "shell-text"],
    )
    parser.add_argument(
        "--modes",
        nargs="+",
        default=["text", "stream-json", "acp"],
        choices=["text", "stream-json", "acp"],
    )
    parser.add_argument("--blocks-mb", type=int, default=56)
    parser.add_argument("--block-bytes", type=int, default=150)
    parser.add_argument("--line-mb", type=int, default=200)
    parser.add_argument("--binary-mb", type=int, default=64)
    parser.add_argument("--src", type=Path, default=HERE.parent / "src", help="code to run")
    parser.add_argument("--no-fail", action="store_true")
    options = parser.parse_args(argv)
    misses = 0
    print(f"code: {options.src}")
    print(
        f"{'case':<14}{'mode':<13}{'raw':>10}{'peak RSS':>11}{'target':>10}{'x raw':>7}{'time':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="headwire-memory-") as tmp:
        table = cases(options, Path(tmp))
        for name in options.cases:
            case = table[name]
            for mode in options.modes:
                peak, seconds = run_case(case, mode, options.src, Path(tmp))
                target = TARGET_FACTOR * case.raw_bytes + TARGET_EXTRA
                ok = peak <= target
                misses += not ok
                print(
                    f"{name:<14}{mode:<13}{case.raw_bytes / MB:>8.1f}MB{peak / MB:>9.0f}MB"
                    f"{target / MB:>8.0f}MB{peak / case.raw_bytes:>7.1f}{seconds:>7.1f}s"
                    f"{'' if ok else '  MISSES'}",
                    flush=True,
                )
    return 1 if misses and not options.no_fail else 0


if __name__ == "__main__":
    raise SystemExit(main())
