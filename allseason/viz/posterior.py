"""The posteriors of a run, animated: each live bandit's posterior mean and 2-sigma ellipse
against the true parameter of every state (``api.posterior_history``: one run already)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .animation import animation_controls, frame_title, plain
from .layout import INK, base_layout, empty_figure
from .race import sample_index
from .style import (
    BANDIT_COLOR_SCALE,
    SHADOW,
    SHADOW_COLOR,
    bandit_color_code,
    bandit_label,
    state_color,
    state_label,
)


def _ellipses(
    mean: np.ndarray, cov: np.ndarray, n_sigma: float = 2.0, n: int = 48
) -> tuple[np.ndarray, np.ndarray]:
    """n_sigma ellipses of 2-d Gaussians: mean (m, 2), cov (m, 3) = (c00, c01, c11);
    returns x, y of shape (m, n), points evenly spread in angle (mean + n_sigma * L u with
    M^-1 = L L^T and u on the unit circle: exactly the n_sigma contour)."""
    a = np.sqrt(np.maximum(cov[:, 0], 1e-300))
    b = cov[:, 1] / a
    c = np.sqrt(np.maximum(cov[:, 2] - b**2, 0.0))
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    u, v = np.cos(t), np.sin(t)
    x = mean[:, :1] + n_sigma * a[:, None] * u
    y = mean[:, 1:2] + n_sigma * (b[:, None] * u + c[:, None] * v)
    return x, y


def _live_text(n: int, single: bool) -> str:
    return " · single model" if single else f" · {n} live bandit{'s' if n != 1 else ''}"


def _rings(x: np.ndarray, y: np.ndarray) -> tuple[list, list]:
    """Closed rings (m, n) as one line: each ring closed and followed by a gap (None)."""
    m = len(x)
    if not m:
        return [None], [None]
    gap = np.full((m, 1), np.nan)
    flat_x = np.hstack([x, x[:, :1], gap]).ravel().tolist()
    flat_y = np.hstack([y, y[:, :1], gap]).ravel().tolist()
    return [None if v != v else v for v in flat_x], [None if v != v else v for v in flat_y]


class _Snapshots(NamedTuple):
    """The sampled snapshots of a posterior history: one row per (snapshot, live bandit),
    rows of snapshot ``i`` in ``bounds[i]:bounds[i + 1]``."""

    steps: np.ndarray  # the snapshots' steps
    frame_state: np.ndarray  # the true state at each
    bounds: np.ndarray
    mean: np.ndarray  # (rows, 2), rounded
    ex: np.ndarray  # (rows, ellipse_points): the ellipses, rounded
    ey: np.ndarray
    is_shadow: np.ndarray
    colors: np.ndarray  # colour codes (BANDIT_COLOR_SCALE)
    names: np.ndarray  # "bandit 3", ...
    tags: np.ndarray  # the labels by the means: "S", "3", ...
    single: bool  # a single-model policy (LinTS, ...)
    reach: float  # the axes' half range


def _snapshots(
    history: pd.DataFrame, thetas: np.ndarray, n_frames: int, ellipse_points: int
) -> _Snapshots:
    """At most ``n_frames`` snapshots, evenly spaced (the last included), their means and
    ellipses, and axis ranges that hold the true parameters and most of the means."""
    h = history.sort_values(["step", "bandit"], kind="stable")
    all_steps = np.sort(h["step"].unique())
    steps = all_steps[sample_index(len(all_steps), n_frames)]
    h = h[h["step"].isin(steps)]
    mean = h[["mean_0", "mean_1"]].to_numpy(dtype=float).round(4)
    ex, ey = _ellipses(
        mean, h[["cov_00", "cov_01", "cov_11"]].to_numpy(dtype=float), n=ellipse_points
    )
    ex, ey = ex.round(4), ey.round(4)
    bandit = h["bandit"].to_numpy()
    names = np.array([bandit_label(b) for b in bandit], dtype=object)
    tags = np.array(
        ["S" if b == SHADOW else ("" if b < 0 else str(int(b))) for b in bandit], dtype=object
    )
    bounds = np.searchsorted(h["step"].to_numpy(), np.append(steps, np.inf))
    frame_state = h.groupby("step")["state"].first().reindex(steps).to_numpy()
    # fixed, equal ranges: the true parameters and (most of) the means, with a margin
    reach = max(np.abs(thetas[:, :2]).max(), np.quantile(np.abs(mean), 0.98)) * 1.25
    return _Snapshots(
        steps=steps,
        frame_state=frame_state,
        bounds=bounds,
        mean=mean,
        ex=ex,
        ey=ey,
        is_shadow=bandit == SHADOW,
        colors=bandit_color_code(bandit),
        names=names,
        tags=tags,
        single=bool((bandit < 0).all()),
        reach=float(max(reach, 0.5)),
    )


def _moving_traces(s: _Snapshots, thetas: np.ndarray, star_colors: list, i: int) -> list[dict]:
    """Snapshot ``i``: the current state's star, the shadow's ellipse, the base bandits'
    ellipses and the means (plain lists: see ``plain``)."""
    sl = slice(s.bounds[i], s.bounds[i + 1])
    st = int(s.frame_state[i])
    sh, base = s.is_shadow[sl], ~s.is_shadow[sl]
    sx, sy = _rings(s.ex[sl][sh], s.ey[sl][sh])
    bx, by = _rings(s.ex[sl][base], s.ey[sl][base])
    return [
        dict(
            type="scatter",
            x=[float(thetas[st, 0])],
            y=[float(thetas[st, 1])],
            text=[f"θ of {state_label(st)} (now)"],
            marker=dict(color=star_colors[st]),
        ),
        dict(type="scatter", x=sx, y=sy),
        dict(type="scatter", x=bx, y=by),
        dict(
            type="scatter",
            x=plain(s.mean[sl, 0]),
            y=plain(s.mean[sl, 1]),
            text=plain(s.tags[sl]),
            customdata=plain(s.names[sl]),
            marker=dict(color=plain(s.colors[sl])),
        ),
    ]


def _true_stars(thetas: np.ndarray, star_colors: list) -> dict:
    """The static trace: a star at the true θ of every state."""
    return dict(
        type="scatter",
        x=thetas[:, 0],
        y=thetas[:, 1],
        mode="markers+text",
        name="true θ of each state",
        text=[state_label(k) for k in range(len(thetas))],
        textposition="top center",
        textfont=dict(size=12),
        marker=dict(symbol="star", size=16, color=star_colors, line=dict(width=1, color=INK)),
        hovertemplate="true θ of %{text}<br>(%{x:.2f}, %{y:.2f})<extra></extra>",
    )


def _styled(first: list[dict], single: bool) -> list[dict]:
    """The moving traces of the first snapshot, with their names, styles and hover."""
    star, shadow, base, means = first
    return [
        dict(
            star,
            mode="markers",
            name="true θ of the current state",
            marker=dict(star["marker"], symbol="star-open", size=34, line=dict(width=3)),
            hovertemplate="%{text}<br>(%{x:.2f}, %{y:.2f})<extra></extra>",
        ),
        dict(
            shadow,
            mode="lines",
            name="shadow: 2σ ellipse",
            hoverinfo="skip",
            showlegend=not single,
            line=dict(color=SHADOW_COLOR, width=2.5),
        ),
        dict(
            base,
            mode="lines",
            name="the model: 2σ ellipse" if single else "base bandits: 2σ ellipses",
            hoverinfo="skip",
            line=dict(color=INK, width=1.5),
        ),
        dict(
            means,
            mode="markers+text",
            name="posterior means (label = id)",
            textposition="middle right",
            textfont=dict(size=13),
            marker=dict(
                means["marker"], size=11, line=dict(width=1, color="#fff"), **BANDIT_COLOR_SCALE
            ),
            hovertemplate="<b>%{customdata}</b><br>mean (%{x:.2f}, %{y:.2f})<extra></extra>",
        ),
    ]


def _posterior_layout(s: _Snapshots, frames: list[dict], d: int) -> dict:
    """Title, controls, and fixed, equal axes."""
    coords = "θ[0], θ[1]" if d == 2 else f"first 2 of {d} coordinates"
    layout = base_layout(
        frames[0]["layout"]["title"]["text"],
        None,
        None,
        subtitle=f"each live bandit's posterior mean and 2σ ellipse ({coords}); colour = "
        "bandit id; ★ true θ of each state",
        height=640,
    )
    layout.update(
        animation_controls(
            [f["name"] for f in frames],
            [f"{int(t):,}" for t in s.steps],
            frame_ms=200,
            transition_ms=0,
            redraw=True,
        )
    )
    layout["margin"] = dict(layout["margin"], b=130)
    axis = dict(
        range=[-s.reach, s.reach],
        autorange=False,
        zeroline=True,
        zerolinecolor=INK,
        constrain="domain",
    )
    layout["xaxis"] = dict(axis, title=dict(text="θ[0]"))
    layout["yaxis"] = dict(axis, title=dict(text="θ[1]"), scaleanchor="x", scaleratio=1)
    return layout


def posterior_animation(
    history: pd.DataFrame, thetas: np.ndarray, n_frames: int = 100, ellipse_points: int = 48
) -> go.Figure:
    """Animated posteriors of a run (``api.posterior_history``): each live bandit's posterior
    mean (a dot in the bandit's colour, labelled by id; S = the shadow) and its 2-sigma
    ellipse as a closed line (the shadow's magenta, base bandits' grey: one line per
    colour would cost a trace per bandit per frame), and the true theta of every state as a
    star (the current state's star large and hollow). With d > 2 the first two coordinates
    are drawn (the exact marginal). Axis ranges fixed and equal.

    Traces: the stars of all states (static), then the current state's star, the shadow's
    ellipse, the base bandits' ellipses and the means, which the frames update.
    At most ``n_frames`` frames (evenly spaced snapshots, the last one included).

    Parameters
    ----------
    history : pandas.DataFrame or None
        The posterior snapshots of ``api.posterior_history`` (step, bandit, state, mean_k,
        cov_ij).
    thetas : numpy.ndarray, shape (n_states, d)
        The true parameter of each state.
    n_frames : int, default 100
        The most frames.
    ellipse_points : int, default 48
        Points per ellipse.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title = "Posteriors of the bandits and the true parameters"
    thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
    if history is None or not len(history):
        return empty_figure("No posterior history to show.", title)
    if thetas.shape[1] < 2 or "mean_1" not in history.columns:
        return empty_figure("The posterior view needs d >= 2.", title)
    s = _snapshots(history, thetas, n_frames, ellipse_points)
    star_colors = [state_color(k, strong=True) for k in range(len(thetas))]
    data = [_true_stars(thetas, star_colors)]
    n_static = len(data)
    data += _styled(_moving_traces(s, thetas, star_colors, 0), s.single)
    frames = [
        dict(
            name=str(int(s.steps[i])),
            data=_moving_traces(s, thetas, star_colors, i),
            traces=list(range(n_static, len(data))),
            layout=dict(
                title=dict(
                    text=frame_title(
                        "Posteriors",
                        int(s.steps[i]),
                        int(s.frame_state[i]),
                        _live_text(int(s.bounds[i + 1] - s.bounds[i]), s.single),
                    )
                )
            ),
        )
        for i in range(len(s.steps))
    ]
    layout = _posterior_layout(s, frames, thetas.shape[1])
    return go.Figure(dict(data=data, layout=layout, frames=frames))


__all__ = ["posterior_animation"]
