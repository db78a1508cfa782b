"""A recording's records are untrusted: a wrong-typed field is a one-line
:class:`RecordingError`, never a traceback, and what ``--resume`` hands the model has the
shapes :func:`message_problem` promises."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.acp.replay import Replayer
from headwire.runtime.store.recording import RecordingError, conversation_of, message_problem

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELD = st.one_of(JSON, st.sampled_from(["system", "user", "assistant", "tool", "id-1"]))
CALL = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"id": FIELD, "function": st.one_of(JSON, st.fixed_dictionaries({"name": FIELD}))}
    ),
)
MESSAGE = st.fixed_dictionaries(
    {"role": FIELD},
    optional={
        "content": st.one_of(FIELD, st.lists(JSON, max_size=2)),
        "tool_calls": st.one_of(JSON, st.lists(CALL, max_size=2)),
        "tool_call_id": FIELD,
        "reasoning_content": FIELD,
    },
)
RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "tool_result", "result", "x"])},
    optional={"message": st.one_of(JSON, MESSAGE), "parent_tool_use_id": st.none()},
)


@settings(max_examples=80, deadline=None)
@given(records=st.lists(RECORD, max_size=6))
def test_any_records_give_a_conversation_of_good_shapes_or_one_error(
    records: list[dict[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        try:
            conversation = conversation_of(path)
        except RecordingError as exc:
            assert "\n" not in str(exc) and "is damaged: record" in str(exc)
        else:
            assert all(message_problem(m) is None for m in conversation)
        replayer = Replayer({}, Path(folder))
        for record in records:  # ACP's replay of the same records never raises
            list(replayer.updates(record))
        replayer.finish()


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ({"role": "assistant", "content": "x", "tool_calls": 5}, '"tool_calls" is 5, not a list'),
        ({"role": 7}, '"role" is 7'),
        ({"role": "user", "content": 5}, '"content" is 5'),
        ({"role": "tool", "content": "x"}, '"tool_call_id" is None'),
        ({"role": "assistant", "tool_calls": [{"id": "a"}]}, "a tool call is a JSON object"),
    ],
)
def test_message_problem_names_the_field(message: dict[str, Any], problem: str) -> None:
    found = message_problem(message)
    assert found is not None and found.startswith(problem), found


def test_the_agents_own_messages_have_no_problem() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    for message in (
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "reasoning_content": "t", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "out"},
        {"role": "system", "content": "s"},
    ):
        assert message_problem(message) is None
