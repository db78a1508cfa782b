"""Partial messages are built only when some consumer carries them, and nothing else changes.

:class:`~headwire.headless.HeadlessEmitter` with ``partials=False`` (stream-JSON without
``--include-partial-messages``, JSON and text without a Dual Output sidecar) builds no partial
``stream_event`` but ``goal_state``; every other message is the one ``partials=True`` builds.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire import events as ev
from headwire.headless import HeadlessEmitter

INFO = ev.SessionInfo(
    session_id="s",
    cwd="/w",
    tools=("read_file",),
    mcp_servers=(),
    model="m",
    permission_mode="default",
    version="0",
    agents=(),
)
STEP = st.one_of(
    st.builds(ev.TextDelta, text=st.text(max_size=5)),
    st.builds(ev.ThinkingDelta, text=st.text(max_size=5)),
    st.builds(
        ev.ToolUse,
        call_id=st.text(min_size=1, max_size=4),
        name=st.sampled_from(["read_file", "glob"]),
        args=st.dictionaries(
            st.text(max_size=3), st.integers() | st.floats() | st.text(max_size=3)
        ),
    ),
    st.builds(
        ev.ToolProgress,
        call_id=st.text(max_size=4),
        content=st.just({"type": "text", "text": "…"}),
    ),
)


def _turn(steps: list[ev.Event]) -> list[ev.Event]:
    return [
        ev.TurnStarted(info=INFO),
        ev.ModelCallStarted(message_id="msg-1", model="m"),
        *steps,
        ev.ModelCallFinished(usage=ev.Usage(input_tokens=3, output_tokens=2), message={}),
    ]


def _emit(events: list[ev.Event], partials: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    counter = itertools.count()
    emitter = HeadlessEmitter("s", lambda: f"u{next(counter)}", out.append, partials=partials)
    for event in events:
        emitter(event)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(STEP, max_size=12))
def test_without_partials_only_the_partial_messages_are_missing(steps: list[ev.Event]) -> None:
    """Invariant: the ``partials=False`` messages are the ``partials=True`` ones without the
    ``stream_event`` messages other than ``goal_state`` (ids aside: fewer ids are drawn)."""
    events = _turn(steps)
    full = _emit(events, partials=True)
    lean = _emit(events, partials=False)

    def kept(message: dict[str, Any]) -> bool:
        return message["type"] != "stream_event" or message["event"]["type"] == "goal_state"

    def no_ids(message: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in message.items() if k != "uuid"} | (
            {"message": {**message["message"], "id": ""}} if message["type"] == "assistant" else {}
        )

    assert [no_ids(m) for m in lean] == [no_ids(m) for m in full if kept(m)]
    assert all(kept(m) for m in lean)
    assert any(m["type"] == "stream_event" for m in lean)  # goal_state is always there
