"""Every key of ``st.session_state`` the app reads or writes, in one table: its name, what it
holds, the page that owns it and its kind. The glue names a key by its constant here, never by
a literal string (tests/app/test_session_keys.py checks it).

Kinds:

- ``canonical``: the truth, kept across pages (the scenario, the race settings, a page's file
  or show); a page's :func:`reset` keeps it;
- ``form``: an input's value (a widget key, or a draft), seeded from the canonical state when
  it is missing; :func:`reset` drops it, so the form starts again from the truth;
- ``view``: what the page shows now (a pick, a message, an uploader, a request); dropped by
  :func:`reset`;
- ``result``: something computed, stored with the key of what it was computed from; kept.

The values are plain data or the engine's values (``api.Scenario``, ``api.Race``,
``api.LiveRun``); the race settings are a :class:`RaceChoice`, declared here.

A name ending in ``_`` is a prefix (one key per policy and hyperparameter, per table edit...).
Widget keys whose value the glue never reads (buttons, downloads, charts) are not state: they
stay beside their widget. A page's ``reset()`` (``pattern.reset``, ``race_settings.reset``, ...)
is :func:`reset` with its title.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, replace

from allseason import api

KINDS = ("canonical", "form", "view", "result")
# the pages that own keys: their titles in frame.PAGES (tests/app/test_session_keys.py checks)
PAGE_PATTERN = "Pattern builder"
PAGE_RACE = "Race"
PAGE_INSIDE = "Inside All-Season"
PAGE_PAPER = "Paper tables"
PAGE_TOUR = "Guided tour"
PAGE_YOUR_DATA = "Your data"
PAGE_LIVE = "Live"
PAGE_WHEN = "When does it help?"
PAGE_DEPLOYED = "Your deployed bandit"
EVERY_PAGE = "every page"  # a key no single page owns (the link's messages, a page's request)


@dataclass(frozen=True)
class Key:
    """One session-state key: its ``name`` (a prefix if it ends in ``_``), the type(s) of its
    value, the page that owns it (a title of ``frame.PAGES``, or :data:`EVERY_PAGE`), its
    kind (:data:`KINDS`) and what it holds."""

    name: str
    type: type | tuple[type, ...]
    page: str
    kind: str
    doc: str

    @property
    def prefix(self) -> bool:
        return self.name.endswith("_")

    def matches(self, key: str) -> bool:
        return str(key).startswith(self.name) if self.prefix else key == self.name


# --- the one value type of the app's own ------------------------------------------------------
@dataclass(frozen=True)
class RaceChoice:
    """The Race page's settings as plain data, kept across pages (:data:`RACE_CHOICE`).

    Parameters
    ----------
    policies : tuple of str
        The contestants' policy names, in order (one contestant per policy).
    params : dict
        ``{policy: {hyperparameter: value}}``: the form's values (``sigma2`` and ``horizon``
        follow the scenario); may hold policies that are not contestants (kept for when
        they come back).
    n_seeds : int
        The number of seeds.

    Only collected here; ``state.race`` turns it into a checked ``api.Race``."""

    policies: tuple[str, ...]
    params: Mapping[str, Mapping[str, object]]
    n_seeds: int

    def __post_init__(self):
        object.__setattr__(self, "policies", tuple(self.policies))
        object.__setattr__(self, "params", {n: dict(p) for n, p in self.params.items()})

    def with_params(self, name: str, params: Mapping) -> RaceChoice:
        """The same choice with ``params`` as the hyperparameters of ``name``."""
        return replace(self, params={**self.params, name: dict(params)})


TABLE: dict[str, Key] = {}


def _key(name: str, type_, page: str, kind: str, doc: str) -> str:
    assert kind in KINDS and name not in TABLE, name
    TABLE[name] = Key(name, type_, page, kind, doc)
    return name


_NUMBER = (int, float)
_ANY = object  # a value Streamlit gives (an uploaded file, a data editor's edits)

# --- shared: the scenario, the race settings, the link (allseason.ui.state) -----------------
SCENARIO = _key("scenario", api.Scenario, PAGE_PATTERN, "canonical", "the scenario in force")
RACE_CHOICE = _key("race_choice", RaceChoice, PAGE_RACE, "canonical", "the race settings")
LAST_RACE = _key(
    "last_race", api.Race, PAGE_RACE, "canonical", "the race the Race page ran or showed last"
)
URL_ERRORS = _key("url_errors", list, EVERY_PAGE, "view", "messages about the opening link")
AUTORUN = _key("autorun", bool, EVERY_PAGE, "view", "Home, When, Live: Race runs on arrival")
RUN_REQUESTED = _key("run_requested", bool, PAGE_RACE, "view", "the Run button: run it now")
LINK_RACE_ERRORS = _key(
    "link_race_errors", tuple, EVERY_PAGE, "view", "(messages, the RaceChoice they were about)"
)
QUEUE_NOTE = _key(
    "queue_note", str, EVERY_PAGE, "view", "the work queue's last word: a request cancelled"
)
LINK_INSIDE = _key("link_inside", dict, PAGE_INSIDE, "view", "its link, not applied yet")

# --- Pattern builder (allseason.ui.pattern) ---------------------------------------------------
PB_PRESET = _key("pb_preset", str, PAGE_PATTERN, "form", "preset name or custom")
PB_N_STATES = _key("pb_n_states", int, PAGE_PATTERN, "form", "distinct states")
PB_HORIZON = _key("pb_horizon", int, PAGE_PATTERN, "form", "horizon")
PB_D = _key("pb_d", int, PAGE_PATTERN, "form", "dimension d")
PB_N_ARMS = _key("pb_n_arms", int, PAGE_PATTERN, "form", "arms K")
PB_SIGMA2 = _key("pb_sigma2", _NUMBER, PAGE_PATTERN, "form", "noise")
PB_SEED = _key("pb_seed", int, PAGE_PATTERN, "form", "seed")
PB_BATCH = _key("pb_batch", str, PAGE_PATTERN, "form", "batch sizes, as typed")
PB_TABLE = _key("pb_table", list, PAGE_PATTERN, "form", "the custom table's rows")
PB_TABLE_VER = _key("pb_table_ver", int, PAGE_PATTERN, "form", "the editor's version")
PB_TABLE_EDITOR = _key(
    "pb_table_editor_", _ANY, PAGE_PATTERN, "form", "the data editor's edits, per version"
)
PB_UPLOAD = _key("pb_upload", _ANY, PAGE_PATTERN, "view", "the uploader's file")
PB_UPLOAD_ERROR = _key("pb_upload_error", str, PAGE_PATTERN, "view", "why it was refused")
PB_UPLOAD_OK = _key("pb_upload_ok", str, PAGE_PATTERN, "view", "what was loaded")
PB_RESEED = _key("pb_reseed", bool, PAGE_PATTERN, "view", "inputs follow a new scenario")

# --- Race (allseason.ui.race_settings, allseason.ui.race) -------------------------------------
RACE_POLICIES = _key("race_policies", list, PAGE_RACE, "form", "the policies' multiselect")
RACE_SEEDS = _key("race_seeds", int, PAGE_RACE, "form", "the seeds' slider")
HP = _key("hp_", (bool, int, float, str), PAGE_RACE, "form", "hp_<policy>_<hyperparameter>")
SETTINGS_SEEN = _key(
    "race_settings_seen", tuple, PAGE_RACE, "view", "(scenario, choice, widgets) at the last run"
)
RACE_UPLOAD = _key("race_upload", _ANY, PAGE_RACE, "view", "the race JSON uploader's file")
RACE_UPLOAD_ERROR = _key("race_upload_error", str, PAGE_RACE, "view", "why it was refused")
RACE_UPLOAD_OK = _key("race_upload_ok", str, PAGE_RACE, "view", "what was loaded")
RACE_CHART = _key("race_chart_shown", str, PAGE_RACE, "view", "the chart shown (RACE_CHARTS key)")
RACE_CHART_PICK = _key("race_chart_pick", str, PAGE_RACE, "form", "the chart picker")

# --- Inside All-Season (allseason.ui.inside) ----------------------------------------------------
INSIDE_LABEL = _key("inside_label", str, PAGE_INSIDE, "form", "the contestant")
INSIDE_SEED = _key("inside_seed", int, PAGE_INSIDE, "form", "the seed")
INSIDE_VIEW = _key("inside_view", str, PAGE_INSIDE, "form", "the view")
INSIDE_LINK_NOTES = _key("inside_link_notes", dict, PAGE_INSIDE, "view", "link messages, by input")
INSIDE_LINK_NOW = _key(
    "inside_link_now", dict, PAGE_INSIDE, "view", "contestant and seed for the link"
)

# --- Paper tables (allseason.ui.paper_runs) -----------------------------------------------------
PAPER_LIVE_RESULT = _key("live_result", dict, PAGE_PAPER, "result", "the small real race")
PAPER_INSIDE_REAL = _key(
    "inside_real", tuple, PAGE_PAPER, "result", "(settings, the run looked inside)"
)

# --- Guided tour (allseason.ui.tour) ------------------------------------------------------------
TOUR_PICK = _key("tour_pick", int, PAGE_TOUR, "form", "the step picker")

# --- Your data (allseason.ui.yourdata) ------------------------------------------------------------
YD_SOURCE = _key("yd_source", dict, PAGE_YOUR_DATA, "canonical", "{name, data, size?, origin}")
YD_RESULT = _key("yd_result", tuple, PAGE_YOUR_DATA, "result", "(key, kind, result)")
YD_PARSED = _key("yd_parsed", tuple, PAGE_YOUR_DATA, "result", "(key, the parsed file)")
YD_UPLOAD = _key("yd_upload", _ANY, PAGE_YOUR_DATA, "view", "the uploader's file")
YD_KIND = _key("yd_kind", str, PAGE_YOUR_DATA, "form", "auto, log or table")
YD_SCALE = _key("yd_scale", str, PAGE_YOUR_DATA, "form", "none, max or minmax")
YD_ARMS = _key("yd_arms", str, PAGE_YOUR_DATA, "form", "arms, as typed")
YD_CONTEXT = _key("yd_context", str, PAGE_YOUR_DATA, "form", "context columns, as typed")
YD_SEEDS = _key("yd_seeds", int, PAGE_YOUR_DATA, "form", "seeds")
YD_STEPS = _key("yd_steps", int, PAGE_YOUR_DATA, "form", "customers per period")
YD_OBD = _key("yd_obd", str, PAGE_YOUR_DATA, "form", "the real log, policy/campaign")
YD_REFINE = _key("yd_refine", str, PAGE_YOUR_DATA, "view", "the result key the visitor refines")
YD_HOLD = _key("yd_hold", str, PAGE_YOUR_DATA, "view", "a cancelled evaluation's key: not requeued")
YD_RUNS = _key(
    "yd_runs", tuple, PAGE_YOUR_DATA, "result", "(result key, runs made so far): a rerun resumes"
)

# --- Live (allseason.ui.live, allseason.ui.live_analyse) ----------------------------------------
LIVE_RUN = _key("live_run", api.LiveRun, PAGE_LIVE, "canonical", "the show")
LIVE_CONFIG = _key("live_config", tuple, PAGE_LIVE, "canonical", "(contestants, seed) of the show")
LIVE_SPEED = _key("live_speed", int, PAGE_LIVE, "canonical", "steps per second")
LIVE_PAUSED = _key("live_paused", bool, PAGE_LIVE, "canonical", "the show is paused")
LIVE_TOUCHED = _key("live_touched", float, PAGE_LIVE, "canonical", "the idle clock: time.time()")
LIVE_NOTE = _key("live_note", tuple, PAGE_LIVE, "view", "(kind, text) on the stage")
LIVE_PRESENTER = _key("live_presenter", bool, PAGE_LIVE, "form", "presenter mode")
LIVE_SCREEN = _key("live_screen", str, PAGE_LIVE, "form", "the presenter's screen")
LIVE_ANALYSE = _key("live_open_in", str, PAGE_LIVE, "view", "open the show in race or inside")
LIVE_SPEED_W = _key("live_speed_w", int, PAGE_LIVE, "form", "the speed slider")
LIVE_POLICIES_W = _key("live_policies_w", list, PAGE_LIVE, "form", "the contestants")
LIVE_SEED_W = _key("live_seed_w", int, PAGE_LIVE, "form", "the seed")
LIVE_LAST_CALL = _key("live_last_call", dict, PAGE_LIVE, "view", "control: time.monotonic()")
LIVE_REDEFINING = _key("live_redefining", bool, PAGE_LIVE, "view", "the whole page is redrawn")

# --- When does it help? (allseason.ui.when) -------------------------------------------------------
WHEN_VARIANT = _key("when_variant", str, PAGE_WHEN, "form", "All-Season's shadow")
WHEN_PAGE = _key("when_page", _NUMBER, PAGE_WHEN, "form", "the map's batch size")
WHEN_CLICKED = _key("when_clicked", tuple, PAGE_WHEN, "view", "(page, i, j) clicked")
WHEN_MY_RESULT = _key("when_my_result", tuple, PAGE_WHEN, "result", "(key, cell)")


# --- Your deployed bandit (allseason.ui.deployed) -------------------------------------------------
DP_SOURCE = _key(
    "dp_source", str, PAGE_DEPLOYED, "form", "which deployment: folder, upload, example"
)
DP_UP_DECISIONS = _key("dp_up_decisions", _ANY, PAGE_DEPLOYED, "view", "the decisions.csv uploader")
DP_UP_BATCHES = _key("dp_up_batches", _ANY, PAGE_DEPLOYED, "view", "the batches.jsonl uploader")
DP_UP_STATE = _key("dp_up_state", _ANY, PAGE_DEPLOYED, "view", "the state file's uploader")
DP_PARSED = _key("dp_parsed", tuple, PAGE_DEPLOYED, "result", "(key, the uploads read)")
DP_SENT = _key("dp_sent", int, PAGE_DEPLOYED, "view", "decisions sent to Your data")


def declared(key: str) -> Key | None:
    """The table's entry for a session-state key (a prefix's entry for its keys), or None."""
    return TABLE.get(key) or next((k for k in TABLE.values() if k.prefix and k.matches(key)), None)


def of_page(page: str, kinds=KINDS) -> list[Key]:
    """The keys ``page`` owns, of the given kinds."""
    return [k for k in TABLE.values() if k.page == page and k.kind in kinds]


def reset(ss: MutableMapping, page: str, kinds=("form", "view")) -> list[str]:
    """Drop the keys of ``page`` of the given kinds from the session state ``ss`` (the form's
    inputs and what it shows: they are seeded again from the canonical state); the keys
    dropped."""
    owned = of_page(page, kinds)
    gone = [k for k in list(ss) if any(e.matches(str(k)) for e in owned)]
    for k in gone:
        del ss[k]
    return gone
