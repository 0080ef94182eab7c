"""One source for each limit (once, the policy limit was 8 in docs/security.md, 11 in the
code and "at most 12" in the race-upload message). The docs' tables, the messages, the
server's upload cap and the code must agree; any two that disagree fail here."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from allseason import api, limits
from allseason.logs import offline
from allseason.policies.params import Interval

ROOT = Path(__file__).resolve().parents[2]
SECURITY = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")

ROWS = {  # the docs' row -> (engine value, app value)
    "horizon (steps)": ("horizon", "horizon"),
    "seeds": ("n_seeds", "n_seeds"),
    "policies": ("n_policies", "n_policies"),
    "d": ("d", "d"),
    "arms K": ("n_arms", "n_arms"),
    "states": ("n_states", "n_states"),
    "segments": ("n_segments", "n_segments"),
    "batch size": ("batch_size", "batch_size"),
    "horizon x seeds x policies": (None, "budget"),
}


def _number(cell: str) -> float | None:
    cell = cell.strip()
    return float(cell.replace(",", "")) if cell else None


def _table(header: str) -> dict[str, list[str]]:
    """The rows of the Markdown table of docs/security.md whose header starts with ``header``."""
    lines = SECURITY[SECURITY.index(header) :].splitlines()[2:]
    out = {}
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0]] = cells[1:]
    return out


def test_the_docs_limits_are_the_codes():
    table = _table("| Limit | Engine")
    for row, (engine, app) in ROWS.items():
        got_engine, got_app = (_number(c) for c in table[row][:2])
        assert got_engine == (limits.LIMITS[engine] if engine else None), row
        assert got_app == limits.APP_LIMITS[app], row
    files = table["a scenario or race file, a link (bytes)"]
    assert [_number(c) for c in files] == [limits.MAX_INPUT_BYTES] * 2
    csv = table["a Your data CSV (bytes)"]
    assert [_number(c) for c in csv] == [offline.LOG_LIMITS["bytes"], offline.APP_LIMITS["bytes"]]
    assert set(table) == set(ROWS) | {
        "a scenario or race file, a link (bytes)",
        "a Your data CSV (bytes)",
    }


def test_the_docs_bounds_are_the_declarations():
    table = _table("| Number | Bounds")
    bounds = {row: re.findall(r"[\d.e+-]+(?:,\d{3})*", cells[0]) for row, cells in table.items()}
    lo, hi = (float(x.replace(",", "")) for x in bounds["tau, max_idle (windows)"])
    assert (lo, hi) == (1, limits.MAX_WINDOW)
    assert [float(x) for x in bounds["n_max (All-Season's base bandits)"]] == [
        1,
        limits.MAX_BANDITS,
    ]
    assert tuple(float(x) for x in bounds["sigma2 (noise), lam (prior)"]) == limits.NOISE_RANGE
    assert limits.NOISE_RANGE == limits.PRIOR_RANGE
    assert tuple(float(x) for x in bounds["S, L, delta_l"]) == limits.SCALE_RANGE
    # and the declarations read them
    for name in api.policy_names():
        for param, p in api.describe_policy(name).params.items():
            c = p.constraint
            if not isinstance(c, Interval):
                continue
            if param in ("tau", "max_idle"):
                assert (c.low, c.high) == (1, limits.MAX_WINDOW), (name, param)
            elif param == "n_max":
                assert (c.low, c.high) == (1, limits.MAX_BANDITS), (name, param)
            elif param == "sigma2":
                assert (c.low, c.high) == limits.NOISE_RANGE, (name, param)
            elif param == "lam":
                assert (c.low, c.high) == limits.PRIOR_RANGE, (name, param)
            elif param in ("S", "L", "delta_l"):
                assert (c.low, c.high) == limits.SCALE_RANGE, (name, param)
    assert api.SpecError  # the scenario's sigma2 is bounded the same way:
    with pytest.raises(api.SpecError, match=r"sigma2: must be a number in \[1e-06, 1e\+06\]"):
        api.Scenario(sigma2=1e-320)


def test_the_server_upload_cap_is_the_largest_page_limit():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    largest = max(limits.MAX_INPUT_BYTES, offline.APP_LIMITS["bytes"])
    cap = config["server"]["maxUploadSize"]  # MiB on the server
    assert cap == limits.upload_cap_mb(largest) == 21
    for page_limit in (limits.MAX_INPUT_BYTES, offline.APP_LIMITS["bytes"]):
        browser_cap = limits.upload_cap_mb(page_limit) * 10**6  # what the uploader lets by
        assert page_limit < browser_cap <= cap * 2**20
    # what the pages say: 1 MB for a scenario or race file, 20 MB for Your data
    from allseason.ui import frame, yourdata

    assert frame.UPLOAD_MB_TEXT == "1 MB" and limits.MAX_INPUT_BYTES == 1_000_000
    assert "**20 MB** per file" in yourdata.limits_text()
    assert f"`server.maxUploadSize` is {cap} (MiB)" in SECURITY


def _race_json(n: int) -> bytes:
    names = list(api.policy_names())  # 12 registered; a 13th entry is a relabelled copy
    policies = [*names, {"name": "lints", "label": "lints again"}][:n]
    return json.dumps({"scenario": {"segments": [[0, 200]]}, "policies": policies}).encode()


@pytest.mark.parametrize("n", [12, 13])
def test_the_race_upload_quotes_the_apps_policy_limit(n):
    """12 policies passed the engine and 13 said 'at most 12': both must quote the app's."""
    pytest.importorskip("streamlit")
    from conftest import open_app_page

    from allseason.ui.race_settings import RACE_UPLOAD

    at = open_app_page("app_pages/2_Race.py")
    at.file_uploader(key=RACE_UPLOAD).set_value(("race.json", _race_json(n), "application/json"))
    at.run()
    shown = [e.value for e in at.error]
    want = f"at most {limits.APP_LIMITS['n_policies']} policies in this app"
    assert any(want in m for m in shown), shown
    assert not any(f"at most {limits.LIMITS['n_policies']} policies" in m for m in shown)
    caption = " ".join(c.value for c in at.caption)
    assert f"≤ {limits.APP_LIMITS['n_policies']} policies" in caption


