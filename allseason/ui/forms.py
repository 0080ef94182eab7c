"""Input forms: the scenario builder and the race settings.

Each form seeds its widgets from the canonical state (:mod:`allseason.ui.state`), reads them,
validates through ``allseason.api`` (``parse_scenario`` for whole scenarios and uploaded files,
``Scenario`` and ``PolicySpec`` for single fields: every bad value raises a ``SpecError``
naming its field) and writes the result back. A rejected value is reported with
``st.error`` directly under the input it came from; the last valid settings stay in force.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from allseason import api, limits
from allseason.viz.text import md

from . import runs, state

PRESET_HELP = {
    "paper-synthetic": "The paper's section 5 experiment: 4 states, 8 change points "
    "(10,000 steps unless you change the horizon).",
    "regular": "Few long seasons: every state in turn, each twice.",
    "realistic": "A long usual state interrupted by short events and medium seasons.",
    "extreme": "Fifty short periods: e.g. day and night.",
    "seattle-weather": "Real days: Seattle 2012-2015, a shop with 10 customers a day and 5 "
    "products; the states are the weather regimes (mild & dry, warm & dry, "
    "wet, cold). Pattern, d, K, σ² and batch size are fixed by the data.",
    "custom": "Edit the table of (state, length) segments freely.",
}
FIXED_PRESETS = ("seattle-weather",)  # the data fix the pattern and the environment

AUTO_PARAMS = ("sigma2", "horizon")  # set from the scenario: correct specification
UPLOAD_MB_TEXT = f"{api.MAX_INPUT_BYTES / 1e6:g} MB"  # a scenario or race file: 1 MB


def _errors_here(placeholder, messages):
    if messages:
        with placeholder.container():
            for m in messages:
                st.error(md(m), icon=":material/error:")


def _n_states(segments) -> int:
    return max(int(s) for s, _ in segments) + 1


# --- scenario builder -----------------------------------------------------------------------
def _seed_builder(sc: api.Scenario, force: bool = False) -> None:
    """Set the builder's widgets (and the segment table's draft) from the scenario: when the
    page is opened (its widget values were dropped when it was left) or when forced."""
    ss = st.session_state
    fresh = force or "pb_preset" not in ss
    values = {
        "pb_preset": sc.preset,
        "pb_n_states": min(_n_states(sc.segments), state.APP_LIMITS["n_states"]),
        "pb_horizon": sc.horizon,
        "pb_d": sc.d,
        "pb_n_arms": sc.n_arms,
        "pb_sigma2": float(sc.sigma2),
        "pb_seed": int(sc.seed),
        "pb_batch": state.encode_batch(sc.batch_size).replace("_", ", "),
    }
    for key, value in values.items():
        if force or key not in ss:
            ss[key] = value
    if fresh or "pb_table" not in ss:
        _set_draft([list(seg) for seg in sc.segments])


def _set_draft(rows: list) -> None:
    """The custom segment table's rows; a new editor (key) so no stale edit is re-applied."""
    ss = st.session_state
    ss["pb_table"] = rows
    ss["pb_table_ver"] = ss.get("pb_table_ver", 0) + 1


def _on_preset() -> None:
    """Choosing *custom* starts the table from the scenario in force."""
    if st.session_state.get("pb_preset") == "custom":
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
    ss["pb_preset"] = "custom"


def _literal(text: str) -> str:
    """Text a user sent (a file name, a cell) shown as itself, not as Markdown/LaTeX."""
    return md(text)


