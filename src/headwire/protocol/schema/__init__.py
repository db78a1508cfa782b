"""The wire as a published contract: JSON Schema (2020-12) of every message headwire writes and
reads, kept as package data (``wire.json``) and versioned with the protocol.

``wire.json`` holds one ``$defs`` entry per message shape and three modes (``x-modes``): the
headless wires (``-o json``/``stream-json`` and persistent sessions), the Dual Output sidecar
(and its reverse channel) and ACP, each with an ``output`` root (what headwire writes) and an
``input`` root (what it reads).  :func:`mode_document` cuts one mode out as a standalone
schema (``headwire schema --mode MODE`` prints it); :func:`validator` checks messages.

Marks in the schema: ``x-origin`` says where a shape comes from (``qwen-code``,
``claude-code``, ``acp``, ``headwire``); ``x-upstream-only: true`` marks what only Qwen Code
sends, so its captures validate (the *headwire* variant, :func:`headwire_variant`, drops those
parts); ``x-maxJsonBytes: N`` bounds the UTF-8 bytes of ``JSON.stringify(value)`` (the
65,536-byte transport rule), which :func:`validator` enforces.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from collections.abc import Iterator
from typing import Any, Literal

from headwire.wire import encode

__all__ = [
    "DIRECTIONS",
    "MODES",
    "SCHEMA_VERSION",
    "WireValidator",
    "document",
    "headwire_variant",
    "mode_document",
    "validator",
]

SCHEMA_VERSION = "1.3.0"
"""``x-schema-version`` of ``wire.json``: the major part changes when a message a consumer
reads changes incompatibly, the minor part when optional fields or messages are added."""

Mode = Literal["headless", "dual", "acp"]
Direction = Literal["output", "input"]
MODES: tuple[Mode, ...] = ("headless", "dual", "acp")
DIRECTIONS: tuple[Direction, ...] = ("output", "input")
MAX_JSON_BYTES = "x-maxJsonBytes"
UPSTREAM_ONLY = "x-upstream-only"
_DEFS = "#/$defs/"
_MESSAGE_CHARS = 300


@functools.cache
def _load() -> str:
    return (importlib.resources.files(__name__) / "wire.json").read_text(encoding="utf-8")


def document() -> dict[str, Any]:
    """The whole schema (every mode), a fresh copy."""
    loaded: dict[str, Any] = json.loads(_load())
    return loaded


def _refs(node: Any) -> Iterator[str]:
    """The ``$defs`` names ``node`` refers to."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_DEFS):
                yield value[len(_DEFS) :]
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def mode_document(mode: Mode) -> dict[str, Any]:
    """A standalone schema of one mode: its root validates an output message (a line headwire
    writes); ``#/$defs/<input root>`` validates an input message.  Only the ``$defs`` the mode
    uses are kept."""
    full = document()
    spec = full["x-modes"][mode]
    roots = [spec["output"], spec["input"], *spec.get("also", [])]
    defs = full["$defs"]
    keep: dict[str, Any] = {}
    todo = [root[len(_DEFS) :] for root in roots]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = defs[name]
        todo.extend(_refs(defs[name]))
    return {
        "$schema": full["$schema"],
        "$id": f"{full['$id']}:{mode}",
        "title": f"{full['title']}: {spec['title']}",
        "description": full["description"],
        "x-schema-version": full["x-schema-version"],
        "x-compatible-with": full["x-compatible-with"],
        "x-mode": mode,
        "x-input": spec["input"],
        "$ref": spec["output"],
        "$defs": {name: keep[name] for name in defs if name in keep},
    }


def _upstream_only(node: Any, defs: dict[str, Any]) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get(UPSTREAM_ONLY) is True:
        return True
    target = node.get("$ref")
    if isinstance(target, str) and target.startswith(_DEFS):
        return _upstream_only(defs.get(target[len(_DEFS) :]), defs)
    return False


