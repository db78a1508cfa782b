"""``modelProviders``: the user's catalog of models, each with its endpoint, key and settings.

Qwen Code's settings file may list models per provider id::

    "modelProviders": {"openai": [{"id": "gpt-4o", "envKey": "OPENAI_API_KEY",
                                   "baseUrl": "https://api.openai.com/v1",
                                   "generationConfig": {"timeout": 60000}}]},
    "providerProtocol": {"idealab": "openai"}

A provider id is a protocol (``openai``, ``anthropic``, ``gemini``) or a name of the user's
mapped to one by ``providerProtocol``.  When the run's model (``--model``, the provider's model
variable, ``model.name``) is an entry's ``id`` under the run's auth type, that entry is the
model's whole configuration, as in Qwen Code:

* its ``baseUrl`` wins over ``--openai-base-url``, the environment and the settings;
* its key is the variable ``envKey`` names (the environment, or the settings' ``env``), which
  wins over ``--openai-api-key``; unset or empty, the usual key applies (``OPENAI_API_KEY``...);
* its ``generationConfig`` replaces ``model.generationConfig`` whole: a key it does not set
  takes its default, not the top-level value.

A model that is no entry's id runs as before.  What Qwen Code would skip, headwire skips with
a note: a provider id that names no protocol, the ``vertex-ai`` and ``qwen-oauth`` providers
(which headwire does not speak), image-only and realtime-only routes (not chat models), and a
repeated (protocol, id, baseUrl).  An entry on the Responses API (``wireApi: "responses"``,
or the legacy ``openai-responses`` provider) runs on :mod:`.responses`.  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from headwire.errors import ConfigError
from headwire.records import dataclass, field
from headwire.runtime.models.generation import GenerationConfig, GenerationConfigError

__all__ = ["PROTOCOLS", "RESPONSES", "Catalog", "CatalogEntry", "CatalogError", "read_catalog"]

PROTOCOLS = ("openai", "anthropic", "gemini")
"""The protocols headwire speaks (its auth types)."""

_UNSPOKEN = {
    "vertex-ai": "Vertex AI",
    "qwen-oauth": "Qwen OAuth",
}
"""Qwen Code's other protocols: their entries are skipped with a note."""

RESPONSES = "responses"
"""``wireApi`` of a Responses API route."""


class CatalogError(ConfigError):
    """An entry that cannot be used as written; ``str()`` is one line naming it."""


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One model of the catalog, as the run uses it."""

    provider: str
    """The provider id it is listed under (``openai``, or the user's ``idealab``)."""
    protocol: str
    """``openai``, ``anthropic`` or ``gemini``."""
    id: str
    """The model name sent to the server, and what ``--model`` / ``model.name`` match."""
    where: str
    """``modelProviders.<provider>[<index>]``, for messages."""
    label: str | None = None
    """The entry's ``name``: a display name for pickers (``get_available_models``)."""
    env_key: str | None = None
    base_url: str | None = None
    wire_api: str | None = None
    """``responses`` for a Responses API route (``chat-completions`` or ``None`` otherwise)."""
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    """The entry's ``generationConfig``: the whole of the model's request settings."""


@dataclass(frozen=True, slots=True)
class Catalog:
    """The usable entries, in the settings' order, and one note per entry skipped."""

    entries: tuple[CatalogEntry, ...] = ()
    notes: tuple[str, ...] = ()
    protocols: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """``providerProtocol`` as read: provider id -> protocol."""

    def find(self, protocol: str, model: str) -> CatalogEntry | None:
        """The first entry of ``protocol`` whose id is ``model`` (exactly), a Chat
        Completions route before a Responses one (as Qwen Code picks), or ``None``."""
        routes = [e for e in self.entries if e.protocol == protocol and e.id == model]
        return min(routes, key=lambda e: e.wire_api == RESPONSES, default=None)


def _protocol(provider: str, mapping: Mapping[str, str]) -> tuple[str | None, str | None, str]:
    """``(protocol, wire_api, why_not)`` for a provider id: an explicit ``providerProtocol``
    mapping wins over the id's own name."""
    named = mapping.get(provider, provider)
    if named == "openai-responses":
        return "openai", RESPONSES, ""
    if named in PROTOCOLS:
        return named, None, ""
    if named in _UNSPOKEN:
        return None, None, f"headwire does not speak {_UNSPOKEN[named]}"
    if provider not in mapping:
        return None, None, f"no providerProtocol maps it to one of {', '.join(PROTOCOLS)}"
    return None, None, f"providerProtocol maps it to {named}, which headwire does not speak"


def read_catalog(
    providers: Mapping[str, Any] | None, protocols: Mapping[str, str] | None = None
) -> Catalog:
    """The catalog of ``modelProviders`` (already checked against the settings schema) and
    ``providerProtocol``; raises :class:`CatalogError` for an entry written wrong (a
    ``wireApi`` on a provider other than OpenAI's, a generationConfig key headwire writes)."""
    entries: list[CatalogEntry] = []
    notes: list[str] = []
    seen: set[tuple[str, str | None, str, str | None]] = set()
    for provider, models in (providers or {}).items():
        protocol, bucket_api, why_not = _protocol(provider, protocols or {})
        if protocol is None:
            notes.append(f"headwire: note: skipping modelProviders.{provider}: {why_not}")
            continue
        for index, raw in enumerate(models or ()):
            where = f"modelProviders.{provider}[{index}]"
            if raw.get("imageOnly") or raw.get("realtimeOnly"):
                continue  # a route for images or live voice, never the chat model
            wire_api = raw.get("wireApi")
            if wire_api is not None and protocol != "openai":
                raise CatalogError(f"{where}.wireApi: only OpenAI-compatible models have one")
            api = RESPONSES if (wire_api or bucket_api) == RESPONSES else None
            base_url = raw.get("baseUrl")
            key = (protocol, api, raw["id"], base_url.rstrip("/") if base_url else None)
            if key in seen:
                notes.append(
                    f"headwire: note: skipping {where}: {raw['id']} at that base URL is "
                    "listed before (on the same API)"
                )
                continue
            seen.add(key)
            try:
                generation = GenerationConfig.from_mapping(
                    f"{where}.generationConfig", raw.get("generationConfig") or {}
                )
            except GenerationConfigError as exc:
                raise CatalogError(str(exc)) from None
            entries.append(
                CatalogEntry(
                    provider=provider,
                    protocol=protocol,
                    id=raw["id"],
                    where=where,
                    label=raw.get("name"),
                    env_key=raw.get("envKey"),
                    base_url=base_url,
                    wire_api=api,
                    generation=generation,
                )
            )
    return Catalog(tuple(entries), tuple(notes), MappingProxyType(dict(protocols or {})))
