r"""Every problem of a file, collected, then reported at once in one SpecError.

>>> p = Problems()
>>> p.add("is empty; every row needs an arm", row=5, column="arm")
>>> p.add("'x' is not a reward", row=3, column="reward")
>>> field, text = p.message()
>>> print(field, text, sep="\n")
reward
row 3, column reward: 'x' is not a reward
row 5, column arm: is empty; every row needs an arm
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import SpecError

MAX_PROBLEMS = 20  # lines of problems in one message; the rest are counted


class Problems:
    """Every problem of a file, collected, then raised at once by :meth:`raise_if_any`.

    ``add`` takes one problem (``row`` None: the file or a column as a whole); ``add_rows``
    the rows of a mask, keeping the first :data:`MAX_PROBLEMS` and counting the rest, so its
    memory does not grow with the file."""

    def __init__(self, limit: int = MAX_PROBLEMS):
        self.limit = limit
        self.total = 0
        self._items: list[tuple[int, int, str, str]] = []  # (row or 0, seq, field, line)

    def __bool__(self) -> bool:
        return self.total > 0

    def columns(self) -> set[str]:
        """The fields (columns) with at least one problem kept."""
        return {f for _, _, f, _ in self._items}

    def add(
        self,
        text: str,
        *,
        row: int | None = None,
        column: str | None = None,
        field: str | None = None,
    ) -> None:
        """One problem; the line names ``row`` and ``column`` when given (``field``: the
        input at fault when no column is named, e.g. a missing one)."""
        self.total += 1
        where = ", ".join(
            p for p in (f"row {row}" if row else "", f"column {column}" if column else "") if p
        )
        line = f"{where}: {text}" if where else text
        self._items.append((row or 0, len(self._items), field or column or "file", line))

    def add_rows(
        self,
        mask: np.ndarray,
        rows: np.ndarray,
        column: str | None,
        text_of: Callable[[int], str],
    ) -> None:
        """A problem on every row of ``mask`` (positions into ``rows``, the rows' numbers),
        in ``column`` (None: the whole row); ``text_of(i)`` words the one at position i."""
        idx = np.flatnonzero(mask)
        for i in idx[: self.limit]:
            self.add(text_of(int(i)), row=int(rows[i]), column=column)
        self.total += max(0, len(idx) - self.limit)

    def message(self) -> tuple[str, str]:
        """(field, text): the first problems in row order, one per line, then a count."""
        items = sorted(self._items)[: self.limit]
        lines = [line for _, _, _, line in items]
        if self.total > len(lines):
            lines.append(
                f"... and {self.total - len(lines):,} more problems ({self.total:,} in all)"
            )
        return (items[0][2] if items else "file"), "\n".join(lines)

    def raise_if_any(self) -> None:
        """Raise a SpecError with the problems collected, if any."""
        if self.total:
            field, text = self.message()
            raise SpecError(field, text)


__all__ = ["Problems", "MAX_PROBLEMS"]
