"""Model-side bounding of tool output, and saving the full output as an artifact.

A tool result the model cannot take whole is cut to a preview, and the full output is saved to
a private artifact (0600) the model can read back with ``read_file``.  Two previews exist, each
with its own budget, and both go through :func:`too_large_text`:

* the shell and MCP tools use upstream's envelope (:func:`truncated_envelope`): 30,000
  characters trigger it, the preview is :func:`head_tail_preview` (about 4,000 characters,
  whole lines, the ``[CONTENT TRUNCATED]`` marker), and the artifact holds the raw output;
* every other tool result longer than :data:`MODEL_TEXT_BUDGET` characters is cut by the agent
  (:func:`model_text`): the first fifth and the last four fifths of the budget, and the
  artifact holds the whole model text.

When the artifact cannot be written (disk full, unwritable data directory) the result still
goes out: the model gets the same preview with the reason instead of a path, and stderr a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from headwire.io.stdio import warn
from headwire.runtime.store.storage import encode_text
from headwire.runtime.tools.base import ArtifactSink, TextArtifactSink, ToolContext, ToolOutcome
from headwire.runtime.tools.offload import in_thread

MODEL_TEXT_BUDGET = 25_000
"""Characters of one tool result the model sees; longer outputs are cut and point at the file."""
PREVIEW_CHARS = 4_000
TRUNCATION_MARKER = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n"
_HEADER = "Tool output was too large and has been truncated.\n"
_MARKER_NOTE = (
    "The truncated output below shows the beginning and end of the content. The "
    "marker '... [CONTENT TRUNCATED] ...' indicates where content was removed.\n\n"
)


def head_tail_preview(content: str, budget: int = PREVIEW_CHARS) -> str:
    """About ``budget`` characters of ``content``: the first fifth of the lines and the rest
    from the end, each side capped (a fifth / the remainder of the budget), cut lines marked
    with ``...`` and the two sides joined by the ``[CONTENT TRUNCATED]`` marker.

    Works with ``find``/``rfind`` from both ends, so a huge ``content`` is never split.
    """
    marker = TRUNCATION_MARKER if budget > len(TRUNCATION_MARKER) else ""
    content_budget = budget - len(marker)
    line_count = content.count("\n") + 1
    head_count = max(line_count // 5, 1)
    head_budget = content_budget // 5
    head: list[str] = []
    used, pos = 0, 0
    for _ in range(min(head_count, line_count)):
        remaining = head_budget - used
        if remaining <= 0:
            break
        end = content.find("\n", pos)
        end = len(content) if end < 0 else end
        if end - pos + 1 > remaining:
            if remaining >= 3:
                head.append(content[pos : pos + remaining - 3] + "...")
            used = head_budget
            break
        head.append(content[pos:end])
        used += end - pos + 1
        pos = end + 1
    tail_budget = max(content_budget - used, 0)
    tail: list[str] = []
    tail_used, end, index = 0, len(content), line_count - 1
    tail_first = max(head_count, len(head))
    while index >= tail_first:
        remaining = tail_budget - tail_used
        if remaining <= 0:
            break
        start = content.rfind("\n", 0, end) + 1
        if end - start + 1 > remaining:
            if remaining >= 3:
                keep = remaining - 3
                tail.append("..." + (content[end - keep : end] if keep > 0 else ""))
            break
        tail.append(content[start:end])
        tail_used += end - start + 1
        end, index = start - 1, index - 1
    tail.reverse()
    return "\n".join(head) + marker + "\n".join(tail)


def char_preview(text: str, budget: int = MODEL_TEXT_BUDGET) -> str:
    """The first fifth and the last four fifths of ``budget`` characters of ``text``, with
    the number of characters left out between them."""
    head = budget // 5
    tail = budget - head
    return f"{text[:head]}\n... [{len(text) - head - tail} characters omitted] ...\n{text[-tail:]}"


def too_large_text(
    preview: str, saved_to: Path | None, reason: str | None, *, upstream_envelope: bool
) -> str:
    """The model text for an output too long to pass whole: where the full output is (the
    artifact path, or why it could not be saved), then ``preview``.  ``upstream_envelope``
    adds upstream's sentences about the marker and the missing file (shell and MCP tools)."""
    if saved_to is not None:
        where = (
            f"The full output has been saved to: {saved_to}\n"
            "To read the complete output, use the read_file tool with the absolute file path "
            "above.\n"
        )
    elif upstream_envelope:
        where = (
            f"The full output could not be saved ({reason}); only the part below is available.\n"
        )
    else:
        where = f"The full output could not be saved ({reason}).\n"
    note = _MARKER_NOTE if upstream_envelope else ""
    return f"{_HEADER}{where}{note}Truncated part of the output:\n{preview}"


