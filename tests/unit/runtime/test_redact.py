"""Registered secrets, whole or cut once, never survive :func:`headwire.runtime.redact.redact`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime import environment
from headwire.runtime.redact import MASK, MIN_FRAGMENT, redact
from headwire.runtime.tools.base import ToolOutcome
from headwire.runtime.tools.redacted import redact_outcome

SECRET_ALPHABET = st.characters(exclude_characters="*", exclude_categories=("Cs",))


@pytest.fixture(autouse=True)
def _no_secrets(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(environment, "_secret_values", set())
    yield


def _pieces(secret: str) -> list[str]:
    return [secret[:i] for i in range(len(secret) + 1)] + [secret[i:] for i in range(len(secret))]


@given(
    st.text(SECRET_ALPHABET, min_size=MIN_FRAGMENT, max_size=40),
    st.lists(st.one_of(st.text(SECRET_ALPHABET, max_size=6), st.integers(0, 200)), max_size=12),
)
def test_no_secret_or_cut_of_one_survives(secret: str, plan: list[str | int]) -> None:
    """Invariant: for every cut ``i``, neither ``s``, ``s[:i]`` nor ``s[i:]`` (when at least
    MIN_FRAGMENT long) appears in the result, as text or as UTF-8 bytes."""
    environment._secret_values.clear()
    environment.register_secret(secret)
    secret = secret.strip()
    if len(secret) < MIN_FRAGMENT:
        return
    pieces = _pieces(secret)
    text = "".join(p if isinstance(p, str) else pieces[p % len(pieces)] for p in plan)
    out = redact(text)
    out_bytes = redact(text.encode())
    for piece in pieces:
        if len(piece) >= MIN_FRAGMENT:
            assert piece not in out
            assert piece.encode() not in out_bytes
    if text == out:
        assert out is text  # nothing found: the very same object


def test_what_is_replaced_and_what_is_kept() -> None:
    key = "sk-abcdefghijklmnop"
    environment.register_secret(key)
    environment.register_secret("short")  # under MIN_FRAGMENT: never scrubbed from output
    assert redact(f"key={key};") == f"key={MASK};"
    assert redact(f"[{key[:9]}] [{key[-8:]}] [{key[:7]}]") == f"[{MASK}] [{MASK}] [{key[:7]}]"
    assert redact(f"{key}{key}") == MASK
    assert redact("a short word") == "a short word"
    assert redact(f"caf\udce9 {key}".encode("utf-8", "surrogateescape")) == b"caf\xe9 ***"


def test_outcomes_are_scrubbed_everywhere_and_kept_when_clean() -> None:
    clean = ToolOutcome(llm_text="x", display="y")
    assert redact_outcome(clean) is clean  # nothing registered
    key = "sk-abcdefghijklmnop"
    environment.register_secret(key)
    outcome = ToolOutcome(
        llm_text=key, display=f"d {key}", error=key[:10], extra={"diff": [key], "n": 1}
    )
    scrubbed = redact_outcome(outcome)
    assert (scrubbed.llm_text, scrubbed.display, scrubbed.error) == (MASK, f"d {MASK}", MASK)
    assert scrubbed.extra == {"diff": [MASK], "n": 1}
