"""A user's own data: a logged bandit's file read as it comes, evaluated offline.

- :mod:`.reader`: the CSV's bytes to columns (limits, only the columns used, the field count);
- :mod:`.cells`: cells to numbers, dates (UTC) and arm labels (natural order);
- :mod:`.problems`: every problem of a file, reported at once, naming row and column;
- :mod:`.logfile`: the log's columns, by their usual names, checked and sorted by time;
- :mod:`.offline`: the log, the replays and the estimators;
- :mod:`.obd`: the Open Bandit Dataset's six sample logs (``make data``);
- :mod:`.examples`: example files made from a seed.

The per-arm reward table, which becomes a world the policies race on, is a world like the
others: :mod:`allseason.logs.table`.
"""
