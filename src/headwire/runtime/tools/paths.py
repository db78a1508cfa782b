"""Shared helpers for the built-in tools: workspace confinement, argument checks, approvals.

Every file tool resolves the path it was given with :func:`resolve_in_workspace`: ``~`` is
expanded, relative paths are joined to the working directory, symlinks are resolved (also for
a missing tail, so a dangling link pointing outside is caught) and the result must lie inside
one of the workspace roots (``ctx.cwd`` plus ``ctx.workspace_dirs``, themselves resolved).
Anything else raises :class:`PathDenied` with ``"Path is outside the workspace: ..."``.
The file tools then open the resolved path with :func:`open_confined`, which follows no
symlink, so a link swapped in between the check and the open cannot lead outside either.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import Any

from headwire.errors import ToolError
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome

DENIED = "execution_denied"
INVALID = "invalid_tool_params"
FAILED = "execution_failed"


class PathDenied(ToolError):
    """A path argument resolved outside the workspace."""

    def __init__(self, message: str, error_type: str = DENIED) -> None:
        super().__init__(message)
        self.message = message
        self.error_type = error_type


def workspace_roots(ctx: ToolContext) -> tuple[Path, ...]:
    """The resolved workspace roots: ``ctx.cwd`` first, then ``ctx.workspace_dirs``."""
    roots: list[Path] = []
    for raw in (ctx.cwd, *ctx.workspace_dirs):
        real = Path(os.path.realpath(os.path.expanduser(str(raw))))
        if real not in roots:
            roots.append(real)
    return tuple(roots)


def artifact_root(ctx: ToolContext) -> Path | None:
    """The artifact directory, when the sink exposes one as ``directory`` (read-only access)."""
    directory = getattr(ctx.artifacts, "directory", None)
    if isinstance(directory, (str, Path)):
        return Path(os.path.realpath(str(directory)))
    return None


def is_within(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether the (already resolved) ``path`` is one of ``roots`` or below one."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_in_workspace(raw: str, ctx: ToolContext, *, allow_artifacts: bool = False) -> Path:
    """Resolve ``raw`` (symlinks included) and require it inside the workspace.

    ``allow_artifacts`` also admits the artifact directory (so the model can read a saved
    tool output with ``read_file``).  Raises :class:`PathDenied`.
    """
    expanded = os.path.expanduser(raw)
    joined = expanded if os.path.isabs(expanded) else os.path.join(str(ctx.cwd), expanded)
    real = Path(os.path.realpath(joined))
    roots = workspace_roots(ctx)
    if allow_artifacts:
        extra = artifact_root(ctx)
        if extra is not None:
            roots = (*roots, extra)
    if not is_within(real, roots):
        listed = ", ".join(str(root) for root in workspace_roots(ctx))
        raise PathDenied(f"Path is outside the workspace: {raw} (workspace directories: {listed})")
    return real


PROTECTED_DIRS = {
    ".git": "the repository's internals (config, hooks), which git runs as code",
    ".headwire": "headwire's project configuration (MCP servers, agent definitions)",
}
"""Folders the file tools never write without ``--allow-protected-writes``, with the reason."""


def protected_part(path: Path | str) -> str | None:
    """The protected folder name (``.git``, ``.headwire``) among ``path``'s components."""
    for part in Path(path).parts:
        folded = part.casefold()
        if folded in PROTECTED_DIRS:
            return folded
    return None


def check_protected(raw: str, real: Path, ctx: ToolContext) -> Path:
    """Refuse (:class:`PathDenied`) to write a protected path -- ``.git`` or ``.headwire``
    anywhere in the requested path or in its resolution ``real`` (a result of
    :func:`resolve_in_workspace`) -- unless ``ctx.allow_protected_writes``; returns ``real``."""
    if ctx.allow_protected_writes:
        return real
    requested = os.path.normpath(os.path.expanduser(raw))
    found = protected_part(real) or protected_part(requested)
    if found is not None:
        raise PathDenied(
            f"Refusing to write {raw}: {found}/ is a protected path ({PROTECTED_DIRS[found]}). "
            "Run headwire with --allow-protected-writes to let the file tools write there."
        )
    return real


_DIR_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_CLOEXEC


def open_parent_confined(path: Path, *, make_parents: bool = False) -> tuple[int, str]:
    """A descriptor of ``path``'s directory, opened following no symlink, and the final name.

    The path was resolved, so none of its components was a symlink when it was checked.  Its
    directories are opened one at a time (``openat`` with ``O_NOFOLLOW``) from ``/``, so a
    symlink swapped in since for any of them fails with ``ELOOP`` or ``ENOTDIR`` instead of
    leading out of the workspace.  ``make_parents`` creates missing directories on the way
    (mode 0777 minus the umask, like ``mkdir -p``).  The caller owns the descriptor; raises
    :class:`OSError`.
    """
    parts = path.parts
    if not path.is_absolute() or len(parts) < 2:
        raise OSError(errno.EINVAL, "not an absolute file path", str(path))
    dir_fd = os.open(parts[0], _DIR_FLAGS)
    try:
        for name in parts[1:-1]:
            if make_parents:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=dir_fd)
            next_fd = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
    except BaseException:
        os.close(dir_fd)
        raise
    return dir_fd, parts[-1]


WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
"""``open`` flags that can change a file: only :mod:`headwire.runtime.tools.atomic` uses them."""


