"""Compiled (numba) hot loops, one module per family, each with its typed state.

- :mod:`.linalg`: one Gaussian posterior slot (Cholesky up- and downdates, solves, the log
  predictive density, the Thompson step);
- :mod:`.lints`: LinTS, SW-LinTS, D-LinTS and the short-memory models (window, discount);
- :mod:`.allseason`: All-Season's Algorithm 1; :mod:`.pruning`: its symmetric KL and pruning;
- :mod:`.ridge`: the ridge (LinUCB) update and BoB's SW-UCB;
- :mod:`.denband`: DenBand's experts and auditors;
- :mod:`.agent`: the agent's single step (one decision with its pi, a reward into the batch
  buffer; the batch updates are :func:`.allseason.allseason_batch` and
  :func:`.lints.lints_batch`, which the chunk kernels call too); :mod:`.argmax`: pi of
  independent Gaussian scores (the 1-D integral); :mod:`.agent_mc`: pi of dense arms by
  Monte Carlo, stratified over the bandits;
- :mod:`.types`: what they all read (:class:`~.types.Rounds`, :class:`~.types.Window`,
  :class:`~.types.Events`).

Each kernel plays a chunk of whole batches and changes its state (a ``NamedTuple`` of numpy
arrays kept by the policy, e.g. :class:`~.lints.LinTSState`) in place. The random numbers
come in as arrays (u: one uniform per step, z: d normals per step) drawn by the policy from
its own generators, so a kernel is a pure function of its inputs and is checked decision for
decision against the plain numpy implementation (tests/policies/test_fast_paths.py).

Two rules keep the typed state as fast as positional arguments were: a kernel is called with
plain tuples in the named tuples' field order (:func:`~.types.plain`; numba's dispatcher types a
named tuple in Python, about 4 us a call, a plain one in C), and unpacks them once, by
position; the helpers it calls every step take arrays (numba counts a reference to every array
of a tuple passed to a function, which would cost more than the step).

Every kernel releases the GIL (``nogil=True``): a race plays its seeds in threads
(:func:`allseason.sim.runner.iter_race`), one per core; and is cached on disk (``cache=True``).
"""

from __future__ import annotations

from .allseason import (
    AllSeasonOut,
    AllSeasonParams,
    AllSeasonState,
    PruneCache,
    allseason_chunk,
    new_allseason_state,
    prune_one,
    sym_kl,
)
from .denband import (
    DenBandOut,
    DenBandParams,
    DenBandState,
    Experts,
    denband_chunk,
    grow_experts,
    new_denband_state,
)
from .linalg import (
    add_obs,
    backward_solve,
    best_arm,
    best_arm_sandwich,
    chol_downdate,
    chol_factor,
    chol_update,
    forward_solve,
    log_predictive,
    refresh_mean,
    remove_obs,
)
from .lints import (
    LinTSParams,
    LinTSState,
    discount_obs,
    lints_chunk,
    new_lints_state,
    short_memory_learn,
)
from .ridge import BoBState, Resets, bob_chunk, new_bob_state, ridge_apply
from .types import (
    CREATE,
    DISCARD,
    DISCOUNT,
    EVENT_NAMES,
    PLAIN,
    PRUNE,
    SPAWN,
    WINDOW,
    Events,
    Rounds,
    Window,
    copy_state,
    new_events,
    new_window,
    plain,
)

__all__ = [
    "PLAIN",
    "WINDOW",
    "DISCOUNT",
    "SPAWN",
    "PRUNE",
    "CREATE",
    "DISCARD",
    "EVENT_NAMES",
    "Rounds",
    "Window",
    "Events",
    "new_window",
    "new_events",
    "copy_state",
    "plain",
    "chol_update",
    "chol_downdate",
    "chol_factor",
    "forward_solve",
    "backward_solve",
    "refresh_mean",
    "log_predictive",
    "best_arm",
    "best_arm_sandwich",
    "add_obs",
    "remove_obs",
    "discount_obs",
    "short_memory_learn",
    "LinTSState",
    "LinTSParams",
    "new_lints_state",
    "lints_chunk",
    "AllSeasonState",
    "AllSeasonParams",
    "AllSeasonOut",
    "PruneCache",
    "new_allseason_state",
    "allseason_chunk",
    "prune_one",
    "sym_kl",
    "BoBState",
    "Resets",
    "new_bob_state",
    "bob_chunk",
    "ridge_apply",
    "Experts",
    "DenBandState",
    "DenBandParams",
    "DenBandOut",
    "grow_experts",
    "new_denband_state",
    "denband_chunk",
]
