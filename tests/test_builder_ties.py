"""One tie rule in every builder (issue 17, item 9).

Split scores that differ only by floating-point rounding are ties, and every
builder breaks them the same way: the lower rank in the node's search order,
then the smaller threshold. So ``recursive``, ``levelwise`` and ``hist`` (with
a bin per distinct value) grow the same tree even on data full of exact ties:
duplicated columns, fractional sample weights, real-valued targets.
"""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression
from sklearn.tree import DecisionTreeClassifier as SkClassifier
from sklearn.tree import DecisionTreeRegressor as SkRegressor

import treelib.hist
from treelib import DecisionTreeClassifier, DecisionTreeRegressor
from treelib.split import is_tie_or_best, tie_tolerance

BUILDERS = ("recursive", "levelwise", "hist")
EXACT = ("children_left", "children_right", "feature", "threshold", "n_node_samples")
ROUNDED = ("value", "impurity", "weighted_n_node_samples")  # sums in another order


def tree_arrays(model):
    """The fitted structure as numpy arrays (``tree_`` may hold tensors or arrays)."""
    tree = model.tree_
    return {name: np.asarray(getattr(tree, name)) for name in EXACT + ROUNDED}


def assert_same_tree(a, b, message=""):
    """Identical structure and thresholds; node statistics equal up to rounding."""
    a, b = tree_arrays(a), tree_arrays(b)
    for name in EXACT:
        np.testing.assert_array_equal(a[name], b[name], f"{message} {name}")
    for name in ROUNDED:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-9, atol=1e-12, err_msg=message)


def tied_data(seed):
    """A small data set full of exact ties, with one of several kinds of weights."""
    rng = np.random.default_rng(seed)
    classify = seed % 2 == 0
    n, p = int(rng.integers(7, 120)), int(rng.integers(1, 5))
    if classify:
        X, y = make_classification(
            n_samples=n, n_features=max(p, 2), n_informative=2, n_redundant=0,
            n_classes=int(rng.integers(2, 4)), n_clusters_per_class=1, random_state=seed,
        )  # fmt: skip
    else:
        X, y = make_regression(n_samples=n, n_features=p, random_state=seed)
        y = y / 37.0 + rng.normal(size=n) / 3  # real-valued targets: sums round
    X = np.round(X, int(rng.integers(0, 2)))  # few distinct values
    X = np.hstack([X, X[:, rng.integers(0, X.shape[1], 2)]])  # duplicated columns
    X = X[:, rng.permutation(X.shape[1])]
    weights = (None, rng.uniform(0.1, 3.0, n), rng.integers(1, 9, n) / 7, rng.random(n).round(2))
    return X, y, weights[seed % 4]


def exact_bins(X):
    """Enough bins for every distinct (float32) value: the histogram builder is then exact."""
    return max(2, max(len(np.unique(column)) for column in X.astype(np.float32).T))


def params_for(seed):
    return dict(
        max_depth=[None, 3][seed % 5 == 4],
        min_samples_leaf=[1, 1, 2][seed % 3],
        max_features=[None, None, None, 2][seed % 4],
        random_state=seed,
    )


@pytest.mark.parametrize("seed", range(64))
def test_every_builder_grows_the_same_tree_on_tied_data(seed):
    X, y, w = tied_data(seed)
    cls = DecisionTreeClassifier if seed % 2 == 0 else DecisionTreeRegressor
    max_bins = exact_bins(X)
    models = [
        cls(tree_method=b, max_bins=max_bins, **params_for(seed)).fit(X, y, sample_weight=w)
        for b in BUILDERS
    ]
    for builder, model in zip(BUILDERS[1:], models[1:]):
        assert_same_tree(model, models[0], builder)
        new_points = X + 0.25  # predictions on points between the training values agree too
        np.testing.assert_allclose(model.predict(new_points), models[0].predict(new_points))


@pytest.mark.parametrize("seed", range(64))
@pytest.mark.parametrize("scan", ["in place", "listed"])
def test_both_histogram_scans_break_ties_like_the_other_builders(monkeypatch, seed, scan):
    # every level's dense histograms scanned in place, or their non-empty cells listed:
    # the same tie tolerance and order either way
    X, y, w = tied_data(seed)
    cls = DecisionTreeClassifier if seed % 2 == 0 else DecisionTreeRegressor
    max_bins = exact_bins(X)
    monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # dense histograms
    monkeypatch.setattr(treelib.hist, "GRID_RATIO", 10**9 if scan == "in place" else 0)
    hist = cls(tree_method="hist", max_bins=max_bins, **params_for(seed))
    recursive = cls(tree_method="recursive", **params_for(seed))
    assert_same_tree(hist.fit(X, y, sample_weight=w), recursive.fit(X, y, sample_weight=w), "hist")


