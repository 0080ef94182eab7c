"""The session's state and its link: the scenario and the race settings, kept across pages and
in the page's address.

Streamlit drops a widget's value when its page is left, so the truth lives in two
non-widget keys of ``st.session_state`` (every key is declared in :mod:`allseason.ui.keys`):

- ``SCENARIO`` holds a validated :class:`allseason.api.Scenario`;
- ``RACE_CHOICE`` holds the race settings as a :class:`RaceChoice` (policy names, their
  hyperparameters, number of seeds), turned into an ``api.Race`` by :func:`race`.

Widgets are seeded from these keys when they are (re)created and write back to them after
validation. Validation is the engine's, within the app's limits (``api.APP_LIMITS``, declared
beside the engine's in :mod:`allseason.specs`): ``api.parse_scenario(..., limits=...)`` for
a scenario, :func:`race` (``api.Race.checked``) for the race settings. The forms and the link
only collect values and show the validator's message, worded by :func:`explain`.

The link: the page that owns the settings writes them to its URL once per run
(:func:`sync_url`), so a copied link reproduces them: ``?preset=regular&horizon=5000&
n_states=3&d=5&...``, or for a hand-made pattern ``?preset=custom&segments=0x1500_1x1000_
0x800&...`` (state ``x`` length, joined by ``_``), plus the race settings that differ from
the default race's. A link is read once, when a session starts; every parameter it holds is
checked on its own, so one bad value is reported by name and the others still apply.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import streamlit as st

from allseason import api

from . import keys
from .keys import (
    AUTORUN,
    LINK_INSIDE,
    LINK_RACE_ERRORS,
    RACE_CHOICE,
    SCENARIO,
    URL_ERRORS,
    RaceChoice,
)

RACE_SECTION = "race_section"  # the key of the Race page's results fragment (st.fragment)

APP_LIMITS = api.APP_LIMITS  # what one session may ask of this app (declared in specs.py)

SCENARIO_FIELDS = api.QUERY_FIELDS  # the parameters of a link
# The race settings in a link: ``policies=lints,sw-lints``, ``n_seeds=3`` and one
# ``<policy>.<hyperparameter>=value`` per hyperparameter that differs from its default;
# each is written only when it differs from the default race, to keep links short.
RACE_FIELDS = ("policies", "n_seeds")
# Inside All-Season's view, contestant and seed (written by that page only).
INSIDE_FIELDS = ("view", "contestant", "inside_seed")
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
    """``scenario`` if this app runs it (:data:`APP_LIMITS`), else the SpecError saying why."""
    return api.check_limits(scenario, APP_LIMITS)


# --- the scenario in a link -----------------------------------------------------------------
# The parsing and decoding are the engine's (api.parse_scenario, kind "query"); this module
# words the messages. Re-exported for the pages.
encode_batch, decode_batch = api.encode_batch, api.decode_batch


def scenario_to_query(scenario: api.Scenario) -> dict[str, str]:
    """URL parameters that rebuild ``scenario`` exactly (short form for untouched presets)."""
    return scenario.to_query()


def _cut(value, n: int = 60) -> str:
    text = str(value)
    return text if len(text) <= n else text[:n] + "…"


def _link_message(r: api.Rejected) -> str:
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
    (``api.parse_scenario(query, "query", rejected=[...])`` within this app's limits).

    Returns the scenario (``base`` or the default where nothing usable was given) and the
    list of messages about the parameters that were not used."""
    rejected: list[api.Rejected] = []
    sc = api.parse_scenario(query, "query", defaults=base, limits=APP_LIMITS, rejected=rejected)
    return sc, [_link_message(r) for r in rejected]


# --- the race settings in a link --------------------------------------------------------------
def _is_race_param(key: str) -> bool:
    return key in RACE_FIELDS or ("." in key and key.split(".", 1)[0] in api.policy_names())


