"""The agent's hot path, compiled: a decision without pi, and a reward into the batch (the
batch update when B wait), each one call from Python (:mod:`allseason.agent.hot`).

Four costs of a call dominate at d = 5, more than its arithmetic, and are avoided here:

- *releasing the GIL* (about 0.1 us a call): these calls hold it (their work is a few us;
  the decision with pi, which may take a millisecond, is :func:`.agent.decide_packed`, which
  releases it);
- *reference counts*: each array read out of a struct or a tuple is counted up and down
  (atomic operations), and a nested tuple read then unpacked counts every array twice. The
  packs here are flat (one field per array), and a reward that only joins the batch reads
  the buffer's fields alone, the state's only when the update runs;
- *a returned tuple* (boxing it costs more than the call): a decision returns one int, the
  arm and the bandit's id packed (:func:`unpack_decision`).
- *unboxing a pack* (about 75 ns a call: an attribute read and a meminfo lookup): a pack is
  passed as its address and its numba type (an int and a type, about 15 ns), the pack itself
  kept alive by the caller (:func:`pack_address`, :func:`_at`);
- *calls that are not inlined*: each counts the array views it is passed up and down; the
  batch update (:func:`~.allseason.allseason_batch`, :func:`~.lints.lints_batch`) and the
  helpers of a step are inlined (``inline="always"``), so one call runs as one function.

A decision also keeps the bandits' normalised weights from one call to the next while the
log weights and the live slots are those they were computed from (compared element by
element, so any change, whoever made it, recomputes them): the same numbers as computing
them at every call, bit for bit; with B > 1 the decisions of a batch compute them once.

Each function is the general one's step for step (:func:`.agent.decide_step` without pi;
the learn calls against the tuple-packed reference of ``tests/agent/test_agent_hot.py``: the
same calls on the same arrays); ``tests/agent/test_agent_speed.py`` and
``tests/agent/test_agent_hot.py`` check them decision for decision, state bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.experimental import structref
from numba.extending import intrinsic

from .agent import fill_draws
from .allseason import allseason_batch, batch_weights, choose_slot
from .eventkey import event_key_ascii
from .linalg import best_arm, best_arm_sandwich
from .lints import lints_batch

ARM_BITS = 32  # a decision's int: arm + (bandit id + 1) << 32
_ARM_MASK = (1 << ARM_BITS) - 1


def unpack_decision(code: int) -> tuple[int, int]:
    """(arm, bandit id) of :func:`decide_hot`'s int (-1 for a single-model policy)."""
    return code & _ARM_MASK, (code >> ARM_BITS) - 1


class _Flat(types.StructRef):
    def preprocess_fields(self, fields):
        """Fields as their plain types."""
        return tuple((n, types.unliteral(t)) for n, t in fields)


@structref.register
class HotDecideType(_Flat):
    """numba's type of a :class:`HotDecide`."""


@structref.register
class AllSeasonLearnType(_Flat):
    """numba's type of an :class:`AllSeasonLearn`."""


@structref.register
class LinTSLearnType(_Flat):
    """numba's type of a :class:`LinTSLearn`."""


class HotDecide(structref.StructRefProxy):
    """The fixed arguments of :func:`decide_hot` (see :data:`HOT_DECIDE_FIELDS`)."""


class AllSeasonLearn(structref.StructRefProxy):
    """The fixed arguments of :func:`allseason_learn_hot` (:data:`ALLSEASON_LEARN_FIELDS`)."""


class LinTSLearn(structref.StructRefProxy):
    """The fixed arguments of :func:`lints_learn_hot` (:data:`LINTS_LEARN_FIELDS`)."""


