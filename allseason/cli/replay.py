"""``python -m allseason replay FILE``: your data. A logged-bandit CSV evaluated offline, or a
reward table the policies race on."""

from __future__ import annotations

import json
import math
import sys
import time

from .. import api, files, sweeps
from ..limits import LIMITS
from ..sweeps.flags import add_executor_flags, executor_from_args
from .common import (
    SEED_TYPE,
    CliError,
    bounded_int,
    out_path,
    read_user_path,
    write_output,
)


def add_parser(sub) -> None:
    """The ``replay`` subcommand."""
    rep = sub.add_parser(
        "replay",
        help="your data: evaluate the policies offline on a "
        "logged-bandit CSV, or race them on a reward table",
    )
    rep.add_argument(
        "file",
        metavar="FILE",
        help="a CSV: a log (timestamp, arm, reward "
        "[, propensity, x0, x1, ...]) or a reward table (time, arm, reward)",
    )
    rep.add_argument(
        "--kind",
        choices=["log", "table"],
        default=None,
        help="the file's kind (default: a 'timestamp' column makes a log, 'time' a table)",
    )
    rep.add_argument(
        "--seeds",
        type=int,
        default=api.DEFAULT_SEEDS,
        help=f"replay seeds (races on a table: seeds) ({api.DEFAULT_SEEDS})",
    )
    rep.add_argument("--seed", type=SEED_TYPE, default=0, help="root random seed (0)")
    rep.add_argument(
        "--policies",
        default=None,
        help="comma-separated policy names (default: "
        + ",".join(api.OFFLINE_POLICIES)
        + "; on a table the oracles too)",
    )
    _reading_flags(rep)
    rep.add_argument(
        "--steps",
        type=bounded_int(1, LIMITS["horizon"]),
        default=10,
        help="table: customers (steps) per period (10)",
    )
    rep.add_argument(
        "--json",
        action="store_true",
        help="log: print the results as one JSON document on stdout (everything else on stderr)",
    )
    add_executor_flags(rep)
    rep.add_argument(
        "--out",
        metavar="NAME.csv",
        default=None,
        help="also write the results table to RESULTS/replay/NAME.csv",
    )
    rep.set_defaults(func=cmd_replay)


def _reading_flags(rep) -> None:
    """How the file is read: its context columns, its arms, the rewards' scale."""
    rep.add_argument(
        "--context",
        default=None,
        help="log: comma-separated numeric context columns (default: x0, x1, ...)",
    )
    rep.add_argument(
        "--arms",
        default=None,
        help="the arms: a number N (0..N-1) or comma-separated labels; any other "
        "arm in the file is an error (default: every arm in a log; a "
        "table's earliest period)",
    )
    rep.add_argument(
        "--scale",
        choices=["max", "minmax"],
        default=None,
        help="rescale rewards into [0, 1]: divide by the largest, or min-max "
        "(default: none, a reward outside [0, 1] is an error)",
    )


def cmd_replay(args) -> int:
    """``replay FILE``: the log's table of estimates; the exit code."""
    from ..logs import offline

    target = out_path(args.out) if args.out else None
    limits = offline.LOG_LIMITS
    raw = read_user_path(args.file, limits["bytes"])
    options = dict(arms=args.arms, scale=args.scale)
    if args.context is not None:
        options["context"] = args.context
    try:
        data = api.read_user_file(raw, args.kind, **options)
    except api.SpecError as e:
        msg = e.message if e.message.startswith(("row ", "column ")) else str(e)
        raise CliError(f"{args.file}: {msg}") from None
    if isinstance(data, api.RewardTable):
        frame = _replay_table(data, args)
    else:
        frame = _replay_log(data, args)
    if target is not None:
        kept = "the results above are complete; nothing was written (no partial file)"
        text = frame.to_csv(index=False)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CliError(
                files.disk_message(e, target.parent, len(text), kept) or f"--out: {e}"
            ) from None
        write_output(target, text, "--out", kept)
        print(f"results written to {target}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _replay_log(log, args):
    from ..logs import report

    out = sys.stderr if args.json else sys.stdout  # --json: only the JSON on stdout
    print(report.log_line(log), file=out)
    api.warm_up()

    def progress(done, total):
        if sys.stderr.isatty():
            print(f"\r{done}/{total} replays", end="", file=sys.stderr)

    try:
        flags = executor_from_args(args)
    except ValueError as e:
        raise CliError(str(e)) from None
    executor = dict(processes=flags["processes"] or True)
    if args.workers is not None or args.scheduler is not None:
        executor = dict(dask_workers=args.workers, scheduler=args.scheduler)
    try:
        result = api.evaluate(
            log,
            api.offline_specs(args.policies),
            args.seeds,
            args.seed,
            progress=progress,
            **executor,
        )
    except sweeps.SweepError as e:
        raise CliError(str(e)) from None
    if sys.stderr.isatty():
        print("\r" + " " * 30 + "\r", end="", file=sys.stderr)
    if args.json:
        print(json.dumps(report.json_report(result), indent=2, allow_nan=False))
    else:
        print(report.text_report(result))
    return result.frame()


def _replay_table(table, args):
    import pandas as pd

    steps = args.steps
    scenario = table.scenario(steps=steps, seed=args.seed)
    names = [n.strip() for n in (args.policies or ",".join(OFFLINE_TABLE_POLICIES)).split(",")]
    oracles = tuple(n for n in names if n in api.policy_names() and api.role(n).oracle)
    specs = api.offline_specs([n for n in names if n and n not in oracles]) + api.default_specs(
        oracles
    )
    race = api.Race(scenario, specs, args.seeds)
    print(
        f"reward table: {table.n_periods:,} periods x {table.n_arms} arms "
        f"({', '.join(table.arm_names)}), {steps} customers a period = "
        f"{scenario.horizon:,} steps; seasons = the best arm of each period "
        f"({len(scenario.segments)} runs)"
    )
    api.warm_up()
    t0 = time.perf_counter()
    result = api.run_race(race, world=table)
    summary = result.summary()
    refs = set(result.references())
    print(
        f"{'policy':<16} {'mean reward':>11} {'95% (t)':>8} {'cum. regret':>12} {'gap closed':>10}"
    )
    ranked = sorted(summary.items(), key=lambda kv: (kv[0] in refs, -kv[1]["mean_reward"]))
    for label, s in ranked:
        gap = "—" if math.isnan(s["gap_closed"]) else f"{s['gap_closed']:.1%}"
        ci = f"±{s['ci95']:.4f}"
        print(f"{label:<16} {s['mean_reward']:>11.4f} {ci:>8} {s['cum_regret']:>12.1f} {gap:>10}")
    print(
        f"{args.seeds} seeds in {time.perf_counter() - t0:.1f} s; the oracles know the "
        f"derived seasons (best arm of each period)"
    )
    label = next((s.label for s in specs if api.role(s.name).family == "allseason"), None)
    dates = api.step_dates(scenario, world=table)
    if label is not None and dates is not None:
        table_sy = api.season_year_table(
            result.traces[label, 0], dates, api.state_names(scenario, world=table)
        )
        print(
            f"\nwhich bandit {label} (seed 0) used when: the bandit most often on top in "
            f"each season of each year"
        )
        print(table_sy.to_string(index=False))
    return pd.DataFrame([{"policy": k, **v} for k, v in summary.items()])


OFFLINE_TABLE_POLICIES = (
    "allseason-sw",
    "allseason-disc",
    "lints",
    "sw-lints",
    "d-lints",
    "random",
    "oracle-state",
    "oracle-restart",
)
