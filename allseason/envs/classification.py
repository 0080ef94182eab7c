"""Classification data sets turned into seasonal bandits (the paper's section 6).

At step t the learner sees image t (its PCA context c_t, shape (p,)) and K arms, the
outer-product actions x_{t,k} = e_k (x) c_t (d = K p, handed over as
:class:`~allseason.envs.arms.BlockArms` so the kernels keep K blocks of p x p). The
stationary state s_t (from a :class:`~allseason.envs.patterns.Pattern`) picks a *task*: a map
from image labels to the correct arm. Reward is exactly 1 for the correct arm and 0 otherwise
(``expected`` in {0, 1}, ``noise`` = 0), so regret is exact.

Two-arm experiment: the states are three binary tasks; arm 0 is the first-named class.

MNIST (digits 0..9):

- parity: (even, odd) -- even = {0, 2, 4, 6, 8};
- divisibility by three: (divisible by 3, not) -- divisible = {0, 3, 6, 9} (0 = 3 x 0);
- primality: (not prime, prime) -- prime = {2, 3, 5, 7}; 0 and 1 are not prime.

Fashion-MNIST (0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt,
7 Sneaker, 8 Bag, 9 Ankle boot). The paper names the tasks but not the classes; our choice:

- body: (upper-body, lower-body) -- upper = {T-shirt/top, Pullover, Dress, Coat, Shirt, Bag},
  lower = {Trouser, Sandal, Sneaker, Ankle boot}. Rule: where it is worn or carried. A dress
  hangs from the shoulders like the tops and coats, so it is upper-body; a bag is carried on
  the shoulder or in the hand, so upper-body too; footwear is worn below, with trousers.
- season: (winter, summer) -- winter = {Trouser, Pullover, Coat, Ankle boot}, summer =
  {T-shirt/top, Dress, Sandal, Shirt, Sneaker, Bag}. Rule: winter is the warm, covering
  garments (long legs, long sleeves worn over other clothes, boots); summer is everything
  light -- and the bag, which has no season, goes with the light items so that "summer" reads
  as "not winter wear". The shirt class (mostly light shirts and blouses) is summer.
- footwear: (shoes, clothes) -- shoes = {Sandal, Sneaker, Ankle boot}, clothes = the other
  seven; the bag is not a shoe and goes with the apparel.

The partial overlap the paper describes holds: e.g. Pullover and Coat are arm 0 under both
body and season, Sandal and Sneaker arm 1 under both; the rest change arm.

Arm-shift (ten-arm) experiment: every state is the ten-class task with the arms relabelled by
a permutation: in state s the correct arm for label y is ``perm_s[y]``. State 0 is the
identity; the others are drawn from ``np.random.default_rng(PERMUTATION_SEED)``, rejecting any
permutation that agrees with an earlier one on some label, so every label's correct arm moves
at every change point (the paper: "the reward parameter changes completely").

Protocol fixed by :func:`paper_setup` (where the paper is silent we chose, and keep it fixed):

- the first ``n`` = 30,000 training images, in the data set's order (no shuffling);
- centred PCA fitted on the first 30,000 images, 44 components for MNIST and 43 for
  Fashion-MNIST (80.6% and 85.1% of the variance; the paper says 80% and 85%);
- each context is then scaled to unit Euclidean norm. Why: it makes the scale of the pixels
  irrelevant, puts every action in the unit ball as in the paper's synthetic experiment and
  the linear-bandit analyses, and so gives the fixed prior lambda = 1 the same meaning on both
  data sets (with raw PCA scores, whose norms are in the thousands, the prior would be
  negligible and Thompson sampling nearly greedy). No intercept is added: p stays 44 / 43;
- the pattern is ``preset(name, n, 3)``: three distinct states under regular, realistic and
  extreme (two-arm: the three tasks; ten-arm: three permutations, the identity first); at
  n = 30,000 every period is at least 600 steps (regular 6 x 5,000, realistic >= 1,071,
  extreme 50 x 600);
- batches of 10 (:data:`BATCH_SIZE`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .arms import BlockArms
from .linear import Round
from .patterns import Pattern, preset

__all__ = [
    "Task",
    "TWO_ARM_TASKS",
    "FASHION_CLASSES",
    "MNIST_CLASSES",
    "permutation_tasks",
    "ClassificationEnv",
    "PaperSetup",
    "paper_setup",
    "DATASETS",
    "EXPERIMENTS",
    "N_COMPONENTS",
    "HORIZON",
    "BATCH_SIZE",
    "N_STATES",
    "PERMUTATION_SEED",
    "TABLE_KEYS",
    "normalise_rows",
]

MNIST_CLASSES = tuple(str(i) for i in range(10))
FASHION_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
DATASETS = ("mnist", "fmnist")
EXPERIMENTS = ("2arm", "10arm")
N_COMPONENTS = {"mnist": 44, "fmnist": 43}
HORIZON = 30_000
BATCH_SIZE = 10
N_STATES = 3
PERMUTATION_SEED = 0
# the paper's four tables -> (dataset, experiment), see allseason.paper.tables
TABLE_KEYS = {
    "mnist-2arm": ("mnist", "2arm"),
    "fmnist-2arm": ("fmnist", "2arm"),
    "mnist-10arm": ("mnist", "10arm"),
    "fmnist-10arm": ("fmnist", "10arm"),
}


@dataclass(frozen=True)
class Task:
    """A stationary state: ``arm_of_label[y]`` is the correct arm for an image of label y."""

    name: str
    arm_names: tuple[str, ...]
    arm_of_label: tuple[int, ...]

    def __post_init__(self):
        arms = tuple(int(a) for a in self.arm_of_label)
        object.__setattr__(self, "arm_of_label", arms)
        object.__setattr__(self, "arm_names", tuple(self.arm_names))
        if not arms or min(arms) < 0 or max(arms) >= len(self.arm_names):
            raise ValueError(f"{self.name}: arm_of_label must be in 0..{len(self.arm_names) - 1}")

    @property
    def n_arms(self) -> int:
        """The number of arms."""
        return len(self.arm_names)

    @property
    def n_labels(self) -> int:
        """The number of labels."""
        return len(self.arm_of_label)

    def correct_arm(self, labels) -> np.ndarray:
        """The correct arm for each label, same shape as ``labels``."""
        return np.asarray(self.arm_of_label)[np.asarray(labels)]

    def classes(self, arm: int, class_names=None) -> tuple:
        """The labels (or their names) whose correct arm is ``arm``."""
        labels = [y for y, a in enumerate(self.arm_of_label) if a == arm]
        return tuple(labels if class_names is None else (class_names[y] for y in labels))


def _binary(name, arm_names, first_arm_labels, n_labels=10):
    return Task(name, arm_names, tuple(0 if y in first_arm_labels else 1 for y in range(n_labels)))


TWO_ARM_TASKS: dict[str, tuple[Task, ...]] = {
    "mnist": (
        _binary("parity", ("even", "odd"), {0, 2, 4, 6, 8}),
        _binary("divisibility by 3", ("divisible by 3", "not divisible by 3"), {0, 3, 6, 9}),
        _binary("primality", ("not prime", "prime"), {0, 1, 4, 6, 8, 9}),
    ),
    "fmnist": (
        _binary("body", ("upper-body", "lower-body"), {0, 2, 3, 4, 6, 8}),
        _binary("season", ("winter", "summer"), {1, 2, 4, 9}),
        _binary("footwear", ("shoes", "clothes"), {5, 7, 9}),
    ),
}


def _permutations(n_states: int, n_labels: int, seed: int) -> list[np.ndarray]:
    """The identity, then permutations that differ from every earlier one at every label."""
    rng = np.random.default_rng(seed)
    perms = [np.arange(n_labels)]
    while len(perms) < n_states:
        p = rng.permutation(n_labels)
        if all(np.all(p != q) for q in perms):
            perms.append(p)
    return perms


def permutation_tasks(
    dataset: str = "mnist", n_states: int = N_STATES, seed: int = PERMUTATION_SEED
) -> tuple[Task, ...]:
    """The arm-shift states: state s maps label y to arm ``perm_s[y]`` (state 0: identity)."""
    names = _class_names(dataset)
    if not 1 <= n_states <= len(names):  # pairwise derangements exist only up to n_labels
        raise ValueError(f"n_states: must be in 1..{len(names)}, got {n_states}")
    arm_names = tuple(f"arm {k}" for k in range(len(names)))
    return tuple(
        Task("identity" if s == 0 else f"permutation {s}", arm_names, tuple(p))
        for s, p in enumerate(_permutations(n_states, len(names), seed))
    )


def _class_names(dataset: str) -> tuple[str, ...]:
    if dataset == "mnist":
        return MNIST_CLASSES
    if dataset == "fmnist":
        return FASHION_CLASSES
    raise ValueError(f"dataset: unknown {dataset!r}; known: {', '.join(DATASETS)}")


class ClassificationEnv:
    """A labelled data set played as a seasonal bandit.

    Parameters
    ----------
    X_reduced : array, shape (N, p)
        The contexts (e.g. PCA scores), used as given.
    y : array of int, shape (N,)
        Labels.
    tasks : sequence of Task
        One per state; all with the same number of arms.
    pattern : Pattern
        With ``pattern.horizon <= N`` and ``n_states <= len(tasks)``.
    rng : numpy.random.Generator or seed, optional
        Only used when ``shuffle=True`` (the order in which the first ``horizon`` images are
        shown); by default they are shown in the data set's order, as in the paper.
    shuffle : bool, default False
        Show the images in a random order.

    Notes
    -----
    ``next_round(n)`` returns a :class:`Round`: arms = BlockArms(contexts, K) (n, K, K p),
    expected (n, K) in {0, 1} with one 1 per row, noise zeros (n,), state (n,).
    """

    sigma2 = 0.0  # rewards are exact

    def __init__(self, X_reduced, y, tasks, pattern: Pattern, rng=None, *, shuffle=False):
        X = np.asarray(X_reduced, dtype=float)
        y = np.asarray(y)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(
                f"X_reduced, y: shapes (N, p) and (N,) expected, got {X.shape} and {y.shape}"
            )
        self.tasks = tuple(tasks)
        if not self.tasks:
            raise ValueError("tasks: at least one task is needed")
        K = self.tasks[0].n_arms
        if any(t.n_arms != K for t in self.tasks):
            raise ValueError("tasks: every task must have the same number of arms")
        n_labels = max(t.n_labels for t in self.tasks)
        if any(t.n_labels != n_labels for t in self.tasks):
            raise ValueError("tasks: every task must cover the same labels")
        if y.size and (y.min() < 0 or y.max() >= n_labels):
            raise ValueError(f"y: labels must be in 0..{n_labels - 1}")
        if pattern.n_states > len(self.tasks):
            raise ValueError(
                f"pattern: uses {pattern.n_states} states but only "
                f"{len(self.tasks)} tasks were given"
            )
        T = pattern.horizon
        if T > X.shape[0]:
            raise ValueError(f"pattern: horizon {T} exceeds the {X.shape[0]} observations")
        order = np.arange(T)
        if shuffle:
            order = np.random.default_rng(rng).permutation(T)
        self.pattern, self.rng, self.shuffle = pattern, rng, shuffle
        self.n_arms, self.p = K, X.shape[1]
        self.d = K * self.p
        self.contexts = X[order]
        self.labels = y[order].astype(np.int64)
        self.states = pattern.states()
        table = np.array([t.arm_of_label for t in self.tasks], dtype=np.int64)  # (S, labels)
        self.correct = table[self.states, self.labels]  # (T,) the correct arm at each step
        self.t = 0

    @property
    def horizon(self) -> int:
        """The number of steps."""
        return len(self.states)

    def next_round(self, n: int) -> Round:
        """The next n steps (n is cut at the horizon)."""
        n = min(int(n), self.horizon - self.t)
        sl = slice(self.t, self.t + n)
        expected = np.zeros((n, self.n_arms))
        expected[np.arange(n), self.correct[sl]] = 1.0
        self.t += n
        return Round(
            BlockArms(self.contexts[sl], self.n_arms), expected, np.zeros(n), self.states[sl].copy()
        )


def normalise_rows(Z: np.ndarray) -> np.ndarray:
    """Each row scaled to unit Euclidean norm (a zero row stays zero)."""
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z / np.where(norms > 0, norms, 1.0)


@lru_cache(maxsize=4)
def _reduced(dataset: str, n_rows: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(unit-norm PCA contexts of the first n_rows images, labels, explained variance), cached
    per process; read-only."""
    from . import datasets as data

    X, y = data.load(dataset, n_rows)
    Z, ratio = data.pca(X, N_COMPONENTS[dataset], fit_rows=data.PCA_ROWS)
    Z = normalise_rows(Z)
    Z.setflags(write=False)
    y.setflags(write=False)
    return Z, y, float(ratio.sum())


