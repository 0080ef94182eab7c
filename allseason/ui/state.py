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

from collections.abc import Mapping

import streamlit as st

from allseason import api

SCENARIO = "scenario"
RACE_CHOICE = "race_choice"
URL_ERRORS = "url_errors"
LAST_RACE = "last_race"          # Race.to_json() of the race the Race page ran or showed last
AUTORUN = "autorun"              # set by Home's button: the Race page runs on arrival

# What one session may ask of this app; tighter than the engine's api.LIMITS.
APP_LIMITS = dict(
    horizon=50_000, n_seeds=10, n_policies=8, d=20, n_arms=50, n_states=12,
    n_segments=500, batch_size=1_000, budget=1_000_000,  # budget: horizon x seeds x policies
)

SCENARIO_FIELDS = api.QUERY_FIELDS  # the parameters of a link

LABELS = {
    "preset": "Preset", "segments": "Segments", "horizon": "Horizon", "n_states":
    "Distinct states", "d": "Dimension d", "n_arms": "Arms K", "sigma2": "Noise σ²",
    "batch_size": "Batch size", "seed": "Seed", "n_seeds": "Seeds", "policies": "Policies",
    "file": "File", "scenario": "Scenario", "race": "Race", "query": "Parameters",
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
        message = message[len(field) + 2:]
    got = getattr(err, "got", None)
    if (field == "horizon" or field.endswith(".length")) and got is not None:
        if got > APP_LIMITS["horizon"]:  # quote this app's limit, not the engine's
            message = (f"this app runs at most {APP_LIMITS['horizon']:,} steps in all, got "
                       f"{got:,}; use the Python API for longer runs")
        elif got < 1:
            message = f"must be at least 1 step, got {got}"
    if field.startswith("segments["):
        idx, _, part = field[len("segments["):].partition("]")
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
        raise api.SpecError("horizon", f"this app runs at most {lim['horizon']:,} steps "
                                       f"(got {scenario.horizon:,}); use the Python API "
                                       f"for longer runs")
    if len(scenario.segments) > lim["n_segments"]:
        raise api.SpecError("segments", f"this app takes at most {lim['n_segments']} segments")
    n_states = max(s for s, _ in scenario.segments) + 1
    if n_states > lim["n_states"]:
        raise api.SpecError("segments", f"states are numbered 0 to {lim['n_states'] - 1} in "
                                        f"this app (got state {n_states - 1})")
    for name in ("d", "n_arms"):
        if getattr(scenario, name) > lim[name]:
            raise api.SpecError(name, f"at most {lim[name]} in this app, "
                                      f"got {getattr(scenario, name)}")
    sizes = scenario.batch_size if isinstance(scenario.batch_size, tuple) \
        else (scenario.batch_size,)
    if max(sizes) > lim["batch_size"]:
        raise api.SpecError("batch_size", f"at most {lim['batch_size']:,} in this app")
    return scenario


# --- URL encoding ---------------------------------------------------------------------------
# The parsing and decoding are the engine's (api.parse_scenario, kind "query"); this module
# keeps the wording of the messages and the app's limits. Re-exported for the forms and views.
encode_segments, decode_segments = api.encode_segments, api.decode_segments
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
        return (f"Link parameter “{_cut(r.param, 40)}” is not known and was ignored "
                f"(known: {', '.join(SCENARIO_FIELDS)}).")
    return f"Link parameter “{r.param}={_cut(r.value)}”: {explain(r.error)}"


def scenario_from_query(query: Mapping[str, str],
                        base: api.Scenario | None = None) -> tuple[api.Scenario, list[str]]:
    """Rebuild a scenario from URL parameters, checking each on its own
    (``api.parse_scenario(query, "query", rejected=[...])`` with this app's limits).

    Returns the scenario (``base`` or the default where nothing usable was given) and the
    list of messages about the parameters that were not used."""
    rejected: list[api.Rejected] = []
    sc = api.parse_scenario(query, "query", defaults=base, check=check_app_limits,
                            rejected=rejected)
    return sc, [_link_message(r) for r in rejected]


# --- the scenario ---------------------------------------------------------------------------
def scenario() -> api.Scenario:
    """The session's scenario; on the first page a session opens, read from the link."""
    ss = st.session_state
    if SCENARIO not in ss:
        query = st.query_params.to_dict()
        if query:
            sc, errors = scenario_from_query(query)
            ss[URL_ERRORS] = errors
        else:
            sc = api.Scenario()
        ss[SCENARIO] = sc
    return ss[SCENARIO]


def set_scenario(sc: api.Scenario) -> None:
    """Make ``sc`` the session's scenario (already validated) and put it in the URL."""
    ss = st.session_state
    if ss.get(SCENARIO) != sc:
        ss[SCENARIO] = sc
        ss.pop(URL_ERRORS, None)
    sync_url()


def sync_url() -> None:
    """Write the current scenario to the page URL (pages are left with a clean URL)."""
    want = scenario_to_query(scenario())
    if st.query_params.to_dict() != want:
        st.query_params.from_dict(want)


def url_errors() -> list[str]:
    """Messages about the link the session was opened with (reading it if not done yet)."""
    scenario()
    return list(st.session_state.get(URL_ERRORS, []))


# --- the race choice ------------------------------------------------------------------------
def default_choice() -> dict:
    """The default race's settings (``api.default_race``): its contestants, their default-race
    hyperparameters, its seeds."""
    race = api.default_race()
    return {"policies": [p.name for p in race.policies],
            "params": {p.name: policy_defaults(p.name) for p in race.policies},
            "n_seeds": race.n_seeds}


def policy_defaults(name: str) -> dict:
    """A policy's hyperparameters with the default race's values (``api.default_params``:
    All-Season's paper setting, the baselines' tuned values), without sigma2 (the
    scenario's) and unset options."""
    hp = {k: v for k, v in api.hyperparameters(name).items()
          if v is not None}  # a None default is an option left unset (e.g. gamma of SW)
    hp.update({k: v for k, v in api.default_params(name).items() if k in hp})
    hp.pop("sigma2", None)  # follows the scenario's noise (correct specification)
    return hp


def race_choice() -> dict:
    ss = st.session_state
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
        raise api.SpecError("n_seeds", f"horizon × seeds × policies is {work:,}; this app runs "
                                       f"at most {lim['budget']:,}. Use fewer seeds or "
                                       f"policies, or a shorter horizon")
    specs = [api.PolicySpec(n, {k: v for k, v in choice["params"].get(n, {}).items()
                                if v is not None}) for n in names]
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
