"""Your data, a reward table: the seasons derived from it, the race on it, and which bandit
All-Season used when, on the table's own calendar (the page's other half, a log, is
:mod:`.yourdata`)."""

from __future__ import annotations

import streamlit as st

from allseason import api
from allseason.viz import leaderboard as vboard
from allseason.viz.style import policy_name
from allseason.viz.text import md
from allseason.viz.timeline import date_ticks

from . import frame, keys, runcache, state

TABLE_SPECS = api.OFFLINE_POLICIES + api.REFERENCES  # the race on a reward table


def show_table(source: dict, table: api.RewardTable, opts: dict, key: str, result) -> None:
    """A reward table: its seasons (the best arm of each period), the race on it, inside
    (``opts``: the page's options; ``key``: the file's and options' key; ``result``: the
    race stored under it, or None)."""
    sc = table.scenario(steps=opts["steps"])
    state.check_app_limits(sc)
    dates = api.step_dates(sc, world=table)
    span = (
        f"{table.times[0]} to {table.times[-1]}"
        if dates is not None
        else f"periods {table.times[0]} to {table.times[-1]}"
    )
    st.markdown(
        f"**{md(source['name'], 80)}**: a reward table of **{table.n_periods:,} "
        f"periods** ({md(span)}) × {table.n_arms} arms ({md(', '.join(table.arm_names))})"
        + (f"; {md('; '.join(table.notes))}" if table.notes else "")
        + "."
    )
    st.markdown(
        f"**The world.** Each period is a batch of {opts['steps']} customers; a "
        f"customer shown an arm buys it (reward 1) with that arm's rate in that "
        f"period, else 0. **The seasons are derived**, since your table has no true "
        f"states: a period's season is its **best arm** ({len(sc.segments)} runs of "
        f"seasons, {sc.horizon:,} steps)."
    )
    from allseason.viz import timeline

    fig = timeline.pattern_timeline(sc.pattern, height=150 + 34 * min(table.n_arms, 8))
    names = api.state_names(sc, world=table)
    fig.update_layout(title_text="Your seasons: the best arm of each period")
    frame.chart(
        fig if dates is None else date_ticks(fig, dates),
        "State k is the season where arm k is best: "
        + md(", ".join(f"{k} = {n}" for k, n in enumerate(names)))
        + ".",
        "your-seasons",
        "yd_seasons",
    )
    if result is None:
        race = api.Race(sc, api.default_specs(TABLE_SPECS), opts["seeds"])
        bar = st.progress(0.0, text="Racing…")
        with runcache.compute_slot(bar):
            for progress in api.iter_race(race, workers=runcache.RACE_WORKERS, world=table):
                bar.progress(progress.fraction, text=f"Racing: {progress.fraction:.0%}")
        bar.empty()
        result = progress.result
        st.session_state[keys.YD_RESULT] = (key, "table", result)
    summary = result.summary_frame()
    st.subheader("The race on your table")
    st.table(vboard.leaderboard_table(summary))
    st.caption(
        f"Mean ± 95% Student's t interval over {result.race.n_seeds} seeds. The oracles "
        f"are told the derived seasons (the best arm of each period), ranked apart."
    )
    frame.csv_button("Race summary (CSV)", summary, "your-table-race", "yd_dl_race")
    _table_inside(result, sc, dates, names)


def _table_inside(result, sc, dates, names) -> None:
    """Which bandit All-Season used when, on the user's own calendar."""
    from allseason.viz import timeline

    st.subheader("Which bandit All-Season used when")
    labels = result.labels_of("allseason")
    c1, c2, _ = st.columns([2, 1, 2])
    label = c1.selectbox("All-Season contestant", labels, key="yd_label", format_func=policy_name)
    seed = c2.selectbox("Seed", list(range(result.race.n_seeds)), key="yd_seed")
    from allseason.viz import learnt as vlearnt
    from allseason.viz import weights as vweights

    trace = result.traces[label, seed]
    if dates is not None:
        frame.chart(
            vlearnt.season_year_figure(api.season_year_table(trace, dates, names)),
            "Read along a row: the same season in each year. The same bandit in every "
            "year of a row means All-Season recognised the season when it came back.",
            "your-season-year",
            "yd_season_year",
        )
    w = result.weights_frame(only=[(label, seed)])
    fig = timeline.name_states(
        vweights.top_weight_figure(w, sc.pattern, policy=label, seed=seed), names
    )
    frame.chart(
        fig if dates is None else date_ticks(fig, dates),
        "After each period, the weight of the bandit All-Season trusted most "
        "(triangles coloured by bandit id; pink dashes: the shadow, a new season). "
        "The background bands are your seasons.",
        "your-top-weight",
        "yd_top",
    )


__all__ = ["show_table"]
