"""The service's disk, in process (allseason/serve/store.py, reader.py): expiry journalled
and replayed, the readers' journals rotated with the disk bounded, and no acknowledged
record lost across rotations and restarts of the writer and the readers."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from allseason.agent import Agent
from allseason.serve import store
from allseason.serve.reader import Reader
from allseason.serve.store import Writer, init_folder, reader_segments

D = 3


def _arms(i: int) -> list:
    return np.round(np.random.default_rng(i).normal(size=(3, D)), 6).tolist()


def _same(a: Agent, b: Agent) -> None:
    ma, xa = a.to_state()
    mb, xb = b.to_state()
    assert sorted(xa) == sorted(xb)
    for k in xa:
        assert xa[k].tobytes() == xb[k].tobytes(), k
    assert ma["counts"] == mb["counts"] and ma["open"] == mb["open"]


@pytest.mark.parametrize("how", ["drop", "default"])
def test_expiry_is_journalled_and_a_restart_replays_it(tmp_path, how):
    folder = tmp_path / "state"
    agent = Agent("allseason-sw", d=D, seed=1, batch_size=2, horizon=10.0, on_expire=how)
    init_folder(folder, agent)
    w = Writer(folder)
    for i in range(9):
        w.decide({"event_id": f"e{i}", "arms": _arms(i), "t": 100.0 + i})
    w.reward({"event_id": "e8", "reward": 1.0, "t": 109.0})
    assert w.expire(now=105.0) == 0  # nothing older than 95
    assert w.expire(now=114.5) == 5  # e0..e4 (t < 104.5)
    assert w.agent.counts["expired"] == 5 and w.agent.n_open == 3
    assert w.agent.counts["dropped"] == (5 if how == "drop" else 0)
    if how == "default":
        assert w.agent.counts["batches"] == 3  # e8, then e0..e4 learnt with 0: B = 2
    lines = [json.loads(x) for x in w.journal.path.read_text().splitlines()]
    assert {"k": "e", "now": 114.5} in lines or how == "default"
    status, out = w.reward({"event_id": "e1", "reward": 1.0, "t": 120.0})
    assert status == 200 and out["status"] == "duplicate"  # resolved by its expiry
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    _same(Writer(copy).agent, w.agent)  # the snapshot and the journal give the same agent
    free = Writer(tmp_path / "state").agent.copy()
    assert free.expire(now=1e12) == 3  # the rest, later


def test_an_agent_without_horizon_never_expires(tmp_path):
    init_folder(tmp_path / "s", Agent("lints", d=D, seed=1))
    w = Writer(tmp_path / "s")
    w.decide({"event_id": "a", "arms": _arms(0), "t": 0.0})
    assert w.expire(now=1e12) == 0 and w.agent.n_open == 1


def _journal_files(folder) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in (folder / "journal").iterdir()}


def test_rotated_reader_journals_stay_bounded_and_lose_nothing(tmp_path):
    """A reader answers 400 decisions and takes rewards for most of them (some for the
    writer's own decisions, some twice), in 1,600-byte segments; the writer reads them now and
    then; both are restarted (as after a kill -9: what was written stays) at random moments.
    Every acknowledged reward is learnt once, every answered decision adopted once, the
    journals stay a few segments long, and a restart from the disk gives the same agent."""
    cap = 1_600
    folder = tmp_path / "state"
    init_folder(folder, Agent("allseason-sw", d=D, seed=5, batch_size=3))
    writer = Writer(folder, n_readers=1, journal_bytes=cap)
    reader = Reader(folder, 1, poll=0.0, journal_bytes=cap)
    rng = np.random.default_rng(8)
    answered, acked, sent_twice = [], set(), 0
    most = {"segments": 0, "files": 0, "bytes": 0}
    for i in range(400):
        if rng.random() < 0.1:
            out = writer.decide({"event_id": f"w{i}", "arms": _arms(i), "t": float(i)})
        else:
            out = reader.decide({"event_id": f"r{i}", "arms": _arms(i), "t": float(i)})
        answered.append(out["event_id"])
        if i >= 3 and rng.random() < 0.8:
            e = answered[i - 3]
            if e not in acked:
                status, _ = reader.reward({"event_id": e, "reward": float(i % 2), "t": float(i)})
                assert status == 202
                acked.add(e)
                if rng.random() < 0.05:  # a client that sends it again
                    reader.reward({"event_id": e, "reward": float(i % 2), "t": float(i)})
                    sent_twice += 1
        if rng.random() < 0.15:
            writer.ingest()
            files = _journal_files(folder)  # what is left once the writer has read
            most["files"] = max(most["files"], len(files))
            most["bytes"] = max(most["bytes"], sum(files.values()))
        if rng.random() < 0.02:  # the writer killed and started again
            writer.journal.close()
            writer = Writer(folder, n_readers=1, journal_bytes=cap)
        if rng.random() < 0.02:  # the reader killed and started again
            reader = Reader(folder, 1, poll=0.0, journal_bytes=cap)
        most["segments"] = max(most["segments"], reader.decisions.seg, reader.rewards.seg)
    while writer.ingest():
        pass
    c = writer.agent.counts
    assert c["decisions"] == len(answered)  # every decision answered, adopted once
    assert c["learned"] == len(acked) and c["unknown"] == 0  # every 202 learnt once
    assert c["duplicates"] == sent_twice and writer.skipped == 0
    assert most["segments"] >= 20  # it did rotate, many times
    # and the disk stayed bounded: once read, the writer's journal and the readers' last
    # segments (and the one being read past), whatever was written in all (about 130 kB)
    assert most["files"] <= 5 and most["bytes"] <= 4 * cap, most
    kept = reader_segments(folder, 1, "d")
    assert len(kept) <= 2 and kept[-1] == reader.decisions.seg
    writer.journal.close()
    _same(Writer(folder, n_readers=1, journal_bytes=cap).agent, writer.agent)


def test_positions_of_the_format_before_segments_are_read(tmp_path):
    assert store._readers({"1": {"d": 120, "r": 0}}) == {1: {"d": [0, 120], "r": [0, 0]}}
    assert store.reader_path(tmp_path, 2, "r", 0).name == "r2.rewards.jsonl"
    assert store.reader_path(tmp_path, 2, "r", 7).name == "r2.rewards.000007.jsonl"


def test_the_service_expires_old_decisions_on_its_own(tmp_path):
    """``serve --horizon 0.5 --on-expire default --expire-every 0.2``: a decision whose reward
    does not come is learnt with the default reward within a second; its late reward is then
    a duplicate; a restart keeps it so."""
    import signal
    import time

    from allseason.serve.client import Client, start_service

    folder = tmp_path / "state"
    flags = ["--d", str(D), "--horizon", "0.5", "--on-expire", "default", "--expire-every", "0.2"]
    proc, port = start_service(folder, *flags)
    try:
        c = Client(port)
        assert c.call("POST", "/decide", {"event_id": "late", "arms": _arms(1)})[0] == 200
        t0 = time.monotonic()
        while c.call("GET", "/state")[1]["counts"]["expired"] < 1:
            assert time.monotonic() - t0 < 10, "not expired"
            time.sleep(0.1)
        counts = c.call("GET", "/state")[1]["counts"]
        assert counts["dropped"] == 0 and counts["batches"] == 1  # learnt with 0
        status, out = c.call("POST", "/reward", {"event_id": "late", "reward": 1.0})
        assert status == 200 and out["status"] == "duplicate"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    again = Writer(folder).agent
    assert again.counts["expired"] == 1 and again.counts["duplicates"] == 1
    assert again.model_version == 1 and again.n_open == 0


def test_snapshots_follow_the_cadence_and_a_restart_replays_the_batches_since(tmp_path):
    """A snapshot once ``snapshot_seconds`` have passed (at a batch update or a tick), none
    before however many batch updates; a restart replays the batch updates in the journal to
    the same agent, bit for bit; a clean stop leaves nothing to replay."""
    folder = tmp_path / "state"
    init_folder(folder, Agent("allseason-sw", d=D, seed=3, batch_size=2))
    w = Writer(folder, snapshot_seconds=3600.0)
    for i in range(40):
        w.decide({"event_id": f"e{i}", "arms": _arms(i), "t": float(i)})
        w.reward({"event_id": f"e{i}", "reward": float(i % 3), "t": float(i)})
    assert w.agent.model_version == 20 and w.seq == 0 and w.batches_since == 20
    assert not w.tick()  # not due
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    again = Writer(copy)
    assert again.replayed == 80 and again.seq == 1  # 20 batch updates replayed, then saved
    _same(again.agent, w.agent)
    w.snapped_at -= 3600.0  # the cadence has passed: the next tick writes one
    assert w.tick() and w.seq == 1 and w.batches_since == 0 and w.journal.size == 0
    assert not w.tick()  # no batch update since
    assert store.read_pointer(folder)["version"] == 20
    w.decide({"event_id": "last", "arms": _arms(99), "t": 99.0})
    w.close()  # a clean stop: a last snapshot, an empty journal
    after = Writer(folder)
    assert after.replayed == 0 and after.seq == 2
    _same(after.agent, w.agent)


def test_snapshot_every_is_validated_in_one_line(tmp_path, capsys):
    from allseason.cli.serve import cli

    for bad in ("-1", "nan", "99999", "soon"):
        assert cli([str(tmp_path / "s"), "--d", "3", "--snapshot-every", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--snapshot-every" in err[0], err
