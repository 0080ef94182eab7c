"""The agent's state as plain data: a JSON-able manifest and a dict of numpy arrays
(:meth:`Agent.to_state`, :meth:`Agent.from_state`), checked on the way in (shapes, dtypes,
finite numbers, positive definite precisions). Functions of the agent (bound as its
methods)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..errors import SpecError, show
from .draws import seed_from_text
from .records import COUNT_NAMES, FORMAT, FORMAT_VERSION, Decision


def to_state(self) -> tuple[dict, dict[str, np.ndarray]]:
    """The whole state as plain data: a JSON-able manifest and a dict of numpy arrays.

    Returns
    -------
    manifest : dict
        format, version, policy, hyperparameters, settings, d, K, labels, counts, the
        draws' key (seed) and stream states, model and parent version, the open
        decisions and pending rewards (their rows are in the arrays), the bandits'
        bookkeeping.
    arrays : dict of str to ndarray
        The kernel state's arrays (``state.*``), the open decisions' and pending
        rewards' rows.

    Raises
    ------
    SpecError
        A policy on the plain engine (only the compiled ones have a state to save).
    """
    if self.engine != "compiled":
        raise SpecError(
            "policy",
            f"{self.policy_name}: only the LinTS family and All-Season (compiled) can be saved",
        )
    arrays = {}
    for name, arr in _flatten("state", self.policy.kernel_state):
        arrays[name] = arr.copy()
    open_items = list(self._open.items())
    p = self.p
    arrays["open.x"] = (
        np.stack([self._row_of(e[0]) for _, e in open_items]) if open_items else np.zeros((0, p))
    )
    arrays["open.pi"] = np.array(
        [-1.0 if e[4].propensity is None else e[4].propensity for _, e in open_items],
        dtype=float,
    )
    n = self._n_pending
    bx, bg, br, bb = self._buf[:4]
    arrays["pending.x"] = bx[:n].copy()
    arrays["pending.r"] = br[:n].copy()
    if self._is_allseason:
        arrays["agent.nobs"] = self._track_arrays[0].copy()
        arrays["agent.born"] = self._track_arrays[1].copy()
    open_rows = [_open_row(event, entry) for event, entry in open_items]
    pol = self.policy
    manifest = {
        "format": FORMAT,
        "format_version": list(FORMAT_VERSION),
        "policy": self.policy_name,
        "hyperparameters": _jsonable(self.hyperparameters),
        "settings": {
            "d": self.d,
            "labels": self.labels,
            "batch_size": self.batch_size,
            "max_open": self.max_open,
            "horizon": self.horizon,
            "on_expire": self.on_expire,
            "default_reward": self.default_reward,
            "propensities": self.propensities,
            "draws": self.draws,
            "n_mc": self.n_mc,
        },
        "d": self.d,
        "n_arms": self.n_arms,
        "labels": self.labels,
        "seed": self._seed_text,
        "streams": _jsonable(list(pol.streams_state())),
        "policy_t": int(pol.t),
        "model_version": self.model_version,
        "parent_version": self.parent_version,
        "counts": dict(self.counts),
        "open": open_rows,
        "pending": [{"g": int(g), "bandit": int(b)} for g, b in zip(bg[:n], bb[:n])],
        "resolved_recent": list(self._resolved),
    }
    return manifest, arrays


def _open_row(event, entry) -> dict:
    """An open decision as a manifest row (its row x is in the arrays)."""
    _x, g, bandit, t, rec = entry
    return {
        "event_id": event,
        "g": int(g),
        "bandit": int(bandit),
        "t": t,
        "arm": rec.arm,
        "label": rec.label,
        "pi_method": rec.pi_method,
        "pi_stderr": rec.pi_stderr,
        "model_version": rec.model_version,
        "propensities": None if rec.propensities is None else rec.propensities.tolist(),
    }


def from_state(cls, manifest: dict, arrays: dict[str, np.ndarray]):
    """The agent :meth:`to_state` described, ready to continue bit for bit.

    Parameters
    ----------
    manifest : dict
    arrays : dict of str to ndarray

    Returns
    -------
    Agent

    Raises
    ------
    SpecError
        A manifest of another format or major version, or arrays that do not fit it
        (shape, dtype, finiteness, positive definiteness), in one line.
    """
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SpecError("state", "not an agent state (format)")
    version = manifest.get("format_version")
    if not isinstance(version, list) or not version or version[0] != FORMAT_VERSION[0]:
        raise SpecError("state", f"format version {show(version)} is not {FORMAT_VERSION[0]}.x")
    try:
        s = manifest["settings"]
        labels = manifest["labels"]
        agent = cls(
            manifest["policy"],
            d=s["d"],
            arms=labels,
            seed=seed_from_text(manifest["seed"]),
            batch_size=s["batch_size"],
            max_open=s["max_open"],
            horizon=s["horizon"],
            on_expire=s["on_expire"],
            default_reward=s["default_reward"],
            propensities=s["propensities"],
            draws=s["draws"],
            n_mc=s["n_mc"],
            engine="compiled",
            **manifest["hyperparameters"],
        )
        fresh = agent.policy.kernel_state
        names = [n for n, _ in _flatten("state", fresh)]
        if set(names) - set(arrays):
            raise SpecError("state", f"missing arrays: {sorted(set(names) - set(arrays))[:3]}")
        new = _unflatten("state", fresh, arrays)
        _check_state(new)
        agent.policy.kernel_state = new
        agent.policy._kernel_args_cache = None
        agent._bind_state()
        streams = manifest["streams"]
        agent.policy.restore_streams((streams[0], streams[1]))
        agent.policy.t = int(manifest["policy_t"])
        agent.model_version = int(manifest["model_version"])
        agent.parent_version = agent.model_version
        counts = manifest["counts"]
        agent.counts = {k: int(counts[k]) for k in COUNT_NAMES}
        _restore_open(agent, manifest["open"], arrays["open.x"], arrays["open.pi"])
        px, pr = arrays["pending.x"], arrays["pending.r"]
        pend = manifest["pending"]
        if px.shape != (len(pend), agent.p) or pr.shape != (len(pend),):
            raise SpecError("state", "pending rewards: rows and arrays differ")
        _restore_pending(agent, pend, px, pr)
        agent._resolved = OrderedDict((str(e), None) for e in manifest["resolved_recent"])
        if agent._is_allseason:
            nobs, born, info = agent._track_arrays
            for arr, key in ((nobs, "agent.nobs"), (born, "agent.born")):
                got = arrays[key]
                if got.shape != arr.shape or got.dtype != arr.dtype:
                    raise SpecError("state", f"{key}: expected {arr.dtype} {arr.shape}")
                arr[:] = got
            info[0] = agent.model_version
    except SpecError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise SpecError(
            "state", f"the manifest does not describe an agent ({show(str(e))})"
        ) from None
    return agent


def _restore_pending(agent, rows, px, pr) -> None:
    """The rewards waiting for the batch update, into the agent's buffer."""
    n = len(rows)
    if n > agent._buf[2].shape[0]:
        agent._grow_buffer(n)
    bx, bg, br, bb = agent._buf[:4]
    for i, row in enumerate(rows):
        bx[i], bg[i], br[i], bb[i] = px[i], int(row["g"]), float(pr[i]), int(row["bandit"])
    agent._buf[5][0] = n
    agent._n_pending = n


