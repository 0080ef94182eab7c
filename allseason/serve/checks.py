"""Every request body checked at the boundary, with one clear line (no Starlette here).

>>> check_reward({"event_id": "e1", "reward": 1, "t": 5})
{'event_id': 'e1', 'reward': 1.0, 't': 5.0}
>>> check_reward({"event_id": "e1", "reward": "1"})
Traceback (most recent call last):
...
allseason.serve.checks.RequestError: reward: must be a finite number, got a str
"""

from __future__ import annotations

import re
import time

from ..limits import LIMITS, SERVE_LIMITS
from .journal import finite, loads

EVENT_ID = re.compile(r"[A-Za-z0-9._:@+/=-]+")
T_RANGE = (0.0, 1e11)  # Unix seconds: from 1970 to the year 5138


class RequestError(Exception):
    """A bad request: an HTTP status and one line.

    Parameters
    ----------
    status : int
        400, 401, 404, 408, 409, 413, 415, 429 or 503.
    message : str
        One line, said to the client as ``{"error": message}``.
    """

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _kind(x) -> str:
    return "null" if x is None else f"a {type(x).__name__}"


def parse_body(raw: bytes):
    """The JSON object of a request body (400 with one line otherwise)."""
    try:
        body = loads(raw)
    except UnicodeDecodeError:
        raise RequestError(400, "the body is not UTF-8") from None
    except RecursionError:
        raise RequestError(400, "the body is nested too deep") from None
    except ValueError as e:
        msg = str(e).splitlines()[0][:120] if "allows" in str(e) else "the body is not JSON"
        raise RequestError(400, msg) from None
    if not isinstance(body, dict):
        raise RequestError(400, f"the body must be a JSON object, got {_kind(body)}")
    return body


def _fields(body: dict, allowed: tuple[str, ...]) -> None:
    extra = sorted(k for k in body if k not in allowed)
    if extra:
        raise RequestError(
            400, f"unknown field {extra[0][:40]!r}; the fields are {', '.join(allowed)}"
        )


def check_event_id(value, *, required: bool):
    """An event id: 1 to 128 characters from ``A-Z a-z 0-9 . _ : @ + / = -``."""
    if value is None:
        if required:
            raise RequestError(400, "event_id: missing")
        return None
    if not isinstance(value, str):
        raise RequestError(400, f"event_id: must be a string, got {_kind(value)}")
    n = SERVE_LIMITS["event_id_chars"]
    if not 1 <= len(value) <= n or not EVENT_ID.fullmatch(value):
        raise RequestError(400, f"event_id: 1 to {n} characters from A-Z a-z 0-9 . _ : @ + / = -")
    return value


def check_t(value):
    """An optional time (Unix seconds); the server's clock if absent."""
    if value is None:
        return time.time()
    if not finite(value) or not T_RANGE[0] <= value <= T_RANGE[1]:
        raise RequestError(400, f"t: must be Unix seconds from 0 to {T_RANGE[1]:.0e}")
    return float(value)


def _vector(row, d: int, field: str) -> list:
    if not isinstance(row, list):
        raise RequestError(400, f"{field}: must be a list of {d} numbers, got {_kind(row)}")
    if len(row) != d:
        raise RequestError(400, f"{field}: must have {d} numbers, got {len(row):,}")
    for j, v in enumerate(row):
        if not finite(v):
            raise RequestError(400, f"{field}[{j}]: must be a finite number, got {_kind(v)}")
        if abs(v) > 1e6:
            raise RequestError(400, f"{field}[{j}]: must be within ±1e6")
    return row


def check_decide(body: dict, *, d: int, context_mode: bool) -> dict:
    """A ``/decide`` body: ``event_id`` (optional), ``t`` (optional) and ``arms`` (K rows of
    d numbers) or ``context`` (d numbers), whichever the agent takes."""
    _fields(body, ("event_id", "arms", "context", "t"))
    out = {"event_id": check_event_id(body.get("event_id"), required=False)}
    out["t"] = check_t(body.get("t"))
    want, other = ("context", "arms") if context_mode else ("arms", "context")
    if other in body:
        raise RequestError(
            400, f"this agent takes {want!r} ({'d numbers' if context_mode else 'K rows of d'})"
        )
    if want not in body:
        raise RequestError(400, f"{want}: missing")
    value = body[want]
    if context_mode:
        out["context"] = _vector(value, d, "context")
        return out
    k_max = LIMITS["n_arms"]
    if not isinstance(value, list) or not value:
        raise RequestError(400, f"arms: must be a list of 1 to {k_max} rows, got {_kind(value)}")
    if len(value) > k_max:
        raise RequestError(400, f"arms: at most {k_max} rows, got {len(value):,}")
    out["arms"] = [_vector(row, d, f"arms[{i}]") for i, row in enumerate(value)]
    return out


def check_reward(body: dict) -> dict:
    """A ``/reward`` body: ``event_id`` and a finite ``reward`` (and ``t``, optional)."""
    _fields(body, ("event_id", "reward", "t"))
    out = {"event_id": check_event_id(body.get("event_id"), required=True)}
    r = body.get("reward")
    if not finite(r):
        raise RequestError(400, f"reward: must be a finite number, got {_kind(r)}")
    cap = SERVE_LIMITS["reward_abs"]
    if abs(r) > cap:
        raise RequestError(400, f"reward: must be within ±{cap:.0e}")
    out["reward"] = float(r)
    out["t"] = check_t(body.get("t"))
    return out


class TokenBucket:
    """A rate cap: ``burst`` requests at once, refilled at ``rate`` per second.

    Parameters
    ----------
    rate : float
        Tokens added per second.
    burst : int
        The bucket's size.
    clock : callable
        Seconds (monotonic).
    """

    def __init__(self, rate: float, burst: int, clock=time.monotonic):
        self.rate, self.burst, self.clock = float(rate), float(burst), clock
        self.tokens, self.last = float(burst), clock()

    def take(self) -> bool:
        """One token if there is one."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
