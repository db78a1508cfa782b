"""``--json-schema``: reading and checking the schema, and checking answers against it."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from headwire.runtime.agent.output_schema import (
    MAX_SCHEMA_BYTES,
    OutputSchemaError,
    check_schema,
    load_output_schema,
)
from headwire.runtime.agent.structured import StructuredOutput

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z]+$"},
        "n": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "patternProperties": {"^x-": {"type": "boolean"}},
    "required": ["name"],
    "additionalProperties": False,
}


def structured(schema: dict[str, Any] = SCHEMA) -> StructuredOutput:
    return StructuredOutput(schema, check_schema(schema))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('{"type": "objekt"}', "at type: 'objekt' is not valid under any of the given schemas"),
        ('{"properties": {"a": {"minimum": "3"}}}', "at properties/a/minimum: '3' is not of type"),
        ("[1]", "a JSON Schema must be a JSON object"),
        ("{nope", "--json-schema: not valid JSON (Expecting property name"),
        ('{"pattern": "(?=a)b"}', "cannot be matched in linear time"),
        ('{"pattern": "(a)\\\\1"}', "cannot be matched in linear time"),
        ('{"$ref": "https://example.com/s.json"}', "headwire fetches nothing"),
        ("missing.json", "cannot read"),
    ],
)
def test_a_bad_schema_is_one_clear_line(value: str, says: str, tmp_path: Path) -> None:
    with pytest.raises(OutputSchemaError) as caught:
        load_output_schema(value, tmp_path)
    message = str(caught.value)
    assert says in message and "\n" not in message and message.startswith("--json-schema")


def test_files_at_forms_and_what_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(SCHEMA))
    assert load_output_schema("s.json", tmp_path)[0] == SCHEMA
    assert load_output_schema(f"@{path}", Path("/"))[0] == SCHEMA
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OutputSchemaError, match="not a regular file"):
        load_output_schema("fifo", tmp_path)  # refused at once, never blocks
    (tmp_path / "big.json").write_bytes(b" " * (MAX_SCHEMA_BYTES + 1))
    with pytest.raises(OutputSchemaError, match="larger than"):
        load_output_schema("big.json", tmp_path)
    (tmp_path / "secret.json").write_text("password=hunter2")
    with pytest.raises(OutputSchemaError) as caught:
        load_output_schema("secret.json", tmp_path)
    assert "hunter2" not in str(caught.value)  # a wrong file's text is not echoed


def test_unknown_keywords_are_notes(tmp_path: Path) -> None:
    notes: list[str] = []
    load_output_schema('{"type": "object", "propertees": {}, "x-ui": 1}', tmp_path, notes.append)
    assert notes == [
        "headwire: note: --json-schema: unknown keyword 'propertees' at (root) (did you mean "
        "'properties'?); it is ignored"
    ]


def test_answers() -> None:
    check = structured().check
    assert check('{"name": "ab"}').value == {"name": "ab"}
    assert check('```json\n{"name": "ab", "x-y": true}\n```').ok
    assert check("  \n").problem == "the answer was empty, not a JSON value"
    assert "is not JSON" in check("Sure! Here it is").problem
    assert "NaN is not JSON" in check('{"name": NaN}').problem
    problem = check('{"name": "AB", "n": -1, "other": 1}').problem
    assert problem.startswith("it does not match the schema: ")
    assert "at /name: 'AB' does not match '^[a-z]+$'" in problem
    assert "at /n: -1 is less than the minimum of 0" in problem
    assert "additional properties are not allowed ('other')" in problem


def test_a_pattern_cannot_stall_the_check() -> None:
    schema = {"type": "string", "pattern": "^(a+)+b$"}
    started = time.monotonic()
    verdict = structured(schema).check(json.dumps("a" * 100_000 + "c"))
    assert not verdict.ok and time.monotonic() - started < 1.0  # Python's re: centuries


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(alphabet="abAB-", max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["name", "n", "tags", "x-a", "z"]), inner, max_size=4)
    ),
    max_leaves=8,
)


@given(json_values)
def test_an_answer_is_accepted_exactly_when_it_validates(value: Any) -> None:
    """Nothing that does not validate is ever accepted (the structured module's docstring),
    and everything that does is (RE2 patterns mean what the schema's patterns mean)."""
    verdict = structured().check(json.dumps(value))
    assert verdict.ok is Draft202012Validator(SCHEMA).is_valid(value)
    assert (verdict.value == value) if verdict.ok else verdict.problem


def test_deep_nesting_is_refused_not_a_crash(tmp_path: Path) -> None:
    deep = '{"not":' * 600 + "{}" + "}" * 600
    with pytest.raises(OutputSchemaError, match="nested deeper than 100 levels"):
        load_output_schema(deep, tmp_path)
    with pytest.raises(OutputSchemaError, match="nested deeper than 100 levels"):
        load_output_schema('{"not":' * 5000 + "{}" + "}" * 5000, tmp_path)  # json's own limit
    recursive = structured({"type": "array", "items": {"$ref": "#"}})
    assert recursive.check("[" * 50 + "]" * 50).ok
    verdict = recursive.check("[" * 5000 + "]" * 5000)
    assert not verdict.ok and ("nested" in verdict.problem or "recursion" in verdict.problem)


def test_the_check_in_the_worker_agrees_with_the_check_in_process() -> None:
    """The worker's verdict (:meth:`StructuredOutput.check_in_worker`) is the in-process one,
    value included (surrogates and non-ASCII survive the trip)."""
    import asyncio

    checker = structured()
    for text in ['{"name": "ab", "n": 3}', '{"name": "AB"}', "not json", '{"name": "\\ud800é"}']:
        assert asyncio.run(checker.check_in_worker(text)) == checker.check(text)


def test_an_answer_too_slow_to_check_is_refused_and_its_worker_killed() -> None:
    """30,000 objects under ``uniqueItems`` take ``jsonschema`` minutes: the check gives up at
    its timeout with a problem the model can act on, and the worker is gone at once."""
    import asyncio

    checker = structured({"type": "array", "uniqueItems": True})
    answer = json.dumps([{"k": i} for i in range(30_000)])
    started = time.monotonic()
    verdict = asyncio.run(checker.check_in_worker(answer, timeout_s=1.0))
    assert not verdict.ok
    assert "could not be checked" in verdict.problem
    assert time.monotonic() - started < 10


def test_every_worker_module_serves_through_the_one_worker() -> None:
    """The cancellable worker's users: each has a ``main`` that is the worker's ``serve``."""
    import importlib
    import inspect

    from headwire.runtime.tools.worker import WORKER_MODULES

    for name in WORKER_MODULES:
        module = importlib.import_module(name)
        assert "serve(" in inspect.getsource(module.main), name
    src = Path(importlib.import_module("headwire").__file__ or "").parent
    users = {
        ".".join(("headwire", *path.relative_to(src).with_suffix("").parts))
        for path in src.rglob("*.py")
        if "run_in_worker(" in path.read_text() and path.name != "worker.py"
    }
    assert users == set(WORKER_MODULES)


def _json_values(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(map(_json_values, value.values()))
    if isinstance(value, list):
        return 1 + sum(map(_json_values, value))
    return 1


def _work_units(value: Any) -> int:
    """The JSON values of ``value``, a ``pattern`` string weighing its units and each key of
    ``patternProperties`` twice its units (the rule of ``_values_within``, written plainly)."""
    from headwire.runtime.agent.structured import pattern_units

    if isinstance(value, list):
        return 1 + sum(map(_work_units, value))
    if not isinstance(value, dict):
        return 1
    units = 1 + sum(map(_work_units, value.values()))
    if isinstance(value.get("pattern"), str):
        units += pattern_units(value["pattern"]) - 1
    if isinstance(value.get("patternProperties"), dict):
        units += sum(2 * pattern_units(key) for key in value["patternProperties"])
    return units


_PATTERNS = st.sampled_from(["a+", "(", "[ab]*a[ab]{300}c", "^\\d{4}$", "x{1000}"])
_KEYS = ["type", "items", "$ref", "uniqueItems", "a", "unevaluatedItems", "pattern"]
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3) | _PATTERNS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS), children, max_size=4)
        | st.dictionaries(
            st.just("patternProperties"),
            st.dictionaries(_PATTERNS | st.text(max_size=3), children, max_size=3),
            max_size=1,
        )
    ),
    max_leaves=30,
)


