"""Fuzz the doors a visitor or a user can knock on (issue 27): links, uploads and CLI flags.

A seeded generator builds hostile values -- numbers with thousands of digits, 1e-320, NaN,
10^12, negative seeds, Markdown links, remote images and math, HTML, NUL bytes, paths, deep
nesting, long text -- and sends each through the function the app or the CLI calls:

- links: ``ui.state.scenario_from_query`` and ``ui.state.race_from_query`` (every scenario,
  race and hyperparameter parameter), each message then escaped by ``viz.text.md``;
- uploads: ``api.parse_scenario`` (JSON and CSV scenario files), ``api.Race.from_dict``
  (race files), ``api.read_user_file`` (Your data CSVs: column names, cells);
- CLI flags: ``python -m allseason run`` (in-process, tiny races) and ``sweep --dry-run``.

Each input ends as: refused with a message (a SpecError, a link message, exit code 2 with
one line), accepted, or a traceback (any other exception; the goal is 0). Also counted: a
message that, once escaped, would still render a link, an image or math (the goal is 0).

    python benchmarks/fuzz_inputs.py --n 2000 --seed 0
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

RENDERED = re.compile(
    r"(?<!\\)\]\([^)]*(?:evil|127\.0\.0\.1)|https?://(?:evil|127)|(?<!\\)<https?|(?<!\\)\$x"
)
PAYLOADS = [
    "[Session expired](https://evil.example/login)",
    "![x](http://127.0.0.1:9/q.png)",
    "$x^{2}$",
    "<img src=x onerror=alert(1)>",
    "<https://evil.example>",
    "www.evil.example",
    "a@evil.example",
    "**bold** _it_ `code`",
    ":red[alert] :material/home:",
    "# heading\n- item",
    "=cmd|' /C calc'!A0",
    "../../etc/passwd",
    "\x00\x01\x7f",
    "é" * 50,
]
NUMBERS = [
    "0", "-1", "1", "2", "5", "10", "100", "101", "1000000", "30000", "200000", "200001",
    "1e-320", "5e-324", "1e-300", "1e308", "1e400", "-1e308", "nan", "NaN", "inf", "-inf",
    "10^12", "1000000000000", "9" * 5000, "0x10", "1_000", " 7 ", "", "٣", "1.5", "0.0",
    "-0", "1e-6", "1e6", "1e-7", "0.999999", "1.0000001", "2**63", str(2**63), str(2**63 - 1),
]  # fmt: skip


GOOD = ["1", "2", "3", "5", "10", "20", "0.1", "0.5", "0.9", "1.0", "50", "100", "0"]


def value(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.35:
        return rng.choice(GOOD)
    if pick < 0.6:
        return rng.choice(NUMBERS)
    if pick < 0.8:
        return rng.choice(PAYLOADS)
    if pick < 0.9:
        return "x" * rng.choice([1, 100, 10_000, 1_100_000])
    return "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(1, 30)))


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


class Tally:
    def __init__(self):
        self.counts: Counter = Counter()
        self.tracebacks: list[str] = []
        self.rendered: list[str] = []

    def messages(self, door: str, messages) -> None:
        from allseason.viz.text import md

        for m in messages:
            if RENDERED.search(md(m)):
                self.rendered.append(f"{door}: {m[:120]!r}")

    def run(self, door: str, fn) -> None:
        """fn() returns ('refused', messages) or ('accepted', messages)."""
        self.counts[door, "inputs"] += 1
        try:
            outcome, messages = fn()
        except Exception:
            self.counts[door, "traceback"] += 1
            self.tracebacks.append(f"{door}: {traceback.format_exc(limit=3)[-600:]}")
            return
        self.counts[door, outcome] += 1
        self.messages(door, messages)


def spec_error(fn):
    from allseason import api

    try:
        fn()
    except api.SpecError as e:
        return "refused", [str(e)]
    return "accepted", []


# --- the doors ------------------------------------------------------------------------------
def link_scenario(rng):
    from allseason.links import QUERY_FIELDS
    from allseason.ui import state

    good = {"preset": "regular", "segments": "0x300_1x200", "horizon": "2000", "n_states": "3"}
    good.update(d="3", n_arms="4", sigma2="0.2", batch_size="5", seed="7")
    keys = rng.sample(QUERY_FIELDS, rng.randint(1, 4))
    query = {k: good[k] if rng.random() < 0.6 else value(rng) for k in keys}
    if rng.random() < 0.2:
        query[value(rng)] = value(rng)
    _, messages = state.scenario_from_query(query)
    return ("refused" if messages else "accepted"), messages


def link_race(rng):
    from allseason import api
    from allseason.ui import state

    names = api.policy_names()
    query = {}
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(names)
        params = list(api.hyperparameters(name)) + [value(rng)]
        param = rng.choice(params)
        default = api.hyperparameters(name).get(param)
        good = rng.random() < 0.5 and isinstance(default, (int, float)) and default is not None
        query[f"{name}.{param}"] = str(default) if good else value(rng)
    if rng.random() < 0.3:
        query["policies"] = ",".join(rng.sample(names, rng.randint(1, 4)))
    if rng.random() < 0.3:
        query["n_seeds"] = value(rng)
    _, messages = state.race_from_query(query)
    return ("refused" if messages else "accepted"), messages


def upload_json(rng):
    from allseason import api

    fields = ["segments", "d", "n_arms", "sigma2", "batch_size", "seed", "preset", value(rng)]
    good = {"segments": [[0, 300]], "d": 3, "n_arms": 4, "sigma2": 0.2, "batch_size": 5}
    good.update(seed=1, preset="custom")
    keys = rng.sample(fields, rng.randint(1, 4))
    doc = {k: good[k] if k in good and rng.random() < 0.6 else value(rng) for k in keys}
    if rng.random() < 0.3:
        doc["segments"] = [[rng.randint(-2, 60), rng.choice([-1, 0, 5, 300, 10**6])]]
    text = json.dumps(doc) if rng.random() < 0.9 else nested(rng.choice([100, 10_000, 400_000]))
    return spec_error(lambda: api.parse_scenario(text.encode("utf-8", "surrogatepass"), "json"))


def upload_csv(rng):
    from allseason import api

    head = rng.choice(["state,length", "length,state", value(rng), "state;length", "state,length"])
    cell = lambda: str(rng.randint(0, 3)) if rng.random() < 0.7 else value(rng)  # noqa: E731
    rows = "\n".join(f"{cell()},{cell()}" for _ in range(rng.randint(0, 3)))
    text = f"{head}\n{rows}\n"
    return spec_error(lambda: api.parse_scenario(text.encode("utf-8", "surrogatepass"), "csv"))


def upload_race(rng):
    from allseason import api

    names = list(api.policy_names())
    pol = []
    for _ in range(rng.choice([1, 2, 3, 12, 13])):
        name = rng.choice(names + [value(rng)])
        params = {}
        if name in names and rng.random() < 0.7:
            hp = list(api.hyperparameters(name))
            params = {rng.choice(hp + [value(rng)]): value(rng)}
        pol.append({"name": name, "params": params, "label": rng.choice([name, name, value(rng)])})
    seeds = rng.choice([1, 2, value(rng)])
    doc = {"scenario": {"segments": [[0, 100]]}, "policies": pol, "n_seeds": seeds}
    return spec_error(lambda: api.Race.from_dict(json.loads(json.dumps(doc))))


def upload_yourdata(rng):
    from allseason import api

    cols = ["timestamp", "arm", "reward"]
    if rng.random() < 0.5:
        cols.append(value(rng).replace(",", ";").replace("\n", " ") or "x")
    rows = []
    for i in range(rng.randint(1, 40)):
        cells = [str(i + 1), f"a{rng.randint(0, 2)}", str(rng.randint(0, 1))]
        cells += ["0.5"] * (len(cols) - 3)
        if rng.random() < 0.1:
            cells[rng.randrange(len(cells))] = value(rng).replace(",", ";").replace("\n", " ")
        rows.append(",".join(cells))
    text = ",".join(cols) + "\n" + "\n".join(rows) + "\n"
    return spec_error(lambda: api.read_user_file(text.encode("utf-8", "surrogatepass")))


def _cli(argv) -> tuple[str, list[str]]:
    from allseason.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    text = err.getvalue()
    if code == 2:
        if text.count("\n") != 1 or not text.startswith("error: "):
            raise AssertionError(f"exit 2 without one line: {text[:300]!r}")
        return "refused", [text]
    if code != 0:
        raise AssertionError(f"exit code {code}: {text[:300]!r}")
    if "nan" in out.getvalue().lower().split():
        raise AssertionError("NaN printed with exit code 0")
    return "accepted", []


def cli_run(rng):
    flags = ["--tau", "--gamma", "--n-max", "--lam", "--share", "--sigma2", "--seed", "--d"]
    flags += ["--arms", "--batch-size", "--states", "--horizon", "--seeds"]
    argv = ["run", "--horizon", "60", "--seeds", "1", "--policies", "allseason-sw,d-lints,bob"]
    for flag in rng.sample(flags, rng.randint(1, 3)):
        v = value(rng)
        if flag in ("--horizon", "--seeds") and v.strip().lstrip("-").isdigit() and len(v) < 7:
            v = str(min(abs(int(v)), 400) or v)  # keep the accepted races tiny
        argv += [flag, v]
    return _cli(argv)


def cli_sweep(rng, folder: Path):
    from allseason.cli.sweep import cli_sweep

    pick = lambda good: good if rng.random() < 0.6 else value(rng)  # noqa: E731
    doc = {
        "name": pick("grid"),
        "seeds": pick(2),
        "scenario": {"horizon": pick(300)},
        "policies": [{"name": "allseason-sw", "grid": {"n_max": [pick(5)], "tau": [pick(10)]}}],
    }
    path = folder / f"s{rng.randint(0, 10**9)}.json"
    path.write_text(json.dumps(doc) if rng.random() < 0.9 else nested(400_000))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli_sweep([str(path), "--dry-run"])
    if code == 2:
        return "refused", [err.getvalue()]
    if code != 0:
        raise AssertionError(f"sweep exit code {code}")
    return "accepted", []


DOORS = {  # door: share of the inputs
    "link: scenario": 0.2,
    "link: race": 0.2,
    "upload: scenario JSON": 0.12,
    "upload: scenario CSV": 0.1,
    "upload: race file": 0.1,
    "upload: Your data CSV": 0.1,
    "CLI: run flags": 0.13,
    "CLI: sweep file": 0.05,
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="inputs in all (2000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    tally = Tally()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ALLSEASON_RESULTS"] = str(Path(tmp) / "results")
        fns = {
            "link: scenario": link_scenario,
            "link: race": link_race,
            "upload: scenario JSON": upload_json,
            "upload: scenario CSV": upload_csv,
            "upload: race file": upload_race,
            "upload: Your data CSV": upload_yourdata,
            "CLI: run flags": cli_run,
            "CLI: sweep file": lambda r: cli_sweep(r, Path(tmp)),
        }
        for door, share in DOORS.items():
            for _ in range(round(args.n * share)):
                tally.run(door, lambda door=door: fns[door](rng))
        outside = [p for p in Path(tmp).iterdir() if p.name != "results" and p.suffix != ".json"]
    seconds = time.perf_counter() - t0
    total = Counter()
    print(f"{'door':<24} {'inputs':>7} {'refused':>8} {'accepted':>9} {'traceback':>10}")
    for door in DOORS:
        c = {k: tally.counts[door, k] for k in ("inputs", "refused", "accepted", "traceback")}
        total.update(c)
        print(
            f"{door:<24} {c['inputs']:>7} {c['refused']:>8} {c['accepted']:>9} {c['traceback']:>10}"
        )
    print(
        f"{'all':<24} {total['inputs']:>7} {total['refused']:>8} {total['accepted']:>9} "
        f"{total['traceback']:>10}"
    )
    print(
        f"messages that would still render a link, image or math: {len(tally.rendered)}; "
        f"files written outside the results folder: {len(outside)}; {seconds:.0f} s "
        f"(seed {args.seed})"
    )
    for line in (tally.tracebacks + tally.rendered)[:10]:
        print("---", line, file=sys.stderr)
    return 1 if tally.tracebacks or tally.rendered or outside else 0


if __name__ == "__main__":
    sys.exit(main())
