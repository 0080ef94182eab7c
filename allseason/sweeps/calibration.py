"""The speed of this machine for the cost estimates (:mod:`allseason.costs`): the calibration's
short runs (:data:`allseason.costs.CALIBRATION`) timed here, as the sweeps run them."""

from __future__ import annotations

import time

from .. import costs
from ..defaults import default_params
from ..specs import PolicySpec, Scenario
from .execute import run_unit
from .spec import Unit


def calibration_seconds(repeats: int = 3) -> float:
    """CPU-seconds of the cost calibration's short runs (:data:`allseason.costs.CALIBRATION`)
    in this thread (another thread's work does not count), the median of ``repeats``; the
    kernels compiled first (:func:`allseason.api.warm_up`)."""
    units = [
        Unit(
            Scenario.from_preset("paper-synthetic", horizon=n, d=d, n_arms=k),
            PolicySpec(name, default_params(name)),
            0,
        )
        for name, d, k, n in costs.CALIBRATION
    ]
    times = []
    for _ in range(repeats):
        t0 = time.thread_time()
        for unit in units:
            run_unit(unit)
        times.append(time.thread_time() - t0)
    return sorted(times)[len(times) // 2]


__all__ = ["calibration_seconds"]