def race_to_query(choice: RaceChoice) -> dict[str, str]:
    """Link parameters for the race settings that differ from the default race."""
    default = default_choice()
    out: dict[str, str] = {}
    if choice.policies != default.policies:
        out["policies"] = ",".join(choice.policies)
    if choice.n_seeds != default.n_seeds:
        out["n_seeds"] = str(choice.n_seeds)
    for name in choice.policies:
        defaults = policy_defaults(name)
        for param, value in sorted(choice.params.get(name, {}).items()):
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
    """A link's text as the type of ``default``; ValueError if it is not one (the text of a
    link is only typed here: its value is the validator's to judge)."""
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


def _refused(choice: RaceChoice, sc: api.Scenario, fields: tuple[str, ...]) -> str | None:
    """The validator's message if it refuses the race ``choice`` describes because of one of
    ``fields``, else None (a refusal for another setting is not this parameter's doing)."""
    try:
        race(choice, sc)
    except api.SpecError as e:
        if e.field in fields:
            return explain(e)
    return None


def _link_policies(raw: str, choice: RaceChoice, sc: api.Scenario, errors: list[str]) -> RaceChoice:
    """The link's ``policies`` over ``choice``: unknown names left out, the rest if valid."""
    names = [n.strip() for n in raw.split(",") if n.strip()]
    known = list(dict.fromkeys(n for n in names if n in api.policy_names()))
    unknown = [n for n in names if n not in api.policy_names()]
    if unknown:
        errors.append(
            f"Link parameter “policies={_cut(raw)}”: unknown polic"
            f"{'y' if len(unknown) == 1 else 'ies'} "
            f"{', '.join('“' + _cut(n, 30) + '”' for n in unknown[:5])} left "
            f"out (known: {', '.join(api.policy_names())})."
        )
    if not known:
        what = "no known policy" if unknown else "empty"
        errors.append(f"Link parameter “policies”: {what}; the default race's policies are used.")
        return choice
    params = {**{n: policy_defaults(n) for n in known}, **choice.params}
    candidate = replace(choice, policies=known, params=params)
    why = _refused(candidate, sc, ("policies",))
    if why:
        errors.append(f"Link parameter “policies”: {why}; the default race's policies are used.")
        return choice
    return candidate


def _link_param(
    key: str, raw: str, choice: RaceChoice, sc: api.Scenario, errors: list[str]
) -> RaceChoice:
    """A link's ``<policy>.<hyperparameter>`` over ``choice``, if the validator accepts it."""
    name, param = key.split(".", 1)
    where = f"Link parameter “{_cut(key, 40)}={_cut(raw, 30)}”"
    defaults = policy_defaults(name)
    if name not in choice.policies:
        errors.append(f"{where}: {name} is not among the race's policies; ignored.")
        return choice
    if param not in defaults or param in AUTO_PARAMS:
        takes = ", ".join(p for p in defaults if p not in AUTO_PARAMS) or "none"
        errors.append(
            f"{where}: {name} has no hyperparameter “{_cut(param, 30)}” here "
            f"(it takes {takes}); ignored."
        )
        return choice
    try:
        value = _param_value(raw, defaults[param])
    except ValueError as e:
        errors.append(f"{where}: {name}, {param}: {e}; the default {defaults[param]} is used.")
        return choice
    candidate = choice.with_params(name, {**choice.params[name], param: value})
    why = _refused(candidate, sc, (key,))
    if why:
        errors.append(f"{where}: {why}; the default {defaults[param]} is used.")
        return choice
    return candidate


def race_from_query(query: Mapping[str, str]) -> tuple[RaceChoice, list[str]]:
    """The race settings a link asks for, over the default race's: each parameter is applied
    on its own and kept if the validator (:func:`race`) accepts the settings with it; a
    refused one is reported by name, with the validator's message, and left out."""
    choice = default_choice()
    errors: list[str] = []
    sc = scenario_if_set()
    if "policies" in query:
        choice = _link_policies(str(query["policies"]), choice, sc, errors)
    if "n_seeds" in query:
        raw = str(query["n_seeds"]).strip()
        where = f"Link parameter “n_seeds={_cut(raw, 30)}”"
        try:
            n_seeds = _param_value(raw, 0)
        except ValueError as e:
            why = f"{LABELS['n_seeds']}: {e}"
        else:
            why = _refused(replace(choice, n_seeds=n_seeds), sc, ("n_seeds",))
        if why:
            errors.append(f"{where}: {why}; {choice.n_seeds} is used.")
        else:
            choice = replace(choice, n_seeds=n_seeds)
    for key in sorted(k for k in query if "." in k and k.split(".", 1)[0] in api.policy_names()):
        choice = _link_param(key, query[key], choice, sc, errors)
    return choice, errors


