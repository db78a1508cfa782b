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
