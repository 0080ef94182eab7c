"""Where :meth:`Agent.save` / :meth:`Agent.load` find the state file's format: engineer
agent-state's :mod:`.statefile` (``write_state``, ``read_state``), or, until that branch is
merged, a minimal stand-in here (one JSON manifest and ``.npy`` arrays in a folder written
atomically, without the checks). The lead deletes the stand-in at merge."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

try:  # the real format (branch agent-state)
    from .statefile import read_state, write_state  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - the stand-in, until the merge

    def write_state(path, manifest: dict, arrays: dict) -> None:
        """Stand-in: a .npz of the arrays plus the manifest, written to a temporary file,
        fsynced and renamed over ``path``."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                blob = np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)
                np.savez(
                    fh, __manifest__=blob, **{k: np.ascontiguousarray(v) for k, v in arrays.items()}
                )
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def read_state(path, **_options):
        """Stand-in: the manifest and arrays :func:`write_state` wrote (no pickle)."""
        with np.load(path, allow_pickle=False) as z:
            manifest = json.loads(bytes(z["__manifest__"]).decode())
            arrays = {k: z[k] for k in z.files if k != "__manifest__"}
        return manifest, arrays


__all__ = ["write_state", "read_state"]
