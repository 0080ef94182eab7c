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

import os
import re
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


__all__ = ["regular_input", "regular_output", "safe_base_name"]
