"""A forest grown batched (all trees in one level loop) equals the forest grown tree by tree."""

import threading

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression

import treelib.batched
import treelib.forest
import treelib.hist
from treelib import RandomForestClassifier, RandomForestRegressor

FIELDS = (
    "children_left",
    "children_right",
    "feature",
    "threshold",
    "value",
    "impurity",
    "n_node_samples",
    "weighted_n_node_samples",
)


def fit_both(monkeypatch, forest, X, y, sample_weight=None):
    """The forest fitted batched, and a clone fitted one tree at a time."""
    calls = []
    batched_fit = treelib.batched.fit_trees_batched

    def spy(*args, **kwargs):
        calls.append(batched_fit(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(treelib.forest, "fit_trees_batched", spy)
    batched = forest.fit(X, y, sample_weight=sample_weight)
    monkeypatch.setattr(treelib.forest, "fit_trees_batched", lambda *args, **kwargs: False)
    alone = type(forest)(**forest.get_params()).fit(X, y, sample_weight=sample_weight)
    return batched, alone, calls


def assert_same_forest(batched, alone):
    assert len(batched.estimators_) == len(alone.estimators_)
    for a, b in zip(batched.estimators_, alone.estimators_):
        for field in FIELDS:
            np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field), field)
        assert a.tree_.n_features == b.tree_.n_features
        assert sorted(vars(a)) == sorted(vars(b))
        assert a.max_features_ == b.max_features_ and a.n_outputs_ == b.n_outputs_


def data(kind, n=300, p=6, rounded=True):
    if kind == "classification":
        X, y = make_classification(
            n, p, n_informative=4, n_redundant=0, n_classes=3, random_state=0
        )
    else:
        X, y = make_regression(n, p, noise=5.0, random_state=0)
    if rounded:  # many ties between values: the tie rules matter
        X = np.round(X, 1)
    return X, y


@pytest.mark.parametrize("tree_method", ["levelwise", "hist"])
@pytest.mark.parametrize("max_features", [None, "sqrt", 2])
@pytest.mark.parametrize("bootstrap", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_classifier_batched_equals_tree_by_tree(
    monkeypatch, tree_method, max_features, bootstrap, weighted
):
    X, y = data("classification")
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y)) if weighted else None
    forest = RandomForestClassifier(
        7, max_features=max_features, bootstrap=bootstrap, tree_method=tree_method,
        max_bins=16, random_state=0,
    )  # fmt: skip
    batched, alone, calls = fit_both(monkeypatch, forest, X, y, w)
    assert calls == [True]
    assert_same_forest(batched, alone)
    np.testing.assert_array_equal(batched.predict_proba(X), alone.predict_proba(X))


@pytest.mark.parametrize("tree_method", ["levelwise", "hist"])
@pytest.mark.parametrize("max_features", [None, 1.0 / 3])
@pytest.mark.parametrize("bootstrap", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_regressor_batched_equals_tree_by_tree(
    monkeypatch, tree_method, max_features, bootstrap, weighted
):
    X, y = data("regression")
    w = np.random.default_rng(1).integers(0, 3, len(y)).astype(float) if weighted else None
    forest = RandomForestRegressor(
        6, max_features=max_features, bootstrap=bootstrap, tree_method=tree_method,
        max_bins=32, min_samples_leaf=2, random_state=3,
    )  # fmt: skip
    batched, alone, calls = fit_both(monkeypatch, forest, X, y, w)
    assert calls == [True]
    assert_same_forest(batched, alone)


@pytest.mark.parametrize("tree_method", ["levelwise", "hist"])
def test_many_batches_and_stopping_rules(monkeypatch, tree_method):
    # three trees per batch, depth and impurity-decrease limits, unrounded values
    # (the exact search counts (tree, sample, feature) triples, the histograms (tree, sample) pairs)
    monkeypatch.setattr(treelib.batched, "BATCH_ELEMENTS", 3 * 200 * 5)
    monkeypatch.setattr(treelib.batched, "HIST_BATCH_SAMPLES", 3 * 200)
    X, y = data("classification", n=200, p=5, rounded=False)
    forest = RandomForestClassifier(
        8, max_depth=5, min_impurity_decrease=0.002, criterion="entropy",
        tree_method=tree_method, random_state=1,
    )  # fmt: skip
    batched, alone, calls = fit_both(monkeypatch, forest, X, y)
    assert calls == [True]
    assert_same_forest(batched, alone)


def test_pure_and_tiny_bootstrap_samples(monkeypatch):
    # some bootstrap samples hold one class only: their root is a leaf while
    # other trees of the batch grow on
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 0, 0, 0, 1])
    forest = RandomForestClassifier(20, random_state=0)
    batched, alone, calls = fit_both(monkeypatch, forest, X, y)
    assert calls == [True]
    depths = [tree.get_depth() for tree in batched.estimators_]
    assert min(depths) == 0 and max(depths) >= 1
    assert_same_forest(batched, alone)


