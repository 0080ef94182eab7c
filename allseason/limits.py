"""Every limit, once: what one request may ask of the engine and of the app, and the bounds of
the numbers a user may type, each with the reason for it.

The code reads these names; the messages quote them; ``docs/security.md`` states them and
``tests/hostile/test_limits.py`` fails when the page and these numbers disagree (or when
``.streamlit/config.toml``'s upload cap is not the largest upload a page states).

    >>> LIMITS["n_policies"], APP_LIMITS["n_policies"]
    (12, 11)
    >>> NOISE_RANGE
    (1e-06, 1000000.0)
"""

from __future__ import annotations


class Limits(dict):
    """Bounds on what one request may ask, by name (a dict: ``LIMITS["horizon"]``).

    Checked by :func:`check_limits`, :meth:`Race.checked` and ``parse_scenario(limits=...)``.

    Parameters
    ----------
    where
        Ends the messages that quote them (``" in this app"``).
    hint
        What to do instead, said after a bound on the size of a run.
    **bounds
        ``horizon``, ``d``, ``n_arms``, ``n_states``, ``n_segments``, ``n_seeds``,
        ``batch_size``, ``n_policies``; ``budget`` (horizon x seeds x policies) if any."""

    def __init__(self, where: str = "", hint: str = "", **bounds: int):
        super().__init__(**bounds)
        self.where, self.hint = where, hint


# What one request may ask of the engine (the CLI, the API): bounds that keep one request
# from taking a machine down.
LIMITS = Limits(
    horizon=200_000,
    d=500,
    n_arms=100,
    n_states=50,
    n_segments=2_000,
    n_seeds=50,
    batch_size=10_000,
    n_policies=12,
)

# What one session of the app may ask: tighter than LIMITS (budget: horizon x seeds x
# policies).
APP_LIMITS = Limits(
    " in this app",
    "use the Python API for larger runs",
    horizon=50_000,
    n_seeds=10,
    n_policies=11,
    d=20,
    n_arms=50,
    n_states=12,
    n_segments=500,
    batch_size=1_000,
    budget=1_000_000,
)

MAX_BATCH_SIZES = 1_000  # batch sizes in one list (inhomogeneous batches, taken in turn)

# The largest text (a scenario or race file, an upload, a link) parse_scenario reads: 1 MB.
MAX_INPUT_BYTES = 1_000_000


# "Your deployed bandit" (allseason/logs/deployed.py): each uploaded file (decisions.csv,
# batches.jsonl, a state file) is at most the size of a Your data upload, so the server's
# upload cap (.streamlit/config.toml) stays the same; a folder the server is started with is
# the operator's own and is read whole, but only the last `rows` decisions are kept (a
# decision takes 56 bytes in memory: 56 MB) and each refresh reads at most `refresh_bytes`
# new bytes per file (the rest comes at the next refresh).
DEPLOYED_LIMITS = dict(
    upload_bytes=20_000_000, rows=1_000_000, refresh_bytes=256_000_000, refresh_seconds=5
)


def upload_cap_mb(n_bytes: int) -> int:
    """The ``max_upload_size`` (MB) of an uploader whose page reads at most ``n_bytes``: one
    MB more, so that a file just over the page's limit reaches the page's own check and
    message. (Streamlit's browser side counts a MB as 10**6 bytes and stops larger files
    with its own words; its server counts MiB and answers a larger request with HTTP 413,
    a bare red "!": ``server.maxUploadSize`` is the largest of these caps.)

    Parameters
    ----------
    n_bytes : int
        The largest file the page reads.
    """
    return n_bytes // 1_000_000 + 1


# --- the bounds of hyperparameters and of the scenario's noise ------------------------------
# A window (tau, max_idle) longer than the longest race sees the whole race; the kernels
# keep tau x d floats for it (200,000 x 20 x 8 B = 32 MB at the app's largest d), so 10**12
# asked for 36 TiB.
MAX_WINDOW = LIMITS["horizon"]
# All-Season keeps n_max + 2 posteriors (3 d x d matrices each) and a pairwise KL table of
# (n_max + 2)^2 x blocks; at n_max = 100 and the app's d = 20 that is 7 MB, at the engine's
# d = 500 under 650 MB. 30,000 added 1.1 GB to a 2,000-step race; 10**6 asked for 7.28 TiB.
# The paper's runs keep about 16.
MAX_BANDITS = 100
# sigma2 (noise variance) and lam (prior precision) divide and are square-rooted in every
# update: below about 1e-300 1 / x overflows and the kernels divided by zero (1e-320 gave a
# ZeroDivisionError). The range is the one tests/policies/test_numerical_extremes.py checks to stay
# finite (the precision grows to horizon / sigma2 = 2e11 over lam, within float64's 1e16).
NOISE_RANGE = (1e-6, 1e6)
PRIOR_RANGE = (1e-6, 1e6)
# Bounds on norms and slacks (BoB's S and L, DenBand's Delta_L): L = 1e300 overflowed
# math.exp; 1e-6 .. 1e6 is far from both ends of float64 once squared and summed.
SCALE_RANGE = (1e-6, 1e6)
# One array of an agent's state file (allseason/agent/statefile.py) holds at most 2**26
# elements (512 MB of float64); the largest a legitimate agent writes is All-Season's
# MAX_BANDITS + 2 posteriors at the engine's d = 500, 102 x 500 x 500 = 25.5 million. A
# hostile manifest asking for 10**9 elements is refused before anything is allocated.
MAX_STATE_ELEMENTS = 2**26

