"""Paths a user names, checked before anything is opened: the CLI reads only regular files
and writes only regular files (a FIFO, a device or a folder is refused with a message: a
FIFO given to ``--trace`` used to hang forever), and a name that comes from a file's content
(a sweep's ``name``) is reduced to a safe base name inside the results folder.

    >>> safe_base_name("..", "sweep"), safe_base_name("../../etc", "sweep")
    ('sweep', 'etc')
    >>> safe_base_name("grid.v2", "sweep")
    'grid.v2'
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import shutil
import stat
from pathlib import Path

from .errors import SpecError

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _kind(mode: int) -> str:
    return next((text for test, text in _KINDS if test(mode)), "not a regular file")


def regular_input(path, field: str, max_bytes: int | None = None) -> Path:
    """``path`` as a Path if it names an existing regular file (symlinks followed) of at
    most ``max_bytes``; else SpecError naming ``field``. Nothing is opened.

    Parameters
    ----------
    path : str or Path
        The file a user named.
    field : str
        The flag or field the message names (``--pattern``, ``file``).
    max_bytes : int, optional
        The largest size read.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise SpecError(field, f"no such file {str(path)!r}") from None
    except OSError as e:
        raise SpecError(field, f"cannot read {str(path)!r} ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise SpecError(field, f"{str(path)!r} is {_kind(st.st_mode)}; give a regular file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise SpecError(field, f"{str(path)!r} is larger than {max_bytes:,} bytes ({st.st_size:,})")
    return p


def regular_output(path, field: str) -> Path:
    """``path`` as a Path if writing it makes or replaces a regular file in an existing
    folder; a FIFO, a device or a folder there is refused (SpecError naming ``field``).

    Parameters
    ----------
    path : str or Path
        The file a user asked to write.
    field : str
        The flag the message names (``--trace``).
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise SpecError(field, f"cannot write {str(path)!r} ({e.strerror})") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise SpecError(
            field, f"{str(path)!r} is {_kind(st.st_mode)}; give the name of a regular file"
        )
    if not p.resolve().parent.is_dir():
        raise SpecError(field, f"the folder of {str(path)!r} does not exist")
    return p


def safe_base_name(name: str, default: str) -> str:
    """A name from a file's content reduced to one safe path component: its last part, only
    letters, digits, ``-``, ``_`` and inner dots, at most 64 characters; ``default`` when
    nothing is left (``..``, ``.``, an empty name).

    Parameters
    ----------
    name : str
        The name as the file gives it.
    default : str
        The name used when nothing safe is left.
    """
    last = re.split(r"[/\\]", str(name))[-1]
    clean = re.sub(r"[^A-Za-z0-9_.-]", "-", last).strip(".")[:64].strip(".")
    return clean or default


def _row_of_offset(raw: bytes, offset: int) -> int:
    """The 1-based line (row) of a byte offset."""
    return raw.count(b"\n", 0, offset) + 1


def check_text_bytes(raw: bytes, kind: str = "CSV", field: str = "file") -> None:
    r"""The one check of a text file's bytes, for every file a user brings (an upload, a log,
    a grid, a sweep, a scenario): no NUL byte (a binary file, or UTF-16 text), and UTF-8
    throughout (checked in 1 MiB pieces, never one copy of the text). SpecError naming
    ``field`` and the row of the first bad byte otherwise, in the same words everywhere.

    Parameters
    ----------
    raw : bytes
        The file's bytes (a UTF-8 byte-order mark is fine).
    kind : str
        What the file should be, for the message: ``"CSV"`` (save as 'CSV UTF-8'), or e.g.
        ``"TOML"``, ``"JSON"`` (save as UTF-8 text).
    field : str
        The field or flag the message names.

    Examples
    --------
    >>> try:
    ...     check_text_bytes("x = 1\n".encode("utf-16"), "TOML")
    ... except SpecError as e:
    ...     print(e.message)
    row 1: a NUL byte; this is a binary file (or UTF-16 text), not a UTF-8 TOML file
    """
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise SpecError(
            field,
            f"row {_row_of_offset(raw, nul)}: a NUL byte; this is a "
            f"binary file (or UTF-16 text), not a UTF-8 {kind} file",
        )
    if raw.isascii():
        return
    save = "'CSV UTF-8'" if kind == "CSV" else "UTF-8 text"
    decoder = codecs.getincrementaldecoder("utf-8")()
    step = 1 << 20
    for off in range(0, len(raw), step):
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(raw[off : off + step], final=off + step >= len(raw))
        except UnicodeDecodeError as e:
            at = max(0, off - pending + e.start)
            raise SpecError(
                field,
                f"row {_row_of_offset(raw, at)}: byte 0x{raw[at]:02x} is not UTF-8 "
                f"text; save the file as {save} (the encoding must be UTF-8)",
            ) from None


def decode_text(raw: bytes, kind: str = "CSV", field: str = "file", utf16: bool = False) -> str:
    """The text of a small file a user brings: :func:`check_text_bytes`, then UTF-8 (a
    byte-order mark dropped). ``utf16``: UTF-16 with its byte-order mark is read too
    (spreadsheets' "Unicode text", for a segment table)."""
    if utf16 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as e:
            raise SpecError(
                field, f"byte {e.start + 1} is not UTF-16 text; save the file as {kind} UTF-8"
            ) from None
    check_text_bytes(raw, kind, field)
    return raw.decode("utf-8-sig")


def read_text(path, field: str, max_bytes: int, kind: str, utf16: bool = False) -> str:
    """The text of a file a user names on the command line (a grid, a sweep, a scenario):
    a regular file of at most ``max_bytes`` (:func:`regular_input`), decoded by
    :func:`decode_text`; one SpecError naming ``field`` and the file otherwise.

    Parameters
    ----------
    path : str or Path
        The file.
    field : str
        The flag or field the message names.
    max_bytes : int
        The largest size read.
    kind : str
        ``"TOML"``, ``"JSON"`` or ``"CSV"``: what the messages say the file should be.
    utf16 : bool
        Also read UTF-16 with its byte-order mark.
    """
    p = regular_input(path, field, max_bytes)
    try:
        with open(p, "rb") as f:
            raw = f.read(max_bytes + 1)
    except OSError as e:
        raise SpecError(field, f"cannot read {str(path)!r} ({e.strerror})") from None
    if len(raw) > max_bytes:
        raise SpecError(field, f"{str(path)!r} is larger than {max_bytes:,} bytes")
    try:
        return decode_text(raw, kind, field, utf16)
    except SpecError as e:
        raise SpecError(field, f"{str(path)!r}: {e.message}") from None


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def write_problem(exc: BaseException) -> str | None:
    """``"full"`` when ``exc`` says the disk (or a quota, or a file-size limit) is full,
    ``"read-only"`` when the folder cannot be written, None for any other error. Knows
    OSError's errno and SQLite's words ("database or disk is full", "readonly database")."""
    if isinstance(exc, OSError):
        return "full" if exc.errno in _FULL else "read-only" if exc.errno in _READ_ONLY else None
    text = str(exc).lower()
    if type(exc).__module__ == "sqlite3":
        if "disk is full" in text or "disk i/o error" in text:
            return "full"
        if "readonly" in text or "read-only" in text or "unable to open database" in text:
            return "read-only"
    return None


def _free_bytes(folder: Path) -> int | None:
    for p in (folder, *folder.parents):
        try:
            return shutil.disk_usage(p).free
        except OSError:
            continue
    return None


def disk_message(exc: BaseException, folder, needed: int, kept: str) -> str | None:
    """The one line for a write that failed on a full or read-only disk, naming the folder,
    the free space needed and what was kept; None when ``exc`` is another error.

    Parameters
    ----------
    exc : BaseException
        What the write raised (OSError or sqlite3.Error).
    folder : str or Path
        The folder written into.
    needed : int
        About how many bytes the rest of the write needs.
    kept : str
        What is kept, and how to go on (a sentence).

    Examples
    --------
    >>> disk_message(OSError(errno.ENOSPC, "No space left on device"), "/nowhere", 2_500_000,
    ...              "nothing was written")[:56]
    "no space left in '/nowhere': about 2.5 MB more is needed"
    """
    kind = write_problem(exc)
    folder = Path(folder)
    if kind == "full":
        free = _free_bytes(folder)
        now = "" if free is None else f" ({_size(free)} free now)"
        return (
            f"no space left in {str(folder)!r}: about {_size(needed)} more is needed{now}; {kept}"
        )
    if kind == "read-only":
        why = getattr(exc, "strerror", None) or str(exc)
        return (
            f"cannot write in {str(folder)!r} ({why}; about {_size(needed)} needed there); {kept}"
        )
    return None


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{max(1, round(n / 1e3))} kB"


def write_text_atomic(path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` all or nothing: a temporary file beside it, fsync,
    then ``os.replace``; on any error the temporary file is removed and the error raised,
    and ``path`` keeps what it held (never a truncated file)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


__all__ = [
    "write_problem",
    "disk_message",
    "write_text_atomic",
    "regular_input",
    "regular_output",
    "safe_base_name",
    "check_text_bytes",
    "decode_text",
    "read_text",
]
