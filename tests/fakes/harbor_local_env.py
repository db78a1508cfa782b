"""A Harbor 0.25 environment that runs a trial on this machine (for tests; needs ``bwrap``).

Loaded by Harbor through its import path (``tests.fakes.harbor_local_env:LocalEnvironment``).
Each command runs in a bubblewrap sandbox that sees the host's file system, except: ``/app``
(the task's working directory) and ``/tests`` are folders of the environment's own scratch
root, and ``/logs/agent`` and ``/logs/verifier`` are the trial's log folders (so Harbor reads
the logs in place: ``mounted``).  The network is the host's (the fake model server on
127.0.0.1 is reachable).  Nothing is created outside the scratch root and the trial folder.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

SKIP = {"proc", "dev", "sys", "app", "tests", "logs", "solution"}


class LocalEnvironment(BaseEnvironment):
    """Trials in bubblewrap sandboxes on the host."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="harbor-local-"))
        super().__init__(*args, **kwargs)

    @staticmethod
    def type() -> str:
        return "headwire-local"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(mounted=True)

    def _validate_definition(self) -> None:
        return None

    def _map(self) -> dict[str, Path]:
        paths = self.trial_paths
        return {
            "/logs/agent": Path(paths.agent_dir),
            "/logs/verifier": Path(paths.verifier_dir),
            "/logs/artifacts": self._root / "artifacts",
            "/app": self._root / "app",
            "/tests": self._root / "tests",
            "/solution": self._root / "solution",
        }

    def _host(self, path: str) -> Path:
        for target, source in sorted(self._map().items(), key=lambda i: -len(i[0])):
            if path == target or path.startswith(target + "/"):
                return source / path[len(target) :].lstrip("/")
        return Path(path)

    async def start(self, force_build: bool) -> None:
        for source in self._map().values():
            source.mkdir(parents=True, exist_ok=True)

    async def stop(self, delete: bool) -> None:
        shutil.rmtree(self._root, ignore_errors=True)

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self._host(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        target = self._host(target_dir)
        if target.exists() and os.path.samefile(source_dir, target):
            return  # a mounted log folder: already in place
        shutil.copytree(source_dir, target, dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self._host(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        source, target = self._host(source_dir), Path(target_dir)
        if target.exists() and os.path.samefile(source, target):
            return  # a mounted log folder: already in place
        shutil.copytree(source, target, dirs_exist_ok=True)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        args = ["bwrap", "--die-with-parent", "--dev", "/dev", "--proc", "/proc"]
        for entry in sorted(os.listdir("/")):
            if entry not in SKIP:
                args += ["--bind", f"/{entry}", f"/{entry}"]
        for target, source in self._map().items():
            source.mkdir(parents=True, exist_ok=True)
            args += ["--bind", str(source), target]
        args += ["--chdir", cwd or "/app", "bash", "-c", command]
        merged = {**os.environ, **(self._persistent_env or {}), **(env or {})}
        proc = await asyncio.create_subprocess_exec(
            *args,
            env=merged,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout_sec)
        except (TimeoutError, asyncio.CancelledError):
            proc.kill()
            await proc.wait()
            raise
        return ExecResult(
            stdout=out.decode("utf-8", "replace"),
            stderr=err.decode("utf-8", "replace"),
            return_code=proc.returncode or 0,
        )
