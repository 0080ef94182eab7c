"""Command line: ``python -m allseason run|patterns|policies``.

Bad flags or files get one clear line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from . import api, files, sweeps
from .limits import LIMITS, MAX_INPUT_BYTES
from .stats import t_quantile

MAX_FILE_BYTES = MAX_INPUT_BYTES  # a scenario file, as an upload


class CliError(Exception):
    """A user error: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, exit 2
        raise CliError(message)


def _scenario(args) -> api.Scenario:
    """The scenario of a file (.json or .csv) or of a preset's flags, through the one entry
    point ``api.parse_scenario``; --d, --arms, ... fill in what a file leaves out."""
    common = dict(
        d=args.d, n_arms=args.arms, sigma2=args.sigma2, seed=args.seed, batch_size=args.batch_size
    )
    common = {k: v for k, v in common.items() if v is not None}
    name = args.pattern
    if name.lower().endswith((".json", ".csv")):
        path = files.regular_input(name, "--pattern", MAX_FILE_BYTES)
        try:
            return api.parse_scenario(path.read_bytes(), api.file_kind(name), defaults=common)
        except api.SpecError as e:
            raise CliError(f"--pattern {name!r}: {e}") from None
    if name not in api.PRESETS:
        raise CliError(
            f"--pattern: unknown pattern {name!r}; known: {', '.join(api.PRESETS)}"
            " or a FILE.json / FILE.csv"
        )
    flags = {"preset": name, **common}
    if args.states is not None:
        flags["n_states"] = args.states
    if args.horizon is not None:
        flags["horizon"] = args.horizon
    return api.parse_scenario(flags, "query")


def _batch_size(text: str):
    """'10' -> 10; '5,10,20' -> (5, 10, 20) (inhomogeneous batches, repeated in turn)."""
    parts = [p for p in text.split(",") if p.strip()]
    try:
        sizes = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer or a comma-separated list of integers, got {text!r}"
        ) from None
    if not sizes:
        raise argparse.ArgumentTypeError("must not be empty")
    return sizes[0] if len(sizes) == 1 else sizes


