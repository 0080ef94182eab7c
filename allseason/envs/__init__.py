"""Seasonal environments and the patterns that drive them."""

from .linear import LinearGaussianEnv, Round
from .patterns import PRESETS, Pattern, preset

__all__ = ["LinearGaussianEnv", "Round", "Pattern", "preset", "PRESETS"]
