"""The fast path of ``headwire bound`` (issue 28) against the filter it replaced.

:class:`~tests.unit.bound.legacy_filter.LegacyBoundFilter` is the stream as it was before the
runs of short lines were split by ``readlines`` and passed on as views; for every stream (short
and long lines, blank, CRLF, indented, invalid UTF-8, lone surrogates, lines at the fast-path
length, a last line without terminator, long lines cut across chunks) and every split, the new
filter writes the same bytes, the same warnings and the same counts.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire.bound import FAST_PATH_LINE_BYTES, BoundFilter, Format, quick_line_problem
from headwire.wire import encode
from tests.strategies import adversarial_text
from tests.unit.bound.legacy_filter import LegacyBoundFilter
from tests.unit.wire.test_utf8 import without_native


def _tool_result(content: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": content}
    return {"type": "user", "uuid": "u", "message": {"role": "user", "content": [block]}}


def _at_length(length: int) -> bytes:
    """A JSON line of exactly ``length`` bytes, terminator included."""
    return b'{"a":"' + b"x" * (length - 9) + b'"}\n'


_ODD = [
    b"\n",
    b"\r\n",
    b"   \n",
    b"garbage\n",
    b'{"a":\xff}\n',
    b'{"x":"\\ud800"}\n',
    b'{"a":}\n',
    b'{"b":"\xed\xa0\x80"}\n',
    b" [1]\r\n",
    b'"str"\n',
    b"7\n",
    b'{"\xc3\xa9":1}\n',
    b"{\n",
    b"}\n",
    b"[1]\r\n",
    b'{"a":"\xc3"}\n',
    b'{"\xf0\x9f\x98\x80":2}\n',
]


def _lines() -> st.SearchStrategy[bytes]:
    short = st.one_of(
        st.builds(lambda t: encode({"type": "assistant", "text": t}) + b"\n", adversarial_text(30)),
        st.sampled_from(_ODD),
        st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"") + b"\n"),
        st.binary(max_size=30).map(lambda b: b"{" + b.replace(b"\n", b"") + b"}\n"),
    )
    long = st.builds(
        lambda t, n, end: encode(_tool_result(t * n)) + end,
        adversarial_text(6).filter(bool),
        st.integers(1, 25_000),
        st.sampled_from([b"\n", b"\r\n", b"  \n"]),
    )
    long_bad = st.sampled_from(
        [b'{"type":"user","x":"' + b"y" * 70_000 + b"\n", b"{" + b"\xff" * 70_000 + b"}\n"]
    )
    edge = st.sampled_from([FAST_PATH_LINE_BYTES + d for d in (-1, 0, 1, 2)]).map(_at_length)
    return st.one_of(short, short, short, short, long, long_bad, edge)


def _run(flt: Any, chunks: list[bytes]) -> bytes:
    out: list[bytes] = []
    for chunk in chunks:
        out += [bytes(piece) for piece in flt.feed(chunk)]
    out += [bytes(piece) for piece in flt.close()]
    return b"".join(out)


def _chunks(data: bytes, cuts: list[int], size: int) -> list[bytes]:
    if size:  # fixed-size reads, like the command's
        return [data[i : i + size] for i in range(0, len(data), size)]
    positions = sorted({c % (len(data) + 1) for c in cuts})
    edges = zip([0, *positions], [*positions, len(data)], strict=True)
    return [data[a:b] for a, b in edges if b > a]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_lines(), max_size=14),
    st.sampled_from([b"", b"x", b"{}", b"\r", b"{\xff}"]),
    st.lists(st.integers(0, 400_000), max_size=12),
    st.sampled_from([0, 0, 1, 7, 4096, 65_536, 1 << 20]),
    st.booleans(),
    st.sampled_from(list(Format)),
    st.booleans(),
)
def test_the_fast_path_writes_what_the_old_filter_wrote(
    lines: list[bytes],
    tail: bytes,
    cuts: list[int],
    size: int,
    validate: bool,
    fmt: Format,
    native: bool,
) -> None:
    """Invariant: byte-identical output, warnings and counts to the filter before issue 28,
    for any stream and any split, with simdjson's UTF-8 validator or without it."""
    data = b"".join(lines) + tail
    chunks = _chunks(data, cuts, size)
    new, old = BoundFilter(fmt, validate=validate), LegacyBoundFilter(fmt, validate=validate)
    with nullcontext() if native else without_native():
        assert _run(new, chunks) == _run(old, chunks)
    assert new.warnings == old.warnings
    s = new.stats
    assert (
        s.lines,
        s.bounded_lines,
        s.bounded_fields,
        s.field_bytes_before,
        s.field_bytes_after,
        s.malformed_lines,
    ) == old.stats.as_tuple()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(_ODD), _lines().filter(lambda b: len(b) < 200)), max_size=20
    ),
    st.integers(0, 50),
)
def test_the_fast_path_warns_like_the_line_by_line_path(lines: list[bytes], lead: int) -> None:
    """Invariant: a run of short lines, checked whole and then line by line only if it fails,
    gives the warnings of :func:`quick_line_problem` on each line alone, numbered from 1,
    wherever the run starts in the chunk."""
    prefix = b'{"p":"' + b"q" * lead + b'"}\n'
    flt = BoundFilter()
    _run(flt, [prefix[:3], prefix[3:] + b"".join(lines)])
    expected = []
    for number, line in enumerate(lines, 2):
        problem = quick_line_problem(line[:-1])
        if problem is not None:
            expected.append((number, problem))
    assert flt.warnings == expected
    assert flt.stats.lines == len(lines) + 1
    assert flt.stats.malformed_lines == len(expected)


@given(
    st.lists(
        st.builds(lambda t: encode({"type": "assistant", "text": t}) + b"\n", adversarial_text(20)),
        min_size=1,
        max_size=30,
    ),
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")),
)
def test_a_run_of_short_lines_goes_out_as_the_bytes_that_came_in(
    lines: list[bytes], partial: bytes
) -> None:
    """A chunk of short lines is one piece: the chunk itself (no copy), or a view of it after
    the line a previous chunk began; its bytes are exactly those that came in."""
    run = b"".join(lines)
    flt = BoundFilter()
    (piece,) = flt.feed(run)
    assert piece is run
    head = b'{"a":1}'
    flt = BoundFilter()
    assert flt.feed(head[:4]) == []
    chunk = head[4:] + b"\n" + run + partial
    first, second = flt.feed(chunk)
    assert bytes(first) == head + b"\n"
    assert isinstance(second, memoryview) and second.obj is chunk
    assert bytes(second) == run
    assert flt.warnings == []


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(
        [
            b'{"type":"user","x":"' + b"y" * 70_000 + b"\n",  # cut short: not JSON
            b'{"type":"assistant","text":"' + b"z" * 70_000 + b'"}\n',  # nothing to bound
        ]
    ),
    st.lists(st.sampled_from([b'{"a":1}\n', b"[2]\n"]), max_size=3),
)
def test_a_long_line_left_as_it_is_goes_out_without_a_copy(long: bytes, short: list[bytes]) -> None:
    """A long line that needs no change (or cannot be read) is a view of the chunk read, so
    the filter never copies the bulk of a stream it does not rewrite."""
    chunk = b"".join(short) + long + b"".join(short)
    flt = BoundFilter()
    pieces = flt.feed(chunk)
    views = [p for p in pieces if len(p) == len(long)]
    assert len(views) == 1
    (view,) = views
    assert isinstance(view, memoryview) and view.obj is chunk
    assert b"".join(bytes(p) for p in pieces) == chunk
    assert flt.stats.lines == 1 + 2 * len(short)
