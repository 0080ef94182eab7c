"""Races and worlds: the runner, live runs, scenarios and their checks, defaults, intervals."""
