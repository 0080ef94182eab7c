"""The Pattern builder page: design the seasons (a preset scaled to a horizon, or a table of
segments) and the environment; keep, download, upload and share the scenario.

The inputs seed themselves from the session's scenario (:mod:`allseason.ui.state`) and only
collect values; the validator is the engine's (``api.Scenario`` for a single field,
``api.parse_scenario(..., limits=api.APP_LIMITS)`` for the whole scenario and for an uploaded
file), and each message is shown under the input it names. A valid change becomes the
session's scenario; after an invalid one the last valid scenario stays in force.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from allseason import api

from . import keys, state
from .frame import UPLOAD_MB_TEXT, errors_here, literal
from .keys import (
    PB_BATCH,
    PB_D,
    PB_HORIZON,
    PB_N_ARMS,
    PB_N_STATES,
    PB_PRESET,
    PB_RESEED,
    PB_SEED,
    PB_SIGMA2,
    PB_TABLE,
    PB_TABLE_EDITOR,
    PB_TABLE_VER,
    PB_UPLOAD,
    PB_UPLOAD_ERROR,
    PB_UPLOAD_OK,
)


def reset() -> None:
    """The Pattern builder starts again from the session's scenario: its inputs, the table's
    draft and the upload's messages are dropped (keys.reset)."""
    keys.reset(st.session_state, keys.PAGE_PATTERN)


def _paper_synthetic_help() -> str:
    p = api.preset("paper-synthetic")
    return (
        f"The paper's section 5 experiment: {p.n_states} states, {len(p.change_points())} "
        f"change points ({p.horizon:,} steps unless you change the horizon)."
    )


PRESET_HELP = {
    "paper-synthetic": _paper_synthetic_help(),
    "regular": "Few long seasons: every state in turn, each twice.",
    "realistic": "A long usual state interrupted by short events and medium seasons.",
    "extreme": "Fifty short periods: e.g. day and night.",
    "seattle-weather": "Real days: Seattle 2012-2015, a shop with 10 customers a day and 5 "
    "products; the states are the weather regimes (mild & dry, warm & dry, "
    "wet, cold). Pattern, d, K, σ² and batch size are fixed by the data.",
    "custom": "Edit the table of (state, length) segments freely.",
}
FIXED_PRESETS = ("seattle-weather",)  # the data fix the pattern and the environment


def _n_states(segments) -> int:
    return max(int(s) for s, _ in segments) + 1


class _Messages:
    """The validator's messages by input (``errors``) and the slot under each input
    (``where``; the segment table's catches the others)."""

    def __init__(self):
        self.where: dict[str, object] = {}
        self.errors: dict[str, list[str]] = {}

    def add(self, group: str, message: str) -> None:
        self.errors.setdefault(group, []).append(message)

    def show(self) -> None:
        for group, messages in self.errors.items():
            errors_here(self.where.get(group, self.where["segments"]), messages)


# --- scenario builder -----------------------------------------------------------------------
def _seed_builder(sc: api.Scenario, force: bool = False) -> None:
    """Set the builder's widgets (and the segment table's draft) from the scenario: when the
    page is opened (its widget values were dropped when it was left) or when forced."""
    ss = st.session_state
    fresh = force or PB_PRESET not in ss
    values = {
        PB_PRESET: sc.preset,
        PB_N_STATES: min(_n_states(sc.segments), state.APP_LIMITS["n_states"]),
        PB_HORIZON: sc.horizon,
        PB_D: sc.d,
        PB_N_ARMS: sc.n_arms,
        PB_SIGMA2: float(sc.sigma2),
        PB_SEED: int(sc.seed),
        PB_BATCH: state.encode_batch(sc.batch_size).replace("_", ", "),
    }
    for key, value in values.items():
        if force or key not in ss:
            ss[key] = value
    if fresh or PB_TABLE not in ss:
        _set_draft([list(seg) for seg in sc.segments])


def _set_draft(rows: list) -> None:
    """The custom segment table's rows; a new editor (key) so no stale edit is re-applied."""
    ss = st.session_state
    ss[PB_TABLE] = rows
    ss[PB_TABLE_VER] = ss.get(PB_TABLE_VER, 0) + 1


def _on_preset() -> None:
    """Choosing *custom* starts the table from the scenario in force."""
    if st.session_state.get(PB_PRESET) == "custom":
        _set_draft([list(seg) for seg in state.scenario().segments])


