"""Markdown files with a ``---`` front-matter block, as agent files and skills are written.

Pure text in, fields out: the agent definitions (:mod:`headwire.runtime.agents.definitions`)
and the skills (:mod:`headwire.runtime.skills`) share this one reader.
"""

from __future__ import annotations

from headwire.errors import ConfigError


class AgentFileError(ConfigError):
    """An agent file is malformed; the message names the file."""


def _parse_list(value: str, following: list[str]) -> tuple[str, ...]:
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    items = [v.strip().strip("'\"") for v in value.split(",") if v.strip()]
    items += [line.strip()[1:].strip().strip("'\"") for line in following]
    return tuple(i for i in items if i)


def split_front_matter(text: str, source: str) -> tuple[dict[str, str], dict[str, list[str]], str]:
    """``(fields, list items by key, body)`` of a Markdown file with a ``---`` front-matter
    block (agent files, skills); raises :class:`AgentFileError` naming ``source``."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise AgentFileError(f"{source}: missing '---' front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise AgentFileError(f"{source}: front matter is not closed with '---'") from None
    fields: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    key = ""
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.lstrip().startswith("- ") and key:
            lists.setdefault(key, []).append(line.strip())
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise AgentFileError(f"{source}: cannot read front matter line {line!r}")
        key = key.strip()
        fields[key] = value.split(" #")[0].strip().strip("'\"")
    return fields, lists, "\n".join(lines[end + 1 :]).strip()


def parse_list(value: str, following: list[str]) -> tuple[str, ...]:
    """A front-matter list: ``[a, b]``, ``a, b`` or ``- a`` lines."""
    return _parse_list(value, following)


__all__ = ["AgentFileError", "parse_list", "split_front_matter"]
