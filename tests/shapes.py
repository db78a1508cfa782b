"""Message *shapes*: key order and value kinds, with ids, timings, paths and texts left out.

Used to compare headwire's wire with the upstream captures, committed under
``tests/data/upstream`` (copied from the captures of the real upstream CLI), so a plain clone
runs the same checks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent / "data" / "upstream"
OPAQUE = {"stats", "tools", "slash_commands", "agents", "mcp_servers", "input", "goal_state"}
"""Fields whose inner layout is product-specific (tool lists, metrics, tool arguments)."""
RESULT_ADDITIONS = ("stats", "stop_reason", "total_cost_usd", "modelUsage", "structured_output")
"""Keys a turn's ``result`` may carry after Qwen Code's (``stats``, which Qwen Code writes in
JSON mode only, in every mode; Claude Code's run fields).  Shape comparisons leave them out on
both sides; ``tests/unit/test_result_order.py`` checks they follow upstream's keys, in order."""


INIT_ADDITIONS = ("claude_code_version",)
"""Keys ``system/init`` carries after Qwen Code's (the version under the name claude-agent-sdk
reads)."""


def without_additions(message: Any) -> Any:
    """``message`` without the :data:`RESULT_ADDITIONS` when it is a ``result``, without the
    :data:`INIT_ADDITIONS` when it is ``system/init``."""
    if isinstance(message, dict) and message.get("type") == "result":
        return {k: v for k, v in message.items() if k not in RESULT_ADDITIONS}
    if isinstance(message, dict) and message.get("subtype") == "init":
        return {k: v for k, v in message.items() if k not in INIT_ADDITIONS}
    return message


def shape(value: Any, key: str | None = None) -> Any:
    """The shape of a JSON value: dict -> [[key, shape]...], list -> shapes, scalars -> kind."""
    if key in OPAQUE:
        return type(value).__name__
    if isinstance(value, dict):
        return [[k, shape(v, k)] for k, v in value.items()]
    if isinstance(value, list):
        return [shape(v) for v in value]
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "num"
    return "str"


def _collapse_deltas(shapes: list[Any]) -> list[Any]:
    """Merge runs of identical delta events: how a model chunks its text is not the wire's shape."""
    out: list[Any] = []
    for item in shapes:
        is_delta = '"delta"' in json.dumps(item) and bool(out) and out[-1] == item
        if not is_delta:
            out.append(item)
    return out


def message_shapes(stdout: bytes) -> list[Any]:
    """Shapes of every message of a stdout capture (JSON Lines, or one JSON array)."""
    text = stdout.decode("utf-8")
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        return [shape(without_additions(m)) for m in json.loads(stripped)]
    return _collapse_deltas(
        [shape(without_additions(json.loads(line))) for line in text.splitlines() if line.strip()]
    )


def upstream_shapes() -> dict[str, list[Any]]:
    """Shapes of the committed upstream captures, by capture name."""
    return {
        p.name.removesuffix(".stdout.jsonl"): message_shapes(p.read_bytes())
        for p in sorted(SAMPLES.glob("*.stdout.jsonl"))
        if not p.name.endswith("-text.stdout.jsonl")
    }