#: block, cidx: each arm's block and context; L, mu, Lt, logw, alive, sandwich: the bank
#: (:func:`.agent.decide_step`'s); ids: each slot's bandit id; z, theta, tmp, tmp2, w:
#: workspaces; wlogw, walive, wok: the log weights and live slots ``w`` was computed from
#: (wok[0] = 0: not yet); rows: the open decisions' rows (the row of the arm played is written
#: to the decision's slot); prefix: the seed's
#: bytes the event keys start with, kh, km: the key's workspaces (:mod:`.eventkey`)
HOT_DECIDE_FIELDS = (
    "block", "cidx", "L", "mu", "Lt", "logw", "alive", "sandwich", "ids",
    "z", "theta", "tmp", "tmp2", "w", "wlogw", "walive", "wok", "rows", "prefix", "kh", "km",
)  # fmt: skip
_BUF = ("bx", "bg", "br", "bb", "bs", "cnt", "rows")  # the batch buffer, the open rows
#: the buffer; AllSeasonState's arrays (the window's and pruning's cache unpacked: wx, wg,
#: wr, wst; cache, a tuple); events; params; the bandits' bookkeeping (nobs, born, info);
#: workspaces ll, tmp
ALLSEASON_LEARN_FIELDS = _BUF + (
    "M", "L", "b", "mu", "ids", "logw", "alive", "counters", "wx", "wg", "wr", "wst",
    "cache", "events", "params", "nobs", "born", "info", "ll", "tmp",
)  # fmt: skip
#: the buffer; LinTSState's arrays (the window unpacked); params; workspace tmp
LINTS_LEARN_FIELDS = _BUF + (
    "M", "L", "b", "mu", "wx", "wg", "wr", "wst", "Mt", "Lt", "bt", "params", "tmp",
)  # fmt: skip
structref.define_proxy(HotDecide, HotDecideType, list(HOT_DECIDE_FIELDS))
structref.define_proxy(AllSeasonLearn, AllSeasonLearnType, list(ALLSEASON_LEARN_FIELDS))
structref.define_proxy(LinTSLearn, LinTSLearnType, list(LINTS_LEARN_FIELDS))


@intrinsic
def _address(typingctx, pack):
    """The address of a pack's meminfo (its identity for :func:`_at`)."""

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        return builder.ptrtoint(st.meminfo, cgutils.intp_t)

    return types.intp(pack), codegen


@intrinsic
def _at(typingctx, addr, ty):
    """The pack of type ``ty`` whose meminfo is at ``addr`` (:func:`pack_address`), counted
    (a new reference, released as any other): the caller keeps the pack alive meanwhile."""
    inst = ty.instance_type

    def codegen(context, builder, sig, args):
        st = cgutils.create_struct_proxy(inst)(context, builder)
        st.meminfo = builder.inttoptr(args[0], st.meminfo.type)
        val = st._getvalue()
        context.nrt.incref(builder, inst, val)
        return val

    return inst(addr, ty), codegen


@njit(cache=True)
def pack_address(pack):
    """A pack's address, which the hot calls take with its numba type instead of the pack
    (unboxing a pack costs about 75 ns a call, an int about 10): valid while the pack lives,
    so whoever passes it keeps the pack."""
    return _address(pack)


@njit(cache=True)
def hot_decide_pack(
    block, cidx, L, mu, Lt, logw, alive, sandwich, ids, z, theta, tmp, tmp2, w, wlogw, walive,
    wok, rows, prefix, kh, km,
):  # fmt: skip
    """A :class:`HotDecide` of these arrays (referenced, not copied)."""
    return HotDecide(
        block, cidx, L, mu, Lt, logw, alive, sandwich, ids,
        z, theta, tmp, tmp2, w, wlogw, walive, wok, rows, prefix, kh, km,
    )  # fmt: skip


@njit(cache=True)
def allseason_learn_pack(
    bx, bg, br, bb, bs, cnt, rows, M, L, b, mu, ids, logw, alive, counters, wx, wg, wr, wst,
    cache, events, params, nobs, born, info, ll, tmp,
):  # fmt: skip
    """An :class:`AllSeasonLearn` of these arrays (referenced, not copied)."""
    return AllSeasonLearn(
        bx, bg, br, bb, bs, cnt, rows, M, L, b, mu, ids, logw, alive, counters, wx, wg, wr, wst,
        cache, events, params, nobs, born, info, ll, tmp,
    )  # fmt: skip


