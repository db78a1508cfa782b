"""The system prompt a model call carries: base, context files, appended text.

Qwen Code 0.24.4 assembles it as ``base`` then, for each non-blank layer, a separator
``"\\n\\n---\\n\\n"`` and the layer trimmed: first the context files (``QWEN.md``, ``AGENTS.md``,
see :mod:`headwire.runtime.config.context_files`), then ``--append-system-prompt``.  ``base`` is
``--system-prompt`` (or ``--system-prompt-file``) when given, else headwire's default prompt.
Pure: no I/O.
"""

from __future__ import annotations

SEPARATOR = "\n\n---\n\n"


def prompt_suffix(text: str | None) -> str:
    """``SEPARATOR`` and ``text`` trimmed, or ``""`` when ``text`` is blank."""
    trimmed = (text or "").strip()
    return f"{SEPARATOR}{trimmed}" if trimmed else ""


def build_system_prompt(
    base: str | None, context: str | None, append: str | None, *, default: str
) -> str:
    """The final system prompt: ``base`` (``default`` when ``None``), the context files'
    text, then ``append``; a blank base leaves no leading separator."""
    head = default if base is None else base
    out = head + prompt_suffix(context) + prompt_suffix(append)
    return out if head else out.removeprefix(SEPARATOR)


def output_language_rule(language: str | None) -> str:
    """What the context says for ``general.outputLanguage``: nothing when it is unset or
    ``auto`` (a model answers in the user's language by itself), else the rule Qwen Code gives
    its model in a context file: answer in that language unless the user asks for another,
    and keep tool output as it is."""
    name = (language or "").strip()
    if not name or name.lower() == "auto":
        return ""
    return (
        f"# Answer language: {name}\n\n"
        f"Write every answer in {name}, whatever language the user writes in, unless the "
        "user explicitly asks for another language; then use that one from there on. Quote "
        "tool and command output as it is, and explain it in "
        f"{name} where needed."
    )
