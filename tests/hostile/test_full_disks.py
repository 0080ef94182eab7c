"""Full and read-only disks (issue 33, item 5): one line naming the folder, the free space
needed and what was kept; never a traceback, never a damaged store or a half-written file.

The disks are real: a 2 MB tmpfs, and a tmpfs remounted read-only (root can write through
chmod, not through a read-only mount). Where mounting is refused (not root, a container
without CAP_SYS_ADMIN) the tests are skipped; ``benchmarks/kill_test.py``'s sibling checks
were run by hand as root (docs/security.md)."""

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from allseason.cli import main

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "allseason").is_dir())

SWEEP = """name = "disk"
seeds = 40
[[scenarios]]
preset = "paper-synthetic"
horizon = 200
[[policies]]
name = "sw-lints"
grid = { tau = [5, 10, 20, 30, 40, 50, 60, 70, 80, 90] }
[[policies]]
name = "lints"
"""
N_RUNS = 440


def _mount(where: Path, options: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()[:80]})")


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB disk."""
    disk = tmp_path / "disk"
    _mount(disk, "size=2m")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


@pytest.fixture
def read_only_disk(tmp_path):
    """A disk holding a finished sweep, remounted read-only (the sweep runs in this process,
    ``--processes 1``: only its store matters here)."""
    disk = tmp_path / "ro"
    _mount(disk, "size=8m")
    (tmp_path / "s.toml").write_text(SWEEP.replace("seeds = 40", "seeds = 1"), encoding="utf-8")
    argv = ["sweep", str(tmp_path / "s.toml"), "--out", str(disk / "disk"), "--quiet"]
    assert main([*argv, "--processes", "1"]) == 0
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def _line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def _integrity(store: Path) -> int:
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def test_a_sweep_on_a_full_disk_says_where_how_much_and_what_is_kept_then_resumes(
    tmp_path, small_disk, capsys
):
    (tmp_path / "s.toml").write_text(SWEEP, encoding="utf-8")
    out = small_disk / "sweep"
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(out), "--quiet"]) == 2
    line = _line(capsys.readouterr().err)
    assert line.startswith(f"error: no space left in {str(out)!r}: about "), line
    assert "MB more is needed" in line and "free now)" in line, line
    assert f"of {N_RUNS} runs are stored there, intact" in line, line
    kept = int(line.split(" of ")[0].rsplit(";", 1)[-1].strip().replace(",", ""))
    big = tmp_path / "big" / "sweep"
    shutil.copytree(out, big)  # a larger disk: the same folder, resumed
    assert _integrity(big / "results.sqlite") == kept
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(big), "--quiet"]) == 0
    assert _integrity(big / "results.sqlite") == N_RUNS


def test_replay_out_and_trace_on_a_full_disk_leave_no_partial_file(
    tmp_path, small_disk, capsys, monkeypatch
):
    with open(small_disk / "filler", "wb", buffering=0) as f:  # fill the disk
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
    log = tmp_path / "log.csv"
    rows = [f"{t},{t % 3},{t % 2},0.3333" for t in range(300)]
    log.write_text("timestamp,arm,reward,propensity\n" + "\n".join(rows) + "\n")
    monkeypatch.setenv("ALLSEASON_RESULTS", str(small_disk / "results"))
    assert main(["replay", str(log), "--seeds", "1", "--policies", "lints", "--out", "r.csv"]) == 2
    line = _line(capsys.readouterr().err)
    assert f"no space left in {str(small_disk / 'results' / 'replay')!r}" in line, line
    assert "the results above are complete; nothing was written (no partial file)" in line
    assert not list((small_disk / "results").rglob("*.csv"))
    trace = small_disk / "trace.csv"
    assert main(["run", "--horizon", "2000", "--seeds", "1", "--trace", str(trace), "--json"]) == 2
    line = _line(capsys.readouterr().err)
    assert (
        f"no space left in {str(small_disk)!r}: about " in line and "no trace was written" in line
    )
    assert not trace.exists() and not list(small_disk.glob(".*tmp"))


def test_a_read_only_results_folder_one_line_each(tmp_path, read_only_disk, capsys, monkeypatch):
    (tmp_path / "s.toml").write_text(SWEEP, encoding="utf-8")
    out = read_only_disk / "new"
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(out), "--quiet"]) == 2
    line = _line(capsys.readouterr().err)
    assert line.startswith(f"error: cannot write in {str(out)!r} (Read-only file system"), line
    assert "nothing is stored there yet; choose a folder you can write with --out" in line
    # a finished sweep on the read-only disk is still read: report, and the page
    assert main(["report", str(read_only_disk / "disk"), "--no-html"]) == 0
    assert "lints" in capsys.readouterr().out


def test_the_sweep_page_reads_a_read_only_results_folder(tmp_path, read_only_disk, monkeypatch):
    """The Sweep results page on a read-only results folder: the sweep is shown, no
    exception (the page opens the store read-only)."""
    from streamlit.testing.v1 import AppTest

    from allseason.ui import sweeps as page

    monkeypatch.setattr(page, "ROOT", read_only_disk)
    script = tmp_path / "page.py"
    script.write_text("from allseason.ui import sweeps\n\nsweeps.show()\n", encoding="utf-8")
    at = AppTest.from_file(str(script), default_timeout=120).run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert "Best setting per algorithm" in [s.value for s in at.subheader]
