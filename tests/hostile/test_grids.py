"""Hostile grid files for ``python -m allseason map --grid FILE`` (issue 33, item 3): a grid
is checked whole before anything runs, and every bad one gets one line, exit code 2.

A seeded generator mutates a valid grid (wrong types, huge and negative levels, NaN, unknown
fields, missing fields, deep nesting, other encodings, binary bytes, a file too large) into
at least 200 files, each run in-process through the CLI's ``main`` with ``--dry-run``
(the check is the one a real run makes first), with tracemalloc's peak under 1 GB; a sample
runs in subprocesses without ``--dry-run`` and their peak RSS is read from ``wait4``."""

import json
import math
import os
import subprocess
import sys
import tracemalloc
import types
from pathlib import Path

import numpy as np
import pytest

from allseason.cli import main
from allseason.worldmap.grid import MapGrid

ROOT = Path(__file__).resolve().parents[2]
N_GRIDS = 240
GB = 1 << 30

BASE = {
    "name": "fuzz",
    "x": {"knob": "season_length", "values": [20, 40]},
    "y": {"knob": "sigma2", "values": [0.03, 0.3]},
    "fixed": {"n_states": 2, "returns": 1, "n_arms": 5, "d": 5, "batch_size": 1},
}
HOSTILE = [
    True,
    False,
    -1,
    0,
    10**30,
    10**18,
    1e308,
    -1e308,
    math.nan,
    math.inf,
    -math.inf,
    0.5,
    "abc",
    "",
    "‮evil",
    [],
    [[1], [2]],
    [1, "a"],
    {},
    {"a": 1},
    {"knob": "d"},
    list(range(1, 2000)),
    [100_000_000, 200_000_000],
    [5, 3, 1],
    [1, 1],
    "n_states",
    "../../etc/passwd",
    "x" * 5000,
]
KNOB_NAMES = ["season_length", "n_states", "returns", "n_arms", "d", "sigma2", "batch_size"]


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return (
            "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + "}"
        )
    return "null"  # not TOML: a parse error, which is hostile too


def _toml(data) -> str:
    if not isinstance(data, dict):
        return "grid = " + _toml_value(data) + "\n"
    return "".join(f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in data.items())


def _mutate(rng, grid):
    """One structural mutation of a grid dict (in place, or a new top level)."""
    pick = lambda seq: seq[int(rng.integers(len(seq)))]  # noqa: E731
    kind = int(rng.integers(12))
    axis = pick(["x", "y", "page"])
    if kind == 0:
        grid.setdefault(axis, {})["knob"] = pick(HOSTILE + KNOB_NAMES)
    elif kind == 1:
        grid.setdefault(axis, {"knob": pick(KNOB_NAMES)})["values"] = pick(HOSTILE)
    elif kind == 2:  # a knob with levels from another knob's range, or hostile levels
        grid[axis] = {"knob": pick(KNOB_NAMES), "values": pick(HOSTILE + [[1, 2], [0.1, 1.0]])}
    elif kind == 3:
        grid.setdefault("fixed", {})[pick(KNOB_NAMES)] = pick(HOSTILE)
    elif kind == 4:
        grid["fixed"] = pick(HOSTILE)
    elif kind == 5:
        grid[pick(["name", "x", "y", "fixed", "page"])] = pick(HOSTILE)
    elif kind == 6:
        grid.pop(pick(["x", "y", "fixed", "name"]), None)
    elif kind == 7:
        grid[pick(["extra", "X", "", "\x00"])] = 1
    elif kind == 8:
        grid.setdefault("fixed", {})[pick(["nope", "", "d "])] = 1
    elif kind == 9:  # a valid but large world: the limits on steps and memory
        grid["fixed"] = {
            "n_states": pick([50, 3]),
            "returns": pick([1999, 39, 2]),
            "d": pick([500, 5]),
            "n_arms": pick([100, 5]),
            "batch_size": pick([10_000, 1]),
        }
        grid["x"] = {"knob": "season_length", "values": pick([[100, 1000, 4000], [20, 40]])}
    elif kind == 10:
        grid[axis] = {"knob": pick(KNOB_NAMES), "values": list(range(1, int(rng.integers(2, 500))))}
    else:
        return pick(HOSTILE)  # a top level that is not a table
    return grid


