"""The guided tour's steps: each one's title, at most three sentences, its figure and its
caption (the page around them: :mod:`allseason.ui.tour`).

Every number in the texts is read from results computed here, never typed in:

- the default race (``api.default_race()``: the paper's synthetic experiment), computed once
  per server through the app's race cache (:func:`allseason.ui.runcache.run_race`), the kernels
  warmed up once per process;
- the tracked real-data snapshot (``api.real_data_snapshot``: MNIST, ten arms), read,
  never recomputed (a fresh clone has no real data installed).

:func:`facts` gathers those numbers; :func:`build` turns one step into its title, text,
figure and caption (both cached).
"""

from __future__ import annotations

import logging
import re
import statistics
from dataclasses import dataclass

import streamlit as st

from allseason import api
from allseason.viz import lifelines as vlives
from allseason.viz import race as vrace
from allseason.viz import timeline
from allseason.viz import tour as vtour
from allseason.viz import weights as vweights
from allseason.viz.style import policy_name
from allseason.viz.text import md

from . import runcache

log = logging.getLogger("allseason.ui")

STEPS = (  # (file name of the figure, title, label in the step picker)
    ("tour-seasons", "The seasons", "Seasons"),
    ("tour-race", "The race", "Race"),
    ("tour-weights", "Who holds the weight", "Weights"),
    ("tour-lives", "Births and prunings", "Births"),
    ("tour-recall", "A season returns", "Recall"),
    ("tour-printed-rule", "The printed rule", "Printed rule"),
    ("tour-real-data", "Real data", "Real data"),
)
N_STEPS = len(STEPS)
SEED = 0  # the run the inside views look at
CARRIED, DISC, PRINTED = "allseason-sw", "allseason-disc", "allseason-sw-printed"
LEFT_OUT = ("random", PRINTED)  # not in the race figure: scale (random), step 6 (printed)
N_LABELLED = 4  # bandits named in the legend of the weight figures (room at 400 px)
MAX_POINTS = 800  # points of the weight figures (the browser draws them in well under
# a second; the regret curves take a quarter, per trace)
DATA_NAMES = {"mnist": "handwritten digits (MNIST)", "fmnist": "photos of clothes (Fashion-MNIST)"}
THRESHOLD = 0.9  # "one bandit holds the weight": api.ensemble_summary's default


@dataclass(frozen=True)
class Step:
    number: int
    title: str
    text: str  # at most three sentences
    figure: object  # a plotly Figure
    caption: str
    name: str  # file name of the HTML download


# --- the computations (cached) ----------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def warm_up() -> float:
    """Compile (or load) the kernels once per process."""
    return api.warm_up()


def race_run() -> runcache.RaceRun:
    """The default race, from the app's race cache (computed once per server)."""
    warm_up()
    return runcache.run_race(api.default_race())


def _pct(x: float) -> str:
    """A share as a percentage, with enough digits not to round a small one to 0."""
    if x == 0 or x >= 0.01:
        return f"{100 * x:.1f}%"
    return f"{100 * x:.2f}%" if x >= 0.0001 else "less than 0.01%"


def _steps(values: list[int], keep: int = 5) -> str:
    """'0, 1,509 and 5,503' (the first ``keep``, then how many more)."""
    v = [f"{int(s):,}" for s in values]
    if len(v) > keep:
        return ", ".join(v[:keep]) + f" and {len(v) - keep:,} more"
    return v[0] if len(v) == 1 else ", ".join(v[:-1]) + " and " + v[-1]


md_escape = md  # text shown as Markdown literally (the paper's θ*1 would turn into italics)


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def race_facts(run: runcache.RaceRun) -> dict:
    """The numbers of steps 1-6, from the finished default race."""
    race, result = run.race, run.result
    sc = race.scenario
    pattern = sc.pattern
    new = pattern.first_seen()
    summary = result.summary()
    params = {p.label: dict(p.params) for p in race.policies}
    out = dict(
        horizon=sc.horizon,
        n_states=int(pattern.n_states),
        n_changes=len(new),
        n_returns=int((~new).sum()),
        n_seeds=race.n_seeds,
        batch_size=sc.batch_size,
        seed=SEED,
        tau=params[CARRIED].get("tau"),
        n_max=params[CARRIED].get("n_max"),
        regret={lab: float(s["cum_regret"]) for lab, s in summary.items()},
        mean_reward={lab: float(s["mean_reward"]) for lab, s in summary.items()},
    )
    refs = set(result.references())  # the oracles: references, not part of the tour's story
    shown = [lab for lab in summary if lab not in LEFT_OUT and lab not in refs]
    baselines = [lab for lab in shown if lab not in result.labels_of("allseason")]
    out["shown"] = shown
    out["best_baseline"] = min(baselines, key=lambda lab: out["regret"][lab])
    for key, label in (("carried", CARRIED), ("printed", PRINTED)):
        trace = result.traces[label, SEED]
        ens = api.ensemble_summary(trace, pattern, threshold=THRESHOLD)
        learnt = api.learnt_by(trace, pattern)
        ev = run.frames_for(label, SEED)["events"]
        out[key] = dict(
            label=label,
            bandits_created=int(ens["bandits_created"]),
            top_share=float(ens["top_share"]),
            mean_reward=float(ens["mean_reward"]),
            regret=float(ens["regret"]),
            recall_delays=list(ens["recall_delays"]),
            learnt=learnt,
            learnt_text=api.learnt_by_text(learnt),
            births=[int(s) for s in ev.loc[ev["kind"] == "spawn", "step"]],
            prunes=int(ev["kind"].isin(("prune", "discard")).sum()),
        )
    return out


