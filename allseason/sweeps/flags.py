"""The executor flags of every command that runs many tasks (``sweep``, ``paper``, ``replay``,
``map``): ``--processes N | --workers N | --scheduler ADDR``, declared and checked once."""

from __future__ import annotations

import argparse
import re

from ..limits import MAX_PROCESSES
from .execute import _usable_cores, check_executor

SCHEDULER = re.compile(r"(tcp|tls|inproc|ucx|ws|wss)://\S+")


def positive(text: str) -> int:
    """argparse type: a positive integer, with the value in the message otherwise."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return n


def add_executor_flags(parser: argparse.ArgumentParser) -> None:
    """Add the mutually exclusive ``--processes``, ``--workers`` and ``--scheduler`` flags.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    """
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--processes",
        type=positive,
        metavar="N",
        help="local worker processes (default: every usable core)",
    )
    where.add_argument(
        "--workers",
        type=positive,
        metavar="N",
        help="start a Dask LocalCluster of N single-threaded worker processes "
        "(Dask: pip install 'allseason[sweeps]')",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="use a running Dask scheduler, e.g. tcp://host:8786 (Dask: pip "
        "install 'allseason[sweeps]')",
    )


def executor_from_args(args: argparse.Namespace, *, default_all_cores: bool = False) -> dict:
    """The executor the flags ask for, checked: ``{processes, workers, scheduler}``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by a parser that :func:`add_executor_flags` set up.
    default_all_cores : bool, default False
        With no flag given, ask for one local process per usable core (else leave the choice
        to the executor).

    Raises
    ------
    ValueError
        For a scheduler address that is not one, or too many processes.
    """
    processes, workers, scheduler = args.processes, args.workers, args.scheduler
    if scheduler is not None and not SCHEDULER.fullmatch(scheduler):
        raise ValueError(
            f"--scheduler: expected an address like tcp://host:8786, got {scheduler!r}"
        )
    if processes is not None and processes > MAX_PROCESSES:
        raise ValueError(f"--processes: must be in 1..{MAX_PROCESSES}, got {processes}")
    if default_all_cores and processes is None and workers is None and scheduler is None:
        processes = min(_usable_cores(), MAX_PROCESSES)
    check_executor(processes, workers, scheduler)
    return dict(processes=processes, workers=workers, scheduler=scheduler)
