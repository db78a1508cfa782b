"""``--json-schema SCHEMA|FILE``: the schema a run's final answer must match, read and checked.

The value is JSON text (it starts with ``{``), ``@PATH`` (Qwen Code's form) or a path; a file
must be a regular file of at most :data:`MAX_SCHEMA_BYTES`.  The schema must be a JSON object
that its dialect's meta-schema accepts (``$schema``, default draft 2020-12, checked with
``jsonschema``); the first problem is one line naming where it is.  References must stay
inside the document (no ``http:``/``https:`` ``$ref``: nothing is fetched).  Keywords the
dialect does not know (``propertees``) are reported as notes, not errors: JSON Schema ignores
them, and tools that generate schemas add their own.

Validation never backtracks: ``pattern``, ``patternProperties`` and the property-name matching
of ``additionalProperties`` run on RE2 (:mod:`headwire.runtime.tools.linear_regex`), so a model
answer cannot stall the run on a pattern such as ``(a+)+b``; a pattern RE2 cannot run with the
same meaning (look-around, backreferences) is refused at startup.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from headwire.errors import ConfigError

MAX_SCHEMA_BYTES = 4 * 1024 * 1024
"""A schema file larger than this is refused (Qwen Code's cap)."""
MAX_SCHEMA_DEPTH = 100
"""Objects and arrays nested deeper than this are refused (the checks recurse)."""

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_ONE = (
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
)
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)


class OutputSchemaError(ConfigError):
    """The ``--json-schema`` value cannot be used; ``str()`` is one line."""


def _where(path: list[Any]) -> str:
    return "/".join(str(p) for p in path) or "(root)"


def read_schema_text(value: str, cwd: Path) -> tuple[str, str]:
    """``(JSON text, source name)`` of a ``--json-schema`` value."""
    text = value.strip()
    if text.startswith(("{", "[")) or not text:
        return text, "--json-schema"
    raw_path = text[1:] if text.startswith("@") else text
    path = Path(os.path.expanduser(raw_path))
    path = path if path.is_absolute() else cwd / path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not hang the start
    except OSError as exc:
        raise OutputSchemaError(
            f"--json-schema: cannot read {path}: {exc.strerror or exc}"
        ) from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OutputSchemaError(f"--json-schema: cannot read {path}: not a regular file")
        raw = handle.read(MAX_SCHEMA_BYTES + 1)
    if len(raw) > MAX_SCHEMA_BYTES:
        raise OutputSchemaError(f"--json-schema: {path} is larger than {MAX_SCHEMA_BYTES} bytes")
    try:
        return raw.decode("utf-8-sig"), str(path)
    except UnicodeDecodeError as exc:
        raise OutputSchemaError(f"--json-schema: {path} is not UTF-8 (byte {exc.start})") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_schema(text: str, source: str) -> dict[str, Any]:
    """The schema object of ``text``; a :class:`OutputSchemaError` when it is not one."""
    try:
        schema = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        # the text of a file is not echoed back: it may be something else entirely
        raise OutputSchemaError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise OutputSchemaError(f"{source}: nested deeper than {MAX_SCHEMA_DEPTH} levels") from None
    except ValueError as exc:
        raise OutputSchemaError(f"{source}: not valid JSON ({exc})") from None
    if not isinstance(schema, dict):
        raise OutputSchemaError(f"{source}: a JSON Schema must be a JSON object")
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        raise OutputSchemaError(f"{source}: nested deeper than {MAX_SCHEMA_DEPTH} levels")
    return schema


