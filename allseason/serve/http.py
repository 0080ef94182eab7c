"""The HTTP face of the service: a Starlette app over a :class:`~.store.Writer` or
:class:`~.store.Reader` (Starlette is imported here only, an optional extra).

Every answer is JSON; every refusal is a 4xx (or 503 when the disk refuses a write) with
``{"error": "one line"}``. Requests are handled one at a time inside the event loop (no
``await`` between reading the agent and writing the journal), so the journal's order is the
order the agent saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import socket
import sys
import time
import traceback

from ..limits import SERVE_LIMITS
from .checks import RequestError, TokenBucket, check_decide, check_reward, parse_body


def answer(status: int, body: dict):
    """A JSON response."""
    from starlette.responses import Response

    return Response(json.dumps(body, allow_nan=False), status, media_type="application/json")


def refuse(status: int, message: str):
    """``{"error": message}`` with its status (and WWW-Authenticate or Retry-After)."""
    resp = answer(status, {"error": message})
    if status == 401:
        resp.headers["WWW-Authenticate"] = "Bearer"
    elif status == 429:
        resp.headers["Retry-After"] = "1"
    return resp


async def read_body(request, seconds: float = SERVE_LIMITS["client_seconds"]) -> bytes:
    """The body, at most ``body_bytes`` (413) within ``body_seconds`` (408); read as JSON
    whatever its Content-Type says (curl's ``-d`` says form-urlencoded)."""
    cap = SERVE_LIMITS["body_bytes"]
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise RequestError(400, "Content-Length is not a number")
        if int(length) > cap:
            raise RequestError(413, f"the body is larger than {cap:,} bytes")
    chunks, size = [], 0

    async def collect():
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise RequestError(413, f"the body is larger than {cap:,} bytes")
            chunks.append(chunk)

    try:
        await asyncio.wait_for(collect(), seconds)
    except TimeoutError:
        raise RequestError(408, f"the body took longer than {seconds:g} s") from None
    return b"".join(chunks)


def _handler(fn):
    async def endpoint(self, request):
        try:
            return await fn(self, request)
        except RequestError as e:
            return refuse(e.status, e.message)
        except Exception as e:  # a bug: one line to the client, the traceback to the log
            traceback.print_exc(file=sys.stderr)
            return refuse(500, f"internal error ({type(e).__name__}); see the server log")

    return endpoint


class Service:
    """The endpoints over one store.

    Parameters
    ----------
    store : Writer or Reader
        Who answers.
    token : str, optional
        If given, ``/decide``, ``/reward`` and ``/state`` need ``Authorization: Bearer TOKEN``.
    rate, burst : optional
        The token bucket (SERVE_LIMITS' by default).
    poll : float
        Seconds between two looks: a reader's at CURRENT; the writer's at the readers'
        journals and at whether a snapshot is due.
    client_seconds : float, optional
        A body not sent within this gets 408 (SERVE_LIMITS').
    expire_every : float
        Seconds between two expiries of the writer's old open decisions (the agent's
        ``expire(now)``; only if the agent has a horizon; 0: never).
    """

    def __init__(
        self,
        store,
        *,
        token=None,
        rate=None,
        burst=None,
        poll=0.05,
        client_seconds=None,
        expire_every: float = 1.0,
    ):
        self.store, self.poll = store, poll
        writer = hasattr(store, "expire") and getattr(store.agent, "horizon", None) is not None
        self.expire_every = float(expire_every) if writer else 0.0
        self.client_seconds = client_seconds or SERVE_LIMITS["client_seconds"]
        self.bucket = TokenBucket(rate or SERVE_LIMITS["rate"], int(burst or SERVE_LIMITS["burst"]))
        self.expected = f"Bearer {token}".encode() if token else None
        self.context_mode = bool(getattr(store.agent, "n_arms", None))
        self.role = "writer" if hasattr(store, "ingest") else f"reader-{store.index}"

    def guard(self, request) -> None:
        """The bearer token, then the rate cap."""
        if self.expected is not None:
            got = request.headers.get("authorization", "").encode()[: SERVE_LIMITS["token_bytes"]]
            if not hmac.compare_digest(got, self.expected):
                raise RequestError(401, "send Authorization: Bearer TOKEN (the --token-file's)")
        if not self.bucket.take():
            raise RequestError(429, "too many requests; slow down (Retry-After: 1)")

    @_handler
    async def decide(self, request):
        """POST /decide: one decision, with its propensity and model version."""
        self.guard(request)
        body = parse_body(await read_body(request, self.client_seconds))
        req = check_decide(body, d=self.store.agent.d, context_mode=self.context_mode)
        resp = answer(200, self.store.decide(req))
        resp.headers["X-Allseason-Role"] = self.role
        return resp

    @_handler
    async def reward(self, request):
        """POST /reward: a reward joined to its decision; 202 once it is durable."""
        self.guard(request)
        body = parse_body(await read_body(request, self.client_seconds))
        status, out = self.store.reward(check_reward(body))
        return answer(status, out)

    @_handler
    async def state(self, request):
        """GET /state: the agent's summary (bandits, weights, counts, version)."""
        self.guard(request)
        return answer(200, self.store.summary())

    @_handler
    async def health(self, request):
        """GET /health: ok, or degraded with the snapshot's problem (no token needed)."""
        problem = getattr(self.store, "snapshot_error", None)
        body = {
            "status": "degraded" if problem else "ok",
            "model_version": int(self.store.agent.model_version),
            "role": self.role,
        }
        return answer(200, body | ({"problem": problem} if problem else {}))

    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        """Every ``poll`` seconds a reader looks for a new snapshot, and the writer reads the
        readers' journals, takes a snapshot if one is due (:meth:`~.store.Writer.tick`) and,
        every ``expire_every`` seconds, expires its old open decisions; at a clean stop
        (SIGTERM) the writer takes a last snapshot."""
        task = asyncio.get_running_loop().create_task(self._tail())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if hasattr(self.store, "close"):
            self.store.close()

    async def _tail(self):
        last_expiry = time.monotonic()
        while True:
            await asyncio.sleep(self.poll)
            try:
                if hasattr(self.store, "refresh"):
                    self.store.refresh()  # a reader: the latest snapshot
                    continue
                if self.store.n_readers:
                    self.store.ingest()  # the writer: the readers' journals
                if self.expire_every and time.monotonic() - last_expiry >= self.expire_every:
                    last_expiry = time.monotonic()
                    self.store.expire()  # the agent's expire(now), journalled
                self.store.tick()  # a snapshot, if one is due
            except RequestError:
                pass  # the disk refused: tried again at the next poll
            except Exception:
                traceback.print_exc(file=sys.stderr)


async def _http_error(request, exc):
    detail = exc.detail if isinstance(exc.detail, str) else "refused"
    if exc.status_code == 404:
        detail = "no such endpoint; see /health, /state, /decide, /reward"
    elif exc.status_code == 405:
        detail = f"{request.method} is not allowed here"
    return refuse(exc.status_code, detail)


async def _any_error(request, exc):
    traceback.print_exception(exc, file=sys.stderr)
    return refuse(500, "internal error; see the server log")


def build_app(store, **options):
    """The Starlette app over ``store`` (options: :class:`Service`'s)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.routing import Route

    s = Service(store, **options)
    routes = [
        Route("/decide", s.decide, methods=["POST"]),
        Route("/reward", s.reward, methods=["POST"]),
        Route("/state", s.state, methods=["GET"]),
        Route("/health", s.health, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_error, Exception: _any_error},
        lifespan=s.lifespan,
    )


def protocol_class(seconds: float):
    """uvicorn's h11 protocol, with the timeout it lacks: a connection whose next request's
    headers have not all arrived ``seconds`` after it opened (or after its last answer) is
    closed (uvicorn times out only idle keep-alive connections, so a client that sends
    nothing, or a header a byte at a time, would hold its connection for ever)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        def connection_made(self, transport):
            super().connection_made(transport)
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                # asyncio sets it only on sockets made with proto=IPPROTO_TCP; without it an
                # answer's two writes wait for the client's delayed ACK: 40 ms a request
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._arm()

        def on_response_complete(self):
            super().on_response_complete()
            self._arm()

        def _arm(self):
            self._armed = self.cycle
            self.loop.call_later(seconds, self._too_slow, self.cycle)

        def _too_slow(self, armed):
            if self.cycle is armed and not self.transport.is_closing():
                self.transport.close()

    return Protocol
