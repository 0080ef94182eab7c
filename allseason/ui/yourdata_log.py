"""Your data, a log: what it holds, its offline evaluation in the work queue, the results (the
page's other half, a reward table, is :mod:`.yourdata_table`; the upload, :mod:`.yourdata`).

**A log above its first answer's budget** (``limits.COST_FIRST_PART_SECONDS``, estimated
before it runs): the engine says how many of its first events fit
(:func:`allseason.logs.subsample.plan`) and the page evaluates those, saying in one line
"You see the first N of M events". A
**Refine** button then queues the evaluation of the whole log (or of as much of it as
``limits.COST_REFINE_SECONDS`` allows), a long request of the same queue, with its estimate on
the button and Cancel while it waits or runs; the first events' results stay on the page
meanwhile, and are replaced when it is done. Refining on request, not by itself: twenty
visitors uploading the largest log would otherwise queue twenty refinements of about 430
CPU-s each (two hours of a 2-core server) whether or not anyone reads them; the first answer
stays within the budget, and the larger one is each visitor's own choice.

A log no part of which fits (fewer than ``subsample.MIN_EVENTS`` events in the budget) is
refused with the budget and the command that runs it from a terminal.
"""

from __future__ import annotations

import streamlit as st

from allseason import api
from allseason.logs import offline, subsample
from allseason.logs.reader import columns_text
from allseason.viz import offline as voffline
from allseason.viz.text import md

from . import frame, keys, queueing, runcache

RESULT, REFINE, HOLD = keys.YD_RESULT, keys.YD_REFINE, keys.YD_HOLD


def _capitalised(text: str) -> str:
    r"""The first letter up, the rest as it is ("UTC" keeps its capitals)."""
    return text[:1].upper() + text[1:]


def describe(source: dict, log: api.Log) -> None:
    """The log in one paragraph: events, arms, context, how it was logged."""
    logging = (
        "no propensity column, so the logging is **assumed uniform**"
        if log.propensity is None
        else "propensities all equal: **uniform** logging"
        if log.uniform
        else "propensities differ: the logging is **not uniform**, so replay is biased; read IPS"
    )
    st.markdown(
        f"**{md(source['name'], 80)}**: a log of **{log.n_events:,} events**, "
        f"{log.n_arms} arms, "
        + (
            f"context {md(', '.join(log.context_names))}"
            if log.context_names
            else "no context (one-hot arms)"
        )
        + f"; {logging}."
        + (
            f" Written by an allseason agent ({md(', '.join(log.agent_columns))}: its own "
            f"columns; the propensities are the agent's exact pi)."
            if log.agent_columns
            else ""
        )
        + (f" Ignored columns: {md(columns_text(log.ignored))}." if log.ignored else "")
        + (f" {md(_capitalised('; '.join(log.notes)))}." if log.notes else "")
    )


def _stored(key: str):
    got = st.session_state.get(RESULT)
    return got[2] if got and got[0] == key else None


def _runs_made(key: str) -> dict:
    """The runs (policy x seed) of the evaluation stored under ``key`` made so far in this
    session: a click elsewhere on the page reruns the script and interrupts the evaluation,
    which then resumes from them instead of from zero (one evaluation's runs are kept)."""
    got = st.session_state.get(keys.YD_RUNS)
    if not got or got[0] != key:
        got = (key, {})
        st.session_state[keys.YD_RUNS] = got
    return got[1]


