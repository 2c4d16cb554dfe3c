"""Categorical features in the level-wise builders (Chapter 7; the splits: Chapter 6).

With ``tree_method="hist"`` a categorical feature gets one bin per category
(:func:`treelib.hist.check_categories`); a one-vs-rest candidate ``x == c`` has
its bin's statistics on the left and the rest of the node on the right
(:meth:`treelib.hist.HistogramSearch.best_categories_in_cells` and
``best_categories_in_grid``). With ``tree_method="levelwise"`` each category of
a node is a run of equal values in the node's sorted row
(:func:`treelib.levelwise.level_categories`). scikit-learn's trees have no categorical
splits, so the reference is the recursive builder's tree
(``tests/test_categorical.py`` tests it): every field of ``tree_`` must be the
same, on random sets with mixed categorical and numeric features, sample
weights, ``min_samples_leaf``, ``max_features`` below the number of features,
exact ties between categories, and NaN in the numeric features.
"""

import numpy as np
import pytest
from sklearn_reference import dyadic_weights
from test_batched_forest import assert_same_forest, fit_both

import treelib.hist
import treelib.tree
from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from treelib.hist import bin_columns

EXACT = (
    "children_left", "children_right", "feature", "threshold", "n_node_samples",
    "missing_go_to_left", "categorical",
)  # fmt: skip
FLOATS = ("value", "impurity", "weighted_n_node_samples")  # (sums in another order)
N_SETS = 20
KINDS = ["classifier", "regressor"]
SCANS = ["levelwise", "hist", "hist in place", "hist listed"]


def no_recursive_builder(monkeypatch):
    """Make the recursive builder fail: a level-wise builder must grow the tree."""

    def refuse(*args, **kwargs):
        raise AssertionError("the recursive builder grew a level-wise tree")

    monkeypatch.setattr(treelib.tree, "grow_tree", refuse)


def force_scan(monkeypatch, scan):
    """``"hist"``: the scans the search picks; else dense histograms scanned in place or listed."""
    if scan.startswith("hist "):
        monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # dense histograms
        monkeypatch.setattr(treelib.hist, "GRID_RATIO", 10**9 if scan == "hist in place" else 0)


def problem(seed, kind, n=(30, 250), nan_rate=0.0):
    """Mixed data: 1 to 3 categorical columns (codes with gaps), 1 to 4 numeric ones."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(*n))
    n_cat, n_num = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    codes = [rng.integers(0, int(rng.integers(2, 13)), n) * int(rng.integers(1, 4))
             for _ in range(n_cat)]  # fmt: skip
    numeric = rng.normal(size=(n, n_num))
    if nan_rate:
        numeric[rng.random(numeric.shape) < nan_rate] = np.nan
    X = np.column_stack(codes + [numeric]).astype(np.float32)
    order = rng.permutation(X.shape[1])  # categorical columns anywhere
    X = X[:, order]
    categorical = sorted(int(np.flatnonzero(order == j)[0]) for j in range(n_cat))
    effect = rng.normal(size=40)[codes[0] % 40] + np.nan_to_num(numeric[:, 0])
    if kind == "classifier":
        y = (effect + rng.normal(size=n) > 0).astype(int) + (rng.random(n) < 0.2)
    else:
        y = effect + rng.normal(size=n) / 3
    w = dyadic_weights(rng, n) if seed % 2 else None
    params = dict(
        max_depth=int(rng.integers(1, 9)),
        min_samples_leaf=int(rng.integers(1, 6)),
        categorical_features=categorical,
    )
    if seed % 3 == 0:
        params["max_features"] = int(rng.integers(1, X.shape[1]))  # fewer than p
    X_new = X[rng.integers(0, n, 80)].copy()
    X_new[:20, categorical[0]] = 1000.0  # a category never seen: "x != c" everywhere
    return X, y, w, params, X_new


def assert_equals_recursive(monkeypatch, kind, X, y, w, params, X_new, seed=0, scan="hist"):
    model = DecisionTreeClassifier if kind == "classifier" else DecisionTreeRegressor
    exact = model(tree_method="recursive", random_state=seed, **params)
    exact.fit(X, y, sample_weight=w)
    with monkeypatch.context() as patch:
        no_recursive_builder(patch)
        force_scan(patch, scan)
        method = scan.split()[0]
        grown = model(tree_method=method, random_state=seed, max_bins=255, **params)
        grown.fit(X, y, sample_weight=w)
    a, b = grown.tree_, exact.tree_
    assert a.node_count == b.node_count
    for field in EXACT:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), field)
    for field in FLOATS:
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), atol=1e-12, rtol=0)
    np.testing.assert_array_equal(grown.apply(X_new), exact.apply(X_new))
    np.testing.assert_array_equal(grown.predict(X_new), exact.predict(X_new))
    return grown


@pytest.mark.parametrize("scan", SCANS)
@pytest.mark.parametrize("kind", KINDS)
def test_hist_grows_the_recursive_tree_with_categorical_features(monkeypatch, kind, scan):
    """Random mixed sets: weights, min_samples_leaf, max_features < p (every third set)."""
    categorical_splits = 0
    for seed in range(N_SETS):
        X, y, w, params, X_new = problem(seed, kind)
        grown = assert_equals_recursive(monkeypatch, kind, X, y, w, params, X_new, seed, scan)
        categorical_splits += int(grown.tree_.categorical.sum())
    assert categorical_splits > N_SETS  # (the one-vs-rest splits were searched and won)


@pytest.mark.parametrize("method", ["levelwise", "hist"])
@pytest.mark.parametrize("kind", KINDS)
def test_with_nan_in_the_numeric_features(monkeypatch, kind, method):
    """A categorical split sends a NaN right (``missing_go_to_left`` 0), as the recursive one."""
    for seed in range(8):
        X, y, w, params, X_new = problem(seed, kind, nan_rate=0.2)
        assert_equals_recursive(monkeypatch, kind, X, y, w, params, X_new, seed, method)


def tied_categories(seed):
    """Exact ties: categories with the same targets, a duplicated categorical column."""
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(3, 8)), int(rng.integers(20, 150))
    base = rng.integers(0, k, n)
    mix = rng.integers(0, 3, k)
    mix[rng.integers(0, k, 2)] = mix[0]  # several categories share category 0's targets
    X = np.column_stack([base, base, rng.integers(0, 3, n)]).astype(np.float32)
    if seed % 2 == 0:
        y = mix[base]
    else:
        y = mix[base] / 4 + np.round(rng.normal(size=n) * 4) / 8  # dyadic: exact sums
    w = None if seed % 3 else np.round(rng.uniform(0.5, 3, n) * 8) / 8
    params = dict(
        max_depth=int(rng.integers(1, 6)),
        categorical_features=[0, 1] if seed % 4 else [0, 1, 2],
    )
    if seed % 5 == 0:
        params["max_features"] = 2
    return X, y, w, params


@pytest.mark.parametrize("scan", SCANS)
@pytest.mark.parametrize("seed", range(24))
def test_ties_between_categories_break_as_in_the_recursive_builder(monkeypatch, seed, scan):
    """Tied scores: the feature first in the node's order, then the smallest category."""
    X, y, w, params = tied_categories(seed)
    kind = "classifier" if seed % 2 == 0 else "regressor"
    assert_equals_recursive(monkeypatch, kind, X, y, w, params, X, seed, scan)