def _on_table_edit(key: str, shown: list) -> None:
    """data_editor callback: apply the edit to the rows shown; the result is a custom table."""
    ss = st.session_state
    edits = ss.get(key) or {}
    rows = [{"state": s_, "length": n} for s_, n in shown]
    for idx, change in (edits.get("edited_rows") or {}).items():
        i = int(idx)
        if 0 <= i < len(rows):
            rows[i].update({k: v for k, v in change.items() if k in ("state", "length")})
    deleted = {int(i) for i in edits.get("deleted_rows") or ()}
    rows = [r for i, r in enumerate(rows) if i not in deleted]
    rows += [
        {"state": r.get("state"), "length": r.get("length")} for r in edits.get("added_rows") or ()
    ]
    _set_draft([[r["state"], r["length"]] for r in rows])
    ss[PB_PRESET] = "custom"


def _on_upload() -> None:
    """file_uploader callback (runs before the script): apply a valid JSON scenario or CSV
    segment table; a bad file leaves the pattern as it is and says why."""
    ss = st.session_state
    up = ss.get(PB_UPLOAD)
    ss.pop(PB_UPLOAD_ERROR, None)
    if up is None:
        return
    name = str(up.name)[-80:]  # shown in messages, never used as a path
    try:
        # the server refuses files over server.maxUploadSize; AppTest and other front ends
        # do not go through it, so the size is checked here too (and by parse_scenario)
        if up.size > api.MAX_INPUT_BYTES:
            raise api.SpecError(
                "file",
                f"is {up.size:,} bytes; at most {api.MAX_INPUT_BYTES:,} bytes ({UPLOAD_MB_TEXT})",
            )
        sc = api.parse_scenario(
            up.getvalue(),
            api.file_kind(name),
            defaults=state.scenario(),
            limits=state.APP_LIMITS,
        )
    except api.SpecError as e:
        ss[PB_UPLOAD_ERROR] = literal(
            f"{name} was not loaded; the pattern was not changed. {state.explain(e)}"
        )
        return
    except Exception as e:
        ss[PB_UPLOAD_ERROR] = literal(
            f"{name} was not loaded; the pattern was not changed ({type(e).__name__})."
        )
        return
    ss[state.SCENARIO] = sc
    ss.pop(state.URL_ERRORS, None)
    _seed_builder(sc, force=True)
    ss[PB_UPLOAD_OK] = literal(f"Loaded {name}.")


def _is_empty(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v == ""


def _table_segments(rows: list) -> tuple[list, list[str]]:
    """Segments from the table's rows, and messages for empty cells."""
    segs, errors = [], []
    for i, (state_, length) in enumerate(rows, start=1):
        missing = [n for n, v in (("state", state_), ("length", length)) if _is_empty(v)]
        if missing:
            errors.append(
                f"Segment {i}: {' and '.join(missing)} is empty; fill it in or delete the row."
            )
            continue
        segs.append([state_, length])
    return segs, errors


def _table_frame(rows: list) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["state", "length"]).astype("Int64")
    df.insert(0, "starts at", df["length"].fillna(0).cumsum().shift(fill_value=0).astype("Int64"))
    return df


def scenario_builder():
    """Render the Pattern builder's inputs; return the scenario in force (always valid) and
    the container beside the segment table meant for its preview.

    A valid change becomes the session's scenario (the page puts it in the URL); an invalid
    one is reported under its input and the previous scenario stays."""
    sc = state.scenario()
    _seed_builder(sc, force=st.session_state.pop(PB_RESEED, False))
    msg = _Messages()
    st.subheader("1 · Seasons")
    preset, fixed_sc = _seasons_inputs(sc, msg)
    rows = _segment_rows(preset, sc, fixed_sc, msg)
    preview_col = _segment_table(rows, msg)
    segs, empty_cells = _table_segments(rows)
    for message in empty_cells:
        msg.add("segments", message)
    st.subheader("2 · Environment")
    fields = _environment_inputs(preset in FIXED_PRESETS, msg)
    candidate = None
    if not msg.errors:
        try:
            candidate = api.parse_scenario(
                dict(segments=segs, preset=preset, **fields), "dict", limits=state.APP_LIMITS
            )
        except api.SpecError as e:
            group = state.field_group(e.field)
            if preset == "custom" and group == "horizon":
                group = "segments"
            msg.add(group, state.explain(e))
    msg.show()
    if candidate is not None:
        state.set_scenario(candidate)
        return candidate, preview_col
    with preview_col:
        st.warning(
            "The preview shows the last valid scenario; fix the input marked with an "
            "error to update it.",
            icon=":material/undo:",
        )
    return sc, preview_col