def _on_upload() -> None:
    """file_uploader callback (runs before the script): apply a valid JSON scenario or CSV
    segment table; a bad file leaves the pattern as it is and says why."""
    ss = st.session_state
    up = ss.get("pb_upload")
    ss.pop("pb_upload_error", None)
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
            check=state.check_app_limits,
        )
    except api.SpecError as e:
        ss["pb_upload_error"] = _literal(
            f"{name} was not loaded; the pattern was not changed. {state.explain(e)}"
        )
        return
    except Exception as e:
        ss["pb_upload_error"] = _literal(
            f"{name} was not loaded; the pattern was not changed ({type(e).__name__})."
        )
        return
    ss[state.SCENARIO] = sc
    ss.pop(state.URL_ERRORS, None)
    _seed_builder(sc, force=True)
    ss["pb_upload_ok"] = _literal(f"Loaded {name}.")


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

    A valid change becomes the session's scenario (and goes to the URL); an invalid one is
    reported under its input and the previous scenario stays."""
    ss = st.session_state
    sc = state.scenario()
    _seed_builder(sc, force=ss.pop("pb_reseed", False))
    lim = state.APP_LIMITS
    where: dict[str, object] = {}
    errors: dict[str, list[str]] = {}

    st.subheader("1 · Seasons")
    c1, c2, c3 = st.columns(3)
    with c1:
        presets = list(api.PRESETS) + ["custom"]
        preset = st.selectbox(
            "Preset",
            presets,
            key="pb_preset",
            on_change=_on_preset,
            help="\n\n".join(f"**{k}**: {v}" for k, v in PRESET_HELP.items()),
        )
        st.caption(PRESET_HELP[preset])
        where["preset"] = st.empty()
    custom = preset == "custom"
    fixed = preset in FIXED_PRESETS
    fixed_sc = None
    if fixed:  # the data's pattern and environment: shown, not editable (seed stays free)
        try:
            fixed_sc = api.Scenario.from_preset(preset, seed=int(ss.get("pb_seed", 0)))
        except api.SpecError as e:
            errors.setdefault("preset", []).append(state.explain(e))
        if fixed_sc is not None:
            ss.update(
                pb_horizon=fixed_sc.horizon,
                pb_n_states=_n_states(fixed_sc.segments),
                pb_d=fixed_sc.d,
                pb_n_arms=fixed_sc.n_arms,
                pb_sigma2=float(fixed_sc.sigma2),
                pb_batch=state.encode_batch(fixed_sc.batch_size),
            )
    if custom:  # horizon and number of states follow the table
        ss["pb_horizon"] = sc.horizon
        ss["pb_n_states"] = min(_n_states(sc.segments), lim["n_states"])
    with c2:
        n_states = st.slider(
            "Distinct states",
            1,
            lim["n_states"],
            key="pb_n_states",
            disabled=custom or fixed or preset == "paper-synthetic",
            help="How many different reward parameters θ the seasons use."
            + (" Fixed at 4 for paper-synthetic." if not custom else "")
            + (" With custom, it follows the table." if custom else ""),
        )
        where["n_states"] = st.empty()
    with c3:
        horizon = st.number_input(
            "Horizon (steps)",
            1,
            lim["horizon"],
            step=500,
            key="pb_horizon",
            disabled=custom or fixed,
            help=f"Total number of steps, at most {lim['horizon']:,} "
            f"here. With a preset the segments scale to it; with "
            f"custom it is the sum of the lengths.",
        )
        where["horizon"] = st.empty()

    if custom:
        rows = [list(r) for r in ss["pb_table"]]
    elif fixed:
        rows = [list(seg) for seg in (fixed_sc or sc).segments]
    else:
        rows = [list(seg) for seg in sc.segments]
        try:
            rows = [
                list(seg)
                for seg in api.Scenario.from_preset(
                    preset, horizon=horizon, n_states=n_states
                ).segments
            ]
        except api.SpecError as e:
            errors.setdefault(state.field_group(e.field), []).append(state.explain(e))

    table_col, preview_col = st.columns([1.25, 2], gap="medium")
    with table_col:
        st.markdown("**Segments** — one row per stretch of steps in one state")
        df = _table_frame(rows)
        key = f"pb_table_editor_{ss['pb_table_ver']}"
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
        where["segments"] = st.empty()
    segs, empty_cells = _table_segments(rows)
    if empty_cells:
        errors.setdefault("segments", []).extend(empty_cells)

    st.subheader("2 · Environment")
    e1, e2, e3, e4, e5 = st.columns(5)
    with e1:
        d = st.slider(
            "Dimension d",
            1,
            lim["d"],
            key="pb_d",
            disabled=fixed,
            help="Length of θ and of every arm's feature vector. "
            "d = 2 unlocks the posterior animation.",
        )
        where["d"] = st.empty()
    with e2:
        n_arms = st.slider(
            "Arms K",
            2,
            lim["n_arms"],
            key="pb_n_arms",
            disabled=fixed,
            help="Arms offered at every step (random unit vectors).",
        )
        where["n_arms"] = st.empty()
    with e3:
        sigma2 = st.number_input(
            "Noise σ²",
            min_value=0.0,
            step=0.05,
            format="%g",
            key="pb_sigma2",
            disabled=fixed,
            help="Variance of the reward noise; > 0.",
        )
        where["sigma2"] = st.empty()
    with e4:
        batch = st.text_input(
            "Batch size",
            key="pb_batch",
            disabled=fixed,
            help="Steps between two updates. A list such as 10, 20, 5 "
            "repeats those (inhomogeneous) batch sizes in turn.",
        )
        where["batch_size"] = st.empty()
    with e5:
        seed = st.number_input(
            "Seed",
            min_value=0,
            step=1,
            key="pb_seed",
            help="Root of every random stream: same seed, same run.",
        )
        where["seed"] = st.empty()

    fields = dict(d=d, n_arms=n_arms, sigma2=sigma2, seed=seed)
    try:
        fields["batch_size"] = state.decode_batch(batch)
    except api.SpecError as e:
        errors.setdefault("batch_size", []).append(state.explain(e))
    for name, value in list(fields.items()):
        try:
            api.Scenario(**{name: value})
        except api.SpecError as e:
            errors.setdefault(name, []).append(state.explain(e))
            fields.pop(name)
    candidate = None
    if not errors:
        try:
            candidate = api.parse_scenario(
                dict(segments=segs, preset=preset, **fields), "dict", check=state.check_app_limits
            )
        except api.SpecError as e:
            group = state.field_group(e.field)
            if custom and group == "horizon":
                group = "segments"
            errors.setdefault(group, []).append(state.explain(e))
    for group, messages in errors.items():
        _errors_here(where.get(group, where["segments"]), messages)
    if candidate is not None:
        state.set_scenario(candidate)
        return candidate, preview_col
    state.sync_url()
    with preview_col:
        st.warning(
            "The preview shows the last valid scenario; fix the input marked with an "
            "error to update it.",
            icon=":material/undo:",
        )
    return sc, preview_col


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
            type=["json", "csv"],
            key="pb_upload",
            max_upload_size=limits.upload_cap_mb(api.MAX_INPUT_BYTES),
            on_change=_on_upload,
            help="**JSON**: a file saved with the download button, or written by "
            'hand: {"segments": [[0, 500], [1, 300]], "d": 5, "n_arms": 5, '
            '"sigma2": 0.1, "batch_size": 1, "seed": 0, "preset": "custom"}. '
            "Fields left out keep their current values.\n\n"
            "**CSV**: a header line `state,length`, then one row per "
            "segment, e.g. `0,500`. It replaces the pattern; the "
            "environment (d, K, σ², batch size, seed) stays.",
        )
        if ss.get("pb_upload_error"):
            st.error(ss["pb_upload_error"], icon=":material/error:")
        elif ss.get("pb_upload_ok"):
            st.success(ss.pop("pb_upload_ok"), icon=":material/check_circle:")
    st.markdown(
        "**Share**: this page's address holds the scenario; copy it from the "
        "browser's address bar. Its parameters:"
    )
    st.code(
        "?" + "&".join(f"{k}={v}" for k, v in state.scenario_to_query(sc).items()),
        language=None,
        wrap_lines=True,
    )


# --- race settings --------------------------------------------------------------------------
def _policy_label(name: str) -> str:
    return api.describe_policy(name).title


def _seed_race(choice: dict) -> None:
    ss = st.session_state
    ss.setdefault("race_policies", [p for p in choice["policies"] if p in api.policy_names()])
    ss.setdefault("race_seeds", int(choice["n_seeds"]))


def _param_input(name: str, param: str, value, key: str):
    """One hyperparameter input, chosen by its declaration (choices, lower bound, help) and
    the type of its default."""
    ss = st.session_state
    if key not in ss:
        ss[key] = value
    declared = api.describe_policy(name).params.get(param)
    help_ = declared.help if declared is not None else None
    low = declared.low if declared is not None else None
    if isinstance(value, bool):
        return st.checkbox(param, key=key, help=help_)
    if declared is not None and declared.choices and isinstance(value, str):
        return st.selectbox(param, declared.choices, key=key, help=help_)
    if isinstance(value, int):
        return st.number_input(
            param, min_value=int(low) if low is not None else None, step=1, key=key, help=help_
        )
    if isinstance(value, float):
        step = 0.01 if 0 < value < 1 else 0.1
        return st.number_input(
            param,
            min_value=float(low) if low is not None else None,
            step=step,
            format="%g",
            key=key,
            help=help_,
        )
    return st.text_input(param, key=key, help=help_)


SETTINGS_SEEN = "race_settings_seen"  # the settings as the page's last full run saw them


def _settings_now(keys) -> tuple:
    """The scenario, the race choice and the values of the settings' widgets ``keys``, as
    they are now."""
    ss = st.session_state
    return ss.get(state.SCENARIO), ss.get(state.RACE_CHOICE), {k: ss.get(k) for k in keys}


def request_run() -> None:
    """The Run button's callback: ask for the race. When no setting changed since the page's
    last full run (the race that run built is the one to run), only the results section
    (the fragment ``state.RACE_SECTION``) reruns: the settings, the timeline and the rest of
    the page are not redrawn. A setting changed in the same interaction (a number typed, then
    the button pressed at once) reruns the whole page, so the race is built from it."""
    ss = st.session_state
    ss[state.RUN_REQUESTED] = True
    seen = ss.get(SETTINGS_SEEN)
    if seen is not None and seen == _settings_now(seen[2]):
        try:
            st.rerun(state.RACE_SECTION)
        except StreamlitAPIException:  # the section was not drawn yet: the whole page runs
            pass


def race_settings() -> api.Race | None:
    """Render the race settings and the Run button (:func:`request_run`); return the race,
    or None if a setting is invalid (the message is under the setting)."""
    lim = state.APP_LIMITS
    choice = state.race_choice()
    _seed_race(choice)
    sc = state.scenario()
    c1, c2 = st.columns([4, 1], gap="medium")
    with c1:
        names = st.multiselect(
            "Policies",
            api.policy_names(),
            key="race_policies",
            format_func=_policy_label,
            max_selections=lim["n_policies"],
            help="Every policy plays the same arms and noise (common random numbers).\n\n"
            + "\n".join(
                f"- **{_policy_label(n)}** (`{n}`): {api.describe_policy(n).help}"
                for n in api.policy_names()
            ),
        )
        policies_error = st.empty()
        for message in state.link_race_errors():
            st.error(md(message), icon=":material/link_off:")
    with c2:
        n_seeds = st.slider(
            "Seeds",
            1,
            lim["n_seeds"],
            key="race_seeds",
            help="Independent repetitions; bands and intervals are over seeds.",
        )
        seeds_error = st.empty()
    params: dict[str, dict] = {}
    param_errors: dict[str, object] = {}
    keys = ["race_policies", "race_seeds"]  # the settings' widgets drawn in this run
    shown = [
        n
        for n in names
        if any(p not in AUTO_PARAMS and v is not None for p, v in state.policy_defaults(n).items())
    ]
    with st.expander("Hyperparameters", expanded=False):
        st.caption(
            "Every policy uses the scenario's noise σ² (a correctly specified model). "
            "Hover a ? for what a hyperparameter does."
        )
        for name in names:
            defaults = {
                k: v
                for k, v in state.policy_defaults(name).items()
                if k not in AUTO_PARAMS and v is not None
            }
            saved = choice["params"].get(name, {})
            params[name] = {}
            if name not in shown:
                continue
            st.markdown(f"**{_policy_label(name)}** · `{name}`")
            cols = st.columns(max(len(defaults), 6))
            for col, (param, default) in zip(cols, defaults.items()):
                with col:
                    value = saved.get(param, default)
                    if isinstance(default, float) and isinstance(value, int):
                        value = float(value)
                    params[name][param] = _param_input(name, param, value, f"hp_{name}_{param}")
                    keys.append(f"hp_{name}_{param}")
            param_errors[name] = st.empty()
    st.button("▶ Run race", type="primary", key="race_run", on_click=request_run)
    st.caption(
        f"Limits in this app: horizon ≤ {lim['horizon']:,} steps, ≤ {lim['n_seeds']} "
        f"seeds, ≤ {lim['n_policies']} policies, and horizon × seeds × policies ≤ "
        f"{lim['budget']:,}. Larger runs: use the Python API (`allseason.api`). "
        f"The server is shared: at most {runs.MAX_CONCURRENT} races compute at once; "
        f"yours starts when a slot frees up."
    )
    for name in names:  # policies that take the scenario's horizon get it
        if "horizon" in api.hyperparameters(name):
            params[name]["horizon"] = sc.horizon
    valid, bad = {}, False
    for name in names:
        try:
            api.PolicySpec(name, params[name])
            valid[name] = params[name]
        except api.SpecError as e:
            bad = True
            _errors_here(param_errors.get(name, policies_error), [state.explain(e)])
    # only valid hyperparameters are kept: a page revisit starts from the last good ones
    new_choice = {
        "policies": list(names),
        "n_seeds": int(n_seeds),
        "params": {**choice["params"], **valid},
    }
    state.set_race_choice(new_choice)
    state.sync_url()  # the link holds the race settings too
    st.session_state[SETTINGS_SEEN] = _settings_now(keys)
    if bad:
        return None
    try:
        return state.race(new_choice, sc)
    except api.SpecError as e:
        target = seeds_error if e.field == "n_seeds" else policies_error
        _errors_here(target, [state.explain(e)])
        return None


# --- a race JSON sent back ------------------------------------------------------------------
RACE_UPLOAD = "race_upload"


def race_as_choice(race: api.Race) -> dict:
    """The Race page's settings for ``race``; SpecError("race", ...) if the form cannot show
    it: the form has one contestant per policy, named by the policy, and every policy
    takes the scenario's σ² (and horizon)."""
    names = [p.name for p in race.policies]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise api.SpecError(
            "race",
            f"it has two contestants of the policy {twice[0]}; the "
            f"Race page runs each policy once. Run this race with "
            f"the Python API: api.Race.from_dict(json.load(file))",
        )
    params = {}
    sc = race.scenario
    for p in race.policies:
        if p.label != p.name:
            raise api.SpecError(
                "race",
                f"its contestant “{p.label[:40]}” is labelled "
                f"differently from its policy {p.name}; the Race "
                f"page names each contestant by its policy. Rename "
                f"it to “{p.name}”, or use the Python API",
            )
        given = dict(p.params)
        for auto, value in (("sigma2", sc.sigma2), ("horizon", sc.horizon)):
            if auto in given and (mine := given.pop(auto)) != value:
                raise api.SpecError(
                    "race",
                    f"{p.name} has {auto} = {mine}, but here "
                    f"every policy takes the scenario's {auto} "
                    f"({value}); use the Python API",
                )
        defaults = {
            k: v
            for k, v in api.hyperparameters(p.name).items()
            if k not in AUTO_PARAMS and v is not None
        }
        extra = sorted(set(given) - set(state.policy_defaults(p.name)))
        if extra:
            raise api.SpecError(
                "race",
                f"{p.name} sets {extra[0]}, which the Race page does not offer; use the Python API",
            )
        params[p.name] = {
            k: given.get(k, defaults.get(k))
            for k in state.policy_defaults(p.name)
            if k not in AUTO_PARAMS
        }
    return {"policies": names, "n_seeds": race.n_seeds, "params": params}


