"""headwire side by side with the CLIs a user might pick instead, all offline, on one task.

    PYTHONPATH=src python benchmarks/peers.py [--reps 5] [--cache DIR] [--only headwire,qwen]

The task: the model calls the CLI's shell tool once with a command that prints
``--output-bytes`` bytes (default 499,999), then answers ``done``.  Each CLI runs against a
local fake of its own API, started afresh for every run on 127.0.0.1:

=========== =================================== ===========================================
CLI         how it is run                       its fake
=========== =================================== ===========================================
headwire    this checkout, installed (below)    OpenAI chat completions (tests/fakes)
qwen        Qwen Code 0.24.4 (``oracle/``)      OpenAI chat completions (tests/fakes)
claude      Claude Code 2.1.332 (npm)           Anthropic Messages (tests/fakes)
gemini      Gemini CLI 0.61.0 (npm)             Gemini (tests/fakes)
codex       Codex 0.171.0 (its native binary)   OpenAI Responses (here: Codex speaks only it)
opencode    OpenCode 1.18.33 (npm)              OpenAI chat completions (tests/fakes)
=========== =================================== ===========================================

headwire is built from this checkout into a virtual environment of its own in
``<cache>/peers/headwire``, as ``pipx install`` or ``uv tool install`` puts it: the package (not
editable) and its dependencies, no pip, no setuptools, nothing on ``PYTHONPATH``
(``--headwire current`` runs this interpreter's environment with the source on ``PYTHONPATH``
instead).  The npm peers are installed once into ``<cache>/peers/npm`` (``npm install``;
``--no-install`` skips it), and OpenCode's config-folder dependency into
``<cache>/peers/opencode-config-deps``.
Every setting that stops a peer's own network use (telemetry, update checks, model catalogs,
plugins) is the one written up in ``shared/reference/peers-offline.md``.

Each CLI gets one uncounted warm-up run; then runs alternate between the CLIs (one run of each,
``--reps`` times).  Per CLI the script
prints the medians of: wall time; peak memory of the process tree (the CLI and every
descendant, RSS summed, sampled from ``/proc`` every ``--sample-ms``); ``--version`` wall time;
and the bytes the run wrote to stdout; then each median's ratio to headwire's, and, next to
headwire's ``--version``, its interpreter running an empty script (timed in the same rounds:
the floor of any command written in Python).  A CLI that
cannot run (not installed, no Node) is listed with the reason and left out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.fake_anthropic import FakeAnthropic  # noqa: E402
from tests.fakes.fake_gemini import FakeGemini  # noqa: E402
from tests.fakes.fake_openai import FakeOpenAI  # noqa: E402
from tests.fakes.fake_responses import reply_body  # noqa: E402

NPM_PEERS = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@google/gemini-cli": "0.61.0",
    "opencode-ai": "1.18.33",
}
OPENCODE_PLUGIN = "@opencode-ai/plugin@1.18.33"
ORACLE_PKG = Path(
    os.environ.get(
        "HEADWIRE_ORACLE_PKG_DIR",
        str(ROOT.parent.parent / "oracle" / "node_modules" / "@qwen-code" / "qwen-code"),
    )
)
PROMPT = "print a large output"
PAGE = os.sysconf("SC_PAGE_SIZE")


# -- the OpenAI Responses fake (Codex) -------------------------------------------------------


class _ResponsesHandler(BaseHTTPRequestHandler):
    """``POST /v1/responses`` (streamed): a ``function_call`` of the shell tool until the input
    holds a ``function_call_output``, then the text ``done``.  Stateless, so side requests
    cannot take a scripted reply."""

    server: _ResponsesServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [], "models": []}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            request = json.loads(raw)
        except ValueError:
            request = {}
        items = request.get("input") if isinstance(request, dict) else None
        answered = isinstance(items, list) and any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
        )
        n = self.server.count = self.server.count + 1
        if answered:
            reply: dict[str, Any] = {"text": "done"}
        else:
            reply = {"tool": "exec_command", "args": {"cmd": self.server.command}}
        model = request.get("model", "gpt-5.5") if isinstance(request, dict) else "gpt-5.5"
        body = reply_body(reply, n, str(model))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _ResponsesServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, command: str) -> None:
        super().__init__(("127.0.0.1", 0), _ResponsesHandler)
        self.command = command
        self.count = 0


class FakeResponses:
    """The Responses fake in a background thread (a context manager, like the others)."""

    def __init__(self, command: str) -> None:
        self._server = _ResponsesServer(command)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeResponses:
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# -- the peers -------------------------------------------------------------------------------


@dataclass
class Peer:
    """How to run one CLI: its argv for the task and for ``--version``, its fake, its setup."""

    name: str
    label: str
    argv: list[str]
    fake: Callable[[str], Any]
    """Builds the fake for the shell command (a context manager with ``base_url``)."""
    setup: Callable[[Path, str], dict[str, str]]
    """Writes its settings into HOME for the fake's base URL; returns its own variables."""
    task_args: list[str]
    problem: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Variables of its own (headwire run from the source tree: ``PYTHONPATH``)."""
    runs: list[tuple[float, int, int]] = field(default_factory=list)
    versions: list[float] = field(default_factory=list)


def _script_fake(
    cls: Any, tool: str, args: Callable[[str], dict[str, Any]], *, title: bool = False, **kw: Any
) -> Any:
    """A scripted fake: the tool call, then ``done`` for every later request.  ``title``: a
    tool-less side request (OpenCode's session title) comes first and gets a text."""

    def build(command: str) -> Any:
        first = [{"text": "Title"}] if title else []
        replies = [*first, {"tool": tool, "args": args(command)}]
        return cls({"replies": replies, "default": {"text": "done"}}, **kw)

    return build


def _write_json(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def _openai_env(url: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-fake-local", "OPENAI_MODEL": "fake-model"}


def _setup_headwire(home: Path, url: str) -> dict[str, str]:
    return {**_openai_env(url), "HEADWIRE_HOME": str(home / ".headwire")}


def _setup_qwen(home: Path, url: str) -> dict[str, str]:
    _write_json(
        home / ".qwen" / "settings.json",
        {
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        },
    )
    return {**_openai_env(url), "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}


def _setup_claude(home: Path, url: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-local",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def _setup_gemini(home: Path, url: str) -> dict[str, str]:
    _write_json(
        home / ".gemini" / "settings.json",
        {
            "security": {
                "auth": {"selectedType": "gemini-api-key"},
                "folderTrust": {"enabled": False},
            },
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
        },
    )
    return {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "fake-gemini-key"}


def _setup_codex(home: Path, url: str) -> dict[str, str]:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'model = "gpt-5.5"\nmodel_provider = "fake"\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\ncheck_for_update_on_startup = false\n\n'
        f'[model_providers.fake]\nname = "fake"\nbase_url = "{url}/v1"\n'
        'env_key = "FAKE_OPENAI_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n\n'
        "[analytics]\nenabled = false\n\n"
        "[features]\nplugins = false\nremote_plugin = false\napps = false\n"
    )
    return {"FAKE_OPENAI_API_KEY": "sk-fake-local"}


def _opencode_setup(cache: Path) -> Callable[[Path, str], dict[str, str]]:
    deps = cache / "peers" / "opencode-config-deps"

    def setup(home: Path, url: str) -> dict[str, str]:
        folder = home / ".config" / "opencode"
        _write_json(
            folder / "opencode.json",
            {
                "$schema": "https://opencode.ai/config.json",
                "provider": {
                    "fake": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Fake",
                        "options": {"baseURL": url, "apiKey": "sk-fake-local"},
                        "models": {"fake-model": {"name": "Fake model"}},
                    }
                },
                "model": "fake/fake-model",
                "autoupdate": False,
                "share": "disabled",
                "permission": {"bash": "allow"},
            },
        )
        for name in ("package.json", "package-lock.json"):
            if (deps / name).exists():
                shutil.copy(deps / name, folder / name)
        if (deps / "node_modules").exists() and not (folder / "node_modules").exists():
            (folder / "node_modules").symlink_to(deps / "node_modules")
        return {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"}

    return setup


_PLATFORM_BINARIES = {
    "claude": "@anthropic-ai/claude-code-linux-x64/claude",
    "opencode": "opencode-linux-x64/bin/opencode",
    "codex": "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
}
"""Where the platform package keeps the native binary.  Codex's npm launcher is a node script
that starts the binary (node's own start, ~40 ms, would be charged to Codex): the binary is run
directly, as the issue asks."""


def _npm_bin(cache: Path, name: str) -> Path:
    modules = cache / "peers" / "npm" / "node_modules"
    launcher = modules / ".bin" / name
    fallback = modules / _PLATFORM_BINARIES.get(name, "-")
    try:
        stub = launcher.stat().st_size < (1 << 20)
    except OSError:
        stub = True
    if name == "codex" and fallback.exists():
        return fallback
    return fallback if name in _PLATFORM_BINARIES and stub and fallback.exists() else launcher


def _current_headwire() -> tuple[list[str], dict[str, str]]:
    """The ``headwire`` command of this interpreter's environment (else ``python -m
    headwire``), with this checkout's source first on ``PYTHONPATH``."""
    script = Path(sys.executable).parent / "headwire"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "headwire"]
    return argv, {"PYTHONPATH": str(ROOT / "src")}


def install_headwire(cache: Path) -> tuple[list[str], dict[str, str]] | None:
    """headwire as a user installs it (``pipx install``, ``uv tool install``): a virtual
    environment of its own in ``<cache>/peers/headwire``, holding the package built from this
    checkout (not editable) and its dependencies, and neither pip nor setuptools (whose
    ``distutils-precedence.pth`` every start of a Python 3.11 ``venv`` with pip runs).  Built
    afresh on each call; ``None`` when it cannot be (no pip here, no build backend)."""
    env_dir = cache / "peers" / "headwire"
    shutil.rmtree(env_dir, ignore_errors=True)
    python = env_dir / "bin" / "python"
    steps = [
        [sys.executable, "-m", "venv", "--without-pip", str(env_dir)],
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(ROOT),
        ],
    ]
    for step in steps:
        if subprocess.run(step, stdout=subprocess.DEVNULL, check=False).returncode != 0:
            print(f"could not install headwire into {env_dir}: {step[2:4]} failed", file=sys.stderr)
            return None
    return [str(env_dir / "bin" / "headwire")], {}


def peers(cache: Path, command: str, headwire: tuple[list[str], dict[str, str]]) -> list[Peer]:
    """Every CLI of the comparison, with ``problem`` set when it cannot run here
    (``headwire``: its command and the variables it runs with)."""
    node = shutil.which("node")
    shell_args = lambda c: {"command": c}  # noqa: E731
    described = lambda c: {"command": c, "description": "print a large output"}  # noqa: E731
    items = [
        Peer(
            "headwire",
            "headwire (this checkout)",
            headwire[0],
            _script_fake(FakeOpenAI, "run_shell_command", shell_args),
            _setup_headwire,
            ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "stream-json", "-p"],
            env=headwire[1],
        ),
        Peer(
            "qwen",
            "Qwen Code 0.24.4",
            [node or "node", str(ORACLE_PKG / "cli-entry.js")],
            _script_fake(FakeOpenAI, "run_shell_command", shell_args),
            _setup_qwen,
            ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "stream-json", "-p"],
            None if (ORACLE_PKG / "cli-entry.js").exists() else f"not found: {ORACLE_PKG}",
        ),
        Peer(
            "claude",
            "Claude Code 2.1.332",
            [str(_npm_bin(cache, "claude"))],
            _script_fake(FakeAnthropic, "Bash", described, model="claude-sonnet-4-6"),
            _setup_claude,
            [
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "claude-sonnet-4-6",
                "--allowedTools",
                "Bash",
                "-p",
            ],
        ),
        Peer(
            "gemini",
            "Gemini CLI 0.61.0",
            [str(_npm_bin(cache, "gemini"))],
            _script_fake(FakeGemini, "run_shell_command", shell_args, model="gemini-2.5-pro"),
            _setup_gemini,
            ["--output-format", "stream-json", "-m", "gemini-2.5-pro", "--yolo", "-p"],
        ),
        Peer(
            "codex",
            "Codex 0.171.0",
            [str(_npm_bin(cache, "codex"))],
            FakeResponses,
            _setup_codex,
            ["exec", "--json", "--skip-git-repo-check"],
        ),
        Peer(
            "opencode",
            "OpenCode 1.18.33",
            [str(_npm_bin(cache, "opencode"))],
            _script_fake(FakeOpenAI, "bash", described, title=True),
            _opencode_setup(cache),
            ["run", "--format", "json"],
        ),
    ]
    for peer in items:
        if peer.problem is None and peer.name != "headwire":
            if node is None:
                peer.problem = "node is not installed"
            elif not Path(peer.argv[-1]).exists():
                peer.problem = f"not installed: {peer.argv[-1]} (run without --no-install)"
    return items


