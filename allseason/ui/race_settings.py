"""The Race page's settings: the contestants, their hyperparameters and the seeds, the Run
button, and a race JSON sent back.

The inputs only collect values; the validator is the engine's (``api.PolicySpec`` for each
contestant's hyperparameters, then :func:`allseason.ui.state.race`: ``api.Race.checked``
within the app's limits), and its message is shown under the input it names. The last valid
settings stay in force.
"""

from __future__ import annotations

import json

import streamlit as st
from streamlit.errors import StreamlitAPIException

from allseason import api
from allseason.viz.text import md

from . import keys, runcache, state
from .frame import UPLOAD_MB_TEXT, errors_here, literal
from .keys import (
    HP,
    PB_RESEED,
    RACE_POLICIES,
    RACE_SEEDS,
    RACE_UPLOAD,
    RACE_UPLOAD_ERROR,
    RACE_UPLOAD_OK,
    SETTINGS_SEEN,
    RaceChoice,
)

AUTO_PARAMS = state.AUTO_PARAMS  # set from the scenario: correct specification


def reset(form_only: bool = False) -> None:
    """The Race page starts again from the session's race settings: its inputs (and, unless
    ``form_only``, the chart picked and the upload's messages) are dropped (keys.reset)."""
    keys.reset(st.session_state, keys.PAGE_RACE, ("form",) if form_only else ("form", "view"))


def _policy_label(name: str) -> str:
    return api.describe_policy(name).title


def _seed_race(choice: RaceChoice) -> None:
    ss = st.session_state
    ss.setdefault(RACE_POLICIES, [p for p in choice.policies if p in api.policy_names()])
    ss.setdefault(RACE_SEEDS, int(choice.n_seeds))


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
    ss[keys.RUN_REQUESTED] = True
    seen = ss.get(SETTINGS_SEEN)
    if seen is not None and seen == _settings_now(seen[2]):
        try:
            st.rerun(state.RACE_SECTION)
        except StreamlitAPIException:  # the section was not drawn yet: the whole page runs
            pass


def race_settings() -> api.Race | None:
    """Render the race settings and the Run button (:func:`request_run`); return the race,
    or None if a setting is invalid (the validator's message is under the setting)."""
    choice = state.race_choice()
    _seed_race(choice)
    names, n_seeds, slots = _contestants()
    params, widget_keys = _hyperparameters(names, choice, slots)
    st.button("▶ Run race", type="primary", key="race_run", on_click=request_run)
    lim = state.APP_LIMITS
    st.caption(
        f"Limits in this app: horizon ≤ {lim['horizon']:,} steps, ≤ {lim['n_seeds']} "
        f"seeds, ≤ {lim['n_policies']} policies, and horizon × seeds × policies ≤ "
        f"{lim['budget']:,}. Larger runs: use the Python API (`allseason.api`). "
        f"The server is shared: at most {runcache.MAX_CONCURRENT} races compute at once; "
        f"yours starts when a slot frees up."
    )
    new_choice = RaceChoice(names, choice.params, int(n_seeds))
    return _checked(new_choice, params, slots, widget_keys)


def _contestants() -> tuple[list[str], int, dict]:
    """The policies and seeds inputs: the names and the number of seeds chosen, and the slots
    for the messages about them (``policies``, ``n_seeds``)."""
    lim = state.APP_LIMITS
    c1, c2 = st.columns([4, 1], gap="medium")
    with c1:
        names = st.multiselect(
            "Policies",
            api.policy_names(),
            key=RACE_POLICIES,
            format_func=_policy_label,
            max_selections=lim["n_policies"],
            help="Every policy plays the same arms and noise (common random numbers).\n\n"
            + "\n".join(
                f"- **{_policy_label(n)}** (`{n}`): {api.describe_policy(n).help}"
                for n in api.policy_names()
            ),
        )
        slots = {"policies": st.empty()}
        for message in state.link_race_errors():
            st.error(md(message), icon=":material/link_off:")
    with c2:
        n_seeds = st.slider(
            "Seeds",
            1,
            lim["n_seeds"],
            key=RACE_SEEDS,
            help="Independent repetitions; bands and intervals are over seeds.",
        )
        slots["n_seeds"] = st.empty()
    return names, n_seeds, slots


def _shown_defaults(name: str) -> dict:
    """The hyperparameters of ``name`` the form offers, with their default-race values."""
    return {
        k: v
        for k, v in state.policy_defaults(name).items()
        if k not in AUTO_PARAMS and v is not None
    }


