"""The exact level-wise search's memory savings change no number (issue 15)."""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression

import treelib.hist
import treelib.kernels
import treelib.levelwise
from treelib import DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier
from treelib.criteria import target_stats

FIELDS = ("children_left", "children_right", "feature", "threshold", "value", "impurity")


def classification_search(weights):
    X, y = make_classification(n_samples=300, n_features=4, n_classes=3, n_informative=3,
                               n_redundant=0, random_state=0)  # fmt: skip
    X = torch.as_tensor(np.round(X, 1), dtype=torch.float32)
    stats = target_stats(torch.as_tensor(y), torch.as_tensor(weights), "gini", 3)
    return X, stats, treelib.levelwise.ExactSearch(X, stats)


@pytest.mark.parametrize(
    "kind, stored", [("unit", None), ("counts", torch.float32), ("uniform", torch.float64)]
)
def test_one_hot_statistics_are_kept_as_labels(kind, stored):
    rng = np.random.default_rng(0)
    weights = {"unit": np.ones(300), "counts": rng.integers(0, 4, 300) * 1.0,
               "uniform": rng.uniform(0, 2, 300)}[kind]  # fmt: skip
    X, stats, search = classification_search(weights)
    assert search.order.dtype == torch.int32
    assert search.sorted_stats.labels.dtype == torch.int8
    assert search.sorted_stats.labels.shape == (4, 300)  # (p, n): no (n_stats, p, n) array
    weights_held = search.sorted_stats.weights
    assert (weights_held is None) if stored is None else (weights_held.dtype == stored)
    # the statistics it rebuilds are exactly the sorted one-hot weights, per feature
    order = np.argsort(X.numpy(), axis=0, kind="stable").T  # (p, n)
    dense = stats.numpy()[:, order]  # (n_stats, p, n)
    rebuilt = search.sorted_stats[:, :, :].numpy()
    np.testing.assert_array_equal(rebuilt, dense)
    assert not np.signbit(rebuilt).any()


def fit_all(X, y, w):
    return [
        DecisionTreeClassifier(tree_method="levelwise", random_state=0).fit(X, y, sample_weight=w),
        DecisionTreeClassifier(tree_method="levelwise", max_features=2, random_state=0).fit(X, y),
        DecisionTreeRegressor(tree_method="levelwise", random_state=0).fit(X, y * 1.5 - 1),
        *RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y).estimators_,
    ]


def data_with_ties(seed):
    """400 rows rounded to one decimal (ties), labels and integer weights (some zero)."""
    X, y = make_classification(n_samples=400, n_features=5, n_informative=3, random_state=seed)
    return np.round(X, 1), y, np.random.default_rng(seed).integers(0, 4, 400).astype(float)


def assert_same_trees(models, others):
    assert len(models) == len(others)
    for a, b in zip(models, others):
        for field in FIELDS:
            np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field))


def test_row_pieces_grow_the_same_trees(monkeypatch):
    """Rows scored a few positions at a time (running sums carried over) round alike."""
    X, y, w = data_with_ties(1)
    whole = fit_all(X, y, w)
    monkeypatch.setattr(treelib.levelwise, "BLOCK", 7)
    assert_same_trees(whole, fit_all(X, y, w))


def test_regression_statistics_stay_dense():
    X, y = make_regression(n_samples=100, n_features=3, random_state=0)
    stats = target_stats(torch.as_tensor(y), torch.ones(100), "squared_error")
    search = treelib.levelwise.ExactSearch(torch.as_tensor(X, dtype=torch.float32), stats)
    assert torch.is_tensor(search.sorted_stats) and search.sorted_stats.shape == (3, 3, 100)


@pytest.mark.parametrize("piece", [1, 2, 3, 8])
def test_regroup_positions_by_hand_in_pieces(piece):
    """Two parents: A's samples 0-4 go to groups 0 (left) and 1 (right), sample 3 to a
    leaf; B's samples 5-7 to groups 2 (left) and 3 (right). Sorted stably by group:
    0 -> 0, 2 -> 1, 1 -> 2, 4 -> 3, 5 -> 4, 7 -> 5, 6 -> 6; the dropped sample 3 -> 7."""
    group = torch.tensor([0, 1, 0, -1, 1, 2, 3, 2])
    right = torch.tensor([False, True, False, True])
    sizes = torch.bincount(group + 1, minlength=5)[1:]  # (the dropped sample: slot 0)
    assert sizes.tolist() == [2, 2, 2, 1]
    code, base = treelib.levelwise.regroup_codes(group, sizes, right)
    positions, before = [], None
    for a in range(0, 8, piece):
        part, before = treelib.levelwise.regroup_positions(
            code[a : a + piece], base[a : a + piece], 7, before
        )
        positions += part.tolist()
    assert positions == [0, 2, 1, 7, 3, 4, 6, 5]


def fit_every_builder(X, y, w):
    models = []
    for method in ("levelwise", "hist"):
        models += [
            DecisionTreeClassifier(tree_method=method, random_state=0).fit(X, y, sample_weight=w),
            DecisionTreeClassifier(tree_method=method, max_features=2, random_state=0).fit(X, y),
            DecisionTreeRegressor(tree_method=method, random_state=0).fit(X, y * 1.5 - 1),
            *RandomForestClassifier(n_estimators=3, tree_method=method, random_state=0)
            .fit(X, y)
            .estimators_,
        ]
    return models


