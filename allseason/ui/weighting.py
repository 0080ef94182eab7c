"""Inside All-Season's view "Carried weights vs the printed rule": the same All-Season with
its weights carried from batch to batch (fixed share, the default) and with the paper's
printed rule (the last batch alone), side by side: the numbers that tell them apart and the
paper's figure for each. From the race itself when it holds both, else from one small race of
the chosen contestant with each weighting (cached).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from allseason import api

from . import runcache
from .frame import chart
from .runcache import RaceRun

PAIR_CAPTION = (
    "Same scenario, same arms and noise, first seed: compare how quickly and how "
    "firmly each weighting settles on one bandit after a change point."
)


PRINTED = "allseason-sw-printed"
CARRIED_TITLE = "Carried weights (fixed share, the default)"
PRINTED_TITLE = "The paper's printed rule (last batch alone)"


def weighting_pair(run: RaceRun, label: str) -> tuple[RaceRun, list[tuple[str, str]], int]:
    """Two All-Season runs to compare the weightings: (run, [(title, label), ...], seeds).

    The race itself when it holds a carried-weights All-Season (SW) and the printed rule
    (the default race does): the same race, every seed. Otherwise the chosen contestant with
    each weighting on the race's scenario, first seed only (one small race, cached)."""
    names = {p.label: p for p in run.race.policies}
    spec = names[label]
    carried = next(
        (
            p.label
            for p in run.race.policies
            if p.name == "allseason-sw"
            and dict(p.params).get("weighting", "fixed-share") == "fixed-share"
        ),
        None,
    )
    if spec.name in ("allseason-sw", PRINTED) and PRINTED in names and carried is not None:
        return run, [(CARRIED_TITLE, carried), (PRINTED_TITLE, PRINTED)], run.race.n_seeds
    name = "allseason-sw" if spec.name == PRINTED else spec.name
    params = {
        k: v for k, v in dict(spec.params).items() if k not in ("weighting", "share", "spawn")
    }
    labels = [f"{name} · carried weights", f"{name} · printed rule"]
    specs = (
        api.PolicySpec(name, {**params, "weighting": "fixed-share"}, labels[0]),
        api.PolicySpec(name, {**params, "weighting": "batch"}, labels[1]),
    )
    pair = runcache.run_race(api.Race(run.race.scenario, specs, 1))
    return pair, [(CARRIED_TITLE, labels[0]), (PRINTED_TITLE, labels[1])], 1


def weighting_table(run: RaceRun, rules: list[tuple[str, str]], n_seeds: int) -> pd.DataFrame:
    """The numbers that tell the weightings apart, one column per rule, mean over seeds:
    mean reward, cumulative regret, bandits created, share of batches with top weight > 0.9,
    and the recall delay of each return (steps until its old bandit held the top weight)."""
    pattern = run.race.scenario.pattern
    cols = {}
    for title, lab in rules:
        ens = [api.ensemble_summary(run.result.traces[lab, k], pattern) for k in range(n_seeds)]
        delays = pd.DataFrame([e["recall_delays"] for e in ens])
        col = {
            "mean reward per step": f"{np.mean([e['mean_reward'] for e in ens]):.3f}",
            "cumulative regret": f"{np.mean([e['regret'] for e in ens]):,.0f}",
            "bandits created per run": _span([e["bandits_created"] for e in ens]),
            "batches with top weight > 0.9": f"{np.mean([e['top_share'] for e in ens]):.1%}",
            "returning seasons: right bandit on top": "{:.0%} of their batches".format(
                np.mean([h for e in ens for h in e["recall_hold"]])
            )
            if any(e["recall_hold"] for e in ens)
            else "no return",
        }
        for i, c in enumerate(delays.columns):
            v = delays[c]
            col[f"recall delay, return {i + 1} (steps)"] = (
                "never"
                if v.isna().all()
                else f"{v.median():,.0f}"
                + ("" if v.notna().all() else f" ({int(v.isna().sum())} never)")
            )
        cols[title] = col
    return pd.DataFrame(cols)


def _span(values) -> str:
    lo, hi = int(min(values)), int(max(values))
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


def panel(run: RaceRun, label: str) -> None:
    """The view: the two weightings' numbers, then the paper's figure for each."""
    from allseason.viz import weights as vweights

    sc = run.race.scenario
    with st.spinner("Running both weightings…"):
        pair, rules, n_seeds = weighting_pair(run, label)
    where = (
        f"this race, mean over its {n_seeds} seeds"
        if pair is run
        else "this scenario, first seed (your race has only one of the two rules)"
    )
    st.markdown(
        f"**The same All-Season, two ways of weighting its bandits** ({where}). "
        "Carried weights are the default; the printed rule is the paper's "
        "Algorithm 3 read literally."
    )
    st.dataframe(weighting_table(pair, rules, n_seeds), key="in_pair_table")
    st.caption(
        "Bandits created: base bandits ever made (bandit 1 plus one per spawn). Recall "
        "delay: steps after a season returns until the bandit that learnt it first holds "
        "the top weight (median over seeds); *right bandit on top*: how much of the "
        "returning seasons it then keeps it. The paper's figure shows about 16 bandits "
        "and a top weight near 1 after each change."
    )
    for title, lab in rules:
        fig = vweights.top_weight_figure(
            pair.frames_for(lab, 0)["weights"], sc.pattern, policy=lab, seed=0
        )
        fig.update_layout(
            title_text=f"{title}: weight of the most likely bandit, seed 0", height=460
        )
        chart(
            fig,
            PAIR_CAPTION,
            f"top-weight-{lab.replace(' · ', '-').replace(' ', '-')}",
            f"in_pair_{lab}",
        )
    st.caption(
        "Carried weights are our reconstruction, not the paper's text: the paper "
        "prints the last-batch rule, and its own section-5 figure (about 16 bandits, "
        "top weight near 1) is what carried weights reproduce (docs: *Fidelity*). "
        "Fixed share (Herbster & Warmuth) carries each bandit's weight from "
        "batch to batch and mixes in a share α of uniform weight; a newborn bandit "
        "takes the shadow's weight over. The printed rule scores each bandit on the "
        "last batch alone, so at batch size 1 the top weight flips from step to step "
        "and a bandit is spawned on most steps."
    )
