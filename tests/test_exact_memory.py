"""The exact level-wise search's memory savings change no number (issue 15)."""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression

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


def test_row_pieces_grow_the_same_trees(monkeypatch):
    """Rows scored a few positions at a time (running sums carried over) round alike."""
    X, y = make_classification(n_samples=400, n_features=5, n_informative=3, random_state=1)
    X = np.round(X, 1)  # ties
    w = np.random.default_rng(1).integers(0, 4, 400).astype(float)
    whole = fit_all(X, y, w)
    monkeypatch.setattr(treelib.levelwise, "BLOCK", 7)
    pieces = fit_all(X, y, w)
    for a, b in zip(whole, pieces):
        for field in FIELDS:
            np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field))


def test_regression_statistics_stay_dense():
    X, y = make_regression(n_samples=100, n_features=3, random_state=0)
    stats = target_stats(torch.as_tensor(y), torch.ones(100), "squared_error")
    search = treelib.levelwise.ExactSearch(torch.as_tensor(X, dtype=torch.float32), stats)
    assert torch.is_tensor(search.sorted_stats) and search.sorted_stats.shape == (3, 3, 100)
