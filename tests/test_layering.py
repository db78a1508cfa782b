"""The import layering: pure layers import nothing above them and do no I/O."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "headwire"

# Lower rank = lower layer.  A module may import its own layer and the ones below it.
LAYERS: dict[str, int] = {
    "errors": 0,
    "printable": 0,
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
    "__main__": 6,
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


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "headwire" or len(parts) < 2:
        return None
    return parts[1]


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            if node.module == "headwire":
                found += [(node.lineno, f"headwire.{alias.name}") for alias in node.names]
    return found


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(part for part in rel.parts if part != "__init__")


def test_every_top_level_module_has_a_layer() -> None:
    for path in SRC.iterdir():
        name = path.stem
        if name in ("__init__", "__pycache__", "py"):
            continue
        if path.is_dir() or path.suffix == ".py":
            assert name in LAYERS, f"{name} has no layer in tests/test_layering.py"


def test_layers_import_nothing_above_them() -> None:
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        mod = module_name(path)
        own = layer_of(mod)
        if own is None:
            continue
        rank = LAYERS[own]
        for lineno, imported in imports_of(path):
            target = layer_of(imported)
            if target is not None and target in LAYERS and LAYERS[target] > rank:
                problems.append(f"{path}:{lineno}: {own} (layer {rank}) imports {imported}")
            root = imported.split(".")[0]
            if rank <= PURE_RANK and root in FORBIDDEN_IN_PURE:
                problems.append(f"{path}:{lineno}: pure module {mod} imports I/O module {imported}")
    assert not problems, "\n".join(problems)


def _module_level_imports(path: Path) -> set[str]:
    """The ``headwire`` modules a module imports when it is imported: its top-level import
    statements (not those inside functions, which run later, nor ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("headwire.")}
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith("headwire")
        ):
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_no_import_cycles() -> None:
    """No two modules of ``src/`` import each other, directly or around a loop, at import time
    (the graph of top-level imports is acyclic)."""
    modules = {module_name(p): p for p in SRC.rglob("*.py")}
    graph = {
        mod: {m for m in _module_level_imports(path) if m in modules and m != mod}
        for mod, path in modules.items()
    }
    done: set[str] = set()
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(mod: str) -> list[str] | None:
        if mod in on_stack:
            return [*stack[stack.index(mod) :], mod]
        if mod in done:
            return None
        stack.append(mod)
        on_stack.add(mod)
        for target in sorted(graph[mod]):
            cycle = visit(target)
            if cycle is not None:
                return cycle
        stack.pop()
        on_stack.discard(mod)
        done.add(mod)
        return None

    for mod in sorted(graph):
        cycle = visit(mod)
        assert cycle is None, "import cycle: " + " -> ".join(cycle)
