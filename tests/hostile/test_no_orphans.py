"""No orphans (issue 33, item 4): a driver killed with SIGKILL while its process pool works
leaves no process behind (the workers die with their parent, ``prctl(PR_SET_PDEATHSIG)``),
and the same command then resumes to the result of an uninterrupted run.

A short version of ``benchmarks/kill_test.py`` (which does 20 random kills of each, on larger
inputs; these are its ``--size small``): 2 kills of each of ``sweep``, ``map`` and
``replay --processes 2``, each 0-0.5 s after the driver's pool is up, so that every kill finds
workers alive; and one of ``sweep --workers 2`` (a Dask LocalCluster) once its workers are up.

The kills are real processes with their pools of 2 (what this file is about). The
uninterrupted run and the resume after the kills are the same command through
:func:`allseason.cli.main` in this process, with ``--processes 1`` (inline: a run's result
does not depend on the executor, and what a resume skips is read from the store; a real
process resumes a killed sweep in ``tests/cli/test_sweeps.py``, a killed map in
``tests/cli/test_worldmap.py``)."""

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "allseason").is_dir())

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's"
)


def _kill_test():
    spec = importlib.util.spec_from_file_location("kill_test", ROOT / "benchmarks" / "kill_test.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _one_process(argv: list[str]) -> list[str]:
    """``argv`` with ``--processes 1`` (instead of its own count, if it has one)."""
    if "--processes" in argv:
        i = argv.index("--processes")
        return [*argv[: i + 1], "1", *argv[i + 2 :]]
    return [*argv, "--processes", "1"]


def _here(monkeypatch, capsys):
    """:func:`kill_test.run` in this process, inline (its cwd and results folder)."""
    from allseason.cli import main

    def run(argv, work, tag, timeout=None):
        monkeypatch.chdir(work)
        monkeypatch.setenv("ALLSEASON_RESULTS", str(work / "results"))
        t0 = time.perf_counter()
        try:
            code = main(_one_process(list(argv)))
        except SystemExit as e:  # argparse's exits, as in the process
            code = e.code
        return code, time.perf_counter() - t0, capsys.readouterr().err

    return run


@pytest.mark.parametrize("command", ["sweep", "map", "replay"])
def test_a_killed_driver_leaves_no_process_and_resumes_identically(
    tmp_path, command, monkeypatch, capsys
):
    kt = _kill_test()
    argv_of = kt.commands(tmp_path)[command]
    row = kt.kill_round(
        command,
        argv_of,
        tmp_path,
        2,
        np.random.default_rng(33),
        when="workers",
        reference=_here(monkeypatch, capsys),
        resume=_here(monkeypatch, capsys),
    )
    assert row["orphans_after_2s"] == 0, row
    assert row["identical"], row


def test_a_worker_asks_to_die_with_its_parent():
    """The initializer sets the signal (read back with PR_GET_PDEATHSIG in a child)."""
    import ctypes
    import signal

    from allseason.sweeps.pool import die_with_parent

    pid = os.fork()
    if pid == 0:  # the child: set, read back, report by exit code
        ok = die_with_parent(os.getppid())
        sig = ctypes.c_int(0)
        ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
        os._exit(0 if ok and sig.value == signal.SIGKILL else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_killed_dask_driver_leaves_no_worker(tmp_path):
    """``sweep --workers 2``: the LocalCluster's workers are forked by the guarded
    forkserver (spawned, Dask's default, they lived 5-15 s after the driver's SIGKILL)."""
    pytest.importorskip("distributed")
    kt = _kill_test()
    argv = kt.commands(tmp_path, dask=True)["sweep"](tmp_path / "out")
    tag = f"dask-kill-{os.getpid()}"
    p = subprocess.Popen(
        [sys.executable, "-m", "allseason", *argv],
        cwd=tmp_path,
        env=kt._env(tmp_path, tag),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # up: the driver, its resource tracker, the forkserver and the 2 workers
        assert kt._wait_for_workers(p, tag, 120, n=5), "the sweep ended before its workers"
        kinds = [kt._kind(pid) for pid in kt.tagged(tag)]
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        time.sleep(2)
        left = {pid: kt._kind(pid) for pid in kt.tagged(tag)}
    finally:
        for pid in kt.tagged(tag):  # ours: never leave them
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
    assert kinds.count("forkserver") == 3, kinds  # the server and the 2 workers it forked
    assert left == {}, left
