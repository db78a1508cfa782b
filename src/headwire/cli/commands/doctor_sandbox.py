"""``headwire doctor --sandbox``: run the sandbox's promises as commands inside it, print what held.

The policy is the one a run in this folder would use (``tools.executionSandbox`` of the user
settings; ``--settings`` also counts).  Four probes run as shell commands inside bubblewrap,
each against something this command sets up on the host and removes afterwards:

* ``write-inside``: a file in the workspace (allowed only in ``workspace-write``);
* ``write-outside``: a file in a fresh folder outside the workspace and outside ``/tmp``;
* ``read-home``: a file in a fresh folder under ``$HOME`` (hidden only with ``hideHome``);
* ``network``: a TCP listener this command opens on 127.0.0.1 (unreachable when ``closed``).

Each line is ``ok`` when the outcome is what the policy promises, ``FAIL`` otherwise; the exit
status is 0 when every probe held, 1 otherwise (or when bubblewrap cannot run: one line says
why and how to fix it), 2 when no sandbox is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from headwire.errors import ConfigError, ExitCode
from headwire.io.stdio import say, warn
from headwire.runtime import sandbox

_PROG = "headwire doctor --sandbox"


@contextlib.contextmanager
def _listener() -> Iterator[tuple[int, list[bytes]]]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                got.append(b"connected")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1]), got
    finally:
        stop.set()
        thread.join(2)
        server.close()


def _run(binary: str, policy: sandbox.SandboxPolicy, command: str) -> int:
    shell = shutil.which("bash") or "/bin/sh"
    argv = [binary, *sandbox.bwrap_args(policy, policy.workspace), "--", shell, "-c", command]
    done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    return done.returncode


def _scratch(base: Path) -> Path:
    return Path(tempfile.mkdtemp(prefix=".headwire-doctor-", dir=base))


def run_sandbox_doctor(settings_value: str | None = None) -> int:
    """Probe the configured sandbox (see the module docstring); returns the exit status."""
    from headwire.runtime.config.settings import load_settings
    from headwire.runtime.store.storage import data_dir

    cwd = Path.cwd()
    try:
        settings = load_settings(data_dir(), cwd, settings_value, trusted=False)
    except ConfigError as exc:
        warn(f"{_PROG}: {exc}")
        return ExitCode.USAGE
    policy = sandbox.policy_from_settings(settings.execution_sandbox, cwd)
    if policy is None:
        say(f"{_PROG}: no sandbox configured (tools.executionSandbox in the user settings)")
        return ExitCode.USAGE
    try:
        binary = asyncio.run(sandbox.probe(policy))
    except sandbox.SandboxUnavailable as exc:
        say(f"{_PROG}: {exc}")
        return ExitCode.ERROR
    say(
        f"{_PROG}: bwrap ({binary}), workspace {policy.workspace}, filesystem "
        f"{policy.filesystem}, network {policy.network}, hideHome {policy.hide_home}",
        flush=True,
    )
    results: list[tuple[str, bool, str]] = []
    probe_name = f".headwire-doctor-{threading.get_ident()}"
    inside = policy.workspace / probe_name
    wrote = _run(binary, policy, f"echo x > '{inside}'") == 0 and inside.exists()
    with contextlib.suppress(OSError):
        inside.unlink()
    expected = policy.filesystem == "workspace-write"
    results.append(("write-inside", wrote == expected, "written" if wrote else "refused"))
    outside_base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    outside = _scratch(outside_base)
    try:
        _run(binary, policy, f"echo x > '{outside}/probe'")
        escaped = (outside / "probe").exists()
        results.append(
            ("write-outside", not escaped, f"{'written' if escaped else 'refused'} ({outside})")
        )
    finally:
        shutil.rmtree(outside, ignore_errors=True)
    home = policy.home
    if home is not None and home.is_dir() and not home.is_relative_to(policy.workspace):
        folder = _scratch(home)
        try:
            (folder / "secret").write_text("probe\n")
            seen = _run(binary, policy, f"cat '{folder}/secret' >/dev/null") == 0
            results.append(
                ("read-home", seen != policy.hide_home, "readable" if seen else "hidden")
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        results.append(("read-home", True, "no home outside the workspace to probe"))
    with _listener() as (port, got):
        reached = _run(binary, policy, f"exec 3<>/dev/tcp/127.0.0.1/{port}") == 0 or bool(got)
    results.append(
        ("network", reached == (policy.network == "open"), "reached" if reached else "blocked")
    )
    for name, held, detail in results:
        say(f"{'ok' if held else 'FAIL':<5} {name:<13} {detail}")
    return ExitCode.OK if all(held for _, held, _ in results) else ExitCode.ERROR
