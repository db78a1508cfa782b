"""The import layering: layers and rooms import nothing above them, no import cycle, and the
pure layers do no I/O.

Every import counts: at the top of a module, inside a function (it runs later, but it is still
a dependency) and under ``if TYPE_CHECKING:`` (a type is a dependency too).  ``from a import b``
counts as an import of the module ``a.b`` when there is one, else of the package ``a``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "headwire"

# Lower rank = lower layer.  A module may import its own layer and the ones below it.
LAYERS: dict[str, int] = {
    "errors": 0,
    "printable": 0,
    "records": 0,
    "wire": 0,
    "projection": 1,
    "protocol": 2,
    "transports": 3,
    "events": 2,
    "boundary": 3,
    "headless": 3,
    "progress": 3,
    "bound": 3,
    "transcript": 3,
    "runtime": 4,
    "io": 4,
    "acp": 5,
    "cli": 6,
    "sdk": 6,
    "integrations": 7,
    "__main__": 6,
}

# The rooms inside ``runtime`` and ``cli`` (docs/architecture.md, "Packages").  A module may
# import its own room and rooms of a lower rank, never a room of the same rank or above.
ROOMS: dict[str, int] = {
    "runtime.environment": 0,
    "runtime.ids": 0,
    "runtime.http_body": 0,
    "runtime.data": 0,
    "runtime.compaction": 0,
    "runtime.front_matter": 0,
    "runtime.telemetry": 0,
    "runtime.sandbox": 0,
    "runtime.redact": 1,
    "runtime.store": 2,
    "runtime.models": 2,
    "runtime.trust": 3,
    "runtime.skills": 3,
    "runtime.tools": 4,
    "runtime.config": 5,
    "runtime.policy": 5,
    "runtime.mcp": 5,
    "runtime.hooks": 5,
    "runtime.trajectory": 5,
    "runtime.otel_export": 5,
    "runtime.agent": 6,
    "runtime.agents": 7,
    "cli.flags": 0,
    "cli.build": 1,
    "cli.run": 2,
    "cli.commands": 2,
    "cli.docs": 3,
    "cli.main": 4,
}
PURE_RANK = 3
FORBIDDEN_IN_PURE = {
    "asyncio",
    "subprocess",
    "os",
    "time",
    "sys",
    "socket",
    "threading",
    "io",
    "shutil",
    "tempfile",
    "signal",
    "select",
    "selectors",
    "multiprocessing",
}


PURE_IN_MEMORY = {("headwire.bound.filter", "from io import BytesIO")}
"""Imports of an I/O module that do no I/O, by pure module and source line: ``BytesIO`` is an
in-memory buffer, the C-speed line splitter of ``headwire bound``'s fast path (issue 28)."""


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "headwire" or len(parts) < 2:
        return None
    return parts[1]


def room_of(module: str) -> str | None:
    """The room of ``headwire.<layer>.<room>...`` (``None`` for a layer's own ``__init__``)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[0] != "headwire":
        return None
    room = f"{parts[1]}.{parts[2]}"
    return room if room in ROOMS else None


def module_name(path: Path, root: Path = SRC) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    return ".".join(part for part in rel.parts if part != "__init__")


def modules_of(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(path: Path, root: Path = SRC) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports, anywhere in it (top level, functions, ``TYPE_CHECKING``),
    as ``(line, dotted name)``; ``from a import b`` yields ``a.b`` when that is a module."""
    known = modules_of(root) if root != SRC else _SRC_MODULES
    own = module_name(path, root)
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, own, path.name == "__init__.py")
            yield node.lineno, base
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    yield node.lineno, f"{base}.{alias.name}"


_SRC_MODULES = modules_of(SRC)


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Module -> the modules of ``root``'s package it imports (every import counted)."""
    modules = modules_of(root)
    graph: dict[str, set[str]] = {}
    for mod, path in modules.items():
        targets = set()
        for _, name in imports_of(path, root):
            while name not in modules and "." in name:
                name = name.rsplit(".", 1)[0]  # ``import a.b.C``-style names: the module
            if name in modules and name != mod:
                targets.add(name)
        graph[mod] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (``[a, b, ..., a]``), or ``None`` when it has none."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        path, on_path = [start], {start}
        while stack:
            mod, targets = stack[-1]
            target = next(targets, None)
            if target is None:
                stack.pop()
                path.pop()
                on_path.discard(mod)
                done.add(mod)
            elif target in on_path:
                return [*path[path.index(target) :], target]
            elif target not in done:
                stack.append((target, iter(sorted(graph.get(target, ())))))
                path.append(target)
                on_path.add(target)
    return None


def test_every_top_level_module_has_a_layer() -> None:
    for path in SRC.iterdir():
        name = path.stem
        if name in ("__init__", "__pycache__", "py"):
            continue
        if path.is_dir() or path.suffix == ".py":
            assert name in LAYERS, f"{name} has no layer in tests/test_layering.py"


def test_every_module_of_runtime_and_cli_has_a_room() -> None:
    for layer in ("runtime", "cli"):
        for path in (SRC / layer).iterdir():
            if path.name in ("__init__.py", "__pycache__"):
                continue
            if path.is_dir() or path.suffix == ".py":
                assert f"{layer}.{path.stem}" in ROOMS, f"{layer}/{path.name} has no room"


def test_layers_import_nothing_above_them() -> None:
    problems = []
    for mod, path in sorted(_SRC_MODULES.items()):
        own = layer_of(mod)
        if own is None:
            continue
        rank = LAYERS[own]
        for lineno, imported in imports_of(path):
            target = layer_of(imported)
            if target is not None and target in LAYERS and LAYERS[target] > rank:
                problems.append(f"{path}:{lineno}: {own} (layer {rank}) imports {imported}")
            root = imported.split(".")[0]
            source = path.read_text().splitlines()[lineno - 1].split("#")[0].strip()
            if (mod, source) in PURE_IN_MEMORY:
                continue
            if rank <= PURE_RANK and root in FORBIDDEN_IN_PURE:
                problems.append(f"{path}:{lineno}: pure module {mod} imports I/O module {imported}")
    assert not problems, "\n".join(problems)