def test_uncovered_settings_grow_tree_by_tree(monkeypatch):
    X, y = data("classification", n=100)
    forest = RandomForestClassifier(3, min_weight_fraction_leaf=0.1, random_state=0)
    batched, alone, calls = fit_both(monkeypatch, forest, X, y)
    assert calls == [False]
    assert_same_forest(batched, alone)
    forest = RandomForestClassifier(3, tree_method="recursive", random_state=0)
    assert fit_both(monkeypatch, forest, X, y)[2] == [False]


def test_bad_parameters_still_raise():
    with pytest.raises(ValueError, match="criterion"):
        RandomForestClassifier(2, criterion="mse").fit([[0.0], [1.0]], [0, 1])
    with pytest.raises(ValueError, match="max_bins"):
        RandomForestClassifier(2, tree_method="hist", max_bins=1).fit([[0.0], [1.0]], [0, 1])


def test_trees_per_batch_bounds_memory():
    assert treelib.batched.trees_per_batch(100_000, 10) == treelib.batched.BATCH_ELEMENTS // 10**6
    assert treelib.batched.trees_per_batch(10**9, 10) == 1
    # the histogram search keeps one byte per value: a batch counts (tree, sample) pairs
    hist = treelib.batched.trees_per_batch(100_000, 10, histogram=True)
    assert hist == treelib.batched.HIST_BATCH_SAMPLES // 100_000 > 1
    # on a GPU (no GPU needed to ask): GPU_BATCH_SCALE times larger batches
    scale, batched = treelib.batched.GPU_BATCH_SCALE, treelib.batched
    gpu_hist = batched.trees_per_batch(100_000, 10, True, "cuda")
    assert gpu_hist == scale * batched.HIST_BATCH_SAMPLES // 100_000 >= 100
    gpu_exact = batched.trees_per_batch(100_000, 10, device="cuda:0")
    assert gpu_exact == scale * batched.BATCH_ELEMENTS // 10**6 >= 100


@pytest.mark.parametrize("tree_method", ["levelwise", "hist"])
def test_n_jobs_grows_batches_in_threads_and_the_same_forest(monkeypatch, tree_method):
    threads, barrier = set(), []
    grow = treelib.batched.grow_trees_batched

    def spy(*args, **kwargs):
        threads.add(threading.get_ident())
        if barrier:  # both batches must be in flight at once: two threads side by side
            barrier[0].wait()
        return grow(*args, **kwargs)

    monkeypatch.setattr(treelib.batched, "grow_trees_batched", spy)
    X, y = data("classification", n=200, p=5)
    params = dict(max_features=2, tree_method=tree_method, random_state=3)
    one = RandomForestClassifier(6, n_jobs=1, **params).fit(X, y)
    assert threads == {threading.get_ident()}
    threads.clear()
    barrier.append(threading.Barrier(2, timeout=30))
    two = RandomForestClassifier(6, n_jobs=2, **params).fit(X, y)
    assert len(threads) == 2 and threading.get_ident() not in threads
    assert_same_forest(two, one)
    np.testing.assert_array_equal(two.predict_proba(X), one.predict_proba(X))


def test_histograms_cover_only_the_drawn_features(monkeypatch):
    # integer features: deep nodes often draw only constant features and must fall
    # back on the first varying one of their order, as the exact search does
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(400, 8)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, 400) > 2).astype(int)
    slots, fallback = set(), []
    search_nodes = treelib.hist.HistogramSearch.search_nodes

    def spy(self, nodes, features, ranks, *args, first_only=False, **kwargs):
        if first_only:
            fallback.append(len(nodes))
        else:
            slots.add(None if features is None else features.shape[1])
        return search_nodes(self, nodes, features, ranks, *args, first_only=first_only, **kwargs)

    monkeypatch.setattr(treelib.hist.HistogramSearch, "search_nodes", spy)
    params = dict(max_features=2, random_state=0)
    hist = RandomForestClassifier(5, tree_method="hist", **params).fit(X, y)
    exact = RandomForestClassifier(5, tree_method="levelwise", **params).fit(X, y)
    assert slots == {2} and sum(fallback) > 0
    assert_same_forest(hist, exact)


def test_torch_input_and_predictions_match_numpy(monkeypatch):
    X, y = data("classification", n=150)
    forest = RandomForestClassifier(4, max_features="sqrt", random_state=2)
    a = forest.fit(torch.tensor(X), torch.tensor(y)).predict_proba(X)
    b = RandomForestClassifier(4, max_features="sqrt", random_state=2).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(a, b)
