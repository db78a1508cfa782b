"""Output styles: a named block of instructions layered onto the built-in system prompt.

A style changes how the answers are written (tone, narration, explanation), not what the agent
may do.  It is chosen by ``--output-style NAME`` (one run), else ``general.outputStyle``;
``default`` (or nothing) is no style.  Names are matched without regard to case.

* The built-ins are ``Concise``, ``Proactive``, ``Explanatory`` and ``Learning`` (headwire's own
  words for Qwen Code 0.24.4's four).  ``Learning`` waits for the user to write code, so a
  headless run (``-p``, a persistent session, ACP) skips it with a note.
* A custom style is a Markdown file ``<name>.md`` in the user's ``<data dir>/output-styles/``,
  ``~/.qwen/output-styles/`` or ``~/.claude/output-styles/`` (a user file may be a symbolic
  link into the home folder), or in the project's ``.headwire/``, ``.qwen/`` or ``.claude/``
  ``output-styles/`` -- those only in a trusted folder, never through a symbolic link, and only
  from a folder whose real path is inside the project.  A hard link (a file that other names
  share) is refused at either level.  Its optional front matter gives ``name`` (default: the
  file name without ``.md``), ``description`` (default: the body's first line) and
  ``keep-coding-instructions`` (default: the value of the built-in of that name, else false).
  HTML comments are taken out of the body.  A file larger than :data:`MAX_STYLE_BYTES`, holding
  a NUL byte, with an empty body or an invalid name is skipped with a note (bytes that are not
  UTF-8 read as U+FFFD); the others still load.  A project style overrides a user style of its
  name, and either overrides a built-in.

What a style does to a model call (:class:`OutputStyle`): the built-in prompt says it answers
according to the style, drops its coding guidance when the style does not keep it, and ends
with ``# Output Style: NAME`` and the style's instructions; each user turn of the main agent
starts with a reminder that the style is active.  A replaced prompt (``--system-prompt``)
takes no style; subagents run their own prompts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from headwire.errors import ConfigError
from headwire.io.lines import open_regular
from headwire.records import dataclass

__all__ = [
    "BUILT_IN",
    "MAX_STYLE_BYTES",
    "STYLE_DIRS",
    "OutputStyle",
    "StyleError",
    "load_styles",
    "read_style_file",
    "resolve_style",
    "style_roots",
]

MAX_STYLE_BYTES = 25_000
"""A style file's size limit: a style is a prompt, not a document (Qwen Code's limit)."""
STYLE_DIRS = (".headwire", ".qwen", ".claude")
"""The folders whose ``output-styles/`` hold styles, highest precedence first."""
DEFAULT = "default"
"""The name of no style (reserved: no file may take it)."""
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f/\\<>\u2028\u2029]")


class StyleError(ConfigError):
    """A style file that cannot be used; ``str()`` says why."""


@dataclass(frozen=True, slots=True)
class OutputStyle:
    """One style: ``body`` is its instructions, ``reminder`` the sentence each turn repeats."""

    name: str
    description: str
    body: str
    keep_coding_instructions: bool
    source: str
    """``built-in``, ``user`` or ``project``."""
    reminder: str = "Follow the guidelines of this style in every answer."
    interactive_only: bool = False
    """Needs a person at the keyboard (``Learning``): skipped in a headless run."""

    def section(self) -> str:
        """The system prompt's last section: the style's heading and its instructions."""
        return f"# Output Style: {self.name}\n{self.body}"

    def turn_reminder(self) -> str:
        """What starts each user turn of the main agent while the style is active."""
        return (
            f"<system-reminder>\n{self.name} output style is active. {self.reminder}\n"
            "</system-reminder>"
        )


def _built_in(
    name: str, description: str, reminder: str, body: str, *, interactive_only: bool = False
) -> OutputStyle:
    return OutputStyle(
        name=name,
        description=description,
        body=body.strip(),
        keep_coding_instructions=True,
        source="built-in",
        reminder=reminder,
        interactive_only=interactive_only,
    )


BUILT_IN: dict[str, OutputStyle] = {
    s.name.lower(): s
    for s in (
        _built_in(
            "Concise",
            "The result first; no preamble, narration or recap",
            "Lead with the result, leave out the narration, keep what the user needs.",
            """
The user wants the result, not the story of how you got it.

