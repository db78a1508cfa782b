"""One model-side bound: the agent's and the shell's envelopes, and unknown-tool suggestions."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.tools.base import ToolOutcome
from headwire.runtime.tools.output import MODEL_TEXT_BUDGET, model_text, truncated_envelope
from headwire.runtime.tools.registry import suggest_tool_name, unknown_tool_message


class Sink:
    def __init__(self, fail: bool = False) -> None:
        self.saved: list[bytes] = []
        self.fail = fail

    def save(self, tool_name: str, data: bytes) -> Path:
        if self.fail:
            raise OSError(28, "No space left on device")
        self.saved.append(data)
        return Path(f"/artifacts/{tool_name}_{len(self.saved)}.output")


def _old_model_text(text: str, where: str) -> str:
    """The agent's text before it moved to ``output.py`` (kept to prove it unchanged)."""
    head = MODEL_TEXT_BUDGET // 5
    tail = MODEL_TEXT_BUDGET - head
    return (
        f"Tool output was too large and has been truncated.\n{where}"
        f"Truncated part of the output:\n"
        f"{text[:head]}\n... [{len(text) - head - tail} characters omitted] ...\n{text[-tail:]}"
    )


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=1, max_size=40), st.integers(-5, 50))
def test_model_text_is_the_agents_text(unit: str, extra: int) -> None:
    """Whole up to the budget; beyond it the same head/tail text as before, the whole text
    saved once as the artifact."""
    size = MODEL_TEXT_BUDGET + extra
    text = (unit * (size // len(unit) + 1))[:size]
    sink = Sink()
    outcome = ToolOutcome(llm_text=text)
    got = model_text("t", outcome, sink)
    if len(text) <= MODEL_TEXT_BUDGET:
        assert got == text and sink.saved == []
        return
    where = (
        "The full output has been saved to: /artifacts/t_1.output\n"
        "To read the complete output, use the read_file tool with the absolute file path above.\n"
    )
    assert got == _old_model_text(text, where)
    assert sink.saved == [text.encode("utf-8", "surrogatepass")]
    assert outcome.artifact == Path("/artifacts/t_1.output")


def test_model_text_when_the_artifact_cannot_be_saved() -> None:
    text = "x" * (MODEL_TEXT_BUDGET + 1)
    got = model_text("t", ToolOutcome(llm_text=text), Sink(fail=True))
    reason = "OSError: [Errno 28] No space left on device"
    assert got == _old_model_text(text, f"The full output could not be saved ({reason}).\n")


def test_shell_envelope_names_the_file() -> None:
    text = truncated_envelope("line\n" * 10_000, Path("/a/b.output"))
    assert text.startswith(
        "Tool output was too large and has been truncated.\n"
        "The full output has been saved to: /a/b.output\n"
    )
    assert "... [CONTENT TRUNCATED] ..." in text


def test_unknown_tool_suggestions() -> None:
    names = ["read_file", "write_file", "run_shell_command", "grep_search", "glob", "edit"]
    assert suggest_tool_name("Bash", names) == "run_shell_command"
    assert suggest_tool_name("READ_FILE", names) == "read_file"
    assert suggest_tool_name("grep_serach", names) == "grep_search"
    assert suggest_tool_name("frobnicate", names) is None
    assert unknown_tool_message("Glob", names) == (
        'Tool "Glob" not found in registry. Tool names must match exactly; did you mean "glob"?'
    )
    assert "available tools: edit, glob," in unknown_tool_message("frobnicate", names)
