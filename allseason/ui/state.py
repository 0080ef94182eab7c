"""Canonical app state: the scenario and the race choice, kept across pages and in the URL.

Streamlit drops a widget's value when its page is left, so the truth lives in two
non-widget keys of ``st.session_state``:

- ``SCENARIO`` holds a validated :class:`allseason.api.Scenario`;
- ``RACE_CHOICE`` holds the race settings as plain data (policy names, their
  hyperparameters, number of seeds), turned into an ``api.Race`` by :func:`race`.

Widgets are seeded from these keys when they are (re)created and write back to them after
validation. The scenario is also written to the page URL (``st.query_params``) on every page,
so a copied link reproduces it: ``?preset=regular&horizon=5000&n_states=3&d=5&...``, or for a
hand-made pattern ``?preset=custom&segments=0x1500_1x1000_0x800&...`` (state ``x`` length,
joined by ``_``). A link is read once, when a session starts; every parameter it holds is
checked on its own, so one bad value is reported by name and the others still apply.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import streamlit as st

from allseason import api, limits, links
from allseason.specs import Rejected

SCENARIO = "scenario"
RACE_CHOICE = "race_choice"
URL_ERRORS = "url_errors"
LAST_RACE = "last_race"  # Race.to_json() of the race the Race page ran or showed last
AUTORUN = "autorun"  # set by Home's button: the Race page runs on arrival
RUN_REQUESTED = "run_requested"  # set by the Race page's Run button: its results section runs it
RACE_SECTION = "race_section"  # the key of the Race page's results fragment (st.fragment)

# What one session may ask of this app; tighter than api.LIMITS (both in allseason/limits.py).
APP_LIMITS = limits.APP_LIMITS

SCENARIO_FIELDS = links.QUERY_FIELDS  # the parameters of a link
# The race settings in a link: ``policies=lints,sw-lints``, ``n_seeds=3`` and one
# ``<policy>.<hyperparameter>=value`` per hyperparameter that differs from its default;
# each is written only when it differs from the default race, to keep links short.
RACE_FIELDS = ("policies", "n_seeds")
# Inside All-Season's view, contestant and seed (written by that page only).
INSIDE_FIELDS = ("view", "contestant", "inside_seed")
LINK_RACE_ERRORS = "link_race_errors"  # (messages, the choice they were about)
LINK_INSIDE = "link_inside"  # Inside's settings from the link, not applied yet
AUTO_PARAMS = ("sigma2", "horizon")  # set from the scenario, never in a link

LABELS = {
    "preset": "Preset",
    "segments": "Segments",
    "horizon": "Horizon",
    "n_states": "Distinct states",
    "d": "Dimension d",
    "n_arms": "Arms K",
    "sigma2": "Noise σ²",
    "batch_size": "Batch size",
    "seed": "Seed",
    "n_seeds": "Seeds",
    "policies": "Policies",
    "file": "File",
    "scenario": "Scenario",
    "race": "Race",
    "query": "Parameters",
}


# --- messages -------------------------------------------------------------------------------
def field_group(field: str) -> str:
    """The input a SpecError field belongs to: 'segments[3].length' -> 'segments'."""
    return field.split("[", 1)[0].split(".", 1)[0] if field.startswith("segments") else field


def explain(err: api.SpecError) -> str:
    """A SpecError as a sentence a newcomer can act on, naming the input."""
    field = getattr(err, "field", "")
    message = str(err)
    if field and message.startswith(field + ": "):
        message = message[len(field) + 2 :]
    got = getattr(err, "got", None)
    if (field == "horizon" or field.endswith(".length")) and got is not None:
        if got > APP_LIMITS["horizon"]:  # quote this app's limit, not the engine's
            message = (
                f"this app runs at most {APP_LIMITS['horizon']:,} steps in all, got "
                f"{got:,}; use the Python API for longer runs"
            )
        elif got < 1:
            message = f"must be at least 1 step, got {got}"
    if field == "policies" and isinstance(got, int) and got > APP_LIMITS["n_policies"]:
        message = f"at most {APP_LIMITS['n_policies']} policies in this app, got {got}"
    if field.startswith("segments["):
        idx, _, part = field[len("segments[") :].partition("]")
        part = part.lstrip(".")
        label = f"Segment {idx}" + (f", {part}" if part else "")
    elif "." in field and field.split(".", 1)[0] in api.policy_names():
        name, param = field.split(".", 1)
        label = f"{name}, {param}"
    else:
        label = LABELS.get(field, field or "Input")
    return f"{label}: {message}"


def check_app_limits(scenario: api.Scenario) -> api.Scenario:
    """Raise SpecError if the scenario is valid for the engine but too big for this app."""
    lim = APP_LIMITS
    if scenario.horizon > lim["horizon"]:
        raise api.SpecError(
            "horizon",
            f"this app runs at most {lim['horizon']:,} steps "
            f"(got {scenario.horizon:,}); use the Python API "
            f"for longer runs",
        )
    if len(scenario.segments) > lim["n_segments"]:
        raise api.SpecError("segments", f"this app takes at most {lim['n_segments']} segments")
    n_states = max(s for s, _ in scenario.segments) + 1
    if n_states > lim["n_states"]:
        raise api.SpecError(
            "segments",
            f"states are numbered 0 to {lim['n_states'] - 1} in "
            f"this app (got state {n_states - 1})",
        )
    for name in ("d", "n_arms"):
        if getattr(scenario, name) > lim[name]:
            raise api.SpecError(
                name, f"at most {lim[name]} in this app, got {getattr(scenario, name)}"
            )
    sizes = (
        scenario.batch_size if isinstance(scenario.batch_size, tuple) else (scenario.batch_size,)
    )
    if max(sizes) > lim["batch_size"]:
        raise api.SpecError("batch_size", f"at most {lim['batch_size']:,} in this app")
    return scenario


# --- URL encoding ---------------------------------------------------------------------------
# The parsing and decoding are the engine's (api.parse_scenario, kind "query"); this module
# keeps the wording of the messages and the app's limits. Re-exported for the forms and views.
encode_batch, decode_batch = links.encode_batch, links.decode_batch


def scenario_to_query(scenario: api.Scenario) -> dict[str, str]:
    """URL parameters that rebuild ``scenario`` exactly (short form for untouched presets)."""
    return scenario.to_query()


def _cut(value, n: int = 60) -> str:
    text = str(value)
    return text if len(text) <= n else text[:n] + "…"


def _link_message(r: Rejected) -> str:
    if r.param is None:
        return f"Link: {explain(r.error)}. The pattern was not changed."
    if r.param not in SCENARIO_FIELDS:
        known = SCENARIO_FIELDS + RACE_FIELDS + INSIDE_FIELDS + ("<policy>.<hyperparameter>",)
        return (
            f"Link parameter “{_cut(r.param, 40)}” is not known and was ignored "
            f"(known: {', '.join(known)})."
        )
    return f"Link parameter “{r.param}={_cut(r.value)}”: {explain(r.error)}"


def scenario_from_query(
    query: Mapping[str, str], base: api.Scenario | None = None
) -> tuple[api.Scenario, list[str]]:
    """Rebuild a scenario from URL parameters, checking each on its own
    (``api.parse_scenario(query, "query", rejected=[...])`` with this app's limits).

    Returns the scenario (``base`` or the default where nothing usable was given) and the
    list of messages about the parameters that were not used."""
    rejected: list[Rejected] = []
    sc = api.parse_scenario(
        query, "query", defaults=base, check=check_app_limits, rejected=rejected
    )
    return sc, [_link_message(r) for r in rejected]


# --- the race settings and Inside's view in a link --------------------------------------------
def _is_race_param(key: str) -> bool:
    return key in RACE_FIELDS or ("." in key and key.split(".", 1)[0] in api.policy_names())


def race_to_query(choice: dict) -> dict[str, str]:
    """Link parameters for the race settings that differ from the default race."""
    default = default_choice()
    out: dict[str, str] = {}
    if list(choice["policies"]) != default["policies"]:
        out["policies"] = ",".join(choice["policies"])
    if choice["n_seeds"] != default["n_seeds"]:
        out["n_seeds"] = str(choice["n_seeds"])
    for name in choice["policies"]:
        defaults = policy_defaults(name)
        for param, value in sorted(choice["params"].get(name, {}).items()):
            if param in AUTO_PARAMS or param not in defaults or value is None:
                continue
            default_value = defaults[param]
            if value == default_value and isinstance(value, bool) == isinstance(
                default_value, bool
            ):
                continue
            out[f"{name}.{param}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def _param_value(text: str, default):
    """A hyperparameter's link text as the type of its default; ValueError if it is not."""
    text = str(text).strip()
    if isinstance(default, bool):
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError("must be true or false")
        return text.lower() in ("true", "1")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"must be a whole number, got “{_cut(text, 30)}”") from None
    if isinstance(default, float):
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"must be a number, got “{_cut(text, 30)}”") from None
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number, got “{_cut(text, 30)}”")
        return value
    return text


