"""Every textual field of one tool result, bounded whatever the shape of its ``content`` (pure).

Headless ``tool_result.content`` comes in four shapes, and each is held to 65,536 JSON bytes
(:data:`~headwire.projection.headless.TOOL_RESULT_JSON_BYTE_BUDGET`) where its text allows:

* a string: :func:`~headwire.projection.headless.project_tool_result_content`;
* a list of *pure* text blocks, each exactly ``{"type": "text", "text": str}`` (what headwire
  and upstream write): the blocks share one budget (:func:`project_text_block_list`), and a list
  that cannot hold even a marker per block collapses to one marker block;
* any other list (text blocks with extra keys such as ``cache_control``, text mixed with image
  or other blocks, bare strings; Claude Code writes text + image lists for MCP tools): the
  *textual slots* (each text block's ``text``, each bare string) share what the budget leaves
  after the list's skeleton, everything else is kept byte for byte (an image cut short would
  be a broken image), and no block is added or removed;
* a single text block object: bounded as a one-block list, returned as an object.

Anything else (numbers, objects that are not text blocks) is left alone.  When the skeleton
of a mixed list leaves too little room for a marker per slot, every slot longer than the marker
becomes the marker itself: each textual field is then at most the marker's 48 JSON bytes, and
the list is over budget only by what cannot be cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from headwire.projection.fair_share import share_payload_budget
from headwire.projection.headless import (
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_tool_result_content,
)
from headwire.projection.json_string import json_string_payload_bytes
from headwire.wire.size import json_size, payload_bytes

__all__ = [
    "MAX_TEXT_BLOCKS",
    "bound_tool_result_content",
    "project_text_block_list",
    "share_textual_slots",
]

_TEXT_BLOCK_SKELETON_BYTES = len(b'{"type":"text","text":""}')  # 25

MAX_TEXT_BLOCKS = (TOOL_RESULT_JSON_BYTE_BUDGET - 2 + 1) // (_TEXT_BLOCK_SKELETON_BYTES + 1)
"""2,520: the most text blocks whose empty skeleton fits the budget."""


def _pure_texts(value: list[Any]) -> list[str] | None:
    """The texts of ``value`` when every element is exactly ``{"type":"text","text":str}``."""
    texts: list[str] = []
    for block in value:
        if not (isinstance(block, dict) and len(block) == 2 and block.get("type") == "text"):
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return texts


def _is_text_block(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("type") == "text"
        and isinstance(value.get("text"), str)
    )


def _with_text(block: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of ``block`` with ``text`` in place of its text, keys in the same order."""
    return {k: (text if k == "text" else v) for k, v in block.items()}


def _marker_only() -> list[Any]:
    return [{"type": "text", "text": HEADLESS_TRUNCATION_MARKER}]


def _project_pure(blocks: list[Any], texts: list[str]) -> list[Any]:
    count = len(texts)
    if count > MAX_TEXT_BLOCKS:
        return _marker_only()
    skeleton = 2 + count * _TEXT_BLOCK_SKELETON_BYTES + max(count - 1, 0)
    available = TOOL_RESULT_JSON_BYTE_BUDGET - skeleton
    shared = share_payload_budget(texts, available, HEADLESS_TRUNCATION_MARKER)
    if shared is None:
        return _marker_only()
    if shared is texts:
        return blocks
    projected = [
        block if new is old else _with_text(block, new)
        for block, old, new in zip(blocks, texts, shared, strict=True)
    ]
    if json_size(projected) <= TOOL_RESULT_JSON_BYTE_BUDGET:
        return projected
    return _marker_only()


def share_textual_slots(
    items: list[Any],
    slots: list[int],
    text_of: Callable[[Any], str],
    with_text: Callable[[Any, str], Any],
    budget: int,
    marker: str,
) -> list[Any]:
    """Bound the texts at ``items[i]`` for ``i`` in ``slots`` so that ``items`` fits ``budget``.

    The texts share what the budget leaves after the skeleton (``items`` with those texts
    emptied); every other item is kept as it is.  Returns ``items`` itself when it already
    fits.  When the skeleton leaves too little room for a marker per text, each text longer
    than ``marker`` becomes ``marker`` (the list then exceeds ``budget`` only by what cannot be
    cut).  ``with_text(item, text)`` must return a new item; ``items`` is never mutated.
    """
    texts = [text_of(items[i]) for i in slots]
    skeleton = list(items)
    for i in slots:
        skeleton[i] = with_text(items[i], "")
    shared = share_payload_budget(texts, budget - json_size(skeleton), marker)
    del skeleton
    if shared is None:
        reserve = payload_bytes(marker)
        shared = [t if json_string_payload_bytes(t, reserve) <= reserve else marker for t in texts]
    projected: list[Any] | None = None
    for i, old, new in zip(slots, texts, shared, strict=True):
        if new is not old:
            if projected is None:
                projected = list(items)
            projected[i] = with_text(items[i], new)
    return items if projected is None else projected


def _headless_text(item: Any) -> str:
    return item if isinstance(item, str) else item["text"]


def _headless_with_text(item: Any, text: str) -> Any:
    return text if isinstance(item, str) else _with_text(item, text)


def project_text_block_list(blocks: list[Any]) -> list[Any]:
    """Bound a ``tool_result.content`` list so that its JSON is at most 65,536 bytes.

    The rule for a list of pure text blocks (the headless counterpart of the ACP multi-block
    rule):

    * the whole list shares one budget: ``JSON.stringify(list)`` is at most 65,536 bytes, so
      the texts get ``65,536 - skeleton`` payload bytes in all, where the skeleton (``[]``, 25
      bytes per empty block, 1 per comma) is what the list costs with empty texts;
    * each text first reserves ``min(its size, 46)`` (the payload of
      ``HEADLESS_TRUNCATION_MARKER``), then the rest is water-filled
      (:func:`~headwire.projection.fair_share.share_payload_budget`): small texts stay whole
      and large ones share the remainder evenly, the lower indices taking the odd bytes; a
      text over its share becomes the usual 20% head + marker + 80% tail preview;
    * more blocks than the budget can hold even empty (2,521 and up), or reservations that do
      not fit, collapse the list to the single block ``{"type":"text","text":marker}``.

    Any other list has its textual slots (text blocks with any other keys, bare strings)
    share the budget the same way around a skeleton that keeps every other element whole
    (:func:`share_textual_slots`); such a list never collapses.

    Returns ``blocks`` itself when it already fits, otherwise a new list in which the blocks
    that kept their text are the same objects; the input is never mutated.
    """
    texts = _pure_texts(blocks)
    if texts is not None:
        return _project_pure(blocks, texts)
    slots = [i for i, b in enumerate(blocks) if isinstance(b, str) or _is_text_block(b)]
    if not slots:
        return blocks
    return share_textual_slots(
        blocks,
        slots,
        _headless_text,
        _headless_with_text,
        TOOL_RESULT_JSON_BYTE_BUDGET,
        HEADLESS_TRUNCATION_MARKER,
    )


def bound_tool_result_content(content: Any) -> Any:
    """``tool_result.content`` of any shape with every textual field bounded (see the module);
    ``content`` itself when nothing changes."""
    if isinstance(content, str):
        return project_tool_result_content(content)
    if isinstance(content, list):
        return project_text_block_list(content)
    if _is_text_block(content):
        (projected,) = project_text_block_list([content])
        return projected
    return content