@njit(cache=True)
def lints_learn_pack(
    bx, bg, br, bb, bs, cnt, rows, M, L, b, mu, wx, wg, wr, wst, Mt, Lt, bt, params, tmp
):  # fmt: skip
    """A :class:`LinTSLearn` of these arrays (referenced, not copied)."""
    return LinTSLearn(
        bx, bg, br, bb, bs, cnt, rows, M, L, b, mu, wx, wg, wr, wst, Mt, Lt, bt, params, tmp
    )  # fmt: skip


@njit(cache=True, inline="always")
def _weights(logw, alive, w, wlogw, walive, wok):
    """w = :func:`.allseason.batch_weights` (logw, alive), unless logw and alive are still
    those it was computed from (then w holds those very numbers)."""
    same = wok[0] != 0
    if same:
        for s in range(logw.shape[0]):
            if logw[s] != wlogw[s] or alive[s] != walive[s]:
                same = False
                break
    if not same:
        batch_weights(logw, alive, w)
        for s in range(logw.shape[0]):
            wlogw[s] = logw[s]
            walive[s] = alive[s]
        wok[0] = 1


@njit(cache=True)
def decide_hot(ctx, event, slot, addr, ty):
    """:func:`.agent.decide_step` without pi (the draws keyed by the text ``event``, its key
    :func:`.eventkey.event_key_ascii` after ``pack.prefix``), holding the GIL; returns arm +
    (bandit id + 1) << 32 (:func:`unpack_decision`), -1 if ``ctx`` holds a NaN or an infinity
    or -2 if ``event`` has a character beyond ASCII (nothing is drawn: the caller keys it by
    hashlib and takes the general step). The :class:`HotDecide` at ``addr``
    (:func:`pack_address`) of numba type ``ty``. The played arm's row is written to
    ``pack.rows[slot]`` (the decision's slot while it is open: no copy, no array returned)."""
    pack = _at(addr, ty)
    for c in range(ctx.shape[0]):
        for i in range(ctx.shape[1]):
            if not math.isfinite(ctx[c, i]):
                return -1
    key = event_key_ascii(pack.prefix, event, pack.kh, pack.km)
    if key < 0:
        return -2
    z = pack.z
    u = fill_draws(np.uint64(key), z)
    w, alive = pack.w, pack.alive
    _weights(pack.logw, alive, w, pack.wlogw, pack.walive, pack.wok)
    j = choose_slot(u, w, alive)
    L, mu = pack.L, pack.mu
    if pack.sandwich:
        a = best_arm_sandwich(
            ctx, pack.block, pack.cidx, L[j], pack.Lt, mu[j], z, pack.theta, pack.tmp, pack.tmp2
        )
    else:
        a = best_arm(ctx, pack.block, pack.cidx, L[j], mu[j], z, pack.theta, pack.tmp)
    pack.rows[slot] = ctx[pack.cidx[a]]
    return a + ((pack.ids[j] + 1) << ARM_BITS)


@njit(cache=True, inline="always")
def _append(slot, g, bandit, r, pack):
    """Append one resolved decision, its row in ``pack.rows[slot]``, to the pack's buffer
    (``g`` < 0: none, a flush); returns how many wait, or -2 if the buffer is full (nothing
    appended: the caller grows it and calls again)."""
    bx, cnt = pack.bx, pack.cnt
    n = cnt[0]
    if g >= 0:
        if n >= bx.shape[0]:
            return -2
        bx[n] = pack.rows[slot]
        pack.bg[n] = g
        pack.br[n] = r
        pack.bb[n] = bandit
        n += 1
        cnt[0] = n
    return n


