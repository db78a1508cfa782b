"""RE2 stands in for Python ``re`` only with the same meaning, and in linear time."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from headwire.runtime.tools.glob import compile_glob
from headwire.runtime.tools.grep import compile_linear_pattern
from headwire.runtime.tools.linear_regex import NotLinear, compile_linear, translate

FREEZE_LINE = b"def compute_total_price_for_all_items_in_cart(self, items, discount):\n"

ATOMS = ["a", "b", "1", ".", r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", "[ab]", "[^a]", r"[\w-]"]
ATOMS += ["é", "ß", r"\.", "[0-9]", r"[\s\d]", "_"]


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.booleans()):
            atom = "(?:" + draw(patterns(depth + 1)) + ")"
        else:
            atom = draw(st.sampled_from(ATOMS))
        parts.append(atom + draw(st.sampled_from(["", "", "*", "+", "?", "{1,2}"])))
    body = "".join(parts)
    if draw(st.booleans()):
        body += "|" + draw(st.sampled_from(ATOMS))
    return draw(st.sampled_from(["", "^"])) + body + draw(st.sampled_from(["", "$"]))


SUBJECTS = st.text(alphabet="abAB1 é_-.\n\tßΩ٣\u00a0", max_size=30)


@settings(max_examples=400, deadline=None)
@given(patterns(), SUBJECTS)
@example("(?:(?:1)*|a)*", "1a")  # found by the suite: the ends differ, the start does not
def test_translated_patterns_mean_what_python_means(pattern: str, subject: str) -> None:
    """Whatever :func:`translate` accepts finds a match exactly where Python ``re`` does, and
    it starts at the same place (case-insensitive, multi-line, as ``grep_search`` runs it):
    ``grep_search`` selects lines by where a match starts.  The end may differ for a starred
    group that can match empty (``(?:(?:1)*|a)*`` on ``1a``: Python stops the star at the
    empty iteration, RE2 goes on), which selects the same lines."""
    python = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    try:
        linear = compile_linear(pattern, ignore_case=True, multiline=True)
    except NotLinear:
        return
    data = subject.encode()
    expected = python.search(subject)
    found = linear.search(data)
    if expected is None:
        assert found is None
        return
    assert found is not None
    start, end = found
    assert len(data[:start].decode()) == expected.start()
    if expected.end() != len(data[:end].decode()):  # only past an empty-matching iteration
        assert re.search(r"\)[*+?{]|[*?]\)", pattern), (pattern, subject)


@pytest.mark.parametrize(
    "pattern",
    [r"\bword\b", r"(a)\1", r"foo(?=bar)", r"(?<=a)b", r"(?<!a)b", r"a{,3}", r"[\W]", "a*+"],
)
def test_what_re2_cannot_mean_the_same_is_refused(pattern: str) -> None:
    with pytest.raises(NotLinear):
        compile_linear(pattern)


def test_translation_keeps_escapes_and_classes() -> None:
    assert translate(r"\\w") == r"\\w"  # a literal backslash, then w
    assert translate(r"(?<name>x)\Z") == r"(?P<name>x)\z"
    assert translate(r"[\d_]") == r"[\p{Nd}_]"


def test_catastrophic_patterns_run_in_linear_time() -> None:
    """The patterns that froze headwire (Python ``re`` backtracking) finish at once."""
    started = time.monotonic()
    regex = compile_linear_pattern(r"(\w+\s?)+$")
    assert regex.search(FREEZE_LINE * 1000) is None
    dotstar = compile_linear_pattern(".*foo")
    assert dotstar.search(b"x" * 100_000 + b"\n") is None
    glob = compile_glob("*a*a*a*a*a*a*a*a*a*a*b")
    assert not glob.match("a" * 60)
    assert glob.match("a" * 60 + "b")
    assert time.monotonic() - started < 1.0


def test_non_utf8_names_match_like_python() -> None:
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    assert compile_glob("*.txt").match(name)
    assert compile_glob("caf?.txt").match(name)
