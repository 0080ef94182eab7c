"""A user's own data: a logged bandit's file read as it comes, evaluated offline.

- :mod:`.reader`: the CSV as it comes (limits, columns, the problems found);
- :mod:`.offline`: the log, the replays and the estimators;
- :mod:`.examples`: example files made from a seed.

The per-arm reward table, which becomes a world the policies race on, is a world like the
others: :mod:`allseason.logs.table`.
"""