def cmd_run(args) -> int:
    if args.trace:  # a FIFO or a device would hang or fill; only a regular file is written
        files.regular_output(args.trace, "--trace")
    scenario = _scenario(args)
    flags = dict(
        tau=args.tau,
        gamma=args.gamma,
        n_max=args.n_max,
        lam=args.lam,
        weighting=args.weighting,
        share=args.share,
        spawn=args.spawn,
    )
    flags = {k: v for k, v in flags.items() if v is not None}
    names = [n.strip() for n in args.policies.split(",") if n.strip()]
    specs = []
    for name in names:  # the default race's values, then the flags the policy takes
        taken = set(api.hyperparameters(name)) if name in api.policy_names() else set()
        specs.append(
            api.PolicySpec(
                name, {**api.default_params(name), **{k: v for k, v in flags.items() if k in taken}}
            )
        )
    race = api.Race(scenario, api.policy_specs(specs), args.seeds)
    # numba's one-time load of the compiled kernels (about 0.5 s in a fresh process) would
    # otherwise be counted in the first policy's seconds: pay it before timing, report apart
    warm = api.warm_up()
    t0 = time.perf_counter()
    last = 0.0
    result = None
    for progress in api.iter_race(race):
        result = progress.result
        if not args.json and sys.stderr.isatty() and time.perf_counter() - last > 0.2:
            last = time.perf_counter()
            print(
                f"\r{progress.fraction:6.1%} of {race.n_seeds} x {scenario.horizon} steps",
                end="",
                file=sys.stderr,
            )
    if not args.json and sys.stderr.isatty():
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    summary = result.summary()
    _check_finite(summary)
    pattern = scenario.pattern
    for label, s in summary.items():  # ensembles: how many bandits, how decided
        traces = [result.traces[label, k] for k in range(race.n_seeds)]
        if traces[0].batch_weights() is not None:
            ens = [api.ensemble_summary(t, pattern) for t in traces]
            s["bandits_created_max"] = max(e["bandits_created"] for e in ens)
            s["top_share_mean"] = float(sum(e["top_share"] for e in ens) / len(ens))
    if args.trace:
        result.to_frames()["steps"].to_csv(args.trace, index=False)
    if args.json:  # a share of the gap with no meaning (NaN) is null, so the JSON is strict
        print(
            json.dumps(
                {
                    label: {
                        k: (None if isinstance(v, float) and math.isnan(v) else v)
                        for k, v in s.items()
                    }
                    for label, s in summary.items()
                },
                indent=2,
            )
        )
        return 0
    print(
        f"pattern {scenario.preset} | T={scenario.horizon} d={scenario.d} K={scenario.n_arms}"
        f" sigma2={scenario.sigma2} batch={scenario.batch_size} seeds={race.n_seeds}"
        f" seed={scenario.seed} | {time.perf_counter() - t0:.2f} s"
    )
    width = max(16, *(len(label) for label in summary))
    print(
        f"{'policy':<{width}} {'mean reward':>11} {'std':>7} {'95% (t)':>8} "
        f"{'cum. regret':>12} {'gap closed':>10} {'seconds':>8} {'bandits':>8} "
        f"{'top>0.9':>8}"
    )
    refs = set(result.references())  # the oracles: ranked apart, below the contestants
    ranked = sorted(summary.items(), key=lambda kv: -kv[1]["mean_reward"])
    first_ref = True
    for label, s in [kv for kv in ranked if kv[0] not in refs] + [
        kv for kv in ranked if kv[0] in refs
    ]:
        if label in refs and first_ref:
            first_ref = False
            print("-- references: oracle (knows the seasons), ranked apart " + "-" * 20)
        ens = (
            f" {s['bandits_created_max']:>8} {s['top_share_mean']:>8.1%}"
            if "bandits_created_max" in s
            else ""
        )
        ci = f"±{s['ci95']:.4f}" if race.n_seeds > 1 else "—"
        gap = "—" if math.isnan(s["gap_closed"]) else f"{s['gap_closed']:.1%}"
        print(
            f"{label:<{width}} {s['mean_reward']:>11.4f} {s['std_reward']:>7.4f} {ci:>8} "
            f"{s['cum_regret']:>12.1f} {gap:>10} {s['seconds']:>8.3f}{ens}"
        )
    print(f"compiled kernels loaded in {warm:.2f} s (not counted above)")
    if race.n_seeds > 1:
        print(
            f"95% (t): Student's t interval over {race.n_seeds} seeds, ± "
            f"{t_quantile(race.n_seeds):.3f} x std / sqrt({race.n_seeds})"
        )
    else:
        print("one seed: no std and no 95% interval (reported as 0 in --json)")
    if refs:
        print(
            "gap closed: (mean reward - best baseline's) / (oracle-state's - best baseline's);"
            " baselines: neither All-Season nor an oracle"
        )
    if any("bandits_created_max" in s for s in summary.values()):
        print(
            "bandits: most base bandits created in one run; top>0.9: share of batches "
            "whose top weight exceeds 0.9 (mean over seeds)"
        )
    if args.trace:
        print(f"trace written to {args.trace}")
    return 0


def _check_finite(summary: dict) -> None:
    """A race whose rewards or regret are not finite numbers is an error naming the policy
    and the number, never a NaN table with exit code 0."""
    for label, s in summary.items():
        for key in ("mean_reward", "std_reward", "cum_regret"):
            value = s.get(key)
            if isinstance(value, float) and not math.isfinite(value):
                raise CliError(
                    f"{label}: its {key} is {value} (the rewards or the policy's arithmetic "
                    f"overflowed on this scenario); no result is printed"
                )


