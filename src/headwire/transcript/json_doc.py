"""A transcript as one JSON document (pure): ``headwire sessions export --format json``.

The document is the transcript model itself (:mod:`headwire.transcript.model`) with
``"format": "headwire.transcript/1"``: each excerpt is ``{"head", "tail", "total_bytes",
"omitted_bytes"}`` and keeps up to :data:`headwire.transcript.model.EXCERPT_BYTES` of its text,
so the document stays small whatever the recording's size.
"""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass

import orjson

from headwire.transcript.model import Transcript

__all__ = [
    "FORMAT",
    "render_json",
]

FORMAT = "headwire.transcript/1"
"""The document's ``format`` value; it changes when a field changes meaning."""


def render_json(transcript: Transcript) -> bytes:
    """The transcript as indented UTF-8 JSON (lone surrogates become U+FFFD)."""
    document = {"format": FORMAT, "transcript": transcript}
    try:
        return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:  # a lone surrogate somewhere: orjson refuses it
        text = json.dumps(_plain(document), ensure_ascii=False, indent=2)
        return text.encode("utf-8", "replace") + b"\n"


def _plain(value: object) -> object:
    """``value`` with dataclasses as dicts (for the stdlib encoder's slow path)."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
