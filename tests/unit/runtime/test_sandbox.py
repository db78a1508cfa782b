"""The sandbox policy's bubblewrap options (issue 25): pure, no bwrap needed."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime import sandbox
from headwire.runtime.sandbox import SandboxPolicy, bwrap_args, policy_from_settings


@given(
    st.sampled_from(["read-only", "workspace-write"]),
    st.sampled_from(["open", "closed"]),
    st.booleans(),
)
def test_mount_order_and_flags(filesystem: str, network: str, hide: bool) -> None:
    """Invariant (``bwrap_args``): the root read-only first, ``/tmp`` and the hidden home
    before the workspace (so the workspace stays visible on top), the network unshared exactly
    when closed, and always ``--die-with-parent`` and ``--new-session``."""
    policy = SandboxPolicy(
        filesystem=filesystem,  # type: ignore[arg-type]
        network=network,  # type: ignore[arg-type]
        workspace=Path("/home/u/proj"),
        hide_home=hide,
        home=Path("/home/u"),
    )
    args = bwrap_args(policy, Path("/home/u/proj/sub"))
    assert args[:3] == ["--ro-bind", "/", "/"]
    bind = "--bind" if filesystem == "workspace-write" else "--ro-bind"
    ws = args.index("/home/u/proj") - 1
    assert args[ws] == bind and args.index("/tmp") < ws
    assert ("/home/u" in args) == hide
    if hide:
        assert args.index("/home/u") < ws
    assert ("--unshare-net" in args) == (network == "closed")
    assert {"--die-with-parent", "--new-session"} <= set(args)
    assert args[-2:] == ["--chdir", "/home/u/proj/sub"]


def test_policy_and_the_write_gate(tmp_path: Path) -> None:
    assert policy_from_settings(None, tmp_path) is None
    policy = policy_from_settings({"filesystem": "read-only", "network": "open"}, tmp_path)
    assert policy is not None and policy.describe() == {
        "backend": "bwrap",
        "filesystem": "read-only",
        "network": "open",
        "enforced": True,
    }
    assert sandbox.wrap(["true"], tmp_path) == ["true"] and sandbox.write_denial() is None
    sandbox.activate(policy, "/usr/bin/bwrap")
    try:
        wrapped = sandbox.wrap(["true"], tmp_path)
        assert wrapped[0] == "/usr/bin/bwrap" and wrapped[-2:] == ["--", "true"]
        assert "read-only" in (sandbox.write_denial() or "")
    finally:
        sandbox.activate(None)
    assert sandbox.write_denial() is None


def test_background_jobs_run_confined_too(tmp_path: Path) -> None:
    """``is_background`` commands go through the same wrapper: in a read-only sandbox the
    job cannot write into the workspace (real bwrap; skipped where it cannot run)."""
    import asyncio
    import os
    import time

    import pytest

    from headwire.runtime.tools.base import ToolContext
    from headwire.runtime.tools.shell import ShellTool
    from tests.e2e.test_sandbox_e2e import PROBLEM
    from tests.unit.runtime.tools.test_tools import DirSink

    if PROBLEM is not None:
        pytest.skip(PROBLEM)
    ws, artifacts = tmp_path / "ws", tmp_path / "artifacts"
    ws.mkdir()
    artifacts.mkdir()
    policy = policy_from_settings({"filesystem": "read-only", "network": "closed"}, ws)
    sandbox.activate(policy, "bwrap")
    try:
        ctx = ToolContext(cwd=ws, artifacts=DirSink(artifacts))
        command = "echo y > job.txt || echo refused"
        out = asyncio.run(ShellTool().run({"command": command, "is_background": True}, ctx))
        assert out.artifact is not None
        deadline = time.monotonic() + 20
        while b"refused" not in out.artifact.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert b"refused" in out.artifact.read_bytes()
        assert not (ws / "job.txt").exists() and os.listdir(ws) == []
    finally:
        sandbox.activate(None)


def test_each_session_writes_only_its_own_workspace(tmp_path: Path) -> None:
    """One process, two sessions (ACP): a command is confined to its own session's
    workspace, not to the one the policy was first made for."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    policy = policy_from_settings({"filesystem": "workspace-write", "network": "open"}, first)
    sandbox.activate(policy, "bwrap")
    try:
        argv = sandbox.wrap(["true"], second, second)
    finally:
        sandbox.activate(None)
    bind = argv.index("--bind")
    assert argv[bind + 1 : bind + 3] == [str(second.resolve())] * 2 and str(first) not in argv
