"""Record classes made fast: :func:`dataclass` and :func:`field`, as ``dataclasses`` has them.

Every message, event and setting of headwire is a small record class.  The standard
``dataclasses.dataclass`` writes and compiles the source of five or six methods per class
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``): about
half a millisecond a class, a few tens of milliseconds of every run's start.  Here only
``__init__`` is compiled (it is the one whose speed matters per instance), and only when the
class makes its first instance (most record classes a run imports never do); the other methods
are closures over the class's field names.  What the class looks like from outside is the
standard one: ``__dataclass_fields__`` holds real :class:`dataclasses.Field` objects, so
``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass``, ``orjson``, ``pickle``,
``copy`` and ``match`` treat these records as dataclasses; ``__match_args__``, ``__slots__``,
the frozen ``FrozenInstanceError``, equality and hashing by the compared fields in order, and
the ``repr`` are those ``dataclasses`` gives.

The fast path takes the forms headwire writes: the options ``frozen``, ``slots``, ``kw_only``,
``eq``, ``repr``, ``init``; fields with a default, a default factory, ``repr``, ``compare`` and
``kw_only``; a ``__post_init__``.  Anything else (``order``, ``unsafe_hash``, ``match_args``
off, ``ClassVar``/``InitVar``/``KW_ONLY`` annotations, a dataclass or other non-``object``
base, a method of the class that a generated one would replace, ``field(init=False)`` or
``field(hash=...)``, ``weakref_slot``) goes to ``dataclasses.dataclass`` unchanged, so the
result is always what the standard decorator makes.  ``tests/unit/test_records.py`` checks
both paths against each other on generated classes and instances.
"""

import dataclasses
import inspect
from _thread import get_ident
from collections.abc import Callable
from dataclasses import field
from importlib import import_module
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["dataclass", "field"]

_T = TypeVar("_T")

_MISSING: Any = dataclasses.MISSING
_FIELD_KIND: Any = dataclasses._FIELD  # type: ignore[attr-defined]
_FACTORY: Any = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
_PARAMS: Any = dataclasses._DataclassParams  # type: ignore[attr-defined]
_OWN = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")
_STANDARD_ONLY = {"order", "unsafe_hash", "match_args", "weakref_slot"}
_SPECIAL_TYPES = ("ClassVar", "InitVar", "KW_ONLY")


@overload
def dataclass(cls: type[_T], /) -> type[_T]: ...
@overload
def dataclass(
    cls: None = None,
    /,
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    slots: bool = False,
    kw_only: bool = False,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(field, dataclasses.Field))
def dataclass(cls: Any = None, /, **options: Any) -> Any:
    """``dataclasses.dataclass``, with the class made by :func:`_fast` where it can be."""

    def wrap(klass: type[_T]) -> type[_T]:
        made = _fast(klass, options)
        return made if made is not None else dataclasses.dataclass(klass, **options)

    return wrap if cls is None else wrap(cls)


def _fields(cls: type, all_kw: bool) -> dict[str, dataclasses.Field[Any]] | None:
    """The class's fields as ``dataclasses`` makes them, or ``None`` for a form the fast path
    leaves to the standard decorator."""
    annotations = inspect.get_annotations(cls)
    fields: dict[str, dataclasses.Field[Any]] = {}
    for name, kind in annotations.items():
        text = kind if isinstance(kind, str) else getattr(kind, "__name__", "")
        if kind is dataclasses.KW_ONLY or any(special in text for special in _SPECIAL_TYPES):
            return None
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, dataclasses.Field):
            made = value
            if not made.init or made.hash is not None:
                return None
        elif value is not _MISSING and type(value).__hash__ is None:
            return None  # a mutable default: the standard decorator's error
        else:
            made = field(default=value)
        made.name = name
        made.type = kind
        made._field_type = _FIELD_KIND  # type: ignore[attr-defined]
        if made.kw_only is _MISSING:
            made.kw_only = all_kw
        fields[name] = made
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            return None  # a field without an annotation: the standard decorator's error
    return fields


def _params(options: dict[str, Any]) -> Any:
    """``__dataclass_params__``, as this Python's ``dataclasses`` writes it (3.12 added
    four parameters; each is named by the class's slots)."""
    values = {
        "init": True,
        "repr": True,
        "eq": True,
        "order": False,
        "unsafe_hash": False,
        "frozen": False,
        "match_args": True,
        "kw_only": False,
        "slots": False,
        "weakref_slot": False,
    }
    values.update(options)
    return _PARAMS(*(values[name] for name in _PARAMS.__slots__))