def test_the_bounds_once_written_inline_are_limits_py_s():
    """Each bound that was a number written where it is checked reads allseason/limits.py: the
    bound itself passes, one past it is refused with a message quoting it."""
    import argparse

    from allseason.cli.paper import _settings
    from allseason.logs.cells import declared_arms
    from allseason.sim.live import LiveRun

    n = limits.MAX_DECLARED_ARMS
    assert len(declared_arms(n)) == len(declared_arms([f"a{i}" for i in range(n)])) == n
    with pytest.raises(api.SpecError, match=f"between 2 and {n} arms, got {n + 1}"):
        declared_arms(n + 1)
    with pytest.raises(api.SpecError, match=f"list 2 to {n} arms, got {n + 1}"):
        declared_arms([f"a{i}" for i in range(n + 1)])
    m = limits.MAX_BATCH_SIZES
    assert api.Scenario(segments=((0, 2 * m),), batch_size=[1, 2] * (m // 2)).batch_size[-1] == 2
    with pytest.raises(api.SpecError, match=f"must have 1 to {m} items"):
        api.Scenario(segments=((0, 2 * m),), batch_size=[1] * (m + 1))
    lo, hi = limits.LIVE_WINDOW_RANGE
    for window in (lo - 1, hi + 1):
        with pytest.raises(api.SpecError, match=f"window: must be from {lo} to {hi}, got {window}"):
            LiveRun(window=window)
    s = limits.MAX_PAPER_SEEDS
    args = argparse.Namespace(all=True, table=None, seeds=s + 1, n=1000)
    with pytest.raises(ValueError, match=rf"--seeds: must be in 1\.\.{s}, got {s + 1}"):
        _settings(args)
