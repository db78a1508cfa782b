"""The two tool-result boundaries side by side: one model text, two documented selections."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.boundary import (
    EXECUTION_DENIED,
    acp_content_text,
    acp_tool_result_update,
    headless_tool_result,
    permission_denial,
    select_display,
)
from headwire.events import ToolResponse
from headwire.projection import project_acp_tool_call_update, project_tool_result_content
from headwire.wire import encode

TEXT = st.one_of(st.none(), st.just(""), st.just(" "), st.text(max_size=50), st.just("x" * 200_000))
META = {"toolName": "t", "provenance": "builtin"}


def response(**kw: str | None) -> ToolResponse:
    return ToolResponse(call_id="c", name="t", args={"a": 1}, **kw)  # type: ignore[arg-type]


def test_headless_prefers_the_display_and_acp_the_model_text() -> None:
    r = response(output="what the model saw", display="what a person sees")
    assert select_display(r) == "what a person sees"
    assert acp_content_text(r) == "what the model saw"
    update = acp_tool_result_update(r, META)
    assert update["content"][0]["content"]["text"] == "what the model saw"
    assert update["rawOutput"] == "what a person sees"


def test_without_a_display_both_show_the_model_text() -> None:
    r = response(output="the bounded model text")
    block = headless_tool_result(r, uuid="u", session_id="s", parent_tool_use_id=None)
    assert block["message"]["content"][0]["content"] == "the bounded model text"
    assert (
        acp_tool_result_update(r, META)["content"][0]["content"]["text"] == "the bounded model text"
    )
    assert "rawOutput" not in acp_tool_result_update(r, META)


def test_errors_win_on_both_wires() -> None:
    r = response(part_error="detail", error="short", error_type=EXECUTION_DENIED)
    assert select_display(r) == "detail" and acp_content_text(r) == "short" and r.failed
    assert permission_denial(r) == {"tool_name": "t", "tool_use_id": "c", "tool_input": {"a": 1}}
    assert permission_denial(response(error="x", error_type="execution_failed")) is None


@given(TEXT, TEXT, TEXT, TEXT)
def test_every_result_is_bounded_and_the_input_untouched(
    output: str | None, part_error: str | None, error: str | None, display: str | None
) -> None:
    r = response(output=output, part_error=part_error, error=error, display=display)
    before = (r.output, r.part_error, r.error, r.display)
    message = headless_tool_result(r, uuid="u", session_id="s", parent_tool_use_id="p")
    (block,) = message["message"]["content"]
    selected = select_display(r)
    if selected is None:
        assert "content" not in block
    else:
        assert block["content"] == project_tool_result_content(selected)
        assert len(encode(block["content"])) <= 65_536
    assert block["is_error"] is r.failed and message["parent_tool_use_id"] == "p"
    update = acp_tool_result_update(r, META)
    assert update == project_acp_tool_call_update(update)  # already projected: a fixed point
    assert (r.output, r.part_error, r.error, r.display) == before


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 140_000), st.sampled_from(["x", "\n", "é", '"']))
def test_bound_record_iff_the_bound_cut(size: int, char: str) -> None:
    """A ``tool_result_bound`` record exists exactly when the projection changed the content;
    its byte counts are the JSON sizes before and after."""
    from headwire.boundary import bound_record
    from headwire.projection import project_tool_result_content
    from headwire.wire import encode

    text = char * size
    response = ToolResponse(call_id="c", name="shell", args={}, output=text, display=text)
    asked: list[bool] = []
    record = bound_record(
        response,
        session_id="s",
        parent_tool_use_id=None,
        artifact=lambda: asked.append(True) or None,
    )
    shown = project_tool_result_content(text)
    if shown == text:
        assert record is None and not asked
    else:
        assert record is not None and asked == [True] and record["artifact"] is None
        assert record["original_json_bytes"] == len(encode(text))
        assert record["shown_json_bytes"] == len(encode(shown)) <= 65_536
