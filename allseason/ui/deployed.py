"""The page "Your deployed bandit": an All-Season agent running in someone's own system, seen
through its decision log (``decisions.csv``, ``batches.jsonl``) and its saved state.

Where the log comes from, one of:

- **the server's folder**: ``ALLSEASON_DEPLOYED_DIR`` (:func:`allseason.ui.settings.deployed_dir`),
  set by whoever starts the server, never a path typed in the page. One reader per folder is
  shared by every visitor (``st.cache_resource``); it keeps the byte offsets it has read up
  to, and the view refreshes itself every few seconds (``st.fragment(run_every=...)``),
  reading only what was appended;
- **uploaded files**, at most :data:`allseason.limits.DEPLOYED_LIMITS` ``upload_bytes`` each;
- **the built-in example**, made by the engine (:func:`allseason.api.deployment_example`).

What it shows: the paper's figure for the deployment (Inside All-Season's builder, with
spawns, prunings and recalls), the current bandits, the reward over time with its 95%
interval per window, the propensities (the smallest, the uniform policy's ESS) and a button
that sends the log to Your data. A bad file is ONE ``st.error`` line naming it.
"""

from __future__ import annotations

import threading
import time

import streamlit as st

from allseason import api
from allseason.viz import deployed as vdep
from allseason.viz.text import md

from . import keys, settings, yourdata
from .frame import chart, csv_button, guard

SOURCE = keys.DP_SOURCE
UPLOADS = {
    "decisions": keys.DP_UP_DECISIONS,
    "batches": keys.DP_UP_BATCHES,
    "state": keys.DP_UP_STATE,
}
PARSED = keys.DP_PARSED  # (key, Deployment | None, error | None)
LIMITS = api.DEPLOYED_LIMITS
UPLOAD_MB = LIMITS["upload_bytes"] // 1_000_000
FOLDER, UPLOAD, EXAMPLE = "The server's folder", "Upload files", "The built-in example"

CAPTIONS = {
    "top": "After each batch update, the weight of the bandit the agent trusts most. Near 1: "
    "it is sure which bandit fits the present; a pink dash: the shadow (short-term memory) "
    "is on top, as right after a new season; a black ring: an old bandit took the weight "
    "back (a season returned). Ticks at the bottom: bandits born (green) and pruned (red).",
    "reward": "The mean reward of consecutive decisions, window by window, with its 95% "
    "interval: a drop that the band does not explain is a change in your world.",
    "propensity": "How likely the agent was to play the arm it played. Very small values "
    "make offline estimates (IPS) noisy: each such decision counts as many.",
}


# --- where the log comes from ------------------------------------------------------------------
class _Watch:
    """A folder's deployment, shared by every session (one lock: one reader at a time)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.lock = threading.Lock()
        self.dep = api.Deployment()
        self.error: str | None = None
        self.read_at = 0.0

    def refresh(self) -> None:
        with self.lock:
            try:
                self.dep.refresh(self.folder)
                self.error = None
            except api.SpecError as e:
                self.error = str(e)
                self.dep = api.Deployment()  # read again from the start next time
            except OSError as e:
                self.error = f"the folder cannot be read: {e.strerror or e}"
            self.read_at = time.time()


@st.cache_resource(max_entries=4, show_spinner=False)
def _watch(folder: str) -> _Watch:
    return _Watch(folder)


def reset() -> None:
    """The page's pickers and uploads start again (keys.reset); what was read stays."""
    keys.reset(st.session_state, keys.PAGE_DEPLOYED)


@st.cache_resource(max_entries=2, show_spinner=False)
def _example(n_steps: int = 2000) -> dict:
    """The built-in example's files (made once per server)."""
    return api.deployment_example(n_steps=n_steps)


def _upload_bytes(key: str) -> tuple[str, bytes] | None:
    f = st.session_state.get(UPLOADS[key])
    if f is None:
        return None
    if f.size > LIMITS["upload_bytes"]:
        raise api.SpecError(
            f.name,
            f"the file has {f.size:,} bytes; at most {LIMITS['upload_bytes']:,} are read "
            f"({UPLOAD_MB} MB)",
        )
    return f.name, f.getvalue()


def _parsed(key: str, make):
    """(Deployment, summary) made once per set of files and kept in the session."""
    got = st.session_state.get(PARSED)
    if got and got[0] == key:
        return got[1]
    value = make()
    st.session_state[PARSED] = (key, value)
    return value


def source_picker() -> str:
    folder = settings.deployed_dir()
    options = ([FOLDER] if folder else []) + [EXAMPLE, UPLOAD]
    help_text = (
        f"The server was started with ALLSEASON_DEPLOYED_DIR={folder.name!s}: its log is read "
        "as it grows."
        if folder
        else "Start the server with ALLSEASON_DEPLOYED_DIR=/path/to/the/agent's/log to watch a "
        "running agent here."
    )
    return st.radio(
        "Which deployment", options, key=SOURCE, horizontal=True, help=help_text
    )  # fmt: skip


