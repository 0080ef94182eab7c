"""All-Season's weights over a run: animated bars (one per bandit), the weight of the most
likely bandit after each batch (the paper's figure 2, bottom), and the stacked weights of
all bandits over time.

One run at a time: pass a ``weights`` table of ``to_frames()`` and pick the run with
``policy=`` and ``seed=`` (see :mod:`allseason.viz.bandits`). The shadow and the
``max_bandits`` base bandits with the largest total weight are shown one by one, the
others summed in one "other bandits" category (a sum, so nothing is lost).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .animation import animation_controls, frame_title, plain
from .bandits import (
    NO_WEIGHTS,
    OTHERS_COLOR,
    key_bandits,
    minmax_index,
    one_run,
    sampled_batches,
    state_at,
    title_policy,
)
from .layout import INK, LEGEND_BELOW, base_layout, empty_figure
from .style import SHADOW, SHADOW_COLOR, bandit_color, bandit_label
from .timeline import add_change_points, add_season_bands


# -- animated bars -----------------------------------------------------------------------------
class _Bars(NamedTuple):
    """The bars of every frame of :func:`weights_animation` (one row per frame)."""

    chosen: np.ndarray  # the frames' batches
    step_of: np.ndarray  # the step at which each batch ended
    states: np.ndarray  # the true state then (-1: no pattern)
    keep: list[int]  # the base bandits shown one by one
    shadow: np.ndarray  # (frames,)
    kept: np.ndarray  # (frames, len(keep))
    kept_alive: np.ndarray  # (frames, len(keep)) bool
    others: np.ndarray  # (frames,): the sum of the others' weights
    n_others: np.ndarray  # (frames,): how many of them are alive
    n_rest_total: int  # how many other bandits in the whole run

    @property
    def base_x(self) -> list[str]:
        return [bandit_label(b) for b in self.keep]

    @property
    def others_x(self) -> str:
        return f"other bandits ({self.n_rest_total})"

    @property
    def show_others(self) -> bool:
        return self.n_rest_total > 0


def _frame_bars(w: pd.DataFrame, pattern, n_frames: int, max_bandits: int) -> _Bars:
    """The weights of the shadow, the key bandits and the others' sum in each frame."""
    keep = key_bandits(w, max_bandits)
    chosen, wide, step_of = sampled_batches(w, n_frames)
    cols = set(wide.columns.tolist())
    shadow = wide[SHADOW].to_numpy() if SHADOW in cols else np.zeros(len(chosen))
    kept = wide.reindex(columns=keep, fill_value=0.0).to_numpy()
    alive = (
        w[w["batch"].isin(chosen)]
        .assign(one=1)
        .pivot_table(index="batch", columns="bandit", values="one", aggfunc="sum", fill_value=0)
        .reindex(chosen, fill_value=0)
    )
    rest = [b for b in cols if b != SHADOW and b not in set(keep)]
    n_rest_total = w.loc[~w["bandit"].isin(keep + [SHADOW]), "bandit"].nunique()
    others = wide[rest].sum(axis=1).to_numpy() if rest else np.zeros(len(chosen))
    n_others = (alive[rest] > 0).sum(axis=1).to_numpy() if rest else np.zeros(len(chosen), int)
    kept_alive = alive.reindex(columns=keep, fill_value=0).to_numpy() > 0
    states = state_at(pattern, step_of) if pattern is not None else np.full(len(chosen), -1)
    return _Bars(
        chosen, step_of, states, keep, shadow, kept, kept_alive, others, n_others, n_rest_total
    )


def _weight_text(v) -> str:
    return f"{v:.2f}" if v >= 0.005 else ""


def _bars_of_frame(bars: _Bars, i: int) -> list[dict]:
    """Frame ``i``'s bars: shadow, base bandits, other bandits (plain lists: see ``plain``)."""
    data = [
        dict(
            type="bar",
            x=["shadow"],
            y=[float(bars.shadow[i])],
            customdata=[["alive"]],
            text=[_weight_text(bars.shadow[i])],
        )
    ]
    data.append(
        dict(
            type="bar",
            x=bars.base_x,
            y=plain(bars.kept[i]),
            text=[_weight_text(v) for v in bars.kept[i]],
            customdata=[["alive" if a else "not alive"] for a in bars.kept_alive[i]],
        )
    )
    if bars.show_others:
        data.append(
            dict(
                type="bar",
                x=[bars.others_x],
                y=[float(bars.others[i])],
                text=[_weight_text(bars.others[i])],
                customdata=[[f"{int(bars.n_others[i])} alive"]],
            )
        )
    return data


