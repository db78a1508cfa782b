"""Shared pieces of the fuzz suite: the example budget, the seed corpus and the mutators.

Every fuzz test takes its ``max_examples`` from :func:`fuzz_settings`: a modest CI default per
test, or ``HEADWIRE_FUZZ_EXAMPLES`` when set (a longer run).  Inputs come from three sources,
mixed by each target's strategy: arbitrary bytes and JSON, a grammar of the target's messages,
and :func:`mutated_bytes` / :func:`mutated_json` applied to the committed seed corpus
(``tests/fuzz/corpus/<target>/``, recorded from the unit tests by
:mod:`tests.fuzz.record_corpus`).

The mutators are plain functions of a :class:`Chooser` (a source of choices), so the same code
drives hypothesis (:class:`DrawChooser`, shrinkable) and the long-run driver in
``benchmarks/fuzz_long.py`` (:class:`RandomChooser`, fast).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import orjson
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

CORPUS = Path(__file__).resolve().parent / "corpus"
EXAMPLES_ENV = "HEADWIRE_FUZZ_EXAMPLES"

T = TypeVar("T")


def examples(base: int) -> int:
    """``max_examples`` for one test: ``$HEADWIRE_FUZZ_EXAMPLES`` when set, else ``base``."""
    value = os.environ.get(EXAMPLES_ENV, "").strip()
    return int(value) if value else base


def fuzz_settings(base: int, *, shrink: bool = True) -> settings:
    """Hypothesis settings of a fuzz test (no deadline, seed printed on failure); tests that
    start processes do not shrink (each step would cost a process)."""
    phases = [p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)]
    return settings(
        max_examples=examples(base),
        deadline=None,
        derandomize=False,
        print_blob=True,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )


@cache
def seeds(target: str) -> tuple[bytes, ...]:
    """The committed seed corpus of ``target``, in file-name order."""
    folder = CORPUS / target
    return tuple(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


# -- choices ------------------------------------------------------------------------------------


class Chooser(Protocol):
    """A source of choices: hypothesis draws, or a seeded random generator."""

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        ...

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        ...

    def json_value(self) -> Any:
        """An arbitrary JSON-like value (adversarial strings, odd numbers, nesting)."""
        ...


class DrawChooser:
    """Choices drawn from hypothesis (``st.data()`` or a composite's ``draw``)."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]`` (shrinks towards ``low``)."""
        value: int = self.draw(st.integers(low, high))
        return value

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options`` (shrinks towards the first)."""
        value: T = self.draw(st.sampled_from(options))
        return value

    def json_value(self) -> Any:
        """A value of :func:`tests.strategies.json_values`."""
        from tests.strategies import json_values

        return self.draw(json_values())


class RandomChooser:
    """Choices from :class:`random.Random` (the fast long-run driver)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``, small values favoured."""
        if high > low + 64 and self.rng.random() < 0.5:
            return low + self.rng.randint(0, 64)
        return self.rng.randint(low, high)

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return options[self.rng.randrange(len(options))]

    def json_value(self) -> Any:
        """A random JSON-like value of depth at most 3."""
        return self._value(3)

    def _value(self, depth: int) -> Any:
        kind = self.rng.randrange(8 if depth > 0 else 6)
        if kind == 0:
            return None
        if kind == 1:
            return self.rng.random() < 0.5
        if kind == 2:
            return self.pick(INTERESTING_NUMBERS)
        if kind == 3:
            return self.rng.uniform(-1e6, 1e6)
        if kind in (4, 5):
            return random_text(self)
        if kind == 6:
            return [self._value(depth - 1) for _ in range(self.rng.randrange(4))]
        return {random_text(self, 6): self._value(depth - 1) for _ in range(self.rng.randrange(4))}


# -- vocabulary -------------------------------------------------------------------------------

ATOMS = (
    "a",
    "Z",
    " ",
    "/",
    '"',
    "\\",
    "\b",
    "\t",
    "\n",
    "\f",
    "\r",
    "\x00",
    "\x01",
    "\x1f",
    "\x7f",
    "\x80",
    "é",
    "\u07ff",
    "\u0800",
    "汉",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\uffff",
    "😀",
    "\U0010ffff",
    "\ud800",
    "\udbff",
    "\udc00",
    "\udfff",
    "\ud83d\ude00",
    "\ud83d",
    "\ude00",
)
"""Characters that stress JSON escaping and UTF-16/UTF-8 accounting (lone surrogates too)."""

WORDS = (
    "type",
    "user",
    "assistant",
    "system",
    "result",
    "control_request",
    "control_response",
    "control_cancel_request",
    "request_id",
    "request",
    "response",
    "subtype",
    "initialize",
    "interrupt",
    "set_model",
    "set_permission_mode",
    "supported_commands",
    "mcp_server_status",
    "mcp_status",
    "get_context_usage",
    "get_available_models",
    "get_usage_info",
    "can_use_tool",
    "success",
    "error",
    "behavior",
    "allow",
    "deny",
    "updatedInput",
    "message",
    "content",
    "text",
    "role",
    "mode",
    "model",
    "timeout",
    "canUseTool",
    "hooks",
    "sdkMcpServers",
    "mcpServers",
    "agents",
    "default",
    "plan",
    "auto-edit",
    "autoEdit",
    "yolo",
    "acceptEdits",
    "bypassPermissions",
    "dontAsk",
    "jsonrpc",
    "2.0",
    "id",
    "method",
    "params",
    "initialize",
    "session/new",
    "session/load",
    "session/prompt",
    "session/set_mode",
    "session/cancel",
    "session/update",
    "session/request_permission",
    "protocolVersion",
    "sessionId",
    "cwd",
    "prompt",
    "modeId",
    "resource_link",
    "resource",
    "uri",
    "outcome",
    "selected",
    "cancelled",
    "optionId",
    "proceed_once",
    "proceed_always",
    "cancel",
    "name",
    "command",
    "args",
    "env",
    "httpUrl",
    "url",
    "headers",
    "trust",
    "includeTools",
    "excludeTools",
    "disabled",
    "sdk",
    "stdio",
    "http",
    "sse",
    "streamable-http",
    "tool",
    "tools",
    "thinking",
    "delay_s",
    "tool_result",
    "tool_use_id",
    "is_error",
    "tool_call_update",
    "rawOutput",
    "status",
    "completed",
    "failed",
    "_meta",
    "toolName",
    "qwen.session.loadReplay",
    "updates",
    "events",
    "data",
    "$SID",
    "$CWD",
    "$RID",
    "",
    " ",
    "\n",
    "0",
    "-1",
    "null",
)
"""Keys and values the readers look at (``$SID``/``$CWD``/``$RID`` are filled in by drivers)."""

INTERESTING_NUMBERS: tuple[int | float, ...] = (
    0,
    -0.0,
    1,
    -1,
    2,
    7,
    255,
    256,
    1024,
    65535,
    65536,
    65537,
    2**31 - 1,
    2**31,
    2**53 - 1,
    2**53,
    2**53 + 1,
    2**63 - 1,
    -(2**63),
    2**64 - 1,
    0.5,
    1e-7,
    1.5e300,
    -1e308,
)

TOKENS = (
    b'"',
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\n",
    b"\r",
    b"\r\n",
    b"\t",
    b" ",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xf0\x9f",
    b"\\ud800",
    b"\\udc00",
    b"\\u0000",
    b"\\",
    b"1e999",
    b"-0",
    b"NaN",
    b"Infinity",
    b"null",
    b"true",
    b"18446744073709551616",
    b"123456789012345678901234567890",
    b'"type"',
    b'"control_request"',
    b'"user"',
    b'"jsonrpc":"2.0"',
    b'{"a":',
    b"[[[[[[[[",
    b"]]]]",
    b"\xef\xbb\xbf",
)
"""Byte strings inserted by :func:`mutate_bytes`."""

DEPTHS = (2, 64, 254, 255, 256, 1000, 1023, 1024, 1025, 3000)
"""Nesting depths around the limits of orjson (255 to write, 1024 to read) and recursion."""


def random_text(c: Chooser, max_atoms: int = 12) -> str:
    """A short adversarial string: atoms and vocabulary."""
    parts = [
        c.pick(ATOMS) if c.integer(0, 2) else c.pick(WORDS) for _ in range(c.integer(0, max_atoms))
    ]
    return "".join(parts)


def big_text(c: Chooser) -> str:
    """A string that may cross the 65,536-byte budget: a repeated atom or word, plus noise."""
    unit = (c.pick(ATOMS) if c.integer(0, 1) else random_text(c, 4) or "x")[:4]
    times = c.pick(
        (
            1,
            100,
            1000,
            10_000,
            16_383,
            16_384,
            21_845,
            32_767,
            65_534,
            65_535,
            65_536,
            70_000,
            200_000,
        )
    )
    return random_text(c, 3) + unit * times + random_text(c, 3)


def nested(c: Chooser) -> Any:
    """A deeply nested list or object."""
    depth = c.pick(DEPTHS)
    style = c.integer(0, 2)  # lists, objects, or both in turn
    value: Any = c.pick((None, 0, "x", []))
    for level in range(depth):
        value = [value] if style == 0 or (style == 2 and level % 2) else {"a": value}
    return value


def interesting_value(c: Chooser) -> Any:
    """A replacement value for a mutated node."""
    kind = c.integer(0, 9)
    if kind == 0:
        return c.pick(WORDS)
    if kind == 1:
        return c.pick(INTERESTING_NUMBERS)
    if kind == 2:
        return c.pick((None, True, False, [], {}, "", [None], {"": None}))
    if kind == 3:
        return random_text(c)
    if kind == 4:
        return big_text(c)
    if kind == 5:
        return nested(c)
    if kind == 6:
        return {c.pick(WORDS): c.pick(WORDS) for _ in range(c.integer(0, 3))}
    if kind == 7:
        return [random_text(c, 3) for _ in range(c.integer(0, 3))]
    return c.json_value()


# -- mutators -------------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = (), limit: int = 200) -> list[tuple[Any, ...]]:
    """Paths to the nodes of ``value`` (breadth first, at most ``limit``)."""
    out: list[tuple[Any, ...]] = [prefix]
    queue: list[tuple[tuple[Any, ...], Any]] = [(prefix, value)]
    while queue and len(out) < limit:
        path, node = queue.pop(0)
        children: list[tuple[Any, Any]] = []
        if isinstance(node, dict):
            children = list(node.items())
        elif isinstance(node, list):
            children = list(enumerate(node))
        for key, child in children:
            out.append((*path, key))
            queue.append(((*path, key), child))
    return out[:limit]


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = _get(value, path[:-1])
    parent[path[-1]] = new
    return value


def mutate_tree(c: Chooser, value: Any) -> Any:
    """Apply one structural mutation to a parsed JSON value (in place where possible)."""
    paths = _paths(value)
    path = c.pick(paths)
    node = _get(value, path)
    op = c.integer(0, 7)
    if op == 0 or op == 1:
        return _replace(value, path, interesting_value(c))
    if op == 2 and isinstance(node, dict) and node:
        del node[c.pick(list(node))]
        return value
    if op == 3 and isinstance(node, dict):
        node[c.pick(WORDS)] = interesting_value(c)
        return value
    if op == 4 and isinstance(node, dict) and node:
        key = c.pick(list(node))
        node[c.pick(WORDS)] = node.pop(key)
        return value
    if op == 5 and isinstance(node, list):
        if node and c.integer(0, 1):
            node.pop(c.integer(0, len(node) - 1))
        else:
            node.insert(c.integer(0, len(node)), interesting_value(c))
        return value
    if op == 6 and isinstance(node, str):
        return _replace(
            value,
            path,
            c.pick(
                (
                    node + random_text(c),
                    node * c.integer(2, 9),
                    node[: c.integer(0, len(node))],
                    big_text(c),
                )
            ),
        )
    if op == 7:  # wrap the node
        return _replace(value, path, c.pick(([node], {c.pick(WORDS): node})))
    return _replace(value, path, interesting_value(c))


def dumps(c: Chooser, value: Any) -> bytes:
    """Serialize ``value`` one of several ways (compact, spaced, ASCII-escaped, non-JSON NaN).

    Never recursive (:func:`write_json`), so the bytes do not depend on the stack: generation
    must be deterministic for hypothesis to replay and shrink it.
    """
    style = c.integer(0, 3)
    if style == 0:
        try:
            return orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):  # surrogates, or over 254 levels
            style = 1
    if style == 1:
        return write_json(value, ascii_only=True).encode()
    separators = (",", ":") if style == 2 else (" , ", " : ")
    return write_json(value, separators=separators).encode("utf-8", "surrogatepass")


def write_json(
    value: Any, *, ascii_only: bool = False, separators: tuple[str, str] = (", ", ": ")
) -> str:
    """JSON text of ``value`` written with an explicit stack (any depth; NaN as ``NaN``)."""
    comma, colon = separators
    out: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, value)]  # (is literal text, item)
    while stack:
        literal, item = stack.pop()
        if literal:
            out.append(item)
        elif isinstance(item, dict):
            tokens: list[tuple[bool, Any]] = [(True, "{")]
            for index, (key, member) in enumerate(item.items()):
                if index:
                    tokens.append((True, comma))
                tokens.append((True, json.dumps(str(key), ensure_ascii=ascii_only) + colon))
                tokens.append((False, member))
            tokens.append((True, "}"))
            stack.extend(reversed(tokens))
        elif isinstance(item, list | tuple):
            tokens = [(True, "[")]
            for index, member in enumerate(item):
                if index:
                    tokens.append((True, comma))
                tokens.append((False, member))
            tokens.append((True, "]"))
            stack.extend(reversed(tokens))
        else:
            out.append(json.dumps(item, ensure_ascii=ascii_only))
    return "".join(out)


def mutate_bytes(c: Chooser, data: bytes, pool: Sequence[bytes] = ()) -> bytes:
    """Apply one byte-level mutation (flip, insert a token, delete, cut, duplicate, splice)."""
    size = len(data)
    at = c.integer(0, size)
    op = c.integer(0, 6)
    if op == 0 and size:
        index = min(at, size - 1)
        return data[:index] + bytes([data[index] ^ (1 << c.integer(0, 7))]) + data[index + 1 :]
    if op == 1:
        return data[:at] + c.pick(TOKENS) + data[at:]
    if op == 2 and size:
        end = c.integer(at, min(size, at + 64))
        return data[:at] + data[end:]
    if op == 3:
        return data[:at]
    if op == 4 and size:
        end = c.integer(at, min(size, at + 64))
        return data[:end] + data[at:end] + data[end:]
    if op == 5 and pool:
        other = c.pick(pool)
        cut = c.integer(0, len(other))
        return data[:at] + other[cut:]
    return data[:at] + bytes([c.integer(0, 255)]) + data[at:]


def mutated_json(c: Chooser, pool: Sequence[bytes], rounds: int = 3) -> bytes:
    """A seed parsed, mutated structurally ``0..rounds`` times and serialized; a seed that is
    not JSON is mutated as bytes instead."""
    seed = c.pick(pool)
    try:
        value = orjson.loads(seed)
    except orjson.JSONDecodeError:
        return mutated_bytes(c, pool, [seed])
    for _ in range(c.integer(0, rounds)):
        value = mutate_tree(c, value)
    return dumps(c, value)


def mutated_bytes(
    c: Chooser, pool: Sequence[bytes], start: Sequence[bytes] = (), rounds: int = 4
) -> bytes:
    """A seed mutated as bytes ``0..rounds`` times."""
    data = c.pick(start or pool)
    for _ in range(c.integer(0, rounds)):
        data = mutate_bytes(c, data, pool)
    return data


def from_chooser(build: Callable[[Chooser], T]) -> st.SearchStrategy[T]:
    """A hypothesis strategy whose values ``build`` makes from drawn choices (shrinkable;
    only the finished value is printed on failure)."""

    @st.composite
    def strategy(draw: st.DrawFn) -> T:
        return build(DrawChooser(draw))

    return strategy()


def fuzz_line(
    c: Chooser, pool: Sequence[bytes], grammar: Callable[[Chooser], Any] | None = None
) -> bytes:
    """One input line: a seed, a mutated seed, a grammar message or arbitrary bytes or JSON.

    Newlines inside the result are kept: a driver that splits on them sees several lines.
    """
    kind = c.integer(0, 9)
    if kind == 0 and pool:
        return c.pick(pool)
    if kind <= 3 and pool:
        return mutated_json(c, pool)
    if kind <= 5 and pool:
        return mutated_bytes(c, pool)
    if kind <= 7 and grammar is not None:
        value = grammar(c)
        for _ in range(c.integer(0, 1)):
            value = mutate_tree(c, value)
        return dumps(c, value)
    if kind == 8:
        return dumps(c, interesting_value(c))
    return bytes(c.integer(0, 255) for _ in range(c.integer(0, 24)))


__all__ = [
    "ATOMS",
    "CORPUS",
    "WORDS",
    "Chooser",
    "DrawChooser",
    "RandomChooser",
    "big_text",
    "dumps",
    "examples",
    "from_chooser",
    "fuzz_line",
    "fuzz_settings",
    "interesting_value",
    "mutate_bytes",
    "mutate_tree",
    "mutated_bytes",
    "mutated_json",
    "nested",
    "random_text",
    "seeds",
    "write_json",
]
