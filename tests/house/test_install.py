"""The install: Dask is an optional extra (the package and the process pool work without it,
asking for it says how to install it), Python >= 3.11 as the pins need, a LICENSE."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from allseason.sweeps.execute import DASK_MISSING

ROOT = Path(__file__).resolve().parents[2]
INSTALL = "pip install 'allseason[sweeps]'"

# run in a fresh interpreter where `import dask` / `import distributed` fail, as if missing
NO_DASK = (
    "import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None; "
    "from allseason.cli import main; sys.exit(main(sys.argv[1:]))"
)


@pytest.fixture()
def sweep_file(tmp_path):
    f = tmp_path / "tiny.json"
    f.write_text(
        json.dumps(
            {
                "name": "tiny",
                "seeds": 2,
                "scenarios": [{"preset": "regular", "horizon": 120}],
                "policies": [{"name": "lints"}],
            }
        )
    )
    return f


def _no_dask(*args):
    return subprocess.run(
        [sys.executable, "-c", NO_DASK, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


@pytest.mark.parametrize("flag", [["--workers", "2"], ["--scheduler", "tcp://127.0.0.1:1"]])
def test_asking_for_dask_without_it_is_one_line_exit_2(
    sweep_file, tmp_path, monkeypatch, capsys, flag
):
    from allseason.cli import main

    monkeypatch.setitem(sys.modules, "dask", None)  # `import dask` raises ImportError
    monkeypatch.setitem(sys.modules, "distributed", None)
    out = tmp_path / "out"
    assert main(["sweep", str(sweep_file), *flag, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "Dask is not installed" in err and INSTALL in err
    assert "requirements-sweeps.txt" in err
    assert not out.exists()  # refused before the results folder was touched


def test_without_dask_the_package_and_the_process_pool_work(sweep_file, tmp_path):
    out = tmp_path / "out"
    # 2 processes for the 2 runs: a pool of one process runs in the driver (sweeps.run_jobs)
    p = _no_dask("sweep", sweep_file, "--processes", "2", "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    p = _no_dask("report", out, "--no-html")
    assert p.returncode == 0 and "2 of 2 runs stored (complete)" in p.stdout, p.stderr
    p = _no_dask("sweep", sweep_file, "--workers", "2", "--out", tmp_path / "d")
    assert p.returncode == 2 and p.stderr.strip().splitlines() == ["error: " + DASK_MISSING]


def test_dask_is_an_extra_not_a_requirement():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any("dask" in d or "distributed" in d for d in project["dependencies"])
    extra = project["optional-dependencies"]["sweeps"]
    assert sorted(extra) == sorted(_pins("requirements-sweeps.txt"))  # the same pins both ways
    assert not any(p.startswith(("dask", "distributed")) for p in _pins("requirements.txt"))
    assert "-r requirements-sweeps.txt" in (ROOT / "requirements-dev.txt").read_text()


def _pins(name):
    lines = (ROOT / name).read_text().splitlines()
    return [x.strip() for x in lines if x.strip() and not x.startswith(("#", "-r"))]


def test_requires_python_matches_the_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"  # numpy 2.4, scipy 1.17, pandas 3 need it
    assert sys.version_info >= (3, 11)


def test_license_is_mit():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "2026 The All-Season explorer authors" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}