def _depth(value: Any) -> int:
    """How deep objects and arrays nest in ``value`` (iteratively: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_SCHEMA_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _subschemas(schema: Any, path: list[Any]) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """Every schema object in ``schema`` (itself first), with its path."""
    if not isinstance(schema, dict):
        return
    yield schema, path
    for key in _SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                yield from _subschemas(sub, [*path, key, name])
    for key in _SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            for index, sub in enumerate(value):
                yield from _subschemas(sub, [*path, key, index])
    for key in _SCHEMA_ONE:
        yield from _subschemas(schema.get(key), [*path, key])
    items = schema.get("items")
    if isinstance(items, list):  # draft 7 tuple form
        for index, sub in enumerate(items):
            yield from _subschemas(sub, [*path, "items", index])
    else:
        yield from _subschemas(items, [*path, "items"])
    dependencies = schema.get("dependencies")
    if isinstance(dependencies, dict):
        for name, sub in dependencies.items():
            yield from _subschemas(sub, [*path, "dependencies", name])


def _patterns(schema: dict[str, Any]) -> Iterator[tuple[str, list[Any]]]:
    for sub, path in _subschemas(schema, []):
        if isinstance(sub.get("pattern"), str):
            yield sub["pattern"], [*path, "pattern"]
        props = sub.get("patternProperties")
        if isinstance(props, dict):
            for key in props:
                yield key, [*path, "patternProperties"]


_PROGRAM_SIZES: dict[str, int] = {}
"""The RE2 program size of each pattern compiled so far (by :func:`check_schema`, at start)."""


def program_size(pattern: str) -> int:
    """The RE2 program size of ``pattern`` (0 for one RE2 refuses): what :func:`check_schema`
    measured when it compiled it, so a check on the event loop does not compile it again."""
    size = _PROGRAM_SIZES.get(pattern)
    if size is None:
        from headwire.runtime.tools.linear_regex import NotLinear, compile_linear

        try:
            size = compile_linear(pattern).program_size
        except NotLinear:
            size = 0
        _PROGRAM_SIZES[pattern] = size
    return size


def check_schema(schema: dict[str, Any], note: Callable[[str], None] | None = None) -> Any:
    """A validator for ``schema`` (raises :class:`OutputSchemaError` on an invalid one);
    unknown keywords go to ``note``."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError

    base = validators.validator_for(schema, default=Draft202012Validator)
    try:
        base.check_schema(schema)
    except SchemaError as exc:
        raise OutputSchemaError(
            f"--json-schema: not a valid JSON Schema: at {_where(list(exc.absolute_path))}: "
            f"{_one_line(exc.message)}"
        ) from None
    from headwire.runtime.tools.linear_regex import NotLinear, compile_linear

    compiled: dict[str, Any] = {}
    for pattern, path in _patterns(schema):
        try:
            compiled[pattern] = compile_linear(pattern)
            _PROGRAM_SIZES[pattern] = compiled[pattern].program_size
        except NotLinear as exc:
            raise OutputSchemaError(
                f"--json-schema: at {_where(path)}: pattern {pattern!r} cannot be matched in "
                f"linear time ({exc}); rewrite it without look-around or backreferences"
            ) from None
    for sub, path in _subschemas(schema, []):
        for key, value in sub.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(("http:", "https:")):
                raise OutputSchemaError(
                    f"--json-schema: at {_where(path)}: $ref {value!r} points outside the "
                    "schema; headwire fetches nothing, put the definition under $defs"
                )
        if note is not None:
            unknown = [
                k
                for k in sub
                if k not in base.VALIDATORS and k not in _ANNOTATIONS and not k.startswith("x-")
            ]
            known = sorted(set(base.VALIDATORS) | _ANNOTATIONS)
            for key in unknown:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                note(
                    f"headwire: note: --json-schema: unknown keyword {key!r} at {_where(path)}"
                    f"{hint}; it is ignored"
                )
    cls = validators.extend(  # type: ignore[no-untyped-call]
        base,
        {
            "pattern": _pattern(compiled),
            "patternProperties": _pattern_properties(compiled),
            "additionalProperties": _additional_properties(compiled),
        },
    )
    return cls(schema)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 300 else flat[:297] + "..."


def _search(compiled: dict[str, Any], pattern: str, text: str) -> bool:
    regex = compiled.get(pattern)
    if regex is None:  # a pattern the startup walk did not reach
        from headwire.runtime.tools.linear_regex import compile_linear

        regex = compiled[pattern] = compile_linear(pattern)  # NotLinear fails the check
    return regex.search(text.encode("utf-8", "surrogatepass")) is not None


def _pattern(compiled: dict[str, Any]) -> Any:
    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        from jsonschema.exceptions import ValidationError

        if validator.is_type(instance, "string") and not _search(compiled, patrn, instance):
            yield ValidationError(f"{_brief(instance)} does not match {patrn!r}")

    return pattern


def _pattern_properties(compiled: dict[str, Any]) -> Any:
    def pattern_properties(validator: Any, props: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in props.items():
            for key, value in instance.items():
                if _search(compiled, patrn, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    return pattern_properties


def _additional_properties(compiled: dict[str, Any]) -> Any:
    def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
        from jsonschema.exceptions import ValidationError

        if not validator.is_type(instance, "object"):
            return
        properties = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        extras = [
            key
            for key in instance
            if key not in properties and not any(_search(compiled, p, key) for p in patterns)
        ]
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif not extra and extras:
            names = ", ".join(repr(k) for k in sorted(extras))
            yield ValidationError(f"additional properties are not allowed ({names})")

    return additional_properties


def _brief(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:57]) + "..."


def load_output_schema(
    value: str, cwd: Path, note: Callable[[str], None] | None = None
) -> tuple[dict[str, Any], Any]:
    """``(schema, validator)`` of a ``--json-schema`` value; :class:`OutputSchemaError`."""
    text, source = read_schema_text(value, cwd)
    schema = parse_schema(text, source)
    return schema, check_schema(schema, note)


__all__ = [
    "MAX_SCHEMA_BYTES",
    "OutputSchemaError",
    "check_schema",
    "load_output_schema",
    "parse_schema",
    "read_schema_text",
]
