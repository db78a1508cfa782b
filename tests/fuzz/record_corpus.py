"""A pytest plugin that records the fuzz seed corpus from the inputs the unit tests use.

Run it over the tests whose inputs make good seeds, then commit what changed::

    PYTHONPATH=src:. python -m pytest -p tests.fuzz.record_corpus -q -p no:cacheprovider \\
        tests/unit/acp/test_jsonrpc.py tests/unit/acp/test_server.py \\
        tests/unit/bound/test_bound.py tests/unit/cli/commands/test_bound.py \\
        tests/unit/runtime/mcp/test_mcp.py tests/e2e/test_session.py \\
        tests/e2e/test_acp_stdio.py tests/e2e/test_headless_modes.py \\
        tests/e2e/test_subagent_e2e.py tests/e2e/test_sdk_headwire.py
    PYTHONPATH=src:. python -m tests.fuzz.record_corpus --upstream tests/data/upstream

It wraps the readers the fuzz suite targets (the stream-JSON session's and the ACP server's
``handle_line``, :func:`headwire.protocol.jsonrpc.parse_message`, ``headwire bound``'s filter, the
script, agent-file and MCP config parsers, the projections) and the inputs the end-to-end tests
send to the CLI (``subprocess.run`` stdin, :mod:`headwire.sdk` writes, ``--script`` and
``--mcp-config`` values).  Each distinct input becomes one file
``tests/fuzz/corpus/<target>/<sha1>``; inputs are cut to :data:`MAX_SEED_BYTES` and each target
keeps at most :data:`MAX_SEEDS` files.  The patching is done when the plugin is imported, before
the test modules bind the names.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

CORPUS = Path(__file__).resolve().parent / "corpus"
MAX_SEED_BYTES = 4096
"""Longer inputs are cut to this many bytes (a mutation can grow them again)."""
MAX_SEEDS = 120
"""Files kept per target."""
TARGETS = ("session", "acp", "bound", "script", "agent", "mcp", "projection")


def record(target: str, data: bytes | str) -> None:
    """Store one seed for ``target`` (cut, deduplicated by content)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    raw = raw[:MAX_SEED_BYTES]
    if not raw.strip() or _generated():
        return
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / hashlib.sha1(raw).hexdigest()[:16]
    if path.exists() or sum(1 for _ in folder.iterdir()) >= MAX_SEEDS:
        return
    path.write_bytes(raw)


def _generated() -> bool:
    """Whether a hypothesis test is running: its random inputs are not seeds."""
    try:
        from hypothesis.control import currently_in_test_context
    except ImportError:  # pragma: no cover
        return False
    return currently_in_test_context()


def record_lines(target: str, data: bytes | str) -> None:
    """Store every line of a stream as its own seed."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    for line in raw.split(b"\n"):
        record(target, line)


def _json(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:
        return b""


def _wrap(owner: Any, name: str, on_call: Callable[..., None]) -> None:
    """Replace ``owner.name`` with a wrapper that shows its arguments to ``on_call`` first."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            on_call(*args, **kwargs)
        except Exception as exc:  # recording must never change a test's outcome
            sys.stderr.write(f"record_corpus: {name}: {exc}\n")
        return original(*args, **kwargs)

    setattr(owner, name, wrapper)


def _argv_value(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == flag]


