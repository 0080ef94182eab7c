"""What a deployed agent believes now, read from its saved state (the file ``Agent.save``
writes, :mod:`allseason.agent.statefile`): for "Your deployed bandit".

The file is someone else's: it is read from memory (an anonymous in-memory file where the
system has one, so nothing is written to disk), checked by the state file's own reader
(size, archive, manifest, every array's dtype, shape, checksum and finiteness), then
checked once more before an agent is built from it: the sizes the manifest asks for (d, the
arms, the bandits, the window) must be those of the arrays the file holds, so a small
hostile file cannot make the reader allocate a large agent. Every refusal is ONE
:class:`~allseason.errors.SpecError` line naming the file.

:func:`read_agent_state` returns plain tables: what the agent is (policy, model version,
its shadow's window or discount, N_max...), its bandits (weight, age, observations, which
one is the shadow), and what each learnt: the posterior mean of every coefficient and its
standard deviation ``sqrt(diag(M^-1))``.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import SpecError
from ..limits import DEPLOYED_LIMITS

if TYPE_CHECKING:
    import pandas as pd

SHOWN_COEFS = 8  # coefficients the page shows side by side (the CSV holds them all)
STATE_FILE = "agent.state"  # the saved state the page reads in a server's folder


@contextlib.contextmanager
def _in_memory(data: bytes):
    """A path to ``data``: an anonymous in-memory file (Linux), else a private temporary
    file deleted on exit."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("allseason-state", getattr(os, "MFD_CLOEXEC", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            yield f"/proc/self/fd/{fd}"
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="allseason-state-") as tmp:
        path = Path(tmp) / "upload.state"
        path.write_bytes(data)
        yield str(path)


def _fail(name: str, message: str) -> SpecError:
    return SpecError(name, " ".join(str(message).split())[:300])


def _read(data: bytes, name: str) -> tuple[dict, dict]:
    from ..agent.statefile import read_state

    with _in_memory(data) as path:
        try:
            return read_state(path, max_bytes=DEPLOYED_LIMITS["upload_bytes"])
        except SpecError as e:
            msg = e.message
            prefix = Path(path).name + ": "
            raise _fail(name, msg[len(prefix) :] if msg.startswith(prefix) else msg) from None


def _fits(manifest: dict, arrays: dict) -> None:
    """The sizes the manifest asks for are the file's own (before anything is allocated)."""
    from ..agent import Agent

    s = manifest.get("settings")
    labels = manifest.get("labels")
    hyper = manifest.get("hyperparameters")
    d = s.get("d") if isinstance(s, dict) else None
    if not isinstance(hyper, dict) or isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise SpecError("state", "the manifest does not describe an agent (settings, d)")
    if labels is not None and not isinstance(labels, list):
        raise SpecError("state", "the manifest's labels are not a list")
    G = len(labels) if labels else 1
    p = d + 1 if labels else d
    M, mu = arrays.get("state.M"), arrays.get("state.mu")
    if M is None or mu is None:
        raise SpecError("state", "no posterior in the file (state.M, state.mu)")
    # a tiny agent of the same policy and hyperparameters says how many bandits and how
    # long a window those ask for
    tiny = Agent(str(manifest.get("policy")), d=1, **hyper)
    if tiny.engine != "compiled":
        raise SpecError("state", f"{tiny.policy_name}: no agent of this policy is saved")
    f = tiny.policy.kernel_state
    lead = f.M.shape[:-3]  # (S,) for All-Season, () for the LinTS family
    want_m, want_mu = (*lead, G, p, p), (*lead, G, p)
    if M.shape != want_m or mu.shape != want_mu:
        raise SpecError("state", f"the posterior's arrays {M.shape} do not fit the manifest "
                        f"(d = {d}, {G} block(s), {lead[0] if lead else 1} slot(s))")  # fmt: skip
    wx = arrays.get("state.window.x")
    if wx is None or wx.shape != (f.window.x.shape[0], p):
        raise SpecError("state", "the window's arrays do not fit the manifest")


def _shadow_text(hyper: dict) -> str:
    if "gamma" in hyper:
        return f"discounted: each batch multiplies the past by gamma = {hyper['gamma']:g}"
    if "tau" in hyper:
        return f"a sliding window of the last tau = {hyper['tau']:,} observations"
    return "none (one model that never forgets)"


def _coef_names(agent) -> list[str]:
    names = [f"x{j}" for j in range(agent.d)]
    return names + ["1"] if agent.context_mode else names


def theta_table(agent) -> pd.DataFrame:
    """Every live bandit's posterior, coefficient by coefficient: bandit, block ("arm k" in
    context mode, each arm's own coefficients; "all arms" otherwise), coef, mean, sd
    (``sqrt(diag(M^-1))``)."""
    import pandas as pd  # slow to import (0.5 s): only when first needed
    from scipy.linalg import solve_triangular

    names = _coef_names(agent)
    blocks = [f"arm {b}" for b in agent.labels] if agent.context_mode else ["all arms"]
    cols: dict[str, list] = {k: [] for k in ("bandit", "block", "coef", "mean", "sd")}
    for post in agent.policy.posterior_blocks() or []:
        for g in range(post.M.shape[0]):
            L = np.linalg.cholesky(post.M[g])
            Linv = solve_triangular(L, np.eye(L.shape[0]), lower=True)
            sd = np.sqrt((Linv * Linv).sum(axis=0))  # diag(L^-T L^-1) = diag(M^-1)
            n = len(names)
            cols["bandit"] += [int(post.bandit)] * n
            cols["block"] += [blocks[g]] * n
            cols["coef"] += names
            cols["mean"] += post.mu[g].tolist()
            cols["sd"] += sd.tolist()
    return pd.DataFrame(cols)


