"""The lives of All-Season's base bandits: one lane per bandit from its birth (spawned from
the shadow) to its pruning (or the end), the twin it was pruned against on hover.

A run may spawn hundreds of bandits, most pruned within a few steps: the longest lived get
a lane each, the others are ticks in one "short-lived" lane. Bandit ids are those of the
engine: 1, 2, ... base bandits in order of creation (bandit 1 exists from step 0).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .bandits import one_run, title_policy
from .layout import INK, base_layout, empty_figure
from .race import sample_index
from .style import SHADOW_COLOR, bandit_color, bandit_label
from .timeline import add_season_bands

BIRTH_KINDS = ("spawn", "create")
DEATH_KINDS = ("prune", "discard")


def bandit_lives(events: pd.DataFrame, weights: pd.DataFrame | None, horizon: int) -> pd.DataFrame:
    """One row per base bandit: birth (spawn step; 0 for bandit 1), death (prune step, or
    NaN if alive at the end), twin and value of the prune, and life (steps lived).

    Parameters
    ----------
    events : pandas.DataFrame or None
        One run's ``events`` table (step, kind, bandit, other, value).
    weights : pandas.DataFrame or None
        The same run's ``weights`` table (births of bandits without an event).
    horizon : int
        The number of steps of the run.

    Returns
    -------
    pandas.DataFrame
        Index ``bandit``; columns birth, death, twin, value, life.
    """
    ev = events if events is not None else pd.DataFrame(columns=["step", "kind", "bandit"])
    births = ev[ev["kind"].isin(BIRTH_KINDS)].groupby("bandit")["step"].min()
    deaths = ev[ev["kind"].isin(DEATH_KINDS)].drop_duplicates("bandit", keep="first")
    deaths = deaths.set_index("bandit")
    seen = set(births.index.tolist()) | set(deaths.index.tolist())
    if weights is not None and len(weights):
        first = weights[weights["bandit"] > 0].groupby("bandit")["step"].min()
        seen |= set(first.index.tolist())
    else:
        first = pd.Series(dtype=float)
    ids = sorted(int(i) for i in seen if i > 0)
    if 1 not in ids and ids:
        ids = [1] + ids
    lives = pd.DataFrame(index=pd.Index(ids, name="bandit"))
    lives["birth"] = births.reindex(ids)
    lives.loc[lives.index == 1, "birth"] = lives.loc[lives.index == 1, "birth"].fillna(0)
    lives["birth"] = lives["birth"].fillna(first.reindex(ids)).fillna(0).astype(np.int64)
    lives["death"] = deaths["step"].reindex(ids) if len(deaths) else np.nan
    lives["twin"] = deaths["other"].reindex(ids) if len(deaths) else np.nan
    lives["value"] = deaths["value"].reindex(ids) if len(deaths) else np.nan
    end = lives["death"].fillna(horizon - 1)
    lives["life"] = (end - lives["birth"]).astype(np.int64)
    return lives


def _lanes(lives: pd.DataFrame, max_lanes: int, min_life: int | None):
    """(shown, hidden, min_life): the bandits with a lane (lived at least ``min_life``
    steps; default: the threshold that leaves at most ``max_lanes``), and the others."""
    ranked = lives.sort_values(["life", "birth"], ascending=[False, True], kind="stable")
    if min_life is None:  # the smallest threshold that leaves at most max_lanes lanes
        life = ranked["life"].to_numpy()
        min_life = int(life[min(max_lanes, len(life)) - 1])
        if (life >= min_life).sum() > max_lanes:
            min_life += 1
    shown = ranked[ranked["life"] >= min_life].sort_index()
    hidden = lives.loc[~lives.index.isin(shown.index)]
    return shown, hidden, min_life


def _twin_text(df: pd.DataFrame, distance_name: str) -> list[str]:
    """How each bandit ended: alive, or pruned at a step, closest to its twin."""
    return [
        (
            "alive at the end"
            if np.isnan(d)
            else f"pruned at step {int(d):,}: closest to {bandit_label(int(t))}"
            + ("" if np.isnan(v) else f" ({distance_name} {v:.2f})")
        )
        for d, t, v in zip(df["death"], df["twin"], df["value"])
    ]


def _lifetimes(shown: pd.DataFrame, lane_of: dict, horizon: int, distance_name: str) -> dict:
    """The lanes' bars, from birth to death (or the end), coloured by id."""
    ends = shown["death"].fillna(horizon - 1).to_numpy()
    txt = _twin_text(shown, distance_name)
    return dict(
        type="bar",
        orientation="h",
        base=shown["birth"].to_numpy(),
        x=np.maximum(ends - shown["birth"].to_numpy(), 1),
        y=np.array([lane_of[b] for b in shown.index]),
        width=0.55,
        name="lifetime (colour = id)",
        marker=dict(color=[bandit_color(b) for b in shown.index], line=dict(width=0)),
        customdata=np.stack(
            [[bandit_label(b) for b in shown.index], shown["birth"], shown["life"], txt], axis=1
        ),
        hovertemplate=(
            "<b>%{customdata[0]}</b><br>born at step %{customdata[1]:,}<br>"
            "lived %{customdata[2]:,} steps<br>%{customdata[3]}<extra></extra>"
        ),
    )