def real_facts(snap: dict) -> dict:
    """The numbers of step 7, from the tracked snapshot."""
    pols = snap["policies"]
    baselines = [lab for lab in pols if api.role(pols[lab]["policy"]).family != "allseason"]
    best = max(baselines, key=lambda lab: pols[lab]["mean_reward"])
    data, _, arms = str(snap["table"]).partition("-")  # e.g. "mnist-10arm"
    out = dict(
        n=int(snap["n"]),
        seed=int(snap["seed"]),
        pattern=snap["pattern"],
        data=DATA_NAMES.get(data, data),
        n_arms=int(re.sub(r"\D", "", arms) or 0),
        n_changes=len(snap["change_points"]),
        n_returns=None,
        carried=float(pols[CARRIED]["mean_reward"]),
        printed=float(pols[PRINTED]["mean_reward"]),
        best_baseline=best,
        best_baseline_reward=float(pols[best]["mean_reward"]),
    )
    try:  # the real-data pattern: how many of its changes bring back an earlier task
        pattern = api.real_data_pattern(snap["pattern"], out["n"])
    except api.SpecError as e:  # a pattern no longer known: the text leaves the count out
        log.warning("guided tour: the snapshot's pattern %r: %s", snap["pattern"], e)
    else:
        if [int(c) for c in pattern.change_points()] == list(snap["change_points"]):
            out["n_returns"] = int((~pattern.first_seen()).sum())
    return out


@st.cache_data(show_spinner=False, max_entries=2)
def facts(race_key: str) -> dict:
    """Every number the texts quote (``race_key``: the default race's JSON, for the cache)."""
    return {**race_facts(race_run()), "real": real_facts(load_snapshot())}


@st.cache_data(show_spinner=False, max_entries=2)
def load_snapshot() -> dict:
    return api.real_data_snapshot()


# --- the steps --------------------------------------------------------------------------------
def _every(f: dict) -> str:
    return "after every reward" if f["batch_size"] == 1 else "after every batch of rewards"


def _unit(f: dict) -> str:
    return "steps" if f["batch_size"] == 1 else "batches"


def step_seasons(run: runcache.RaceRun, f: dict):
    text = (
        f"Which option pays best depends on a hidden **season** (a *state* of the world); "
        f"here {f['n_states']} seasons take turns over {f['horizon']:,} steps. "
        f"The season changes {f['n_changes']} times without warning, and "
        f"{f['n_returns']} of these changes bring back a season seen before. "
        f"A good policy recognises a returning season at once instead of learning it "
        f"again."
    )
    fig = timeline.pattern_timeline(run.race.scenario.pattern, height=vtour.HEIGHT)
    fig = vtour.projector(fig, title="The seasons: the true state at each step")
    caption = (
        "The paper's synthetic experiment: one lane per state. ▼ a state seen for the "
        "first time, ○ a state coming back."
    )
    return text, fig, caption


