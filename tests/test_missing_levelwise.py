"""Missing values (NaN) in the level-wise builders (Chapter 7): the exact search's tree.

``tree_method="hist"`` bins NaN apart (one more bin per feature with NaN),
``tree_method="levelwise"`` keeps each node's NaN after its sorted values; both
search the exact builder's three blocks of candidates (NaN right, NaN alone
right, NaN left: :func:`treelib.split.missing_value_candidates`). With
``max_bins`` at least the number of distinct values, each grows exactly the tree
of ``tree_method="recursive"``, ``missing_go_to_left`` included; forests with
NaN grow batched (:mod:`treelib.batched`) and equal the forests grown tree by tree.
The comparisons with scikit-learn (``tests/test_missing_monotonic.py``) run for
every ``tree_method``, ``"hist"`` included.
"""

import numpy as np
import pytest
import torch
from sklearn_reference import dyadic_weights
from test_batched_forest import assert_same_forest, fit_both
from test_builder_ties import assert_same_tree, exact_bins, params_for, tied_data

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
FLOATS = ("value", "impurity", "weighted_n_node_samples")  # (sums in another order: 1e-12)
N_SETS = 20
KINDS = ["classifier", "regressor"]


METHODS = ["hist", "levelwise"]


def no_recursive_builder(monkeypatch):
    """Make the recursive builder fail: a tree with NaN must be grown level by level."""

    def refuse(*args, **kwargs):
        raise AssertionError("the recursive builder grew a level-wise tree")

    monkeypatch.setattr(treelib.tree, "grow_tree", refuse)