def _restore_open(agent, rows, ox, opi) -> None:
    """The open decisions of a manifest, into the agent."""
    if ox.shape != (len(rows), agent.p) or opi.shape != (len(rows),):
        raise SpecError("state", "open decisions: rows and arrays differ")
    for i, row in enumerate(rows):
        pis = row["propensities"]
        rec = Decision(
            str(row["event_id"]),
            int(row["arm"]),
            str(row["label"]),
            None if not opi[i] >= 0 else float(opi[i]),  # -1: not computed (a file has no NaN)
            None if pis is None else np.asarray(pis, dtype=float),
            str(row["pi_method"]),
            float(row["pi_stderr"]),
            int(row["model_version"]),
            int(row["bandit"]),
            float(row["t"]),
        )
        agent._open[rec.event_id] = (
            np.array(ox[i], dtype=float),
            int(row["g"]),
            int(row["bandit"]),
            float(row["t"]),
            rec,
        )


def summary(self) -> dict:
    """What the agent is, as JSON-able plain data: policy, d, n_arms, version, counts,
    open decisions, pending rewards, and the bandits (id, role, weight, age, n_obs)."""
    bandits = []
    w = self.weights()
    if w is not None and self.engine == "compiled":
        bandits = self._bandit_rows()
    elif w is not None:
        for bid, wt in zip(w[0].tolist(), w[1].tolist()):
            bandits.append(
                {
                    "id": int(bid),
                    "role": "shadow" if bid == 0 else "base",
                    "weight": float(wt),
                    "age": self.model_version - self._born.get(bid, 0),
                    "n_obs": int(self._nobs.get(bid, 0)),
                }
            )
    else:
        bandits.append(
            {
                "id": -1,
                "role": "model",
                "weight": 1.0,
                "age": self.model_version,
                "n_obs": self.counts["learned"] + _default_learned(self),
            }
        )
    return {
        "policy": self.policy_name,
        "hyperparameters": dict(self.hyperparameters),
        "d": self.d,
        "n_arms": self.n_arms,
        "labels": self.labels,
        "engine": self.engine,
        "draws": self.draws,
        "batch_size": self.batch_size,
        "model_version": self.model_version,
        "parent_version": self.parent_version,
        "counts": dict(self.counts),
        "open": len(self._open),
        "pending": self._n_pending if self.engine == "compiled" else len(self._pending),
        "bandits": bandits,
    }


