"""``glob``: find files by glob pattern, newest first; also the glob matcher and tree walker.

Matching follows node-glob as upstream configures it: ``*``/``?``/``[...]`` stay inside one
path segment, ``**`` spans segments, ``{a,b}`` alternates, dotfiles match, case is ignored.
The walk never follows directory symlinks, always skips ``.git`` and ``node_modules``, and
honours ``.gitignore`` / ``.qwenignore`` files found on the way (a practical subset of git's
rules: comments, ``!`` negation, trailing ``/`` for directories, anchoring by ``/``).

Sorting matches upstream: files modified in the last 24 hours first, newest first; the rest
by path.  At most 100 paths are listed and at most 1,000 matches collected.

Globs (the tool's and those of ignore files) are matched with RE2
(:mod:`headwire.runtime.tools.linear_regex`), in time linear in the path, and the walk runs on
an abandonable thread (:mod:`headwire.runtime.tools.offload`) that checks for cancellation at
every entry, so no pattern and no tree can hold the process past a signal.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from headwire.records import dataclass, field
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.linear_regex import LinearPattern, NotLinear, compile_linear
from headwire.runtime.tools.offload import StepTimedOut, in_thread
from headwire.runtime.tools.paths import (
    INVALID,
    PathDenied,
    approval_needed,
    check_args,
    denied_outcome,
    failure,
    resolve_in_workspace,
    workspace_roots,
)
from headwire.runtime.trust import read_project_file

MAX_FILE_COUNT = 100
MAX_COLLECTED = MAX_FILE_COUNT * 10
RECENT_S = 24 * 60 * 60
MAX_WALK_ENTRIES = 200_000
ALWAYS_SKIPPED = frozenset({".git", "node_modules"})
IGNORE_FILES = (".gitignore", ".qwenignore")
_MAX_IGNORE_BYTES = 1_000_000
"""Bytes read from one ignore file."""
_MAGIC = re.compile(r"[*?\[{]")


def has_magic(pattern: str) -> bool:
    """Whether ``pattern`` has any glob syntax."""
    return _MAGIC.search(pattern) is not None


def _closing_brace(pattern: str, start: int) -> int:
    depth = 0
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _split_alternatives(body: str) -> list[str]:
    parts: list[str] = []
    depth, last = 0, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[last:index])
            last = index + 1
    parts.append(body[last:])
    return parts


def _class_to_regex(pattern: str, start: int) -> tuple[str, int] | None:
    """Translate the ``[...]`` starting at ``start``; ``None`` when it is not closed."""
    index = start + 1
    negate = index < len(pattern) and pattern[index] in "!^"
    if negate:
        index += 1
    body_start = index
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    end = pattern.find("]", index)
    if end < 0:
        return None
    body = pattern[body_start:end].replace("\\", "\\\\").replace("^", "\\^")
    return ("[^/" if negate else "[") + body + "]", end + 1


def glob_to_regex(pattern: str) -> str:
    """The regular expression (unanchored) for a glob ``pattern`` over ``/``-separated paths."""
    out: list[str] = []
    index, size = 0, len(pattern)
    while index < size:
        char = pattern[index]
        if char == "*":
            end = index
            while end < size and pattern[end] == "*":
                end += 1
            whole_segment = (index == 0 or pattern[index - 1] == "/") and (
                end == size or pattern[end] == "/"
            )
            if end - index >= 2 and whole_segment:
                if end < size:
                    out.append("(?:[^/]*/)*")
                    end += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            index = end
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            translated = _class_to_regex(pattern, index)
            if translated is None:
                out.append(re.escape(char))
                index += 1
            else:
                out.append(translated[0])
                index = translated[1]
        elif char == "{":
            close = _closing_brace(pattern, index)
            alternatives = _split_alternatives(pattern[index + 1 : close]) if close > 0 else []
            if len(alternatives) < 2:
                out.append(re.escape(char))
                index += 1
            else:
                out.append("(?:" + "|".join(glob_to_regex(a) for a in alternatives) + ")")
                index = close + 1
        elif char == "\\" and index + 1 < size:
            out.append(re.escape(pattern[index + 1]))
            index += 2
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


class InvalidGlob(NotLinear):
    """A glob whose translation RE2 rejects (such as a reversed range ``[z-a]``)."""


def compile_glob(pattern: str, *, ignore_case: bool = False) -> LinearPattern:
    """A compiled full-match matcher for ``pattern`` (RE2: linear in the path's length)."""
    try:
        return compile_linear(f"(?s:{glob_to_regex(pattern)})\\Z", ignore_case=ignore_case)
    except NotLinear as exc:
        raise InvalidGlob(f"Invalid glob pattern: {pattern} ({exc})") from None


# ---------------------------------------------------------------------------------------------
# Ignore files.


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: LinearPattern
    negate: bool
    dir_only: bool


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules of the ignore files in one directory; paths are matched relative to it."""

    prefix: str
    rules: tuple[_Rule, ...]


def _parse_rule(line: str) -> _Rule | None:
    text = line.rstrip("\n\r")
    if text.endswith(" ") and not text.endswith("\\ "):
        text = text.rstrip(" ")
    if not text or text.startswith("#"):
        return None
    negate = text.startswith("!")
    if negate or text.startswith("\\"):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    body = glob_to_regex(text)
    if not anchored:
        body = "(?:.*/)?" + body
    try:
        regex = compile_linear(f"(?s:{body})\\Z")
    except NotLinear:  # git skips a pattern it cannot use; so does the walk
        return None
    return _Rule(regex, negate, dir_only)


def load_rules(directory: Path, names: tuple[str, ...] = IGNORE_FILES) -> RuleSet | None:
    """The ignore rules in ``directory`` (``None`` when it has no ignore file)."""
    rules: list[_Rule] = []
    for name in names:
        try:  # a regular file inside its folder: a FIFO or a link out is not read
            raw = read_project_file(directory / name, directory, _MAX_IGNORE_BYTES)
        except OSError:
            continue
        lines = raw[:_MAX_IGNORE_BYTES].decode("utf-8", "replace").splitlines()
        rules.extend(rule for rule in map(_parse_rule, lines) if rule is not None)
    if not rules:
        return None
    return RuleSet(str(directory).rstrip("/") + "/", tuple(rules))


def is_ignored(path: str, is_dir: bool, chain: tuple[RuleSet, ...]) -> bool:
    """Whether ``path`` (absolute) is ignored by ``chain`` (outermost rule set first)."""
    verdict = False
    for ruleset in chain:
        if not path.startswith(ruleset.prefix):
            continue
        rel = path[len(ruleset.prefix) :]
        for rule in ruleset.rules:
            if (is_dir or not rule.dir_only) and rule.regex.match(rel):
                verdict = not rule.negate
    return verdict


def rule_chain(
    start: Path, root: Path, names: tuple[str, ...] = IGNORE_FILES
) -> tuple[RuleSet, ...]:
    """The rule sets of ``root`` and every directory down to ``start`` (inclusive)."""
    dirs = [start]
    if start != root and start.is_relative_to(root):
        dirs = [
            root,
            *(
                root / Path(*start.relative_to(root).parts[:n])
                for n in range(1, len(start.relative_to(root).parts) + 1)
            ),
        ]
    found = (load_rules(directory, names) for directory in dirs)
    return tuple(ruleset for ruleset in found if ruleset is not None)


# ---------------------------------------------------------------------------------------------
# The walk.


@dataclass(slots=True)
class WalkStats:
    """What a walk saw: ``incomplete`` when it stopped early (entry budget or cancellation)."""

    entries: int = 0
    incomplete: bool = False
    ignored: int = field(default=0)


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """How to walk: hidden entries, ignore files, depth and entry budget."""

    skip_hidden: bool = False
    respect_ignore: bool = True
    max_depth: int | None = None
    max_entries: int = MAX_WALK_ENTRIES
    ignore_names: tuple[str, ...] = IGNORE_FILES


def walk_files(
    start: Path, root: Path, options: WalkOptions, stats: WalkStats, should_stop: Callable[[], bool]
) -> Iterator[tuple[os.DirEntry[str], str]]:
    """Yield ``(entry, path relative to start)`` for the files under ``start``, sorted by name.

    Directory symlinks are not followed; file symlinks are yielded (callers that read them
    re-check confinement).  Stops early, with ``stats.incomplete``, on ``should_stop()`` or
    after ``options.max_entries`` directory entries.
    """
    base_chain = rule_chain(start, root, options.ignore_names) if options.respect_ignore else ()
    stack: list[tuple[str, str, tuple[RuleSet, ...], int]] = [(str(start), "", base_chain, 0)]
    while stack:
        directory, rel_dir, chain, depth = stack.pop()
        if depth > 0 and options.respect_ignore:
            local = load_rules(Path(directory), options.ignore_names)
            if local is not None:
                chain = (*chain, local)
        try:
            with os.scandir(directory) as iterator:
                entries = sorted(iterator, key=lambda e: e.name)
        except OSError:
            continue
        subdirs: list[tuple[str, str, tuple[RuleSet, ...], int]] = []
        for entry in entries:
            stats.entries += 1
            if stats.entries > options.max_entries or should_stop():
                stats.incomplete = True
                return
            name = entry.name
            if name in ALWAYS_SKIPPED or (options.skip_hidden and name.startswith(".")):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and entry.is_file()
            except OSError:
                continue
            if chain and is_ignored(entry.path, is_dir, chain):
                stats.ignored += 1
                continue
            rel = f"{rel_dir}{name}"
            if is_dir:
                if options.max_depth is None or depth + 1 < options.max_depth:
                    subdirs.append((entry.path, rel + "/", chain, depth + 1))
            elif is_file:
                yield entry, rel
        stack.extend(reversed(subdirs))


# ---------------------------------------------------------------------------------------------
# The tool.


def split_literal_prefix(pattern: str) -> tuple[str, str]:
    """Split ``pattern`` into a literal directory prefix and the rest (which has the magic)."""
    parts = pattern.split("/")
    literal: list[str] = []
    for part in parts[:-1]:
        if has_magic(part):
            break
        literal.append(part)
    prefix = "/".join(literal)
    if pattern.startswith("/") and not prefix:
        prefix = "/"
    rest = "/".join(parts[len(literal) :])
    return prefix, rest


def _not_a_directory(path: Path) -> str | None:
    """Upstream's path validation message for a search directory, or ``None``."""
    if not path.exists():
        return f"Path does not exist: {path}"
    if not path.is_dir():
        return f"Path is not a directory: {path}"
    return None


def _root_of(path: Path, roots: tuple[Path, ...]) -> Path:
    for root in roots:
        if path == root or path.is_relative_to(root):
            return root
    return path


def _sort_key_factory(now: float) -> Callable[[tuple[str, float]], tuple[int, float, str]]:
    def key(item: tuple[str, float]) -> tuple[int, float, str]:
        path, mtime = item
        if now - mtime < RECENT_S:
            return (0, -mtime, path)
        return (1, 0.0, path)

    return key


@dataclass(slots=True)
class _Search:
    found: dict[str, float] = field(default_factory=dict)
    hit_limit: bool = False


def _glob_in(
    start: Path, root: Path, pattern: str, search: _Search, should_stop: Callable[[], bool]
) -> None:
    literal = start / pattern
    real = Path(os.path.realpath(literal))
    if (real == root or real.is_relative_to(root)) and literal.is_file():
        # Upstream escapes a pattern that names an existing file, so it matches literally.
        search.found.setdefault(str(literal), literal.stat().st_mtime)
        return
    regex = compile_glob(pattern, ignore_case=True)
    depth = None if "**" in pattern else pattern.count("/") + 1
    stats = WalkStats()
    for entry, rel in walk_files(start, root, WalkOptions(max_depth=depth), stats, should_stop):
        if not regex.match(rel) or entry.path in search.found:
            continue
        if len(search.found) >= MAX_COLLECTED:
            search.hit_limit = True
            return
        try:
            search.found[entry.path] = entry.stat().st_mtime
        except OSError:
            continue


class GlobTool:
    """Find files whose path matches a glob pattern."""

    name: str = "glob"
    display_name: str = "Glob"
    description: str = (
        "Fast file pattern matching that works with any codebase size.\n"
        '- Supports glob patterns like "**/*.js" or "src/**/*.ts"\n'
        "- Returns matching file paths sorted by modification time (newest first)\n"
        "- Use it to find files by name patterns; batch several searches when useful."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "pattern": {"description": "The glob pattern to match files against", "type": "string"},
            "path": {
                "description": (
                    "The directory to search in. Omit it to search the current working "
                    'directory (do not pass "undefined" or "null"). Must be an existing '
                    "directory when given."
                ),
                "type": "string",
            },
        },
        "required": ["pattern"],
        "type": "object",
    }
    kind: ToolKind = "search"

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus a non-empty pattern."""
        problem = check_args(self.parameters, args)
        if problem:
            return problem
        if not args["pattern"].strip():
            return "The 'pattern' parameter cannot be empty."
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Searches never ask."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Glob in ``path`` or across the workspace roots."""
        pattern: str = args["pattern"]
        raw_path: str | None = args.get("path") or None
        roots = workspace_roots(ctx)
        try:
            if raw_path:
                search_dir = resolve_in_workspace(raw_path.strip(), ctx)
                problem = _not_a_directory(search_dir)
                if problem:
                    return failure(problem, f"Error: {problem}", problem, INVALID, INVALID)
                dirs = [search_dir]
                where = f"within {search_dir}"
            else:
                dirs = list(roots)
                where = (
                    f"across {len(dirs)} workspace directories"
                    if len(dirs) > 1
                    else "in the workspace directory"
                )
            prefix, rest = split_literal_prefix(pattern)
            starts: list[tuple[Path, str]] = []
            for directory in dirs:
                if prefix:
                    start = resolve_in_workspace(os.path.join(str(directory), prefix), ctx)
                    if start.is_dir():
                        starts.append((start, rest))
                else:
                    starts.append((directory, rest))
        except PathDenied as exc:
            return denied_outcome(exc)
        search = _Search()
        abandon = threading.Event()

        def stop() -> bool:
            return abandon.is_set() or ctx.cancelled.is_set()

        def walk() -> None:
            for start, rest in starts:
                _glob_in(start, _root_of(start, roots), rest, search, stop)
                if search.hit_limit or stop():
                    return

        try:
            await in_thread(walk, stop=abandon, timeout_s=ctx.timeout_s)
        except InvalidGlob as exc:
            return failure(exc.args[0], f"Error: {exc.args[0]}", exc.args[0], INVALID, INVALID)
        except StepTimedOut as exc:
            message = f"Glob search timed out: {exc}."
            return failure(message, f"Error: {message}", message, "timeout", "timeout")
        if ctx.cancelled.is_set():
            message = "Glob search was cancelled."
            return ToolOutcome(
                llm_text=message, display=message, error=message, error_type="cancelled"
            )
        return _render(pattern, where, search)


def _render(pattern: str, where: str, search: _Search) -> ToolOutcome:
    if not search.found:
        return ToolOutcome(
            llm_text=f'No files found matching pattern "{pattern}" {where}',
            display="No files found",
        )
    ordered = sorted(search.found.items(), key=_sort_key_factory(time.time()))
    total = len(ordered)
    truncated = search.hit_limit or total > MAX_FILE_COUNT
    shown = [path for path, _ in ordered[:MAX_FILE_COUNT]]
    found = "Found at least" if search.hit_limit else "Found"
    text = (
        f'{found} {total} file(s) matching "{pattern}" {where}, sorted by modification '
        f"time (newest first):\n---\n" + "\n".join(shown)
    )
    if search.hit_limit:
        text += (
            f"\n---\n[Results truncated after scanning {total} matching files. "
            "Narrow the pattern or path.]"
        )
    elif truncated:
        omitted = total - MAX_FILE_COUNT
        text += f"\n---\n[{omitted} {'file' if omitted == 1 else 'files'} truncated] ..."
    display = f"{found} {total} matching file(s)" + (" (truncated)" if truncated else "")
    return ToolOutcome(llm_text=text, display=display, extra={"paths": shown})