def _evaluate(
    log: api.Log, seeds: int, bar, label: str, key: str, on_cancel, on_start=None
) -> api.OfflineResult:
    """``log`` evaluated in the work queue (its place shown in ``bar`` while it waits, with
    Cancel: then ``on_cancel()``); ``on_start()`` when it starts; its checkpoint after each
    run (policy x seed) stops it (cancelled, the tab closed) or pauses it when the queue
    lends its slot to a short request. ``key``: the result's; the runs made are kept under it
    until the evaluation ends, so an interrupted one resumes (:func:`_runs_made`).

    Raises
    ------
    queueing.QueueStopped
        Cancelled, or its tab closed."""
    cost = api.estimate_replay(log, seeds)
    with runcache.compute_slot(bar, cost, label, on_cancel) as job:
        if on_start is not None:
            on_start()

        def progress(done, total):
            job.checkpoint()
            bar.progress(done / total, text=f"Replaying: {done} of {total} runs (policies × seeds)")

        # alone on the server: a thread per core; else one (so that its checkpoint really
        # pauses it when its slot is lent)
        busy = job.queue.snapshot()
        workers = runcache.RACE_WORKERS if busy["running"] + busy["waiting"] <= 1 else 1
        made = _runs_made(key)
        if made:
            total = len(api.offline_specs()) * seeds
            bar.progress(
                len(made) / total,
                text=f"Resuming: {len(made)} of {total} runs were made before the page reran",
            )
        result = api.evaluate(
            log, None, seeds, 0, progress=progress, workers=workers, done_runs=made
        )
    st.session_state.pop(keys.YD_RUNS, None)  # the result holds them now
    return result


def _hold(key: str) -> None:
    st.session_state[HOLD] = key


def _stop_refining() -> None:
    st.session_state.pop(REFINE, None)
    st.session_state[keys.QUEUE_NOTE] = "Refining stopped: you see the first events' results."


def show_log(source: dict, log: api.Log, opts: dict, key: str) -> None:
    """The log, its evaluation (its first events when the whole is above the budget, refined
    on request), the results. ``opts``: the page's options; ``key``: the file's and options'
    key (results are stored under it and the number of events evaluated)."""
    ss = st.session_state
    describe(source, log)
    seeds = opts["seeds"]
    command = subsample.replay_command(
        source["name"], seeds, {f: opts[f] for f in ("context", "arms", "scale") if f in opts}
    )
    try:
        first = subsample.plan(log, seeds, command=command)
        more = subsample.plan(log, seeds, refine=True, command=command)
    except api.SpecError as e:
        st.error(f"**{md(source['name'], 80)}**: {md(e.message)}", icon=":material/error:")
        return
    queueing.note()  # a request cancelled in the queue: said once
    plan, result = more, _stored(f"{key}:{more.first}")
    if result is None:
        plan, result = first, _stored(f"{key}:{first.first}")
    line, refine_area = st.empty(), st.container()
    if result is None:
        if ss.get(HOLD) == key:  # cancelled: queued again only when asked
            st.button("Evaluate this log", key="yd_eval", on_click=ss.pop, args=(HOLD, None))
            return
        bar = st.progress(0.0, text="Replaying…")
        try:
            part = subsample.head(log, first.first)
            result = _evaluate(
                part, seeds, bar, "log evaluation", f"{key}:{first.first}", lambda: _hold(key)
            )
        except queueing.QueueStopped as e:
            bar.empty()
            _hold(key)
            st.info(f"{e.message}. Press **Evaluate this log** to queue it again.")
            return
        bar.empty()
        ss[RESULT] = (f"{key}:{first.first}", "log", result)
    if plan is more and more.first > first.first:
        line.success(
            f"**Refined: you see the {plan.text}.**"
            + (
                ""
                if plan.whole
                else f" The whole log (about {plan.full_seconds:,.0f} CPU-seconds) is more "
                f"than this server refines ({plan.budget:,.0f}); from a terminal: `{command}`"
            ),
            icon=":material/check_circle:",
        )
    elif not plan.whole:
        line.info(
            f"**You see the {plan.text}.** The whole log is estimated at "
            f"{plan.full_seconds:,.0f} CPU-seconds, above the {plan.budget:,.0f} this server "
            f"gives a log's first answer, so these results use its first events (the same "
            f"log, cut short).",
            icon=":material/content_cut:",
        )
    show_log_results(subsample.head(log, plan.first), result)
    if plan is first and more.first > first.first:
        _refine(refine_area, log, seeds, key, more, command)


