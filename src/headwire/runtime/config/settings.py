"""Settings files: one loader, one schema, one typed and frozen result.

Three layers, lowest precedence first (flags win over all of them, see
:func:`headwire.cli.flags.settings.apply_settings`):

1. ``user``: ``<data dir>/settings.json`` (``$HEADWIRE_HOME`` or ``~/.headwire``);
2. ``project``: ``<cwd>/.headwire/settings.json`` (skipped when it is the user file);
3. ``cli``: the ``--settings`` value, a JSON text or a file path.

Every layer is validated against ``headwire/runtime/data/settings.schema.json`` (JSON Schema
2020-12, checked with ``jsonschema``), the same data ``docs/settings.md`` is generated from, so
the documentation and the checks cannot drift.  The first problem stops the load with a
:class:`SettingsError` whose ``str()`` is one line: the file, the key and what was expected
(``/p/.headwire/settings.json: tools.exclude: expected an array of strings, got a string``).

Which keys the project layer may set is decided by the one trust table,
:data:`headwire.runtime.trust.PROJECT_TABLE` (every key of the schema has a row, see
:func:`headwire.runtime.trust.project_may`): keys an untrusted folder may not set are taken
only when ``trusted`` is true, ``user``-only keys never.  What was left out is listed in
:attr:`SettingsLayer.dropped`, so the caller can say so.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from headwire.errors import ConfigError
from headwire.io.lines import NotRegularFile, open_regular
from headwire.records import dataclass, field
from headwire.runtime.config.pricing import ModelPrice
from headwire.runtime.data import read_data
from headwire.runtime.models.catalog import Catalog, CatalogError, read_catalog
from headwire.runtime.models.generation import GenerationConfig, GenerationConfigError
from headwire.runtime.trust import (
    NARROWING_VALUES,
    SETTINGS_FILE_ENTRY,
    project_may,
    project_settings,
    resolve_inside,
)

Scope = Literal["user", "project", "cli"]
SETTINGS_FILE = "settings.json"
PROJECT_DIR = ".headwire"
DEFAULT_CONTEXT_FILE_NAMES = ("QWEN.md", "AGENTS.md")
MAX_MODEL_FALLBACKS = 3
"""Qwen Code's limit on ``modelFallbacks`` / ``--fallback-model``."""
_MAX_SETTINGS_BYTES = 4 * 1024 * 1024
"""A settings file larger than this is refused rather than read into memory."""

_LEGACY_KEYS = {
    "maxSessionTurns": "model.maxSessionTurns",
    "coreTools": "tools.core",
    "excludeTools": "tools.exclude",
    "allowedTools": "tools.allowed",
    "approvalMode": "tools.approvalMode",
    "contextFileName": "context.fileName",
}
"""Qwen Code's v1 top-level keys and where v2 (and headwire) keeps them."""


class SettingsError(ConfigError):
    """A settings file or ``--settings`` value cannot be used; ``str()`` is one line."""


@cache
def settings_schema() -> Mapping[str, Any]:
    """The settings JSON Schema (package data), parsed once."""
    text = read_data("settings.schema.json")
    data: dict[str, Any] = json.loads(text)
    return data


def trust_keys() -> tuple[str, ...]:
    """Dotted keys a project may set only in a trusted folder (from the trust table;
    ``narrowing`` keys included: only some of their values are taken without trust)."""
    return project_settings("trusted") + project_settings("narrowing")


def user_only_keys() -> tuple[str, ...]:
    """Dotted keys never taken from project settings."""
    return project_settings("user")


def schema_keys() -> tuple[str, ...]:
    """Every leaf key of the schema, dotted (the keys the trust table must decide)."""

    def leaves(schema: Mapping[str, Any], prefix: str) -> Iterator[str]:
        for key, sub in (schema.get("properties") or {}).items():
            if sub.get("properties"):
                yield from leaves(sub, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}"

    return tuple(leaves(settings_schema(), ""))


