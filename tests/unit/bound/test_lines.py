"""``headwire.bound.lines``: the quick check of a run of short lines."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st


@given(
    st.lists(
        st.binary(max_size=12)
        .map(lambda b: b.replace(b"\n", b""))
        .flatmap(lambda b: st.sampled_from([b"{" + b + b"}", b"[" + b + b"]", b, b"{" + b])),
        min_size=1,
        max_size=8,
    )
)
def test_the_block_utf8_check_decides_like_the_line_one(lines: list[bytes]) -> None:
    """Checking the joined block for UTF-8 (issue 28: no copy of its non-ASCII lines) gives
    the per-line answer for any lines."""
    from headwire.bound.lines import lines_pass_quick_check

    block = b"".join(line + b"\n" for line in lines)
    assert lines_pass_quick_check(list(lines), block) == lines_pass_quick_check(list(lines))
