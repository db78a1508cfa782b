"""Structured output: the final answer of a turn as one JSON value that matches ``--json-schema``.

The model is told the schema in its system prompt (:meth:`StructuredOutput.instructions`).  When
a turn's model call ends without tool calls, its text is the candidate: surrounding whitespace
and one Markdown code fence (```` ```json ````) are dropped, the rest must parse as JSON (no
``NaN``) and validate (:mod:`headwire.runtime.agent.output_schema`).  A candidate that does not is
answered with a user message naming what is wrong (:meth:`StructuredOutput.feedback`, at most
:data:`MAX_PROBLEMS` problems), and the model tries again, at most ``retries`` times
(:data:`STRUCTURED_OUTPUT_RETRIES`); then the turn ends with
``error_max_structured_output_retries``.  Nothing that does not validate is ever accepted.

A hostile answer can make ``jsonschema`` slow (30,000 objects under ``uniqueItems`` compare
pairwise), so a check whose cost is not bounded small runs in the cancellable worker
(:mod:`headwire.runtime.tools.worker`, :meth:`StructuredOutput.check_in_worker`): there it holds
no GIL of headwire's, is killed the moment the turn is cancelled (a signal, an interrupt), and
gives up after :data:`CHECK_TIMEOUT_S` (the answer is then refused as one that could not be
checked).  Starting that worker costs about 0.2 s (a Python and ``jsonschema``), so
:meth:`StructuredOutput.check_bounded` checks in process when the work is bounded by the sizes
alone: a schema with no keyword whose cost grows faster than schema times answer (no ``$ref``
recursion, no pairwise ``uniqueItems``, no re-evaluating ``unevaluated*``; patterns run on RE2,
linear), whose JSON values times the answer's characters are at most
:data:`IN_PROCESS_WORK` (every JSON value of the answer takes at least one character).  A
pattern weighs more than one value: RE2 may take its program size in steps per byte of the
text it searches (a character is up to 4 bytes, a step about 10 ns, a unit of
:data:`IN_PROCESS_WORK` about 2 µs of ``jsonschema``), so each ``pattern`` counts
:func:`pattern_units` values, and each key of ``patternProperties`` twice that (it is searched
again for ``additionalProperties``).  A pattern of 70 characters such as
``(?:[ab]*a[ab]{1000}c|...)`` has a program of 4,000 steps: an answer of 6,600 characters takes
it 0.3 s, so that answer goes to the worker.
"""

from __future__ import annotations

import json
from typing import Any

from headwire.errors import RunLimitError
from headwire.records import dataclass

