"""The command line: run, sweep, report, map (python -m allseason ...)."""
