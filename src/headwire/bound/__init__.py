"""The core of ``headwire bound``: bound every textual tool result in headless output (pure).

The filter sees a byte stream of lines (``\\n``-terminated, the last one possibly not) and
writes the same lines in the same order.  A line is rewritten only when a tool result inside it
is over budget; every other line, including empty, malformed and non-UTF-8 lines, is passed on
as the very bytes that came in.  A rewritten line is ``JSON.stringify(JSON.parse(line))`` with
the projection applied, so for input written by ``JSON.stringify`` (every headless producer)
the bytes outside the bounded fields are unchanged too; its leading and trailing whitespace and
its terminator are kept.

What is bounded, per :class:`Format`:

* ``stream-json``: a line ``{"type":"user","message":{"content":[...]}}`` whose blocks of
  ``"type":"tool_result"`` carry ``content``: a string, a list of text blocks sharing one
  budget, or any other list or single text block, whose every textual field is bounded
  (:mod:`headwire.bound.blocks`);
* ``json``: a line holding one JSON array of such messages (upstream's ``-o json``);
* ``acp``: a JSON-RPC line whose ``session/update`` ``params.update`` is a
  ``tool_call_update`` (:func:`~headwire.projection.acp.project_acp_tool_call_update`, and
  the content shapes upstream exempts: :func:`~headwire.bound.shapes.bound_acp_content`),
  and the updates that a
  ``session/load`` response replays in ``result._meta["qwen.session.loadReplay"].updates``,
  ``result.updates`` and ``result.events[].data``.

The package: :mod:`~headwire.bound.filter` (the stream), :mod:`~headwire.bound.lines` (one
line), :mod:`~headwire.bound.shapes` (where tool results sit in each format),
:mod:`~headwire.bound.blocks` (the textual fields of one tool result).

Fast path: a JSON string is never shorter in a line than its canonical encoding, so a line of
at most :data:`FAST_PATH_LINE_BYTES` bytes cannot hold a field over the 65,536-byte budget.
Such lines are never re-encoded; they are only checked, a block at a time and without a
Python-level loop (:func:`quick_line_problem`: UTF-8, and opening and closing like an object or
array; a line failing that is parsed and reported if it is not JSON).  ``validate=True`` parses
every line instead, which is two to three times slower on typical streams.  Longer lines are
always parsed.

Invariants (hypothesis properties in ``tests/unit/bound/``):

* the output has as many lines as the input, in the same order, with the same terminators;
* a line that :func:`bound_line` leaves alone comes out byte-identical;
* every bounded ``content`` serializes to at most 65,536 JSON bytes, unless its blocks that
  are not text leave no room for a marker per text (then each text is at most the marker);
* feeding a stream in any split gives the same output as feeding it whole;
* bounding is idempotent.
"""

from headwire.bound.blocks import (
    MAX_TEXT_BLOCKS,
    bound_tool_result_content,
    project_text_block_list,
)
from headwire.bound.filter import BoundFilter, BoundStats
from headwire.bound.lines import (
    FAST_PATH_LINE_BYTES,
    LineOutcome,
    Piece,
    bound_line,
    first_long_line,
    line_problem,
    quick_line_problem,
    run_passes_quick_check,
)
from headwire.bound.shapes import LOAD_REPLAY_META_KEY, Format, bound_value
from headwire.wire.size import json_size

__all__ = [
    "FAST_PATH_LINE_BYTES",
    "LOAD_REPLAY_META_KEY",
    "MAX_TEXT_BLOCKS",
    "BoundFilter",
    "BoundStats",
    "Format",
    "LineOutcome",
    "Piece",
    "bound_line",
    "bound_tool_result_content",
    "bound_value",
    "first_long_line",
    "json_size",
    "line_problem",
    "project_text_block_list",
    "quick_line_problem",
    "run_passes_quick_check",
]
