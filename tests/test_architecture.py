"""The walls: the engine imports neither streamlit nor plotly; viz imports no streamlit; pages
import only streamlit, allseason.api, allseason.ui and allseason.viz."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield ("." * node.level) + (node.module or "")


def test_engine_imports_neither_streamlit_nor_plotly():
    for path in (ROOT / "allseason").rglob("*.py"):
        rel = path.relative_to(ROOT / "allseason").parts
        if rel[0] in ("viz", "ui"):
            continue
        for name in _imports(path):
            assert not name.startswith(("streamlit", "plotly")), (path, name)


def test_viz_imports_no_streamlit():
    for path in (ROOT / "allseason" / "viz").rglob("*.py"):
        for name in _imports(path):
            assert not name.startswith("streamlit"), (path, name)


def test_pages_import_only_the_facade():
    allowed = ("streamlit", "allseason.api", "allseason.ui", "allseason.viz", "__future__")
    pages = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py"))]
    for path in pages:
        if not path.exists():
            continue
        for name in _imports(path):
            assert name.startswith(allowed) or name in ("allseason",), (path, name)


def test_importing_allseason_loads_no_ui_library():
    code = (
        "import sys, allseason, allseason.api, allseason.cli; "
        "print(any(m.split('.')[0] in ('streamlit', 'plotly') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# The ui reaches the engine through allseason.api alone (and the figures through allseason.viz);
# the page of a subpackage with a public face of its own reads that subpackage (the rule:
# allseason/ui/__init__.py). Imports inside functions count.
PAGE_OF = {
    "paper.py": ("allseason.paper",),
    "paper_runs.py": ("allseason.paper",),
    "sweeps.py": ("allseason.sweeps",),
    "yourdata.py": ("allseason.logs",),
}


def _absolute(name: str) -> str:
    """A relative import in a ui module as an absolute name (``.frame``: allseason.ui.frame)."""
    if not name.startswith("."):
        return name
    return "allseason.ui" + ("." + name.lstrip(".") if name.strip(".") else "")


def test_ui_reaches_the_engine_through_the_facade():
    for path in sorted((ROOT / "allseason" / "ui").glob("*.py")):
        allowed = ("allseason.api", "allseason.viz", "allseason.ui", *PAGE_OF.get(path.name, ()))
        for name in (_absolute(n) for n in _imports(path)):
            if name == "allseason" or not name.startswith("allseason"):
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


def test_no_ui_module_is_too_big():
    """About 500 lines a module and 80 a function at most (yourdata.py: the reader and
    estimators branches' page, 86 and 83, left as it is)."""
    import ast

    for path in sorted((ROOT / "allseason" / "ui").glob("*.py")):
        text = path.read_text()
        assert len(text.splitlines()) <= 510, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = node.end_lineno - node.lineno + 1
                assert size <= (90 if path.name == "yourdata.py" else 80), (path.name, node.name)