def theta_wide(theta: pd.DataFrame, order: list[int], n: int = SHOWN_COEFS) -> pd.DataFrame:
    """The first ``n`` coefficients of each (bandit, block) side by side, as "mean ± sd"
    text, bandits in ``order``."""
    import pandas as pd  # slow to import (0.5 s): only when first needed

    if not len(theta):
        return pd.DataFrame(columns=["bandit", "block"])
    coefs = list(dict.fromkeys(theta["coef"]))[:n]
    shown = theta[theta["coef"].isin(coefs)].copy()
    shown["value"] = [f"{m:+.3f} ± {s:.3f}" for m, s in zip(shown["mean"], shown["sd"])]
    wide = shown.pivot_table(index=["bandit", "block"], columns="coef", values="value",
                             aggfunc="first", sort=False)[coefs]  # fmt: skip
    wide = wide.reset_index()
    rank = {b: i for i, b in enumerate(order)}
    wide["_rank"] = wide["bandit"].map(rank).fillna(len(rank))
    wide = wide.sort_values(["_rank"], kind="stable").drop(columns="_rank")
    wide.columns.name = None
    return wide.reset_index(drop=True)


def read_agent_state(data: bytes, name: str = "agent.state") -> dict:
    """A saved agent's state, read and checked, as the page's tables.

    Parameters
    ----------
    data : bytes
        The file's bytes (at most ``DEPLOYED_LIMITS["upload_bytes"]``).
    name : str
        Its name, for the messages.

    Returns
    -------
    dict
        ``about`` (policy, model_version, d, n_arms, labels, batch_size, draws, counts,
        open, pending, shadow, n_max, hyperparameters), ``bandits`` (bandit, role,
        weight, age, n_obs; the heaviest first), ``theta`` (:func:`theta_table`), ``wide``
        (:func:`theta_wide`), ``summary`` (the agent's ``summary()`` bandits).

    Raises
    ------
    SpecError
        One line naming ``name``: too large, not a state file, damaged, hostile, not an
        agent's, or one this version cannot read.
    """
    import pandas as pd  # slow to import (0.5 s): only when first needed

    from ..agent import Agent

    cap = DEPLOYED_LIMITS["upload_bytes"]
    if not isinstance(data, bytes | bytearray) or len(data) > cap:
        n = len(data) if isinstance(data, bytes | bytearray) else 0
        raise _fail(name, f"the file has {n:,} bytes; at most {cap:,} are read")
    manifest, arrays = _read(bytes(data), name)
    try:
        _fits(manifest, arrays)
        agent = Agent.from_state(manifest, arrays)
        theta = theta_table(agent)
    except SpecError as e:
        raise _fail(name, f"not a state this version can read: {e}") from None
    except (ArithmeticError, AttributeError, LookupError, MemoryError, TypeError, ValueError) as e:
        raise _fail(name, f"not a state this version can read ({type(e).__name__})") from None
    summ = agent.summary()
    hyper = dict(summ["hyperparameters"])
    bandits = pd.DataFrame(summ["bandits"]).rename(columns={"id": "bandit"})
    bandits = bandits.sort_values("weight", ascending=False, kind="stable").reset_index(drop=True)
    is_ensemble = bool(len(bandits)) and bool((bandits["role"] != "model").all())
    about = dict(
        policy=summ["policy"],
        model_version=summ["model_version"],
        d=summ["d"],
        n_arms=summ["n_arms"],
        labels=summ["labels"],
        batch_size=summ["batch_size"],
        draws=summ["draws"],
        counts=summ["counts"],
        open=summ["open"],
        pending=summ["pending"],
        shadow=_shadow_text(hyper),
        n_max=hyper.get("n_max"),
        ensemble=is_ensemble,
        hyperparameters={
            k: (v if not isinstance(v, float) or math.isfinite(v) else str(v))
            for k, v in hyper.items()
        },  # fmt: skip
        created=manifest.get("created"),
    )
    order = bandits["bandit"].tolist()
    return dict(
        about=about,
        bandits=bandits,
        theta=theta,
        wide=theta_wide(theta, order),
        summary=summ["bandits"],
    )


def read_agent_state_file(path) -> dict:
    """:func:`read_agent_state` of the file at ``path`` (a server's folder: its size checked
    before it is read, at most ``DEPLOYED_LIMITS["upload_bytes"]``)."""
    path = Path(path)
    cap = DEPLOYED_LIMITS["upload_bytes"]
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > cap:
                raise _fail(path.name, f"the file has {size:,} bytes; at most {cap:,} are read")
            data = f.read(cap + 1)
    except OSError as e:
        raise _fail(path.name, f"cannot be read ({e.strerror or type(e).__name__})") from None
    return read_agent_state(data, path.name)


__all__ = [
    "read_agent_state",
    "read_agent_state_file",
    "theta_table",
    "theta_wide",
    "STATE_FILE",
    "SHOWN_COEFS",
]
