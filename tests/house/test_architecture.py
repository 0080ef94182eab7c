"""The walls, declared once (:data:`LAYERS`) and checked over every import statement, those inside
functions included:

- a room (a top-level module or subpackage of ``allseason``) imports only rooms of its own layer
  or of layers below it: no upward import, even a lazy one;
- the engine (every room below ``viz``) imports neither streamlit nor plotly, and importing
  ``allseason`` loads neither; ``viz`` imports no streamlit;
- pages import only streamlit, ``allseason.api``, ``allseason.ui`` and ``allseason.viz``.

tests/house/test_import_graph.py checks that no two modules import each other, in any room.
docs/where-to-change-what.md draws the same layers for a reader."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "allseason"

# bottom to top: a room may import from its own layer and the layers before it
LAYERS: list[tuple[str, set[str]]] = [
    (
        "foundations",
        {"errors", "_version", "_lazy", "stats", "links", "limits", "files", "models", "kernels"},
    ),
    ("worlds", {"envs"}),
    ("policies", {"policies"}),
    ("validated settings", {"specs", "costs"}),
    ("the default race", {"defaults"}),
    ("simulation", {"sim"}),
    ("analysis of a run", {"analysis"}),
    ("clients of the engine", {"logs", "paper", "sweeps", "worldmap", "agent"}),
    ("the facade", {"api"}),
    ("figures", {"viz"}),
    ("entry points", {"cli", "__main__", "ui", "serve"}),
]
LAYER_OF = {room: i for i, (_, rooms) in enumerate(LAYERS) for room in rooms}
ENGINE = {room for room, i in LAYER_OF.items() if i < LAYER_OF["viz"]} | {
    "cli",
    "__main__",
    "serve",
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path):
    """Every module an import statement of ``name`` names, absolute, anywhere in the file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                yield ".".join(base + ([node.module] if node.module else []))
            else:
                yield node.module or ""


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "allseason" and len(parts) > 1 else None


def test_every_room_is_declared_in_a_layer():
    rooms = {_room(m) for m in MODULES} - {None}
    assert rooms <= set(LAYER_OF), f"declare these rooms in LAYERS: {sorted(rooms - set(LAYER_OF))}"


def test_no_upward_import_even_inside_a_function():
    upward = []
    for name, path in MODULES.items():
        here = _room(name)
        if here is None:  # the package's face (allseason/__init__.py) re-exports the facade
            continue
        for target in _imports(name, path):
            there = _room(target)
            if there in LAYER_OF and LAYER_OF[there] > LAYER_OF[here]:
                upward.append(f"{name} ({LAYERS[LAYER_OF[here]][0]}) imports {target}")
    assert not upward, "\n".join(upward)


def test_engine_imports_neither_streamlit_nor_plotly_even_lazily():
    for name, path in MODULES.items():
        if _room(name) in ENGINE or _room(name) is None:
            for target in _imports(name, path):
                assert not target.startswith(("streamlit", "plotly")), (name, target)


def test_viz_imports_no_streamlit():
    for name, path in MODULES.items():
        if _room(name) == "viz":
            for target in _imports(name, path):
                assert not target.startswith("streamlit"), (name, target)


def test_pages_import_only_the_facade():
    allowed = ("streamlit", "allseason.api", "allseason.ui", "allseason.viz", "__future__")
    for path in [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]:
        for target in _imports("app_pages.page", path):
            assert target.startswith(allowed) or target == "allseason", (path.name, target)


def test_importing_allseason_loads_no_ui_library():
    code = (
        "import sys, allseason, allseason.api, allseason.cli; "
        "print(any(m.split('.')[0] in ('streamlit', 'plotly') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_readme_layout_matches_the_tree():
    """Every room of allseason/ named in the README's Layout section exists, and every room
    (a subpackage, or a module a page or a person opens) is named there."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    layout = text[text.index("## Layout") :].split("```")[1]
    rooms = sorted(p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    missing = [r for r in rooms if f"{r}/" not in layout]
    assert not missing, f"rooms missing from the README's Layout: {missing}"
    for word in layout.split():
        if word.endswith("/") and word[:-1].isidentifier() and word[:-1] not in ("allseason",):
            top = ROOT / word if (ROOT / word).exists() else PKG / word
            assert top.exists(), f"the README's Layout names {word}, which is not in the tree"


# The ui reaches the engine through allseason.api alone (and the figures through allseason.viz);
# the page of a subpackage with a public face of its own reads that subpackage (the rule:
# allseason/ui/__init__.py). Imports inside functions count.
PAGE_OF = {
    "paper.py": ("allseason.paper",),
    "paper_runs.py": ("allseason.paper",),
    "sweeps.py": ("allseason.sweeps",),
    "yourdata.py": ("allseason.logs",),
    "yourdata_log.py": ("allseason.logs",),
    "when.py": ("allseason.worldmap",),
}


def test_ui_reaches_the_engine_through_the_facade():
    for path in sorted((ROOT / "allseason" / "ui").glob("*.py")):
        allowed = ("allseason.api", "allseason.viz", "allseason.ui", *PAGE_OF.get(path.name, ()))
        for name in _imports(f"allseason.ui.{path.stem}", path):
            if name.split(".")[0] != "allseason" or name == "allseason":
                continue  # `from allseason import X`: the next test
            assert name.startswith(allowed), (path.name, name)


def test_ui_from_allseason_imports_only_the_facade_and_its_page_subpackage():
    """``from allseason import X``: X is api, viz, ui or the page's own subpackage."""
    import ast

    for path in sorted((ROOT / "allseason" / "ui").glob("*.py")):
        own = {p.split(".")[1] for p in PAGE_OF.get(path.name, ())}
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "allseason":
                for alias in node.names:
                    assert alias.name in {"api", "viz", "ui", *own}, (path.name, alias.name)


# The compiled kernels keep their per-step loop inline: moved into helpers it measured about
# 15% slower (allseason/kernels/__init__.py); a few modules sit a little over 500 lines.
LONG_FUNCTIONS = {"allseason/kernels/allseason.py": 130, "allseason/kernels/denband.py": 145}
LONG_MODULES = {
    "allseason/kernels/denband.py": 530,
    "allseason/logs/reader.py": 540,
    "allseason/ui/yourdata.py": 520,
}


def test_no_room_is_too_big():
    """About 500 lines a module and 80 a function at most, everywhere in allseason/ (the
    compiled kernels' loops excepted: :data:`LONG_FUNCTIONS`)."""
    import ast

    too_big = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > LONG_MODULES.get(rel, 510):
            too_big.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = node.end_lineno - node.lineno + 1
                if size > LONG_FUNCTIONS.get(rel, 80):
                    too_big.append(f"{rel}: {node.name} is {size} lines")
    assert not too_big, "\n".join(too_big)
