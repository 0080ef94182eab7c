"""A folder put on ``sys.path`` by the local process pool (:func:`allseason.sweeps.pool._pool`)
so that its forkserver imports :mod:`_allseason_forkserver_guard` first, before the package
(whose import takes seconds): the forkserver then dies with its driver at once."""