def _default_learned(self) -> int:
    if self.on_expire == "default":
        return self.counts["expired"] - self.counts["dropped"]
    return 0


def declared_values(policy) -> dict:
    """The policy's declared hyperparameters and their values, as stored."""
    from ..policies import hyperparameters

    return {k: getattr(policy, k) for k in hyperparameters(policy.name)}


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def _flatten(prefix, state):
    for name, value in zip(state._fields, state):
        key = f"{prefix}.{name}"
        if isinstance(value, np.ndarray):
            yield key, value
        elif isinstance(value, tuple):
            yield from _flatten(key, value)


def _unflatten(prefix, template, arrays):
    out = []
    for name, value in zip(template._fields, template):
        key = f"{prefix}.{name}"
        if isinstance(value, np.ndarray):
            a = arrays[key]
            if not isinstance(a, np.ndarray) or a.shape != value.shape or a.dtype != value.dtype:
                got = getattr(a, "shape", None), getattr(a, "dtype", None)
                raise SpecError(
                    "state", f"{key}: expected {value.dtype} {value.shape}, got {got[1]} {got[0]}"
                )
            out.append(np.array(a, copy=True))
        else:
            out.append(_unflatten(key, value, arrays))
    return type(template)(*out)


def _check_state(f) -> None:
    """Finite numbers, and positive definite precisions (of the live slots)."""
    for name, a in _flatten("state", f):
        if a.dtype.kind == "f" and name not in ("state.logw",) and not np.all(np.isfinite(a)):
            raise SpecError("state", f"{name}: holds NaN or inf")
    if hasattr(f, "logw") and (np.any(np.isnan(f.logw)) or np.any(f.logw == np.inf)):
        raise SpecError("state", "state.logw: holds NaN or +inf")
    M = f.M[f.alive] if hasattr(f, "alive") else f.M
    d = np.diagonal(f.L[f.alive] if hasattr(f, "alive") else f.L, axis1=-2, axis2=-1)
    if np.any(~(d > 0)):
        raise SpecError("state", "a Cholesky factor has a diagonal entry <= 0")
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise SpecError("state", "a precision matrix is not positive definite") from None