@pytest.mark.parametrize("piece", [7, 64])
def test_level_loop_in_pieces_grows_the_same_trees(monkeypatch, piece):
    """The level loop's sample-long steps (totals, routing to children, the exact search's
    regrouping) done seven (or 64) samples at a time grow the trees they grow in one
    piece. (The exact search regroups as many feature rows at once as fit in a piece: one
    row in pieces while the active samples are many, several rows once they are few.)"""
    X, y, w = data_with_ties(2)
    whole = fit_every_builder(X, y, w)
    monkeypatch.setattr(treelib.levelwise, "PIECE", piece)  # (the exact search's rows at once)
    monkeypatch.setattr(treelib.kernels, "PIECE", piece)  # (pieces(): the level loop's steps)
    assert_same_trees(whole, fit_every_builder(X, y, w))


@pytest.mark.parametrize(
    "limits", [{"MAX_SCAN": 1}, {"MAX_SCAN": 60}, {"MAX_CELLS": 2000}, {"CHUNK": 50, "MAX_SCAN": 3}]
)
def test_histogram_batches_and_scans_in_parts_grow_the_same_trees(monkeypatch, limits):
    """Histograms of a few nodes per batch (each batch's samples numbered from its first
    node), counted a few samples at a time, and a batch's non-empty cells scanned a few
    nodes at a time (at least one node per part) find the splits of one batch."""
    X, y, w = data_with_ties(3)
    whole = fit_every_builder(X, y, w)[4:]  # the histogram builder's
    for name, value in limits.items():
        monkeypatch.setattr(treelib.hist, name, value)
    assert_same_trees(whole, fit_every_builder(X, y, w)[4:])


def rows_through_each_node(tree, X):
    """How many rows of ``X`` pass each node, following the thresholds."""
    return np.asarray(tree.decision_path(X).sum(0)).ravel()


@pytest.mark.parametrize("model", ["classifier", "regressor", "forest"])
def test_histogram_builder_sends_samples_by_bin_as_by_value(monkeypatch, model):
    """The histogram builder sends samples to the children by their bin (``split_values``),
    not by their value: every node's sample count must still be the number of training
    rows (of positive weight) that the thresholds send through it. With 8 bins for
    continuous values (edges from a 500-row sample) most splits fall between bins
    holding many values, where a wrong bin would send rows to the wrong side. (Depth 9:
    a child holding all of its parent's samples would otherwise split forever.)"""
    monkeypatch.setattr(treelib.hist, "SUBSAMPLE", 500)
    X, y = make_classification(n_samples=1500, n_features=4, n_informative=3,
                               n_redundant=0, random_state=4)  # fmt: skip
    w = np.random.default_rng(4).integers(0, 3, len(y)).astype(float)  # a third: weight 0
    kept = X[w > 0]
    if model == "forest":  # bootstrap=False: each tree's samples are the rows of weight > 0
        forest = RandomForestClassifier(n_estimators=3, tree_method="hist", max_bins=8,
                                        max_depth=9, bootstrap=False, max_features=2,
                                        random_state=0)  # fmt: skip
        trees = forest.fit(X, y, sample_weight=w).estimators_
    else:
        Tree = DecisionTreeClassifier if model == "classifier" else DecisionTreeRegressor
        tree = Tree(tree_method="hist", max_bins=8, max_depth=9, random_state=0)
        trees = [tree.fit(X, y * 1.0, w)]
    for tree in trees:
        assert tree.tree_.node_count > 50
        counts = rows_through_each_node(tree, kept)
        np.testing.assert_array_equal(counts, tree.tree_.n_node_samples)


def test_lone_histogram_tree_frees_its_copy_of_X(monkeypatch):
    """``fit`` with the histogram builder keeps no float32 copy of ``X`` while growing:
    after binning, the tree grows from the bin codes alone (the memory of issue 15)."""
    import weakref

    import treelib.tree

    seen = {}
    bin_columns = treelib.tree.bin_columns

    def watch_binning(X, max_bins, categorical=()):
        seen["X"] = weakref.ref(X)
        return bin_columns(X, max_bins, categorical)

    def check_growth(*args, **kwargs):
        seen["alive while growing"] = seen["X"]() is not None
        return grow_tree_levelwise(*args, **kwargs)

    grow_tree_levelwise = treelib.tree.grow_tree_levelwise
    monkeypatch.setattr(treelib.tree, "bin_columns", watch_binning)
    monkeypatch.setattr(treelib.tree, "grow_tree_levelwise", check_growth)
    X, y, w = data_with_ties(5)
    w = w + 1  # (all positive: fit bins the validated X itself, not a copy of some rows)
    tree = DecisionTreeClassifier(tree_method="hist", random_state=0).fit(X, y, sample_weight=w)
    assert seen == {"X": seen["X"], "alive while growing": False}
    exact = DecisionTreeClassifier(tree_method="levelwise", random_state=0).fit(X, y, w)
    assert_same_trees([exact], [tree])  # (every value its own bin: the exact tree)
