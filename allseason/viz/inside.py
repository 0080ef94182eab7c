"""Inside All-Season: the weights of its bandits, their lives, and what each one learnt.

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

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .race import sample_index
from .style import (
    BANDIT_COLOR_SCALE,
    INK,
    LEGEND_BELOW,
    LEGEND_RIGHT,
    SHADOW,
    SHADOW_COLOR,
    bandit_color,
    bandit_color_code,
    bandit_label,
    base_layout,
    empty_figure,
    state_color,
    state_label,
)
from .timeline import add_change_points, add_season_bands

OTHERS_COLOR = "#bdbdbd"
NEVER_COLOR = "#e0453a"  # "never on top": a red that reads on both themes
BIRTH_KINDS = ("spawn", "create")
DEATH_KINDS = ("prune", "discard")


# -- helpers -----------------------------------------------------------------------------------
def _one_run(table: pd.DataFrame, policy, seed, what: str) -> pd.DataFrame:
    """The rows of one (policy, seed) of a race table (see the module docstring)."""
    if table is None:
        return pd.DataFrame()
    t = table
    if policy is not None and "policy" in t.columns:
        t = t[t["policy"] == policy]
    if seed is not None and "seed" in t.columns:
        t = t[t["seed"] == seed]
    keys = [c for c in ("policy", "seed") if c in t.columns]
    if keys and len(t) and t[keys].drop_duplicates().shape[0] > 1:
        runs = t[keys].drop_duplicates().shape[0]
        raise ValueError(
            f"{what}: the table holds {runs} runs (policy, seed); pass policy= "
            f"and seed= or filter it to one run"
        )
    return t


def _plain(a) -> list:
    """A numpy array as a plain list. Animation frames must hold plain lists: plotly.py
    writes numpy arrays as base64 typed-array specs, which plotly.js's ``animate`` merges
    into the trace as an object instead of decoding (the bars or points do not move)."""
    return np.asarray(a).tolist()


def _title_policy(table: pd.DataFrame, policy) -> str:
    from .style import policy_name

    if policy is None and "policy" in table.columns and len(table):
        policy = table["policy"].iloc[0]
    return f" — {policy_name(policy)}" if policy is not None else ""


def _state_at(pattern, steps) -> np.ndarray:
    states = pattern.states()
    return states[np.clip(np.asarray(steps, dtype=np.int64), 0, len(states) - 1)]


def _key_bandits(w: pd.DataFrame, max_bandits: int) -> list[int]:
    """The base bandits worth showing one by one: largest total weight over the run."""
    base = w[w["bandit"] > 0]
    total = base.groupby("bandit")["weight"].sum().sort_values(ascending=False, kind="stable")
    return sorted(int(b) for b in total.index[:max_bandits])


NO_WEIGHTS = "No weights: this policy is not an ensemble (or has not run)."


def _sampled_batches(w: pd.DataFrame, n: int):
    """At most n batches, evenly spaced (the last included): (batch ids, wide table of their
    weights, one column per bandit, 0 where not alive; the step at which each batch ended)."""
    batches = np.sort(w["batch"].unique())
    chosen = batches[sample_index(len(batches), n)]
    sub = w[w["batch"].isin(chosen)]
    wide = _wide(sub).reindex(chosen, fill_value=0.0)
    steps = sub.groupby("batch")["step"].first().reindex(chosen).to_numpy()
    return chosen, wide, steps


def _wide(w: pd.DataFrame) -> pd.DataFrame:
    """Batch x bandit weights (0 where a bandit is not alive), index = batch."""
    return w.pivot_table(
        index="batch", columns="bandit", values="weight", aggfunc="sum", fill_value=0.0
    )


def _animation_controls(
    names: list[str],
    labels: list[str],
    frame_ms: int,
    transition_ms: int,
    redraw: bool,
    offset: int = 0,
) -> dict:
    """Play/pause buttons and a slider over the frames ``names`` (labels shown), placed
    ``offset`` pixels further below the plot (room for long tick labels); the legend moves to
    the right, out of their way."""
    play = dict(
        frame=dict(duration=frame_ms, redraw=redraw),
        fromcurrent=True,
        transition=dict(duration=transition_ms, easing="linear"),
        mode="immediate",
    )
    pause = dict(
        frame=dict(duration=0, redraw=False), transition=dict(duration=0), mode="immediate"
    )
    buttons = dict(
        type="buttons",
        direction="left",
        showactive=False,
        x=0.0,
        y=0,
        xanchor="left",
        yanchor="top",
        pad=dict(t=55 + offset, r=10),
        buttons=[
            dict(label="▶ Play", method="animate", args=[None, play]),
            dict(label="❚❚ Pause", method="animate", args=[[None], pause]),
        ],
    )
    slider = dict(
        active=0,
        x=0.17,
        len=0.83,
        y=0,
        yanchor="top",
        pad=dict(t=40 + offset, b=10),
        currentvalue=dict(prefix="step ", xanchor="right", font=dict(size=13)),
        transition=dict(duration=0),
        steps=[
            dict(
                label=lab,
                method="animate",
                args=[
                    [name],
                    dict(
                        mode="immediate",
                        frame=dict(duration=0, redraw=redraw),
                        transition=dict(duration=0),
                    ),
                ],
            )
            for name, lab in zip(names, labels)
        ],
    )
    return dict(updatemenus=[buttons], sliders=[slider], legend=LEGEND_RIGHT)


def _frame_title(head: str, step: int, state: int, tail: str = "") -> str:
    c = state_color(state, strong=True)
    return (
        f"{head} · step {step:,} · <span style='color:{c}'>■ true {state_label(state)}</span>{tail}"
    )


# -- weights -----------------------------------------------------------------------------------
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
    range is fixed to [0, 1]; each frame's title gives the step and the true state."""
    w = _one_run(weights, policy, seed, "weights")
    title = "Posterior weights of the bandits" + _title_policy(w, policy)
    if not len(w):
        return empty_figure(NO_WEIGHTS, title)
    keep = _key_bandits(w, max_bandits)
    chosen, wide, step_of = _sampled_batches(w, n_frames)
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
    base_x = [bandit_label(b) for b in keep]
    show_others = n_rest_total > 0
    states = _state_at(pattern, step_of) if pattern is not None else np.full(len(chosen), -1)

    def frame_data(i):  # plain lists: see _plain
        txt = lambda v: f"{v:.2f}" if v >= 0.005 else ""  # noqa: E731
        data = [
            dict(
                type="bar",
                x=["shadow"],
                y=[float(shadow[i])],
                customdata=[["alive"]],
                text=[txt(shadow[i])],
            )
        ]
        data.append(
            dict(
                type="bar",
                x=base_x,
                y=_plain(kept[i]),
                text=[txt(v) for v in kept[i]],
                customdata=[["alive" if a else "not alive"] for a in kept_alive[i]],
            )
        )
        if show_others:
            data.append(
                dict(
                    type="bar",
                    x=[f"other bandits ({n_rest_total})"],
                    y=[float(others[i])],
                    text=[txt(others[i])],
                    customdata=[[f"{int(n_others[i])} alive"]],
                )
            )
        return data

    style = [
        dict(name="shadow (short-term memory)", marker=dict(color=SHADOW_COLOR)),
        dict(name="base bandits (colour = id)", marker=dict(color=[bandit_color(b) for b in keep])),
    ]
    if show_others:
        style.append(
            dict(
                name="other bandits, summed",
                marker=dict(color=OTHERS_COLOR, pattern=dict(shape="/", fgcolor=INK)),
            )
        )
    hover = "<b>%{x}</b><br>weight %{y:.3f} (%{customdata[0]})<extra></extra>"
    data0 = [
        dict(d, **s, textposition="outside", cliponaxis=False, hovertemplate=hover)
        for d, s in zip(frame_data(0), style)
    ]
    names = [str(int(b)) for b in chosen]
    head = "Posterior weights"
    frames = [
        dict(
            name=names[i],
            data=frame_data(i),
            layout=dict(
                title=dict(
                    text=_frame_title(head, int(step_of[i]), int(states[i]))
                    if states[i] >= 0
                    else f"{head} · step {int(step_of[i]):,}"
                )
            ),
        )
        for i in range(len(chosen))
    ]
    fig = go.Figure(dict(data=data0, frames=frames))
    sub_txt = (
        "bar = probability that the bandit plays the next step; "
        f"{len(chosen)} frames of {w['batch'].nunique()} batches"
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
            **_animation_controls(
                names,
                [f"{int(s):,}" for s in step_of],
                frame_ms=150,
                transition_ms=100,
                redraw=True,
                offset=45,
            ),
        }
    )
    fig.update_layout(margin=dict(b=180), bargap=0.25)
    categories = ["shadow"] + base_x + ([f"other bandits ({n_rest_total})"] if show_others else [])
    fig.update_xaxes(
        type="category",
        categoryorder="array",
        categoryarray=categories,
        range=[-0.5, len(categories) - 0.5],
        fixedrange=True,
    )
    fig.update_yaxes(range=[0, 1], autorange=False, fixedrange=True, dtick=0.2)
    return fig