def _fast(cls: type[_T], options: dict[str, Any]) -> type[_T] | None:
    """The record class, or ``None`` when the class needs the standard decorator."""
    if _STANDARD_ONLY & options.keys() or cls.__bases__ != (object,):
        return None
    if any(name in cls.__dict__ for name in _OWN):
        return None
    try:
        scope = vars(import_module(cls.__module__))  # being imported: already loaded
    except ImportError:
        scope = {}  # a class made at run time under a made-up module name
    fields = _fields(cls, options.get("kw_only", False))
    if fields is None:
        return None
    frozen = options.get("frozen", False)
    names = tuple(fields)
    owner: list[Any] = []  # the class made: the frozen methods check against it
    made: dict[str, Any] = {
        "__dataclass_fields__": fields,
        "__dataclass_params__": _params(options),
    }
    if "__match_args__" not in cls.__dict__:
        made["__match_args__"] = tuple(n for n in names if fields[n].init and not fields[n].kw_only)
    if options.get("init", True):
        post_init = "__post_init__" in cls.__dict__
        source = _init_source(fields, frozen, post_init)
        if source is None:
            return None
        made["__init__"] = _pending_init(cls.__qualname__, fields, source, scope, owner)
    if options.get("repr", True):
        made["__repr__"] = _repr(tuple(n for n in names if fields[n].repr))
    if options.get("eq", True):
        compared = tuple(n for n in names if fields[n].compare)
        made["__eq__"] = _eq(compared)
        made["__hash__"] = _hash(compared) if frozen else None
    if frozen:
        made["__setattr__"], made["__delattr__"] = _frozen(frozenset(names), owner)
    if options.get("slots", False):
        body = {k: v for k, v in cls.__dict__.items() if k not in names}
        body.pop("__dict__", None)
        body.pop("__weakref__", None)
        body.update(made)
        body["__slots__"] = names
        if frozen:
            body["__getstate__"], body["__setstate__"] = _state(names)
        metaclass: Any = type(cls)
        result: Any = metaclass(cls.__name__, cls.__bases__, body)
        result.__qualname__ = cls.__qualname__
    else:
        for name, one in fields.items():
            if isinstance(cls.__dict__.get(name), dataclasses.Field):
                if one.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, one.default)
        for key, value in made.items():
            setattr(cls, key, value)
        result = cls
    owner.append(result)
    return result  # type: ignore[no-any-return]


def _init_source(
    fields: dict[str, dataclasses.Field[Any]], frozen: bool, post_init: bool
) -> tuple[str, dict[str, Any]] | None:
    """The source of ``__init__`` and the names it closes over, or ``None`` when the field
    order is one the standard decorator rejects (it then raises its own error).  The source
    carries no annotations (compiling them doubled the cost, about 80 µs a class); the
    function gets the standard one's ``__annotations__`` as a dict instead."""
    env: dict[str, Any] = {"__set": object.__setattr__, "__factory": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    after_default = False
    for name, one in fields.items():
        value = name
        if one.default is not _MISSING:
            env[f"__default_{name}"] = one.default
            param = f"{name}=__default_{name}"
        elif one.default_factory is not _MISSING:
            env[f"__make_{name}"] = one.default_factory
            param = f"{name}=__factory"
            value = f"__make_{name}() if {name} is __factory else {name}"
        else:
            param = name
            if after_default and not one.kw_only:
                return None
        if one.kw_only:
            keyword.append(param)
        else:
            positional.append(param)
            after_default = after_default or param.endswith(("__factory", f"__default_{name}"))
        body.append(f"__set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    if post_init:
        body.append("self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    lines = [
        f"def __create_fn__({', '.join(env)}):",
        f"  def __init__({params}):",
        *(f"    {line}" for line in body or ["pass"]),
        "  return __init__",
    ]
    return "\n".join(lines), env


def _pending_init(
    qualname: str,
    fields: dict[str, dataclasses.Field[Any]],
    source: tuple[str, dict[str, Any]],
    scope: dict[str, Any],
    owner: list[Any],
) -> Callable[..., None]:
    """The record's ``__init__`` until its first instance: compiles the real one (one
    ``exec``; annotations resolve in the class's module, as the standard one's do), puts it on
    the class and runs it.  Most record classes a run imports are never made, so most never
    compile.  Until then ``inspect.signature`` and ``typing.get_type_hints`` read the real
    one through ``__wrapped__`` (:class:`_PendingSignature`)."""
    compiled: list[Callable[..., None]] = []
    annotations = {name: one.type for name, one in fields.items()} | {"return": None}

    def real() -> Callable[..., None]:
        if not compiled:
            text, env = source
            namespace: dict[str, Any] = {}
            exec(text, scope, namespace)
            init = namespace["__create_fn__"](**env)
            init.__qualname__ = f"{qualname}.__init__"
            init.__annotations__ = dict(annotations)
            compiled.append(init)
            owner[0].__init__ = init
        return compiled[0]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real()(self, *args, **kwargs)

    __init__.__qualname__ = f"{qualname}.__init__"
    __init__.__annotations__ = dict(annotations)
    __init__.__wrapped__ = _PendingSignature(real, scope)  # type: ignore[attr-defined]
    return __init__


class _PendingSignature:
    """What ``inspect`` and ``typing`` unwrap a pending ``__init__`` to: its real signature
    (compiled on demand) and the module whose names its annotations use."""

    __slots__ = ("__globals__", "_real")

    def __init__(self, real: Callable[[], Callable[..., None]], scope: dict[str, Any]) -> None:
        self._real = real
        self.__globals__ = scope

    @property
    def __signature__(self) -> Any:
        return inspect.signature(self._real())

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        self._real()(*args, **kwargs)


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()  # (instance, thread): a record that holds itself

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        finally:
            running.discard(key)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The compared fields of an instance, as a tuple, in field order."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    return attrgetter(*names)


def _eq(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen(
    names: frozenset[str], owner: list[Any]
) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    """``__setattr__`` and ``__delattr__`` of a frozen record: a field, or any attribute of
    an instance of the record class itself, cannot change (a subclass may add its own)."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner[0] or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(owner[0], self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner[0] or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner[0], self).__delattr__(name)

    return __setattr__, __delattr__


def _state(names: tuple[str, ...]) -> tuple[Callable[[Any], list[Any]], Callable[..., None]]:
    """``__getstate__``/``__setstate__`` of a frozen record with slots (pickle, copy)."""

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return __getstate__, __setstate__
