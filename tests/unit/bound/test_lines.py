"""``headwire.bound.lines``: the quick check of a run of short lines."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from headwire.bound import quick_line_problem, run_passes_quick_check
from tests.unit.bound.legacy_filter import legacy_lines_pass_quick_check

_BODIES = (
    st.binary(max_size=12)
    .map(lambda b: b.replace(b"\n", b""))
    .flatmap(
        lambda b: st.sampled_from(
            [b"{" + b + b"}", b"[" + b + b"]", b, b"{" + b, b"{" + b + b"}\r", b" " + b + b"]"]
        )
    )
)
_ODD = st.sampled_from(
    [b"", b"{", b"}", b"{}", b"[]", b'{"\xed\xa0\x80"}', b'{"\xc3"}', b'{"\xc3\xa9"}', b"{\xff}"]
)


def _passes_unparsed(line: bytes) -> bool:
    """The per-line rule: opens with ``{``/``[``, closes with ``}``/``]``, strict UTF-8."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return len(line) >= 2 and line[0] in b"{[" and line[-1] in b"}]"


@given(st.lists(st.one_of(_BODIES, _ODD), min_size=1, max_size=8), st.integers(0, 3))
def test_the_run_check_decides_like_the_per_line_check(bodies: list[bytes], lead: int) -> None:
    """Invariant (issue 28): the run check on ``readlines`` output (from anywhere in a chunk)
    accepts exactly the runs whose every line passes the per-line rule, which
    :func:`quick_line_problem` then accepts too; and it agrees with the check it replaced."""
    run = b"".join(body + b"\n" for body in bodies)
    data = b"x" * lead + run  # the run inside a larger chunk, as the filter has it
    reader = io.BytesIO(data)
    reader.seek(lead)
    lines = reader.readlines(len(run))
    assert lines == [body + b"\n" for body in bodies]
    for ascii in {data.isascii(), False}:  # the chunk's flag, or no flag
        passed = run_passes_quick_check(lines, ascii)
        assert passed == all(map(_passes_unparsed, bodies))
        assert passed == legacy_lines_pass_quick_check(list(bodies), run)
        if passed:
            assert all(quick_line_problem(body) is None for body in bodies)