def upload_panel():
    """The uploaders; the parsed deployment, or None (with one error line) ."""
    c1, c2, c3 = st.columns(3)
    specs = [
        (c1, "decisions", "decisions.csv (required)", ["csv"]),
        (c2, "batches", "batches.jsonl (for the weights)", ["jsonl", "json", "txt"]),
        (c3, "state", "the agent's saved state (optional)", None),
    ]
    for col, key, label, types in specs:
        col.file_uploader(
            label,
            type=types,
            key=UPLOADS[key],
            max_upload_size=api.upload_cap_mb(LIMITS["upload_bytes"]),
            help=f"At most {UPLOAD_MB} MB.",
        )
    st.caption(
        f"Each file at most **{UPLOAD_MB} MB** (a longer log: start the server with "
        "ALLSEASON_DEPLOYED_DIR pointing at the agent's folder). Nothing is written to disk."
    )
    try:
        dec = _upload_bytes("decisions")
        if dec is None:
            st.info("Upload the agent's decisions.csv (and batches.jsonl for the weights).")
            return None
        bat = _upload_bytes("batches")
        key = "upload:" + dec[0] + str(len(dec[1])) + (bat[0] + str(len(bat[1])) if bat else "")
        key += str(hash(dec[1])) + str(hash(bat[1]) if bat else "")

        def make():
            try:
                return api.Deployment.from_bytes(dec[1], bat[1] if bat else b""), None
            except api.SpecError as e:
                return None, e

        dep, err = _parsed(key, make)
        if err is not None:
            raise err
        return dep, dec[1], "decisions.csv"
    except api.SpecError as e:
        st.error(md(str(e)), icon=":material/error:")
        return None


# --- what the page shows -------------------------------------------------------------------
def headline(dep, views) -> None:
    n, nb = dep.decisions.n_rows, dep.batches.n_lines
    tops = views["tops"]
    who = ""
    if len(tops):
        b, w = int(tops["bandit"].iloc[-1]), float(tops["weight"].iloc[-1])
        who = (
            f" Now **{'the shadow' if b == 0 else f'bandit {b}'}** holds the top weight ({w:.2f})."
        )
    dropped = (
        f" (the first {dep.decisions.n_dropped:,} are no longer kept in memory)"
        if dep.decisions.n_dropped
        else ""
    )
    st.markdown(
        f"**{n:,} decisions** resolved{dropped}, **{nb:,} batch updates**, "
        f"{len(dep.decisions.arm_labels)} arms, {len(views['recalls']):,} recalls.{who}"
    )


def weights_section(views) -> None:
    st.subheader("Who holds the weight")
    fig = vdep.deployment_figure(views["tops"], views["events"], views["recalls"])
    chart(fig, CAPTIONS["top"], "deployed-top-weight", "dp_top")
    c1, c2, c3 = st.columns(3)
    with c1:
        csv_button("Top bandit per batch (CSV)", views["tops"], "top-per-batch", "dp_csv_tops")
    with c2:
        csv_button("Spawns and prunings (CSV)", views["events"], "events", "dp_csv_events")
    with c3:
        csv_button("Recalls (CSV)", views["recalls"], "recalls", "dp_csv_recalls")


def bandits_section(views) -> None:
    st.subheader("The bandits now")
    table = views["bandits"]
    st.caption(
        "Each bandit alive after the last batch update: its weight, when it was born and "
        "how long ago (in batch updates), how many of the logged decisions it played, their "
        "mean reward, and the arm it played most: what it learnt to prefer."
    )
    st.dataframe(table, hide_index=True, key="dp_bandits", use_container_width=True)
    csv_button("The bandits (CSV)", table, "bandits", "dp_csv_bandits")
    spells = views["spells"]
    with st.expander(f"Who held the top weight, spell by spell ({len(spells):,} spells)"):
        st.dataframe(spells.tail(500), hide_index=True, key="dp_spells")
        st.caption("The last 500 spells; the CSV has them all. returning: a recall.")
        csv_button("Spells (CSV)", spells, "spells", "dp_csv_spells")


def reward_section(views) -> None:
    st.subheader("Reward over time")
    chart(vdep.reward_figure(views["windows"]), CAPTIONS["reward"], "deployed-reward", "dp_rew")
    csv_button("Reward per window (CSV)", views["windows"], "reward-windows", "dp_csv_windows")