def _fixed_scenario(preset: str, msg: _Messages) -> api.Scenario | None:
    """A preset from data: its pattern and environment, shown in the (disabled) inputs; the
    seed stays free."""
    ss = st.session_state
    try:
        fixed_sc = api.Scenario.from_preset(preset, seed=int(ss.get(PB_SEED, 0)))
    except api.SpecError as e:
        msg.add("preset", state.explain(e))
        return None
    ss.update(
        {
            PB_HORIZON: fixed_sc.horizon,
            PB_N_STATES: _n_states(fixed_sc.segments),
            PB_D: fixed_sc.d,
            PB_N_ARMS: fixed_sc.n_arms,
            PB_SIGMA2: float(fixed_sc.sigma2),
            PB_BATCH: state.encode_batch(fixed_sc.batch_size),
        }
    )
    return fixed_sc


def _seasons_inputs(sc: api.Scenario, msg: _Messages) -> tuple[str, api.Scenario | None]:
    """The preset, the number of states and the horizon; the preset chosen, and the scenario
    of a preset from data (None for the others)."""
    ss = st.session_state
    lim = state.APP_LIMITS
    c1, c2, c3 = st.columns(3)
    with c1:
        preset = st.selectbox(
            "Preset",
            list(api.PRESETS) + ["custom"],
            key=PB_PRESET,
            on_change=_on_preset,
            help="\n\n".join(f"**{k}**: {v}" for k, v in PRESET_HELP.items()),
        )
        st.caption(PRESET_HELP[preset])
        msg.where["preset"] = st.empty()
    custom, fixed = preset == "custom", preset in FIXED_PRESETS
    fixed_sc = _fixed_scenario(preset, msg) if fixed else None
    if custom:  # horizon and number of states follow the table
        ss[PB_HORIZON] = sc.horizon
        ss[PB_N_STATES] = min(_n_states(sc.segments), lim["n_states"])
    paper_states = api.preset("paper-synthetic").n_states
    with c2:
        st.slider(
            "Distinct states",
            1,
            lim["n_states"],
            key=PB_N_STATES,
            disabled=custom or fixed or preset == "paper-synthetic",
            help="How many different reward parameters θ the seasons use."
            + (f" Fixed at {paper_states} for paper-synthetic." if not custom else "")
            + (" With custom, it follows the table." if custom else ""),
        )
        msg.where["n_states"] = st.empty()
    with c3:
        st.number_input(
            "Horizon (steps)",
            1,
            lim["horizon"],
            step=500,
            key=PB_HORIZON,
            disabled=custom or fixed,
            help=f"Total number of steps, at most {lim['horizon']:,} "
            f"here. With a preset the segments scale to it; with "
            f"custom it is the sum of the lengths.",
        )
        msg.where["horizon"] = st.empty()
    return preset, fixed_sc


def _segment_rows(preset: str, sc: api.Scenario, fixed_sc, msg: _Messages) -> list[list]:
    """The segment table's rows: the custom draft, the data's pattern, or the preset scaled to
    the horizon and number of states (the scenario's own while those are invalid)."""
    ss = st.session_state
    if preset == "custom":
        return [list(r) for r in ss[PB_TABLE]]
    if preset in FIXED_PRESETS:
        return [list(seg) for seg in (fixed_sc or sc).segments]
    try:
        scaled = api.Scenario.from_preset(preset, horizon=ss[PB_HORIZON], n_states=ss[PB_N_STATES])
    except api.SpecError as e:
        msg.add(state.field_group(e.field), state.explain(e))
        return [list(seg) for seg in sc.segments]
    return [list(seg) for seg in scaled.segments]


def _segment_table(rows: list, msg: _Messages):
    """The segment table (edits make the scenario custom); returns the column beside it."""
    ss = st.session_state
    lim = state.APP_LIMITS
    table_col, preview_col = st.columns([1.25, 2], gap="medium")
    with table_col:
        st.markdown("**Segments** — one row per stretch of steps in one state")
        df = _table_frame(rows)
        key = f"{PB_TABLE_EDITOR}{ss[PB_TABLE_VER]}"
        st.data_editor(
            df,
            key=key,
            num_rows="dynamic",
            hide_index=True,
            on_change=_on_table_edit,
            args=(key, rows),
            height=min(38 + 35 * (len(df) + 1), 420),
            disabled=["starts at"],
            column_config={
                "starts at": st.column_config.NumberColumn("starts at", format="%d", width="small"),
                "state": st.column_config.NumberColumn(
                    "state",
                    min_value=0,
                    max_value=lim["n_states"] - 1,
                    step=1,
                    format="%d",
                    width="small",
                    help="Which reward parameter θ is in force (0, 1, 2, ...).",
                ),
                "length": st.column_config.NumberColumn(
                    "length",
                    step=1,
                    format="%d",
                    width="small",
                    help="Number of steps; at least 1.",
                ),
            },
        )
        st.caption(
            "Edit a cell, add a row at the bottom, or select rows and delete them. "
            "Editing a preset turns it into *custom*."
        )
        msg.where["segments"] = st.empty()
    return preview_col


