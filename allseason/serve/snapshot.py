"""A snapshot written off the event loop (issue 32).

The writer's snapshot paused the service's event loop for up to 0.2 s every
``--snapshot-every`` seconds (the state file's and CURRENT's fsyncs), which was the rest of
``/decide``'s p99. Now:

1. on the loop, the agent's state is taken (``Agent.to_state`` copies its arrays: a few
   milliseconds), the journal written so far is fsync'd, and the journal moves on to the
   snapshot's number k + 1 at once: every record from then on is after snapshot k + 1;
2. a thread (:class:`SnapshotJob`) writes the state file, then CURRENT (both atomic);
3. once it is done, the loop forgets the journals before k + 1 (:meth:`Writer._finish`).

Until CURRENT names snapshot k + 1, snapshot k is in charge; a kill then leaves journals k and
k + 1, and a restart replays every journal from CURRENT's number on, in order
(:func:`journal_seqs`). Nothing acknowledged is lost, and the replay gives the same agent bit
for bit: the same calls in the same order.
"""

from __future__ import annotations

import threading
from pathlib import Path

from ..agent.statefile import write_state
from .journal import write_atomic


def journal_seqs(folder, seq: int) -> list[int]:
    """The numbers of the writer's journals ``journal/w-*.jsonl`` from ``seq`` on, in order
    (``[seq]`` when there is none: a journal not yet created is empty)."""
    found = {seq}
    for p in (Path(folder) / "journal").glob("w-*.jsonl"):
        mid = p.name[2 : -len(".jsonl")]
        if mid.isdigit() and int(mid) >= seq:
            found.add(int(mid))
    return sorted(found)


def forget_before(folder, seq: int) -> None:
    """Delete the snapshots but ``seq`` and the one before (a reader may be loading it), the
    files of a snapshot cut off by a kill, and the writer's journals before ``seq``."""
    found: dict[str, list[tuple[int, Path]]] = {"snapshots": [], "journal": []}
    for sub, pattern in (("snapshots", "*snap-*"), ("journal", "w-*")):
        for p in (Path(folder) / sub).glob(pattern):
            try:
                n = -1 if p.name[0] == "." else int(p.name.split("-")[1].split(".")[0])
            except ValueError:
                n = -1
            found[sub].append((n, p))
    before = max((n for n, _ in found["snapshots"] if n < seq), default=-1)
    for n, p in found["snapshots"]:
        if n < 0 or n not in (seq, before):
            p.unlink(missing_ok=True)
    for n, p in found["journal"]:
        if n < seq:
            p.unlink(missing_ok=True)


class SnapshotJob:
    """Snapshot ``seq``: ``state`` (``to_state``'s manifest and arrays, already copied) written
    to ``path``, then ``pointer`` (CURRENT's text) to ``pointer_path``, on a thread
    (:meth:`start`) or here (:meth:`run`). :attr:`error` is its one line if the disk refused
    (the partial file removed; CURRENT unchanged)."""

    def __init__(self, seq: int, path: Path, state: tuple, pointer_path: Path, pointer: str,
                 readers: dict):  # fmt: skip
        self.seq, self.path, self.state = seq, Path(path), state
        self.pointer_path, self.pointer, self.readers = pointer_path, pointer, readers
        self.error: str | None = None
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        """Write the state file, then CURRENT."""
        try:
            write_state(self.path, *self.state)
            write_atomic(self.pointer_path, self.pointer)
        except (OSError, ValueError) as e:
            text = (str(e).splitlines() or [type(e).__name__])[0][:300]
            self.error = f"snapshot {self.seq} not written: {text}"
            self.path.unlink(missing_ok=True)
            for p in self.path.parent.glob(f".{self.path.name}.*"):
                p.unlink(missing_ok=True)
        finally:
            self.state = ()  # the copy's memory goes now

    def start(self) -> None:
        """:meth:`run` on a thread of its own."""
        self._thread = threading.Thread(target=self.run, name=f"snapshot-{self.seq}", daemon=True)
        self._thread.start()

    def done(self) -> bool:
        """Whether the write has ended (well or not)."""
        return self._thread is None or not self._thread.is_alive()

    def join(self) -> None:
        """Wait for the write to end."""
        if self._thread is not None:
            self._thread.join()


__all__ = ["SnapshotJob", "forget_before", "journal_seqs"]