def race_from_query(query: Mapping[str, str]) -> tuple[dict, list[str]]:
    """The race settings a link asks for, each parameter checked on its own: a bad one is
    reported by name and left out, the others apply (over the default race)."""
    choice = default_choice()
    errors: list[str] = []
    lim = APP_LIMITS
    if "policies" in query:
        raw = str(query["policies"])
        names = [n.strip() for n in raw.split(",") if n.strip()]
        known = [n for n in names if n in api.policy_names()]
        unknown = [n for n in names if n not in api.policy_names()]
        known = list(dict.fromkeys(known))
        if unknown:
            errors.append(
                f"Link parameter “policies={_cut(raw)}”: unknown polic"
                f"{'y' if len(unknown) == 1 else 'ies'} "
                f"{', '.join('“' + _cut(n, 30) + '”' for n in unknown[:5])} left "
                f"out (known: {', '.join(api.policy_names())})."
            )
        if len(known) > lim["n_policies"]:
            errors.append(
                f"Link parameter “policies”: at most {lim['n_policies']} policies "
                f"in this app; the default race's policies are used."
            )
        elif known:
            choice["policies"] = known
        elif not unknown:
            errors.append("Link parameter “policies”: empty; the default race's policies are used.")
        else:
            errors.append(
                "Link parameter “policies”: no known policy; the default race's policies are used."
            )
    for name in choice["policies"]:
        choice["params"].setdefault(name, policy_defaults(name))
    if "n_seeds" in query:
        raw = str(query["n_seeds"]).strip()
        try:
            n = int(raw)
            if not 1 <= n <= lim["n_seeds"]:
                raise ValueError
            choice["n_seeds"] = n
        except ValueError:
            errors.append(
                f"Link parameter “n_seeds={_cut(raw, 30)}”: Seeds: a whole number "
                f"between 1 and {lim['n_seeds']} in this app; "
                f"{choice['n_seeds']} is used."
            )
    for key in sorted(k for k in query if "." in k and k.split(".", 1)[0] in api.policy_names()):
        name, param = key.split(".", 1)
        raw = query[key]
        where = f"Link parameter “{_cut(key, 40)}={_cut(raw, 30)}”"
        defaults = policy_defaults(name)
        if name not in choice["policies"]:
            errors.append(f"{where}: {name} is not among the race's policies; ignored.")
            continue
        if param not in defaults or param in AUTO_PARAMS:
            takes = ", ".join(p for p in defaults if p not in AUTO_PARAMS) or "none"
            errors.append(
                f"{where}: {name} has no hyperparameter “{_cut(param, 30)}” here "
                f"(it takes {takes}); ignored."
            )
            continue
        try:
            value = _param_value(raw, defaults[param])
            params = {**choice["params"][name], param: value}
            api.PolicySpec(name, params)
        except ValueError as e:  # SpecError is a ValueError
            msg = explain(e) if isinstance(e, api.SpecError) else f"{name}, {param}: {e}"
            errors.append(f"{where}: {msg}; the default {defaults[param]} is used.")
            continue
        choice["params"][name] = params
    try:
        race(choice, scenario_if_set())
    except api.SpecError as e:
        errors.append(f"Link: {explain(e)}; the default race's number of seeds is used.")
        choice["n_seeds"] = default_choice()["n_seeds"]
    return choice, errors