def _bytes_mutation(rng, raw: bytes) -> bytes:
    """A few files are hostile as bytes: encodings, NUL, binary, nesting, size."""
    kind = int(rng.integers(10))
    text = raw.decode("utf-8", "replace")
    if kind == 0:
        return text.encode("utf-16")
    if kind == 1:
        return text.encode("utf-32")
    if kind == 2:
        return text.replace('"fuzz"', '"caf\xe9"').encode("latin-1", "replace")
    if kind == 3:
        return raw[: int(rng.integers(1, max(2, len(raw))))]
    if kind == 4:
        return bytes(rng.integers(0, 256, int(rng.integers(1, 4000)), dtype=np.uint8))
    if kind == 5:
        return b"\xef\xbb\xbf" + raw
    if kind == 6:
        return raw[:10] + b"\x00" + raw[10:]
    if kind == 7:
        return b"x = " + b"[" * 200_000 + b"\n"
    if kind == 8:
        return b"x = 1" + b"0" * 6000 + b"\n"
    return raw + b" " * 1_000_001  # over the 1 MB a grid may have


def hostile_grids(n: int, seed: int = 33):
    """``n`` (name, bytes) hostile grid files, reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        grid = json.loads(json.dumps(BASE))
        for _ in range(int(rng.integers(1, 4))):
            try:
                grid = _mutate(rng, grid) if isinstance(grid, dict) else grid
            except (TypeError, AttributeError):  # a field made hostile before: keep it so
                pass
        ext = ".json" if rng.random() < 0.5 else ".toml"
        try:
            raw = (json.dumps(grid) if ext == ".json" else _toml(grid)).encode("utf-8")
        except (ValueError, TypeError):
            raw = b"{"
        if rng.random() < 0.25:
            raw = _bytes_mutation(rng, raw)
        out.append((f"g{i:03d}{ext}", raw))
    return out


def _one_line(text: str) -> bool:
    return len(text.strip().splitlines()) == 1


def test_hostile_grids_get_one_line_each_in_process(tmp_path, capsys):
    grids = hostile_grids(N_GRIDS)
    codes, tracebacks, peaks = {}, [], []
    for name, raw in grids:
        path = tmp_path / name
        path.write_bytes(raw)
        tracemalloc.start()
        try:
            rc = main(["map", "--grid", str(path), "--dry-run"])
        except BaseException as e:  # a traceback is what this test exists to catch
            tracebacks.append(f"{name}: {type(e).__name__}: {e}"[:300])
            rc = None
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        out, err = capsys.readouterr()
        codes[rc] = codes.get(rc, 0) + 1
        if rc == 2:
            assert _one_line(err) and err.startswith("error: ") and not out, (name, err)
            assert "Traceback" not in err
        elif rc == 0:
            assert _one_line(out) and out.startswith("map "), (name, out)
    print(f"\n{len(grids)} hostile grids: exit codes {codes}, peak {max(peaks) / 1e6:.1f} MB")
    assert not tracebacks, tracebacks[:5]
    assert set(codes) <= {0, 2}
    assert codes.get(2, 0) >= len(grids) * 0.8  # nearly all are refused
    assert max(peaks) < GB


_LAUNCH = (
    "import json, resource, subprocess, sys; "
    "p = subprocess.run(sys.argv[1:], capture_output=True); "
    "print(json.dumps([p.returncode, p.stderr.decode(), "
    "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
)


def test_a_sample_of_refused_grids_in_subprocesses_without_dry_run(tmp_path):
    """Refused grids never start a run: a sample of them without ``--dry-run``, each in its
    own process, one line, exit 2, peak RSS (wait4) under 1 GB."""
    sample = []
    for name, raw in hostile_grids(N_GRIDS):
        path = tmp_path / name
        path.write_bytes(raw)
        try:
            MapGrid.from_file(path)
        except Exception:
            sample.append(path)
    sample = sample[:: max(1, len(sample) // 4)][:4]
    peaks = []
    for path in sample:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        # a small launcher runs the command and reports its peak RSS: a child forked from
        # this (large) test process would count the parent's pages in its own ru_maxrss
        got = subprocess.run(
            [sys.executable, "-c", _LAUNCH, sys.executable, "-m", "allseason", "map"]
            + ["--grid", str(path)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=600,
        )
        rc, err, maxrss_kb = json.loads(got.stdout)
        usage = types.SimpleNamespace(ru_maxrss=maxrss_kb)
        assert rc == 2 and _one_line(err) and "Traceback" not in err, (path.name, err)
        assert usage.ru_maxrss * 1024 < GB, (path.name, usage.ru_maxrss)
        peaks.append(usage.ru_maxrss / 1024)
    print(f"\n{len(sample)} refused grids in subprocesses: peak RSS {max(peaks):.0f} MB")
    assert not (tmp_path / "results").exists()  # nothing was written


@pytest.mark.parametrize(
    "text, words",
    [
        (
            'x = { knob = {a = 1}, values = [1] }\ny = { knob = "sigma2", values = [0.1] }\n',
            "x.knob",
        ),
        (
            'x = { knob = "n_states", values = [[1], [2]] }\n'
            'y = { knob = "sigma2", values = [0.1] }\n',
            "x.values[0]: must be an integer",
        ),
        (
            'x = { knob = "n_states", values = [100000000] }\n'
            'y = { knob = "sigma2", values = [0.1] }\n',
            "from 1 to 50",
        ),
        (
            'x = { knob = "season_length", values = [20000] }\n'
            'y = { knob = "returns", values = [1999] }\n',
            "seasons; at most 2,000",
        ),
        (
            'x = { knob = "season_length", values = [1000, 2000, 4000, 8000] }\n'
            'y = { knob = "sigma2", values = [0.1, 0.2, 0.3, 0.4, 0.5, 1, 2, 3] }\n'
            'page = { knob = "n_arms", values = [2, 3, 4, 5, 6, 7, 8, 9, 10] }\n',
            "limits.MAP_MAX_STEPS",
        ),
        (
            'x = { knob = "d", values = [500] }\ny = { knob = "n_arms", values = [100] }\n'
            "fixed = { batch_size = 10000 }\n",
            "limits.MAP_MAX_RUN_BYTES",
        ),
        (
            'x = { knob = "sigma2", values = [nan] }\ny = { knob = "d", values = [2] }\n',
            "x.values[0]",
        ),
    ],
)
def test_named_hostile_grids(tmp_path, capsys, text, words):
    path = tmp_path / "g.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["map", "--grid", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert words in err and _one_line(err), err


@pytest.mark.parametrize(
    "encoding, words",
    [
        ("utf-16", "a NUL byte; this is a binary file (or UTF-16 text), not a UTF-8 TOML file"),
        ("latin-1", "row 1: byte 0xe9 is not UTF-8 text; save the file as UTF-8 text"),
    ],
)
def test_a_grid_not_in_utf8_gets_the_uploads_line(tmp_path, capsys, encoding, words):
    text = (
        'name = "café"\nx = { knob = "d", values = [2] }\ny = { knob = "n_arms", values = [2] }\n'
    )
    path = tmp_path / "g.toml"
    path.write_bytes(text.encode(encoding))
    assert main(["map", "--grid", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert words in err and str(path) in err and _one_line(err), err


@pytest.mark.parametrize("command", ["sweep", "run"])
def test_every_text_file_of_the_cli_gets_the_same_line(tmp_path, capsys, command):
    """The sweep file and the scenario file are read by the same function as the grid."""
    path = tmp_path / ("s.toml" if command == "sweep" else "s.json")
    path.write_bytes('{"name": "café"}\n'.encode("latin-1"))
    argv = ["sweep", str(path)] if command == "sweep" else ["run", "--pattern", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "byte 0xe9 is not UTF-8 text; save the file as UTF-8 text" in err, err
    assert _one_line(err)