def _spawns(shown: pd.DataFrame, lane_of: dict) -> dict:
    """A ▶ at each spawn (bandit 1 is not spawned)."""
    born = shown[shown.index != 1]
    return dict(
        type="scatter",
        x=born["birth"],
        y=[lane_of[b] for b in born.index],
        mode="markers",
        name="spawned (copy of the shadow)",
        marker=dict(
            symbol="triangle-right",
            size=10,
            color=SHADOW_COLOR,
            line=dict(width=1, color="#fff"),
        ),
        customdata=[[bandit_label(b)] for b in born.index],
        hovertemplate="%{customdata[0]} spawned at step %{x:,}<extra></extra>",
    )


def _prunes(shown: pd.DataFrame, lane_of: dict, distance_name: str) -> dict:
    """A ✕ at each prune, its hover the closest twin."""
    dead = shown[shown["death"].notna()]
    return dict(
        type="scatter",
        x=dead["death"],
        y=[lane_of[b] for b in dead.index],
        mode="markers",
        name="pruned (hover: closest twin)",
        marker=dict(symbol="x", size=10, color=INK, line=dict(width=1, color="#fff")),
        customdata=np.stack(
            [[bandit_label(b) for b in dead.index], _twin_text(dead, distance_name)], axis=1
        )
        if len(dead)
        else None,
        hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]}<extra></extra>",
    )


def _short_lived(hidden: pd.DataFrame, lane: int, distance_name: str) -> dict:
    """A tick at the birth of each short-lived bandit (at most 1,000), in the bottom lane."""
    h = hidden.iloc[sample_index(len(hidden), 1000)]
    return dict(
        type="scatter",
        x=h["birth"],
        y=np.full(len(h), lane),
        mode="markers",
        name=f"short-lived bandits ({len(hidden)}): birth",
        marker=dict(symbol="line-ns-open", size=12, color=INK, line=dict(width=1.5, color=INK)),
        customdata=np.stack(
            [[bandit_label(b) for b in h.index], h["life"], _twin_text(h, distance_name)], axis=1
        ),
        hovertemplate=(
            "<b>%{customdata[0]}</b><br>born at step %{x:,}, lived "
            "%{customdata[1]} steps<br>%{customdata[2]}<extra></extra>"
        ),
    )


