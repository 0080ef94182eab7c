"""The paper's reproduction: its section-6 real-data experiments and their tracked snapshots.

- :mod:`.reproduce`: the grids, the protocol and the store of the real-data runs;
- :mod:`.tables`: the paper's printed tables and ours beside them;
- :mod:`.tables_snapshot`: the tracked snapshot of those tables (``tables_snapshot.json``);
- :mod:`.mnist_snapshot`: the tracked ten-arm MNIST race the tour and the app show
  (``mnist_snapshot.json``);
- :mod:`.convergence`: LinTS's convergence on MNIST (``convergence.json``);
- :mod:`.data`: MNIST and Fashion-MNIST, read from where the installers put them;
- the command ``python -m allseason paper``: :mod:`allseason.cli.paper`.
"""
