"""An artifact written from a text a piece at a time is the file ``save`` writes from the whole
encoding: surrogates by the chosen rule, registered secrets scrubbed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire.runtime import environment
from headwire.runtime.store import storage
from headwire.runtime.store.storage import ArtifactStore, encode_text
from tests.strategies import adversarial_text

SECRETS = ["sk-test-0123456789abcdef", "pässwörd-lang-genug"]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(environment, "_secret_values", set())
    monkeypatch.setattr("headwire.wire.pieces.PIECE_CHARS", 5)
    yield


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    st.lists(st.one_of(adversarial_text(8), st.sampled_from(SECRETS + [s[:9] for s in SECRETS]))),
    st.sampled_from(["replace", "pass"]),
    st.sets(st.sampled_from(SECRETS)),
)
def test_save_text_writes_the_file_save_writes(
    tmp_path: Path, parts: list[str], surrogates: storage.SurrogateRule, secrets: set[str]
) -> None:
    environment._secret_values.clear()
    for secret in secrets:
        environment.register_secret(secret)
    text = "".join(parts)
    store = ArtifactStore(tmp_path, tmp_path)
    whole = store.save("t", encode_text(text, surrogates)).read_bytes()
    assert store.save_text("t", text, surrogates).read_bytes() == whole
    # one code point at a time: the encoding of a text is that of its slices, joined
    assert encode_text(text, surrogates) == b"".join(
        encode_text(text[i : i + 3], surrogates) for i in range(0, len(text), 3)
    )