- Begin with the answer or the outcome. No opening ("Sure", "Let me", "I will now") and no
  closing recap of what you already said.
- Leave out restatements of the request, of your plan and of each step you took. Say what came
  out, what you decided and anything the user must do.
- Keep a simple answer to a few sentences of prose. Use headings, tables or lists only for
  content that has that shape.
- Skip hedges and boilerplate; mention a caveat only if it changes what the user should do.
- When the user asks for detail, an explanation or a walkthrough, give all of it: brevity is
  the default, not a reason to hold back what was asked.
- Never shorten error messages, failing test output, security findings or the confirmation of a
  risky action.

Where another part of these instructions asks for more narration or formatting, this section
takes precedence.
""",
        ),
        _built_in(
            "Proactive",
            "Starts working at once; states assumptions instead of asking on low-risk choices",
            "Act without waiting: state low-risk assumptions and carry on.",
            """
The user wants the work done, not proposed.

- When the request is clear enough to act on, act: make the change, run the check, then report.
- On a low-risk choice (a name, a file location, an obvious default), pick the reasonable
  option, say in one line what you assumed, and continue instead of asking.
- Ask first only when a wrong guess would be costly or hard to undo, or when the request can be
  read in ways that lead to different work.
- Finish the whole task, including the obvious follow-ups it implies (updating a caller,
  adding the test the change needs).
- This changes how eagerly you work, not what you are allowed to do: every approval mode,
  permission rule and confirmation still applies in full.
""",
        ),
        _built_in(
            "Explanatory",
            "Adds short notes on the codebase and the choices made, alongside the work",
            "Add brief insight notes about the code and your choices as you work.",
            """
The user wants to understand the codebase while you work on it.

- Do the task as usual, and add short "Insight" notes where they help: why the code is shaped
  the way it is, what a pattern or convention in this codebase is for, what a choice you made
  trades off.
- Mark each note so it stands apart from the work, for example a line starting with
  "Insight:", and keep it to two or three sentences about this codebase, not general lessons.
- Prefer notes at the moments they matter (before a non-obvious change, after finding a
  surprising behaviour) to a lecture at the end.
""",
        ),
        _built_in(
            "Learning",
            "Learn by doing: leaves small, meaningful pieces of code for the user to write",
            "Hand the user small pieces of code to write (TODO(human)), and wait for them.",
            """
The user wants to learn by writing part of the code.

- Do the surrounding work yourself, and for one small, meaningful piece (a condition, a
  function body, a test case) leave a marked place in the code, `TODO(human)`, with a short
  description of what it must do and why it matters.
- Then stop and ask the user to write that piece; do not write it for them. When they are
  done, review what they wrote, explain what works and what could be better, and go on.