@pytest.mark.parametrize("method", ["levelwise", "hist"])
@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_forest_grows_batched_and_equals_the_recursive_forest(monkeypatch, forest, method):
    kind = "classifier" if forest is RandomForestClassifier else "regressor"
    for seed in range(3):
        X, y, w, params, _ = problem(seed, kind)
        model = forest(n_estimators=5, random_state=seed, tree_method=method, **params)
        batched, alone, calls = fit_both(monkeypatch, model, X, y, w)
        assert calls == [True]  # grown batched, categories and all
        assert_same_forest(batched, alone)
        params = {**model.get_params(), "tree_method": "recursive"}
        recursive = forest(**params).fit(X, y, sample_weight=w)
        for a, b in zip(batched.estimators_, recursive.estimators_):
            for field in EXACT:
                np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field))


def test_the_builder_for_categorical_features():
    params = dict(categorical_features=[0])
    assert DecisionTreeClassifier(tree_method="hist", **params)._builder() == "hist"
    assert DecisionTreeClassifier(tree_method="levelwise", **params)._builder() == "levelwise"
    assert DecisionTreeClassifier(tree_method="recursive", **params)._builder() == "recursive"
    assert RandomForestRegressor(tree_method="hist", **params)._tree_params()[
        "categorical_features"
    ] == [0]


def test_each_category_is_a_bin_of_its_own():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 200, 5000).astype(np.float32) * 3  # 200 categories
    X = torch_column(x)
    bins = bin_columns(X, 255, categorical=[0])
    categories = np.unique(x)
    np.testing.assert_array_equal(bins.low[0, : len(categories)].numpy(), categories)
    np.testing.assert_array_equal(bins.high[0, : len(categories)].numpy(), categories)
    np.testing.assert_array_equal(categories[bins.codes[:, 0].long().numpy()], x)


def torch_column(x):
    import torch

    return torch.from_numpy(np.asarray(x, dtype=np.float32)[:, None])


def test_more_categories_than_bins_is_an_error():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.integers(0, 40, 300), rng.normal(size=300)]).astype(np.float32)
    y = rng.integers(0, 2, 300)
    model = DecisionTreeClassifier(tree_method="hist", max_bins=16, categorical_features=[0])
    with pytest.raises(ValueError, match="Categorical feature 0 has 40 categories, more than"):
        model.fit(X, y)
    forest = RandomForestClassifier(n_estimators=2, tree_method="hist", max_bins=16,
                                    categorical_features=[0])  # fmt: skip
    with pytest.raises(ValueError, match="max_bins=16"):
        forest.fit(X, y)
    model.set_params(max_bins=40).fit(X, y)  # exactly max_bins categories: fine
    assert model.tree_.categorical.any()


def test_nan_in_a_categorical_feature_is_the_recursive_builders_error():
    X = np.array([[0.0, 1.0], [1.0, 2.0], [np.nan, 3.0], [1.0, 4.0]])
    y = [0, 1, 0, 1]
    message = "Categorical feature 0 has missing values"
    with pytest.raises(ValueError, match=message):
        DecisionTreeClassifier(tree_method="recursive", categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match=message):  # (the bins refuse it: no builder splits it)
        bin_columns(torch_column(X[:, 0]), 255, categorical=[0])
    for model in (DecisionTreeClassifier, RandomForestClassifier):
        for method in ("levelwise", "hist"):
            with pytest.raises(ValueError, match=message):
                model(tree_method=method, categorical_features=[0]).fit(X, y)
