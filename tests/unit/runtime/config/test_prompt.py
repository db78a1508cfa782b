"""The system prompt's assembly (upstream's layers and separator)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.config.prompt import SEPARATOR, build_system_prompt


def test_layers_in_upstream_order() -> None:
    out = build_system_prompt(None, "  ctx  \n", "more", default="BASE")
    assert out == "BASE\n\n---\n\nctx\n\n---\n\nmore"
    assert build_system_prompt("mine", "", None, default="BASE") == "mine"
    assert build_system_prompt("mine", " ", " \n", default="BASE") == "mine"
    assert build_system_prompt("", "ctx", "more", default="BASE") == "ctx\n\n---\n\nmore"
    assert build_system_prompt(None, None, "more", default="BASE") == "BASE\n\n---\n\nmore"


@given(st.none() | st.text(), st.text(), st.none() | st.text())
def test_base_comes_first_and_every_nonblank_layer_is_kept(
    base: str | None, context: str, append: str | None
) -> None:
    """Invariant: the prompt starts with the base (or default), and contains each non-blank
    layer trimmed, context before appended text."""
    out = build_system_prompt(base, context, append, default="DEFAULT")
    head = "DEFAULT" if base is None else base
    assert out.startswith(head) or not head
    tail = out[len(head) :] if head else SEPARATOR + out
    expected = "".join(SEPARATOR + t.strip() for t in (context, append or "") if t.strip())
    assert tail == expected or (not head and out == expected.removeprefix(SEPARATOR))