@njit(cache=True, inline="always")
def _allseason_update(n, step, pack):
    """All-Season's batch update on the ``n`` decisions waiting: each learnt by the slot of
    the bandit that played it if it is still alive (else by the shadow alone), then the
    bandits' bookkeeping (n_obs, birth version, the model version in ``info[0]``)."""
    bx, bg, br, bb, bs = pack.bx, pack.bg, pack.br, pack.bb, pack.bs
    ids, alive, counters = pack.ids, pack.alive, pack.counters
    nobs, born, info = pack.nobs, pack.born, pack.info
    S = ids.shape[0]
    for t in range(n):
        bs[t] = -1
        for s in range(S):
            if alive[s] and ids[s] == bb[t]:
                bs[t] = s
                break
    next_id, n0 = counters[0], nobs[0]
    counters[1] = 0
    allseason_batch(
        pack.M, pack.L, pack.b, pack.mu, ids, pack.logw, alive, counters,
        pack.wx, pack.wg, pack.wr, pack.wst, pack.cache, pack.events,
        bg[:n], bx[:n], br[:n], bs[:n], step, pack.params, pack.ll, pack.tmp,
    )  # fmt: skip
    if counters[0] > next_id:  # a spawn: the newborn has the shadow's observations
        for s in range(S):
            if alive[s] and ids[s] == next_id:
                nobs[s] = n0
                born[s] = info[0] + 1
    for t in range(n):
        s = bs[t]
        if s > 0 and alive[s] and ids[s] == bb[t]:
            nobs[s] += 1
    nobs[0] = n0 + n if info[1] <= 0 else min(n0 + n, info[1])
    info[0] += 1  # the model version after this update
    pack.cnt[0] = 0
    return counters[1]


@njit(cache=True)
def allseason_learn_hot(slot, g, bandit, r, B, step, addr, ty):
    """A reward of All-Season's agent, its row in ``pack.rows[slot]``, into the batch
    (:class:`AllSeasonLearn`), holding the
    GIL; the update once ``B`` wait (``B`` = 0: whatever waits): -1 (no update), -2 (the
    buffer is full, nothing done) or the number of events written. The pack at ``addr``
    (:func:`pack_address`), of numba type ``ty``."""
    pack = _at(addr, ty)
    n = _append(slot, g, bandit, r, pack)
    if n == -2:
        return -2
    if n == 0 or (B > 0 and n < B):
        return -1
    return _allseason_update(n, step, pack)


@njit(cache=True)
def lints_learn_hot(slot, g, bandit, r, B, step, addr, ty):
    """A reward of the LinTS family's agent, its row in ``pack.rows[slot]``, into the batch
    (:class:`LinTSLearn`), holding the
    GIL; :func:`~.lints.lints_batch` once ``B`` wait (``B`` = 0: whatever waits): -1 (no
    update), -2 (the buffer is full, nothing done) or 0 (an update, no events); ``step``
    unused. The pack at ``addr`` (:func:`pack_address`), of numba type ``ty``."""
    pack = _at(addr, ty)
    n = _append(slot, g, bandit, r, pack)
    if n == -2:
        return -2
    if n == 0 or (B > 0 and n < B):
        return -1
    bx, bg, br = pack.bx, pack.bg, pack.br
    lints_batch(
        pack.M, pack.L, pack.b, pack.mu, pack.wx, pack.wg, pack.wr, pack.wst,
        pack.Mt, pack.Lt, pack.bt, bg[:n], bx[:n], br[:n], pack.params, pack.tmp,
    )  # fmt: skip
    pack.cnt[0] = 0
    return 0


__all__ = [
    "ARM_BITS",
    "HOT_DECIDE_FIELDS",
    "ALLSEASON_LEARN_FIELDS",
    "LINTS_LEARN_FIELDS",
    "HotDecide",
    "AllSeasonLearn",
    "LinTSLearn",
    "unpack_decision",
    "pack_address",
    "hot_decide_pack",
    "allseason_learn_pack",
    "lints_learn_pack",
    "decide_hot",
    "allseason_learn_hot",
    "lints_learn_hot",
]
