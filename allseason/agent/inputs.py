"""The inputs of one decision, checked at the boundary: a context vector (context mode) or
arms (K, d), as the compiled step reads them. A function of the agent (bound as its method)."""

from __future__ import annotations

import numpy as np

from ..errors import SpecError
from .records import _finite_array

_F64 = np.dtype(np.float64)  # the native float64 (a numpy singleton: ``is`` compares)


def _exact_layout(flags) -> bool:
    """C order, aligned, writeable: the layout the compiled step was built for."""
    return flags.c_contiguous and flags.aligned and flags.writeable


def inputs(self, arms, context):
    """(ctx, K): the decision's contexts as the kernels read them, checked."""
    if self.context_mode:
        if arms is not None or context is None:
            raise SpecError("context", "this agent has arms (context mode): pass context=c")
        c = context
        if not (
            type(c) is np.ndarray
            and c.dtype is _F64
            and c.shape == self._cshape
            # the compiled step checks the values itself (no pass over them here) before
            # it draws; the policy's streams (draws="stream") are drawn before that
            and (self._kernel_checks or np.isfinite(c).all())
        ):
            c = _finite_array("context", context, f"({self.d},)", 1)
            if c.shape != (self.d,):
                raise SpecError("context", f"must have shape ({self.d},), got {c.shape}")
        self._ctx1_row[...] = c  # a view of ctx1[0, :d]: cheaper than indexing ctx1 here
        ctx = self._ctx1
        K = self.n_arms
    else:
        if context is not None or arms is None:
            raise SpecError("arms", "this agent takes arms (K, d): pass arms=X")
        ctx = arms
        if (
            type(ctx) is not np.ndarray
            or ctx.dtype is not _F64
            or ctx.ndim != 2
            or not _exact_layout(ctx.flags)
        ):  # a copy of the user's data in the layout the compiled step was built for
            ctx = np.array(_finite_array("arms", arms, f"(K, {self.d})", 2), order="C")
        K, d = ctx.shape
        if d != self.d or K < 1:
            raise SpecError("arms", f"must have shape (K, {self.d}), K >= 1, got {ctx.shape}")
        if self.engine != "compiled" and not np.isfinite(ctx).all():  # compiled: checks
            raise SpecError("arms", "must be finite numbers (no NaN, no inf)")
        if K > 100_000:
            raise SpecError("arms", f"at most 100000 arms, got {K}")
    return ctx, K