def _on_race_upload() -> None:
    """file_uploader callback: a valid race JSON becomes the scenario and race settings."""
    import json

    ss = st.session_state
    up = ss.get(RACE_UPLOAD)
    ss.pop("race_upload_error", None)
    if up is None:
        return
    name = str(up.name)[-80:]
    failed = f"{name} was not loaded; the settings were not changed."
    try:
        if up.size > api.MAX_INPUT_BYTES:
            raise api.SpecError(
                "file",
                f"is {up.size:,} bytes; at most {api.MAX_INPUT_BYTES:,} bytes ({UPLOAD_MB_TEXT})",
            )
        try:
            data = json.loads(up.getvalue().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise api.SpecError("file", f"is not JSON text ({str(e)[:80]})") from None
        race = api.Race.from_dict(data)
        sc = state.check_app_limits(race.scenario)
        choice = race_as_choice(race)
        state.race(choice, sc)  # this app's limits on seeds, policies and work
    except api.SpecError as e:
        ss["race_upload_error"] = _literal(f"{failed} {state.explain(e)}.")
        return
    except Exception as e:
        ss["race_upload_error"] = _literal(f"{failed} ({type(e).__name__}: {str(e)[:120]})")
        return
    for key in [k for k in ss if str(k).startswith(("race_policies", "race_seeds", "hp_"))]:
        del ss[key]
    state.set_race_choice(choice)
    state.set_scenario(sc)
    ss["pb_reseed"] = True  # the Pattern builder's inputs follow the new scenario
    ss["race_upload_ok"] = _literal(
        f"Loaded {name}: {len(choice['policies'])} policies, "
        f"{choice['n_seeds']} seeds, and its scenario."
    )


def race_upload() -> None:
    """Upload a race JSON (the "Race JSON" download) to set the scenario and the race."""
    ss = st.session_state
    error, ok = ss.get("race_upload_error"), ss.pop("race_upload_ok", None)
    with st.expander("Load a race (JSON)", icon=":material/upload:", expanded=bool(error or ok)):
        st.file_uploader(
            f"A race JSON saved with the **Race JSON** button, at most {UPLOAD_MB_TEXT}",
            type=["json"],
            key=RACE_UPLOAD,
            max_upload_size=limits.upload_cap_mb(api.MAX_INPUT_BYTES),
            on_change=_on_race_upload,
            help="It sets the scenario, the policies, their hyperparameters "
            "and the number of seeds; then press ▶ Run race (a race "
            "already computed on this server is shown at once).",
        )
        if error:
            st.error(error, icon=":material/error:")
        elif ok:
            st.success(ok, icon=":material/check_circle:")