def scenario_if_set() -> api.Scenario:
    return st.session_state.get(SCENARIO) or api.Scenario()


# --- the scenario ---------------------------------------------------------------------------
def _read_link() -> None:
    """A session's first page: the scenario from the link (with the race settings and Inside
    All-Season's view, which are kept for their pages)."""
    ss = st.session_state
    query = st.query_params.to_dict()
    scen_q = {k: v for k, v in query.items() if not _is_race_param(k) and k not in INSIDE_FIELDS}
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


def scenario() -> api.Scenario:
    """The session's scenario; on the first page a session opens, read from the link."""
    ss = st.session_state
    if SCENARIO not in ss:
        if st.query_params.to_dict():
            _read_link()
        else:
            ss[SCENARIO] = api.Scenario()
    return ss[SCENARIO]


def set_scenario(sc: api.Scenario) -> None:
    """Make ``sc`` the session's scenario (already validated); the page's :func:`sync_url`
    puts it in the link."""
    ss = st.session_state
    if ss.get(SCENARIO) != sc:
        ss[SCENARIO] = sc
        ss.pop(URL_ERRORS, None)


def sync_url(extra: Mapping[str, str] | None = None) -> None:
    """Write the current scenario and race settings (and ``extra``, a page's own settings)
    to the page URL, once per run of the page that owns them; pages are left with a clean
    URL."""
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
def default_choice() -> RaceChoice:
    """The default race's settings (``api.default_race``): its contestants, their default-race
    hyperparameters, its seeds."""
    race = api.default_race()
    return choice_of(race.policies, race.n_seeds)


def choice_of(policies, n_seeds: int, params: Mapping | None = None) -> RaceChoice:
    """A :class:`RaceChoice` of the policies ``policies`` (names, or specs), each with its
    default-race hyperparameters updated by ``params[name]``."""
    names = [getattr(p, "name", p) for p in policies]
    params = params or {}
    return RaceChoice(
        names, {n: {**policy_defaults(n), **params.get(n, {})} for n in names}, n_seeds
    )


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


def race_choice() -> RaceChoice:
    """The session's race settings (the default race's at first)."""
    ss = st.session_state
    scenario()  # a session's first page reads the link (race settings included) first
    if RACE_CHOICE not in ss:
        ss[RACE_CHOICE] = default_choice()
    return ss[RACE_CHOICE]


def set_race_choice(choice: RaceChoice) -> None:
    st.session_state[RACE_CHOICE] = choice


def race(choice: RaceChoice | None = None, sc: api.Scenario | None = None) -> api.Race:
    """The race the choice describes on the session's scenario, within this app's limits
    (``api.Race.checked``); the SpecError of the first setting that is not valid."""
    choice = race_choice() if choice is None else choice
    sc = scenario() if sc is None else sc
    specs = [
        {
            "name": n,
            "params": {k: v for k, v in choice.params.get(n, {}).items() if v is not None},
        }
        for n in choice.policies
    ]
    return api.Race.checked(sc, specs, choice.n_seeds, APP_LIMITS)


def start_default_race() -> None:
    """Home's button: the paper's synthetic experiment with the default race, run on arrival."""
    ss = st.session_state
    ss[SCENARIO] = api.Scenario()
    ss.pop(URL_ERRORS, None)
    keys.reset(ss, keys.PAGE_PATTERN)  # the forms start again from the default race
    keys.reset(ss, keys.PAGE_RACE)
    ss[RACE_CHOICE] = default_choice()
    ss[AUTORUN] = True