def _first_bars(bars: _Bars) -> list[dict]:
    """The figure's traces: the first frame's bars, with their names, colours and hover."""
    style = [
        dict(name="shadow (short-term memory)", marker=dict(color=SHADOW_COLOR)),
        dict(
            name="base bandits (colour = id)",
            marker=dict(color=[bandit_color(b) for b in bars.keep]),
        ),
    ]
    if bars.show_others:
        style.append(
            dict(
                name="other bandits, summed",
                marker=dict(color=OTHERS_COLOR, pattern=dict(shape="/", fgcolor=INK)),
            )
        )
    hover = "<b>%{x}</b><br>weight %{y:.3f} (%{customdata[0]})<extra></extra>"
    return [
        dict(d, **s, textposition="outside", cliponaxis=False, hovertemplate=hover)
        for d, s in zip(_bars_of_frame(bars, 0), style)
    ]


def _bar_frames(bars: _Bars) -> list[dict]:
    """One animation frame per sampled batch, its title the step and the true state."""
    head = "Posterior weights"
    return [
        dict(
            name=str(int(bars.chosen[i])),
            data=_bars_of_frame(bars, i),
            layout=dict(
                title=dict(
                    text=frame_title(head, int(bars.step_of[i]), int(bars.states[i]))
                    if bars.states[i] >= 0
                    else f"{head} · step {int(bars.step_of[i]):,}"
                )
            ),
        )
        for i in range(len(bars.chosen))
    ]


def _bars_layout(fig: go.Figure, bars: _Bars, frames: list[dict], n_batches: int) -> None:
    """Title, controls and fixed axes of :func:`weights_animation` (``fig`` in place)."""
    sub_txt = (
        "bar = probability that the bandit plays the next step; "
        f"{len(bars.chosen)} frames of {n_batches} batches"
    )
    fig.update_layout(
        **{
            **base_layout(
                frames[0]["layout"]["title"]["text"],
                None,
                "posterior weight",
                subtitle=sub_txt,
                height=520,
            ),
            **animation_controls(
                [f["name"] for f in frames],
                [f"{int(s):,}" for s in bars.step_of],
                frame_ms=150,
                transition_ms=100,
                redraw=True,
                offset=45,
            ),
        }
    )
    fig.update_layout(margin=dict(b=180), bargap=0.25)
    categories = ["shadow"] + bars.base_x + ([bars.others_x] if bars.show_others else [])
    fig.update_xaxes(
        type="category",
        categoryorder="array",
        categoryarray=categories,
        range=[-0.5, len(categories) - 0.5],
        fixedrange=True,
    )
    fig.update_yaxes(range=[0, 1], autorange=False, fixedrange=True, dtick=0.2)