# --- a user's file (allseason/logs): what the reader takes, each value checked while read -----
#: what one log may hold on the command line (``replay``); the app's upload: APP_LOG_LIMITS.
#: No limit on the number of columns used: only the columns used are read.
LOG_LIMITS = dict(rows=1_000_000, bytes=200_000_000, context=16)
#: the app's tighter limits on an upload (a log or a reward table)
APP_LOG_LIMITS = dict(rows=200_000, bytes=20_000_000, context=16)
#: the largest user CSV read at all (the command line's log limit)
MAX_USER_BYTES = LOG_LIMITS["bytes"]
MIN_PROPENSITY = 1e-9  # a smaller propensity is refused: 1 / propensity stays finite (<= 1e9)
MAX_ABS = 1e15  # the largest magnitude of a reward or a context value: sums stay exact-ish
MAX_LEVELS = 8  # one-hot columns of one text context column, at most
MAX_LABEL = 40  # characters of an arm label
MAX_CELL = 1_000  # characters in one cell of a column that is read
MAX_COLUMNS = 100_000  # columns in the header (3 x the file's memory at most, measured)
MAX_TABLE_ARMS = 20  # a reward table's arms, one-hot: d = K
MAX_DECLARED_ARMS = 100  # arms a user declares (--arms N or a list of labels), at least 2
MAX_STEPS_PER_PERIOD = 1_000  # a reward table's race: customers (steps) per period
#: what one reward table may hold (rows, columns in the header, bytes): the app's upload size
TABLE_LIMITS = dict(rows=200_000, columns=64, bytes=20_000_000)

# --- a sweep (allseason/sweeps): what one grid file may ask --------------------------------
SWEEP_LIMITS = dict(
    n_runs=500_000,
    n_seeds=10_000,
    seed_index=2**31 - 1,
    n_values=1_000,
    n_scenarios=1_000,
    n_policies=100,
    file_bytes=MAX_INPUT_BYTES,
)

# --- the app's pages beyond the race -----------------------------------------------------
MAX_LIVE_STATES = 9  # seasons in one Live show: keys 1-9
MAX_LIVE_CONTESTANTS = 8  # policies on the Live stage
MAX_CHECK_STEPS = 50_000  # When does it help?: the user's world raced, at most this many steps
MAX_MAP_CELLS = 400  # cells of one world map (knob grid), the cost of a map run
MAX_PROCESSES = 64  # local processes of a sweep: more than this is a typo on any machine we know
#: Paper tables' small live MNIST race: images (n_min..n_max) and seeds, a few seconds each
PAPER_LIVE_LIMITS = dict(n_min=600, n_max=5000, seeds=3)
LIVE_WINDOW_RANGE = (10, 100_000)  # steps a Live show keeps on screen (its rolling window)
MAX_PAPER_SEEDS = 100  # python -m allseason paper --seeds

# --- a map (python -m allseason map --grid FILE), checked whole before anything runs ---------
# Every run of every cell, in steps: a cell is 105 runs (45 tuning, 60 shown) of its horizon.
# The shipped map is 36 million steps (374 s on 2 processes, 2026-11); 20 times that is about
# two hours of a 2-core machine. A grid of huge n_states used to build its segments first
# and died of a MemoryError at 5.4 GB.
MAP_MAX_STEPS = 720_000_000
# One run's memory (its trace, about 400 B a step, and one chunk of arm features, steps x K x
# d floats): batch_size 10,000 x K 100 x d 500 asked for 4 GB in one chunk.
MAP_MAX_RUN_BYTES = 500_000_000

# What one request may cost where a budget applies (a page of the app), in CPU-seconds
# estimated before it runs (allseason.costs): "Race it to check" at 50,000 steps, d = 20,
# K = 50 held a slot for 249 s; the default race costs about 10.
COST_BUDGET_SECONDS = 120
# A log's first answer (Your data) costs at most this: its first events when the whole log is
# more (allseason.logs.subsample), about 15 s of a 2-core server alone. With the prices
# measured on each machine (allseason.costs.calibrate) the whole 200,000-row upload fits the
# 120 above: twenty visitors' first answers would ask 40 CPU-minutes of the server, not 10.
COST_FIRST_PART_SECONDS = 30
# The visitor may then ask for a refinement, a long request of the work queue: at most this
# (the whole of the largest upload at its default 5 seeds, about 120 CPU-s here, fits).
COST_REFINE_SECONDS = 600
# Fewer first events than this decide nothing (a policy needs 500 kept: logs.evaluate): a log
# of which not even these fit in the budget is refused, with the command line.
MIN_SUBSAMPLE_EVENTS = 1_000