def test_the_issue_reproduction_splits_on_the_same_feature():
    X = np.array([[1, 0, 0], [0, 0, 0], [0, 2, 1], [2, 0, 2], [0, 1, 1], [1, 1, 2], [2, 0, 2]])
    y = [-0.6, 1.3, 0.47, -0.07, 0.62, -1.64, -1.87]
    models = [DecisionTreeRegressor(tree_method=b, random_state=0).fit(X, y) for b in BUILDERS]
    features = [int(np.asarray(m.tree_.feature)[1]) for m in models]
    assert features[0] == features[1] == features[2]
    for model in models[1:]:
        assert_same_tree(model, models[0])


def test_tie_tolerance_is_rounding_sized():
    total = torch.tensor([10.0, 3.0, 7.0], dtype=torch.float64)  # W, sum wy, sum wy^2
    tol = float(tie_tolerance(total, "squared_error"))
    assert 0 < tol < 1e-9
    scores = torch.tensor([1.0, 1.0 - tol / 2, 1.0 - 2 * tol, float("-inf")], dtype=torch.float64)
    assert is_tie_or_best(scores, scores.max(), tol).tolist() == [True, True, False, False]


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("classify", [True, False])
def test_tie_free_data_still_grows_scikit_learns_tree(builder, classify):
    # scikit-learn keeps a candidate only if strictly better; without ties the
    # tolerance changes nothing and every builder grows scikit-learn's tree
    # (small nodes deep down tie on any feature that separates their samples:
    # scikit-learn breaks those at random, hence the depth limit)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    w = rng.uniform(0.5, 2.0, 300)
    if classify:
        y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=300) > 0).astype(int)
        ours, theirs = DecisionTreeClassifier, SkClassifier
    else:
        y = X[:, 0] * X[:, 1] + rng.normal(size=300)
        ours, theirs = DecisionTreeRegressor, SkRegressor
    params = dict(max_depth=5, min_samples_leaf=4, random_state=0)
    a = ours(tree_method=builder, max_bins=300, **params).fit(X, y, sample_weight=w)
    b = theirs(**params).fit(X, y, sample_weight=w)
    for name in ("children_left", "children_right", "feature", "threshold"):
        np.testing.assert_array_equal(np.asarray(getattr(a.tree_, name)), getattr(b.tree_, name))
    np.testing.assert_allclose(np.asarray(a.tree_.impurity), b.tree_.impurity, atol=1e-12)


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_child_whose_weight_rounds_to_zero_is_no_candidate(builder, task):
    # 1 + 1e-20 rounds to 1: the split that leaves the 1e-20 sample alone on the
    # right has a right child of weight 1 - 1 = 0 and a score of 0/0 (NaN).
    # scikit-learn's comparisons never pick it; a NaN must not win a maximum here
    rng = np.random.default_rng(0)
    X = np.r_[np.arange(6.0), rng.normal(size=60)][:, None]
    w = np.r_[[1, 1, 1, 1, 1, 1e-20], rng.choice([1.0, 1e-20], size=60)]
    if task == "classification":
        y = np.r_[[0, 1, 0, 1, 0, 1], rng.integers(0, 2, 60)]
        ours, theirs = DecisionTreeClassifier, SkClassifier
    else:
        y = np.r_[[0, 5, 3, 9, 1, 100.0], rng.normal(size=60)]
        ours, theirs = DecisionTreeRegressor, SkRegressor
    # (with many weights of 1e-20, regression trees still differ from scikit-learn's
    # deep down, where nodes weigh about 1e-20; not this rule)
    for rows in (slice(0, 6), slice(None)) if task == "classification" else (slice(0, 6),):
        model = ours(tree_method=builder, random_state=0).fit(
            X[rows], y[rows], sample_weight=w[rows]
        )
        reference = theirs(random_state=0).fit(X[rows], y[rows], sample_weight=w[rows])
        for name in ("children_left", "children_right", "feature", "threshold"):
            np.testing.assert_array_equal(
                np.asarray(getattr(model.tree_, name)), getattr(reference.tree_, name), name
            )
