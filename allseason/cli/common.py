"""What every command shares: one-line errors (exit code 2), argparse types, reading a
user's file, the results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import api, sweeps
from ..limits import MAX_INPUT_BYTES

MAX_FILE_BYTES = MAX_INPUT_BYTES  # a scenario file, as an upload


class CliError(Exception):
    """A user error: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse's own errors as a :class:`CliError`: one line, exit 2."""

    def error(self, message):
        """Raise :class:`CliError` (one line, exit code 2) instead of argparse's exit."""
        raise CliError(message)


def bounded_int(lo: int, hi: int):
    """An argparse type: an integer from lo to hi (argparse names the flag)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text[:40]!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {lo:,} to {hi:,}, got {text[:40]}"
            )
        return value

    return parse


SEED_TYPE = bounded_int(0, 2**63 - 1)


def read_user_path(name: str, max_bytes: int) -> bytes:
    """The bytes of a user's file: a regular file only (a FIFO or a device is refused
    unread), size checked before reading; one CliError otherwise."""
    from ..logs import reader

    try:
        return reader.read_path(name, max_bytes)
    except api.SpecError as e:
        raise CliError(e.message) from None


def out_path(name: str) -> Path:
    """Where --out writes: a bare file name inside the results folder (never elsewhere)."""
    if (
        not name
        or Path(name).name != name
        or name in (".", "..")
        or not name.lower().endswith(".csv")
    ):
        raise CliError(
            f"--out: must be a file name ending in .csv, without a folder (it is "
            f"written to {sweeps.results_root() / 'replay'}), got {name!r}"
        )
    return sweeps.results_root() / "replay" / name
