"""What every command shares: one-line errors (exit code 2), argparse types, reading a
user's file, the results folder."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from .. import api, files, sweeps
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


def write_output(path, text: str, field: str, kept: str) -> None:
    """Write a result file (``--out``, ``--trace``) all or nothing
    (:func:`allseason.files.write_text_atomic`); a full or read-only disk is one CliError
    naming the folder, the space needed and ``kept`` (what the user still has)."""
    path = Path(path)
    try:
        files.write_text_atomic(path, text)
    except OSError as e:
        line = files.disk_message(e, path.parent, len(text.encode("utf-8")), kept)
        raise CliError(line or f"{field}: cannot write {str(path)!r} ({e.strerror or e})") from None


# About what one stored run takes in results.sqlite (a row, its index entry; measured on the
# stores of benchmarks/kill_test.py: 1-2 KB), and the WAL journal SQLite may grow first.
STORE_ROW_BYTES = 2_000
STORE_JOURNAL_BYTES = 4_200_000


def stored_runs(folder) -> int | None:
    """How many runs ``folder``'s store holds (read only), None if it cannot be read."""
    import sqlite3

    path = Path(folder) / sweeps.STORE_FILE
    if not path.is_file():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
            return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.Error:
        return None


def store_disk_line(exc, folder, n_runs: int) -> str | None:
    """The one line for a sweep or map whose store hit a full or read-only disk: the folder,
    the space the rest needs, how many runs are kept (intact: each is one transaction)."""
    n = stored_runs(folder)
    kept = (
        "the runs stored there are kept"
        if n is None
        else "nothing is stored there yet"
        if n == 0
        else f"{n:,} of {n_runs:,} runs are stored there, intact"
    )
    if files.write_problem(exc) == "read-only":
        then = "choose a folder you can write with --out (or make this one writable) and run again"
    else:
        then = (
            "free some space and run the same command again to resume (or move the folder "
            "to a larger disk and name it with --out)"
        )
    todo = n_runs - (n or 0)
    return files.disk_message(
        exc, folder, todo * STORE_ROW_BYTES + STORE_JOURNAL_BYTES, f"{kept}; {then}"
    )
