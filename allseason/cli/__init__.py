"""The command line, ``python -m allseason COMMAND``: one module per command.

``run``, ``patterns``, ``policies`` (:mod:`.run`), ``replay`` (:mod:`.replay`), ``sweep`` and
``report`` (:mod:`.sweep`), ``paper`` (:mod:`.paper`), ``map`` (:mod:`.map`), ``serve``
(:mod:`.serve`). Bad flags or files get one clear line on stderr and exit code 2, never a
traceback. The command line is an entry point: it sits above the figures (``report --html``
draws a Plotly figure, imported only then), and the engine below it never imports it.
"""

from __future__ import annotations

import argparse
import sys

from .. import api
from . import replay, run
from .common import CliError, Parser


def build_parser() -> argparse.ArgumentParser:
    """The parser of the commands parsed here (``sweep``, ``report``, ``paper`` and ``map``
    are listed, and parse their own flags)."""
    parser = Parser(
        prog="python -m allseason",
        description="All-Season bandit: seasonal linear bandit experiments.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    run.add_parsers(sub)
    replay.add_parser(sub)
    sub.add_parser("sweep", help="run a sweep file (TOML/JSON): grids x seeds, resumable")
    sub.add_parser("report", help="best settings and an HTML plot of a sweep's results")
    sub.add_parser("paper", help="reproduce the paper's real-data tables (MNIST, Fashion-MNIST)")
    sub.add_parser("map", help="a map of where All-Season wins (grid x tuned contests), resumable")
    sub.add_parser("serve", help="serve a deployed agent over HTTP (decide, reward, state)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default: ``sys.argv[1:]``); the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["sweep"], ["report"]):  # their own parsers: .sweep
        from . import sweep

        return getattr(sweep, f"cli_{argv[0]}")(argv[1:])
    if argv[:1] == ["map"]:  # its own parser: .map
        from . import map as map_cli

        return map_cli.cli_map(argv[1:])
    if argv[:1] == ["serve"]:  # its own parser: .serve
        from . import serve

        return serve.cli(argv[1:])
    if argv[:1] == ["paper"]:  # its own parser: .paper
        from . import paper

        return paper.cli(argv[1:])
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (CliError, api.SpecError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. --trace into a read-only folder
        print(f"error: {e}", file=sys.stderr)
        return 2


__all__ = ["main", "build_parser", "CliError"]
