"""Plotly figure builders for All-Season: pure functions, tables in, ``go.Figure`` out.

They read the tables of ``RaceResult.to_frames()`` (steps, weights, events, summary), the
``Pattern`` of the scenario, and the outputs of ``analysis.state_table``,
``analysis.recall_table`` and ``api.posterior_history``. This package imports only numpy,
pandas and plotly (never streamlit), so the figures work in the app, a notebook or a script.

One module per thing a person comes to change:

- ``style``: colours keyed by identity (state, policy label, bandit id), human policy names;
- ``layout``: the base layout every figure shares, and legends as HTML keys (``swatch``,
  ``key_html``);
- ``timeline``: the season pattern and the state bands behind every time-axis figure, and
  real dates on a step axis (``date_ticks``);
- ``race``: cumulative reward/regret over time, with a band over seeds; the oracles
  (references) drawn apart; a figure's legend as an HTML key;
- ``leaderboard``: the leaderboard (table and figure) and the final regret over seeds, the
  oracles ranked apart; ``per_state``: the reward per true state;
- All-Season from the inside: ``weights`` (animated bars, the top bandit's weight, stacked
  areas), ``lifelines`` (the bandits' lives), ``learnt`` (who played which state, which
  bandit held the weight in each season of each year, recall after change points) and
  ``posterior`` (animated posteriors); ``bandits`` (one run of a table, the bandits shown
  one by one) and ``animation`` (play button and slider) are what they share;
- ``live``: the Live page's figures, from an ``api.LiveFrame`` (rolling reward rate,
  who holds the top weight, regret since the switch);
- ``sweep``: a sweep's results as small multiples; ``paper`` and ``convergence``: the
  paper's reproduction; ``tour``: the guided tour's cuts; ``offline``: a log's estimates;
- ``export``: standalone HTML and CSV downloads.

Each figure is imported from the module that defines it (the layout from ``layout``, the
leaderboard from ``leaderboard``, the top weight from ``weights``): no module re-exports
another's names for old imports.
"""

from .export import figure_html, frames_csv
from .layout import base_layout
from .leaderboard import final_regret_figure, leaderboard_figure, leaderboard_table
from .learnt import recall_figure, season_year_figure, state_heatmap
from .lifelines import lifelines_figure
from .per_state import reward_by_state_figure
from .posterior import posterior_animation
from .race import cumulative_figure
from .style import SHADOW_COLOR, bandit_colors, policy_colors, policy_name, state_color
from .timeline import add_season_bands, date_ticks, pattern_timeline
from .weights import top_weight_figure, weights_animation, weights_area_figure

__all__ = [
    "state_color",
    "policy_colors",
    "bandit_colors",
    "SHADOW_COLOR",
    "policy_name",
    "base_layout",
    "pattern_timeline",
    "add_season_bands",
    "cumulative_figure",
    "leaderboard_table",
    "leaderboard_figure",
    "final_regret_figure",
    "reward_by_state_figure",
    "weights_animation",
    "top_weight_figure",
    "weights_area_figure",
    "lifelines_figure",
    "state_heatmap",
    "recall_figure",
    "posterior_animation",
    "figure_html",
    "frames_csv",
    "season_year_figure",
    "date_ticks",
]
