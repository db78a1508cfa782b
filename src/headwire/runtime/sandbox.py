"""The tool execution sandbox (``tools.executionSandbox``): shell commands run inside bubblewrap.

Qwen Code's keys and meanings: ``filesystem`` is ``read-only`` (nothing may be written but a
private ``/tmp``) or ``workspace-write`` (the workspace too); ``network`` is ``open`` (the
host's network) or ``closed`` (a network namespace of its own: no host or external address,
not even ``127.0.0.1``); ``backend`` is ``auto`` or ``bwrap`` (both bubblewrap).  headwire's
own key ``hideHome`` (default off) also hides the user's home folder outside the workspace
from reads (an empty ``tmpfs`` over ``$HOME``; the workspace is bound back on top).

Only the user settings and ``--settings`` can set the policy (the trust table,
:data:`headwire.runtime.trust.PROJECT_TABLE`, makes every key ``user``-only): a project can
neither turn it on, off, nor weaken it.

The policy is decided once per process, before any tool runs (:func:`activate`), after one
probe (:func:`probe`: ``bwrap ... true`` with the very arguments commands get).  When the
probe fails the run stops with :class:`SandboxUnavailable`, one line naming the cause and the
fix; nothing ever runs unconfined while a sandbox is configured.  With no sandbox configured
none of this runs (no probe, no wrapping).

What it covers: ``run_shell_command`` (foreground and background) is wrapped by
:func:`wrap`; the file tools already resolve every path inside the workspace, and in
``read-only`` mode their one write path (:func:`headwire.runtime.tools.atomic.target_for_write`)
refuses (:func:`write_denial`); subagents share the same tools.  MCP servers are not started
while the sandbox is on (they would run with the user's full rights).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from headwire.errors import UsageError
from headwire.records import dataclass

Filesystem = Literal["read-only", "workspace-write"]
Network = Literal["open", "closed"]
BACKEND = "bwrap"
PROBE_TIMEOUT_S = 10.0


class SandboxUnavailable(UsageError):
    """A sandbox is configured but cannot be enforced here; ``str()`` is the one line (cause
    and fix).  The run stops before any tool runs, with Qwen Code's exit code 1."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The effective policy: what commands may write and reach.  ``workspace``: the resolved
    folder the run works in (writable in ``workspace-write`` mode); ``home``: the folder
    ``hideHome`` covers."""

    filesystem: Filesystem
    network: Network
    workspace: Path
    backend: str = "auto"
    hide_home: bool = False
    home: Path | None = None

    def describe(self, enforced: bool = True) -> dict[str, Any]:
        """``sandbox`` of ``system/init`` and ``result``: ``{backend, filesystem, network,
        enforced}`` (``backend`` is the one that runs, ``bwrap``)."""
        return {
            "backend": BACKEND,
            "filesystem": self.filesystem,
            "network": self.network,
            "enforced": enforced,
        }


def policy_from_settings(value: Mapping[str, Any] | None, workspace: Path) -> SandboxPolicy | None:
    """The policy of a validated ``tools.executionSandbox`` object, ``None`` when not set."""
    if not value:
        return None
    home = os.environ.get("HOME")
    return SandboxPolicy(
        filesystem=value["filesystem"],
        network=value["network"],
        workspace=workspace.resolve(),
        backend=str(value.get("backend", "auto")),
        hide_home=bool(value.get("hideHome", False)),
        home=Path(home).resolve() if home else None,
    )


def bwrap_args(policy: SandboxPolicy, cwd: Path) -> list[str]:
    """bubblewrap's options for ``policy`` (everything before the command), in mount order:
    the root read-only, fresh ``/dev``, ``/proc`` and ``/tmp``, the hidden home, then the
    workspace (writable or read-only on top)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if policy.hide_home and policy.home is not None and policy.home != Path("/"):
        args += ["--tmpfs", str(policy.home)]
    ws = str(policy.workspace)
    args += ["--bind" if policy.filesystem == "workspace-write" else "--ro-bind", ws, ws]
    if policy.network == "closed":
        args.append("--unshare-net")
    args += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
    args += ["--chdir", str(cwd)]
    return args


def bwrap_path() -> str | None:
    """The bubblewrap binary on ``PATH``."""
    import shutil  # only a sandboxed run looks for it (shutil loads bz2 and lzma)

    return shutil.which("bwrap")


_active: SandboxPolicy | None = None
_binary: str = "bwrap"


def activate(policy: SandboxPolicy | None, binary: str = "bwrap") -> None:
    """Make ``policy`` the process's sandbox (``None``: none).  Called once a run's probe held."""
    global _active, _binary
    _active, _binary = policy, binary


def active() -> SandboxPolicy | None:
    """The sandbox in force, ``None`` when there is none."""
    return _active


def wrap(argv: list[str], cwd: Path, workspace: Path | None = None) -> list[str]:
    """``argv`` as the sandbox runs it in ``cwd`` (unchanged when there is no sandbox).
    ``workspace``: the calling session's workspace (each ACP session has its own), default
    the one the policy was made for."""
    if _active is None:
        return argv
    policy = _active
    if workspace is not None and workspace.resolve() != policy.workspace:
        policy = replace(policy, workspace=workspace.resolve())
    return [_binary, *bwrap_args(policy, cwd), "--", *argv]


def write_denial() -> str | None:
    """Why the file tools may not write, ``None`` when they may (not read-only)."""
    if _active is not None and _active.filesystem == "read-only":
        return (
            "The sandbox is read-only (tools.executionSandbox.filesystem): no file may be written."
        )
    return None


_FIX = (
    "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1; in a container, run it with user namespaces "
    "allowed), or remove tools.executionSandbox from your settings"
)


async def probe(policy: SandboxPolicy) -> str:
    """Run ``bwrap <policy> -- true`` once; the binary's path when it held.  Raises
    :class:`SandboxUnavailable` (cause and fix in one line) when it cannot run."""
    binary = bwrap_path()
    if binary is None:
        raise SandboxUnavailable(
            "tools.executionSandbox is set but bubblewrap (bwrap) is not on PATH: " + _FIX
        )
    try:
        proc = await asyncio.create_subprocess_exec(
            binary,
            *bwrap_args(policy, policy.workspace),
            "--",
            "true",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise SandboxUnavailable(
            f"tools.executionSandbox is set but {binary} cannot run ({exc}): {_FIX}"
        ) from None
    if proc.returncode != 0:
        first = (err or b"").decode("utf-8", "replace").strip().splitlines()
        cause = first[0][:200] if first else f"exit status {proc.returncode}"
        raise SandboxUnavailable(
            f"tools.executionSandbox is set but bubblewrap cannot confine commands here "
            f"({cause}): {_FIX}"
        )
    return binary


__all__ = [
    "SandboxPolicy",
    "SandboxUnavailable",
    "activate",
    "active",
    "bwrap_args",
    "policy_from_settings",
    "probe",
    "wrap",
    "write_denial",
]
