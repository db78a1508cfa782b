"""The settings reference (``docs/settings.md``), generated from the settings JSON Schema.

``python -m headwire.cli.settings_docs > docs/settings.md`` rewrites the committed file; a test
asserts the file equals :func:`render`.  The schema (``headwire/runtime/data/settings.schema.json``)
is also what :mod:`headwire.runtime.settings` validates with, so what the reference lists is
exactly what headwire accepts.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from headwire.runtime.settings import settings_schema

GENERATOR = "python -m headwire.cli.settings_docs > docs/settings.md"

_INTRO = """\
headwire reads up to three settings layers and merges them, each over the one before:

1. the user settings: `~/.headwire/settings.json` (`$HEADWIRE_HOME/settings.json` when set);
2. the project settings: `.headwire/settings.json` in the working directory;
3. `--settings FILE|JSON`: a file, or JSON text starting with `{`.

Flags win over every layer (`--model` over `model.name`, and so on). Lists merge as the key
says: `tools.exclude` adds up across layers and flags, `tools.core` and `tools.allowed` are
replaced by the highest layer (or flag) that sets them; `mcpServers`, `modelPricing` and `env`
merge by name.

Every file is checked when headwire starts: an unknown key, a value of the wrong type or
invalid JSON stops it with exit code 2 and one line on stderr naming the file, the key and
what was expected, for example

```text
headwire: /p/.headwire/settings.json: model.maxSessionTurns: expected an integer, got the string "5"
```

Keys marked *trust* can run code or reach the network; a project's value is taken only in a
trusted folder (a note on stderr says when one is ignored). Keys marked *user only* are never
taken from a project's file.

Example:

```json
{
  "model": {"name": "qwen3-coder-plus", "maxSessionTurns": 40},
  "tools": {"exclude": ["run_shell_command"], "todoWrite": {"enabled": true}},
  "context": {"fileName": ["AGENTS.md", "QWEN.md"]},
  "modelPricing": {"my-model": {"inputPerMillionTokens": 1.0, "outputPerMillionTokens": 5.0}}
}
```
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _type(schema: Mapping[str, Any]) -> str:
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items') or {})}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        return f"object of {_type(schema['additionalProperties'])}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    return str(kind)


def _rows(schema: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, ...]]:
    for key, sub in (schema.get("properties") or {}).items():
        if key == "$schema":
            continue
        path = f"{prefix}{key}"
        children = sub.get("properties")
        marks = [
            word
            for flag, word in (
                ("x-headwire-needs-trust", "trust"),
                ("x-headwire-user-only", "user only"),
            )
            if sub.get(flag)
        ]
        default = f"`{json.dumps(sub['default'])}`" if "default" in sub else ""
        if children:
            yield (f"`{path}`", "object", "", _cell(sub.get("description", "")), ", ".join(marks))
            yield from _rows(sub, path + ".")
            continue
        yield (
            f"`{path}`",
            _type(sub),
            default,
            _cell(sub.get("description", "")),
            ", ".join(marks),
        )


def _item_keys(schema: Mapping[str, Any], path: str) -> Iterator[tuple[str, ...]]:
    """Rows for the keys of an object-of-objects value (``modelPricing``'s entries)."""
    entry = schema.get("additionalProperties")
    if not isinstance(entry, Mapping):
        return
    for key, sub in (entry.get("properties") or {}).items():
        yield (f"`{path}.<name>.{key}`", _type(sub), "", _cell(sub.get("description", "")), "")


def render() -> str:
    """The whole reference, as Markdown."""
    schema = settings_schema()
    lines = [
        "# Settings reference",
        "",
        f"<!-- Generated from the settings schema by `{GENERATOR}`; do not edit by hand. -->",
        "",
        _cell(schema.get("description", "")),
        "",
        _INTRO,
        "## Keys",
        "",
        "| key | type | default | description | notes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, sub in (schema.get("properties") or {}).items():
        for row in _rows({"properties": {key: sub}}):
            lines.append("| " + " | ".join(row) + " |")
        for row in _item_keys(sub, key):
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    """Print the reference on stdout."""
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