def test_rooms_import_only_lower_rooms() -> None:
    """Inside ``runtime`` and ``cli`` the arrows point down too: a room imports its own modules
    and rooms of a lower rank, so a change to one room can only reach the rooms above it."""
    problems = []
    for mod, path in sorted(_SRC_MODULES.items()):
        own = room_of(mod)
        if own is None:
            continue
        for lineno, imported in imports_of(path):
            target = room_of(imported)
            if target is None or target == own or target.split(".")[0] != own.split(".")[0]:
                continue
            if ROOMS[target] >= ROOMS[own]:
                problems.append(
                    f"{path}:{lineno}: {own} (room {ROOMS[own]}) imports {imported} "
                    f"(room {ROOMS[target]})"
                )
    assert not problems, "\n".join(problems)


def face_of(room: str) -> set[str] | None:
    """The names a room's ``__init__`` offers (its ``__all__``), or ``None`` for a module room."""
    init = SRC.joinpath(*room.split("."), "__init__.py")
    if not init.exists():
        return None
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def test_rooms_are_used_through_their_faces() -> None:
    """A room's ``__init__`` names the modules other packages may import (``__all__``); the
    rest is private to the room.  Every import from outside a room goes to its face."""
    problems = []
    for mod, path in sorted(_SRC_MODULES.items()):
        own = room_of(mod)
        for lineno, imported in imports_of(path):
            target = room_of(imported)
            if target is None or target == own or imported not in _SRC_MODULES:
                continue
            face = face_of(target)
            if face is None:
                continue
            parts = imported.split(".")
            if len(parts) > 3 and parts[3] not in face:
                problems.append(f"{path}:{lineno}: {imported} is private to {target}")
    assert not problems, "\n".join(problems)


def test_every_room_package_says_its_concern_in_one_line() -> None:
    for room in ROOMS:
        init = SRC.joinpath(*room.split("."), "__init__.py")
        if init.exists():
            doc = ast.get_docstring(ast.parse(init.read_text()), clean=False)
            assert doc and doc.splitlines()[0].strip(), f"{init}: no one-line concern"


def test_no_import_cycles() -> None:
    """No two modules of ``src/`` import each other, directly or around a loop, counting every
    import (top level, inside functions, under ``TYPE_CHECKING``)."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


PLANTED = {
    "module-level": ("from pkg import b\n", "import pkg.a\n"),
    "module-level, from a package": ("from pkg.b import thing\n", "from pkg import a\n"),
    "function-level": (
        "import pkg.b\n",
        "def later() -> None:\n    from pkg.a import thing\n",
    ),
    "TYPE_CHECKING": (
        "from pkg.b import thing\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import Thing\n",
    ),
    "relative": ("from . import b\n", "from .a import thing\n"),
}


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_planted_cycle_is_found(tmp_path: Path, kind: str) -> None:
    """The cycle check is not blind to any kind of import: a cycle planted with each one, in a
    package of two modules (and a third, innocent one), is reported."""
    a_imports, b_imports = PLANTED[kind]
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(a_imports + "thing = 1\n")
    (package / "b.py").write_text(b_imports + "thing = 2\n")
    (package / "c.py").write_text("import pkg.a\nimport pkg.b\n")
    graph = import_graph(package)
    assert find_cycle(graph) in (["pkg.a", "pkg.b", "pkg.a"], ["pkg.b", "pkg.a", "pkg.b"])
    (package / "b.py").write_text("thing = 2\n")
    assert find_cycle(import_graph(package)) is None


def test_a_planted_cycle_in_the_real_tree_is_found(tmp_path: Path) -> None:
    """The same check on a copy of ``src/headwire`` with one function-level import added that
    closes a loop (the kind the old check skipped): ``runtime.tools.base`` imports the loop."""
    import shutil

    copy = tmp_path / "headwire"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert find_cycle(import_graph(copy)) is None
    base = copy / "runtime" / "tools" / "base.py"
    base.write_text(
        base.read_text() + "\n\ndef _planted() -> None:\n"
        "    from headwire.runtime.agent.loop import Agent  # noqa: F401\n"
    )
    cycle = find_cycle(import_graph(copy))
    assert cycle is not None and "headwire.runtime.tools.base" in cycle


def test_harbor_is_imported_only_by_its_integration() -> None:
    """Harbor (an optional extra, Python 3.12+) is imported by
    ``headwire/integrations/harbor.py`` and by no other module."""
    users = []
    for path in sorted(SRC.rglob("*.py")):
        if any(m == "harbor" or m.startswith("harbor.") for _, m in imports_of(path)):
            users.append(path.relative_to(SRC).as_posix())
    assert users == ["integrations/harbor.py"]


ONE_KIND_FOLDERS = {"runtime/tools", "runtime/models"}
"""Folders of one kind of thing (a tool, a provider per module), exempt from the room size."""
MAX_OWN_MODULES = 12


def test_no_folder_holds_more_than_twelve_modules_of_its_own() -> None:
    """A folder that grows past 12 modules is split into rooms named for their concerns."""
    for folder in sorted({SRC, *(p.parent for p in SRC.rglob("*.py"))}):
        rel = folder.relative_to(SRC).as_posix()
        own = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if rel not in ONE_KIND_FOLDERS:
            assert len(own) <= MAX_OWN_MODULES, f"src/headwire/{rel}: {len(own)} modules"