def _bounded_int(lo: int, hi: int):
    """An argparse type: an integer from lo to hi (argparse names the flag)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text[:40]!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {lo:,} to {hi:,}, got {text[:40]}"
            )
        return value

    return parse


SEED_TYPE = _bounded_int(0, 2**63 - 1)


def cmd_patterns(args) -> int:
    for name in api.PRESETS:
        p = api.preset(name)
        print(
            f"{name:<16} T={p.horizon:<6} states={p.n_states} segments={len(p.segments)}: "
            + " ".join(f"{s}x{n}" for s, n in p.segments[:10])
            + (" ..." if len(p.segments) > 10 else "")
        )
    print(
        'custom           --pattern FILE.json: {"segments": [[state, length], ...]} '
        "(or a bare list of segments), or FILE.csv: a header state,length, one row "
        "per segment"
    )
    return 0


def cmd_policies(args) -> int:
    for name in api.policy_names():
        info = api.describe_policy(name)
        note = " Deterministic: the seed changes nothing." if info.deterministic else ""
        print(f"{name:<20} {info.title}: {info.help}.{note}")
        for k, p in info.params.items():
            print(f"  {f'{k}={p.default!r}':<22} {p.describe()}. {p.help}")
    return 0


def _read_user_path(name: str, max_bytes: int) -> bytes:
    """The bytes of a user's file: a regular file only (a FIFO or a device is refused
    unread), size checked before reading; one CliError otherwise."""
    from .logs import reader

    try:
        return reader.read_path(name, max_bytes)
    except api.SpecError as e:
        raise CliError(e.message) from None


def _out_path(name: str) -> Path:
    """Where --out writes: a bare file name inside the results folder (never elsewhere)."""
    if (
        not name
        or Path(name).name != name
        or name in (".", "..")
        or not name.lower().endswith(".csv")
    ):
        raise CliError(
            f"--out: must be a file name ending in .csv, without a folder (it is "
            f"written to {sweeps.results_root() / 'replay'}), got {name!r}"
        )
    return sweeps.results_root() / "replay" / name


def cmd_replay(args) -> int:
    from .logs import offline

    out_path = _out_path(args.out) if args.out else None
    limits = offline.LOG_LIMITS
    raw = _read_user_path(args.file, limits["bytes"])
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
    if out_path is not None:
        out_path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(out_path, index=False)
        print(f"results written to {out_path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _replay_log(log, args):
    from .logs import report

    out = sys.stderr if args.json else sys.stdout  # --json: only the JSON on stdout
    print(report.log_line(log), file=out)
    api.warm_up()

    def progress(done, total):
        if sys.stderr.isatty():
            print(f"\r{done}/{total} replays", end="", file=sys.stderr)

    executor = dict(processes=args.processes or True)
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
    names = args.policies or ",".join(OFFLINE_TABLE_POLICIES)
    specs = api.offline_specs(
        [n for n in names.split(",") if n.strip() and not n.strip().startswith("oracle")]
    ) + api.default_specs(
        tuple(n.strip() for n in names.split(",") if n.strip().startswith("oracle"))
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m allseason",
        description="All-Season bandit: seasonal linear bandit experiments.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    words = api.race_in_words()  # the default race's numbers, never typed
    run = sub.add_parser(
        "run",
        help="race policies on a seasonal pattern, print a leaderboard",
        description="Race policies on a seasonal pattern and print a leaderboard. With no "
        f"flags, the default race: the paper's synthetic experiment ({words['scenario']}), "
        f"{words['contestants']}, {words['seeds']}.",
    )
    run.add_argument(
        "--pattern",
        default="paper-synthetic",
        help="a preset (see `patterns`), FILE.json or FILE.csv (default: paper-synthetic)",
    )
    run.add_argument(
        "--policies",
        default=",".join(api.DEFAULT_POLICIES),
        help="comma-separated policy names (see `policies`)",
    )
    run.add_argument(
        "--seeds",
        type=int,
        default=api.DEFAULT_SEEDS,
        help=f"number of independent seeds ({api.DEFAULT_SEEDS})",
    )
    run.add_argument("--seed", type=SEED_TYPE, default=None, help="root random seed (0)")
    run.add_argument("--horizon", type=int, default=None, help="steps T (preset's default)")
    run.add_argument(
        "--states",
        type=int,
        default=None,
        help="distinct states of a preset (3; seattle-weather: its 4 regimes)",
    )
    run.add_argument(
        "--batch-size",
        type=_batch_size,
        default=None,
        help="B, or a list like 5,10,20 for inhomogeneous batches (1)",
    )
    run.add_argument("--d", type=int, default=None, help="dimension d (5)")
    run.add_argument("--arms", type=int, default=None, help="arms per step K (5)")
    run.add_argument("--sigma2", type=float, default=None, help="reward noise variance (0.1)")
    run.add_argument(
        "--tau",
        type=int,
        default=None,
        help="window of SW-LinTS and of All-Season's shadow (default race: "
        "All-Season 10, SW-LinTS tuned)",
    )
    run.add_argument(
        "--gamma",
        type=float,
        default=None,
        help="discount of D-LinTS and All-Season (Disc) (default race: "
        "All-Season 0.9, D-LinTS tuned)",
    )
    run.add_argument(
        "--n-max", type=int, default=None, help="All-Season's maximum number of base bandits (5)"
    )
    run.add_argument("--lam", type=float, default=None, help="prior precision lambda (1)")
    run.add_argument(
        "--weighting",
        choices=["fixed-share", "batch"],
        default=None,
        help="All-Season weights: 'fixed-share' (carried, the default) or "
        "'batch' (the paper's printed rule)",
    )
    run.add_argument("--share", type=float, default=None, help="fixed-share alpha (1e-4)")
    run.add_argument(
        "--spawn",
        choices=["handover", "copy"],
        default=None,
        help="how a newborn base bandit starts under fixed share: 'handover' (takes "
        "the shadow's weight, not pruned before it plays) or 'copy'",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per policy (ci95: half-width of the 95%% "
        "Student's t interval over seeds; 0 with one seed)",
    )
    run.add_argument("--trace", metavar="FILE.csv", help="write the per-step trace as CSV")
    run.set_defaults(func=cmd_run)
    pat = sub.add_parser("patterns", help="list the preset season patterns")
    pat.set_defaults(func=cmd_patterns)
    pol = sub.add_parser("policies", help="list the policies and their hyperparameters")
    pol.set_defaults(func=cmd_policies)
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
    rep.add_argument(
        "--steps",
        type=_bounded_int(1, LIMITS["horizon"]),
        default=10,
        help="table: customers (steps) per period (10)",
    )
    rep.add_argument(
        "--json",
        action="store_true",
        help="log: print the results as one JSON document on stdout (everything else on stderr)",
    )
    rep.add_argument(
        "--processes", type=int, default=None, help="log: local worker processes (every core)"
    )
    rep.add_argument(
        "--workers",
        type=int,
        default=None,
        help="log: a Dask LocalCluster of N single-threaded workers (as `sweep`)",
    )
    rep.add_argument(
        "--scheduler",
        default=None,
        help="log: a running Dask scheduler, e.g. tcp://host:8786 (as `sweep`)",
    )
    rep.add_argument(
        "--out",
        metavar="NAME.csv",
        default=None,
        help="also write the results table to RESULTS/replay/NAME.csv",
    )
    rep.set_defaults(func=cmd_replay)
    sub.add_parser("sweep", help="run a sweep file (TOML/JSON): grids x seeds, resumable")
    sub.add_parser("report", help="best settings and an HTML plot of a sweep's results")
    sub.add_parser("paper", help="reproduce the paper's real-data tables (MNIST, Fashion-MNIST)")
    sub.add_parser("map", help="a map of where All-Season wins (grid x tuned contests), resumable")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["sweep"], ["report"]):  # their own parsers: allseason/sweeps/cli.py
        return getattr(sweeps, f"cli_{argv[0]}")(argv[1:])
    if argv[:1] == ["map"]:  # its own parser: allseason/worldmap/cli.py
        from .worldmap import cli as map_cli

        return map_cli.cli_map(argv[1:])
    if argv[:1] == ["paper"]:  # its own parser: allseason/paper/cli.py
        from .paper import cli as paper_cli

        return paper_cli.cli(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (CliError, api.SpecError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. --trace into a read-only folder
        print(f"error: {e}", file=sys.stderr)
        return 2