def truncated_envelope(content: str, saved_to: Path, budget: int = PREVIEW_CHARS) -> str:
    """Upstream's model text for an output saved to ``saved_to``."""
    return too_large_text(
        head_tail_preview(content, budget), saved_to, None, upstream_envelope=True
    )


def unsaved_envelope(content: str, reason: str, budget: int = PREVIEW_CHARS) -> str:
    """The model text for an output too long to pass whole whose artifact could not be
    written (disk full, unwritable data directory): the same preview, and why there is no file."""
    preview = head_tail_preview(content, budget)
    return too_large_text(preview, None, reason, upstream_envelope=True)


def save_output(
    artifacts: ArtifactSink, tool_name: str, data: bytes
) -> tuple[Path | None, str | None]:
    """Save ``data`` as an artifact: ``(path, None)``, or ``(None, reason)`` when the store
    cannot write it (a stderr note is printed; the tool result goes on)."""
    try:
        return artifacts.save(tool_name, data), None
    except OSError as exc:
        reason = f"{type(exc).__name__}: {exc}"
        warn(f"headwire: could not save the full output of {tool_name}: {reason}")
        return None, reason


async def save_artifact(
    ctx: ToolContext, tool_name: str, data: bytes
) -> tuple[Path | None, str | None]:
    """:func:`save_output` off the event loop."""
    return await in_thread(lambda: save_output(ctx.artifacts, tool_name, data))


def save_text_output(
    artifacts: ArtifactSink,
    tool_name: str,
    text: str,
    surrogates: Literal["replace", "pass"] = "replace",
) -> tuple[Path | None, str | None]:
    """:func:`save_output` of ``text`` as UTF-8 (a surrogate as U+FFFD, or with ``"pass"`` as
    its own three bytes), written a piece at a time when the sink can (a long output is never
    held twice, as text and as bytes)."""
    if isinstance(artifacts, TextArtifactSink):
        try:
            return artifacts.save_text(tool_name, text, surrogates), None
        except OSError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            warn(f"headwire: could not save the full output of {tool_name}: {reason}")
            return None, reason
    return save_output(artifacts, tool_name, encode_text(text, surrogates))


async def save_text_artifact(
    ctx: ToolContext, tool_name: str, text: str
) -> tuple[Path | None, str | None]:
    """:func:`save_text_output` (surrogates as U+FFFD) off the event loop."""
    return await in_thread(lambda: save_text_output(ctx.artifacts, tool_name, text))


def model_text(tool_name: str, outcome: ToolOutcome, artifacts: ArtifactSink) -> str:
    """The model-facing text of ``outcome``: whole up to :data:`MODEL_TEXT_BUDGET` characters,
    else :func:`char_preview` pointing at the artifact (the tool's own, or the whole text saved
    now and set as ``outcome.artifact``)."""
    text = outcome.llm_text
    if len(text) <= MODEL_TEXT_BUDGET:
        return text
    path, reason = outcome.artifact, None
    if path is None:
        path, reason = save_text_output(artifacts, tool_name, text, "pass")
        if path is not None:
            outcome.artifact = path
    return too_large_text(char_preview(text), path, reason, upstream_envelope=False)
