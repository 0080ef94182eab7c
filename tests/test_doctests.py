"""The examples in the public modules' docstrings run, as ``pytest --doctest-modules`` would
run them (``python -m pytest --doctest-modules allseason/api.py`` does the same by hand).
Each module listed must hold at least one example, so the list stays honest."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "allseason.api",
    "allseason.specs",
    "allseason.errors",
    "allseason.links",
    "allseason.models",
    "allseason.envs.patterns",
    "allseason.envs.arms",
    "allseason.policies",
    "allseason.policies.params",
    "allseason.policies.ridge",
    "allseason.policies.allseason",
    "allseason.policies.lints",
    "allseason.policies.bob",
    "allseason.policies.random",
    "allseason.policies.oracle",
    "allseason.paper.tables",
    "allseason.sim.live",
]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# Your data
MODULES += [
    "allseason.logs.reader",
    "allseason.logs.cells",
    "allseason.logs.problems",
    "allseason.logs.offline",
    "allseason.logs.table",
    "allseason.logs.examples",
    "allseason.viz.timeline",
]

# the agent (issue 31)
MODULES += ["allseason.agent.statefile"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in doctest.DocTestFinder().find(module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"{name}: no docstring example"
    assert result.failed == 0, f"{name}: {result.failed} example(s) failed (printed above)"