def _hyperparameters(names: list[str], choice: RaceChoice, slots: dict) -> tuple[dict, list[str]]:
    """The hyperparameters' inputs, one row per policy that has any (its message slot in
    ``slots[name]``); the values by policy, and the keys of every settings widget drawn."""
    params: dict[str, dict] = {}
    drawn = [RACE_POLICIES, RACE_SEEDS]  # the settings' widgets drawn in this run
    with st.expander("Hyperparameters", expanded=False):
        st.caption(
            "Every policy uses the scenario's noise σ² (a correctly specified model). "
            "Hover a ? for what a hyperparameter does."
        )
        for name in names:
            defaults = _shown_defaults(name)
            saved = choice.params.get(name, {})
            params[name] = {}
            if not defaults:
                continue
            st.markdown(f"**{_policy_label(name)}** · `{name}`")
            cols = st.columns(max(len(defaults), 6))
            for col, (param, default) in zip(cols, defaults.items()):
                with col:
                    value = saved.get(param, default)
                    if isinstance(default, float) and isinstance(value, int):
                        value = float(value)
                    key = f"{HP}{name}_{param}"
                    params[name][param] = _param_input(name, param, value, key)
                    drawn.append(key)
            slots[name] = st.empty()
    return params, drawn


def _checked(choice: RaceChoice, params: dict, slots: dict, keys: list[str]) -> api.Race | None:
    """The settings through the validator: each contestant's hyperparameters ``params``
    (``api.PolicySpec``), then the race of those specs (``api.Race.checked``, the app's
    limits; no value checked twice); every message under its input.
    The valid settings become the session's; the race, or None."""
    sc = state.scenario()
    names = choice.policies
    for name in names:  # policies that take the scenario's horizon get it
        if "horizon" in api.hyperparameters(name):
            params[name]["horizon"] = sc.horizon
    valid, specs, bad = {}, [], False
    for name in names:
        try:  # the one check of these values: the race below is made of these specs
            given = {k: v for k, v in params[name].items() if v is not None}
            specs.append(api.PolicySpec(name, given))
            valid[name] = params[name]
        except api.SpecError as e:
            bad = True
            errors_here(slots.get(name, slots["policies"]), [state.explain(e)])
    # only valid hyperparameters are kept: a page revisit starts from the last good ones
    new_choice = RaceChoice(choice.policies, {**choice.params, **valid}, choice.n_seeds)
    state.set_race_choice(new_choice)
    st.session_state[SETTINGS_SEEN] = _settings_now(keys)
    if bad:
        return None
    try:
        return api.Race.checked(sc, specs, new_choice.n_seeds, state.APP_LIMITS)
    except api.SpecError as e:
        errors_here(slots.get(e.field, slots["policies"]), [state.explain(e)])
        return None


# --- a race JSON sent back ------------------------------------------------------------------


def race_as_choice(race: api.Race) -> RaceChoice:
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
    return RaceChoice(names, params, race.n_seeds)


def _on_race_upload() -> None:
    """file_uploader callback: a valid race JSON becomes the scenario and race settings."""
    ss = st.session_state
    up = ss.get(RACE_UPLOAD)
    ss.pop(RACE_UPLOAD_ERROR, None)
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
        race = api.Race.from_dict(data, state.APP_LIMITS)  # the validator, the app's limits
        choice = race_as_choice(race)
    except api.SpecError as e:
        ss[RACE_UPLOAD_ERROR] = literal(f"{failed} {state.explain(e)}.")
        return
    except Exception as e:
        ss[RACE_UPLOAD_ERROR] = literal(f"{failed} ({type(e).__name__}: {str(e)[:120]})")
        return
    reset(form_only=True)  # the inputs are seeded again, from the race loaded
    state.set_race_choice(choice)
    state.set_scenario(race.scenario)
    ss[PB_RESEED] = True  # the Pattern builder's inputs follow the new scenario
    ss[RACE_UPLOAD_OK] = literal(
        f"Loaded {name}: {len(choice.policies)} policies, {choice.n_seeds} seeds, and its scenario."
    )


def race_upload() -> None:
    """Upload a race JSON (the "Race JSON" download) to set the scenario and the race."""
    ss = st.session_state
    error, ok = ss.get(RACE_UPLOAD_ERROR), ss.pop(RACE_UPLOAD_OK, None)
    with st.expander("Load a race (JSON)", icon=":material/upload:", expanded=bool(error or ok)):
        st.file_uploader(
            f"A race JSON saved with the **Race JSON** button, at most {UPLOAD_MB_TEXT}",
            max_upload_size=api.upload_cap_mb(api.MAX_INPUT_BYTES),
            type=["json"],
            key=RACE_UPLOAD,
            on_change=_on_race_upload,
            help="It sets the scenario, the policies, their hyperparameters "
            "and the number of seeds; then press ▶ Run race (a race "
            "already computed on this server is shown at once).",
        )
        if error:
            st.error(error, icon=":material/error:")
        elif ok:
            st.success(ok, icon=":material/check_circle:")