@dataclass(frozen=True)
class PaperSetup:
    """The pieces of one of the paper's real-data problems (see the module docstring).

    contexts (n, p) unit-norm PCA scores; labels (n,); tasks (one per state); pattern;
    explained_variance (of the p components, fitted on the first 30,000 images)."""

    dataset: str
    experiment: str
    pattern_name: str
    contexts: np.ndarray
    labels: np.ndarray
    tasks: tuple[Task, ...]
    pattern: Pattern
    explained_variance: float
    batch_size: int = BATCH_SIZE

    @property
    def n_arms(self) -> int:
        """The number of arms."""
        return self.tasks[0].n_arms

    @property
    def p(self) -> int:
        """The dimension of a context."""
        return self.contexts.shape[1]

    @property
    def d(self) -> int:
        """The dimension of an action (arms x context)."""
        return self.n_arms * self.p

    @property
    def horizon(self) -> int:
        """The number of steps."""
        return self.pattern.horizon

    def env(self, rng=None) -> ClassificationEnv:
        """A fresh environment (the data are shown in order; ``rng`` is unused then)."""
        return ClassificationEnv(self.contexts, self.labels, self.tasks, self.pattern, rng)

    def batch_ends(self) -> np.ndarray:
        """Indices of each batch's last step (the last batch may be shorter)."""
        ends = np.arange(self.batch_size - 1, self.horizon, self.batch_size)
        if not len(ends) or ends[-1] != self.horizon - 1:
            ends = np.append(ends, self.horizon - 1)
        return ends