def _environment_inputs(fixed: bool, msg: _Messages) -> dict:
    """d, K, σ², the batch size and the seed; the values the validator accepts one by one
    (``api.Scenario`` of that field alone), by field."""
    lim = state.APP_LIMITS
    e1, e2, e3, e4, e5 = st.columns(5)
    with e1:
        d = st.slider(
            "Dimension d",
            1,
            lim["d"],
            key=PB_D,
            disabled=fixed,
            help="Length of θ and of every arm's feature vector. "
            "d = 2 unlocks the posterior animation.",
        )
        msg.where["d"] = st.empty()
    with e2:
        n_arms = st.slider(
            "Arms K",
            2,
            lim["n_arms"],
            key=PB_N_ARMS,
            disabled=fixed,
            help="Arms offered at every step (random unit vectors).",
        )
        msg.where["n_arms"] = st.empty()
    with e3:
        sigma2 = st.number_input(
            "Noise σ²",
            min_value=0.0,
            step=0.05,
            format="%g",
            key=PB_SIGMA2,
            disabled=fixed,
            help="Variance of the reward noise; > 0.",
        )
        msg.where["sigma2"] = st.empty()
    with e4:
        batch = st.text_input(
            "Batch size",
            key=PB_BATCH,
            disabled=fixed,
            help="Steps between two updates. A list such as 10, 20, 5 "
            "repeats those (inhomogeneous) batch sizes in turn.",
        )
        msg.where["batch_size"] = st.empty()
    with e5:
        seed = st.number_input(
            "Seed",
            min_value=0,
            step=1,
            key=PB_SEED,
            help="Root of every random stream: same seed, same run.",
        )
        msg.where["seed"] = st.empty()
    fields = dict(d=d, n_arms=n_arms, sigma2=sigma2, seed=seed)
    try:
        fields["batch_size"] = state.decode_batch(batch)
    except api.SpecError as e:
        msg.add("batch_size", state.explain(e))
    for name, value in list(fields.items()):
        try:
            api.Scenario(**{name: value})
        except api.SpecError as e:
            msg.add(name, state.explain(e))
            fields.pop(name)
    return fields


def scenario_files(sc: api.Scenario) -> None:
    """Download the scenario (JSON) or its segment table (CSV), upload either, and show the
    shareable link."""
    ss = st.session_state
    c1, c2 = st.columns([1, 1.3], gap="large")
    with c1:
        st.download_button(
            "Download scenario (JSON)",
            icon=":material/download:",
            data=sc.to_json(),
            file_name="scenario.json",
            mime="application/json",
            on_click="ignore",
            key="pb_download",
        )
        st.download_button(
            "Download segment table (CSV)",
            icon=":material/table:",
            data=sc.to_csv(),
            file_name="segments.csv",
            mime="text/csv",
            on_click="ignore",
            key="pb_download_csv",
        )
        st.caption(
            "Upload either file here again; in Python, "
            '`api.parse_scenario(text, "json")` or `(text, "csv")` reads it.'
        )
    with c2:
        st.file_uploader(
            f"Upload a scenario (JSON) or a segment table (CSV), at most {UPLOAD_MB_TEXT}",
            max_upload_size=api.upload_cap_mb(api.MAX_INPUT_BYTES),
            type=["json", "csv"],
            key=PB_UPLOAD,
            on_change=_on_upload,
            help="**JSON**: a file saved with the download button, or written by "
            'hand: {"segments": [[0, 500], [1, 300]], "d": 5, "n_arms": 5, '
            '"sigma2": 0.1, "batch_size": 1, "seed": 0, "preset": "custom"}. '
            "Fields left out keep their current values.\n\n"
            "**CSV**: a header line `state,length`, then one row per "
            "segment, e.g. `0,500`. It replaces the pattern; the "
            "environment (d, K, σ², batch size, seed) stays.",
        )
        if ss.get(PB_UPLOAD_ERROR):
            st.error(ss[PB_UPLOAD_ERROR], icon=":material/error:")
        elif ss.get(PB_UPLOAD_OK):
            st.success(ss.pop(PB_UPLOAD_OK), icon=":material/check_circle:")
    st.markdown(
        "**Share**: this page's address holds the scenario; copy it from the "
        "browser's address bar. Its parameters:"
    )
    st.code(
        "?" + "&".join(f"{k}={v}" for k, v in state.scenario_to_query(sc).items()),
        language=None,
        wrap_lines=True,
    )
