"""Inside All-Season: the weights of its bandits, their lives, and what each one learnt.

The figures live in one module per subject; this module gathers them under the name the
app and notebooks use (``viz.inside.top_weight_figure``, ...):

- :mod:`~allseason.viz.weights`: the weights, animated (bars), of the top bandit after
  each batch (the paper's figure 2, bottom), and stacked over time;
- :mod:`~allseason.viz.lifelines`: the bandits' lives, from spawn to prune;
- :mod:`~allseason.viz.learnt`: who played which state, which bandit held the weight in
  each season of each year, recall after change points;
- :mod:`~allseason.viz.posterior`: the posteriors, animated;
- :mod:`~allseason.viz.bandits` and :mod:`~allseason.viz.animation`: what they share
  (one run of a table, the bandits shown one by one; play button and slider).

One run at a time. The figures that read the engine's race tables (``weights``,
``events``) take them **as returned by** ``to_frames()`` and pick the run with the keyword
arguments ``policy=`` and ``seed=``; a table already filtered to one (policy, seed) needs
neither. A table holding several runs without ``policy``/``seed`` raises ``ValueError``.
``state_heatmap``, ``recall_figure`` and ``posterior_animation`` take the outputs of
``analysis.state_table``, ``analysis.recall_table`` and ``api.posterior_history``, which are
one run already.

All-Season may spawn hundreds of base bandits in a run, most of them pruned within a few
steps. To stay readable the weight figures show the shadow and the ``max_bandits`` base
bandits with the largest total weight over the run one by one, and the others summed in
one "other bandits" category (a sum, so nothing is lost); the lifelines show the longest
lived bandits as lanes and the others as ticks in one "short-lived" lane.

Bandit ids are those of the engine: 0 the shadow, 1, 2, ... base bandits in order of
creation (bandit 1 exists from step 0), -1 the one model of a single-model policy.
"""

from __future__ import annotations

from .bandits import NO_WEIGHTS, OTHERS_COLOR
from .learnt import NEVER_COLOR, recall_figure, season_year_figure, state_heatmap
from .lifelines import BIRTH_KINDS, DEATH_KINDS, bandit_lives, lifelines_figure
from .posterior import posterior_animation
from .weights import (
    minmax_index,
    top_of_each_batch,
    top_weight_figure,
    top_weight_figure_of,
    weights_animation,
    weights_area_figure,
)

__all__ = [
    "weights_animation",
    "top_weight_figure",
    "top_weight_figure_of",
    "weights_area_figure",
    "lifelines_figure",
    "state_heatmap",
    "season_year_figure",
    "recall_figure",
    "posterior_animation",
    "bandit_lives",
    "top_of_each_batch",
    "minmax_index",
    "NO_WEIGHTS",
    "OTHERS_COLOR",
    "NEVER_COLOR",
    "BIRTH_KINDS",
    "DEATH_KINDS",
]