def propensity_section(dep, views) -> None:
    st.subheader("Propensities: can this log still be evaluated offline?")
    p = views["propensity"]
    c1, c2, c3 = st.columns(3)
    c1.metric("Smallest propensity", f"{p['min']:.2g}" if p["n"] else "–")
    c2.metric(
        "ESS of a uniform policy (IPS)",
        f"{p['ess']:,.0f}",
        help="Effective sample size (Σw)²/Σw², w = (1/K)/p: how many decisions an IPS "
        "estimate of the uniform policy would be worth.",
    )
    c3.metric("ESS / decisions", f"{p['ess_share']:.1%}" if p["n"] else "–")
    bins = views.setdefault("bins", None)
    if bins is None:
        bins = views["bins"] = vdep.propensity_bins(dep.decisions.columns()["propensity"])
    chart(
        vdep.propensity_figure(bins, p["n_arms"], p["min"] if p["n"] else 1.0),
        CAPTIONS["propensity"],
        "deployed-propensities",
        "dp_prop",
    )
    if p["n"]:
        verdict = (
            "enough for an offline comparison"
            if p["ess_share"] >= 0.1
            else "thin: offline estimates of other policies will be wide"
        )
        st.markdown(
            f"An IPS estimate of the uniform policy on these {p['n']:,} decisions would be "
            f"worth about **{p['ess']:,.0f} decisions** ({p['ess_share']:.1%}): {verdict}. "
            f"{p['tiny']:.1%} of the decisions had π below 1/(10K)."
            + (
                f" **{p['zero']:,} decision{' was' if p['zero'] == 1 else 's were'} logged "
                "with π = 0**: IPS cannot weight them (they are left out of the ESS)."
                if p["zero"]
                else ""
            )
        )
    csv_button("Propensity histogram (CSV)", bins, "propensity-bins", "dp_csv_prop")


def send_section(data_fn, name: str) -> None:
    lim = yourdata.LIMITS
    st.subheader("Evaluate this log offline")
    st.caption(
        f"Your data replays the log against other policies (replay, IPS with the logged "
        f"propensities). It takes the most recent {lim['rows']:,} decisions at most."
    )
    if st.button("Send this log to Your data", key="dp_send", icon=":material/upload_file:"):
        data, kept = data_fn()
        st.session_state[yourdata.SOURCE] = yourdata.file_record(name, data, "deployed")
        st.session_state[keys.YD_KIND] = "auto"
        st.session_state[keys.YD_SCALE] = "none"
        st.session_state[keys.DP_SENT] = kept
        st.switch_page("app_pages/7_Your_data.py")


def show(dep, data_fn, name: str, summary=None) -> None:
    """Everything the page draws of one deployment (``summary``: the agent's own bandits,
    with their ages and observations, when the state is at hand)."""
    views = dep.views(summary=summary)
    headline(dep, views)
    with guard("the weights"):
        weights_section(views)
    with guard("the bandits"):
        bandits_section(views)
    with guard("the reward"):
        reward_section(views)
    with guard("the propensities"):
        propensity_section(dep, views)
    with guard("sending the log"):
        send_section(data_fn, name)


@st.fragment(run_every=LIMITS["refresh_seconds"], key="dp_folder")
def folder_view(folder: str) -> None:
    """The server's folder, read again every few seconds (only the new bytes)."""
    from pathlib import Path

    w = _watch(folder)
    if not Path(folder, api.DEPLOYED_FILES[0]).is_file():
        st.warning(
            f"No {api.DEPLOYED_FILES[0]} in the server's folder ({md(Path(folder).name)}) "
            "yet; this view refreshes itself.",
            icon=":material/hourglass_empty:",
        )
        return
    with st.spinner("Reading the log…"):
        w.refresh()
    if w.error:
        st.error(md(w.error), icon=":material/error:")
        return
    lim = yourdata.LIMITS
    st.caption(f"Read at {time.strftime('%H:%M:%S', time.localtime(w.read_at))}; refreshes "
               f"every {LIMITS['refresh_seconds']} s.")  # fmt: skip
    with w.lock:
        show(
            w.dep,
            lambda: api.your_data_file(
                Path(folder, api.DEPLOYED_FILES[0]), lim["rows"], lim["bytes"]
            ),
            "deployed-decisions.csv",
        )


def _send_bytes(data: bytes):
    lim = yourdata.LIMITS
    return lambda: api.your_data_bytes(data, lim["rows"], lim["bytes"])[:2]


def page_body() -> None:
    src = source_picker()
    if src == FOLDER:
        folder_view(str(settings.deployed_dir()))
    elif src == UPLOAD:
        got = upload_panel()
        if got is not None:
            dep, data, name = got
            show(dep, _send_bytes(data), name)
    else:
        try:
            files = _example()
        except api.SpecError as e:
            st.error(md(str(e)), icon=":material/error:")
            return
        st.caption(files["about"])
        dep = _parsed(
            "example",
            lambda: api.Deployment.from_bytes(files["decisions"], files["batches"]),
        )
        show(dep, _send_bytes(files["decisions"]), "example-deployed-decisions.csv",
             summary=files["state"].get("bandits"))  # fmt: skip


__all__ = ["page_body", "reset", "SOURCE", "UPLOADS", "LIMITS"]