def paper_setup(
    dataset: str,
    experiment: str,
    pattern_name: str,
    n: int = HORIZON,
    pattern_horizon: int | None = None,
) -> PaperSetup:
    """The protocol of section 6, fixed: ``dataset`` "mnist" | "fmnist", ``experiment``
    "2arm" | "10arm", ``pattern_name`` "regular" | "realistic" | "extreme", the first ``n``
    images (30,000 in the paper; fewer for quick runs: the pattern is scaled to n, the PCA is
    always fitted on the first 30,000 images).

    ``pattern_horizon`` (>= n): play the first n steps of the pattern scaled to that horizon
    instead (the paper's validation set: the first 3,000 steps of the 30,000-step pattern,
    on the first 3,000 images). Raises :class:`allseason.envs.datasets.DataUnavailable` if the data
    set is not installed."""
    _class_names(dataset)
    if experiment not in EXPERIMENTS:
        raise ValueError(f"experiment: unknown {experiment!r}; known: {', '.join(EXPERIMENTS)}")
    if pattern_name not in ("regular", "realistic", "extreme"):
        raise ValueError(f"pattern: unknown {pattern_name!r}; known: regular, realistic, extreme")
    if isinstance(n, bool) or int(n) != n or not 50 <= int(n) <= 60_000:
        raise ValueError(f"n: must be an integer in 50..60000, got {n!r}")
    n = int(n)
    if pattern_horizon is not None and (
        isinstance(pattern_horizon, bool)
        or int(pattern_horizon) != pattern_horizon
        or not n <= int(pattern_horizon) <= 60_000
    ):
        raise ValueError(
            f"pattern_horizon: must be an integer in n..60000, got {pattern_horizon!r}"
        )
    Z, y, ratio = _reduced(dataset, max(n, HORIZON))
    tasks = TWO_ARM_TASKS[dataset] if experiment == "2arm" else permutation_tasks(dataset)
    pattern = preset(pattern_name, n, N_STATES)
    if pattern_horizon is not None and int(pattern_horizon) != n:
        pattern = prefix(preset(pattern_name, int(pattern_horizon), N_STATES), n)
    return PaperSetup(dataset, experiment, pattern_name, Z[:n], y[:n], tasks, pattern, ratio)


def prefix(pattern: Pattern, n: int) -> Pattern:
    """The first n steps of ``pattern`` (its segments cut at n)."""
    segs, left = [], int(n)
    for s, length in pattern.segments:
        if left <= 0:
            break
        segs.append((s, min(length, left)))
        left -= length
    return Pattern(tuple(segs))
