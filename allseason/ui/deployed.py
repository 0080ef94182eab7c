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

The agent's saved state (the file ``Agent.save`` writes) is read too when given: uploaded, or
``agent.state`` in the server's folder (read again when it changes), checked by
:func:`allseason.api.read_agent_state` (never trusted: a hostile file is one line).

What it shows: the paper's figure for the deployment (Inside All-Season's builder, with
spawns, prunings and recalls), the current bandits, the reward over time with its 95%
interval per window, the propensities (the smallest, the uniform policy's ESS), what the
saved state believes now (bandits, weights, the shadow's window or discount, N_max, each
bandit's coefficients with their uncertainty, the model version) and a button that sends the
log to Your data. A bad file is ONE ``st.error`` line naming it.
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
    "state": "What the saved state holds now: each bandit's weight (the probability that it "
    "fits the present), its age in batch updates and the observations it learnt from. The "
    "shadow (bandit 0) learns from recent observations only and is copied into a new bandit "
    "when it plays; a base bandit learns only the decisions it played.",
    "theta": "What each bandit learnt: the posterior mean of each coefficient ± its standard "
    "deviation, sqrt(diag(M⁻¹)). A wide ± means the bandit has seen little of that "
    "direction. The CSV holds every coefficient.",
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
        self.state = None  # the folder's agent.state read: (mtime, size), view, error
        self.state_at: tuple | None = None
        self.state_error: str | None = None

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
            self._refresh_state()
            self.read_at = time.time()

    def _refresh_state(self) -> None:
        """The folder's saved state, read again only when the file changed."""
        from pathlib import Path

        path = Path(self.folder, api.STATE_FILE)
        try:
            st_ = path.stat()
        except OSError:
            self.state, self.state_at, self.state_error = None, None, None
            return
        at = (st_.st_mtime_ns, st_.st_size)
        if at == self.state_at:
            return
        self.state_at = at
        try:
            self.state, self.state_error = api.read_agent_state_file(path), None
        except api.SpecError as e:
            self.state, self.state_error = None, str(e)


@st.cache_resource(max_entries=4, show_spinner=False)
def _watch(folder: str) -> _Watch:
    return _Watch(folder)


@st.cache_resource(show_spinner=False)
def _read_ahead(folder: str) -> threading.Thread:
    w = _watch(folder)
    thread = threading.Thread(target=w.refresh, name="allseason-deployed-read", daemon=True)
    thread.start()
    return thread


def read_ahead() -> None:
    """With ``ALLSEASON_DEPLOYED_DIR`` set: its log read once in the background when the server
    has its first visitor, whatever page is opened (a 10**6-decision log takes the server
    about 12 CPU-s to read; a visitor of this page then finds it read, and every later read
    is the new lines only). Nothing when unset."""
    folder = settings.deployed_dir()
    if folder is not None:
        _read_ahead(str(folder))


def reset() -> None:
    """The page's pickers and uploads start again (keys.reset); what was read stays."""
    keys.reset(st.session_state, keys.PAGE_DEPLOYED)


@st.cache_resource(max_entries=1, show_spinner="Deploying the example agent…")
def _example() -> dict:
    """The built-in example's files (made once per server: a few seconds)."""
    return api.deployment_example()


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
    """What ``make()`` read, made once per file and kept in the session: one entry per kind
    (the part of ``key`` before ":"), so the log and the state are kept side by side."""
    got = st.session_state.get(PARSED) or ()
    for k, value in got:
        if k == key:
            return value
    value = make()
    kind = key.split(":", 1)[0]
    st.session_state[PARSED] = (*(kv for kv in got if kv[0].split(":", 1)[0] != kind), (key, value))
    return value


def _file_key(kind: str, got: tuple[str, bytes]) -> str:
    return f"{kind}:{got[0]}:{len(got[1])}:{hash(got[1])}"


def _read_state(key: str, data: bytes, name: str):
    """The state view of ``data`` (read once per file), or raise its one-line SpecError."""

    def make():
        try:
            return api.read_agent_state(data, name), None
        except api.SpecError as e:
            return None, e

    view, err = _parsed(key, make)
    if err is not None:
        raise err
    return view


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
    """The uploaders; (the parsed deployment or None, its bytes, its name, the state view or
    None), or None when nothing usable was uploaded (with one error line per bad file)."""
    c1, c2, c3 = st.columns(3)
    specs = [
        (c1, "decisions", "decisions.csv (required for the log)", ["csv"]),
        (c2, "batches", "batches.jsonl (for the weights)", ["jsonl", "json", "txt"]),
        (c3, "state", "the agent's saved state (agent.save)", None),
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
    view = None
    try:
        got = _upload_bytes("state")
        if got is not None:
            view = _read_state(_file_key("state", got), got[1], got[0])
    except api.SpecError as e:
        st.error(md(str(e)), icon=":material/error:")
    try:
        dec = _upload_bytes("decisions")
        if dec is None:
            if view is None:
                st.info(
                    "Upload the agent's decisions.csv (and batches.jsonl for the weights), "
                    "its saved state, or both."
                )
                return None
            return None, b"", "", view
        bat = _upload_bytes("batches")
        key = _file_key("upload", dec) + (_file_key("", bat) if bat else "")

        def make():
            try:
                return api.Deployment.from_bytes(dec[1], bat[1] if bat else b""), None
            except api.SpecError as e:
                return None, e

        dep, err = _parsed(key, make)
        if err is not None:
            raise err
        return dep, dec[1], "decisions.csv", view
    except api.SpecError as e:
        st.error(md(str(e)), icon=":material/error:")
        return (None, b"", "", view) if view is not None else None


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


def _n(k: int, word: str) -> str:
    return f"{k:,} {word}{'' if k == 1 else 's'}"


def state_section(view: dict) -> None:
    """What the saved state says the agent believes now (:func:`api.read_agent_state`)."""
    a = view["about"]
    st.subheader("What the agent believes now (its saved state)")
    arms = (
        f"{a['n_arms']} arms ({md(', '.join(a['labels'][:8]))}{'…' if a['n_arms'] > 8 else ''}), "
        "a context per decision"
        if a["n_arms"]
        else "arms given with each decision"
    )
    n_max = f", N_max = **{a['n_max']}** base bandits" if a["n_max"] is not None else ""
    c = a["counts"]
    st.markdown(
        f"**{md(a['policy'])}** at model version **{a['model_version']:,}**: d = {a['d']}, "
        f"{arms}, batch size {a['batch_size']}{n_max}. Shadow: {a['shadow']}. "
        f"{c['decisions']:,} decisions, {c['learned']:,} rewards learnt, {a['open']:,} open; "
        f"in all, {_n(c['spawned'], 'bandit')} spawned and {c['pruned']:,} pruned."
    )
    table = view["bandits"]
    st.dataframe(table, hide_index=True, key="dp_state_bandits", use_container_width=True)
    st.caption(CAPTIONS["state"])
    st.dataframe(view["wide"], hide_index=True, key="dp_state_theta", use_container_width=True)
    st.caption(CAPTIONS["theta"])
    c1, c2 = st.columns(2)
    with c1:
        csv_button("The bandits (CSV)", table, "state-bandits", "dp_csv_state_bandits")
    with c2:
        csv_button("Every coefficient (CSV)", view["theta"], "state-theta", "dp_csv_state_theta")


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


def show(dep, data_fn, name: str, state=None) -> None:
    """Everything the page draws of one deployment and, if at hand, its saved state
    (``state``: :func:`api.read_agent_state`; its bandits' ages and observations join the
    log's table)."""
    if dep is None:
        if state is not None:
            with guard("the saved state"):
                state_section(state)
        return
    views = dep.views(summary=state["summary"] if state else None)
    headline(dep, views)
    with guard("the weights"):
        weights_section(views)
    with guard("the bandits"):
        bandits_section(views)
    with guard("the reward"):
        reward_section(views)
    with guard("the propensities"):
        propensity_section(dep, views)
    if state is not None:
        with guard("the saved state"):
            state_section(state)
    with guard("sending the log"):
        send_section(data_fn, name)


@st.fragment(run_every=LIMITS["refresh_seconds"], key="dp_folder")
def folder_view(folder: str) -> None:
    """The server's folder, read again every few seconds (only the new bytes)."""
    from pathlib import Path

    w = _watch(folder)
    has_log = Path(folder, api.DEPLOYED_FILES[0]).is_file()
    if not has_log and not Path(folder, api.STATE_FILE).is_file():
        st.warning(
            f"No {api.DEPLOYED_FILES[0]} nor {api.STATE_FILE} in the server's folder "
            f"({md(Path(folder).name)}) yet; this view refreshes itself.",
            icon=":material/hourglass_empty:",
        )
        return
    with st.spinner("Reading the log…"):
        w.refresh()
    if w.state_error:
        st.error(md(w.state_error), icon=":material/error:")
    if w.error and has_log:
        st.error(md(w.error), icon=":material/error:")
        return
    lim = yourdata.LIMITS
    st.caption(f"Read at {time.strftime('%H:%M:%S', time.localtime(w.read_at))}; refreshes "
               f"every {LIMITS['refresh_seconds']} s.")  # fmt: skip
    with w.lock:
        show(
            w.dep if has_log else None,
            lambda: api.your_data_file(
                Path(folder, api.DEPLOYED_FILES[0]), lim["rows"], lim["bytes"]
            ),
            "deployed-decisions.csv",
            w.state,
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
            dep, data, name, state = got
            show(dep, _send_bytes(data), name, state)
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
        state = None
        if files.get("state_file"):
            with guard("the example's saved state"):
                state = _read_state("example-state:", files["state_file"], "example.state")
        show(dep, _send_bytes(files["decisions"]), "example-deployed-decisions.csv", state)


__all__ = ["page_body", "reset", "SOURCE", "UPLOADS", "LIMITS"]
