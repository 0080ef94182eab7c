"""A snapshot written off the event loop (allseason/serve/snapshot.py, store.py): while its
thread writes, the journal has already moved on, so a kill in that window leaves two journals
(and half a snapshot file); a restart replays every journal after CURRENT's snapshot, in
order, to the same agent bit for bit, and nothing acknowledged is lost. Snapshots the disk
refuses pile journals up, all replayed."""

from __future__ import annotations

import shutil
import threading

from allseason.agent import Agent
from allseason.serve import snapshot, store
from allseason.serve.store import Writer, init_folder
from tests.agent.test_serve_disk import D, _arms, _same


def _drive(w: Writer, start: int, n: int) -> None:
    """n decisions, each with its reward acknowledged (a batch update every 2)."""
    for i in range(start, start + n):
        w.decide({"event_id": f"e{i}", "arms": _arms(i), "t": float(i)})
        status, _ = w.reward({"event_id": f"e{i}", "reward": float(i % 3), "t": float(i)})
        assert status == 202


def _journals(folder) -> list[str]:
    return sorted(p.name for p in (folder / "journal").glob("w-*"))


def test_a_kill_during_the_threaded_snapshot_loses_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    init_folder(folder, Agent("allseason-sw", d=D, seed=3, batch_size=2))
    release, writing = threading.Event(), threading.Event()
    real = snapshot.write_state

    def slow_write(path, manifest, arrays):  # half a file on disk, then a long pause
        (path.parent / f".{path.name}.half.tmp").write_bytes(b"PK\x03\x04 cut off")
        writing.set()
        assert release.wait(30)
        (path.parent / f".{path.name}.half.tmp").unlink()
        return real(path, manifest, arrays)

    monkeypatch.setattr(snapshot, "write_state", slow_write)
    w = Writer(folder, snapshot_seconds=3600.0, background=True)
    _drive(w, 0, 20)
    w.snapped_at -= 3600.0
    assert w.tick() and writing.wait(10)  # the thread writes snapshot 1...
    assert w.job is not None and w.seq == 0 and w.wal == 1
    _drive(w, 20, 15)  # ...while requests go on: acknowledged into journal 1
    w.snapped_at -= 3600.0
    assert not w.tick() and w.job is not None  # due again, but one snapshot at a time
    w.snapped_at += 3600.0
    assert _journals(folder) == ["w-00000000.jsonl", "w-00000001.jsonl"]
    killed = tmp_path / "killed"
    shutil.copytree(folder, killed)  # what a kill -9 now leaves on disk
    assert store.read_pointer(killed)["seq"] == 0

    monkeypatch.setattr(snapshot, "write_state", real)  # the thread already holds its own
    again = Writer(killed)
    assert again.replayed == 70  # journal 0 (20 + 20 records) then journal 1 (15 + 15)
    _same(again.agent, w.agent)
    assert again.seq == 2 and _journals(killed) == ["w-00000002.jsonl"]
    assert not list((killed / "snapshots").glob(".*"))  # the half file is gone

    release.set()
    w.job.join()
    assert w.tick() is False and w.job is None and w.seq == 1  # noted at the next tick
    assert store.read_pointer(folder)["seq"] == 1 and _journals(folder) == ["w-00000001.jsonl"]
    after = Writer(tmp_path / "state")
    assert after.replayed == 30  # only what came after snapshot 1
    _same(after.agent, w.agent)


def test_snapshots_the_disk_refuses_pile_up_journals_that_are_all_replayed(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    init_folder(folder, Agent("allseason-sw", d=D, seed=5, batch_size=2))
    real = snapshot.write_state

    def full(path, manifest, arrays):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot, "write_state", full)
    w = Writer(folder, snapshot_seconds=3600.0)
    for k in range(3):
        _drive(w, 10 * k, 10)
        w.snapped_at -= 3600.0
        assert not w.tick() and "snapshot" in w.snapshot_error and w.seq == 0
        assert w.batches_since >= 1  # tried again at the next cadence
    _drive(w, 30, 4)
    assert _journals(folder) == [f"w-{k:08d}.jsonl" for k in range(4)]
    killed = tmp_path / "killed"
    shutil.copytree(folder, killed)
    monkeypatch.setattr(snapshot, "write_state", real)
    again = Writer(killed)
    assert again.replayed == 68 and again.seq == 4
    _same(again.agent, w.agent)
    w.snapped_at -= 3600.0
    assert w.tick() and w.seq == 4 and w.snapshot_error is None
    assert _journals(folder) == ["w-00000004.jsonl"]
    _same(Writer(folder).agent, w.agent)