def open_confined(path: Path, flags: int, mode: int = 0o666, *, make_parents: bool = False) -> int:
    """Open ``path`` (a result of :func:`resolve_in_workspace`) for reading, following no
    symlink at all (see :func:`open_parent_confined`; the file itself is opened with
    ``O_NOFOLLOW`` too).  Returns a descriptor the caller owns; raises :class:`OSError`, and
    :class:`ValueError` for ``flags`` that could write (a tool writes only through
    :mod:`headwire.runtime.tools.atomic`).
    """
    if flags & WRITE_FLAGS:
        raise ValueError("open_confined only reads; write through headwire.runtime.tools.atomic")
    dir_fd, name = open_parent_confined(path, make_parents=make_parents)
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


class SpecialFile(ToolError):
    """A file tool met a FIFO, socket or device: opening or writing one could block forever."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(
            f"{path} is not a regular file (a FIFO, socket or device); the file tools only "
            "read and write regular files. Use the shell tool for special files."
        )
        self.message = str(self.args[0])


def check_regular(mode: int, path: Path | str) -> None:
    """Raise :class:`SpecialFile` unless ``mode`` (an ``st_mode``) is a regular file's
    (a directory is left to the caller's own message)."""
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise SpecialFile(path)


def open_regular_for_reading(path: Path) -> int:
    """Open ``path`` for reading, confined (:func:`open_confined`) and never blocking: the open
    is non-blocking (a FIFO without a writer would block it), then anything but a regular file
    is refused with :class:`SpecialFile`.  Returns a blocking descriptor the caller owns."""
    fd = open_confined(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        check_regular(os.fstat(fd).st_mode, path)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def display_path(path: str | Path, ctx: ToolContext) -> str:
    """``path`` relative to the working directory, with forward slashes (upstream's display)."""
    try:
        rel = os.path.relpath(str(path), str(ctx.cwd))
    except ValueError:
        return str(path)
    return rel.replace(os.sep, "/")


def denied_outcome(exc: PathDenied) -> ToolOutcome:
    """The outcome for a path that left the workspace."""
    return ToolOutcome(
        llm_text=exc.message,
        display=f"Error: {exc.message}",
        error=exc.message,
        error_type=exc.error_type,
    )


def failure(
    llm_text: str, display: str | None, error: str, kind: str, error_type: str = FAILED
) -> ToolOutcome:
    """A failed outcome; ``kind`` keeps upstream's finer error type in ``extra``."""
    return ToolOutcome(
        llm_text=llm_text,
        display=display,
        error=error,
        error_type=error_type,
        extra={"upstream_error_type": kind},
    )


def approval_needed(kind: ToolKind, mode: ApprovalMode) -> bool:
    """Upstream's default per-kind approval: reads never ask, edits ask in default and plan.

    ``execute`` asks in every mode but ``yolo``.  In ``plan`` mode the runtime denies what
    asks, so returning ``True`` there for edits is what makes plan mode read-only.
    """
    if kind in ("read", "search", "think"):
        return False
    if kind in ("edit", "delete", "move"):
        return mode in ("default", "plan")
    return mode != "yolo"


# ----------------------------------------------------------------------------------------------
# Argument checks against a tool's JSON schema (the subset the built-in schemas use).
# Messages follow ajv's ``errorsText`` with ``dataVar: "params"``; like upstream, the obvious
# coercions ("true" -> True, "12" -> 12, 12.0 -> 12) are applied in place before giving up.

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "array": (list,),
    "object": (dict,),
}


def _fits(value: Any, type_name: str) -> bool:
    if type_name == "null":
        return value is None
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _JSON_TYPES.get(type_name, (object,)))


def _coerce(value: Any, types: list[str]) -> Any:
    """A value of one of ``types`` equal to ``value``, or ``value`` itself."""
    if "boolean" in types and isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if "integer" in types:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value.strip())
    if "number" in types and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _check_value(schema: dict[str, Any], value: Any, where: str) -> str | None:
    raw_type = schema.get("type")
    types = [raw_type] if isinstance(raw_type, str) else list(raw_type or [])
    if types and not any(_fits(value, t) for t in types):
        return f"{where} must be {','.join(types)}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be >= {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be <= {schema['maximum']}"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problem = _check_value(schema["items"], item, f"{where}/{index}")
            if problem:
                return problem
    if isinstance(value, dict) and "properties" in schema:
        return _check_object(schema, value, where)
    return None


def _check_object(schema: dict[str, Any], args: dict[str, Any], where: str) -> str | None:
    for key in schema.get("required", []):
        if key not in args:
            return f"{where} must have required property '{key}'"
    props: dict[str, Any] = schema.get("properties", {})
    for key, sub in props.items():
        if key not in args:
            continue
        raw_type = sub.get("type")
        types = [raw_type] if isinstance(raw_type, str) else list(raw_type or [])
        if types and not any(_fits(args[key], t) for t in types):
            args[key] = _coerce(args[key], types)
        problem = _check_value(sub, args[key], f"{where}/{key}")
        if problem:
            return problem
    return None


def check_args(schema: dict[str, Any], args: Any) -> str | None:
    """Check ``args`` against ``schema`` (coercing in place); an ajv-like message or ``None``."""
    if not isinstance(args, dict):
        return "Value of params must be an object"
    return _check_object(schema, args, "params")


def check_file_path_args(
    schema: dict[str, Any], args: Any, *, empty: str, relative: str
) -> str | None:
    """Schema check, then the file tools' path rules: ``file_path`` stripped (in place),
    non-empty and absolute.  ``empty`` is the message for a blank path; ``relative`` is a
    format string for a relative one (``{path}``)."""
    problem = check_args(schema, args)
    if problem:
        return problem
    file_path = args["file_path"].strip()
    args["file_path"] = file_path
    if not file_path:
        return empty
    if not os.path.isabs(file_path):
        return relative.format(path=file_path)
    return None