def scenario_if_set() -> api.Scenario:
    return st.session_state.get(SCENARIO) or api.Scenario()


# --- the scenario ---------------------------------------------------------------------------
def scenario() -> api.Scenario:
    """The session's scenario; on the first page a session opens, read from the link (with
    the race settings and Inside All-Season's view, which are kept for their pages)."""
    ss = st.session_state
    if SCENARIO not in ss:
        query = st.query_params.to_dict()
        if query:
            scen_q = {
                k: v for k, v in query.items() if not _is_race_param(k) and k not in INSIDE_FIELDS
            }
            sc, errors = scenario_from_query(scen_q)
            ss[URL_ERRORS] = errors
            ss[SCENARIO] = sc
            if any(_is_race_param(k) for k in query) and RACE_CHOICE not in ss:
                choice, race_errors = race_from_query(query)
                ss[RACE_CHOICE] = choice
                if race_errors:
                    ss[LINK_RACE_ERRORS] = (race_errors, choice)
            inside = {k: query[k] for k in INSIDE_FIELDS if k in query}
            if inside:
                ss[LINK_INSIDE] = inside
        else:
            ss[SCENARIO] = api.Scenario()
    return ss[SCENARIO]


def set_scenario(sc: api.Scenario) -> None:
    """Make ``sc`` the session's scenario (already validated) and put it in the URL."""
    ss = st.session_state
    if ss.get(SCENARIO) != sc:
        ss[SCENARIO] = sc
        ss.pop(URL_ERRORS, None)
    sync_url()


