"""Hostile input: one clear message and no traceback, every limit stated once."""
