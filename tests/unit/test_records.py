"""``headwire.records.dataclass`` makes the class ``dataclasses.dataclass`` makes.

Random class shapes (options, fields with and without defaults, default factories, ``repr`` and
``compare`` off, ``kw_only``) are built twice, by the fast path and by the standard decorator,
and compared on everything a caller can see: the signature, the instances' ``repr``, equality
and hashing, frozen-ness, ``__slots__``, ``__match_args__``, ``dataclasses.fields``/``asdict``/
``replace``, pickling and copying.  Shapes the fast path leaves to the standard decorator are
checked to be the standard decorator's classes.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire import records

OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "frozen": st.booleans(),
        "slots": st.booleans(),
        "kw_only": st.booleans(),
        "eq": st.booleans(),
        "repr": st.booleans(),
    },
)


@st.composite
def shapes(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    options = draw(OPTIONS)
    count = draw(st.integers(0, 5))
    fields: list[tuple[str, dict[str, Any]]] = []
    defaulted = False
    for i in range(count):
        spec: dict[str, Any] = {}
        kind = draw(st.sampled_from(["plain", "default", "factory"]))
        kw = draw(st.sampled_from([None, True, False]))
        if kw is not None:
            spec["kw_only"] = kw
        is_kw = kw if kw is not None else options.get("kw_only", False)
        if kind == "plain" and defaulted and not is_kw:
            kind = "default"  # else both decorators refuse the order
        if kind == "default":
            spec["default"] = draw(st.integers() | st.text(max_size=3) | st.none())
        elif kind == "factory":
            spec["default_factory"] = draw(st.sampled_from([list, tuple, dict, str]))
        if kind != "plain" and not is_kw:
            defaulted = True
        if draw(st.booleans()):
            spec["repr"] = False
        if draw(st.booleans()):
            spec["compare"] = False
        fields.append((f"f{i}", spec))
    return options, fields


def _make(decorator: Any, options: dict[str, Any], fields: list[tuple[str, dict[str, Any]]]) -> Any:
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
    for name, spec in fields:
        namespace["__annotations__"][name] = "int"
        namespace[name] = dataclasses.field(**spec) if spec else dataclasses.MISSING
        if not spec:
            del namespace[name]
    cls = type("Shape", (), namespace)
    cls.__qualname__ = "Shape"
    return decorator(**options)(cls)


def _arguments(fields: list[tuple[str, dict[str, Any]]], seed: int) -> dict[str, Any]:
    """Every required field, and the defaulted ones too when ``seed`` is odd."""
    return {
        name: seed + i
        for i, (name, spec) in enumerate(fields)
        if seed % 2 or not {"default", "default_factory"} & spec.keys()
    }


@settings(max_examples=300, deadline=None)
@given(shapes(), st.integers(0, 3))
def test_the_fast_class_is_the_standard_class(shape: Any, seed: int) -> None:
    options, fields = shape
    fast = _make(records.dataclass, options, fields)
    standard = _make(dataclasses.dataclass, options, fields)
    assert "__dataclass_fields__" in fast.__dict__
    assert str(inspect.signature(fast)) == str(inspect.signature(standard))
    assert fast.__match_args__ == standard.__match_args__
    assert hasattr(fast, "__slots__") == hasattr(standard, "__slots__")
    assert getattr(fast, "__slots__", None) == getattr(standard, "__slots__", None)
    assert (fast.__hash__ is None) == (standard.__hash__ is None)
    assert [
        (f.name, f.default, f.default_factory, f.repr, f.compare, f.kw_only)
        for f in dataclasses.fields(fast)
    ] == [
        (f.name, f.default, f.default_factory, f.repr, f.compare, f.kw_only)
        for f in dataclasses.fields(standard)
    ]
    for key in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(fast.__dataclass_params__, key) == getattr(
            standard.__dataclass_params__, key
        )
    args = _arguments(fields, seed)
    one, two = fast(**args), standard(**args)
    other = fast(**_arguments(fields, seed + 10))
    assert repr(one).replace("Shape", "X") == repr(two).replace("Shape", "X") or not options.get(
        "repr", True
    )
    assert dataclasses.asdict(one) == dataclasses.asdict(two)
    assert (one == fast(**args)) == (two == standard(**args))
    assert (one == other) == (two == standard(**_arguments(fields, seed + 10)))
    assert (one == object()) is False
    if fast.__hash__ is not None and fast.__hash__ is not object.__hash__:
        hashable = all("default_factory" not in spec for _, spec in fields)
        if hashable:
            assert hash(one) == hash(fast(**args))
    if options.get("frozen"):
        for name, _ in fields[:1]:
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(one, name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError):
                delattr(one, name)
    elif fields:
        setattr(one, fields[0][0], 99)
        assert getattr(one, fields[0][0]) == 99
    globals()["Shape"] = fast  # pickle finds a class by its module and name
    again = pickle.loads(pickle.dumps(one))
    assert dataclasses.asdict(again) == dataclasses.asdict(one)
    assert dataclasses.asdict(copy.deepcopy(one)) == dataclasses.asdict(one)
    if fields:
        name = fields[0][0]
        assert getattr(dataclasses.replace(one, **{name: 7}), name) == 7


def test_post_init_runs_after_the_fields_are_set() -> None:
    @records.dataclass(frozen=True, slots=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("negative")

    assert Checked(1).value == 1
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_shapes_the_fast_path_leaves_alone_are_the_standard_decorators() -> None:
    @records.dataclass(frozen=True)
    class Base:
        a: int

    @records.dataclass(frozen=True)
    class Derived(Base):  # a dataclass base: its fields come first
        b: int = 2

    @records.dataclass(order=True)
    class Ordered:
        a: int

    @records.dataclass
    class WithClassVar:
        kind: ClassVar[str] = "x"
        a: int = 1

    @records.dataclass
    class OwnRepr:
        a: int

        def __repr__(self) -> str:
            return "mine"

    assert (
        Derived(1).b == 2 and str(inspect.signature(Derived)) == "(a: 'int', b: 'int' = 2) -> None"
    )
    assert Ordered(1) < Ordered(2)
    assert [f.name for f in dataclasses.fields(WithClassVar)] == ["a"]
    assert repr(OwnRepr(1)) == "mine"
    with pytest.raises(ValueError, match="mutable default"):

        @records.dataclass
        class Mutable:
            a: list[int] = []  # noqa: RUF012


def test_a_required_field_after_a_defaulted_one_is_the_standard_error() -> None:
    with pytest.raises(TypeError, match="non-default argument"):

        @records.dataclass
        class Wrong:
            a: int = 1
            b: int  # type: ignore[misc]


def test_annotations_resolve_in_the_records_module() -> None:
    @records.dataclass(frozen=True, slots=True)
    class Typed:
        a: int
        b: str | None = None

    import typing

    hints = typing.get_type_hints(Typed.__init__)
    assert hints["a"] is int and hints["return"] is type(None)


def test_a_record_that_holds_itself_has_a_finite_repr() -> None:
    @records.dataclass(slots=True)
    class Node:
        child: Any = None

    node = Node()
    node.child = node
    assert (
        repr(node) == "test_a_record_that_holds_itself_has_a_finite_repr.<locals>.Node(child=...)"
    )


def test_init_compiles_at_the_first_instance_and_reads_the_same_before() -> None:
    """Until its first instance a record's ``__init__`` is a stand-in that ``inspect`` and
    ``typing`` read as the real one; the first instance puts the compiled one on the class."""

    @records.dataclass(frozen=True, slots=True, kw_only=True)
    class Lazy:
        a: int
        b: str = "x"

    pending = Lazy.__init__
    assert str(inspect.signature(Lazy)) == "(*, a: 'int', b: 'str' = 'x') -> None"
    import typing

    assert typing.get_type_hints(Lazy.__init__) == {"a": int, "b": str, "return": type(None)}
    assert Lazy(a=1) == Lazy(a=1, b="x")
    assert Lazy.__init__ is not pending and not hasattr(Lazy.__init__, "__wrapped__")
    assert str(inspect.signature(Lazy)) == "(*, a: 'int', b: 'str' = 'x') -> None"
    with pytest.raises(TypeError, match=r"Lazy.__init__\(\) missing 1 required"):
        Lazy()  # type: ignore[call-arg]