- Add short notes on the concepts involved where they help.
""",
            interactive_only=True,
        ),
    )
}
"""The built-in styles by lower-case name."""


def _valid_name(name: str) -> bool:
    return 0 < len(name) <= 64 and name == name.strip() and not _BAD_NAME.search(name)


def _truth(value: str | None) -> bool | None:
    if value is None:
        return None
    text = value.strip().lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise StyleError(f"keep-coding-instructions must be true or false, not {value!r}")


def parse_style(text: str, stem: str, source: str, path: str = "") -> OutputStyle:
    """A style file's text as an :class:`OutputStyle` (``stem``: its file name without
    ``.md``); raises :class:`StyleError`."""
    fields: dict[str, str] = {}
    body = text = text.removeprefix("\ufeff")
    if text.startswith("---"):
        from headwire.runtime.front_matter import AgentFileError, split_front_matter

        try:
            fields, _, body = split_front_matter(text, path or stem)
        except AgentFileError as exc:
            raise StyleError(str(exc)) from None
    body = _COMMENT.sub("", body).strip()
    if not body:
        raise StyleError("its body is empty (HTML comments are not sent)")
    name = fields.get("name", "").strip() or stem
    if not _valid_name(name):
        raise StyleError(f"invalid name {name!r} (1 to 64 characters, no control character)")
    if name.lower() == DEFAULT:
        raise StyleError("'default' is reserved: it means no style")
    description = (fields.get("description", "").strip() or body.splitlines()[0].strip())[:200]
    keep = _truth(fields.get("keep-coding-instructions"))
    if keep is None:
        built_in = BUILT_IN.get(name.lower())
        keep = built_in.keep_coding_instructions if built_in is not None else False
    return OutputStyle(
        name=name,
        description=description,
        body=body,
        keep_coding_instructions=keep,
        source=source,
    )


def read_style_file(path: Path, root: Path, *, links_within: Path | None) -> str:
    """The text of the style file ``path`` in ``root``: a regular file of one name, at most
    :data:`MAX_STYLE_BYTES`, without a NUL byte (read as UTF-8, U+FFFD for a stray byte).
    ``links_within``: a symbolic link is followed when its target lies inside that folder (the
    user's home), else any link is refused.  Raises :class:`OSError` or :class:`StyleError`."""
    if os.path.islink(path):
        if links_within is None:
            raise StyleError("it is a symbolic link (a project style may only be itself)")
        if not _inside(os.path.realpath(path), os.path.realpath(links_within)):
            raise StyleError("it is a symbolic link out of the home folder")
    elif not _inside(os.path.realpath(path), os.path.realpath(root)):
        raise StyleError("it lies outside its folder")
    with os.fdopen(open_regular(path, follow_symlinks=links_within is not None), "rb") as handle:
        if os.fstat(handle.fileno()).st_nlink > 1:
            raise StyleError("it is a hard link (a file other names share)")
        raw = handle.read(MAX_STYLE_BYTES + 1)
    if len(raw) > MAX_STYLE_BYTES:
        raise StyleError(f"larger than {MAX_STYLE_BYTES:,} bytes (a style is a prompt)")
    if b"\x00" in raw:
        raise StyleError("not text (it holds a NUL byte)")
    return raw.decode("utf-8", "replace")  # a stray byte reads as U+FFFD, as in Qwen Code


def style_roots(data_dir: Path, cwd: Path, home: Path, *, trusted: bool) -> list[tuple[Path, str]]:
    """The style folders, highest precedence first (the project's only when ``trusted``)."""
    from headwire.runtime.skills import config_roots

    return list(config_roots("output-styles", STYLE_DIRS, data_dir, cwd, home, trusted=trusted))


def _files(root: Path) -> list[Path]:
    try:
        with os.scandir(root) as entries:
            return sorted(
                Path(e.path)
                for e in entries
                if e.name.endswith(".md") and not e.is_dir(follow_symlinks=False)
            )
    except OSError:
        return []


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def load_styles(
    roots: list[tuple[Path, str]], home: Path, note: Callable[[str], None] | None = None
) -> dict[str, OutputStyle]:
    """Every style by lower-case name: the built-ins, then each root's files overriding them
    (the first root of a name wins).  A file that cannot be used is skipped with a note."""
    from headwire.runtime.skills import distinct_roots

    found: dict[str, OutputStyle] = {}
    for root, source, real in distinct_roots(roots):  # type: ignore[arg-type]
        if source == "project" and not _inside(real, os.path.realpath(root.parent.parent)):
            if note is not None and os.path.isdir(real):
                note(f"headwire: note: output styles {root} skipped: it leads out of the project")
            continue
        for path in _files(root):
            links = home if source == "user" else None
            try:
                text = read_style_file(path, root, links_within=links)
                style = parse_style(text, path.name[: -len(".md")], source, str(path))
            except (OSError, StyleError) as exc:
                if note is not None:
                    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                    note(f"headwire: note: output style {path} skipped: {why}")
                continue
            found.setdefault(style.name.lower(), style)
    return {**BUILT_IN, **found}


def resolve_style(
    name: str | None, styles: dict[str, OutputStyle], *, interactive: bool
) -> tuple[OutputStyle | None, str | None]:
    """The style ``name`` asks for, and a note when it cannot be had: ``(None, None)`` for no
    style (``default``, empty); ``(None, note)`` for an unknown name or ``Learning`` in a
    headless run."""
    wanted = (name or "").strip()
    if not wanted or wanted.lower() == DEFAULT:
        return None, None
    style = styles.get(wanted.lower())
    if style is None:
        known = ", ".join(["default", *sorted(s.name for s in styles.values())])
        shown = wanted if len(wanted) <= 64 else wanted[:64] + "…"
        return None, f"output style {shown!r} not found; using the default (known: {known})"
    if style.interactive_only and not interactive:
        return None, f"output style {style.name} waits for the user, so a headless run skips it"
    return style, None
