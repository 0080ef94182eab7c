"""``python -m allseason serve STATE_DIR``: a deployed agent over HTTP (docs/serve.md).

Starlette and uvicorn are an optional extra (``pip install -r requirements-serve.txt``);
without them the command says so in one line.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import socket
import sys
from pathlib import Path

from .. import api
from ..limits import LIMITS, SERVE_LIMITS
from .common import SEED_TYPE, CliError, Parser, bounded_int


def bounded_float(lo: float, hi: float):
    """An argparse type: a finite number from lo to hi (argparse names the flag)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text[:40]!r}") from None
        if not (math.isfinite(value) and lo <= value <= hi):
            raise argparse.ArgumentTypeError(
                f"must be a number from {lo:g} to {hi:g}, got {text[:40]}"
            )
        return value

    return parse


INSTALL = (
    "the service needs its optional extra: pip install -r requirements-serve.txt "
    "(or pip install 'allseason[serve]')"
)


def build_parser() -> Parser:
    """The ``serve`` command's flags."""
    p = Parser(
        prog="python -m allseason serve",
        description="Serve a deployed agent over HTTP: POST /decide, POST /reward, "
        "GET /state, GET /health (docs/serve.md).",
    )
    p.add_argument("state_dir", metavar="STATE_DIR", help="the service's state folder")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument(
        "--port", type=bounded_int(0, 65535), default=8000, help="port (8000; 0: any free)"
    )
    p.add_argument(
        "--workers",
        type=bounded_int(1, 64),
        default=1,
        help="processes: 1 writer that learns, N-1 readers that answer /decide from the "
        "latest snapshot (1)",
    )
    p.add_argument(
        "--token-file",
        default=None,
        help="a file holding a bearer token: /decide, /reward and /state then need "
        "'Authorization: Bearer TOKEN' (the token is never given on the command line)",
    )
    p.add_argument(
        "--snapshot-every",
        metavar="SECONDS",
        type=bounded_float(0.0, SERVE_LIMITS["snapshot_seconds_max"]),
        default=SERVE_LIMITS["snapshot_seconds"],
        help="a snapshot (what the readers answer from; what a restart starts from) at most "
        "this often, once a batch update has happened; 0: at every batch update; the "
        f"journal since is replayed on restart ({SERVE_LIMITS['snapshot_seconds']:g})",
    )
    _cadence_flags(p.add_argument_group("limits and cadence"))
    _new_agent_flags(p.add_argument_group("a new agent (when STATE_DIR holds none)"))
    return p


def _cadence_flags(group) -> None:
    """Durability, rate and polling: each bounded, defaults from ``SERVE_LIMITS``."""
    group.add_argument(
        "--sync-decisions",
        action="store_true",
        help="fsync every decision before answering (default: written before answering, "
        "fsync'd with the next reward; a kill -9 loses none either way)",
    )
    group.add_argument(
        "--rate",
        type=bounded_int(1, 10**7),
        default=SERVE_LIMITS["rate"],
        help=f"requests per second per process ({SERVE_LIMITS['rate']:,})",
    )
    group.add_argument(
        "--burst",
        type=bounded_int(1, 10**7),
        default=SERVE_LIMITS["burst"],
        help=f"requests at once per process ({SERVE_LIMITS['burst']:,})",
    )
    group.add_argument(
        "--poll-ms",
        type=bounded_int(1, 60_000),
        default=50,
        help="how often readers look for a new snapshot and the writer reads the readers' "
        "journals, in ms (50)",
    )
    group.add_argument(
        "--client-timeout",
        type=bounded_int(1, 600),
        default=SERVE_LIMITS["client_seconds"],
        help="seconds a client has to send a request's headers, and then its body "
        f"({SERVE_LIMITS['client_seconds']})",
    )
    group.add_argument(
        "--expire-every",
        type=bounded_float(0.0, 86_400.0),
        default=1.0,
        help="seconds between two expiries of the open decisions older than the agent's "
        "horizon (--horizon; 0: never) (1)",
    )
    group.add_argument(
        "--journal-bytes",
        type=bounded_int(4_096, 10**12),
        default=SERVE_LIMITS["journal_bytes"],
        help="a snapshot once the writer's journal passes this many bytes, and a reader's "
        f"journal begins a new file there ({SERVE_LIMITS['journal_bytes']:,})",
    )


def _new_agent_flags(new) -> None:
    new.add_argument("--init", metavar="AGENT_FILE", default=None, help="start from a saved agent")
    new.add_argument("--policy", default="allseason-sw", help="a contestant (allseason-sw)")
    new.add_argument(
        "--d",
        type=bounded_int(1, LIMITS["d"]),
        default=None,
        help="the length of an arm row or a context",
    )
    new.add_argument(
        "--n-arms",
        type=bounded_int(1, LIMITS["n_arms"]),
        default=None,
        help="context mode: this many arms (requests send 'context'); else requests send 'arms'",
    )
    new.add_argument(
        "--max-open",
        type=bounded_int(1, 10**7),
        default=100_000,
        help="open decisions kept; the oldest expire first (100,000)",
    )
    new.add_argument("--seed", type=SEED_TYPE, default=0, help="the agent's seed (0)")
    new.add_argument(
        "--batch-size",
        type=bounded_int(1, LIMITS["batch_size"]),
        default=1,
        help="a batch update every B resolved rewards (1)",
    )
    new.add_argument(
        "--horizon",
        type=bounded_float(1e-3, 1e9),
        default=None,
        help="seconds after which an open decision expires (its t, Unix seconds, against the "
        "server's clock; default: never)",
    )
    new.add_argument(
        "--on-expire",
        choices=("drop", "default"),
        default="drop",
        help="an expired decision is forgotten (drop), or learnt with --default-reward "
        "(default) (drop)",
    )
    new.add_argument(
        "--default-reward",
        type=bounded_float(-1e6, 1e6),
        default=0.0,
        help="the reward an expired decision is learnt with (--on-expire default) (0)",
    )


