"""The allseason package's import graph has no cycle (ast, over every module of allseason/).

Two graphs: module-level imports only (what runs at import time), and every import statement
including those inside functions (what a reader of the code, or a tool like `farm-studio
look`, sees as a dependency). Both must be acyclic: reproduce <-> paper_snapshot was a cycle
of function-level imports."""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "allseason"


def _modules() -> dict[str, tuple[Path, bool]]:
    mods = {}
    for f in PKG.rglob("*.py"):
        parts = list(f.relative_to(PKG.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return mods


MODULES = _modules()


def _edges(name: str, top_level_only: bool) -> set[str]:
    """The allseason modules that ``name`` imports (``from pkg import sub`` counts as sub
    when sub is a module, else as pkg)."""
    path, is_pkg = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if is_pkg else name.rpartition(".")[0]
    out = set()
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.add(sub if sub in MODULES else mod)
    return {m for m in out if m in MODULES and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_edges_resolve_relative_imports():
    assert "allseason.paper.tables_snapshot" in _edges("allseason.cli.paper", True)
    assert "allseason.paper.reproduce" in _edges("allseason.paper.tables_snapshot", False)
    assert "allseason.sweeps.store" in _edges("allseason.paper.runs", True)


@pytest.mark.parametrize("top_level_only", [True, False], ids=["module-level", "all imports"])
def test_no_import_cycle(top_level_only):
    graph = {m: _edges(m, top_level_only) for m in MODULES}
    assert _cycles(graph) == []


def test_reproduce_and_paper_snapshot_do_not_import_each_other():
    assert "allseason.paper.tables_snapshot" not in _edges("allseason.paper.reproduce", False)
