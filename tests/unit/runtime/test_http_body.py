"""Bodies decoded in bounded steps (:mod:`headwire.runtime.http_body`)."""

from __future__ import annotations

import gzip
import itertools
import time
import zlib
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.http_body import STEP_BYTES, BodyTooLarge, BodyUndecodable, ContentDecoder


def deflate(data: bytes, raw: bool = False) -> bytes:
    obj = zlib.compressobj(wbits=-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
    return obj.compress(data) + obj.flush()


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "deflate": deflate,
    "identity": lambda b: b,
}


def encode(data: bytes, encodings: list[str]) -> bytes:
    for name in encodings:
        data = ENCODERS[name](data)
    return data


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def decode(chunks: list[bytes], encodings: list[str], max_bytes: int | None = None) -> bytes:
    decoder = ContentDecoder(encodings, max_bytes)
    out = []
    for chunk in chunks:
        for piece in decoder.feed(chunk):
            assert 0 < len(piece) <= STEP_BYTES
            out.append(piece)
    return b"".join(out)


@settings(max_examples=150, deadline=None)
@given(
    data=st.binary(max_size=3000) | st.integers(0, 300_000).map(lambda n: b"ab" * n),
    encodings=st.lists(st.sampled_from(sorted(ENCODERS)), max_size=3),
    cuts=st.lists(st.integers(0, 10**6), max_size=8),
)
def test_any_chunking_decodes_to_the_body_in_bounded_steps(
    data: bytes, encodings: list[str], cuts: list[int]
) -> None:
    """The docstring's invariant: whatever the chunks, the pieces join to the body and none is
    longer than a step."""
    assert decode(chunked(encode(data, encodings), cuts), encodings) == data


def test_gzip_members_raw_deflate_and_trailing_bytes() -> None:
    assert decode([gzip.compress(b"one") + gzip.compress(b"two")], ["gzip"]) == b"onetwo"
    assert decode([gzip.compress(b"one"), gzip.compress(b"two")], ["gzip"]) == b"onetwo"
    assert decode([gzip.compress(b"one") + b"\0\0junk"], ["gzip"]) == b"one"
    assert decode([deflate(b"raw", raw=True)], ["deflate"]) == b"raw"
    assert decode([b"stays", b" as is"], ["unheard-of"]) == b"stays as is"
    with pytest.raises(BodyUndecodable):
        decode([b"not gzip at all"], ["gzip"])
    with pytest.raises(BodyUndecodable, match="'br' is not supported"):
        ContentDecoder(["br"])


@pytest.mark.parametrize(
    "encodings", [["gzip"], ["deflate"], ["gzip", "gzip"], ["deflate", "gzip", "gzip"]]
)
def test_a_bomb_stops_at_the_cap_having_produced_at_most_one_step_past_it(
    encodings: list[str],
) -> None:
    """64 MiB of zeros packed small (to 300 bytes when stacked): the cap is hit after about
    ``max_bytes`` of output, at once."""
    body = encode(bytes(64 * 1024 * 1024), encodings)
    cap = 10 * 1024 * 1024
    started = time.monotonic()
    produced = 0
    with pytest.raises(BodyTooLarge):
        for piece in ContentDecoder(encodings, cap).feed(body):
            produced += len(piece)
    assert produced <= cap
    assert time.monotonic() - started < 5
