"""Chapter 7's ``device`` parameter: on a GPU, every builder grows the CPU's trees.

These tests need a CUDA GPU. Where torch sees none (this book's CI runs on
CPUs) they are skipped, and pytest prints why. On a GPU machine::

    python -m pytest tests/test_cuda.py

``TREELIB_TEST_DEVICE`` names another device to test (default ``cuda``; for
instance ``mps`` on a Mac, or ``cpu`` to check the tests themselves).

A GPU adds numbers in other orders than the CPU (parallel scans, atomic
additions). Where every sum is exact (integer or dyadic targets and weights,
the data of most tests here) the order does not matter, and every tree must be
the CPU's tree, node for node. With real-valued targets or weights, sums round
differently, and the level-wise and histogram builders' running sums along a
level round relative to the level's sums, not the node's: in a small node deep
down, where every feature separates the same two samples, the features' scores
tie exactly, yet they come out up to about one tie tolerance
(``treelib.split.tie_tolerance``) apart, and the GPU may pick another of the
tied features than the CPU. Such trees split the same samples, so for
real-valued data the test asks for the same partition of the training set
(node sizes, leaf values, predictions), not the same features.
"""

import os
import threading

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression
from test_builder_ties import assert_same_tree, exact_bins, params_for, tied_data
from test_fast_trees import random_setting

import treelib.batched
from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

DEVICE = os.environ.get("TREELIB_TEST_DEVICE", "cuda")


def device_available(name):
    kind = torch.device(name).type
    if kind == "cuda":
        return torch.cuda.is_available()
    if kind == "mps":
        return torch.backends.mps.is_available()
    return kind == "cpu"


pytestmark = pytest.mark.skipif(
    not device_available(DEVICE),
    reason=f"needs a {DEVICE} device: torch {torch.__version__} sees none "
    "(TREELIB_TEST_DEVICE chooses the device)",
)
BUILDERS = ("recursive", "levelwise", "hist")


def both(cls, X, y, w=None, **params):
    """The estimator fitted on the CPU and on DEVICE."""
    cpu = cls(**params).fit(X, y, sample_weight=w)
    gpu = cls(device=DEVICE, **params).fit(X, y, sample_weight=w)
    return cpu, gpu


def assert_same_predictions(cpu, gpu, X):
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    np.testing.assert_array_equal(gpu.apply(X), cpu.apply(X))
    if hasattr(cpu, "predict_proba"):
        np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("seed", range(45))
@pytest.mark.parametrize("builder", BUILDERS)
def test_every_builder_grows_the_cpu_tree(seed, builder):
    X, y, w, params = random_setting(seed)
    regression = params["criterion"] == "squared_error"
    cls = DecisionTreeRegressor if regression else DecisionTreeClassifier
    params.update(tree_method=builder, max_bins=exact_bins(X))
    cpu, gpu = both(cls, X, y, w, **params)
    assert gpu.tree_.to_torch().feature.device.type == torch.device(DEVICE).type
    assert_same_tree(gpu, cpu, builder)
    assert_same_predictions(cpu, gpu, X)


def dyadic(values):
    """Multiples of 1/8: their sums are exact in any order."""
    return None if values is None else np.round(np.asarray(values) * 8) / 8


def leaves(model):
    """The leaves' (samples, weight, value...), sorted: the same whichever child is which."""
    tree = model.tree_
    leaf = tree.children_left == -1
    table = np.column_stack(
        [tree.n_node_samples[leaf], tree.weighted_n_node_samples[leaf], tree.value[leaf, 0]]
    )
    return table[np.lexsort(table.T[::-1])]