def sync_url(extra: Mapping[str, str] | None = None) -> None:
    """Write the current scenario and race settings (and ``extra``, a page's own settings)
    to the page URL; pages are left with a clean URL."""
    want = {**scenario_to_query(scenario()), **race_to_query(race_choice()), **(extra or {})}
    if st.query_params.to_dict() != want:
        st.query_params.from_dict(want)


def link_race_errors() -> list[str]:
    """Messages about the race settings of the link, while those settings are in force."""
    found = st.session_state.get(LINK_RACE_ERRORS)
    if not found:
        return []
    messages, choice = found
    if race_choice() != choice:
        st.session_state.pop(LINK_RACE_ERRORS, None)
        return []
    return list(messages)


def url_errors() -> list[str]:
    """Messages about the link the session was opened with (reading it if not done yet)."""
    scenario()
    return list(st.session_state.get(URL_ERRORS, []))


# --- the race choice ------------------------------------------------------------------------
def default_choice() -> dict:
    """The default race's settings (``api.default_race``): its contestants, their default-race
    hyperparameters, its seeds."""
    race = api.default_race()
    return {
        "policies": [p.name for p in race.policies],
        "params": {p.name: policy_defaults(p.name) for p in race.policies},
        "n_seeds": race.n_seeds,
    }


def policy_defaults(name: str) -> dict:
    """A policy's hyperparameters with the default race's values (``api.default_params``:
    All-Season's paper setting, the baselines' tuned values), without sigma2 (the
    scenario's) and unset options."""
    hp = {
        k: v for k, v in api.hyperparameters(name).items() if v is not None
    }  # a None default is an option left unset (e.g. gamma of SW)
    hp.update({k: v for k, v in api.default_params(name).items() if k in hp})
    hp.pop("sigma2", None)  # follows the scenario's noise (correct specification)
    return hp


def race_choice() -> dict:
    ss = st.session_state
    scenario()  # a session's first page reads the link (race settings included) first
    if RACE_CHOICE not in ss:
        ss[RACE_CHOICE] = default_choice()
    return ss[RACE_CHOICE]


def set_race_choice(choice: dict) -> None:
    st.session_state[RACE_CHOICE] = choice


def race(choice: dict | None = None, sc: api.Scenario | None = None) -> api.Race:
    """The race the choice describes on the session's scenario; SpecError if invalid."""
    choice = race_choice() if choice is None else choice
    sc = scenario() if sc is None else sc
    names = list(choice["policies"])
    lim = APP_LIMITS
    if not names:
        raise api.SpecError("policies", "choose at least one policy")
    if len(names) > lim["n_policies"]:
        raise api.SpecError("policies", f"at most {lim['n_policies']} policies in this app")
    n_seeds = choice["n_seeds"]
    if not isinstance(n_seeds, int) or not 1 <= n_seeds <= lim["n_seeds"]:
        raise api.SpecError("n_seeds", f"between 1 and {lim['n_seeds']} in this app")
    work = sc.horizon * n_seeds * len(names)
    if work > lim["budget"]:
        raise api.SpecError(
            "n_seeds",
            f"horizon × seeds × policies is {work:,}; this app runs "
            f"at most {lim['budget']:,}. Use fewer seeds or "
            f"policies, or a shorter horizon",
        )
    specs = [
        api.PolicySpec(n, {k: v for k, v in choice["params"].get(n, {}).items() if v is not None})
        for n in names
    ]
    return api.Race(sc, api.policy_specs(specs), n_seeds)


def start_default_race() -> None:
    """Home's button: the paper's synthetic experiment with the default race, run on arrival."""
    ss = st.session_state
    ss[SCENARIO] = api.Scenario()
    ss.pop(URL_ERRORS, None)
    ss[RACE_CHOICE] = default_choice()
    for key in [k for k in ss if str(k).startswith(("pb_", "race_", "hp_"))]:
        del ss[key]
    ss[AUTORUN] = True
