"""A log's first N events (allseason.logs.subsample): as many as the budget allows, refused
below the minimum with the command line, and the same evaluation as a file of those events."""

from __future__ import annotations

import numpy as np
import pytest

from allseason import api, costs
from allseason.errors import SpecError
from allseason.logs import examples, subsample

NAMES = ["lints", "random"]


def _log(n: int):
    return api.read_user_file(examples.obd_log(n_rows=n), "log")


@pytest.mark.parametrize("budget", [0.5, 3.0, 20.0])
def test_the_first_events_are_as_many_as_the_budget_allows(budget):
    log = _log(5000)
    plan = subsample.plan(log, 2, NAMES, budget=budget)
    full = costs.estimate_replay(5000, log.d, log.n_arms, NAMES, 2)
    if full <= budget:
        assert plan.whole and plan.text == "all 5,000 events" and plan.seconds == full
        return
    assert plan.first < 5000 and plan.text == f"first {plan.first:,} of 5,000 events"
    assert costs.estimate_replay(plan.first, log.d, log.n_arms, NAMES, 2) <= budget
    # two significant digits: one more step of the rounding would not fit
    step = 10 ** (len(str(plan.first)) - 2)
    assert costs.estimate_replay(plan.first + step, log.d, log.n_arms, NAMES, 2) > budget


def test_a_log_of_which_too_little_fits_is_refused_with_the_command():
    log = _log(5000)
    cmd = subsample.replay_command("my log.csv", 3, {"context": "x0,x1", "arms": ""})
    assert cmd == "python -m allseason replay 'my log.csv' --seeds 3 --context x0,x1"
    with pytest.raises(SpecError) as e:
        subsample.plan(log, 3, NAMES, budget=1e-3, command=cmd)
    assert e.value.field == "budget" and cmd in e.value.message
    assert f"first {subsample.MIN_EVENTS:,} events" in e.value.message


def test_the_first_events_evaluate_as_a_file_of_them_alone():
    log, n = _log(3000), 1200
    part = subsample.head(log, n)
    assert part.n_events == n and part.n_arms == log.n_arms
    assert np.array_equal(part.contexts, log.contexts[:n]) and subsample.head(log, 10**6) is log
    text = examples.obd_log(n_rows=3000).decode().splitlines()
    alone = api.read_user_file(("\n".join(text[: n + 1]) + "\n").encode(), "log")
    a = api.evaluate(part, NAMES, 1, 0, workers=1).frame()
    b = api.evaluate(alone, NAMES, 1, 0, workers=1).frame()
    cols = [c for c in a.columns if c != "seconds"]
    assert len(a) > len(NAMES) and a[cols].equals(b[cols])