def assert_same_partition(a, b, X=None, w=None, message=""):
    """The same leaves, holding the same training samples; features and thresholds may differ.

    Two tied features may send a node's samples to opposite sides, so the
    children may be swapped. ``X`` (rows of positive weight ``w``) are the
    training samples, each in the same leaf of both trees (up to the leaves' names).
    """
    assert a.tree_.node_count == b.tree_.node_count, message
    np.testing.assert_allclose(leaves(a), leaves(b), rtol=1e-9, err_msg=message)
    if X is not None:
        X = X if w is None else X[np.asarray(w) > 0]
        pairs = np.unique(np.column_stack([a.apply(X), b.apply(X)]), axis=0)
        assert len(pairs) == len(np.unique(pairs[:, 0])) == len(np.unique(pairs[:, 1])), message
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9, err_msg=message)


@pytest.mark.parametrize("seed", range(64))
def test_every_builder_breaks_ties_as_on_the_cpu(seed):
    # duplicated columns (exact ties between features) and fractional weights,
    # all multiples of 1/8: every sum is exact, every builder grows the CPU's tree
    X, y, w = tied_data(seed)
    classify = seed % 2 == 0
    y, w = (y if classify else dyadic(y)), dyadic(w)
    cls = DecisionTreeClassifier if classify else DecisionTreeRegressor
    reference = cls(tree_method="recursive", **params_for(seed)).fit(X, y, sample_weight=w)
    for builder in BUILDERS:
        params = dict(params_for(seed), tree_method=builder, max_bins=exact_bins(X))
        gpu = cls(device=DEVICE, **params).fit(X, y, sample_weight=w)
        assert_same_tree(gpu, reference, f"{builder} on {DEVICE}")


@pytest.mark.parametrize("seed", range(64))
def test_real_valued_sums_split_the_same_samples(seed):
    # real-valued targets and weights: sums round, and exactly tied features may
    # swap in small nodes (module docstring); the partition is the CPU's
    X, y, w = tied_data(seed)
    cls = DecisionTreeClassifier if seed % 2 == 0 else DecisionTreeRegressor
    for builder in BUILDERS:
        params = dict(params_for(seed), tree_method=builder, max_bins=exact_bins(X))
        cpu, gpu = both(cls, X, y, w, **params)
        assert_same_partition(gpu, cpu, X, w, f"{builder} on {DEVICE}")


@pytest.mark.parametrize("builder", ["levelwise", "hist"])
def test_continuous_data_above_the_binning_subsample(builder):
    # more rows than the histogram builder bins from (treelib.hist.SUBSAMPLE):
    # its bin edges come from a random subsample, drawn on the CPU either way
    X, y = make_classification(
        n_samples=treelib.hist.SUBSAMPLE + 5000, n_features=8, n_informative=5, random_state=0
    )
    cpu, gpu = both(DecisionTreeClassifier, X, y, tree_method=builder, random_state=0)
    assert_same_tree(gpu, cpu, builder)
    assert_same_predictions(cpu, gpu, X)


@pytest.mark.parametrize("builder", BUILDERS)
def test_categorical_features_max_leaf_nodes_and_pruning(builder):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 5, 600), rng.normal(size=(600, 3)).round(1)])
    y = ((X[:, 0] == 2) ^ (X[:, 1] > 0)).astype(int)
    for params in (
        dict(categorical_features=[0]),
        dict(max_leaf_nodes=12),
        dict(ccp_alpha=0.005),
        dict(min_weight_fraction_leaf=0.01, max_features=2),
    ):
        cpu, gpu = both(DecisionTreeClassifier, X, y, tree_method=builder, random_state=0, **params)
        assert_same_tree(gpu, cpu, f"{builder} {params}")
        assert_same_predictions(cpu, gpu, X)