@given(_json, st.integers(0, 200))
def test_bounded_work_counts_the_schemas_values_and_refuses_the_unbounded_keywords(
    schema: Any, budget: int
) -> None:
    """``_values_within`` is "at most ``budget`` JSON values, patterns weighed by their RE2
    programs, and no unbounded keyword in any object" (the structured module's docstring),
    however the values nest."""
    from headwire.runtime.agent.structured import _UNBOUNDED_KEYWORDS, _values_within

    def has_unbounded(value: Any) -> bool:
        if isinstance(value, dict):
            return bool(_UNBOUNDED_KEYWORDS & set(value)) or any(map(has_unbounded, value.values()))
        if isinstance(value, list):
            return any(map(has_unbounded, value))
        return False

    expected = _work_units(schema) <= budget and not has_unbounded(schema)
    assert _values_within(schema, budget) is expected


def test_a_small_answer_is_checked_in_process_and_a_costly_one_in_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker costs a Python and ``jsonschema`` (about 0.2 s): an answer whose check is
    bounded small never starts one, and gets the verdict the worker would give."""
    import asyncio

    from headwire.runtime.agent.structured import IN_PROCESS_WORK
    from headwire.runtime.tools import worker

    checker = structured()
    texts = ['{"name": "ab", "n": 3}', '{"name": "AB"}', "not json", '{"name": "\\ud800é"}']
    expected = [asyncio.run(checker.check_in_worker(text)) for text in texts]

    async def no_worker(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a bounded check started the worker")

    monkeypatch.setattr(worker, "run_in_worker", no_worker)
    assert [asyncio.run(checker.check_bounded(text)) for text in texts] == expected
    # past the bound, or with a keyword whose cost is not bounded, the worker is asked
    big = json.dumps({"name": "a" * (IN_PROCESS_WORK // _json_values(SCHEMA))})
    assert not checker.bounded_work(big)
    for schema in (
        {"type": "array", "uniqueItems": True},
        {"$defs": {"n": {"type": "integer"}}, "items": {"$ref": "#/$defs/n"}},
        {"type": "array", "unevaluatedItems": False},
    ):
        assert not structured(schema).bounded_work("[]")
        with pytest.raises(AssertionError, match="started the worker"):
            asyncio.run(structured(schema).check_bounded("[]"))


def test_an_unbounded_check_still_goes_to_the_worker_and_its_timeout() -> None:
    """:meth:`StructuredOutput.check_bounded` on the answer that takes ``jsonschema`` minutes
    (``uniqueItems``) is the worker's: refused at its timeout, not run in process."""
    import asyncio

    checker = structured({"type": "array", "uniqueItems": True})
    answer = json.dumps([{"k": i} for i in range(30_000)])
    started = time.monotonic()
    verdict = asyncio.run(checker.check_bounded(answer, timeout_s=1.0))
    assert not verdict.ok and "could not be checked" in verdict.problem
    assert time.monotonic() - started < 10