def _refine(area, log: api.Log, seeds: int, key: str, more, command: str) -> None:
    """The Refine button (its estimate on it), or, once pressed, the refinement: queued as a
    long request, its place or progress in ``area`` with Cancel; done: the page reruns with
    its results."""
    ss = st.session_state
    if ss.get(REFINE) != key:
        area.button(
            f"Refine: {more.text} (about {more.seconds:,.0f} CPU-s, waits its turn)",
            key="yd_refine_go",
            on_click=ss.__setitem__,
            args=(REFINE, key),
            icon=":material/zoom_in:",
            help=f"The evaluation again on {more.text}, in the server's queue; the results "
            f"above stay until it is done. Without a budget, from a terminal: `{command}`",
        )
        return
    with area:
        bar = st.progress(0.0, text=f"Refining on {more.text}…")
        stop = st.empty()
    try:
        part = subsample.head(log, more.first)
        result = _evaluate(
            part,
            seeds,
            bar,
            "refining a log",
            f"{key}:{more.first}",
            lambda: ss.pop(REFINE, None),
            lambda: _stop(stop),
        )
    except queueing.QueueStopped as e:
        ss.pop(REFINE, None)
        bar.empty()
        stop.empty()
        area.info(f"{e.message}. You see the first events' results.")
        return
    ss.pop(REFINE, None)
    ss[RESULT] = (f"{key}:{more.first}", "log", result)
    st.rerun()


def _stop(slot) -> None:
    """The running refinement's Cancel (its key is one that the queue's checkpoint reads,
    ``queueing.CANCEL_KEY``: the click stops it after its current run)."""
    slot.button(
        "Cancel refining",
        key=f"{queueing.CANCEL_KEY}_refine",
        on_click=_stop_refining,
        icon=":material/close:",
    )
    return True


def show_log_results(log: api.Log, result: api.OfflineResult) -> None:
    """The logger's own value, the estimator chosen, the too-sparse warning with the events
    that would decide, the table, the figure and the CSV."""
    rows = result.summary()
    logger = rows[0]
    st.markdown(
        f"**What the log measured**: the logging policy's own mean reward, "
        f"**{logger['estimate']:.4f}** over {logger['events']:,.0f} events, 95% interval "
        f"[{logger['low']:.4f}, {logger['high']:.4f}] (Wilson). The contestants below are "
        f"estimated against the same log."
    )
    methods = list(result.methods)
    method = st.radio(
        "Estimator",
        methods,
        horizontal=True,
        key="yd_method",
        format_func=lambda m: (
            offline.METHOD_TITLES[m]
            + (" (biased here)" if m == "replay" and not log.uniform else "")
        ),
    )
    reasons = result.sparsity([method])
    if reasons:
        st.warning(
            "**Too sparse to decide anything.** "
            + " ".join(r[0].upper() + r[1:] + "." for r in reasons)
            + " "
            + result.decision_text(method)[0].upper()
            + result.decision_text(method)[1:]
            + f". The rule: a policy kept fewer than {offline.MIN_EVENTS} events (IPS, "
            f"SNIPS, DR, DM: an effective sample size below {offline.MIN_EVENTS}), or every "
            f"95% interval overlaps every other.",
            icon=":material/warning:",
        )
    st.table(voffline.estimates_table(rows, method))
    st.caption(
        (
            "**Kept events**: events where the policy chose the logged arm; only those count "
            "(replay, Li et al. 2011). **95% interval**: Wilson on the kept rewards. "
            if method == "replay"
            else "**Effective sample size**: (Σw)² / Σw², w = π(a|x)/propensity, π the "
            "policy's own probability of the logged arm; *ESS, realised draw*: the same "
            "with the indicator of its one draw in place of π. **95% interval**: a "
            "bootstrap over 100 blocks of consecutive events (the policies adapt), widened "
            "to at least the Wilson interval at the ESS. "
        )
        + f"Every policy learns only on the events where its draw matched the logged arm. "
        f"**± over seeds**: Student's t interval over the {result.n_seeds} replay "
        f"seeds (the policies' own draws on this log). **Too sparse** (the warning): a "
        f"policy kept fewer than {offline.MIN_EVENTS} events or has an ESS below "
        f"{offline.MIN_EVENTS} (⚠), or every interval overlaps every other. The oracles "
        f"cannot run on a log: it has no true seasons. {result.seconds:.1f} s."
    )
    frame.chart(
        voffline.estimates_figure(rows, method),
        "Policies whose bars reach the dotted line cannot be told from the best one on this log.",
        "offline-estimates",
        "yd_fig",
    )
    frame.csv_button("Results (CSV)", result.frame, "offline-results", "yd_dl")


__all__ = ["show_log", "show_log_results", "describe"]
