"""The state file (allseason/agent/statefile.py): exact round trips; hostile files refused with
one StateFileError line before anything they did not pay for is allocated (peak memory of
each refusal measured with tracemalloc and bounded); a ``kill -9`` during a save, 50 times,
never loses the last good state."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import random
import signal
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

from allseason.agent import statefile
from allseason.agent.statefile import StateFileError, check_spd, read_state, write_state
from allseason.errors import SpecError
from allseason.limits import MAX_STATE_ELEMENTS


def _arrays(seed: int = 0, d: int = 5, n: int = 3) -> dict:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d, d))
    return {
        "precision": A @ A.transpose(0, 2, 1) + d * np.eye(d),
        "b": rng.normal(size=(n, d)),
        "weights": rng.dirichlet(np.ones(n)),
        "ids": np.arange(n, dtype=np.int64) * 7,
        "alive": np.array([True, False, True]),
        "f32": rng.normal(size=4).astype(np.float32),
        "empty": np.zeros((0, d)),
        "logw": np.array([-0.5, -np.inf, -1.0]),
        "scalar": np.float64(np.pi),
        "rng_state": np.array([2**64 - 1, 12345], dtype=np.uint64),
    }


def test_round_trip_is_exact(tmp_path):
    arrays = _arrays()
    manifest = {"kind": "agent", "policy": "allseason-sw", "d": 5, "labels": ["a", "é"], "x": 0.1}
    manifest.update(format="allseason-agent", format_version=[1, 0])  # the caller's own: kept
    path = tmp_path / "agent.state"
    size = write_state(path, manifest, arrays)
    assert size == path.stat().st_size
    got_manifest, got = read_state(path, kind="agent")
    assert list(got) == list(arrays)
    for name, a in arrays.items():
        b = got[name]
        assert b.dtype == np.asarray(a).dtype and b.shape == np.shape(a), name
        assert np.asarray(a).tobytes() == b.tobytes(), name
        assert b.flags.writeable
    assert got_manifest["state_format_version"] == "1.0" and got_manifest["kind"] == "agent"
    keys = ("policy", "d", "labels", "x", "format", "format_version")
    assert {k: got_manifest[k] for k in keys} == {k: manifest[k] for k in keys}
    assert got_manifest["arrays"]["b"]["shape"] == [3, 5]
    assert got_manifest["arrays"]["logw"]["neg_inf"] is True
    assert "neg_inf" not in got_manifest["arrays"]["b"]
    # numpy reads it as an npz, without pickle
    with np.load(path, allow_pickle=False) as npz:
        assert np.array_equal(npz["precision"], arrays["precision"])
    # written again: the same bytes (fixed zip dates) but for the creation time
    again = tmp_path / "again.state"
    write_state(again, {**manifest, "created": got_manifest["created"]}, arrays)
    assert again.read_bytes() == path.read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_writer_refuses_what_the_reader_would(tmp_path):
    path = tmp_path / "s.state"
    write_state(path, {"kind": "agent"}, {"a": np.ones(2)})
    before = path.read_bytes()
    for arrays, manifest, words in [
        ({"a": np.array([1.0, np.nan])}, {}, "NaN"),
        ({"a": np.array([-np.inf, np.inf])}, {}, "NaN or \\+inf"),
        ({"a": np.array(["x"], dtype=object)}, {}, "only numbers"),
        ({"a": np.array(["x"])}, {}, "only numbers"),
        ({"../a": np.ones(1)}, {}, "array name"),
        ({"a": np.ones(1)}, {"bad": float("inf")}, "not plain JSON"),
        ({"a": np.ones(1)}, {"bad": object()}, "not plain JSON"),
    ]:
        with pytest.raises(StateFileError, match=words):
            write_state(path, manifest, arrays)
        assert path.read_bytes() == before  # the old state is left as it was
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


# --- hostile files -------------------------------------------------------------------------


def _zip(path, manifest, entries: dict, compress=zipfile.ZIP_STORED) -> None:
    """A state-like archive built by hand: the manifest (dict or raw bytes) and raw entries."""
    with zipfile.ZipFile(path, "w", compress) as zf:
        raw = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
        zf.writestr("manifest.json", raw)
        for name, data in entries.items():
            zf.writestr(name, data)


def _npy(a) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(a), allow_pickle=True)
    return buf.getvalue()


def _head(arrays: dict, **over) -> dict:
    head = {
        "state_format": "allseason-state",
        "state_format_version": "1.0",
        "kind": "agent",
        "created": "2026-11-26T00:00:00+00:00",
        "arrays": {
            n: {
                "dtype": a.dtype.str,
                "shape": list(a.shape),
                "sha256": hashlib.sha256(a.tobytes()).hexdigest(),
            }
            for n, a in arrays.items()
        },
    }
    head.update(over)
    return head


class Evil:
    """A pickle payload: unpickling it would create a file."""

    target = ""

    def __reduce__(self):
        return (open, (self.target, "w"))


def _bomb(path) -> None:
    """256 MiB of zeros deflated into about 250 KB, declared as a float64 array."""
    n = 2**25
    head = _head({"a": np.zeros(1)})
    head["arrays"]["a"] = {"dtype": "<f8", "shape": [n], "sha256": "0" * 64}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(head), compress_type=zipfile.ZIP_STORED)
        with zf.open("a.npy", "w", force_zip64=True) as out:
            buf = io.BytesIO()
            np.lib.format.write_array_header_1_0(
                buf, {"descr": "<f8", "fortran_order": False, "shape": (n,)}
            )
            out.write(buf.getvalue())
            zeros = bytes(1 << 20)
            for _ in range(n * 8 >> 20):
                out.write(zeros)


def _hostile(tmp_path, case: str):
    """(path, words the message must hold) of one hostile file."""
    good = tmp_path / "good.state"
    arrays = _arrays(1)
    write_state(good, {"kind": "agent"}, arrays)
    raw = good.read_bytes()
    path = tmp_path / f"{case}.state"
    a = {"a": np.arange(6.0).reshape(2, 3)}
    if case == "truncated-half":
        path.write_bytes(raw[: len(raw) // 2])
        return path, "truncated"
    if case == "truncated-tail":
        path.write_bytes(raw[:-1])
        return path, "truncated"
    if case == "truncated-10":
        path.write_bytes(raw[:10])
        return path, "truncated"
    if case == "empty":
        path.write_bytes(b"")
        return path, "truncated"
    if case == "changed-byte":  # a byte of an array's data: the CRC sees it
        with zipfile.ZipFile(good) as zf:
            info = zf.getinfo("precision.npy")
        at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 128 + 17
        bad = bytearray(raw)
        bad[at] ^= 0x01
        path.write_bytes(bytes(bad))
        return path, "changed or damaged"
    if case == "changed-value":  # a value changed and the zip rebuilt (CRC right): SHA-256
        b = dict(a)
        b["a"] = a["a"].copy()
        b["a"][1, 1] += 1e-12
        _zip(path, _head(a), {"a.npy": _npy(b["a"])})
        return path, "SHA-256"
    if case == "object-npy":  # an object array, declared as such
        obj = np.array([Evil()], dtype=object)
        head = _head(a)
        head["arrays"] = {"a": {"dtype": "|O", "shape": [1], "sha256": "0" * 64}}
        _zip(path, head, {"a.npy": _npy(obj)})
        return path, "not a number type"
    if case == "object-npy-disguised":  # an object array declared as floats
        obj = np.array([Evil()], dtype=object)
        head = _head(a)
        head["arrays"] = {"a": {"dtype": "<f8", "shape": [1], "sha256": "0" * 64}}
        _zip(path, head, {"a.npy": _npy(obj)})
        return path, "npy header"
    if case == "raw-pickle":
        path.write_bytes(pickle.dumps({"state": Evil()}))
        return path, "not a state file"
    if case == "pickle-as-manifest":
        _zip(path, pickle.dumps(Evil()), {})
        return path, "not JSON"
    if case == "nan":
        b = {"a": np.array([1.0, np.nan])}
        _zip(path, _head(b), {"a.npy": _npy(b["a"])})
        return path, "NaN"
    if case == "inf":
        b = {"a": np.array([[np.inf]])}
        _zip(path, _head(b), {"a.npy": _npy(b["a"])})
        return path, "NaN or inf"
    if case == "neg-inf-undeclared":
        b = {"a": np.array([0.0, -np.inf])}
        _zip(path, _head(b), {"a.npy": _npy(b["a"])})
        return path, "NaN or inf"
    if case == "pos-inf-declared":
        b = {"a": np.array([0.0, np.inf])}
        head = _head(b)
        head["arrays"]["a"]["neg_inf"] = True
        _zip(path, head, {"a.npy": _npy(b["a"])})
        return path, "NaN or inf"
    if case == "huge-shape":
        head = _head(a)
        head["arrays"]["a"]["shape"] = [10**9]
        _zip(path, head, {"a.npy": _npy(a["a"])})
        return path, "1,000,000,000 elements"
    if case == "huge-shape-header":  # the manifest says small, the npy header says 10**9
        head = _head({"a": np.zeros(4)})
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            buf, {"descr": "<f8", "fortran_order": False, "shape": (10**9,)}
        )
        _zip(path, head, {"a.npy": buf.getvalue()})
        return path, "npy header"
    if case == "shape-beyond-file":  # within the element limit, more bytes than the file
        head = _head(a)
        head["arrays"]["a"]["shape"] = [MAX_STATE_ELEMENTS]
        _zip(path, head, {"a.npy": _npy(a["a"])})
        return path, "declares"
    if case == "zip-bomb":
        _bomb(path)
        return path, "entry 'a.npy' is compressed"
    if case == "version-2":
        _zip(path, _head(a, state_format_version="2.0"), {"a.npy": _npy(a["a"])})
        return path, "reads 1.x only"
    if case == "version-garbage":
        _zip(path, _head(a, state_format_version=2), {"a.npy": _npy(a["a"])})
        return path, "MAJOR.MINOR"
    if case == "other-format":
        _zip(path, _head(a, state_format="gittins"), {"a.npy": _npy(a["a"])})
        return path, "format"
    if case == "manifest-not-json":
        _zip(path, b"{'format': 'allseason-state'", {"a.npy": _npy(a["a"])})
        return path, "not JSON"
    if case == "manifest-nan":
        _zip(path, json.dumps(_head(a, note=float("nan"))).encode(), {"a.npy": _npy(a["a"])})
        return path, "not JSON"
    if case == "manifest-list":
        _zip(path, b"[1, 2]", {"a.npy": _npy(a["a"])})
        return path, "not a JSON object"
    if case == "manifest-deep":
        _zip(path, b"[" * 100_000 + b"]" * 100_000, {})
        return path, "not JSON"
    if case == "extra-entry":
        _zip(path, _head(a), {"a.npy": _npy(a["a"]), "b.npy": _npy(a["a"])})
        return path, "not named by the manifest"
    if case == "missing-entry":
        _zip(path, _head({**a, "b": np.ones(2)}), {"a.npy": _npy(a["a"])})
        return path, "missing"
    if case == "no-manifest":
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("a.npy", _npy(a["a"]))
        return path, "no manifest.json"
    if case == "duplicate-entry":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _zip(path, _head(a), {"a.npy": _npy(a["a"])})
            with zipfile.ZipFile(path, "a") as zf:
                zf.writestr("a.npy", _npy(a["a"] + 1))
        return path, "appears twice"
    if case == "bad-dtype-text":
        head = _head(a)
        head["arrays"]["a"]["dtype"] = "(1000000000,)f8"
        _zip(path, head, {"a.npy": _npy(a["a"])})
        return path, "not a number type"
    if case == "traversal-name":
        head = _head(a)
        head["arrays"] = {"../../x": head["arrays"]["a"]}
        _zip(path, head, {"../../x.npy": _npy(a["a"])})
        return path, "array name"
    if case == "too-large":
        path.write_bytes(raw)
        return path, "at most 1,000 are read"
    raise AssertionError(case)


CASES = [
    "truncated-half",
    "truncated-tail",
    "truncated-10",
    "empty",
    "changed-byte",
    "changed-value",
    "object-npy",
    "object-npy-disguised",
    "raw-pickle",
    "pickle-as-manifest",
    "nan",
    "inf",
    "neg-inf-undeclared",
    "pos-inf-declared",
    "huge-shape",
    "huge-shape-header",
    "shape-beyond-file",
    "zip-bomb",
    "version-2",
    "version-garbage",
    "other-format",
    "manifest-not-json",
    "manifest-nan",
    "manifest-list",
    "manifest-deep",
    "extra-entry",
    "missing-entry",
    "no-manifest",
    "duplicate-entry",
    "bad-dtype-text",
    "traversal-name",
    "too-large",
]
PEAKS: dict[str, tuple[int, int]] = {}


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_file_is_refused_in_one_line_within_its_size(tmp_path, case):
    path, words = _hostile(tmp_path, case)
    Evil.target = str(tmp_path / "pwned")
    size = path.stat().st_size
    max_bytes = 1_000 if case == "too-large" else statefile.MAX_STATE_BYTES
    tracemalloc.start()
    try:
        with pytest.raises(StateFileError) as info:
            read_state(path, max_bytes=max_bytes)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    msg = str(info.value)
    assert isinstance(info.value, SpecError)
    assert "\n" not in msg and msg.startswith(f"state file: {path.name}: "), msg
    assert words in msg, msg
    assert not os.path.exists(Evil.target)  # nothing was unpickled
    PEAKS[case] = (size, peak)
    # memory bounded by the file's size: twice it, plus the parse of a small manifest
    assert peak <= 2 * size + 2_000_000, (case, size, peak)
    print(f"\n{case}: {size:,} bytes, peak {peak:,} bytes: {msg}")


def test_a_minor_version_is_read(tmp_path):
    a = {"a": np.arange(3.0)}
    path = tmp_path / "v17.state"
    _zip(path, _head(a, state_format_version="1.7", extra={"new": 1}), {"a.npy": _npy(a["a"])})
    manifest, arrays = read_state(path)
    assert manifest["state_format_version"] == "1.7" and np.array_equal(arrays["a"], a["a"])
    with pytest.raises(StateFileError, match="not 'other'"):
        read_state(path, kind="other")


def test_reading_a_large_state_costs_about_its_size(tmp_path):
    arrays = {"precision": np.ones((102, 100, 100)), "b": np.ones((102, 100))}
    path = tmp_path / "big.state"
    write_state(path, {"kind": "agent"}, arrays)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        _, got = read_state(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size < peak < 1.2 * size + 1_000_000, (size, peak)


def test_not_a_regular_file(tmp_path):
    with pytest.raises(StateFileError, match="not a regular file"):
        read_state(tmp_path)
    with pytest.raises(StateFileError, match="no such file"):
        read_state(tmp_path / "nope.state")


def test_check_spd():
    M = np.stack([np.eye(3), 2 * np.eye(3)])
    check_spd("M", M)
    bad = M.copy()
    bad[1, 2, 2] = -1.0
    with pytest.raises(StateFileError, match=r"array 'M'\[1\]: not positive definite"):
        check_spd("M", bad)
    bad = M.copy()
    bad[0, 0, 1] = 0.5
    with pytest.raises(StateFileError, match=r"\[0\]: not symmetric"):
        check_spd("M", bad, path="x.state")
    with pytest.raises(StateFileError, match="not \\(..., d, d\\)"):
        check_spd("M", np.ones((2, 3)))


# --- kill -9 during save -------------------------------------------------------------------


def _state(i: int) -> dict:
    """The i-th state the saving child writes: sizes vary, so saves take varying times."""
    n = 20_000 + (i * 7919) % 200_000
    return {"a": np.full(n, float(i)), "i": np.array([i], dtype=np.int64)}


def _saver(path, pipe_w, i: int) -> None:  # the child: save states i, i + 1, ... for ever
    try:
        while True:
            write_state(path, {"kind": "agent", "i": i}, _state(i))
            os.write(pipe_w, f"{i}\n".encode())
            i += 1
    finally:
        os._exit(1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_kill_9_during_save_never_loses_the_last_good_state(tmp_path):
    """50 children each save in a loop and are killed (SIGKILL) at a random moment; the file
    always loads and equals a state that was written (the last one reported, or the one
    after it, whose rename may have happened before its report)."""
    path = tmp_path / "agent.state"
    write_state(path, {"kind": "agent", "i": -1}, {"a": np.zeros(1), "i": np.array([-1])})
    rng = random.Random(31)
    outcomes = {"previous": 0, "next": 0}
    mid_save = 0
    for trial in range(50):
        base = read_state(path)[0]["i"] + 1
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _saver(path, w, base)
        os.close(w)
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with os.fdopen(r) as fh:
            done = [int(x) for x in fh.read().split()]
        last = done[-1] if done else base - 1
        manifest, arrays = read_state(path)
        i = manifest["i"]
        assert i in (last, last + 1), (trial, last, i)
        if i >= 0:
            expect = _state(i)
            assert all(np.array_equal(arrays[k], expect[k]) for k in expect)
        outcomes["previous" if i == last else "next"] += 1
        leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        mid_save += bool(leftovers)
        for p in leftovers:  # a killed save leaves its temporary file; a service may sweep it
            p.unlink()
    print(f"\n50 kills: {outcomes}, killed mid-write (a .tmp left): {mid_save}")
    assert mid_save >= 10  # most kills land inside a save: the test can fail
