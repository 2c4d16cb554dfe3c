"""max_leaf_nodes: best-first growth against scikit-learn's BestFirstTreeBuilder (issue 14, item 3).

The open node whose split has the largest improvement is split next; node ids
follow creation order (both children of a split, left first), as scikit-learn's.
"""

import struct

import numpy as np
import pytest
from sklearn import ensemble
from sklearn import tree as sktree
from sklearn.datasets import make_classification, make_regression
from sklearn_reference import (
    assert_same_tree,
    dyadic_weights,
    tie_free_for_treelib,
    tie_free_sklearn_fit,
)

from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from treelib.forest import bootstrap_counts

N_DATASETS = 20
OURS = {"classifier": DecisionTreeClassifier, "regressor": DecisionTreeRegressor}
SETTINGS = [
    dict(max_leaf_nodes=2),
    dict(max_leaf_nodes=5),
    dict(max_leaf_nodes=9, min_samples_leaf=5),
    dict(max_leaf_nodes=16, max_depth=3),  # max_depth stops nodes before they compete
    dict(max_leaf_nodes=12, min_impurity_decrease=0.01),
    dict(max_leaf_nodes=30, min_samples_leaf=4),
    dict(max_leaf_nodes=1000, min_samples_leaf=8),  # never reached: the full tree, reordered
]


def dataset(kind, seed, weighted):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(100, 300)), int(rng.integers(2, 7))
    if kind == "classifier":
        X, y = make_classification(
            n_samples=n, n_features=p, n_informative=min(p, 2), n_redundant=0,
            n_classes=int(rng.integers(2, 4)), n_clusters_per_class=1, flip_y=0.1,
            random_state=seed,
        )  # fmt: skip
    else:
        X, y = make_regression(n_samples=n, n_features=p, noise=20.0, random_state=seed)
        y = y / y.std()  # min_impurity_decrease on the scale of the variance
    return X, y, dyadic_weights(rng, n, zeros=seed % 2 == 0) if weighted else None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    "kind, criterion", [("classifier", "gini"), ("regressor", "squared_error")]
)
def test_identical_to_sklearn(kind, criterion, weighted):
    checked = 0
    for seed in range(300):
        X, y, w = dataset(kind, seed, weighted)
        params = dict(SETTINGS[seed % len(SETTINGS)], criterion=criterion)
        if "min_samples_leaf" not in params:
            params["min_samples_leaf"] = 3 if kind == "regressor" else 6
        sk = tie_free_sklearn_fit(kind, X, y, w, params)
        if sk is None or not tie_free_for_treelib(OURS[kind], X, y, w, params):
            continue
        ours = OURS[kind](**params, random_state=0).fit(X, y, sample_weight=w)
        assert_same_tree(ours, sk)
        np.testing.assert_array_equal(ours.apply(X), sk.apply(X))
        assert ours.get_n_leaves() <= params["max_leaf_nodes"]
        checked += 1
        if checked == N_DATASETS:
            return
    raise AssertionError(f"only {checked} tie-free data sets")


def test_best_first_by_hand():
    # y jumps by 10 at x = 5 and by 1 at x = 2: the big jump is split first, then
    # the left part (improvement > 0) before the pure right part (no split)
    X = np.arange(8, dtype=float)[:, None]
    y = np.array([0, 0, 1, 1, 1, 11, 11, 11], dtype=float)
    tree = DecisionTreeRegressor(max_leaf_nodes=2).fit(X, y)
    assert tree.tree_.threshold[0] == 4.5 and tree.get_n_leaves() == 2
    tree = DecisionTreeRegressor(max_leaf_nodes=3).fit(X, y)
    # creation order: root 0, its children 1 (left) and 2 (right), then 1's children 3, 4
    assert tree.tree_.children_left.tolist() == [1, 3, -1, -1, -1]
    assert tree.tree_.children_right.tolist() == [2, 4, -1, -1, -1]
    assert tree.tree_.threshold[1] == 1.5
    np.testing.assert_allclose(tree.predict(X), [0, 0, 1, 1, 1, 11, 11, 11])


@pytest.mark.parametrize("method", ["recursive", "levelwise", "hist"])
def test_every_tree_method_grows_the_same_best_first_tree(method):
    X, y = make_regression(n_samples=200, n_features=4, noise=10.0, random_state=3)
    params = dict(max_leaf_nodes=11, random_state=0)
    reference = DecisionTreeRegressor(tree_method="recursive", **params).fit(X, y)
    tree = DecisionTreeRegressor(tree_method=method, **params).fit(X, y)
    assert_same_tree(tree, reference, atol=0)
    assert tree.get_n_leaves() == 11


def test_forest_grows_best_first_trees_as_sklearn():
    X, y = make_regression(n_samples=200, n_features=4, noise=10.0, random_state=0)
    params = dict(max_features=None, max_leaf_nodes=8, min_samples_leaf=5)
    ours = RandomForestRegressor(n_estimators=6, **params, random_state=0).fit(X, y)
    theirs = ensemble.RandomForestRegressor(n_estimators=6, **params, random_state=0).fit(X, y)
    checked = 0
    for tree, their_tree in zip(ours, theirs):
        assert tree.get_n_leaves() == 8
        counts = bootstrap_counts(tree.random_state, len(X), len(X)).astype(float)
        sk = tie_free_sklearn_fit("regressor", X, y, counts, params)
        if sk is not None:
            assert_same_tree(their_tree, sk)
            assert_same_tree(tree, sk)
            checked += 1
    assert checked >= 4
    forest = RandomForestClassifier(n_estimators=3, max_leaf_nodes=4, random_state=0)
    labels = (y > 0).astype(int)
    assert all(tree.get_n_leaves() <= 4 for tree in forest.fit(X, labels))


@pytest.mark.parametrize("value", [1, 0, -3, 2.5, "4", True])
def test_invalid_max_leaf_nodes_raises(value):
    X, y = make_classification(n_samples=30, n_features=3, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="max_leaf_nodes"):
        DecisionTreeClassifier(max_leaf_nodes=value).fit(X, y)
    with pytest.raises(ValueError, match="max_leaf_nodes"):
        RandomForestClassifier(n_estimators=2, max_leaf_nodes=value).fit(X, y)


def test_huge_max_leaf_nodes_raise_as_sklearn():
    """scikit-learn's test_huge_allocations: a limit whose 2 L - 1 nodes no index can
    number raises a MemoryError (scikit-learn cannot allocate its node arrays)."""
    X, y = make_classification(n_samples=30, n_features=3, n_redundant=0, random_state=0)
    n_bits = 8 * struct.calcsize("P")
    for huge in (2 ** (n_bits + 1), 2 ** (n_bits - 1) - 1, 2 ** (n_bits - 2) + 1):
        with pytest.raises(Exception) as theirs:
            sktree.DecisionTreeClassifier(max_leaf_nodes=huge).fit(X, y)
        assert isinstance(theirs.value, (MemoryError, OverflowError))
        with pytest.raises(MemoryError, match="max_leaf_nodes=.*for no limit"):
            DecisionTreeClassifier(max_leaf_nodes=huge).fit(X, y)
        with pytest.raises(ValueError, match="max_leaf_nodes"):
            RandomForestClassifier(n_estimators=2, max_leaf_nodes=huge).fit(X, y)
    largest = 2 ** (n_bits - 2)  # 2 L - 1 nodes still fit an index: no limit in effect
    tree = DecisionTreeClassifier(max_leaf_nodes=largest, random_state=0).fit(X, y)
    assert tree.get_n_leaves() == DecisionTreeClassifier(random_state=0).fit(X, y).get_n_leaves()