def _lanes_layout(fig, title, shown, hidden, n_lives, min_life, horizon, pattern) -> None:
    """Title, a tick label per lane, the step axis and the state bands (``fig`` in place)."""
    n_lanes = len(shown) + (1 if len(hidden) else 0)
    ticks = [bandit_label(b) for b in shown.index] + (
        [f"short-lived ({len(hidden)})"] if len(hidden) else []
    )
    note = (
        f"{len(shown)} of {n_lives} base bandits as lanes (lived ≥ {min_life:,} steps); "
        f"{len(hidden)} shorter-lived ones as ticks in the bottom lane"
        if len(hidden)
        else f"all {n_lives} base bandits"
    )
    fig.update_layout(
        **base_layout(
            title, "step", None, subtitle=note, height=int(min(max(320, 150 + 24 * n_lanes), 1000))
        ),
        bargap=0.3,
    )
    fig.update_yaxes(
        tickvals=list(range(n_lanes)),
        ticktext=ticks,
        range=[n_lanes - 0.5, -0.5],
        autorange=False,
        showgrid=False,
    )
    fig.update_xaxes(range=[0, horizon])
    if pattern is not None:
        add_season_bands(fig, pattern, numbers="top")  # lanes fill the plot


def lifelines_figure(
    events: pd.DataFrame,
    weights: pd.DataFrame,
    horizon,
    *,
    policy=None,
    seed=None,
    max_lanes: int = 25,
    min_life: int | None = None,
    distance_name: str = "symmetric KL",
    pattern=None,
) -> go.Figure:
    """One lane per base bandit, from birth (spawn) to pruning (or the end), with spawn (▶)
    and prune (✕) markers; hovering a prune shows the twin it was closest to and the
    distance (``distance_name``: "symmetric KL", or "mean distance" with pruning="mean").

    ``horizon``: the number of steps, or the Pattern (then the true state is drawn as bands;
    ``pattern=`` does the same). Readability: lanes only for bandits that lived at least
    ``min_life`` steps (default: the threshold that leaves at most ``max_lanes`` lanes, the
    longest lived); every other bandit is a tick at its birth in one "short-lived" lane at
    the bottom, and the title says how many there are.

    Traces: lifetimes (bars), spawns, prunes, short-lived ticks, then the state legend.

    Parameters
    ----------
    events : pandas.DataFrame
        The ``events`` table of ``to_frames()``.
    weights : pandas.DataFrame or None
        The ``weights`` table of ``to_frames()``.
    horizon : int or Pattern
        The number of steps, or the scenario's pattern.
    policy, seed : optional
        The run to draw, if the tables hold several.
    max_lanes : int, default 25
        The most lanes (when ``min_life`` is None).
    min_life : int, optional
        The fewest steps a bandit must live to get a lane.
    distance_name : str, default "symmetric KL"
        What the prune's value measures.
    pattern : Pattern, optional
        The season pattern, drawn as bands.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if hasattr(horizon, "segments"):
        pattern, horizon = horizon, horizon.horizon
    horizon = int(horizon)
    ev = one_run(events, policy, seed, "events")
    w = one_run(weights, policy, seed, "weights") if weights is not None else None
    title = "Lives of the base bandits" + title_policy(ev if len(ev) else w, policy)
    lives = bandit_lives(ev, w, horizon) if len(ev) or (w is not None and len(w)) else None
    if lives is None or not len(lives):
        return empty_figure(
            "No bandits to show: this policy is not an ensemble (or has not run).", title
        )
    shown, hidden, min_life = _lanes(lives, max_lanes, min_life)
    lane_of = {b: i for i, b in enumerate(shown.index)}
    fig = go.Figure()
    fig.add_trace(_lifetimes(shown, lane_of, horizon, distance_name))
    fig.add_trace(_spawns(shown, lane_of))
    fig.add_trace(_prunes(shown, lane_of, distance_name))
    if len(hidden):
        fig.add_trace(_short_lived(hidden, len(shown), distance_name))
    _lanes_layout(fig, title, shown, hidden, len(lives), min_life, horizon, pattern)
    return fig


__all__ = ["lifelines_figure", "bandit_lives", "BIRTH_KINDS", "DEATH_KINDS"]