STRUCTURED_OUTPUT_RETRIES = 2
"""Corrections a model gets after its first invalid answer (3 answers in all)."""
MAX_PROBLEMS = 5
"""Validation errors listed in one correction message."""
CHECK_TIMEOUT_S = 30.0
"""How long checking one answer may take before it is refused as uncheckable."""
IN_PROCESS_WORK = 20_000
"""The largest (JSON values in the schema) x (characters in the answer) checked in process
(a bounded schema: see the module); larger checks go to the worker."""
RE2_STEPS_PER_UNIT = 50
"""RE2 program steps in one unit of :data:`IN_PROCESS_WORK` per answer character (4 bytes of
10 ns steps against 2 µs)."""
_UNBOUNDED_KEYWORDS = frozenset(
    {
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "uniqueItems",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
"""Keywords whose checking cost is not bounded by (schema size) x (answer size): references
can recurse as deep as the answer, ``uniqueItems`` compares pairwise, and the ``unevaluated``
keywords evaluate their siblings again."""
_PREVIEW = 200


class StructuredOutputFailed(RunLimitError):
    """The model used up its corrections without an answer that matches the schema."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The check of one candidate answer: ``ok`` with its ``value``, or ``problem``."""

    ok: bool
    value: Any = None
    problem: str = ""


def _strip_fence(text: str) -> str:
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and len(body) >= 6:
        first_newline = body.find("\n")
        if first_newline != -1:
            return body[first_newline + 1 : -3].strip()
    return body


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _where(path: Any) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "the top level"


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 3] + "..."


@dataclass(frozen=True, slots=True)
class StructuredOutput:
    """A run's ``--json-schema``: the schema, its validator and the corrections allowed."""

    schema: dict[str, Any]
    validator: Any
    retries: int = STRUCTURED_OUTPUT_RETRIES

    def instructions(self) -> str:
        """The system prompt's part that asks for the structured answer."""
        return (
            "Your final answer is read by a program. When the task is done, reply with exactly "
            "one JSON value and nothing else (no prose, no Markdown code fence) that validates "
            "against this JSON Schema:\n" + json.dumps(self.schema, ensure_ascii=False)
        )

    def check(self, text: str) -> Verdict:
        """Whether ``text`` is a JSON value that matches the schema."""
        body = _strip_fence(text)
        if not body:
            return Verdict(False, problem="the answer was empty, not a JSON value")
        try:
            value = json.loads(body, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            return Verdict(
                False,
                problem=f"the answer is not JSON ({exc.msg} at line {exc.lineno} column "
                f"{exc.colno}); it began: {_preview(body)}",
            )
        except (ValueError, RecursionError) as exc:
            return Verdict(False, problem=f"the answer is not JSON ({exc})")
        from jsonschema.exceptions import relevance

        try:
            errors = sorted(self.validator.iter_errors(value), key=relevance, reverse=True)
        except RecursionError:
            return Verdict(False, problem="the answer is nested too deeply to check")
        if not errors:
            return Verdict(True, value=value)
        listed = [
            f"at {_where(e.absolute_path)}: {_preview(e.message)}" for e in errors[:MAX_PROBLEMS]
        ]
        more = len(errors) - len(listed)
        tail = f"; and {more} more" if more > 0 else ""
        return Verdict(False, problem="it does not match the schema: " + "; ".join(listed) + tail)

    def bounded_work(self, text: str) -> bool:
        """Whether checking ``text`` costs at most :data:`IN_PROCESS_WORK` (see the module)."""
        budget = IN_PROCESS_WORK // max(len(text), 1)
        return _values_within(self.schema, budget)

    async def check_bounded(self, text: str, timeout_s: float = CHECK_TIMEOUT_S) -> Verdict:
        """:meth:`check` in this process when its work is bounded small
        (:meth:`bounded_work`), else :meth:`check_in_worker`: the same verdict either way."""
        if self.bounded_work(text):
            return self.check(text)
        return await self.check_in_worker(text, timeout_s)

    async def check_in_worker(self, text: str, timeout_s: float = CHECK_TIMEOUT_S) -> Verdict:
        """:meth:`check`, run in the cancellable worker: cancelling the caller kills it, and an
        answer not checked within ``timeout_s`` is refused with a problem saying so."""
        from headwire.runtime.tools.offload import StepTimedOut
        from headwire.runtime.tools.worker import WorkerFailed, run_in_worker

        request = {"schema": self.schema, "text": text}
        try:
            answer = await run_in_worker(__name__, request, timeout_s)
        except StepTimedOut:
            return Verdict(
                False,
                problem=f"the answer could not be checked against the schema within "
                f"{timeout_s:g} s; give a smaller answer",
            )
        except WorkerFailed as exc:
            return Verdict(False, problem=f"the answer could not be checked ({exc})")
        return Verdict(bool(answer["ok"]), answer.get("value"), str(answer.get("problem", "")))

    def feedback(self, problem: str) -> str:
        """The user message that asks the model to correct its answer."""
        return (
            f"Your answer cannot be used: {problem}. Reply again with only the corrected JSON "
            "value that validates against the JSON Schema in your instructions."
        )

    def failure(self, problem: str) -> str:
        """The error ``result``'s message when no correction helped."""
        return (
            f"The answer did not match --json-schema after {self.retries + 1} attempts; "
            f"the last one: {problem}"
        )


def pattern_units(pattern: str) -> int:
    """What a ``pattern`` weighs in :data:`IN_PROCESS_WORK` per answer character: its RE2
    program size (measured when the schema was checked at start) over
    :data:`RE2_STEPS_PER_UNIT`, rounded up, at least 1 (also for a string RE2 refuses: a schema
    holding such a pattern is refused at start, so this one is data)."""
    from headwire.runtime.agent.output_schema import program_size

    return max(1, -(-program_size(pattern) // RE2_STEPS_PER_UNIT))


def _values_within(schema: Any, budget: int) -> bool:
    """Whether ``schema`` holds at most ``budget`` JSON values (object keys not counted; a
    string under ``pattern`` counts :func:`pattern_units`, a key of ``patternProperties``
    twice that, besides its value) and no object in it has a key of
    :data:`_UNBOUNDED_KEYWORDS` (looked for everywhere, a property named ``$ref`` too: a false
    alarm only sends the check to the worker).  Walks at most ``budget + 1`` values, without
    recursion."""
    count = 0
    stack = [schema]
    while stack:
        count += 1
        if count > budget:
            return False
        item = stack.pop()
        if isinstance(item, dict):
            if not _UNBOUNDED_KEYWORDS.isdisjoint(item):
                return False
            pattern = item.get("pattern")
            if isinstance(pattern, str):
                count += pattern_units(pattern) - 1  # the pattern's value is counted as one
            keyed = item.get("patternProperties")
            if isinstance(keyed, dict):
                count += sum(2 * pattern_units(key) for key in keyed)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def _check(request: dict[str, Any]) -> dict[str, Any]:
    """The worker's job: :meth:`StructuredOutput.check` of ``request["text"]``."""
    from headwire.runtime.agent.output_schema import check_schema

    structured = StructuredOutput(request["schema"], check_schema(request["schema"]))
    verdict = structured.check(request["text"])
    return {"ok": verdict.ok, "value": verdict.value, "problem": verdict.problem}


def main() -> None:
    """The worker process: check one answer, write its verdict."""
    from headwire.runtime.tools.worker import serve

    serve(_check)


__all__ = [
    "CHECK_TIMEOUT_S",
    "IN_PROCESS_WORK",
    "MAX_PROBLEMS",
    "RE2_STEPS_PER_UNIT",
    "STRUCTURED_OUTPUT_RETRIES",
    "StructuredOutput",
    "StructuredOutputFailed",
    "Verdict",
    "pattern_units",
]
