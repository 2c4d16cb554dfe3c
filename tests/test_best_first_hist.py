"""max_leaf_nodes with tree_method="hist": best-first growth on histograms (Chapter 7).

Each split's two children are searched together as a small level of the
histogram search (treelib.grow.grow_best_first_on). The exact best-first
builder (grow_tree_best_first) is switched off in these tests, so they check
that the histogram builder grows the trees: scikit-learn's where the bins
hold every value, the level-wise histogram tree where they do not.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn_reference import assert_same_tree, tie_free_for_treelib, tie_free_sklearn_fit

import treelib.tree
from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    Tree,
)

N_DATASETS = 20
OURS = {"classifier": DecisionTreeClassifier, "regressor": DecisionTreeRegressor}
SETTINGS = [
    dict(max_leaf_nodes=2),
    dict(max_leaf_nodes=5),
    dict(max_leaf_nodes=9, min_samples_leaf=5),
    dict(max_leaf_nodes=16, max_depth=3),
    dict(max_leaf_nodes=12, min_impurity_decrease=0.01),
    dict(max_leaf_nodes=30, min_samples_leaf=4),
    dict(max_leaf_nodes=1000, min_samples_leaf=8),  # the full tree, in creation order
]


def refuse_exact_best_first(monkeypatch):
    """Make the exact best-first builder unusable: the trees must grow on histograms."""

    def refuse(*args, **kwargs):
        raise AssertionError("the exact best-first builder was called")

    monkeypatch.setattr(treelib.tree, "grow_tree_best_first", refuse)


@pytest.fixture
def no_exact_best_first(monkeypatch):
    refuse_exact_best_first(monkeypatch)


def dataset(kind, seed, nan):
    """100 to 250 rows: the 255 bins hold every distinct value."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(100, 250)), int(rng.integers(2, 7))
    if kind == "classifier":
        X, y = make_classification(
            n_samples=n, n_features=p, n_informative=min(p, 2), n_redundant=0,
            n_classes=int(rng.integers(2, 4)), n_clusters_per_class=1, flip_y=0.1,
            random_state=seed,
        )  # fmt: skip
    else:
        X, y = make_regression(n_samples=n, n_features=p, noise=20.0, random_state=seed)
        y = y / y.std()  # min_impurity_decrease on the scale of the variance
    if nan:
        X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


def assert_same_missing_sides(ours, theirs):
    """missing_go_to_left of every split node (leaves carry no rule)."""
    inner = theirs.tree_.children_left >= 0
    np.testing.assert_array_equal(
        np.asarray(ours.tree_.missing_go_to_left)[inner], theirs.tree_.missing_go_to_left[inner]
    )


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize(
    "kind, criterion", [("classifier", "gini"), ("regressor", "squared_error")]
)
def test_identical_to_sklearn(kind, criterion, nan, no_exact_best_first):
    checked = 0
    for seed in range(300):
        X, y = dataset(kind, seed, nan)
        params = dict(SETTINGS[seed % len(SETTINGS)], criterion=criterion)
        if "min_samples_leaf" not in params:
            params["min_samples_leaf"] = 3 if kind == "regressor" else 6
        sk = tie_free_sklearn_fit(kind, X, y, None, params)
        ours_params = dict(params, tree_method="hist")
        if sk is None or not tie_free_for_treelib(OURS[kind], X, y, None, ours_params, n_states=4):
            continue
        ours = OURS[kind](**ours_params, random_state=0).fit(X, y)
        assert_same_tree(ours, sk)
        assert_same_missing_sides(ours, sk)
        np.testing.assert_array_equal(ours.apply(X), sk.apply(X))
        assert ours.get_n_leaves() <= params["max_leaf_nodes"]
        checked += 1
        if checked == N_DATASETS:
            return
    raise AssertionError(f"only {checked} tie-free data sets")


def same_tree_up_to_ids(a, b, i=0, j=0):
    """Are the subtrees at node i of ``a`` and node j of ``b`` the same, whatever their ids?"""
    ta, tb = a.tree_, b.tree_
    assert ta.n_node_samples[i] == tb.n_node_samples[j]
    assert ta.feature[i] == tb.feature[j]
    np.testing.assert_allclose(ta.value[i], tb.value[j], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ta.impurity[i], tb.impurity[j], rtol=0, atol=1e-12)
    if ta.children_left[i] < 0:
        assert tb.children_left[j] < 0
        return 1
    assert ta.threshold[i] == tb.threshold[j]
    assert ta.missing_go_to_left[i] == tb.missing_go_to_left[j]
    return (
        1
        + same_tree_up_to_ids(a, b, ta.children_left[i], tb.children_left[j])
        + same_tree_up_to_ids(a, b, ta.children_right[i], tb.children_right[j])
    )


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_coarse_bins_grow_the_level_wise_histogram_tree(kind, nan, no_exact_best_first):
    """With 8 bins the splits are the bins' (not scikit-learn's); room for every leaf."""
    for seed in range(6):
        X, y = dataset(kind, 100 + seed, nan)
        params = dict(tree_method="hist", max_bins=8, min_samples_leaf=2, random_state=seed)
        if seed % 2:
            params["max_features"] = 1  # each node draws its own feature, from its key
        levelwise = OURS[kind](**params).fit(X, y)
        best_first = OURS[kind](**params, max_leaf_nodes=10_000).fit(X, y)
        assert same_tree_up_to_ids(best_first, levelwise) == levelwise.tree_.node_count > 7
        np.testing.assert_allclose(best_first.predict(X), levelwise.predict(X), atol=1e-12)
        # fewer leaves: a subtree of that tree, the best improvements first
        small = OURS[kind](**params, max_leaf_nodes=6).fit(X, y)
        assert small.get_n_leaves() == 6
        assert set(small.tree_.threshold[small.tree_.children_left >= 0]) <= set(
            levelwise.tree_.threshold
        )


