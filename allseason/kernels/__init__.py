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

from typing import TYPE_CHECKING

from .._lazy import lazy_names
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

if TYPE_CHECKING:
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
    from .ridge import (
        BoBState,
        Resets,
        bob_chunk,
        new_bob_state,
        ridge_apply,
    )

# The typed state (:mod:`.types`, numpy only) is imported here; every kernel on first use
# (PEP 562), so that a process that validates, refuses or prints help and never plays a step
# does not import numba (about 0.4 s of CPU). The first kernel a policy calls imports its
# family's module, as the import of this package did before.
_HOME = {
    "AllSeasonOut": ".allseason",
    "AllSeasonParams": ".allseason",
    "AllSeasonState": ".allseason",
    "PruneCache": ".allseason",
    "allseason_chunk": ".allseason",
    "new_allseason_state": ".allseason",
    "prune_one": ".allseason",
    "sym_kl": ".allseason",
    "DenBandOut": ".denband",
    "DenBandParams": ".denband",
    "DenBandState": ".denband",
    "Experts": ".denband",
    "denband_chunk": ".denband",
    "grow_experts": ".denband",
    "new_denband_state": ".denband",
    "add_obs": ".linalg",
    "backward_solve": ".linalg",
    "best_arm": ".linalg",
    "best_arm_sandwich": ".linalg",
    "chol_downdate": ".linalg",
    "chol_factor": ".linalg",
    "chol_update": ".linalg",
    "forward_solve": ".linalg",
    "log_predictive": ".linalg",
    "refresh_mean": ".linalg",
    "remove_obs": ".linalg",
    "LinTSParams": ".lints",
    "LinTSState": ".lints",
    "discount_obs": ".lints",
    "lints_chunk": ".lints",
    "new_lints_state": ".lints",
    "short_memory_learn": ".lints",
    "BoBState": ".ridge",
    "Resets": ".ridge",
    "bob_chunk": ".ridge",
    "new_bob_state": ".ridge",
    "ridge_apply": ".ridge",
}


# any other attribute is tried as a family's module: ``kernels.lints``, ``kernels.agent``
__getattr__, __dir__ = lazy_names(__name__, globals(), _HOME, submodules=True)

FAMILIES = tuple(f"{__name__}{m}" for m in sorted(set(_HOME.values())))
"""The family modules, for a process that should import them all now (a forkserver's preload,
so that the workers it forks do not each import numba)."""

__all__ = [
    "FAMILIES",
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
