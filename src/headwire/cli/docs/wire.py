"""The wire reference (``docs/wire.md``), generated from the JSON Schema.

``python -m headwire.cli.docs.wire > docs/wire.md`` rewrites the committed file; a test
asserts the file equals :func:`render`, so the schema and its prose cannot drift apart.  Each
mode lists the messages headwire writes and reads; each message gets its description, where
the shape comes from and a table of its fields; shared types follow.
"""

from __future__ import annotations

import sys
from typing import Any

from headwire.protocol.schema import document

GENERATOR = "python -m headwire.cli.docs.wire > docs/wire.md"

_ORIGINS = {
    "qwen-code": "Qwen Code 0.24.4",
    "claude-code": "Claude Code",
    "acp": "ACP",
    "headwire": "headwire",
}
_DEFS = "#/$defs/"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _name(target: str) -> str:
    return target[len(_DEFS) :] if target.startswith(_DEFS) else target


def _type(schema: Any) -> str:
    """A short Markdown rendering of a schema's type."""
    if schema is True or schema == {}:
        return "any"
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema:
        name = _name(schema["$ref"])
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{_json(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{_json(v)}`" for v in schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " \\| ".join(_type(s) for s in schema[key])
    kind = schema.get("type")
    if kind == "array":
        return f"array of {_type(schema.get('items', True))}"
    if isinstance(kind, list):
        return " \\| ".join(kind)
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_type(schema['additionalProperties'])}"
    return str(kind) if kind else "any"


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _notes(schema: dict[str, Any]) -> str:
    notes = []
    if "x-maxJsonBytes" in schema:
        notes.append(f"at most {schema['x-maxJsonBytes']:,} JSON bytes")
    if "maxLength" in schema:
        notes.append(f"at most {schema['maxLength']:,} characters")
    if "minimum" in schema and schema.get("type") in ("integer", "number"):
        notes.append(f">= {schema['minimum']}")
    if schema.get("x-upstream-only"):
        notes.append("Qwen Code only")
    origin = schema.get("x-origin")
    if origin:
        notes.append(f"from {_ORIGINS.get(origin, origin)}")
    return "; ".join(notes)


def _describe(name: str, schema: dict[str, Any], defs: dict[str, Any]) -> list[str]:
    title = schema.get("title")
    out = [f"### {name}", ""]
    if title and title != name:
        out += [f"*{title}*", ""]
    if schema.get("description"):
        out += [_cell(schema["description"]), ""]
    marks = _notes(schema)
    if marks:
        out += [f"Notes: {marks}.", ""]
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        required = set(schema.get("required", []))
        out += ["| field | type | required | notes |", "| --- | --- | --- | --- |"]
        for key, sub in props.items():
            sub = sub if isinstance(sub, dict) else {}
            text = _notes(sub)
            if sub.get("description"):
                text = f"{text}. {sub['description']}" if text else sub["description"]
            req = "yes" if key in required else ""
            out.append(f"| `{key}` | {_type(sub)} | {req} | {_cell(text)} |")
        closed = schema.get("additionalProperties") is False
        out += ["", "No other fields." if closed else "Other fields are ignored.", ""]
    elif "oneOf" in schema or "anyOf" in schema:
        out += [f"One of: {_type(schema)}.", ""]
    else:
        out += [f"Type: {_type(schema)}.", ""]
    if "else" in schema:
        out += [
            "Bounded unless the call is an A2UI tool's: "
            + ", ".join(
                f"`{k}` at most {v['x-maxJsonBytes']:,} JSON bytes"
                for k, v in schema["else"]["properties"].items()
            )
            + ".",
            "",
        ]
    return out


def _members(target: str, defs: dict[str, Any]) -> list[str]:
    """The message definitions a root stands for (its ``oneOf`` flattened)."""
    name = _name(target)
    schema = defs[name]
    branches = schema.get("oneOf")
    if not branches or "properties" in schema:
        return [name]
    out: list[str] = []
    for branch in branches:
        if "$ref" in branch:
            out += _members(branch["$ref"], defs)
    return out


def render() -> str:
    """The whole reference, as Markdown."""
    schema = document()
    defs: dict[str, Any] = schema["$defs"]
    lines = [
        "# Wire reference",
        "",
        f"<!-- Generated from the JSON Schema by `{GENERATOR}`; do not edit by hand. -->",
        "",
        f"Schema version {schema['x-schema-version']} (`headwire schema` prints it; "
        "`headwire schema --mode headless|dual|acp` one mode). Compatible with "
        + ", ".join(f"{k} {v}" for k, v in schema["x-compatible-with"].items())
        + ".",
        "",
        _cell(schema["description"]),
        "",
    ]
    done: set[str] = set()
    for spec in schema["x-modes"].values():
        lines += [f"## {spec['title']}", ""]
        for direction, label in (("output", "headwire writes"), ("input", "headwire reads")):
            root = _name(spec[direction])
            about = _cell(defs[root].get("description", ""))
            lines += [f"**{label}** ([{root}](#{root.lower()})): {about}", ""]
            for name in [root, *_members(spec[direction], defs)]:
                if name not in done:
                    done.add(name)
                    lines += _describe(name, defs[name], defs)
        for extra in spec.get("also", []):
            name = _name(extra)
            if name not in done:
                done.add(name)
                lines += _describe(name, defs[name], defs)
    lines += ["## Shared types", ""]
    for name, sub in defs.items():
        if name not in done:
            lines += _describe(name, sub, defs)
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    """Print the reference on stdout."""
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