def install(cache: Path) -> None:
    """``npm install`` the pinned peers (and OpenCode's config-folder dependency) once."""
    npm = shutil.which("npm")
    if npm is None:
        print("npm not found: the npm peers are skipped", file=sys.stderr)
        return
    prefix = cache / "peers" / "npm"
    wanted = [f"{name}@{version}" for name, version in NPM_PEERS.items()]
    if not all((prefix / "node_modules" / name).exists() for name in NPM_PEERS):
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *wanted],
            check=False,
        )
    deps = cache / "peers" / "opencode-config-deps"
    if not (deps / "node_modules").exists():
        deps.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                npm,
                "install",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(deps),
                OPENCODE_PLUGIN,
            ],
            check=False,
        )


# -- measuring -------------------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, from ``/proc/*/stat``."""
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def tree_rss(root: int) -> int:
    """The summed RSS (bytes) of ``root`` and all its descendants right now."""
    tree = _children()
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        pending.extend(tree.get(pid, ()))
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


def run_task(peer: Peer, work: Path, command: str, sample_s: float) -> tuple[float, int, int]:
    """One run: (wall seconds, peak tree RSS bytes, stdout bytes)."""
    run = Path(tempfile.mkdtemp(prefix=f"{peer.name}-", dir=work))
    home, tmp, proj = run / "home", run / "tmp", run / "proj"
    for d in (home, tmp, proj):
        d.mkdir()
    with peer.fake(command) as fake:
        env = {
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "PATH": os.environ.get("PATH", ""),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "TERM": "dumb",
            **peer.setup(home, fake.base_url),
            **peer.env,
        }
        peak, out = 0, 0
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*peer.argv, *peer.task_args, PROMPT],
            cwd=proj,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, tree_rss(proc.pid))
                done.wait(sample_s)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        assert proc.stdout is not None
        while chunk := proc.stdout.read(1 << 16):
            out += len(chunk)
        proc.wait(timeout=600)
        seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        log = list(getattr(fake, "log", []))
    shutil.rmtree(run, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}")
    if isinstance(fake, FakeOpenAI) and not any(e.get("tool_message_chars") for e in log):
        raise RuntimeError("the shell tool did not run (no tool result reached the model)")
    return seconds, peak, out


