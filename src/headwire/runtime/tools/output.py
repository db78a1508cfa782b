"""The model-facing text of a tool result: whole when small, else head and tail plus the
artifact's path.

The model sees at most :data:`MODEL_TEXT_BUDGET` characters of any one result (upstream's
``truncateToolOutput``: 20% head, 80% tail); the full output is saved to a private artifact first
(unless the tool already saved one), so the model can read it back with ``read_file``.  This is
the model's budget, independent of the 65,536-byte wire bound applied later at the boundaries.
"""

from __future__ import annotations

from headwire.io.stdio import warn
from headwire.runtime.tools.base import ArtifactSink, ToolOutcome

MODEL_TEXT_BUDGET = 25_000
"""Characters of one tool result the model sees; longer outputs are cut and point at the file."""


def model_text(tool_name: str, outcome: ToolOutcome, artifacts: ArtifactSink) -> str:
    """What the model is told about ``outcome`` (saves an artifact when it must cut the text;
    sets ``outcome.artifact`` then)."""
    text = outcome.llm_text
    if len(text) <= MODEL_TEXT_BUDGET:
        return text
    path = outcome.artifact
    where = ""
    if path is None:
        try:
            path = artifacts.save(tool_name, text.encode("utf-8", "surrogatepass"))
        except OSError as exc:  # disk full, unwritable data directory: the result goes on
            reason = f"{type(exc).__name__}: {exc}"
            warn(f"headwire: could not save the full output of {tool_name}: {reason}")
            where = f"The full output could not be saved ({reason}).\n"
        else:
            outcome.artifact = path
    if not where:
        where = (
            f"The full output has been saved to: {path}\n"
            f"To read the complete output, use the read_file tool with the absolute "
            f"file path above.\n"
        )
    head = MODEL_TEXT_BUDGET // 5
    tail = MODEL_TEXT_BUDGET - head
    return (
        f"Tool output was too large and has been truncated.\n{where}"
        f"Truncated part of the output:\n"
        f"{text[:head]}\n... [{len(text) - head - tail} characters omitted] ...\n{text[-tail:]}"
    )