# An upload at most this large is read at once, outside the work queue (allseason/ui/
# yourdata.py): about 0.13 CPU-s per MB, so at most 0.3 CPU-s and a few MB of memory each; in
# the queue, a reading waits for a short slot (lent at most one at a time, at a running
# evaluation's next run), so 20 visitors' readings went through one by one before their
# evaluations could show their place. A larger file keeps its slot.
READ_WITHOUT_SLOT_BYTES = 2_000_000

# The app's work queue (allseason/ui/workqueue.py): requests waiting at most, in all and per
# session (a visitor has one script run at a time, so 3 is already more than one tab needs);
# a request estimated at most `short_seconds` CPU-s (the default race: about 1.5) is served
# first and may take a long one's slot after that one held it `quantum_seconds`; the last-
# served times of at most `max_sessions` sessions are kept (round-robin order).
QUEUE_LIMITS = dict(
    max_waiting=200, per_session=3, short_seconds=5.0, quantum_seconds=1.0, max_sessions=1000
)

# --- the HTTP service (python -m allseason serve; docs/serve.md) ----------------------------
# A request body is one decision or one reward: at the engine's largest (100 arms x d = 500
# floats, about 20 bytes each in JSON) that is 1 MB; anything larger is refused unread (413).
# The rate is one token bucket per process: a burst of `burst` requests, refilled at `rate`
# per second (429 beyond); a client that takes longer than `client_seconds` to send its
# headers is cut off, its body gets 408; `max_connections` open connections at once
# (uvicorn's limit_concurrency, 503 beyond); an idle keep-alive connection is closed after
# `keep_alive_seconds`. Disk: the writer snapshots (and starts its journal again) once its
# journal passes `journal_bytes`, and a reader's journal begins a new segment there.
SERVE_LIMITS = dict(
    body_bytes=MAX_INPUT_BYTES,
    event_id_chars=128,
    reward_abs=1e6,
    rate=20_000,
    burst=2_000,
    client_seconds=10,
    keep_alive_seconds=5,
    max_connections=256,
    token_bytes=4_096,
    journal_bytes=64_000_000,
    # the writer's snapshot cadence (s): a snapshot (~2 ms per open decision) at the first batch
    # update this long after the last; a reader's model is at most this + 2 polls old
    snapshot_seconds=2.0,
    snapshot_seconds_max=3_600.0,
)

# --- an agent's files (allseason/agent): its state file and its decision log ------------------
#: the largest state file read by default (bytes): 2 GiB, more than the largest legitimate
#: agent (All-Season at the engine's d = 500 with its 102 posteriors: about 0.6 GB)
MAX_STATE_BYTES = 2**31
#: entries in one state file's archive, at most (an agent writes a few dozen)
MAX_STATE_ENTRIES = 10_000
#: the largest decisions.csv / batches.jsonl that read_decision_log reads (bytes)
MAX_DECISION_LOG_BYTES = 200_000_000

__all__ = [
    "COST_BUDGET_SECONDS",
    "COST_FIRST_PART_SECONDS",
    "COST_REFINE_SECONDS",
    "MIN_SUBSAMPLE_EVENTS",
    "QUEUE_LIMITS",
    "READ_WITHOUT_SLOT_BYTES",
    "MAP_MAX_STEPS",
    "MAP_MAX_RUN_BYTES",
    "Limits",
    "LIMITS",
    "APP_LIMITS",
    "MAX_INPUT_BYTES",
    "upload_cap_mb",
    "DEPLOYED_LIMITS",
    "MAX_WINDOW",
    "MAX_BANDITS",
    "NOISE_RANGE",
    "PRIOR_RANGE",
    "SCALE_RANGE",
    "LOG_LIMITS",
    "APP_LOG_LIMITS",
    "MAX_USER_BYTES",
    "MIN_PROPENSITY",
    "MAX_ABS",
    "MAX_LEVELS",
    "MAX_LABEL",
    "MAX_CELL",
    "MAX_COLUMNS",
    "MAX_TABLE_ARMS",
    "TABLE_LIMITS",
    "SWEEP_LIMITS",
    "PAPER_LIVE_LIMITS",
    "MAX_LIVE_STATES",
    "MAX_LIVE_CONTESTANTS",
    "MAX_CHECK_STEPS",
    "MAX_MAP_CELLS",
    "MAX_PROCESSES",
    "MAX_STATE_ELEMENTS",
    "MAX_STATE_BYTES",
    "MAX_STATE_ENTRIES",
    "MAX_DECISION_LOG_BYTES",
    "SERVE_LIMITS",
]