def weights_animation(
    weights: pd.DataFrame,
    pattern,
    n_frames: int = 150,
    *,
    policy=None,
    seed=None,
    max_bandits: int = 12,
) -> go.Figure:
    """Animated bar chart of the posterior weight of every bandit (play/pause and a slider).

    Frames: at most ``n_frames`` batches, evenly spaced, the last one included. Categories
    are the same in every frame: "shadow", the ``max_bandits`` base bandits with the largest
    total weight ("bandit 3", ...; weight 0 where not alive), and "other bandits" (the sum
    of the rest, if any). Traces: shadow, base bandits (colour = id), other bandits. The y
    range is fixed to [0, 1]; each frame's title gives the step and the true state.

    Parameters
    ----------
    weights : pandas.DataFrame
        The ``weights`` table of ``to_frames()`` (batch, step, bandit, weight, ...).
    pattern : Pattern or None
        The scenario's season pattern (None: no true state in the titles).
    n_frames : int, default 150
        The most frames.
    policy, seed : optional
        The run to draw, if ``weights`` holds several.
    max_bandits : int, default 12
        How many base bandits get a bar of their own.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    w = one_run(weights, policy, seed, "weights")
    title = "Posterior weights of the bandits" + title_policy(w, policy)
    if not len(w):
        return empty_figure(NO_WEIGHTS, title)
    bars = _frame_bars(w, pattern, n_frames, max_bandits)
    frames = _bar_frames(bars)
    fig = go.Figure(dict(data=_first_bars(bars), frames=frames))
    _bars_layout(fig, bars, frames, w["batch"].nunique())
    return fig


# -- the top weight ----------------------------------------------------------------------------
def top_of_each_batch(w: pd.DataFrame) -> pd.DataFrame:
    """One row per batch: the bandit with the largest weight (batch, step, bandit, weight)."""
    w = w.sort_values(["batch", "weight"], kind="stable")
    return w.drop_duplicates("batch", keep="last").sort_values("batch")[
        ["batch", "step", "bandit", "weight"]
    ]


def _top_points(top: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """The batches' top bandits to draw (``top``: :func:`top_of_each_batch`): per bin the
    lowest and highest top weight, and every batch the shadow tops when that is rare (the
    figure's point: a new season)."""
    keep = minmax_index(top["weight"].to_numpy(), max_points)
    shadow_on_top = np.flatnonzero(top["bandit"].to_numpy() == SHADOW)
    if len(shadow_on_top) <= max_points // 10:
        keep = np.union1d(keep, shadow_on_top)
    return top.iloc[keep]


def _add_top_traces(fig: go.Figure, top: pd.DataFrame, pattern, labelled: list[int]) -> None:
    """The points: the ``labelled`` base bandits one trace each, the other base bandits,
    then the shadow (on top)."""
    x, y, b = top["step"].to_numpy(), top["weight"].to_numpy(), top["bandit"].to_numpy()
    st = state_at(pattern, x) if pattern is not None else np.full(len(x), -1)
    hover = "step %{x:,}<br><b>%{customdata[0]}</b> on top, weight %{y:.3f}" + (
        "<br>true state %{customdata[1]}<extra></extra>"
        if pattern is not None
        else "<extra></extra>"
    )

    def add(mask, name, marker):
        cd = np.stack([[bandit_label(i) for i in b[mask]], st[mask]], axis=1)
        fig.add_trace(
            dict(
                type="scatter",
                x=x[mask],
                y=y[mask],
                mode="markers",
                name=name,
                marker=marker,
                customdata=cd,
                hovertemplate=hover,
                cliponaxis=False,
            )
        )

    for i in sorted(labelled):
        add(b == i, bandit_label(i), dict(symbol="triangle-up", size=7, color=bandit_color(i)))
    rest = (b > 0) & ~np.isin(b, labelled)
    if rest.any():
        add(
            rest,
            "other base bandits",
            dict(
                symbol="triangle-up", size=6, opacity=0.55, color=[bandit_color(i) for i in b[rest]]
            ),
        )
    add(
        b == SHADOW,
        "shadow",
        dict(
            symbol="line-ew-open",
            size=16,
            color=SHADOW_COLOR,
            line=dict(width=3.5, color=SHADOW_COLOR),
        ),
    )  # on top


def top_weight_figure(
    weights: pd.DataFrame,
    pattern,
    max_points: int = 2000,
    *,
    policy=None,
    seed=None,
    n_labelled: int = 6,
) -> go.Figure:
    """The paper's figure 2 (bottom): after each batch, the weight of the most likely bandit;
    base bandits as triangles coloured by id, the shadow as pink dashes; true state as bands.

    Traces: shadow, then the ``n_labelled`` base bandits most often on top (one legend entry
    each), then "other base bandits" (still coloured by id), then the state legend. At most
    ``max_points`` points in all: per bin of batches the lowest and highest top weight are
    kept (real points, no averaging). y range [0, 1].

    Parameters
    ----------
    weights : pandas.DataFrame
        The ``weights`` table of ``to_frames()``.
    pattern : Pattern or None
        The scenario's season pattern (None: no state bands nor change points).
    max_points : int, default 2000
        The most points drawn.
    policy, seed : optional
        The run to draw, if ``weights`` holds several.
    n_labelled : int, default 6
        How many base bandits get a legend entry of their own.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    w = one_run(weights, policy, seed, "weights")
    title = "Weight of the most likely bandit" + title_policy(w, policy)
    if not len(w):
        return empty_figure("No weights: this policy is not an ensemble (or has not run).", title)
    return top_weight_figure_of(
        top_of_each_batch(w), pattern, max_points, title=title, n_labelled=n_labelled
    )


def top_weight_figure_of(
    top: pd.DataFrame,
    pattern,
    max_points: int = 2000,
    *,
    title: str = "Weight of the most likely bandit",
    n_labelled: int = 6,
    marks: str = "▼ new state, ○ a state returns",
) -> go.Figure:
    """:func:`top_weight_figure` drawn from ``top``, one row per batch in batch order
    (batch, step, bandit, weight: :func:`top_of_each_batch`), e.g. a deployed agent's batch
    log read as it comes (:mod:`allseason.viz.deployed`); ``pattern`` None draws no seasons;
    ``marks``: what the subtitle says of the marks. Returns a plotly ``Figure``."""
    if not len(top):
        return empty_figure("No batch update yet: nothing to draw.", title)
    n_batches = len(top)
    shown_top = _top_points(top, max_points)
    counts = top["bandit"].value_counts()
    labelled = [int(b) for b in counts.index if b > 0][:n_labelled]
    fig = go.Figure()
    _add_top_traces(fig, shown_top, pattern, labelled)
    shown = (
        ""
        if len(shown_top) == n_batches
        else f"; {len(shown_top):,} of {n_batches:,} batches shown"
    )
    fig.update_layout(
        **base_layout(
            title,
            "step",
            "weight of the top bandit",
            subtitle=(f"▲ base bandits (colour = id), pink dashes: the shadow; {marks}{shown}"),
            height=520,
            legend=dict(LEGEND_BELOW, font=dict(size=12), tracegroupgap=2),
            margin=dict(l=70, r=20, t=90, b=60),
        )
    )
    fig.update_yaxes(range=[0, 1.06], autorange=False, tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1])
    if pattern is not None:
        add_season_bands(fig, pattern)
        add_change_points(fig, pattern, y=1.04)
        fig.update_xaxes(range=[0, pattern.horizon])
    return fig


# -- stacked weights ---------------------------------------------------------------------------
def _area(x, y, name: str, line_color: str, fill: str) -> dict:
    """One band of the stacked area."""
    return dict(
        type="scatter",
        x=x,
        y=y,
        mode="lines",
        name=name,
        stackgroup="w",
        line=dict(width=0.5, color=line_color),
        fillcolor=fill,
        hovertemplate=f"<b>{name}</b><br>step %{{x:,}}<br>weight %{{y:.3f}}<extra></extra>",
    )


def weights_area_figure(
    weights: pd.DataFrame,
    pattern,
    max_points: int = 1000,
    *,
    policy=None,
    seed=None,
    max_bandits: int = 10,
) -> go.Figure:
    """Stacked area of the weights of all bandits over time (they sum to 1): the shadow at
    the bottom, the ``max_bandits`` base bandits with the largest total weight, and the sum
    of all others on top. Points: at most ``max_points`` batches, evenly sampled (exact
    values at those batches). The true state is a ribbon above the area.

    Parameters
    ----------
    weights : pandas.DataFrame
        The ``weights`` table of ``to_frames()``.
    pattern : Pattern or None
        The scenario's season pattern (None: no ribbon).
    max_points : int, default 1000
        The most batches drawn.
    policy, seed : optional
        The run to draw, if ``weights`` holds several.
    max_bandits : int, default 10
        How many base bandits get a band of their own.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    w = one_run(weights, policy, seed, "weights")
    title = "Weights of all bandits over time" + title_policy(w, policy)
    if not len(w):
        return empty_figure(NO_WEIGHTS, title)
    keep = key_bandits(w, max_bandits)
    chosen, wide, x = sampled_batches(w, max_points)
    fig = go.Figure()
    series = [(SHADOW, "shadow", SHADOW_COLOR)]
    series += [(b, bandit_label(b), bandit_color(b)) for b in keep]
    for bid, name, color in series:
        y = wide[bid].to_numpy() if bid in wide.columns else np.zeros(len(chosen))
        fig.add_trace(_area(x, y, name, color, color))
    rest = [c for c in wide.columns if c != SHADOW and c not in set(keep)]
    n_rest = w.loc[~w["bandit"].isin(keep + [SHADOW]), "bandit"].nunique()
    if n_rest:
        y = wide[rest].sum(axis=1).to_numpy() if rest else np.zeros(len(chosen))
        fig.add_trace(_area(x, y, f"other bandits ({n_rest}), summed", "#9e9e9e", OTHERS_COLOR))
    n_batches = w["batch"].nunique()
    sampled = (
        ""
        if len(chosen) == n_batches
        else f"; {len(chosen):,} of {n_batches:,} batches shown (evenly sampled)"
    )
    fig.update_layout(
        **base_layout(
            title,
            "step",
            "weight (stacked)",
            subtitle=f"ribbon on top: true state{sampled}",
            height=540,
        ),
        hovermode="x unified",
    )
    fig.update_yaxes(range=[0, 1.08], autorange=False, tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1])
    if pattern is not None:
        add_season_bands(fig, pattern, ribbon=(1.0 / 1.08 + 0.005, 1.0))
        fig.update_xaxes(range=[0, pattern.horizon])
    return fig


__all__ = [
    "weights_animation",
    "top_weight_figure",
    "top_weight_figure_of",
    "weights_area_figure",
    "top_of_each_batch",
    "minmax_index",
]