def headwire_variant(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``x-upstream-only`` parts: what headwire itself may send."""
    defs = schema.get("$defs", {})

    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                out[key] = {k: strip(v) for k, v in value.items() if not _upstream_only(v, defs)}
            elif key in ("oneOf", "anyOf") and isinstance(value, list):
                out[key] = [strip(v) for v in value if not _upstream_only(v, defs)]
            else:
                out[key] = strip(value)
        return out

    stripped: dict[str, Any] = strip(schema)
    return stripped


class WireValidator:
    """Checks messages of one mode and direction against the schema (``jsonschema``, imported
    when first needed), ``x-maxJsonBytes`` included."""

    def __init__(self, mode: Mode, direction: Direction = "output", *, upstream: bool = False):
        import jsonschema

        schema = mode_document(mode)
        if not upstream:
            schema = headwire_variant(schema)
        if direction == "input":
            schema["$ref"] = schema["x-input"]
        cls = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            jsonschema.Draft202012Validator, {MAX_JSON_BYTES: _max_json_bytes}
        )
        self._validator = cls(schema)
        self.mode, self.direction, self.upstream = mode, direction, upstream
        # the fast path: the root's message shapes, each with its discriminators' values and
        # a validator of its own, so a message is checked against the shapes it names only
        defs = schema["$defs"]
        self._shapes = [
            (_discriminators(defs[name]), cls({**schema, "$ref": _DEFS + name}))
            for name in _leaves(schema["$ref"], defs)
        ]

    def errors(self, message: Any) -> list[str]:
        """Why ``message`` does not validate (empty when it does): the most relevant error,
        as ``<JSON path>: <reason>``, cut to a few hundred characters."""
        if self._fast_valid(message):
            return []
        first = next(iter(self._validator.iter_errors(message)), None)
        if first is None:
            return []
        text = _explain(first)
        return [text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 3] + "..."]

    def is_valid(self, message: Any) -> bool:
        """Whether ``message`` validates."""
        return self._fast_valid(message) or bool(self._validator.is_valid(message))

    def _fast_valid(self, message: Any) -> bool:
        """Valid against exactly one of the shapes whose discriminators it carries (what the
        root's ``oneOf`` asks, without trying every other shape); ``False``: not known."""
        if not isinstance(message, dict):
            return False
        matches = 0
        for keys, check in self._shapes:
            named = all(_allows(rule, message.get(key, _MISSING)) for key, rule in keys.items())
            if named and check.is_valid(message):
                matches += 1
        return matches == 1


_MISSING = object()


def _leaves(target: str, defs: dict[str, Any]) -> list[str]:
    """The message shapes (``$defs`` names) a root stands for: its ``oneOf``, flattened."""
    name = target[len(_DEFS) :]
    branches = defs[name].get("oneOf")
    if not branches:
        return [name]
    out: list[str] = []
    for branch in branches:
        ref = branch.get("$ref") if isinstance(branch, dict) else None
        if not isinstance(ref, str):
            return [name]  # an inline branch: check the whole root
        out += _leaves(ref, defs)
    return out


def _discriminators(shape: dict[str, Any]) -> dict[str, Any]:
    """The shape's discriminator properties with their ``const``/``enum``/``not`` rule."""
    props = shape.get("properties", {})
    out = {}
    for key in _DISCRIMINATORS:
        rule = props.get(key)
        if isinstance(rule, dict) and ({"const", "enum", "not"} & set(rule)):
            out[key] = rule
    return out


def _allows(rule: dict[str, Any], value: Any) -> bool:
    """Whether a discriminator ``value`` can satisfy ``rule`` (a missing value cannot)."""
    if value is _MISSING:
        return False
    if "const" in rule:
        return bool(value == rule["const"] and type(value) is type(rule["const"]))
    if "enum" in rule:
        return value in rule["enum"]
    return True  # "not": left to the shape's own validator


_DISCRIMINATORS = frozenset(
    ("type", "subtype", "method", "sessionUpdate", "jsonrpc", "behavior", "outcome")
)


def _disqualifies(error: Any) -> bool:
    """Whether ``error`` (inside one branch of a ``oneOf``) says the branch is another shape:
    a discriminator (``type``, ``method`` ...) of the object itself has another value or is
    not expected there, or (for a nested ``oneOf``) no branch of it fits."""
    path = list(error.relative_path)
    if path and len(path) == 1 and error.validator in ("const", "enum", "not"):
        return path[0] in _DISCRIMINATORS
    if not path and error.validator == "additionalProperties":
        return any(f"'{key}'" in error.message for key in _DISCRIMINATORS)
    if not path and error.validator in ("oneOf", "anyOf") and error.context:
        return not _fitting(error)
    return False


def _fitting(error: Any) -> list[list[Any]]:
    """The errors of each branch of a ``oneOf``/``anyOf`` error that could be the shape meant."""
    branches: dict[Any, list[Any]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    return [errs for errs in branches.values() if not any(map(_disqualifies, errs))]


def _explain(error: Any) -> str:
    """``<JSON path>: <reason>`` for the shape the message meant to be.

    A ``oneOf`` failure is explained by the branch whose discriminators match (the one with
    the fewest errors), recursively; with no such branch, by naming the discriminators."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        fitting = _fitting(error)
        if not fitting:
            instance = error.instance
            keys = (
                {k: instance[k] for k in _DISCRIMINATORS if k in instance}
                if isinstance(instance, dict)
                else type(instance).__name__
            )
            return f"{error.json_path}: no message shape matches {keys}"
        branch = min(fitting, key=lambda errs: len(errs))
        error = min(branch, key=lambda e: (-len(e.path), e.message))
    message = error.message
    if len(message) > _MESSAGE_CHARS and isinstance(error.instance, str | list | dict):
        # the message quotes a long value: name its kind and size instead
        kind, size = type(error.instance).__name__, len(error.instance)
        rule = f"{error.validator} {error.validator_value!r}"
        message = f"{rule} failed for a {kind} of length {size:,}"
    return f"{error.json_path}: {message}"


def _max_json_bytes(validator: Any, limit: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``x-maxJsonBytes``: the UTF-8 bytes of ``JSON.stringify(instance)`` are at most ``limit``."""
    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str | list | dict):
        size = len(encode(instance))
        if size > limit:
            yield ValidationError(f"{size:,} JSON bytes, more than {limit:,}")


@functools.cache
def validator(mode: Mode, direction: Direction = "output", upstream: bool = False) -> WireValidator:
    """A cached :class:`WireValidator`."""
    return WireValidator(mode, direction, upstream=upstream)