@pytest.mark.parametrize("builder", ["levelwise", "hist"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_forests_grown_batched_are_the_cpu_forests(monkeypatch, builder, n_jobs):
    # three trees per batch: several batches, shared by n_jobs threads
    monkeypatch.setattr(treelib.batched, "BATCH_ELEMENTS", 3 * 400 * 6)
    monkeypatch.setattr(treelib.batched, "HIST_BATCH_SAMPLES", 3 * 400)
    monkeypatch.setattr(treelib.batched, "GPU_BATCH_SCALE", 1)
    threads, grow = set(), treelib.batched.grow_trees_batched

    def spy(*args, **kwargs):
        threads.add(threading.get_ident())
        return grow(*args, **kwargs)

    monkeypatch.setattr(treelib.batched, "grow_trees_batched", spy)
    X, y = make_classification(400, 6, n_informative=4, n_redundant=0, n_classes=3, random_state=0)
    X = np.round(X, 1)
    params = dict(tree_method=builder, max_features="sqrt", max_bins=64, random_state=0)
    cpu = RandomForestClassifier(9, n_jobs=n_jobs, **params).fit(X, y)
    threads.clear()
    gpu = RandomForestClassifier(9, n_jobs=n_jobs, device=DEVICE, **params).fit(X, y)
    if torch.device(DEVICE).type != "cpu":  # on a GPU, one thread grows every batch
        assert threads == {threading.get_ident()}
    else:
        assert len(threads) == n_jobs
    for a, b in zip(gpu.estimators_, cpu.estimators_):
        assert_same_tree(a, b, builder)
    assert_same_predictions(cpu, gpu, X)
    Xr, yr = make_regression(300, 5, noise=5.0, random_state=0)
    Xr = np.round(Xr, 1)
    cpu, gpu = both(RandomForestRegressor, Xr, dyadic(yr), n_estimators=5, **params)
    for a, b in zip(gpu.estimators_, cpu.estimators_):
        assert_same_tree(a, b, builder)
    np.testing.assert_allclose(gpu.predict(Xr), cpu.predict(Xr), rtol=1e-12)
    cpu, gpu = both(RandomForestRegressor, Xr, yr, n_estimators=5, **params)  # sums round
    for a, b in zip(gpu.estimators_, cpu.estimators_):
        assert_same_partition(a, b, message=builder)


@pytest.mark.parametrize("cls", [GradientBoostingRegressor, GradientBoostingClassifier])
def test_gradient_boosting(cls):
    X, y = make_classification(500, 5, n_informative=3, n_redundant=0, random_state=1)
    regressor = cls is GradientBoostingRegressor
    if regressor:
        y = X[:, 0] + np.sin(X[:, 1]) + 0.1 * y
    params = dict(n_estimators=8, max_depth=3, subsample=0.8, random_state=0)
    cpu, gpu = both(cls, X, y, **params)
    for a, b in zip(gpu.estimators_.ravel(), cpu.estimators_.ravel(), strict=True):
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    predict = "predict" if regressor else "predict_proba"
    np.testing.assert_allclose(getattr(gpu, predict)(X), getattr(cpu, predict)(X), rtol=1e-9)


def test_tensors_on_the_device_as_input():
    X, y = make_classification(300, 4, random_state=0)
    cpu = DecisionTreeClassifier(random_state=0).fit(X, y)
    on_device = torch.tensor(X, device=DEVICE), torch.tensor(y, device=DEVICE)
    gpu = DecisionTreeClassifier(device=DEVICE, random_state=0).fit(*on_device)
    assert_same_tree(gpu, cpu)
    np.testing.assert_array_equal(gpu.predict(on_device[0]), cpu.predict(X))
    assert type(gpu.predict(on_device[0])) is np.ndarray  # what a user touches: numpy


# --- missing values, monotonic constraints, random splits (Chapters 5 and 6) ---------------


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
@pytest.mark.parametrize(
    "params",
    [
        dict(max_depth=6),  # NaN in X (the level-wise search, Chapter 7)
        dict(max_depth=6, tree_method="hist"),  # NaN in a bin of its own
        dict(max_depth=6, tree_method="recursive"),
        dict(max_depth=6, monotonic_cst=[1, -1, 0]),
        dict(max_depth=6, splitter="random", random_state=3),
        dict(max_leaf_nodes=9, monotonic_cst=[0, 1, 0]),
        dict(max_depth=6, monotonic_cst=[1, -1, 0], tree_method="hist"),  # bounds per level
        dict(max_leaf_nodes=9, tree_method="hist"),  # best-first on histograms (Chapter 7)
    ],
    ids=[
        "nan",
        "nan-hist",
        "nan-recursive",
        "monotonic",
        "random",
        "best-first",
        "monotonic-hist",
        "best-first-hist",
    ],  # fmt: skip
)
def test_missing_monotonic_and_random_splits_on_the_device(kind, params):
    """With NaN in X, the device grows the CPU's tree (dyadic data: exact sums)."""
    rng = np.random.default_rng(5)
    X = (rng.integers(0, 64, size=(400, 3)) / 8).astype(np.float32)
    X[rng.random((400, 3)) < 0.15] = np.nan
    if kind == "classifier":
        cls, y = DecisionTreeClassifier, (np.nan_to_num(X[:, 0]) > 3).astype(int)
        y[rng.random(400) < 0.1] ^= 1
    else:
        cls, y = DecisionTreeRegressor, rng.integers(0, 16, 400) / 4
    params = {"random_state": 0, **params}  # (the same feature order: ties abound here)
    cpu = cls(**params).fit(X, y)
    device = cls(**params, device=DEVICE).fit(X, y)
    for field in ("children_left", "feature", "threshold", "missing_go_to_left"):
        np.testing.assert_array_equal(getattr(device.tree_, field), getattr(cpu.tree_, field))
    # the sums are exact, but a division may round once more on the device: on an H200
    # (gpu-v5, benchmarks/results/fast_fit_cuda.log) one leaf value came out 4.4e-16 apart
    np.testing.assert_allclose(device.tree_.value, cpu.tree_.value, rtol=1e-15, atol=0)
    np.testing.assert_allclose(device.predict(X), cpu.predict(X), rtol=1e-15, atol=0)


# --- several outputs, other regression criteria, sparse X (Chapters 2, 3 and 5) -------------


@pytest.mark.parametrize(
    "kind, params",
    [
        ("multi-output classifier", dict(max_depth=6)),
        ("multi-output regressor", dict(max_depth=6)),
        ("regressor", dict(max_depth=5, criterion="absolute_error")),
        ("regressor", dict(max_depth=5, criterion="poisson")),
        ("sparse classifier", dict(max_depth=6, tree_method="hist")),
    ],
    ids=["multi-classifier", "multi-regressor", "absolute_error", "poisson", "sparse-hist"],
)
def test_outputs_criteria_and_sparse_input_on_the_device(kind, params):
    """The device grows the CPU's tree for these fits too (dyadic data: exact sums)."""
    from scipy import sparse

    rng = np.random.default_rng(6)
    X = (rng.integers(0, 64, size=(300, 3)) / 8).astype(np.float32)
    cls = DecisionTreeClassifier if "classifier" in kind else DecisionTreeRegressor
    if kind == "multi-output classifier":
        y = np.column_stack([(X[:, 0] > 3).astype(int), rng.integers(0, 3, 300)])
    elif kind == "multi-output regressor":
        y = np.column_stack([rng.integers(0, 16, 300) / 4, rng.integers(0, 8, 300) / 2])
    elif kind == "sparse classifier":
        X[rng.random(X.shape) < 0.5] = 0.0
        y = (X[:, 1] > 2).astype(int) ^ (rng.random(300) < 0.1)
    else:
        y = rng.integers(0, 16, 300) / 4  # (non-negative: Poisson's counts too)
    X_fit = sparse.csr_matrix(X) if kind.startswith("sparse") else X
    params = {"random_state": 0, **params}
    cpu = cls(**params).fit(X_fit, y)
    device = cls(**params, device=DEVICE).fit(X_fit, y)
    for field in ("children_left", "feature", "threshold"):
        np.testing.assert_array_equal(getattr(device.tree_, field), getattr(cpu.tree_, field))
    np.testing.assert_allclose(device.tree_.value, cpu.tree_.value, rtol=1e-15, atol=0)
    np.testing.assert_allclose(device.predict(X_fit), cpu.predict(X_fit), rtol=1e-15, atol=0)