def test_a_pattern_weighs_its_re2_program() -> None:
    """A short pattern with a large RE2 program (``{1000}`` repeats) is weighed by that program:
    an answer that would take it a third of a second is sent to the worker, and the longest
    answer still checked in process takes milliseconds."""
    from headwire.runtime.agent.structured import IN_PROCESS_WORK, pattern_units

    pattern = "(?:[ab]*a[ab]{1000}c|[ab]*b[ab]{1000}d|[ab]*a[ab]{999}e|[ab]*b[ab]{998}f)"
    assert pattern_units(pattern) >= 80 and pattern_units("^[0-9]{4}-[0-9]{2}$") == 1
    checker = structured({"type": "string", "pattern": pattern})
    rng = random.Random(5)
    assert not checker.bounded_work(json.dumps("".join(rng.choices("ab", k=6600))))
    length = IN_PROCESS_WORK // (2 + pattern_units(pattern)) - 2  # the object, "string"; quotes
    text = json.dumps("".join(rng.choices("ab", k=length)))
    assert checker.bounded_work(text)
    started = time.perf_counter()
    assert not checker.check(text).ok
    assert time.perf_counter() - started < 0.5  # about 0.01 s on an idle machine
    # patternProperties keys weigh twice (searched again for additionalProperties)
    keyed = {"type": "object", "patternProperties": {pattern: {}}, "additionalProperties": False}
    assert not structured(keyed).bounded_work("{" + " " * (IN_PROCESS_WORK // 150) + "}")


def test_a_pattern_is_compiled_once_at_start_not_again_on_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``bounded_work`` runs on the event loop before every check: it weighs the patterns with
    the program sizes measured when the schema was checked at start, compiling nothing."""
    from headwire.runtime.tools import linear_regex

    pattern = "^(?:[a-z]{1,40}@){3}[ab]{300}$"
    checker = structured({"type": "object", "patternProperties": {pattern: {"pattern": pattern}}})

    def no_compile(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a pattern was compiled again")

    monkeypatch.setattr(linear_regex, "compile_linear", no_compile)
    monkeypatch.setattr(linear_regex, "LinearPattern", no_compile)
    assert checker.bounded_work("{}") in (True, False)
    assert not checker.bounded_work("{" + " " * 5000 + "}")


def test_the_costliest_checks_within_the_bound_take_milliseconds() -> None:
    """Answers that fail every branch of a wide ``anyOf`` (the costliest shape per unit of
    size) at the bound: checked in process, in far less than the worker's start-up."""
    from headwire.runtime.agent.structured import IN_PROCESS_WORK

    for branches in (5, 40):
        schema = {"type": "array", "items": {"anyOf": [{"type": "string"}] * branches}}
        length = IN_PROCESS_WORK // _json_values(schema)
        text = json.dumps([0] * (length // 3))
        checker = structured(schema)
        assert checker.bounded_work(text)
        started = time.perf_counter()
        assert not checker.check(text).ok
        assert time.perf_counter() - started < 0.5  # about 0.04 s on an idle machine
