"""A small client for the upstream oracle: the real Qwen Code projections, run in Node.

The oracle is ``oracle.mjs`` from the shared oracle folder, a JSON-lines server (one request per
stdin line, one response per stdout line).  It loads the real upstream functions from an
installed ``@qwen-code/qwen-code`` package.  Where things are looked up:

* the package folder: ``$HEADWIRE_ORACLE_PKG_DIR``, else ``$QWEN_ORACLE_PKG_DIR``, else
  ``/tmp/oracle-home/node_modules/@qwen-code/qwen-code``;
* the script: ``$HEADWIRE_ORACLE_SCRIPT``, else ``<repo>/../shared/oracle/oracle.mjs``;
* the Node binary: ``$HEADWIRE_NODE``, else ``node`` on ``PATH``.

When one of them is missing, :func:`locate` raises :class:`OracleUnavailable`, whose message
says how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = [
    "ORACLE_VERSION",
    "Oracle",
    "OracleError",
    "OracleLocation",
    "OracleUnavailable",
    "locate",
    "open_oracle",
    "u16_units",
    "u16_value",
]

ORACLE_VERSION = "0.24.4"
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PKG_DIR = Path("/tmp/oracle-home/node_modules/@qwen-code/qwen-code")
DEFAULT_SCRIPT = REPO_ROOT.parent / "shared" / "oracle" / "oracle.mjs"


class OracleUnavailable(RuntimeError):
    """The oracle (Node, its script or the upstream package) cannot be found."""


class OracleError(RuntimeError):
    """The oracle answered a request with ``ok: false`` or died."""


@dataclass(frozen=True)
class OracleLocation:
    node: str
    script: Path
    pkg_dir: Path


def _install_hint(pkg_dir: Path) -> str:
    # pkg_dir is <prefix>/node_modules/@qwen-code/qwen-code
    prefix = pkg_dir.parent.parent.parent
    return (
        "install the upstream package with:\n"
        f"  npm install --prefix {prefix} --no-audit --no-fund "
        f"@qwen-code/qwen-code@{ORACLE_VERSION}\n"
        "and point HEADWIRE_ORACLE_PKG_DIR (or QWEN_ORACLE_PKG_DIR) at "
        "<prefix>/node_modules/@qwen-code/qwen-code"
    )


def locate() -> OracleLocation:
    """Find Node, the oracle script and the upstream package (or raise OracleUnavailable)."""
    pkg_env = os.environ.get("HEADWIRE_ORACLE_PKG_DIR") or os.environ.get("QWEN_ORACLE_PKG_DIR")
    pkg_dir = Path(pkg_env) if pkg_env else DEFAULT_PKG_DIR
    script_env = os.environ.get("HEADWIRE_ORACLE_SCRIPT")
    script = Path(script_env) if script_env else DEFAULT_SCRIPT
    node = os.environ.get("HEADWIRE_NODE") or shutil.which("node")
    problems = []
    if node is None:
        problems.append("Node.js (`node`) is not on PATH (or set HEADWIRE_NODE); Node >= 20")
    if not script.is_file():
        problems.append(
            f"oracle script not found at {script}; set HEADWIRE_ORACLE_SCRIPT to oracle.mjs"
        )
    if not (pkg_dir / "package.json").is_file():
        problems.append(f"no @qwen-code/qwen-code package at {pkg_dir}; {_install_hint(pkg_dir)}")
    if problems:
        raise OracleUnavailable("oracle unavailable:\n- " + "\n- ".join(problems))
    assert node is not None
    return OracleLocation(node=node, script=script, pkg_dir=pkg_dir)


def _dumps(request: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(request)
    except TypeError:
        # Lone surrogates: json writes them as \udxxx escapes, which JSON.parse restores.
        return json.dumps(request, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _loads(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)  # accepts lone-surrogate escapes


class Oracle:
    """One long-lived oracle process; :meth:`call` sends a request and returns its response."""

    def __init__(self, location: OracleLocation | None = None) -> None:
        self.location = location or locate()
        env = dict(os.environ, QWEN_ORACLE_PKG_DIR=str(self.location.pkg_dir))
        self._proc = subprocess.Popen(
            [self.location.node, str(self.location.script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._next_id = 0

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request; return the response, raising :class:`OracleError` unless ``ok``."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        self._next_id += 1
        request = {**request, "id": self._next_id}
        try:
            proc.stdin.write(_dumps(request) + b"\n")
            proc.stdin.flush()
        except BrokenPipeError as exc:
            raise OracleError(f"oracle exited (code {proc.poll()})") from exc
        line = proc.stdout.readline()
        if not line:
            raise OracleError(f"oracle exited (code {proc.wait()})")
        response: dict[str, Any] = _loads(line)
        if not response.get("ok"):
            raise OracleError(
                f"oracle {request.get('op')!r} failed: "
                f"{response.get('error_name', '')} {response.get('error')}"
            )
        if response.get("id") != self._next_id:
            raise OracleError("oracle response out of order")
        return response

    def info(self) -> dict[str, Any]:
        return self.call({"op": "info"})

    def close(self) -> None:
        proc = self._proc
        if proc.stdin is not None and not proc.stdin.closed:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@contextmanager
def open_oracle(location: OracleLocation | None = None) -> Iterator[Oracle]:
    oracle = Oracle(location)
    try:
        yield oracle
    finally:
        oracle.close()


def u16_units(s: str) -> list[int]:
    """The UTF-16 code units JavaScript holds for ``s`` (adjacent surrogates stay two units)."""
    units = array("H", s.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        units.byteswap()
    return units.tolist()


def u16_value(value: Any) -> Any:
    """``value`` with every string replaced by ``{"$u16": units}``, as the oracle's ``u16`` mode
    encodes results, so that Python and Node values compare unit for unit."""
    if isinstance(value, str):
        return {"$u16": u16_units(value)}
    if isinstance(value, list | tuple):
        return [u16_value(v) for v in value]
    if isinstance(value, dict):
        return {k: u16_value(v) for k, v in value.items()}
    return value
