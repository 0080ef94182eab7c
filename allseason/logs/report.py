"""The results of an offline evaluation as text (the command line's tables) and as one JSON
document (``replay --json``): the logger's own value first; on a non-uniform log IPS, SNIPS,
DR and DM first and replay last, labelled biased; every interval named."""

from __future__ import annotations

import math

from .evaluate import INTERVALS, LOGGER, METHOD_TITLES, MIN_EVENTS, OfflineResult
from .reader import columns_text


def log_line(log) -> str:
    """One line about the log: size, arms, context, how it was logged, what was ignored."""
    logging = (
        "uniform (no propensity column: assumed, p = 1/K)"
        if log.propensity is None
        else "uniform (equal propensities)"
        if log.uniform
        else "NOT uniform (propensities differ): replay is biased, read IPS, SNIPS and DR"
    )
    return (
        f"log: {log.n_events:,} events, {log.n_arms} arms, d = {log.d} "
        f"({', '.join(log.context_names) or 'no context: one-hot arms'}); logging {logging}"
        + (
            f"; written by an allseason agent ({', '.join(log.agent_columns)}: its own columns)"
            if getattr(log, "agent_columns", ())
            else ""
        )
        + (f"; ignored columns: {columns_text(log.ignored)}" if log.ignored else "")
        + (f"; {'; '.join(log.notes)}" if log.notes else "")
    )


def _clean(v):
    if isinstance(v, float):
        return float(v) if math.isfinite(v) else None
    return v


def json_report(result: OfflineResult) -> dict:
    """The results as one JSON-ready dict: ``log``, ``logger`` (the first row), ``methods``
    (in the order shown), ``rows``, ``too_sparse`` (reasons), ``decide`` (per method: the
    events that would tell a 20% better policy from the logger), ``intervals`` (which
    interval each method carries), ``seconds``."""
    rows = [{k: _clean(v) for k, v in r.items()} for r in result.summary()]
    return dict(
        log=log_line(result.log),
        logger=rows[0],
        methods=list(result.methods),
        rows=rows,
        too_sparse=result.sparsity(),
        decide={m: {k: _clean(v) for k, v in result.decision(m).items()} for m in result.methods},
        intervals=INTERVALS,
        seconds=result.seconds,
    )


def _fmt(v) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.4f}"


def text_report(result: OfflineResult) -> str:
    """The tables the command line prints: the logger's row, then one table per method."""
    rows = result.summary()
    width = max(16, *(len(s.label) for s in result.specs))
    lo = rows[0]
    out = [
        f"{'the log itself':<{width}} {'events':>9} {'mean':>9} {'95% interval':>22}",
        f"{LOGGER + ' (measured)':<{width}} {lo['events']:>9,.0f} {_fmt(lo['estimate']):>9} "
        f"{'[' + _fmt(lo['low']) + ', ' + _fmt(lo['high']) + ']':>22}  ({lo['interval']})",
    ]
    for method in result.methods:
        what = "kept" if method == "replay" else "ESS"
        title = METHOD_TITLES[method]
        if method == "replay" and not result.log.uniform:
            title += " (BIASED here: the logging is not uniform)"
        out += ["", f"{title}; 95% interval: {INTERVALS[method]}"]
        head = f"{'policy':<{width}} {what:>9} {'estimate':>9} {'95% interval':>22}"
        if method in ("ips", "snips", "dr"):
            head += f" {'ESS draw':>9}"
        out.append(head + f" {'± seeds':>8}")
        for r in (r for r in rows if r["method"] == method):
            line = (
                f"{r['policy']:<{width}} {r['events']:>9,.0f} {_fmt(r['estimate']):>9} "
                f"{'[' + _fmt(r['low']) + ', ' + _fmt(r['high']) + ']':>22}"
            )
            if r["ess_draw"] is not None:
                line += f" {r['ess_draw']:>9,.0f}"
            out.append(line + f" {r['ci_seeds']:>8.4f}")
    out += [
        "",
        f"{result.n_seeds} replay seeds in {result.seconds:.1f} s. ESS: (Σw)²/Σw², w = "
        f"π(a|x)/p; ESS draw: the same with the realised draw in place of π; ± seeds: "
        f"Student's t over the replay seeds (the policies' own draws on this log).",
    ]
    reasons = result.sparsity()
    if reasons:
        out.append(
            f"TOO SPARSE to decide anything (fewer than {MIN_EVENTS} kept events or ESS, "
            f"or all intervals overlap):"
        )
        out += [f"  - {r}" for r in reasons]
        out.append(f"  - {result.decision_text(result.best_method())}")
    return "\n".join(out)


__all__ = ["log_line", "json_report", "text_report"]