def _token(path: str | None) -> str | None:
    if path is None:
        return None
    from .common import read_user_path

    raw = read_user_path(path, int(SERVE_LIMITS["token_bytes"]))
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise CliError(f"--token-file: {path!r} must hold an ASCII token") from None
    if len(token) < 16 or any(c.isspace() or not c.isprintable() for c in token):
        raise CliError("--token-file: the token must be 16 or more printable characters, no spaces")
    return token


def _prepare(args) -> None:
    from ..agent import Agent
    from ..serve import store

    folder = Path(args.state_dir)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"{args.state_dir!r} is not a folder")
    if (folder / store.POINTER).exists():
        if args.init or args.d:
            raise CliError(f"{args.state_dir}: already holds a state; drop --init/--d to serve it")
        store.read_pointer(folder)
        return
    if args.init:
        agent = Agent.load(args.init)
    elif args.d:
        agent = Agent(
            args.policy,
            d=args.d,
            n_arms=args.n_arms,
            seed=args.seed,
            batch_size=args.batch_size,
            max_open=args.max_open,
            horizon=args.horizon,
            on_expire=args.on_expire,
            default_reward=args.default_reward,
        )
    else:
        raise CliError(f"{args.state_dir}: holds no state yet; give --init AGENT_FILE or --d D")
    folder.mkdir(parents=True, exist_ok=True)
    store.init_folder(folder, agent)


def _run_worker(args, sock, index: int, token) -> None:
    import uvicorn

    from ..serve import http, reader, store

    s: store.Writer | reader.Reader
    if index == 0:
        s = store.Writer(
            args.state_dir,
            snapshot_seconds=args.snapshot_every,
            sync_decisions=args.sync_decisions,
            n_readers=args.workers - 1,
            journal_bytes=args.journal_bytes,
            background=True,  # a snapshot never pauses the event loop (serve/snapshot.py)
        )
    else:
        s = reader.Reader(
            args.state_dir, index, poll=args.poll_ms / 1000, journal_bytes=args.journal_bytes
        )
    app = http.build_app(
        s,
        token=token,
        rate=args.rate,
        burst=args.burst,
        poll=args.poll_ms / 1000,
        client_seconds=args.client_timeout,
        expire_every=args.expire_every,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=int(SERVE_LIMITS["keep_alive_seconds"]),
        limit_concurrency=int(SERVE_LIMITS["max_connections"]),
        h11_max_incomplete_event_size=64 * 1024,
        server_header=False,
        timeout_graceful_shutdown=3,
        lifespan="on",
        http=http.protocol_class(args.client_timeout),
    )
    uvicorn.Server(config).run(sockets=[sock])


def cli(argv: list[str]) -> int:
    """``python -m allseason serve``: exit code 2 with one line on a bad flag or state."""
    try:
        args = build_parser().parse_args(argv)
        try:
            import starlette  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError:
            raise CliError(INSTALL) from None
        token = _token(args.token_file)
        _prepare(args)
        sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if args.workers > 1:  # each reader listens on its own socket: the kernel spreads
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # connections over all
        sock.bind((args.host, args.port))
        sock.listen(1024)
        sock.set_inheritable(True)
    except (CliError, api.SpecError, ValueError, OSError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    print(
        f"serving {args.state_dir} on http://{host}:{port} ({args.workers} worker(s))",
        file=sys.stderr,
        flush=True,
    )
    if args.workers == 1:
        _run_worker(args, sock, 0, token)
        return 0
    return _supervise(args, sock, token)


def _end_with_parent() -> None:
    """Linux: this process gets SIGTERM when the supervisor dies, even by kill -9."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _supervise(args, sock, token) -> int:
    """Fork the writer (0) and the readers (1 .. N-1); start again any that dies; stop them
    all on SIGTERM or SIGINT."""
    children: dict[int, int] = {}
    stopping = False

    def spawn(i: int) -> None:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _end_with_parent()
            try:
                own = sock
                if i:
                    own = socket.socket(sock.family, socket.SOCK_STREAM)
                    own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                    own.bind(sock.getsockname()[:2])
                    own.listen(1024)
                    sock.close()
                _run_worker(args, own, i, token)
            finally:
                os._exit(0)
        children[pid] = i

    def stop(signum, frame):
        nonlocal stopping
        stopping = True
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    spawn(0)
    for i in range(1, args.workers):
        spawn(i)
    while children:
        try:
            pid, _ = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        i = children.pop(pid, -1)
        if i >= 0 and not stopping:
            print(f"worker {i} ended; starting it again", file=sys.stderr, flush=True)
            spawn(i)
    return 0


__all__ = ["cli", "build_parser"]
