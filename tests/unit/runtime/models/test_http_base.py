"""The shared HTTP plumbing: SSE framing under any chunking, retry hints, error texts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.models.base import MAX_ERROR_CHARS, ModelError, Usage, error_message
from headwire.runtime.models.http_base import display_url, error_text, retry_after_s
from headwire.runtime.models.sse import SseEvent, sse_events

_line = st.text(alphabet=st.characters(blacklist_characters="\r\n", codec="utf-8"), max_size=30)
_events = st.lists(
    st.tuples(
        st.sampled_from(["", "message_start", "ping"]), st.lists(_line, min_size=1, max_size=3)
    ),
    max_size=6,
)


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, data: bytes, cuts: list[int]) -> None:
        self.pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def _decode(data: bytes, cuts: list[int]) -> list[SseEvent]:
    async def go() -> list[SseEvent]:
        response = httpx.Response(200, stream=_Chunks(data, cuts))
        return [event async for event in sse_events(response)]

    return asyncio.run(go())


def _body(events: list[tuple[str, list[str]]], newline: str, last_blank: bool) -> str:
    out = [": keep-alive" + newline + newline]
    for number, (name, data) in enumerate(events):
        if name:
            out.append(f"event: {name}{newline}")
        out.append(f"id: {number}{newline}retry: 10{newline}")
        out += [f"data: {line}{newline}" for line in data]
        if last_blank or number < len(events) - 1:
            out.append(newline)
    return "".join(out)


@given(_events, st.sampled_from(["\n", "\r\n"]), st.booleans(), st.data())
def test_events_survive_any_chunking(
    events: list[tuple[str, list[str]]], newline: str, last_blank: bool, data: st.DataObject
) -> None:
    """Comments, ``id`` and ``retry`` fields are skipped, LF and CRLF both end lines, and a last
    event without its blank line still counts, however the bytes are cut."""
    body = _body(events, newline, last_blank).encode()
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(body)), max_size=8))))
    decoded = _decode(body, cuts)
    expected = [SseEvent(name, lines) for name, lines in events]
    assert decoded == expected


def test_retry_after_forms() -> None:
    assert retry_after_s(httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert retry_after_s(httpx.Headers({"retry-after": "3"})) == 3.0
    assert retry_after_s(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert retry_after_s(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_s(httpx.Headers({})) is None


def test_error_texts_are_one_line() -> None:
    assert (
        error_text(b'{"type":"error","error":{"type":"x","message":"bad\\n thing"}}') == "bad thing"
    )
    assert error_text(b'[{"error": {"code": 400, "message": "nope"}}]') == "nope"
    assert error_text(b"<html>\n<body>502</body>\n</html>") == "<html> <body>502</body> </html>"
    assert error_text(b"") == "(empty response body)"
    assert len(ModelError(error_text(b"x" * 2000)).message) == 503


@given(st.text(max_size=6000), st.integers(1, 700))
def test_a_model_error_is_one_line_of_at_most_the_limit(text: str, limit: int) -> None:
    """:func:`error_message`'s invariant: one line (no line break str.split knows), at most
    ``limit`` characters plus the ``...`` of a cut; ModelError applies it with 500."""
    short = error_message(text, limit)
    assert len(short) <= limit + 3
    assert short == " ".join(short.split())
    assert len(ModelError(text).message) <= MAX_ERROR_CHARS + 3


def test_display_url_hides_passwords() -> None:
    assert display_url("http://user:pw@host:1/v1") == "http://host:1/v1"
    assert display_url("https://api.example/v1") == "https://api.example/v1"


@given(
    st.tuples(*[st.integers(0, 10**9)] * 5),
    st.tuples(*[st.integers(0, 10**9)] * 5),
)
def test_usage_adds_field_by_field(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    assert Usage(*a) + Usage(*b) == Usage(*(x + y for x, y in zip(a, b, strict=True)))


@given(
    st.text(alphabet="abcdefXYZ0123456789-_", min_size=8, max_size=40),
    st.text(max_size=40),
    st.text(max_size=40),
)
def test_no_error_message_holds_the_key(key: str, before: str, after: str) -> None:
    """Whatever a server puts around the key, the message a user sees has ``***`` instead."""
    from headwire.runtime.models.anthropic import AnthropicModel

    model = AnthropicModel("http://user:pw@127.0.0.1:1", key, "m")
    message = model._error(f"{before}{key}{after}").message
    assert key not in message and "***" in message
    assert "pw" not in model.display_base_url