def _on_subprocess(argv: Any, *_: Any, **kwargs: Any) -> None:
    if not isinstance(argv, list | tuple):
        return
    args = [str(a) for a in argv]
    if "headwire" not in " ".join(args):
        return
    stdin = kwargs.get("input")
    if isinstance(stdin, bytes | str) and stdin:
        if "--acp" in args or "--experimental-acp" in args:
            record_lines("acp", stdin)
        elif "bound" in args:
            record_lines("bound", stdin)
        elif "stream-json" in args and "--input-format" in args:
            record_lines("session", stdin)
    for value in _argv_value(args, "--mcp-config"):
        record("mcp", value if value.lstrip().startswith("{") else _read(value))
    for value in _argv_value(args, "--script"):
        record("script", _read(value))


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def install() -> None:
    """Patch the readers and the process launchers (idempotent per process)."""
    from headwire import bound
    from headwire.acp.server import AcpServer
    from headwire.cli.run.session import Session
    from headwire.projection import acp as acp_projection
    from headwire.projection import headless
    from headwire.protocol import jsonrpc
    from headwire.runtime.agents import definitions
    from headwire.runtime.mcp import config
    from headwire.runtime.models import scripted
    from headwire.sdk import transport

    if getattr(install, "done", False):
        return
    install.done = True  # type: ignore[attr-defined]
    _wrap(Session, "handle_line", lambda _self, raw: record("session", raw))
    _wrap(AcpServer, "handle_line", lambda _self, line: record("acp", line))
    _wrap(jsonrpc, "parse_message", lambda line: record("acp", line))
    _wrap(bound, "bound_line", lambda line, fmt: record("bound", line))
    _wrap(bound.BoundFilter, "feed", lambda _self, data: record_lines("bound", data))
    _wrap(scripted, "parse_script", lambda text, source="": record("script", text))
    _wrap(definitions, "parse_agent_file", lambda text, source="": record("agent", text))
    _wrap(
        config,
        "parse_mcp_config_arg",
        lambda value, cwd: record("mcp", value) if value.lstrip().startswith("{") else None,
    )
    _wrap(config, "parse_mcp_servers", lambda data, *a, **k: record("mcp", _json(data)))
    _wrap(
        config,
        "parse_server",
        lambda name, raw, *a, **k: record("mcp", _json({"mcpServers": {name: raw}})),
    )
    _wrap(
        config, "parse_acp_servers", lambda servers, *a, **k: record("mcp", _json({"acp": servers}))
    )
    import headwire.projection as projection

    for owner in (headless, projection):
        _wrap(owner, "project_tool_result_content", lambda text: record("projection", text))
    _wrap(
        projection,
        "project_acp_tool_call_update",
        lambda update: record("projection", _json(update)),
    )
    _wrap(
        acp_projection,
        "project_acp_tool_call_update",
        lambda update: record("projection", _json(update)),
    )
    _wrap(subprocess, "run", _on_subprocess)

    original_write_text = Path.write_text

    def write_text(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
        if self.suffix == ".md" and self.parent.name == "agents":
            record("agent", data)
        elif self.name == "settings.json" or (self.suffix == ".json" and "mcp" in self.name):
            record("mcp", data)
        elif self.suffix == ".jsonl" and "script" in self.name:
            record("script", data)
        return original_write_text(self, data, *args, **kwargs)

    Path.write_text = write_text  # type: ignore[method-assign]
    original_write = transport.SubprocessTransport.write

    async def write(self: Any, data: bytes) -> None:
        record_lines("session", data)
        await original_write(self, data)

    transport.SubprocessTransport.write = write  # type: ignore[method-assign]


def record_upstream(folder: Path) -> None:
    """Seeds from the recorded upstream runs: client lines (ACP) and stdout lines (bound)."""
    for path in sorted(folder.glob("*.jsonl")):
        data = path.read_bytes()
        if path.name.endswith(".client-sent.jsonl"):
            record_lines("acp", data)
        elif path.name.endswith(".stdout.jsonl"):
            record_lines("bound", data)
            if "-acp" not in path.name:
                for line in data.split(b"\n"):
                    if line.startswith(b'{"type":"control_request"'):
                        record("session", line)


DOCUMENTED_AGENTS = (
    "---\nname: reviewer\ndescription: Reviews a diff\ntools: read_file, grep_search\n---\n"
    "You are a careful reviewer...\n",
    "---\nname: lister\ndescription: lists\ntools:\n  - glob\n  - 'ls'\n---\nList files.\n",
    '---\nname: all # every tool\ndescription: "quoted"\n# a comment\n---\n',
    '---\nname: reader\ntools: [read_file, "glob"]\n---\nRead.\n',
)
"""The agent-file examples of :mod:`headwire.runtime.agents.definitions` (the unit tests write
only one agent file)."""


def record_documented() -> None:
    """Seeds from the modules' documented examples."""
    for text in DOCUMENTED_AGENTS:
        record("agent", text)


install()


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.fuzz.record_corpus --upstream DIR``: add the upstream seeds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", type=Path, required=True)
    args = parser.parse_args(argv)
    record_upstream(args.upstream)
    record_documented()
    for target in TARGETS:
        folder = CORPUS / target
        count = sum(1 for _ in folder.iterdir()) if folder.is_dir() else 0
        print(f"{target}: {count} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
