"""The shared split search on hand-worked cases (Chapter 1)."""

import numpy as np
import pytest
import torch

from treelib.criteria import target_stats
from treelib.split import best_split, midpoint


def node(x, y, w=None, criterion="gini"):
    X = torch.tensor(x, dtype=torch.float32).reshape(len(y), -1)
    w = torch.ones(len(y), dtype=torch.float64) if w is None else torch.tensor(w).double()
    if criterion == "squared_error":
        return X, target_stats(torch.tensor(y).double(), w, criterion)
    y = torch.tensor(y)
    return X, target_stats(y, w, criterion, int(y.max()) + 1)


def test_perfect_split_by_hand():
    X, stats = node([1, 2, 3, 4], [0, 0, 1, 1])
    split = best_split(X, stats, "gini")
    assert split.feature == 0
    assert split.threshold == 2.5
    assert split.impurity == pytest.approx(0.5)
    assert split.improvement == pytest.approx(0.5)
    assert (split.impurity_left, split.impurity_right) == (0.0, 0.0)


def test_weighted_improvement_by_hand():
    # left {0, 0, 1}, right {1}: gini_L = 1 - (4/9 + 1/9) = 4/9
    X, stats = node([1, 2, 3, 4], [0, 0, 1, 1], w=[1.0, 1.0, 1.0, 1.0])
    split = best_split(X, stats, "gini", min_samples_leaf=1)
    assert split.threshold == 2.5
    X, stats = node([1, 2, 3, 4], [0, 0, 1, 1], w=[1.0, 1.0, 5.0, 1.0])
    split = best_split(X, stats, "gini", min_samples_leaf=1)
    assert split.threshold == 2.5
    assert split.improvement == pytest.approx(1 - (2 / 8) ** 2 - (6 / 8) ** 2)


def test_min_samples_leaf_rejects_small_children():
    X, stats = node([1, 2, 3, 4, 5, 6], [0, 1, 1, 1, 1, 1])
    assert best_split(X, stats, "gini").threshold == 1.5
    assert best_split(X, stats, "gini", min_samples_leaf=2).threshold == 2.5
    assert best_split(X, stats, "gini", min_samples_leaf=4) is None


def test_min_weight_leaf_rejects_light_children():
    X, stats = node([1, 2, 3, 4], [0, 1, 1, 1], w=[0.5, 1, 1, 1])
    assert best_split(X, stats, "gini").threshold == 1.5
    assert best_split(X, stats, "gini", min_weight_leaf=1.0).threshold == 2.5


def test_constant_feature_has_no_split():
    X, stats = node([3, 3, 3, 3], [0, 1, 0, 1])
    assert best_split(X, stats, "gini") is None
    X, stats = node([1.0, 1.0 + 5e-8, 1.0, 1.0], [0, 1, 0, 1])  # within 1e-7: same value
    assert best_split(X, stats, "gini") is None


def test_less_or_equal_goes_left():
    X, stats = node([1, 1, 2, 2], [0, 0, 1, 1])
    split = best_split(X, stats, "gini")
    assert split.threshold == 1.5
    x = X[:, 0].double()
    assert (x <= split.threshold).tolist() == [True, True, False, False]


def test_first_feature_wins_a_tie_and_order_is_respected():
    x = np.array([[1, 1], [2, 2], [3, 3], [4, 4]])
    X, stats = node(x, [0, 0, 1, 1])
    assert best_split(X, stats, "gini").feature == 0
    assert best_split(X, stats, "gini", features=[1, 0]).feature == 1


def test_midpoint_rounds_like_scikit_learn():
    a = float(np.float32(1.0))
    b = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    assert midpoint(1.0, 3.0) == 2.0
    assert midpoint(a, b) in (a, (a + b) / 2)
    big = float(np.finfo(np.float32).max)
    assert midpoint(big / 2, big) == pytest.approx(0.75 * big)


def test_regression_split_by_hand():
    X, stats = node([1, 2, 3, 4], [1.0, 1.0, 5.0, 5.0], criterion="squared_error")
    split = best_split(X, stats, "squared_error")
    assert split.threshold == 2.5
    assert split.impurity == pytest.approx(4.0)  # variance of 1, 1, 5, 5
    assert split.improvement == pytest.approx(4.0)


def test_root_weight_scales_improvement():
    X, stats = node([1, 2, 3, 4], [0, 0, 1, 1])
    assert best_split(X, stats, "gini", root_weight=8.0).improvement == pytest.approx(0.25)


def test_single_sample_has_no_split():
    X, stats = node([1.0], [0])
    assert best_split(X, stats, "gini") is None
