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