def problem(seed, kind, nan_rate=(0.05, 0.6), n=(30, 250)):
    """Continuous features with NaN (ties: almost never); at most 250 distinct values."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(*n)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < rng.uniform(*nan_rate)] = np.nan
    if kind == "classifier":
        y = rng.integers(0, 3, n)
    else:
        y = np.nan_to_num(X).sum(1) + rng.normal(size=n)
    w = dyadic_weights(rng, n) if seed % 2 else None
    params = dict(max_depth=int(rng.integers(1, 9)), min_samples_leaf=int(rng.integers(1, 6)))
    if seed % 3 == 0:
        params["max_features"] = int(rng.integers(1, p + 1))
    X_new = rng.normal(size=(80, p)).astype(np.float32)
    X_new[rng.random((80, p)) < 0.3] = np.nan
    return X, y, w, params, X_new


def assert_equals_recursive(monkeypatch, method, kind, X, y, w, params, X_new, seed=0):
    model = DecisionTreeClassifier if kind == "classifier" else DecisionTreeRegressor
    exact = model(tree_method="recursive", random_state=seed, **params)
    exact.fit(X, y, sample_weight=w)
    with monkeypatch.context() as patch:
        no_recursive_builder(patch)
        grown = model(tree_method=method, random_state=seed, **params).fit(X, y, sample_weight=w)
    a, b = grown.tree_, exact.tree_
    assert a.node_count == b.node_count
    for field in EXACT:
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), field)
    for field in FLOATS:
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), atol=1e-12, rtol=0)
    assert grown._missing_in_fit == exact._missing_in_fit
    np.testing.assert_array_equal(grown.apply(X_new), exact.apply(X_new))
    return grown


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_with_nan_equals_the_exact_tree(monkeypatch, kind, method):
    """Random sets: NaN rates from 5 to 60 %, sample weights, min_samples_leaf, max_features."""
    splits_nan_left = 0
    for seed in range(N_SETS):
        X, y, w, params, X_new = problem(seed, kind)
        grown = assert_equals_recursive(monkeypatch, method, kind, X, y, w, params, X_new, seed)
        inner = grown.tree_.children_left >= 0
        splits_nan_left += int(grown.tree_.missing_go_to_left[inner].sum())
    assert splits_nan_left > 0  # (the NaN went left somewhere: block 3 was searched)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_nan_in_some_features_only_at_fit_or_only_at_predict(monkeypatch, kind, method):
    """Features without NaN at fit send a NaN to the bigger child; others as learned."""
    for seed in range(N_SETS):
        X, y, w, params, X_new = problem(seed, kind)
        X[:, 0] = np.random.default_rng(seed).normal(size=len(X))  # no NaN at fit ...
        X_new[::2, 0] = np.nan  # ... some at predict
        assert_equals_recursive(monkeypatch, method, kind, X, y, w, params, X_new, seed)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_feature_all_nan_in_some_nodes(monkeypatch, kind, method):
    """A feature NaN wherever another is positive, a column of NaN, one value and NaN."""
    for seed in range(N_SETS):
        X, y, w, params, X_new = problem(seed, kind, nan_rate=(0.0, 0.2))
        rng = np.random.default_rng(seed)
        known = rng.normal(size=len(X)).astype(np.float32)
        extra = np.column_stack([
            np.where(np.nan_to_num(X[:, 0]) > 0, np.nan, known),  # all NaN in nodes x0 > t
            np.full(len(X), np.nan, dtype=np.float32),  # all NaN everywhere: never split
            np.where(rng.random(len(X)) < 0.5, np.nan, 1.0).astype(np.float32),  # 1 or NaN
        ])  # fmt: skip
        X = np.column_stack([X, extra])[:, rng.permutation(X.shape[1] + 3)]
        X_new = rng.normal(size=(80, X.shape[1])).astype(np.float32)
        X_new[rng.random(X_new.shape) < 0.3] = np.nan
        params = {**params, "max_features": None if seed % 2 else 2}
        grown = assert_equals_recursive(monkeypatch, method, kind, X, y, w, params, X_new, seed)
        assert not np.isin(np.flatnonzero(np.isnan(X).all(0)), grown.tree_.feature).any()


@pytest.mark.parametrize("kind", KINDS)
def test_nan_bin_beside_exactly_max_bins_values(monkeypatch, kind):
    method = "hist"
    """``max_bins`` = the distinct known values: NaN gets a bin of its own on top."""
    for seed in range(5):
        X, y, w, params, X_new = problem(seed, kind, nan_rate=(0.2, 0.4), n=(100, 200))
        X = np.round(X * 4) / 4  # few distinct values (ties between them: both rules agree)
        X[:, 0] = np.where(np.isnan(X[:, 0]), np.nan, np.arange(len(X)) % 256)
        distinct = max(len(np.unique(c[~np.isnan(c)])) for c in X.T)
        params = {**params, "max_bins": max(distinct, 2)}
        assert_equals_recursive(monkeypatch, method, kind, X, y, w, params, X_new, seed)


def test_bins_put_nan_after_the_known_values():
    """Cuts from the known values only; NaN in one more bin whose values are NaN."""
    X = torch.tensor([[1.0, 5.0], [float("nan"), 5.0], [3.0, 5.0], [2.0, float("nan")]])
    bins = bin_columns(X, max_bins=255)
    assert bins.codes[:, 0].tolist() == [0, 3, 2, 1] and bins.codes[:, 1].tolist() == [0, 0, 0, 1]
    assert bins.high[0, :3].tolist() == [1.0, 2.0, 3.0] and bins.high[0, 3].isnan()
    assert bins.low[1, 0] == 5.0 and bins.low[1, 1].isnan()
    wide = bin_columns(torch.cat([torch.arange(256.0), torch.tensor([float("nan")])])[:, None], 256)
    assert wide.codes.dtype == torch.int32 and int(wide.codes[-1, 0]) == 256  # (not a byte)


def test_the_builder_for_nan():
    """``_builder`` is the one place: NaN no longer sends a tree to the recursive builder."""
    assert DecisionTreeClassifier(tree_method="hist")._builder(missing=True) == "hist"
    assert DecisionTreeClassifier(tree_method="levelwise")._builder(missing=True) == "levelwise"
    params = dict(tree_method="hist", monotonic_cst=[1])  # (the histogram builder's too)
    assert DecisionTreeClassifier(**params)._builder(missing=True) == "hist"
    params = dict(tree_method="hist", categorical_features=[0])  # (one bin per category)
    assert DecisionTreeClassifier(**params)._builder(missing=True) == "hist"
    params = dict(tree_method="hist", splitter="random")  # (still the recursive builder's)
    assert DecisionTreeClassifier(**params)._builder(missing=True) == "recursive"


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_forest_with_nan_grows_batched_and_equals_tree_by_tree(monkeypatch, forest, method):
    for seed in range(3):
        kind = "classifier" if forest is RandomForestClassifier else "regressor"
        X, y, w, params, _ = problem(seed, kind, nan_rate=(0.1, 0.4))
        model = forest(n_estimators=6, random_state=seed, tree_method=method, **params)
        batched, alone, calls = fit_both(monkeypatch, model, X, y, w)
        assert calls == [True]  # grown batched, NaN and all
        assert_same_forest(batched, alone)
        for a, b in zip(batched.estimators_, alone.estimators_):
            np.testing.assert_array_equal(a.tree_.missing_go_to_left, b.tree_.missing_go_to_left)
            assert a._missing_in_fit == b._missing_in_fit


@pytest.mark.parametrize("seed", range(32))
@pytest.mark.parametrize("scan", ["levelwise", "hist", "hist in place", "hist listed"])
def test_ties_with_nan_break_as_in_the_exact_search(monkeypatch, seed, scan):
    """Data full of exact ties (duplicated columns, few values) and NaN: block order decides.

    A split with the NaN on the right ties with one with the NaN on the left (or
    alone) when the NaN's class mix is the other side's: the first block wins,
    as in the recursive builder. The histogram search is also forced to scan
    every level's dense histograms in place, or their listed non-empty cells.
    """
    X, y, w = tied_data(seed)
    # dyadic targets and weights: every sum exact, so a tie is exact in every builder (the
    # cell list's running sums round relative to the level's sums, not the node's)
    y = y if seed % 2 == 0 else np.round(y * 8) / 8
    w = None if w is None else np.round(w * 8) / 8 + 1 / 8
    rng = np.random.default_rng(seed)
    X = X.astype(np.float32)
    X[rng.random(X.shape) < rng.uniform(0.05, 0.4)] = np.nan
    X = np.hstack([X, X[:, :1]])  # a duplicated column with its NaN
    cls = DecisionTreeClassifier if seed % 2 == 0 else DecisionTreeRegressor
    if scan != "hist":  # (plain hist: the scans it picks itself)
        monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # dense histograms
        monkeypatch.setattr(treelib.hist, "GRID_RATIO", 10**9 if scan == "hist in place" else 0)
    method = scan.split()[0]
    params = params_for(seed)
    recursive = cls(tree_method="recursive", **params).fit(X, y, sample_weight=w)
    no_recursive_builder(monkeypatch)
    model = cls(tree_method=method, max_bins=exact_bins(X[~np.isnan(X)][:, None]), **params)
    model.fit(X, y, sample_weight=w)
    assert_same_tree(model, recursive, scan)
    np.testing.assert_array_equal(
        model.tree_.missing_go_to_left, recursive.tree_.missing_go_to_left
    )