# -- reading and validating -----------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_STRING_OR_COMMENT = re.compile(
    # a string (its // and /* are text); an unclosed one runs to the end, as in
    # strip-json-comments, so no match ever fails and is retried from a later quote (that
    # retry made a file of escaped quotes quadratic: 64 KB took 13 s)
    r'"[^"\\]*(?:\\[\s\S]?[^"\\]*)*(?:"|\Z)'
    r"|//[^\r\n]*"  # a line comment
    r"|/\*[^*]*(?:\*+(?!/)[^*]*)*(?:\*+/|\Z)",  # a block comment, or an unclosed one
    re.S,
)
_LINE = re.compile(r"[^\r\n]+")


def _spaces(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def _blank_comment(match: re.Match[str]) -> str:
    found = match.group()
    return found if found[0] == '"' else _LINE.sub(_spaces, found)


def strip_comments(text: str) -> str:
    """``text`` with its ``//`` and ``/* */`` comments (outside strings) blanked to spaces,
    line breaks kept (an error's line and column stay those of the file): the comments Qwen
    Code allows in a settings file.  Trailing commas stay errors there and here."""
    if "//" not in text and "/*" not in text:
        return text
    return _STRING_OR_COMMENT.sub(_blank_comment, text)


def parse_settings_text(text: str, source: str) -> dict[str, Any]:
    """A settings JSON text (with comments, see :func:`strip_comments`) as an object,
    validated; raises :class:`SettingsError`."""
    text = strip_comments(text)
    if not text.strip():
        return {}
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{source}: not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:
        raise SettingsError(f"{source}: not valid JSON: {exc}") from None
    except RecursionError:
        raise SettingsError(f"{source}: not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise SettingsError(
            f"{source}: expected a JSON object at the top level, got {_brief(data)}"
        )
    validate_settings(data, source)
    return data


def read_settings_file(
    path: Path, source: str | None = None, *, inside: Path | None = None
) -> dict[str, Any] | None:
    """A settings file's validated object, ``None`` when the file does not exist.

    ``inside``: the folder the file must resolve into (a project's file may not be a link
    that leaves the project, :func:`headwire.runtime.trust.resolve_inside`)."""
    where = source or str(path)
    try:
        target = str(path) if inside is None else resolve_inside(path, inside)
        fd = open_regular(target)  # a FIFO planted as a settings file must not hang the start
    except (FileNotFoundError, NotADirectoryError):  # no such file, or a file where a dir is
        return None
    except NotRegularFile:
        raise SettingsError(f"{where}: cannot read: not a regular file") from None
    except OSError as exc:
        raise SettingsError(f"{where}: cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        try:
            raw = handle.read(_MAX_SETTINGS_BYTES + 1)
        except OSError as exc:
            raise SettingsError(f"{where}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > _MAX_SETTINGS_BYTES:
        raise SettingsError(f"{where}: larger than {_MAX_SETTINGS_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{where}: not UTF-8 (byte {exc.start})") from None
    return parse_settings_text(text, where)


def settings_arg(value: str, cwd: Path) -> tuple[dict[str, Any], str]:
    """A ``--settings`` value (JSON text, or a file path relative to ``cwd``) as
    ``(validated object, source name)``."""
    text = value.strip()
    if text.startswith("{"):
        return parse_settings_text(text, "--settings"), "--settings"
    path = Path(os.path.expanduser(text))
    path = path if path.is_absolute() else cwd / path
    data = read_settings_file(path)
    if data is None:
        raise SettingsError(f"--settings: cannot read {path}: no such file")
    return data, str(path)


def validate_settings(data: Mapping[str, Any], source: str) -> None:
    """Check ``data`` against the schema; the first problem as a one-line SettingsError."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(settings_schema())
    errors = sorted(
        validator.iter_errors(data), key=lambda e: (len(e.absolute_path), _path(e.absolute_path))
    )
    if not errors:
        return
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise SettingsError(f"{source}: {_describe(errors[0])}{more}")


# -- one-line messages ----------------------------------------------------------------------

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$@-]{1,80}\Z")


def _key(part: Any) -> str:
    if isinstance(part, int):
        return f"[{part}]"
    text = str(part)
    if _PLAIN_KEY.match(text):
        return text
    return json.dumps(text[:80], ensure_ascii=True) + ("…" if len(text) > 80 else "")


def _path(parts: Any) -> str:
    out = ""
    for part in parts:
        piece = _key(part)
        out += piece if piece.startswith("[") or not out else "." + piece
    return out or "(top level)"


def _brief(value: Any) -> str:
    """A short, one-line description of a JSON value (never its whole text)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)[:40]
    if isinstance(value, str):
        shown = json.dumps(value[:40], ensure_ascii=True)
        return f"the string {shown}{'…' if len(value) > 40 else ''}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    return "an object"


def _type_words(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {}
        inner = items.get("type")
        return f"an array of {inner}s" if isinstance(inner, str) else "an array"
    if kind == "object":
        return "an object"
    if kind == "integer":
        return "an integer"
    if kind in ("string", "number", "boolean"):
        return f"a {kind}"
    if "anyOf" in schema:
        return " or ".join(_type_words(s) for s in schema["anyOf"])
    return "a valid value"


def _known_keys(schema: Mapping[str, Any]) -> list[str]:
    return sorted(k for k in (schema.get("properties") or {}) if k != "$schema")


def _describe(error: Any) -> str:
    """``KEY: expected ...`` for one jsonschema error."""
    import difflib

    where = list(error.absolute_path)
    kind = error.validator
    schema = error.schema
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = set(schema.get("properties") or {})
        extra = sorted(str(k) for k in error.instance if k not in known)
        name = extra[0] if extra else "?"
        key = _path([*where, name])
        hint = ""
        if not where and name in _LEGACY_KEYS:
            hint = f"; Qwen Code's v2 settings (and headwire) keep it as {_LEGACY_KEYS[name]}"
        else:
            close = difflib.get_close_matches(name, _known_keys(schema), n=1)
            if close:
                hint = f"; did you mean {close[0]}?"
        choices = ", ".join(_known_keys(schema))
        return f"{key}: unknown key (expected one of: {choices}){hint}"
    if kind == "enum" and "propertyNames" in error.absolute_schema_path:
        names = [str(c) for c in error.validator_value]
        close = difflib.get_close_matches(str(error.instance), names, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        key = _path([*where, str(error.instance)])
        return f"{key}: unknown key (expected one of: {', '.join(names)}){hint}"
    if kind == "anyOf":
        patterns = [e for e in error.context or () if e.validator == "pattern"]
        if patterns:
            return _describe(patterns[0])
    key = _path(where)
    got = _brief(error.instance)
    if kind == "pattern":
        expected = schema.get("x-expected", "a file name (no folder separator, not . or ..)")
        return f"{key}: expected {expected}, got {got}"
    if kind == "maxLength":
        return f"{key}: expected at most {error.validator_value} characters, got {got}"
    if kind == "type":
        hint = ""
        if where == ["model"] and isinstance(error.instance, str):
            hint = '; write {"model": {"name": ...}}'
        return f"{key}: expected {_type_words(schema)}, got {got}{hint}"
    if kind == "enum":
        choices = ", ".join(str(c) for c in error.validator_value)
        return f"{key}: expected one of {choices}, got {got}"
    if kind in ("minimum", "exclusiveMinimum"):
        return f"{key}: expected a number >= {error.validator_value}, got {got}"
    if kind in ("maximum", "exclusiveMaximum"):
        return f"{key}: expected a number <= {error.validator_value}, got {got}"
    if kind == "minLength":
        return f"{key}: expected a non-empty string"
    if kind == "minItems":
        return f"{key}: expected a non-empty array"
    if kind == "minProperties":
        return f"{key}: expected an object with at least one key"
    if kind == "anyOf":
        return f"{key}: expected {_type_words(schema)}, got {got}"
    return f"{key}: {error.message.splitlines()[0][:200]}"


# -- layers and the merged view -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SettingsLayer:
    """One settings source as read: its scope, where it came from, its validated data (keys
    not taken already removed) and the dotted keys that were dropped."""

    scope: Scope
    source: str
    data: Mapping[str, Any]
    dropped: tuple[str, ...] = ()

    def get(self, dotted: str) -> Any:
        """The value at a dotted key, or ``None``."""
        node: Any = self.data
        for part in dotted.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _drop(data: dict[str, Any], dotted: str) -> bool:
    parts = dotted.split(".")
    node: Any = data
    for part in parts[:-1]:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    if isinstance(node, dict) and parts[-1] in node:
        del node[parts[-1]]
        return True
    return False


def _value(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def make_layer(scope: Scope, source: str, data: dict[str, Any], *, trusted: bool) -> SettingsLayer:
    """A validated object as a layer; a project layer keeps only the keys the trust table
    lets it set (:func:`headwire.runtime.trust.project_may`: in an untrusted folder a value
    that only narrows, such as ``tools.approvalMode`` ``plan``, is kept)."""
    copy = json.loads(json.dumps(data))
    dropped: list[str] = []
    if scope == "project":
        for dotted in schema_keys():
            if project_may(dotted, trusted, _value(copy, dotted)):
                continue
            if _drop(copy, dotted):
                dropped.append(dotted)
    return SettingsLayer(scope, source, _freeze(copy), tuple(dropped))


@dataclass(frozen=True, slots=True)
class Settings:
    """The merged settings (``--settings`` over project over user) and the layers they came
    from.  ``None`` means "not set anywhere" (the flag's or headwire's default applies)."""

    layers: tuple[SettingsLayer, ...] = ()
    model_name: str | None = None
    max_session_turns: int | None = None
    max_tool_calls: int | None = None
    max_subagent_depth: int | float | None = None
    model_fallbacks: tuple[str, ...] = ()
    model_pricing: Mapping[str, ModelPrice] = field(default_factory=lambda: MappingProxyType({}))
    tools_core: tuple[str, ...] | None = None
    tools_exclude: tuple[str, ...] = ()
    tools_allowed: tuple[str, ...] | None = None
    approval_mode: str | None = None
    todo_write_enabled: bool = False
    list_directory_enabled: bool = False
    web_fetch_allow_private: bool = False
    context_file_names: tuple[str, ...] = DEFAULT_CONTEXT_FILE_NAMES
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    auth_type: str | None = None
    """``security.auth.selectedType``."""
    base_url: str | None = None
    """``security.auth.baseUrl``."""
    api_key: str | None = field(default=None, repr=False)
    """``security.auth.apiKey`` (user settings and ``--settings`` only)."""
    parse_text_tool_calls: bool | None = None
    """``model.parseTextToolCalls``."""
    thinking_budget: int | None = None
    """``model.thinkingBudget``."""
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    """``model.generationConfig``'s request controls (timeouts, retries, headers, body keys)."""
    catalog: Catalog = field(default_factory=Catalog)
    """``modelProviders`` and ``providerProtocol``: the models the user set up one by one."""
    auto_compact_threshold: float | None = None
    """``context.autoCompactThreshold``: the fraction of the window that starts compaction."""
    tool_results_chars_threshold: float | None = None
    """``context.clearContextOnIdle.toolResultsTotalCharsThreshold`` (-1: never clear)."""
    tool_results_keep: int | None = None
    """``context.clearContextOnIdle.toolResultsNumToKeep``."""
    tool_results_idle_minutes: float | None = None
    """``context.clearContextOnIdle.toolResultsThresholdMinutes`` (-1: never)."""
    disable_all_hooks: bool = False
    stop_hook_cap: int = 8
    skills_disabled: tuple[str, ...] = ()
    skills_enabled: tuple[str, ...] = ()
    skills_default_disabled: tuple[str, ...] = ()
    skills_disabled_levels: tuple[str, ...] = ()
    execution_sandbox: Mapping[str, Any] | None = None
    """``tools.executionSandbox``: the whole object of the highest layer that sets it (a
    complete policy, never merged key by key; project layers never set it)."""
    telemetry: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """``telemetry.*``, merged key by key (see :mod:`headwire.runtime.telemetry`)."""
    allow_dynamic_headers: bool = False
    """``outboundCorrelation.allowDynamicHeaderValues``: ``${session_id}`` in a custom header
    is the session's id (off: that header is not sent)."""
    propagate_trace_context: bool = False
    """``outboundCorrelation.propagateTraceContext``: ``TRACEPARENT`` in shell and hook children,
    ``traceparent`` on model requests."""
    chat_recording: bool = True
    new_file_bom: bool = False
    """``general.defaultFileEncoding: "utf-8-bom"``: a file ``write_file`` or ``edit`` creates
    starts with UTF-8's byte order mark."""
    output_language: str | None = None
    """``general.outputLanguage``: the language the model is told to answer in (``auto``: the
    user's)."""
    output_style: str | None = None
    """``general.outputStyle``: the output style's name (:mod:`.output_styles`)."""
    output_format: str | None = None
    """``output.format``: the ``-o/--output-format`` of a run started with a prompt that does
    not give the flag."""
    """``general.chatRecording``: ``False`` records nothing on disk, as
    ``--no-session-persistence``."""

    def hook_layers(self) -> list[tuple[str, dict[str, Any]]]:
        """``(source, hooks)`` per layer that configures hooks, in merge order (all of them
        run); empty when ``disableAllHooks`` is set."""
        if self.disable_all_hooks:
            return []
        out: list[tuple[str, dict[str, Any]]] = []
        for layer in self.layers:
            hooks = layer.get("hooks")
            if hooks:
                out.append((layer.source, _thaw(hooks)))
        return out

    def layer(self, scope: Scope) -> SettingsLayer | None:
        """The layer of ``scope``, if there is one."""
        return next((layer for layer in self.layers if layer.scope == scope), None)

    def mcp_sources(self) -> list[tuple[str, dict[str, Any]]]:
        """``(source, {"mcpServers": {...}})`` per layer that has servers, in merge order."""
        out: list[tuple[str, dict[str, Any]]] = []
        for layer in self.layers:
            servers = layer.get("mcpServers")
            if servers is not None:
                out.append((layer.source, {"mcpServers": _thaw(servers)}))
        return out


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


def split_models(value: str | None) -> tuple[str, ...]:
    """A comma-separated model list: trimmed, blanks and repeats dropped, at most 3."""
    out: list[str] = []
    for name in (value or "").split(","):
        name = name.strip()
        if name and name not in out:
            out.append(name)
    return tuple(out[:MAX_MODEL_FALLBACKS])


def merge_layers(layers: tuple[SettingsLayer, ...]) -> Settings:
    """The merged view of ``layers`` (lowest precedence first)."""

    def top(dotted: str) -> Any:
        value = None
        for layer in layers:
            found = layer.get(dotted)
            if found is not None:
                value = found
        return value

    def strings(value: Any) -> tuple[str, ...] | None:
        return None if value is None else tuple(str(v) for v in value)

    def union(dotted: str) -> tuple[str, ...]:
        out: list[str] = []
        for layer in layers:
            out += [v for v in layer.get(dotted) or () if v not in out]
        return tuple(out)

    exclude: list[str] = []
    pricing: dict[str, ModelPrice] = {}
    env: dict[str, str] = {}
    for layer in layers:
        for entry in layer.get("tools.exclude") or ():
            if entry not in exclude:
                exclude.append(entry)
        for name, price in (layer.get("modelPricing") or {}).items():
            pricing[name] = ModelPrice(
                input_per_million=price.get("inputPerMillionTokens"),
                output_per_million=price.get("outputPerMillionTokens"),
                cached_input_per_million=price.get("cachedInputPerMillionTokens"),
            )
        env.update(layer.get("env") or {})
    sandbox: Mapping[str, Any] | None = None
    for layer in layers:
        found = layer.get("tools.executionSandbox")
        if isinstance(found, Mapping) and found:  # a project layer's is emptied by the trust table
            sandbox = found
    try:
        where = "model.generationConfig"
        keys = settings_schema()["properties"]["model"]["properties"]["generationConfig"]
        values = {key: top(f"{where}.{key}") for key in keys["properties"]}
        generation = GenerationConfig.from_mapping(
            where, {key: value for key, value in values.items() if value is not None}
        )
        # the highest layer's catalog is taken whole, as Qwen Code does (no merge)
        catalog = read_catalog(top("modelProviders"), top("providerProtocol"))
    except (GenerationConfigError, CatalogError) as exc:
        raise SettingsError(str(exc)) from None
    names = top("context.fileName")
    if isinstance(names, str):
        names = (names,)
    return Settings(
        layers=layers,
        model_name=top("model.name"),
        max_session_turns=top("model.maxSessionTurns"),
        max_tool_calls=top("model.maxToolCalls"),
        max_subagent_depth=top("model.maxSubagentDepth"),
        model_fallbacks=split_models(top("modelFallbacks")),
        model_pricing=MappingProxyType(pricing),
        tools_core=strings(top("tools.core")),
        tools_exclude=tuple(exclude),
        tools_allowed=strings(top("tools.allowed")),
        approval_mode=top("tools.approvalMode"),
        todo_write_enabled=bool(top("tools.todoWrite.enabled")),
        list_directory_enabled=bool(top("tools.listDirectory.enabled")),
        web_fetch_allow_private=bool(top("tools.webFetch.allowPrivateNetwork")),
        context_file_names=tuple(n.strip() for n in names) if names else DEFAULT_CONTEXT_FILE_NAMES,
        env=MappingProxyType(env),
        auth_type=top("security.auth.selectedType"),
        base_url=top("security.auth.baseUrl"),
        api_key=top("security.auth.apiKey"),
        parse_text_tool_calls=top("model.parseTextToolCalls"),
        thinking_budget=top("model.thinkingBudget"),
        generation=generation,
        catalog=catalog,
        auto_compact_threshold=top("context.autoCompactThreshold"),
        tool_results_chars_threshold=top(
            "context.clearContextOnIdle.toolResultsTotalCharsThreshold"
        ),
        tool_results_keep=top("context.clearContextOnIdle.toolResultsNumToKeep"),
        tool_results_idle_minutes=top("context.clearContextOnIdle.toolResultsThresholdMinutes"),
        disable_all_hooks=bool(top("disableAllHooks")),
        skills_disabled=union("skills.disabled"),
        skills_enabled=union("skills.enabled"),
        skills_default_disabled=union("skills.defaultDisabled"),
        skills_disabled_levels=union("skills.disabledLevels"),
        stop_hook_cap=top("stopHookBlockingCap") or 8,
        execution_sandbox=sandbox,
        propagate_trace_context=bool(top("outboundCorrelation.propagateTraceContext")),
        allow_dynamic_headers=top("outboundCorrelation.allowDynamicHeaderValues") is True,
        chat_recording=top("general.chatRecording") is not False,
        new_file_bom=top("general.defaultFileEncoding") == "utf-8-bom",
        output_format=top("output.format"),
        output_language=top("general.outputLanguage"),
        output_style=top("general.outputStyle"),
        telemetry=MappingProxyType(
            {
                key: top(f"telemetry.{key}")
                for key in (settings_schema()["properties"]["telemetry"]["properties"])
                if top(f"telemetry.{key}") is not None
            }
        ),
    )


def settings_paths(data_dir: Path, cwd: Path) -> list[tuple[Scope, Path]]:
    """The user and project settings files, in merge order (one when they are the same)."""
    user = data_dir / SETTINGS_FILE
    project = cwd / PROJECT_DIR / SETTINGS_FILE
    if os.path.realpath(user) == os.path.realpath(project):
        return [("user", user)]
    return [("user", user), ("project", project)]


def load_settings(
    data_dir: Path,
    cwd: Path,
    cli_value: str | None = None,
    *,
    trusted: bool = True,
    files: Collection[Scope] | None = None,
) -> Settings:
    """Read, validate and merge the user file, the project file and ``--settings``.

    ``trusted`` says whether the project folder is trusted; the trust table decides which of
    its keys are then taken (:func:`headwire.runtime.trust.project_may`).  ``files``
    (``--setting-sources``) names the file scopes read (``None``: all of them); the
    ``--settings`` value is always read.  Raises
    :class:`SettingsError` (one line) on the first problem in any of them.
    """
    layers: list[SettingsLayer] = []
    for scope, path in settings_paths(data_dir, cwd):
        if files is not None and scope not in files:
            continue
        if scope == "project" and not project_may(SETTINGS_FILE_ENTRY, trusted):
            continue
        data = read_settings_file(path, inside=cwd if scope == "project" else None)
        if data is not None:
            layers.append(make_layer(scope, str(path), data, trusted=trusted))
    if cli_value is not None and cli_value.strip():
        data, source = settings_arg(cli_value, cwd)
        layers.append(make_layer("cli", source, data, trusted=True))
    return merge_layers(tuple(layers))


_UNAPPLIED: dict[str, tuple[Callable[[Any], bool], str]] = {
    "general.gitCoAuthor": (
        lambda v: isinstance(v, Mapping) and any(x is True for x in v.values()),
        "headwire adds no attribution lines to commits or pull requests",
    ),
}
"""Qwen Code keys whose effect headwire does not reproduce: when to name one at start (a value
that asks for that effect) and what to say."""


def dropped_notes(settings: Settings) -> list[str]:
    """One line per key a layer did not take, and per key a layer sets that headwire reads
    but does not apply (:data:`_UNAPPLIED`), for stderr."""
    notes: list[str] = []
    for layer in settings.layers:
        for dotted in layer.dropped:
            why = (
                "only the user settings and --settings can set it"
                if dotted in user_only_keys()
                else "not a trusted folder: trust it with 'headwire trust', --trust-project or "
                "HEADWIRE_TRUST_PROJECT=1"
            )
            notes.append(f"headwire: note: ignoring {dotted} in {layer.source} ({why})")
    notes += settings.catalog.notes
    for layer in settings.layers:
        for dotted, what in _UNAPPLIED.items():
            value = layer.get(dotted)
            if value is not None and what[0](value):
                notes.append(
                    f"headwire: note: {dotted} in {layer.source} is not applied ({what[1]})"
                )
    if not settings.allow_dynamic_headers:
        configs = [("model.generationConfig", settings.generation)]
        configs += [(f"{e.where}.generationConfig", e.generation) for e in settings.catalog.entries]
        for where, config in configs:
            for name in config.dynamic_headers():
                notes.append(
                    f"headwire: note: {where}.customHeaders.{name} holds ${{session_id}} and is "
                    "not sent: set outboundCorrelation.allowDynamicHeaderValues to true in the "
                    "user settings to send the session id"
                )
    return notes


__all__ = [
    "DEFAULT_CONTEXT_FILE_NAMES",
    "NARROWING_VALUES",
    "Settings",
    "SettingsError",
    "SettingsLayer",
    "dropped_notes",
    "load_settings",
    "merge_layers",
    "schema_keys",
    "settings_schema",
    "trust_keys",
    "user_only_keys",
]