def step_race(run: runcache.RaceRun, f: dict):
    r, shown = f["regret"], f["shown"]
    bb = f["best_baseline"]
    n_all = sum(lab in run.result.labels_of("allseason") for lab in shown)
    words = ("", "One", "Two", "Three", "Four", "Five")
    who = (
        "All-Season"
        if n_all == 1
        else f"{words[n_all] if n_all < len(words) else n_all} variants of All-Season"
    )
    text = (
        f"{who} and {len(shown) - n_all} other policies play the same "
        f"{f['horizon']:,} steps, {f['n_seeds']} times each; **regret** adds up the expected "
        f"reward lost against always picking the best option. "
        f"{policy_name(CARRIED)} ends with a regret of {r[CARRIED]:,.0f} and "
        f"{policy_name(DISC)} {r[DISC]:,.0f} on average, against {r[bb]:,.0f} for the "
        f"best of the others, {policy_name(bb)}. "
        f"All-Season's curves stay nearly flat: when a season returns, it does not learn it "
        f"again."
    )
    steps = run.result.curves_frame(MAX_POINTS // 4)  # exact at the drawn steps
    steps = steps[steps["policy"].isin(shown)]
    fig = vrace.cumulative_figure(
        steps, run.race.scenario.pattern, "regret", max_points=MAX_POINTS // 4
    )
    fig = vtour.projector(
        fig,
        subtitle=f"mean over {f['n_seeds']} seeds (band: min–max); "
        f"legend best first; background: true state",
    )
    caption = (
        f"Cumulative regret, lower is better. Left out for scale: "
        f"{policy_name('random')} (regret {r['random']:,.0f}) and the printed rule "
        f"({r[PRINTED]:,.0f}), which is step 6."
    )
    return text, fig, caption


def _learnt_sentence(learnt: dict) -> str:
    ids = [tuple(v) for v in learnt.values()]
    own = all(len(v) == 1 for v in ids) and len(set(ids)) == len(ids)
    parts = [
        f"state {s} by "
        + (
            "no base bandit"
            if not v
            else ("bandit " if len(v) == 1 else "bandits ") + ", ".join(map(str, v))
        )
        for s, v in learnt.items()
    ]
    head = (
        "Each season was learnt by its own bandit"
        if own
        else "The seasons were learnt by these bandits"
    )
    return f"{head}: {_and(parts)}."


def _top_weight(run: runcache.RaceRun, label: str):
    """The paper's figure (weight of the most likely bandit) for one contestant, seed SEED,
    fitted to a projector."""
    fig = vweights.top_weight_figure(
        run.frames_for(label, SEED)["weights"],
        run.race.scenario.pattern,
        policy=label,
        seed=SEED,
        n_labelled=N_LABELLED,
        max_points=MAX_POINTS,
    )
    return vtour.projector(fig, subtitle="", unlisted=vtour.CHANGE_POINTS)


def step_weights(run: runcache.RaceRun, f: dict):
    c = f["carried"]
    sure = (
        "so it was nearly always sure which bandit fits the season"
        if c["top_share"] >= 0.9
        else "the rest of the time the weight was shared"
    )
    text = (
        f"All-Season keeps several small models (**bandits**) and, {_every(f)}, weighs "
        f"each by how well it predicted; a bandit drawn by weight plays. "
        f"In this run one bandit held more than {THRESHOLD} of the weight after "
        f"{_pct(c['top_share'])} of the {_unit(f)}, {sure}. " + _learnt_sentence(c["learnt"])
    )
    fig = _top_weight(run, CARRIED)
    caption = (
        f"{policy_name(CARRIED)}, seed {SEED}, weights carried from batch to batch "
        "(fixed share, our reconstruction of the paper's weighting). "
        "Triangles: base bandits (colour = id); pink dashes: the shadow; "
        f"▼ new state, ○ a state returns. Paper's notation: "
        f"{md_escape(c['learnt_text'])}."
    )
    return text, fig, caption


def step_lives(run: runcache.RaceRun, f: dict):
    c = f["carried"]
    births = c["births"]
    plural = "s" if len(births) != 1 else ""
    born = (
        "bandit 1 alone"
        if not births
        else f"bandit 1 and {len(births)} cop{'ies' if plural else 'y'} of the shadow"
        + (f", born at step{plural} {_steps(births)}" if len(births) <= 3 else "")
    )
    pruned = "none" if not c["prunes"] else f"{c['prunes']:,}"
    text = (
        f"When a new season starts only the **shadow**, a bandit that remembers just the "
        f"last {f['tau']} steps, predicts well; when it plays, it is copied into a new base "
        f"bandit that keeps the season. "
        f"In this run All-Season created {c['bandits_created']:,} base bandits ({born}) "
        f"and pruned {pruned}. "
        f"It keeps at most {f['n_max']}: above that, the less certain of the two most "
        f"similar bandits is pruned."
    )
    own = run.frames_for(CARRIED, SEED)
    fig = vlives.lifelines_figure(
        own["events"], own["weights"], run.race.scenario.pattern, policy=CARRIED, seed=SEED
    )
    fig = vtour.projector(fig, subtitle="one lane per base bandit; background: true state")
    caption = (
        "Each lane is a base bandit's life: from its birth (▶, a copy of the shadow) to "
        "the end or its pruning (✕). The long lanes are the memories of the seasons."
    )
    return text, fig, caption


def step_recall(run: runcache.RaceRun, f: dict):
    delays = f["carried"]["recall_delays"]
    hit = [d for d in delays if d == d]  # NaN: never on top in that season
    n = len(delays)
    if hit:
        lo, hi, med = min(hit), max(hit), statistics.median(hit)
        span = f"{lo:,.0f}" if lo == hi else f"{lo:,.0f} to {hi:,.0f}"
        when = f"after {span} step{'s' if hi != 1 else ''} (median {med:,.0f})"
    if n == 0:
        text = "No season came back in this run, so there was nothing to recall."
    elif len(hit) == n:
        text = (
            f"A season came back {n} times in this run. "
            f"Each time, the bandit that had learnt it took the top weight back {when}, "
            f"without learning the season again."
        )
    elif hit:
        text = (
            f"A season came back {n} times in this run. "
            f"At {len(hit)} of these returns the bandit that had learnt it took the top "
            f"weight back {when}; at the others it never did."
        )
    else:
        text = (
            f"A season came back {n} times in this run, but the bandit that had learnt "
            f"it never took the top weight back."
        )
    if n:
        text += (
            " A policy without that memory pays again at every return, as the "
            "baselines' regret showed in step 2."
        )
    recall = api.recall_table(run.result.traces[CARRIED, SEED], run.race.scenario.pattern)
    fig = vtour.returns_recall_figure(recall)
    caption = (
        f"{policy_name(CARRIED)}, seed {SEED}: one bar per return of a season, the "
        f"steps until its old bandit held the top weight again. Hover a bar for "
        f"details."
    )
    return text, fig, caption


def step_printed(run: runcache.RaceRun, f: dict):
    c, p = f["carried"], f["printed"]
    text = (
        f"The rule printed in the paper weighs the bandits by the last batch alone (here "
        f"one reward), forgetting all earlier evidence, so the weight jumps from bandit to "
        f"bandit: the figure becomes a cloud. "
        f"On the same run it created {p['bandits_created']:,} base bandits against "
        f"{c['bandits_created']:,} with carried weights, and one bandit held more than "
        f"{THRESHOLD} of the weight after {_pct(p['top_share'])} of the {_unit(f)} "
        f"against {_pct(c['top_share'])}. "
        f"Its mean reward per step is {p['mean_reward']:.3f}, against "
        f"{c['mean_reward']:.3f} with carried weights."
    )
    if f["batch_size"] != 1:
        text = text.replace(" (here one reward)", "")
    fig = _top_weight(run, PRINTED)
    caption = (
        f"The figure of step 3 for the printed rule: same run (seed {SEED}), same "
        f"settings, only the weighting differs. Triangles: base bandits; pink dashes: the "
        f"shadow."
    )
    return text, fig, caption


def step_real(run: runcache.RaceRun, f: dict):
    r = f["real"]
    back = f", {r['n_returns']} of them back to an earlier rule" if r["n_returns"] else ""
    text = (
        f"On real data, {r['n']:,} {r['data']}, the policy sends each image to one of "
        f"{r['n_arms']} arms and earns 1 for the right one; which arm is right "
        f"changes {r['n_changes']} times{back}. "
        f"All-Season with carried weights earned {r['carried']:.3f} per step, the printed "
        f"rule {r['printed']:.3f} and the best baseline, "
        f"{policy_name(r['best_baseline'])}, {r['best_baseline_reward']:.3f}. "
        f"It is one run (seed {r['seed']}), and no policy was tuned on this data."
    )
    fig = vtour.real_data_figure(
        load_snapshot(), f"Real data: {r['data']}, {r['n_arms']} arms — mean reward so far"
    )
    caption = (
        "Mean reward per step so far, that is the share of images sent to the right "
        "arm; from the real-data snapshot shipped with the app."
    )
    return text, fig, caption


BUILDERS = (step_seasons, step_race, step_weights, step_lives, step_recall, step_printed, step_real)


@st.cache_data(show_spinner=False, max_entries=2 * N_STEPS)
def build(k: int, race_key: str) -> Step:
    """Step ``k`` (1-based) of the tour on the default race whose JSON is ``race_key``."""
    run = race_run()
    text, fig, caption = BUILDERS[k - 1](run, facts(race_key))
    name, title, _ = STEPS[k - 1]
    return Step(k, title, text, fig, caption, name)


def step(k: int) -> Step:
    return build(k, runcache.key_of(api.default_race()))


@st.cache_resource(show_spinner=False)
def prebuild(race_key: str) -> bool:
    """Build every step once per process (after the first step is on screen), so that no
    later step waits for its figure."""
    for k in range(1, N_STEPS + 1):
        try:
            build(k, race_key)
        except Exception:
            log.exception("guided tour: building step %d", k)
    return True
