"""Sweep results: a stored sweep's reward against each hyperparameter, as small multiples.

A sweep and a metric to pick, the small multiples, and the best setting per algorithm."""

from allseason.ui import frame, sweeps

frame.page(
    "How sensitive is each algorithm to its hyperparameters? Pick a sweep run with "
    "`python -m allseason sweep`; each panel shows the metric against one "
    "hyperparameter, one line per algorithm."
)

with frame.guard("the sweep results"):
    sweeps.show()
