"""An agent's state on disk: one file of plain data, written atomically, checked before it is
trusted. Never pickle.

**Layout (format version 1.0).** One uncompressed ("stored") zip archive -- numpy's ``.npz``
layout, so ``numpy.load(path, allow_pickle=False)`` opens it too -- holding

- ``manifest.json``: a UTF-8 JSON object: ``state_format`` (``"allseason-state"``),
  ``state_format_version`` (``"1.0"``), ``kind`` (what the state is of: ``"agent"``, ...),
  ``created`` (ISO 8601, UTC), the caller's own fields, and ``arrays``: for every array its
  ``dtype`` (numpy's dtype string, such as ``"<f8"``), ``shape`` (a list of integers) and
  ``sha256`` (the hex SHA-256 of its bytes in C order);
- ``NAME.npy`` for every array the manifest names (the npy format, C order), and nothing else.

**Writing** (:func:`write_state`) goes to a temporary file in the target's folder, which is
flushed and fsynced, then renamed over the target (``os.replace``, atomic on POSIX), then the
folder is fsynced: a crash or a ``kill -9`` at any moment leaves either the old file or the
new one, never a mixture (``tests/agent/test_statefile.py`` kills a saving process 50 times).

**Reading** (:func:`read_state`) refuses, with one :class:`StateFileError` line and no
traceback, before allocating anything the file did not pay for: a file over ``max_bytes``
(``fstat``, before reading) or not regular; not a zip, truncated, over :data:`MAX_ENTRIES`
entries; a compressed or encrypted entry (a zip bomb is never inflated), duplicated, extra or
missing entries; a manifest not JSON (NaN, a key twice), of another format or of an unknown
**major** version (``2.0``; ``1.7`` is read); an array whose declared dtype is not numeric
(an object array, a pickle, is refused from its header, never unpickled), whose shape holds
over :data:`~allseason.limits.MAX_STATE_ELEMENTS` elements, whose npy header disagrees with
the manifest or whose bytes do not fill its entry; then, read (``read_array`` with
``allow_pickle=False``), a CRC or SHA-256 that does not match, or a float not finite (NaN,
+inf never; -inf only where the entry says ``"neg_inf": true``, which the writer sets for an
array holding -inf, such as a dead bandit's log-weight).

Memory while reading is bounded by the file's size: the arrays, numpy's 256 KiB read buffer
and the parsed manifest (measured per refusal in ``tests/agent/test_statefile.py``).

    >>> import tempfile, os, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "a.state")
    >>> n = write_state(path, {"kind": "demo", "note": "hi"}, {"M": np.eye(2)})
    >>> manifest, arrays = read_state(path)
    >>> manifest["state_format_version"], manifest["kind"], manifest["note"], arrays["M"].tolist()
    ('1.0', 'demo', 'hi', [[1.0, 0.0], [0.0, 1.0]])
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import re
import stat
import struct
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from ..errors import SpecError, show
from ..limits import MAX_STATE_BYTES, MAX_STATE_ELEMENTS, MAX_STATE_ENTRIES

FORMAT = "allseason-state"
FORMAT_VERSION = "1.0"
MAJOR = 1
MANIFEST = "manifest.json"
MAX_ENTRIES = MAX_STATE_ENTRIES  # entries in one archive, at most (allseason.limits)
_RESERVED = ("state_format", "state_format_version", "arrays")  # the file's; the caller's own
# "format" and "format_version" (what its payload is) are kept as they are
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")
_DTYPE = re.compile(r"[<>|][biuf][1248]")
_SHA = re.compile(r"[0-9a-f]{64}")
_DATE = (1980, 1, 1, 0, 0, 0)  # every entry's zip timestamp: same state, same bytes
_EOCD = struct.Struct("<4s4H2LH")  # the zip's end-of-archive record (22 bytes)
_CHUNK = 1 << 20  # elements per step of the finiteness check


class StateFileError(SpecError):
    """A state file that cannot be trusted or read: one line saying which file and why.

    Parameters
    ----------
    path : str or Path
        The file.
    message : str
        What is wrong with it.
    """

    def __init__(self, path, message: str):
        name = Path(str(path)).name[:80] + ": " if path is not None else ""
        super().__init__("state file", f"{name}{message}".replace("\n", " ").replace("\r", " "))
        self.path = path


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith(".npy"):
        raise ValueError(
            f"array name {show(name)}: letters, digits, '_', '.', '-', at most 128, "
            f"not ending in .npy"
        )
    return name


def _sha256(a: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(a, order="C").reshape(-1).view(np.uint8).data).hexdigest()


def _all_finite(a: np.ndarray, neg_inf: bool = False) -> bool:
    """No NaN, no +inf, and no -inf unless ``neg_inf`` (checked 1M elements at a time)."""
    if a.dtype.kind != "f":
        return True
    flat = a.reshape(-1)
    ok = (lambda x: ~np.isnan(x) & (x < np.inf)) if neg_inf else np.isfinite
    return all(ok(flat[i : i + _CHUNK]).all() for i in range(0, flat.size, _CHUNK))


def write_state(path, manifest: dict, arrays: dict, *, kind: str | None = None) -> int:
    """Write a state file atomically (module docstring); returns its size in bytes.

    Parameters
    ----------
    path : str or Path
        The file to write (replaced if it exists); its folder must exist.
    manifest : dict
        JSON-able fields of the caller's (no NaN or inf); ``state_format``, ``state_format_version``
        and ``arrays`` are the writer's and are replaced. ``kind`` and ``created`` are kept
        if given.
    arrays : dict of str to numpy.ndarray
        Numeric arrays (bool, integers, floats), all finite, by name.
    kind : str, optional
        What it is a state of (default: the manifest's ``kind``, ``format``, or "state").

    Raises
    ------
    StateFileError
        An array that is not numeric or not finite, a manifest that is not JSON-able, a
        folder that cannot be written. The old file, if any, is then left as it was.
    """
    path = Path(path)
    entries, data = _checked(path, arrays)
    head = {k: v for k, v in dict(manifest).items() if k not in _RESERVED}
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    head = {
        "state_format": FORMAT,
        "state_format_version": FORMAT_VERSION,
        "kind": str(kind or head.pop("kind", None) or head.get("format") or "state"),
        "created": head.pop("created", None) or now,
        **{k: v for k, v in head.items() if k not in ("kind", "created")},
        "arrays": entries,
    }
    try:
        text = json.dumps(head, allow_nan=False, ensure_ascii=True).encode("ascii")
    except (TypeError, ValueError) as e:
        raise StateFileError(path, f"the manifest is not plain JSON ({e})") from None
    return _write_atomic(path, text, data)


def _checked(path, arrays: dict) -> tuple[dict, dict]:
    """(manifest entries, C-ordered arrays) of the arrays to write; StateFileError for one
    the reader would refuse."""
    entries: dict[str, dict[str, object]] = {}
    data: dict[str, np.ndarray] = {}
    for name, a in arrays.items():
        try:
            _check_name(name)
        except ValueError as e:
            raise StateFileError(path, str(e)) from None
        a = np.asarray(a, order="C")
        if a.dtype.kind not in "biuf" or not _DTYPE.fullmatch(a.dtype.str):
            raise StateFileError(
                path, f"array {name!r} has dtype {a.dtype}; only numbers are saved"
            )
        if a.size > MAX_STATE_ELEMENTS:
            raise StateFileError(
                path, f"array {name!r} has {a.size:,} elements; at most {MAX_STATE_ELEMENTS:,}"
            )
        neg_inf = not _all_finite(a) and _all_finite(a, neg_inf=True)
        if not _all_finite(a, neg_inf):
            raise StateFileError(path, f"array {name!r} holds NaN or +inf; not saved")
        entries[name] = {"dtype": a.dtype.str, "shape": list(a.shape), "sha256": _sha256(a)}
        if neg_inf:  # e.g. the log-weight of a dead bandit's slot
            entries[name]["neg_inf"] = True
        data[name] = a
    return entries, data


def _write_atomic(path: Path, text: bytes, data: dict) -> int:
    """The archive to a temporary file in the target's folder, fsynced, renamed over the
    target, the folder fsynced; its size. The temporary file is removed on any error."""
    folder = path.resolve().parent
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise StateFileError(path, f"cannot write in {str(folder)!r} ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                zf.writestr(zipfile.ZipInfo(MANIFEST, _DATE), text)
                for name, a in data.items():
                    info = zipfile.ZipInfo(name + ".npy", _DATE)
                    with zf.open(info, "w", force_zip64=a.nbytes > 2**30) as out:
                        np.lib.format.write_array(out, a, allow_pickle=False)
            fh.flush()
            os.fsync(fh.fileno())
            size = fh.tell()
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise StateFileError(path, f"not written ({e.strerror or e})") from None
        raise
    _fsync_folder(folder)
    return size


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):  # some file systems cannot fsync a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_state(path, *, max_bytes: int = MAX_STATE_BYTES, kind: str | None = None):
    """Read and check a state file (module docstring): ``(manifest, arrays)``.

    Parameters
    ----------
    path : str or Path
        The file.
    max_bytes : int
        The largest file read (checked before reading).
    kind : str, optional
        Refuse a state of another ``kind``.

    Returns
    -------
    manifest : dict
        The manifest as written (``arrays`` included).
    arrays : dict of str to numpy.ndarray
        The arrays, writable, in the manifest's order.

    Raises
    ------
    StateFileError
        One line naming the file and what is wrong with it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise StateFileError(path, "no such file") from None
    except OSError as e:
        raise StateFileError(path, f"cannot be opened ({e.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise StateFileError(path, "not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > max_bytes:
            raise StateFileError(
                path, f"{st.st_size:,} bytes; at most {max_bytes:,} are read (max_bytes)"
            )
        try:
            return _read(path, fh, st.st_size, kind)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as e:
            raise StateFileError(path, f"not a readable state archive ({_short(e)})") from None
        except OSError as e:
            raise StateFileError(path, f"cannot be read ({e.strerror or _short(e)})") from None


def _short(e: BaseException) -> str:
    return str(e).replace("\n", " ")[:120] or type(e).__name__


def _read(path, fh, size: int, kind: str | None):
    if size < _EOCD.size:
        raise StateFileError(path, f"{size} bytes: truncated, or not a state file")
    fh.seek(size - _EOCD.size)
    sig, _, _, _, n_entries, cd_size, cd_offset, comment = _EOCD.unpack(fh.read(_EOCD.size))
    if sig != b"PK\x05\x06" or comment:
        raise StateFileError(
            path, "truncated, or not a state file (no end-of-archive record at its end)"
        )
    if n_entries > MAX_ENTRIES:
        raise StateFileError(path, f"{n_entries:,} entries; at most {MAX_ENTRIES:,}")
    if cd_offset != 0xFFFFFFFF and cd_offset + cd_size > size:
        raise StateFileError(path, "truncated (its directory points past its end)")
    fh.seek(0)
    zf = zipfile.ZipFile(fh)
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise StateFileError(path, f"{len(infos):,} entries; at most {MAX_ENTRIES:,}")
    by_name: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        what = f"entry {show(info.filename)}"
        if info.filename in by_name:
            raise StateFileError(path, f"{what} appears twice")
        if info.compress_type != zipfile.ZIP_STORED:
            raise StateFileError(
                path,
                f"{what} is compressed; a state file never is (a zip bomb is refused "
                f"without inflating it)",
            )
        if info.flag_bits & 0x1:
            raise StateFileError(path, f"{what} is encrypted")
        if info.file_size != info.compress_size or info.header_offset + info.file_size > size:
            raise StateFileError(path, f"{what} declares more bytes than the file holds")
        by_name[info.filename] = info
    if MANIFEST not in by_name:
        raise StateFileError(path, f"no {MANIFEST} entry")
    manifest = _manifest(path, zf, by_name[MANIFEST], kind)
    declared = manifest["arrays"]
    expected = {MANIFEST} | {n + ".npy" for n in declared}
    extra = [n for n in by_name if n not in expected]
    if extra:
        raise StateFileError(
            path, f"entry {show(extra[0])} is not named by the manifest ({len(extra)} such)"
        )
    missing = [n for n in declared if n + ".npy" not in by_name]
    if missing:
        raise StateFileError(path, f"array {show(missing[0])} is missing ({len(missing)} such)")
    specs = {n: _spec(path, n, s) for n, s in declared.items()}
    total = sum(math.prod(s[1]) * s[0].itemsize for s in specs.values())
    if total > size:
        raise StateFileError(path, f"the manifest declares {total:,} bytes of arrays in {size:,}")
    arrays = {n: _array(path, zf, by_name[n + ".npy"], n, *specs[n]) for n in declared}
    return manifest, arrays


def _no_constant(text: str):
    raise ValueError(f"{text} is not a number in plain JSON")


def _no_twice(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {show(k)} appears twice")
        out[k] = v
    return out


def _manifest(path, zf, info, kind):
    raw = zf.read(info)
    try:
        head = json.loads(
            raw.decode("utf-8"), parse_constant=_no_constant, object_pairs_hook=_no_twice
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise StateFileError(path, f"the manifest is not JSON ({_short(e)})") from None
    del raw
    if not isinstance(head, dict):
        raise StateFileError(path, "the manifest is not a JSON object")
    if head.get("state_format") != FORMAT:
        raise StateFileError(
            path, f"state_format {show(head.get('state_format'))}; this reads {FORMAT!r} files"
        )
    version = head.get("state_format_version")
    m = re.fullmatch(r"(\d{1,6})\.(\d{1,6})", version) if isinstance(version, str) else None
    if m is None:
        raise StateFileError(path, f"state_format_version {show(version)} is not MAJOR.MINOR")
    if int(m.group(1)) != MAJOR:
        raise StateFileError(
            path,
            f"format version {version}: this version of allseason reads {MAJOR}.x only "
            f"(a newer allseason wrote it?)",
        )
    if not isinstance(head.get("kind"), str):
        raise StateFileError(path, "the manifest has no kind")
    if kind is not None and head["kind"] != kind:
        raise StateFileError(path, f"a state of kind {show(head['kind'])}, not {kind!r}")
    arrays = head.get("arrays")
    if not isinstance(arrays, dict):
        raise StateFileError(path, "the manifest has no 'arrays' object")
    for name in arrays:
        try:
            _check_name(name)
        except ValueError as e:
            raise StateFileError(path, str(e)) from None
    return head


def _spec(path, name: str, spec) -> tuple[np.dtype, tuple[int, ...], str, bool]:
    what = f"array {name!r}"
    keys = {"dtype", "shape", "sha256"}
    if not isinstance(spec, dict) or not keys <= set(spec) <= keys | {"neg_inf"}:
        raise StateFileError(path, f"{what}: the manifest must give dtype, shape and sha256")
    if spec.get("neg_inf", False) is not True and "neg_inf" in spec:
        raise StateFileError(path, f"{what}: neg_inf must be true if given")
    dt, shape, sha = spec["dtype"], spec["shape"], spec["sha256"]
    if not isinstance(dt, str) or not _DTYPE.fullmatch(dt):
        raise StateFileError(
            path, f"{what}: dtype {show(dt)} is not a number type (bool, integer, float)"
        )
    ok = isinstance(shape, list) and len(shape) <= 32
    ok = ok and all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in shape)
    if not ok:
        raise StateFileError(path, f"{what}: shape {show(shape)} is not a list of sizes")
    n = math.prod(shape)
    if n > MAX_STATE_ELEMENTS:
        raise StateFileError(
            path, f"{what}: shape {shape} has {n:,} elements; at most {MAX_STATE_ELEMENTS:,}"
        )
    if not isinstance(sha, str) or not _SHA.fullmatch(sha):
        raise StateFileError(path, f"{what}: sha256 {show(sha)} is not 64 hex digits")
    return np.dtype(dt), tuple(shape), sha, "neg_inf" in spec


def _array(path, zf, info, name, dtype, shape, sha, neg_inf):
    try:
        return _checked_array(path, zf, info, name, dtype, shape, sha, neg_inf)
    except zipfile.BadZipFile as e:  # the CRC-32 of the entry, checked as its end is read
        raise StateFileError(
            path, f"array {name!r}: its bytes were changed or damaged ({_short(e)})"
        ) from None


def _checked_array(path, zf, info, name, dtype, shape, sha, neg_inf):
    what = f"array {name!r}"
    with zf.open(info) as fp:
        try:
            version = np.lib.format.read_magic(fp)
            if version == (1, 0):
                got = np.lib.format.read_array_header_1_0(fp, max_header_size=1024)
            elif version == (2, 0):
                got = np.lib.format.read_array_header_2_0(fp, max_header_size=1024)
            else:
                raise ValueError(f"npy version {version} is not read")
        except (ValueError, SyntaxError, TypeError) as e:
            raise StateFileError(path, f"{what}: not an npy array ({_short(e)})") from None
        got_shape, fortran, got_dtype = got
        if got_dtype != dtype or tuple(got_shape) != shape or fortran:
            raise StateFileError(
                path,
                f"{what}: its npy header ({got_dtype.str}, {tuple(got_shape)}"
                f"{', Fortran order' if fortran else ''}) is not the manifest's "
                f"({dtype.str}, {shape})",
            )
        n_bytes = math.prod(shape) * dtype.itemsize
        if info.file_size - fp.tell() != n_bytes:
            raise StateFileError(
                path,
                f"{what}: {info.file_size - fp.tell():,} bytes of data for {n_bytes:,} "
                f"declared (truncated or padded)",
            )
    with zf.open(info) as fp:
        try:
            a = np.lib.format.read_array(fp, allow_pickle=False, max_header_size=1024)
        except ValueError as e:
            raise StateFileError(path, f"{what}: not readable ({_short(e)})") from None
    if _sha256(a) != sha:
        raise StateFileError(path, f"{what}: its SHA-256 is not the manifest's (changed bytes)")
    if not _all_finite(a, neg_inf):
        raise StateFileError(path, f"{what}: holds NaN or inf")
    return a


def check_spd(name: str, M, *, path=None) -> None:
    """Refuse a matrix (or a stack of them, shape (..., d, d)) that is not symmetric positive
    definite, with one :class:`StateFileError` line naming the array and the first bad
    index. For the precision matrices of a loaded state (the Agent's own check).

    Parameters
    ----------
    name : str
        The array's name, for the message.
    M : numpy.ndarray, shape (..., d, d)
        The matrices.
    path : str or Path, optional
        The file, for the message.

        >>> check_spd("M", np.eye(2))
        >>> check_spd("M", np.array([[1.0, 2.0], [2.0, 1.0]]))
        Traceback (most recent call last):
        ...
        allseason.agent.statefile.StateFileError: state file: array 'M': not positive definite
    """
    M = np.asarray(M, dtype=float)
    if M.ndim < 2 or M.shape[-1] != M.shape[-2]:
        raise StateFileError(path, f"array {name!r}: shape {M.shape} is not (..., d, d)")
    stack = M.reshape(-1, M.shape[-1], M.shape[-1])
    for i, m in enumerate(stack):
        at = f"[{i}]" if M.ndim > 2 else ""
        scale = float(np.max(np.abs(m))) if m.size else 0.0
        if not np.all(np.abs(m - m.T) <= 1e-9 * scale):
            raise StateFileError(path, f"array {name!r}{at}: not symmetric")
        try:
            np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            raise StateFileError(path, f"array {name!r}{at}: not positive definite") from None


__all__ = [
    "write_state",
    "read_state",
    "check_spd",
    "StateFileError",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_STATE_BYTES",
    "MAX_ENTRIES",
]
