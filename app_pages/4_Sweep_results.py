"""Sweep results: a stored sweep's reward against each hyperparameter, as small multiples."""

from allseason.ui import sweep_view, views

views.page(
    "Sweep results",
    "How sensitive is each algorithm to its hyperparameters? Pick a sweep run with "
    "`python -m allseason sweep`; each panel shows the metric against one "
    "hyperparameter, one line per algorithm.",
    icon=":material/tune:",
)

with views.guard("the sweep results"):
    sweep_view.show()
