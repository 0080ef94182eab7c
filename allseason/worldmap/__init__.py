"""Where does All-Season help? The knobs of a seasonal world, a screening of which knobs
decide the outcome, and a map over the two that matter most, each cell a tuned contest
(:mod:`.contest`) computed on the sweep engine (:mod:`.compute`), shipped as a snapshot
(:mod:`.snapshot`) that the app reads and a test recomputes in part."""

from __future__ import annotations

from .knobs import KNOBS, Knobs, estimate_knobs, pattern_knobs, snr

__all__ = ["KNOBS", "Knobs", "estimate_knobs", "pattern_knobs", "snr"]