def run_version(peer: Peer) -> float:
    return time_command([*peer.argv, "--version"], peer.env)


def time_command(argv: list[str], extra_env: dict[str, str] | None = None) -> float:
    """Seconds from starting ``argv`` to its exit (stdin, stdout and stderr /dev/null), in
    this environment plus ``extra_env``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra_env or {})
    started = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="alternated runs of each CLI (5)")
    parser.add_argument("--version-reps", type=int, default=11, help="--version runs (11)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "headwire-bench")
    parser.add_argument("--no-install", action="store_true", help="use what the cache holds")
    parser.add_argument(
        "--headwire",
        choices=("installed", "current"),
        default="installed",
        help="installed: build this checkout into a venv of its own, as a user installs it "
        "(default); current: this interpreter's environment, the source on PYTHONPATH",
    )
    parser.add_argument("--only", help="comma-separated subset of CLIs (headwire is kept)")
    parser.add_argument("--output-bytes", type=int, default=499_999)
    parser.add_argument("--sample-ms", type=float, default=10.0)
    parser.add_argument(
        "--samples", action="store_true", help="also print every run's wall time, in order"
    )
    options = parser.parse_args(argv)
    if not options.no_install:
        install(options.cache)
    command = f"head -c {options.output_bytes} /dev/zero | tr '\\0' a"
    headwire = None if options.headwire == "current" else install_headwire(options.cache)
    if headwire is None:
        headwire = _current_headwire()
    os.sync()  # what the installs wrote reaches the disk now, not during the timed runs
    print(f"headwire: {' '.join(headwire[0])}")
    everyone = peers(options.cache, command, headwire)
    if options.only:
        wanted = {"headwire", *options.only.split(",")}
        everyone = [p for p in everyone if p.name in wanted]
    for peer in everyone:
        if peer.problem:
            print(f"skipped {peer.label}: {peer.problem}")
    active = [p for p in everyone if p.problem is None]
    work = options.cache / "peers-runs"
    work.mkdir(parents=True, exist_ok=True)
    print(f"task: the shell prints {options.output_bytes:,} bytes; {options.reps} alternated runs")
    for peer in active:  # one warm-up run each (disk caches, bytecode, JIT caches), not counted
        try:
            run_task(peer, work, command, options.sample_ms / 1000)
        except Exception as exc:
            peer.problem = f"warm-up run failed: {exc}"
            print(f"{peer.label}: {peer.problem}", flush=True)
    for rep in range(options.reps):
        for peer in active:
            if peer.problem:
                continue
            try:
                peer.runs.append(run_task(peer, work, command, options.sample_ms / 1000))
            except Exception as exc:  # one failing peer does not stop the others
                peer.problem = f"run {rep + 1} failed: {exc}"
                print(f"{peer.label}: {peer.problem}", flush=True)
    floor: list[float] = []  # the interpreter headwire runs on, running an empty script
    script = Path(headwire[0][0])
    interpreter = str(script.parent / "python") if script.name == "headwire" else headwire[0][0]
    empty = work / "empty.py"
    empty.write_text("")
    for _ in range(options.version_reps):
        for peer in active:
            peer.versions.append(run_version(peer))
        floor.append(time_command([interpreter, str(empty)], headwire[1]))
    base = next((p for p in active if p.name == "headwire" and p.runs), None)

    def med(peer: Peer, index: int) -> float:
        return statistics.median(r[index] for r in peer.runs)

    print(
        f"\n{'CLI':<26}{'wall':>9}{'x hw':>7}{'tree peak':>11}{'x hw':>7}"
        f"{'--version':>11}{'x hw':>7}{'stdout':>11}"
    )
    for peer in active:
        if not peer.runs:
            continue
        wall, peak, out = med(peer, 0), med(peer, 1), med(peer, 2)
        version = statistics.median(peer.versions)
        if base is not None:
            rw = f"{wall / med(base, 0):.2f}"
            rp = f"{peak / med(base, 1):.2f}"
            rv = f"{version / statistics.median(base.versions):.2f}"
        else:
            rw = rp = rv = "-"
        print(
            f"{peer.label:<26}{wall:>8.2f}s{rw:>7}{peak / (1 << 20):>9.0f}MB{rp:>7}"
            f"{version * 1000:>9.0f}ms{rv:>7}{int(out):>11,}"
        )
    if options.samples:
        print()
        for peer in active:
            print(f"{peer.name:<10} wall ms: {[round(r[0] * 1000) for r in peer.runs]}")
    if base is not None:
        others = [p for p in active if p is not base and p.runs]
        if others:
            fastest = min(others, key=lambda p: med(p, 0))
            print(
                f"\nheadwire / fastest peer ({fastest.label}) wall: "
                f"{med(base, 0) / med(fastest, 0):.2f}x (goal <= 0.5); tree peak vs every peer: "
                + ", ".join(f"{p.name} {med(base, 1) / med(p, 1):.2f}x" for p in others)
                + " (goal <= 0.25)"
            )
        print(
            f"headwire --version: {statistics.median(base.versions) * 1000:.1f} ms (goal <= 12); "
            f"its interpreter running an empty script (same rounds): "
            f"{statistics.median(floor) * 1000:.1f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
