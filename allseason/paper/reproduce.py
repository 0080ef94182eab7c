"""The public face of the paper's reproduction (section 6): grid search, then the seeds, then
the table beside the paper's. The protocol is :mod:`allseason.paper.protocol` (its docstring
writes down every choice), running and storing it :mod:`allseason.paper.runs`, the tables
:mod:`allseason.paper.report`, the app's small live race :mod:`allseason.paper.live`; this
module gathers their public names, so ``from allseason.paper import reproduce`` is enough."""

from ..envs.classification import HORIZON, TABLE_KEYS
from ..sweeps.store import STORE_FILE
from .live import LIVE_DEFAULTS, change_points, curves_frame, live_jobs, stored_choice
from .protocol import (
    CARRIED,
    CURVE_EVERY,
    GRIDS,
    LAM,
    POLICIES,
    PRINTED,
    ROOT_SEED,
    ROWS,
    SEEDS,
    SIGMA2,
    TAUS,
    VALIDATION_SEEDS,
    VALIDATIONS,
    Job,
    Protocol,
    choose,
    play_job,
    row_policy,
    run_job,
    test_jobs,
    validation_jobs,
)
from .report import (
    format_comparison,
    format_side_by_side,
    oracle_frame,
    side_by_side_frame,
    table_frame,
    table_status,
)
from .runs import execute_jobs, load_curves, load_runs, reproduce, reproduce_protocols, results_dir

__all__ = [
    "STORE_FILE",
    "CARRIED",
    "CURVE_EVERY",
    "PRINTED",
    "ROOT_SEED",
    "TAUS",
    "choose",
    "HORIZON",
    "TABLE_KEYS",
    "play_job",
    "GRIDS",
    "SIGMA2",
    "LAM",
    "SEEDS",
    "VALIDATION_SEEDS",
    "VALIDATIONS",
    "Job",
    "Protocol",
    "validation_jobs",
    "test_jobs",
    "run_job",
    "reproduce",
    "reproduce_protocols",
    "execute_jobs",
    "table_frame",
    "load_runs",
    "load_curves",
    "results_dir",
    "format_comparison",
    "format_side_by_side",
    "change_points",
    "stored_choice",
    "live_jobs",
    "curves_frame",
    "LIVE_DEFAULTS",
    "table_status",
    "oracle_frame",
    "row_policy",
    "POLICIES",
    "ROWS",
    "side_by_side_frame",
]
