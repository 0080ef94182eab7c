"""The engine works without the app's extras (streamlit, plotly).

The command line's ``run``, ``sweep`` then ``report``, ``replay`` and ``paper`` run in a Python
where ``streamlit`` and ``plotly`` cannot be imported: a finder at the head of
``sys.meta_path``, installed before ``allseason`` is imported, refuses them as an engine-only
install would (``ModuleNotFoundError``). Each command works (exit 0) or exits with one line
that says what to install, and never with a traceback.

And by reading the code: no module of the engine (``allseason/`` but ``viz/`` and ``ui/``)
imports streamlit, plotly or the app's glue, not even inside a function (ast over every node);
``allseason.viz`` only where a command draws a figure on demand behind a check that names
what to install (:data:`VIZ_ON_DEMAND`).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "allseason"
REFUSED = ("streamlit", "plotly")
# the engine's modules that import allseason.viz, lazily, for a figure a command draws on
# demand, and say what to install without it
VIZ_ON_DEMAND = {"allseason.cli.sweep": "report's HTML plot (needs plotly)"}

PRELUDE = textwrap.dedent(
    f"""
    import sys

    class EngineOnly:
        \"\"\"{" and ".join(REFUSED)} are not installed: an engine-only install.\"\"\"

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {REFUSED!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, EngineOnly())
    """
)
LAUNCHER = PRELUDE + textwrap.dedent(
    """
    import runpy

    sys.argv = ["python -m allseason", *sys.argv[1:]]
    runpy.run_module("allseason", run_name="__main__", alter_sys=True)
    """
)


def _env(tmp_path: Path) -> dict:
    return dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        ALLSEASON_RESULTS=str(tmp_path / "results"),
        PYTHONWARNINGS="ignore",
    )


def engine_only(tmp_path: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """``python -m allseason ARGS`` with streamlit and plotly refused."""
    launcher = tmp_path / "engine_only.py"
    launcher.write_text(LAUNCHER)
    return subprocess.run(
        [sys.executable, str(launcher), *args],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def works_or_says_what_to_install(out: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in out.stderr, out.stderr
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and "install" in lines[0], (out.returncode, out.stderr)


def test_the_libraries_are_refused(tmp_path):
    for name in REFUSED:
        code = PRELUDE + f"import {name}\n"
        out = subprocess.run(
            [sys.executable, "-c", code], env=_env(tmp_path), capture_output=True, text=True
        )
        assert out.returncode == 1 and f"No module named '{name}'" in out.stderr


def test_run(tmp_path):
    out = engine_only(
        tmp_path, "run", "--horizon", "300", "--seeds", "1", "--policies", "lints,allseason-sw"
    )
    works_or_says_what_to_install(out)
    assert out.returncode == 0 and "allseason-sw" in out.stdout, out.stdout


def test_sweep_then_report(tmp_path):
    sweep = tmp_path / "tiny.toml"
    sweep.write_text(
        textwrap.dedent(
            """
            name = "tiny"
            seeds = 2

            [[scenarios]]
            preset = "regular"
            horizon = 120

            [[policies]]
            name = "sw-lints"
            grid = { tau = [5, 20] }

            [[policies]]
            name = "lints"
            """
        )
    )
    folder = tmp_path / "tiny"
    out = engine_only(tmp_path, "sweep", str(sweep), "--out", str(folder), "--processes", "1")
    works_or_says_what_to_install(out)
    assert out.returncode == 0 and (folder / "results.sqlite").is_file(), out.stderr
    # the default report: the table, and one line on the plot it could not draw
    out = engine_only(tmp_path, "report", str(folder))
    works_or_says_what_to_install(out)
    assert out.returncode == 0 and "sw-lints" in out.stdout
    assert out.stderr.strip().startswith("no plot:") and "pip install" in out.stderr
    assert not (folder / "report.html").exists()
    # a plot asked for: one line that says what to install
    out = engine_only(tmp_path, "report", str(folder), "--html", str(tmp_path / "r.html"))
    works_or_says_what_to_install(out)
    assert out.returncode == 2 and "plotly" in out.stderr
    # no plot asked for: nothing on stderr
    out = engine_only(tmp_path, "report", str(folder), "--no-html")
    assert out.returncode == 0 and not out.stderr.strip(), out.stderr


def test_replay(tmp_path):
    from allseason.logs import examples

    log = tmp_path / "log.csv"
    log.write_bytes(examples.obd_log(n_rows=3_000))
    out = engine_only(tmp_path, "replay", str(log), "--seeds", "1")
    works_or_says_what_to_install(out)
    assert out.returncode == 0, out.stderr


def test_paper(tmp_path):
    """A small reproduction (500 images, one seed); where the data sets are not installed,
    the one line that says how to install them."""
    out = engine_only(
        tmp_path,
        "paper",
        "--table",
        "mnist-2arm",
        "--n",
        "500",
        "--seeds",
        "1",
        "--processes",
        "1",
        "--quiet",
        "--out",
        str(tmp_path / "paper"),
    )
    works_or_says_what_to_install(out)
    assert out.returncode == 0 or "mnist" in out.stderr.lower(), out.stderr
    if out.returncode == 0:
        assert "All-Season" in out.stdout


# --- by reading the code ------------------------------------------------------------------------
def _modules() -> list[tuple[Path, str, list[str]]]:
    """(path, dotted name, package) of every engine module."""
    out = []
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[1] in ("viz", "ui"):
            continue
        package = parts[:-1]  # a module's package; an __init__'s, itself
        out.append((path, ".".join(package if parts[-1] == "__init__" else parts), package))
    return out


def _imported(tree: ast.AST, package: list[str]):
    """Every module name an import statement anywhere in ``tree`` names, made absolute."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod
            yield from (f"{mod}.{a.name}" for a in node.names)  # `from .. import viz`


def test_the_parser_sees_imports_inside_functions():
    tree = ast.parse("def f():\n    from ..viz.sweep import x\n    import plotly.io\n")
    names = set(_imported(tree, ["allseason", "sweeps"]))
    assert {"allseason.viz.sweep", "plotly.io"} <= names


@pytest.mark.parametrize("path, name, package", _modules(), ids=[m[1] for m in _modules()])
def test_no_engine_module_imports_the_app_libraries(path, name, package):
    for mod in _imported(ast.parse(path.read_text(encoding="utf-8")), package):
        top = mod.split(".")
        assert top[0] not in REFUSED, (name, mod)
        assert top[:2] != ["allseason", "ui"], (name, mod)
        if top[:2] == ["allseason", "viz"]:
            assert name in VIZ_ON_DEMAND, (name, mod)
