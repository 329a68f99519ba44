"""The package's import graph, lazy imports counted (TYPE_CHECKING ones aside), has no cycle."""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path

import pytest

import flopcheck

ROOT = Path(flopcheck.__file__).parent


def _module(path: Path) -> str:
    parts = ["flopcheck", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The flopcheck modules this file imports, anywhere in it (a function's lazy import too)."""
    tree, found = ast.parse(path.read_text()), set()
    skip = {id(n) for t in ast.walk(tree) if _type_checking(t) for n in ast.walk(t)}
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != _module(path):
                found.add(name)
    return found


def cycles() -> list[list[str]]:
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    graph = {m: _imports(p, set(files)) for m, p in files.items()}
    # a package's __init__ is imported by each of its submodules: that edge is how Python loads, not a cycle
    graph = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    found, index, low, stack, on = [], {}, {}, [], set()

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.append(sorted(scc))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles() == []


def test_one_name_per_class():
    """A class name names one class in the package (types.Work the vocabulary, not a training step's work too)."""
    where: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(_module(path))
    twice = {name: mods for name, mods in where.items() if len(mods) > 1}
    assert twice == {}


def test_rendering_starts_no_process_and_builds_no_model():
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    builders = {
        "flopcheck.children",
        "flopcheck.subject",
        "flopcheck.specs.child",
        "flopcheck.specs.build",
        "flopcheck.specs.meta",
        "flopcheck.counters.pool",
        "flopcheck.counters.worker",
        "flopcheck.auditor.tools",
        "flopcheck.auditor.readings",
        "flopcheck.auditor.standins",
        "flopcheck.auditor.fingerprints",
        "flopcheck.exact",
        "flopcheck.exact.counter",
        "flopcheck.reconciler.reference",
        "flopcheck.verbs.report",
        "flopcheck.verbs.audit",
    }
    found = {
        m: sorted(_imports(p, set(files)) & builders) for m, p in files.items() if m.startswith("flopcheck.render")
    }
    assert {m: b for m, b in found.items() if b} == {}


# the doors a user's process imports before it knows it will count anything: they keep torch (2 s, 400 MB) out
TORCH_FREE_DOORS = [
    "flopcheck",
    "flopcheck.api",
    "flopcheck.cli",
    "flopcheck.pytest_plugin",
    "flopcheck.specs",
    "flopcheck.subject",
    "flopcheck.verbs.audit",
    "flopcheck.auditor.claims",
]


@functools.cache
def _doors_that_import_torch() -> dict[str, str]:
    """One fresh interpreter imports the doors one after another, each checked for torch as it comes: a door that
    pulls torch in is caught at its own import (those before it did not), as in a child of its own, in 1 start not 8.
    {door: what went wrong} for each door that failed ('torch imported', or its import's error; the doors after one
    that imported torch are failed unchecked)."""
    import subprocess
    import sys

    code = (
        "import importlib, json, sys\n"
        "bad = {}\n"
        "doors = sys.argv[1:]\n"
        "for i, door in enumerate(doors):\n"
        "    try:\n"
        "        importlib.import_module(door)\n"
        "    except Exception as e:\n"
        "        bad[door] = f'{type(e).__name__}: {e}'\n"
        "    if 'torch' in sys.modules:\n"
        "        bad.setdefault(door, 'torch imported')\n"
        "        bad.update((d, f'unchecked: {door} imported torch') for d in doors[i + 1 :])\n"
        "        break\n"
        "print(json.dumps(bad))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *TORCH_FREE_DOORS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr.strip().splitlines()[-1:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("door", TORCH_FREE_DOORS)
def test_a_torch_free_door_imports_no_torch(door):
    assert door not in _doors_that_import_torch(), _doors_that_import_torch()[door]
