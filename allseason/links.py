"""A scenario as link parameters: their names and the codecs of segments and batch sizes.

The app's address holds the scenario (``Scenario.to_query``, read back by
``parse_scenario(query, "query")``); these helpers write and split the two values that are
lists. Decoding only splits: the pieces are validated by :func:`allseason.specs.parse_scenario`.

    >>> encode_segments(((0, 1500), (1, 1000)))
    '0x1500_1x1000'
    >>> decode_segments("0x1500_1x1000")
    [['0', '1500'], ['1', '1000']]
    >>> encode_batch((10, 20, 5)), decode_batch("10, 20, 5")
    ('10_20_5', ['10', '20', '5'])
"""

from __future__ import annotations

from .errors import SpecError
from .errors import show as _show

# the parameters of a link (and of the CLI's preset flags); see Scenario.to_query
QUERY_FIELDS = (
    "preset",
    "segments",
    "horizon",
    "n_states",
    "d",
    "n_arms",
    "sigma2",
    "batch_size",
    "seed",
)


def encode_segments(segments) -> str:
    """((0, 1500), (1, 1000)) -> '0x1500_1x1000' (state x length, joined by _)."""
    return "_".join(f"{s}x{n}" for s, n in segments)


def decode_segments(text: str, *, max_segments: int | None = None) -> list[list[str]]:
    """'0x1500_1x1000' -> [['0', '1500'], ['1', '1000']] (still to be validated); more
    than ``max_segments`` segments is an error."""
    parts = [p for p in str(text).strip().split("_") if p]
    if not parts:
        raise SpecError("segments", "is empty; write STATExLENGTH joined by _, e.g. 0x1500_1x1000")
    if max_segments is not None and len(parts) > max_segments:
        raise SpecError("segments", f"at most {max_segments} segments")
    out = []
    for i, part in enumerate(parts, start=1):
        state, sep, length = part.partition("x")
        if not sep:
            raise SpecError(
                "segments",
                f"segment {i} ({_show(part)}) is not STATExLENGTH; write e.g. 0x1500_1x1000",
            )
        out.append([state, length])
    return out


def encode_batch(batch_size) -> str:
    """10 -> '10'; (10, 20, 5) -> '10_20_5'."""
    return "_".join(map(str, batch_size)) if isinstance(batch_size, tuple) else str(batch_size)


def decode_batch(text: str):
    """'10' -> '10'; '10_20, 5' -> ['10', '20', '5'] (still to be validated)."""
    parts = [p for p in str(text).replace(",", "_").split("_") if p.strip()]
    if not parts:
        raise SpecError("batch_size", "is empty")
    return parts[0].strip() if len(parts) == 1 else [p.strip() for p in parts]


__all__ = ["QUERY_FIELDS", "encode_segments", "decode_segments", "encode_batch", "decode_batch"]
