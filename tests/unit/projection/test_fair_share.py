"""``headwire.projection.fair_share``: texts sharing one payload budget."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from headwire.projection import ACP_TRUNCATION_MARKER, HEADLESS_TRUNCATION_MARKER
from headwire.projection.fair_share import share_payload_budget
from headwire.wire import payload_bytes
from tests.strategies import adversarial_text

texts_st = st.lists(
    st.tuples(adversarial_text(12), st.integers(0, 3000)).map(lambda t: t[0] * t[1]), max_size=6
)


@given(
    texts_st,
    st.integers(0, 40_000),
    st.sampled_from([HEADLESS_TRUNCATION_MARKER, ACP_TRUNCATION_MARKER]),
)
def test_shared_texts_fit_and_keep_what_fits(texts: list[str], available: int, marker: str) -> None:
    """Invariant: the texts itself when they fit; ``None`` only when a marker per text does not
    fit; otherwise the payloads add up to at most ``available``, a text that keeps its share is
    the same object, and a cut text holds the marker."""
    shared = share_payload_budget(texts, available, marker)
    total = sum(payload_bytes(t) for t in texts)
    if total <= available:
        assert shared is texts
        return
    reserve = payload_bytes(marker)
    if shared is None:
        assert sum(min(payload_bytes(t), reserve) for t in texts) > available
        return
    assert sum(payload_bytes(t) for t in shared) <= available
    assert len(shared) == len(texts)
    for before, after in zip(texts, shared, strict=True):
        assert after is before or marker in after
