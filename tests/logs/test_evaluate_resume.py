"""An offline evaluation that is interrupted (the app reruns its page on any click) resumes
from the runs it had made: the same table as one uninterrupted call, and no run made twice."""

from __future__ import annotations

import pytest

from allseason import api
from allseason.logs import evaluate as evaluate_mod
from allseason.logs import examples

POLICIES = ["allseason-sw", "lints", "random"]


class Rerun(Exception):
    """Stands for Streamlit's rerun, raised from the progress callback."""


@pytest.fixture(scope="module")
def log():
    return api.read_user_file(examples.obd_log(n_rows=1500))


def _counting(monkeypatch) -> list:
    made = []
    real = evaluate_mod.run_one

    def run_one(log, spec, seed, k, fast=True):
        made.append((spec.label, k))
        return real(log, spec, seed, k, fast)

    monkeypatch.setattr(evaluate_mod, "run_one", run_one)
    return made


def _stop_after(n: int):
    def progress(done, total):
        if done >= n:
            raise Rerun

    return progress


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_evaluation_resumes_with_the_same_table(log, monkeypatch, workers):
    whole = api.evaluate(log, POLICIES, n_seeds=2, workers=1).frame()
    made = _counting(monkeypatch)
    runs: dict = {}
    with pytest.raises(Rerun):
        api.evaluate(log, POLICIES, 2, workers=workers, progress=_stop_after(2), done_runs=runs)
    first = len(runs)
    assert first >= 2  # kept what ended, also the runs that were in flight then
    calls: list = []
    resumed = api.evaluate(
        log, POLICIES, 2, workers=workers, done_runs=runs, progress=lambda d, t: calls.append(d)
    )
    assert resumed.frame().equals(whole)
    assert sorted(made) == sorted(set(made)) and len(made) == 6  # no run made twice
    assert calls == list(range(first + 1, 7))  # progress counts the kept ones
    assert list(resumed.runs) == [(s.label, k) for k in range(2) for s in resumed.specs]


def test_a_complete_set_of_runs_makes_no_run(log, monkeypatch):
    runs: dict = {}
    whole = api.evaluate(log, POLICIES, 2, workers=1, done_runs=runs)
    assert len(runs) == 6
    made = _counting(monkeypatch)
    again = api.evaluate(log, POLICIES, 2, workers=2, done_runs=runs)
    assert made == [] and again.frame().equals(whole.frame())