def minmax_index(values: np.ndarray, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` points keeping, in each of ``max_points // 2``
    consecutive bins, the smallest and the largest value (so dips and spikes stay visible;
    every point shown is a real one)."""
    n = len(values)
    if n <= max_points:
        return np.arange(n)
    n_bins = max(max_points // 2, 1)
    edges = np.linspace(0, n, n_bins + 1).round().astype(np.int64)
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            seg = values[a:b]
            out.extend((a + int(np.argmin(seg)), a + int(np.argmax(seg))))
    return np.unique(np.array(out, dtype=np.int64))


def top_of_each_batch(w: pd.DataFrame) -> pd.DataFrame:
    """One row per batch: the bandit with the largest weight (batch, step, bandit, weight)."""
    w = w.sort_values(["batch", "weight"], kind="stable")
    return w.drop_duplicates("batch", keep="last").sort_values("batch")[
        ["batch", "step", "bandit", "weight"]
    ]


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
    kept (real points, no averaging). y range [0, 1]."""
    w = _one_run(weights, policy, seed, "weights")
    title = "Weight of the most likely bandit" + _title_policy(w, policy)
    if not len(w):
        return empty_figure("No weights: this policy is not an ensemble (or has not run).", title)
    top = top_of_each_batch(w)
    n_batches = len(top)
    keep = minmax_index(top["weight"].to_numpy(), max_points)
    # the shadow on top is the figure's point (a new season): shown whenever it is rare
    shadow_on_top = np.flatnonzero(top["bandit"].to_numpy() == SHADOW)
    if len(shadow_on_top) <= max_points // 10:
        keep = np.union1d(keep, shadow_on_top)
    top = top.iloc[keep]
    counts = top_of_each_batch(w)["bandit"].value_counts()
    labelled = [int(b) for b in counts.index if b > 0][:n_labelled]
    fig = go.Figure()
    x, y, b = top["step"].to_numpy(), top["weight"].to_numpy(), top["bandit"].to_numpy()
    st = _state_at(pattern, x) if pattern is not None else np.full(len(x), -1)
    hover = (
        "step %{x:,}<br><b>%{customdata[0]}</b> on top, weight %{y:.3f}"
        "<br>true state %{customdata[1]}<extra></extra>"
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
    shown = "" if len(top) == n_batches else f"; {len(top):,} of {n_batches:,} batches shown"
    fig.update_layout(
        **base_layout(
            title,
            "step",
            "weight of the top bandit",
            subtitle=(
                "▲ base bandits (colour = id), pink dashes: the shadow; "
                f"▼ new state, ○ a state returns{shown}"
            ),
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
    values at those batches). The true state is a ribbon above the area."""
    w = _one_run(weights, policy, seed, "weights")
    title = "Weights of all bandits over time" + _title_policy(w, policy)
    if not len(w):
        return empty_figure(NO_WEIGHTS, title)
    keep = _key_bandits(w, max_bandits)
    chosen, wide, x = _sampled_batches(w, max_points)
    fig = go.Figure()
    series = [(SHADOW, "shadow", SHADOW_COLOR)]
    series += [(b, bandit_label(b), bandit_color(b)) for b in keep]
    for bid, name, color in series:
        y = wide[bid].to_numpy() if bid in wide.columns else np.zeros(len(chosen))
        fig.add_trace(
            dict(
                type="scatter",
                x=x,
                y=y,
                mode="lines",
                name=name,
                stackgroup="w",
                line=dict(width=0.5, color=color),
                fillcolor=color,
                hovertemplate=f"<b>{name}</b><br>step %{{x:,}}<br>weight %{{y:.3f}}<extra></extra>",
            )
        )
    rest = [c for c in wide.columns if c != SHADOW and c not in set(keep)]
    n_rest = w.loc[~w["bandit"].isin(keep + [SHADOW]), "bandit"].nunique()
    if n_rest:
        y = wide[rest].sum(axis=1).to_numpy() if rest else np.zeros(len(chosen))
        name = f"other bandits ({n_rest}), summed"
        fig.add_trace(
            dict(
                type="scatter",
                x=x,
                y=y,
                mode="lines",
                name=name,
                stackgroup="w",
                line=dict(width=0.5, color="#9e9e9e"),
                fillcolor=OTHERS_COLOR,
                hovertemplate=f"<b>{name}</b><br>step %{{x:,}}<br>weight %{{y:.3f}}<extra></extra>",
            )
        )
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


# -- lives -------------------------------------------------------------------------------------
def bandit_lives(events: pd.DataFrame, weights: pd.DataFrame | None, horizon: int) -> pd.DataFrame:
    """One row per base bandit: birth (spawn step; 0 for bandit 1), death (prune step, or
    NaN if alive at the end), twin and value of the prune, and life (steps lived)."""
    ev = events if events is not None else pd.DataFrame(columns=["step", "kind", "bandit"])
    births = ev[ev["kind"].isin(BIRTH_KINDS)].groupby("bandit")["step"].min()
    deaths = ev[ev["kind"].isin(DEATH_KINDS)].drop_duplicates("bandit", keep="first")
    deaths = deaths.set_index("bandit")
    ids = set(births.index.tolist()) | set(deaths.index.tolist())
    if weights is not None and len(weights):
        first = weights[weights["bandit"] > 0].groupby("bandit")["step"].min()
        ids |= set(first.index.tolist())
    else:
        first = pd.Series(dtype=float)
    ids = sorted(int(i) for i in ids if i > 0)
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

    Traces: lifetimes (bars), spawns, prunes, short-lived ticks, then the state legend."""
    if hasattr(horizon, "segments"):
        pattern, horizon = horizon, horizon.horizon
    horizon = int(horizon)
    ev = _one_run(events, policy, seed, "events")
    w = _one_run(weights, policy, seed, "weights") if weights is not None else None
    title = "Lives of the base bandits" + _title_policy(ev if len(ev) else w, policy)
    lives = bandit_lives(ev, w, horizon) if len(ev) or (w is not None and len(w)) else None
    if lives is None or not len(lives):
        return empty_figure(
            "No bandits to show: this policy is not an ensemble (or has not run).", title
        )
    ranked = lives.sort_values(["life", "birth"], ascending=[False, True], kind="stable")
    if min_life is None:  # the smallest threshold that leaves at most max_lanes lanes
        life = ranked["life"].to_numpy()
        min_life = int(life[min(max_lanes, len(life)) - 1])
        if (life >= min_life).sum() > max_lanes:
            min_life += 1
    shown = ranked[ranked["life"] >= min_life].sort_index()
    hidden = lives.loc[~lives.index.isin(shown.index)]
    lane_of = {b: i for i, b in enumerate(shown.index)}
    n_lanes = len(shown) + (1 if len(hidden) else 0)

    def twin_txt(df):
        return [
            (
                "alive at the end"
                if np.isnan(d)
                else f"pruned at step {int(d):,}: closest to {bandit_label(int(t))}"
                + ("" if np.isnan(v) else f" ({distance_name} {v:.2f})")
            )
            for d, t, v in zip(df["death"], df["twin"], df["value"])
        ]

    ys = np.array([lane_of[b] for b in shown.index])
    ends = shown["death"].fillna(horizon - 1).to_numpy()
    txt = twin_txt(shown)
    fig = go.Figure()
    fig.add_trace(
        dict(
            type="bar",
            orientation="h",
            base=shown["birth"].to_numpy(),
            x=np.maximum(ends - shown["birth"].to_numpy(), 1),
            y=ys,
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
    )
    born = shown[shown.index != 1]
    fig.add_trace(
        dict(
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
    )
    dead = shown[shown["death"].notna()]
    fig.add_trace(
        dict(
            type="scatter",
            x=dead["death"],
            y=[lane_of[b] for b in dead.index],
            mode="markers",
            name="pruned (hover: closest twin)",
            marker=dict(symbol="x", size=10, color=INK, line=dict(width=1, color="#fff")),
            customdata=np.stack([[bandit_label(b) for b in dead.index], twin_txt(dead)], axis=1)
            if len(dead)
            else None,
            hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]}<extra></extra>",
        )
    )
    if len(hidden):
        h = hidden.iloc[sample_index(len(hidden), 1000)]
        fig.add_trace(
            dict(
                type="scatter",
                x=h["birth"],
                y=np.full(len(h), len(shown)),
                mode="markers",
                name=f"short-lived bandits ({len(hidden)}): birth",
                marker=dict(
                    symbol="line-ns-open", size=12, color=INK, line=dict(width=1.5, color=INK)
                ),
                customdata=np.stack(
                    [[bandit_label(b) for b in h.index], h["life"], twin_txt(h)], axis=1
                ),
                hovertemplate=(
                    "<b>%{customdata[0]}</b><br>born at step %{x:,}, lived "
                    "%{customdata[1]} steps<br>%{customdata[2]}<extra></extra>"
                ),
            )
        )
    ticks = [bandit_label(b) for b in shown.index] + (
        [f"short-lived ({len(hidden)})"] if len(hidden) else []
    )
    note = (
        f"{len(shown)} of {len(lives)} base bandits as lanes (lived ≥ {min_life:,} steps); "
        f"{len(hidden)} shorter-lived ones as ticks in the bottom lane"
        if len(hidden)
        else f"all {len(lives)} base bandits"
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
    return fig


# -- what each bandit learnt -------------------------------------------------------------------
def state_heatmap(table: pd.DataFrame, max_rows: int = 12) -> go.Figure:
    """Share of each true state's steps played by each bandit (``analysis.state_table``),
    values written in the cells. Rows: the shadow and the bandits with the largest share of
    some state, at most ``max_rows``; the others summed in one "other bandits" row."""
    title = "Who played each state: share of the state's steps per bandit"
    if table is None or table.size == 0:
        return empty_figure("No steps to show.", title)
    t = table.copy()
    t.index = t.index.astype(int)
    ranked = t.max(axis=1).sort_values(ascending=False, kind="stable")
    important = [b for b in ranked.index if ranked[b] >= 0.01]
    keep = ([SHADOW] if SHADOW in t.index else []) + [b for b in important if b != SHADOW]
    keep = keep[:max_rows]
    rows = t.loc[sorted(keep, key=lambda b: (b != SHADOW, b))]
    labels = [bandit_label(b) for b in rows.index]
    rest = t.loc[~t.index.isin(keep)]
    if len(rest):
        rows = pd.concat([rows, rest.sum(axis=0).to_frame(f"other ({len(rest)})").T])
        labels.append(f"other bandits ({len(rest)}), summed")
    z = rows.to_numpy(dtype=float)
    text = np.where(
        z <= 0,
        "",
        np.where(z < 0.01, "<1%", np.char.add((z * 100).round().astype(int).astype(str), "%")),
    )
    cols = [state_label(s) for s in t.columns]
    fig = go.Figure(
        dict(
            data=[
                dict(
                    type="heatmap",
                    z=z,
                    x=cols,
                    y=labels,
                    zmin=0,
                    zmax=1,
                    colorscale="Blues",
                    text=text,
                    texttemplate="%{text}",
                    textfont=dict(size=13),
                    colorbar=dict(title=dict(text="share", side="right"), tickformat=".0%"),
                    xgap=2,
                    ygap=2,
                    hovertemplate="%{y} played %{z:.1%} of the steps of %{x}<extra></extra>",
                )
            ]
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            "true state",
            None,
            subtitle="each column sums to 100%; 'shadow' = steps played by the short-term bandit",
            height=int(min(max(300, 140 + 34 * len(labels)), 900)),
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(side="bottom", type="category")
    return fig


def season_year_figure(table: pd.DataFrame) -> go.Figure:
    """Which bandit held the weight in each season of each year
    (``analysis.season_year_table``): rows the seasons (true states, by name), columns the
    years; each cell names the bandit most often on top after that season's batches of that
    year and is shaded by the share of those batches it held the top weight."""
    title = "Which bandit held the weight, per season and year"
    if table is None or not len(table):
        return empty_figure("No batches to show.", title)
    seasons = table.sort_values("state").drop_duplicates("state")["season"].tolist()
    years = sorted(table["year"].unique().tolist())
    z = np.full((len(seasons), len(years)), np.nan)
    text = np.full(z.shape, "", dtype=object)
    hover = np.full(z.shape, "", dtype=object)
    for r in table.itertuples():
        i, j = seasons.index(r.season), years.index(r.year)
        z[i, j] = r.share
        text[i, j] = f"{bandit_label(r.top_bandit)}<br>{r.share:.0%}"
        hover[i, j] = (
            f"{r.season}, {r.year}: {bandit_label(r.top_bandit)} on top after "
            f"{r.share:.0%} of {r.n_batches:,} batches; {r.bandits_on_top} "
            f"bandits were on top at some point"
        )
    fig = go.Figure(
        dict(
            data=[
                dict(
                    type="heatmap",
                    z=z,
                    x=[str(y) for y in years],
                    y=seasons,
                    zmin=0,
                    zmax=1,
                    colorscale="Blues",
                    text=text,
                    texttemplate="%{text}",
                    textfont=dict(size=13),
                    customdata=hover,
                    hovertemplate="%{customdata}<extra></extra>",
                    xgap=2,
                    ygap=2,
                    colorbar=dict(title=dict(text="share on top", side="right"), tickformat=".0%"),
                )
            ]
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            "year",
            None,
            subtitle="cell: the bandit most often on top after the season's batches that year, "
            "and the share of them it held the top",
            height=int(min(max(300, 160 + 60 * len(seasons)), 700)),
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return fig


def recall_figure(recall: pd.DataFrame) -> go.Figure:
    """Steps until the right bandit holds the top weight, per change point
    (``analysis.recall_table``): bars coloured by new state (the shadow should take over) or
    returning state (the bandit that learnt it should); "never" (NaN) as a ✕ on the axis."""
    title = "How fast the right bandit takes over after each change point"
    if recall is None or not len(recall):
        return empty_figure("No change points in this run.", title)
    r = recall.reset_index(drop=True)
    x = [
        f"#{int(c)} · step {int(s):,}<br>→ {state_label(st)}"
        for c, s, st in zip(r["change_point"], r["step"], r["state"])
    ]
    cd = np.stack(
        [
            [bandit_label(b) if b >= 0 else "none alive" for b in r["right_bandit"]],
            [bandit_label(b) if b >= 0 else "–" for b in r["most_often_top"]],
            (100 * r["share_top_right"].astype(float)).round(0),
            r["spawns"],
            r["kind"],
        ],
        axis=1,
    )
    hover = (
        "<b>%{x}</b> (%{customdata[4]} state)<br>right bandit: %{customdata[0]}<br>"
        "steps to top: %{y:,}<br>most often on top: %{customdata[1]}<br>"
        "right bandit on top %{customdata[2]}% of the segment<br>"
        "spawns in the segment: %{customdata[3]}<extra></extra>"
    )
    fig = go.Figure()
    colors = {"new": SHADOW_COLOR, "returning": "#2171b5"}
    names = {
        "new": "new state (the shadow should take over)",
        "returning": "returning state (its old bandit should take over)",
    }
    for kind in ("new", "returning"):
        m = (r["kind"] == kind).to_numpy()
        y = r["steps_to_top"].where(m).to_numpy(dtype=float)
        fig.add_trace(
            dict(
                type="bar",
                x=x,
                y=y,
                name=names[kind],
                marker=dict(color=colors[kind]),
                customdata=cd,
                texttemplate="%{y:,}",
                textposition="outside",
                cliponaxis=False,
                hovertemplate=hover,
            )
        )
    never = r["steps_to_top"].isna().to_numpy()
    fig.add_trace(
        dict(
            type="scatter",
            x=[v for v, n in zip(x, never) if n],
            y=np.zeros(int(never.sum())),
            mode="markers+text",
            name="never on top in the segment",
            text=["never"] * int(never.sum()),
            textposition="top center",
            textfont=dict(color=NEVER_COLOR, size=13),
            marker=dict(symbol="x", size=13, color=NEVER_COLOR),
            customdata=cd[never],
            hovertemplate=hover.replace("steps to top: %{y:,}", "never on top"),
            cliponaxis=False,
        )
    )
    ymax = float(np.nanmax(r["steps_to_top"].to_numpy(dtype=float))) if (~never).any() else 1
    fig.update_layout(
        **base_layout(
            title,
            "change point",
            "steps until the right bandit is on top",
            subtitle="lower is better; ✕ never: the right bandit never had the top weight in the "
            "segment",
            height=460,
        ),
        barmode="overlay",
        bargap=0.35,
    )
    fig.update_yaxes(range=[0, ymax * 1.18 + 1], rangemode="tozero")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=x)
    return fig


# -- posteriors --------------------------------------------------------------------------------
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
    xs = np.hstack([x, x[:, :1], gap]).ravel()
    ys = np.hstack([y, y[:, :1], gap]).ravel()
    xs = [None if v != v else v for v in xs.tolist()]
    ys = [None if v != v else v for v in ys.tolist()]
    return xs, ys


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
    At most ``n_frames`` frames (evenly spaced snapshots, the last one included)."""
    title = "Posteriors of the bandits and the true parameters"
    thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
    if history is None or not len(history):
        return empty_figure("No posterior history to show.", title)
    if thetas.shape[1] < 2 or "mean_1" not in history.columns:
        return empty_figure("The posterior view needs d >= 2.", title)
    d = thetas.shape[1]
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
    single = bool((bandit < 0).all())  # a single-model policy (LinTS, ...)
    is_shadow = bandit == SHADOW
    colors = bandit_color_code(bandit)
    names = np.array([bandit_label(b) for b in bandit], dtype=object)
    tags = np.array(
        ["S" if b == SHADOW else ("" if b < 0 else str(int(b))) for b in bandit], dtype=object
    )
    bounds = np.searchsorted(h["step"].to_numpy(), np.append(steps, np.inf))
    frame_state = h.groupby("step")["state"].first().reindex(steps).to_numpy()
    # fixed, equal ranges: the true parameters and (most of) the means, with a margin
    reach = max(np.abs(thetas[:, :2]).max(), np.quantile(np.abs(mean), 0.98)) * 1.25
    reach = float(max(reach, 0.5))
    star_colors = [state_color(k, strong=True) for k in range(len(thetas))]

    def frame_traces(i):  # plain lists: see _plain
        sl = slice(bounds[i], bounds[i + 1])
        st = int(frame_state[i])
        sh, base = is_shadow[sl], ~is_shadow[sl]
        sx, sy = _rings(ex[sl][sh], ey[sl][sh])
        bx, by = _rings(ex[sl][base], ey[sl][base])
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
                x=_plain(mean[sl, 0]),
                y=_plain(mean[sl, 1]),
                text=_plain(tags[sl]),
                customdata=_plain(names[sl]),
                marker=dict(color=_plain(colors[sl])),
            ),
        ]

    first = frame_traces(0)
    data = [
        dict(
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
    ]
    n_static = len(data)
    data.append(
        dict(
            first[0],
            mode="markers",
            name="true θ of the current state",
            marker=dict(first[0]["marker"], symbol="star-open", size=34, line=dict(width=3)),
            hovertemplate="%{text}<br>(%{x:.2f}, %{y:.2f})<extra></extra>",
        )
    )
    data.append(
        dict(
            first[1],
            mode="lines",
            name="shadow: 2σ ellipse",
            hoverinfo="skip",
            showlegend=not single,
            line=dict(color=SHADOW_COLOR, width=2.5),
        )
    )
    data.append(
        dict(
            first[2],
            mode="lines",
            name="the model: 2σ ellipse" if single else "base bandits: 2σ ellipses",
            hoverinfo="skip",
            line=dict(color=INK, width=1.5),
        )
    )
    data.append(
        dict(
            first[3],
            mode="markers+text",
            name="posterior means (label = id)",
            textposition="middle right",
            textfont=dict(size=13),
            marker=dict(
                first[3]["marker"], size=11, line=dict(width=1, color="#fff"), **BANDIT_COLOR_SCALE
            ),
            hovertemplate="<b>%{customdata}</b><br>mean (%{x:.2f}, %{y:.2f})<extra></extra>",
        )
    )
    frames = [
        dict(
            name=str(int(steps[i])),
            data=frame_traces(i),
            traces=list(range(n_static, len(data))),
            layout=dict(
                title=dict(
                    text=_frame_title(
                        "Posteriors",
                        int(steps[i]),
                        int(frame_state[i]),
                        _live_text(int(bounds[i + 1] - bounds[i]), single),
                    )
                )
            ),
        )
        for i in range(len(steps))
    ]
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
        _animation_controls(
            [f["name"] for f in frames],
            [f"{int(s):,}" for s in steps],
            frame_ms=200,
            transition_ms=0,
            redraw=True,
        )
    )
    layout["margin"] = dict(layout["margin"], b=130)
    axis = dict(
        range=[-reach, reach], autorange=False, zeroline=True, zerolinecolor=INK, constrain="domain"
    )
    layout["xaxis"] = dict(axis, title=dict(text="θ[0]"))
    layout["yaxis"] = dict(axis, title=dict(text="θ[1]"), scaleanchor="x", scaleratio=1)
    return go.Figure(dict(data=data, layout=layout, frames=frames))


__all__ = [
    "weights_animation",
    "top_weight_figure",
    "weights_area_figure",
    "lifelines_figure",
    "state_heatmap",
    "recall_figure",
    "posterior_animation",
    "bandit_lives",
    "top_of_each_batch",
    "minmax_index",
]