@pytest.mark.parametrize("nan", [False, True])
def test_forests_and_boosting_grow_best_first_on_histograms(nan, monkeypatch):
    X, y = dataset("regressor", 7, nan)
    params = dict(max_leaf_nodes=8, min_samples_leaf=3, random_state=0)
    exact = RandomForestRegressor(n_estimators=4, max_features=2, **params).fit(X, y)
    labels = (y > 0).astype(int)
    exact_c = RandomForestClassifier(n_estimators=4, **params).fit(X, labels)
    boosting = not nan  # (gradient boosting refuses NaN, as scikit-learn's)
    boosted = boosting and GradientBoostingRegressor(n_estimators=5, **params).fit(X, y)
    refuse_exact_best_first(monkeypatch)
    hist = dict(params, tree_method="hist")
    forest = RandomForestRegressor(n_estimators=4, max_features=2, **hist).fit(X, y)
    for ours, theirs in zip(forest, exact):
        assert ours.get_n_leaves() == 8
        assert same_tree_up_to_ids(ours, theirs) == theirs.tree_.node_count
    forest_c = RandomForestClassifier(n_estimators=4, **hist).fit(X, labels)
    for ours, theirs in zip(forest_c, exact_c):
        assert same_tree_up_to_ids(ours, theirs) == theirs.tree_.node_count
    if boosting:
        ours = GradientBoostingRegressor(n_estimators=5, **hist).fit(X, y)
        for tree, exact_tree in zip(ours.estimators_[:, 0], boosted.estimators_[:, 0]):
            assert same_tree_up_to_ids(tree, exact_tree) == exact_tree.tree_.node_count
        np.testing.assert_allclose(ours.predict(X), boosted.predict(X), rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    "params, builder",
    [
        (dict(), "best-first-hist"),
        (dict(max_bins=1), "best-first"),  # (an invalid max_bins: the fit raises)
        (dict(monotonic_cst=[1, 0]), "best-first"),
        (dict(categorical_features=[0]), "best-first-hist"),  # (one bin per category)
        (dict(splitter="random"), "best-first"),
        (dict(criterion="absolute_error"), "best-first"),
        (dict(criterion="poisson"), "best-first"),
        (dict(tree_method="levelwise"), "best-first"),
    ],
)
def test_what_grows_best_first_on_histograms(params, builder):
    params = dict(dict(tree_method="hist", max_leaf_nodes=4), **params)
    assert DecisionTreeRegressor(**params)._builder() == builder
    tree = DecisionTreeRegressor(tree_method="hist", max_leaf_nodes=4)
    assert tree._builder(multi_output=True) == "best-first"


@pytest.mark.parametrize("Estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_categorical_features_grow_best_first_on_histograms(Estimator):
    """One-vs-rest splits (Chapter 6) on histograms, best-first: the exact best-first tree."""
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n = 200  # (fewer distinct values than bins: the histograms are exact)
        X = np.column_stack([
            rng.integers(0, 6, n), rng.normal(size=n), rng.integers(0, 4, n), rng.normal(size=n),
        ]).astype(float)  # fmt: skip
        if Estimator is DecisionTreeClassifier:
            y = X[:, 0] % 2 + (X[:, 1] > 0) + rng.integers(0, 2, n)
        else:
            y = 0.3 * X[:, 0] + np.sin(X[:, 1]) + 0.1 * rng.normal(size=n)
        params = dict(
            max_leaf_nodes=int(rng.integers(3, 20)), categorical_features=[0, 2],
            random_state=seed, max_features=[None, 2][seed % 2],
        )  # fmt: skip
        hist = Estimator(tree_method="hist", **params)
        assert hist._builder() == "best-first-hist"
        hist.fit(X, y)
        exact = Estimator(tree_method="recursive", **params).fit(X, y)
        assert hist.tree_.categorical.any() or seed % 2  # (categorical splits are grown)
        for field in Tree.FIELDS:
            a, b = getattr(hist.tree_, field), getattr(exact.tree_, field)
            if np.asarray(a).dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=field)
            else:
                np.testing.assert_array_equal(a, b, err_msg=field)
