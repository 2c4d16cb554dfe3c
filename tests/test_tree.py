"""CART trees against scikit-learn (Chapters 2-4): same tree_, same predictions."""

import numpy as np
import pytest
import torch
from sklearn.datasets import load_iris, make_classification, make_regression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn_reference import assert_same_tree, dyadic_weights, sklearn_tree, tie_free_sklearn_fit

from treelib import DecisionTreeClassifier, DecisionTreeRegressor
from treelib.criteria import CRITERIA, target_stats

SETTINGS = [
    dict(max_depth=3),
    dict(max_depth=5, min_samples_leaf=5),
    dict(min_samples_leaf=8),
    dict(max_depth=6, min_samples_split=30),
    dict(max_depth=4, min_samples_leaf=0.03, min_samples_split=0.1),
    dict(min_samples_leaf=4, min_impurity_decrease=0.002),
    dict(max_depth=4, min_weight_fraction_leaf=0.05),
]


def dataset(kind, seed):
    """A continuous (tie-free-ish) dataset and sample weights: none, dyadic, or with zeros."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(150, 400)), int(rng.integers(3, 9))
    if kind == "classifier":
        X, y = make_classification(
            n_samples=n, n_features=p, n_informative=min(p, 3), n_redundant=0,
            n_classes=int(rng.integers(2, 4)), n_clusters_per_class=1, random_state=seed,
        )  # fmt: skip
    else:
        X, y = make_regression(n_samples=n, n_features=p, noise=10.0, random_state=seed)
    weights = (None, dyadic_weights(rng, n), dyadic_weights(rng, n, zeros=True))[seed % 3]
    return X, y, weights


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_identical_to_sklearn_on_tie_free_data(criterion):
    kind = "regressor" if criterion == "squared_error" else "classifier"
    ours_cls = DecisionTreeRegressor if kind == "regressor" else DecisionTreeClassifier
    checked = 0
    for seed in range(40):
        X, y, w = dataset(kind, seed)
        params = dict(SETTINGS[seed % len(SETTINGS)], criterion=criterion)
        sk = tie_free_sklearn_fit(kind, X, y, w, params)
        if sk is None:
            continue
        ours = ours_cls(**params).fit(X, y, sample_weight=w)
        assert_same_tree(ours, sk)
        np.testing.assert_array_equal(ours.apply(X), sk.apply(X))
        X_new = np.random.default_rng(seed).normal(size=X.shape) * X.std(0)
        if kind == "classifier":
            np.testing.assert_allclose(
                ours.predict_proba(X_new), sk.predict_proba(X_new), atol=1e-6
            )
        np.testing.assert_allclose(ours.predict(X_new), sk.predict(X_new), atol=1e-6)
        checked += 1
    assert checked >= 20, f"only {checked} tie-free datasets"


def split_score(X, stats, feature, threshold, criterion):
    """Weighted impurity of the children of one split of a node."""
    left = X[:, feature] <= threshold
    impurity = CRITERIA[criterion]
    total = 0.0
    for side in (left, ~left):
        s = stats[:, side].sum(1)
        weight = s[0] if criterion == "squared_error" else s.sum()
        total += float(weight * impurity(s))
    return total


def assert_same_up_to_ties(ours, sk, X, y, w, criterion):
    """Walk both trees; where the chosen splits differ, they must score the same."""
    n_classes = len(np.unique(y)) if criterion != "squared_error" else None
    y_t = torch.tensor(np.unique(y, return_inverse=True)[1] if n_classes else y)
    stats = target_stats(y_t, torch.tensor(w).double(), criterion, n_classes)
    a, b = ours.tree_, sk.tree_
    X32 = X.astype(np.float32).astype(np.float64)
    stack = [(0, 0, np.ones(len(y), bool))]
    ties = 0
    while stack:
        i, j, rows = stack.pop()
        assert int(a.n_node_samples[i]) == b.n_node_samples[j]
        assert float(a.impurity[i]) == pytest.approx(b.impurity[j], abs=1e-9)
        fa, fb = int(a.feature[i]), int(b.feature[j])
        if fa < 0 or fb < 0:
            assert fa == fb, "one tree splits a node the other leaves"
            continue
        ta, tb = float(a.threshold[i]), float(b.threshold[j])
        if (fa, round(ta, 6)) != (fb, round(tb, 6)):
            node_stats = stats[:, torch.tensor(rows)]
            sa = split_score(X32[rows], node_stats, fa, ta, criterion)
            sb = split_score(X32[rows], node_stats, fb, tb, criterion)
            assert sa == pytest.approx(sb, rel=1e-9, abs=1e-9), "different splits, different scores"
            ties += 1
            continue  # the subtrees of a tie legitimately differ
        left = rows & (X32[:, fa] <= ta)
        stack += [(int(a.children_left[i]), b.children_left[j], left)]
        stack += [(int(a.children_right[i]), b.children_right[j], rows & ~left)]
    return ties


@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_full_depth_trees_agree_up_to_ties(criterion):
    kind = "regressor" if criterion == "squared_error" else "classifier"
    ours_cls = DecisionTreeRegressor if kind == "regressor" else DecisionTreeClassifier
    for seed in range(6):
        X, y, w = dataset(kind, seed)
        w = np.ones(len(y)) if w is None else w
        ours = ours_cls(criterion=criterion, random_state=seed).fit(X, y, sample_weight=w)
        sk = sklearn_tree(kind, seed, criterion=criterion).fit(X, y, sample_weight=w)
        assert_same_up_to_ties(ours, sk, X, y, w, criterion)
        keep = w > 0
        np.testing.assert_allclose(ours.predict(X[keep]), sk.predict(X[keep]))  # both fit exactly


def test_iris_depth_two_reference():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=2).fit(X, y)
    # the classic: petal length <= 2.45, then petal width <= 1.75
    assert tree.tree_.feature.tolist()[:2] == [2, -2] or tree.tree_.feature.tolist()[:2] == [3, -2]
    assert tree.tree_.threshold[0].item() in (2.449999988079071, 0.800000011920929)
    assert tree.get_n_leaves() == 3 and tree.get_depth() == 2
    assert tree.score(X, y) == pytest.approx(0.96)


def test_max_features_draws_a_subset():
    X, y = make_classification(n_samples=300, n_features=16, random_state=0)
    tree = DecisionTreeClassifier(max_features="sqrt", random_state=0).fit(X, y)
    assert tree.max_features_ == 4
    other = DecisionTreeClassifier(max_features="sqrt", random_state=0).fit(X, y)
    np.testing.assert_array_equal(tree.tree_.feature, other.tree_.feature)  # reseeded per fit
    assert DecisionTreeClassifier(max_features=0.5).fit(X, y).max_features_ == 8
    assert DecisionTreeClassifier(max_features="log2").fit(X, y).max_features_ == 4
    assert tree.score(X, y) == 1.0


def test_regressor_leaves_predict_weighted_means():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y, w = [1.0, 3.0, 10.0, 20.0], [1, 3, 1, 1]
    # by hand: {1, 3 (x3)} | {10, 20} leaves SSE 3 + 50 = 53; {1, 3 (x3), 10} | {20}:
    # mean (1 + 9 + 10) / 5 = 4, SSE 9 + 3 + 36 = 48 -> the better split
    reg = DecisionTreeRegressor(max_depth=1).fit(X, y, sample_weight=w)
    assert reg.tree_.threshold[0].item() == 2.5
    assert reg.predict([[0.0], [3.0]]).tolist() == pytest.approx([4.0, 20.0])


def test_works_in_sklearn_tools():
    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    scores = cross_val_score(DecisionTreeClassifier(max_depth=3), X, y, cv=5)
    assert scores.shape == (5,) and scores.mean() > 0.7
    pipe = make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=3)).fit(X, y)
    assert pipe.score(X, y) > 0.8
    grid = GridSearchCV(DecisionTreeRegressor(), {"max_depth": [1, 2, 4]}, cv=3).fit(X, y * 1.0)
    assert grid.best_params_["max_depth"] in (1, 2, 4)


@pytest.mark.parametrize(
    "params",
    [
        {"criterion": "gini_index"},
        {"max_depth": 0},
        {"max_depth": 2.5},
        {"min_samples_split": 1},
        {"min_samples_split": 1.5},
        {"min_samples_leaf": 0},
        {"min_weight_fraction_leaf": 0.6},
        {"min_impurity_decrease": -1.0},
        {"max_features": 0},
        {"max_features": 99},
        {"max_features": "half"},
    ],
)
def test_bad_hyper_parameters_raise(params):
    name = next(iter(params))
    with pytest.raises(ValueError, match=name):
        DecisionTreeClassifier(**params).fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])


def test_regressor_rejects_classification_criterion_and_bad_targets():
    with pytest.raises(ValueError, match="criterion"):
        DecisionTreeRegressor(criterion="gini").fit([[0.0], [1.0]], [0.0, 1.0])
    with pytest.raises(ValueError, match="NaN|infinity"):
        DecisionTreeRegressor().fit([[0.0], [1.0]], [0.0, np.nan])
    with pytest.raises(ValueError):
        DecisionTreeClassifier().fit([[0.0], [1.0]], [0.5, 1.5])  # continuous labels


def test_predict_input_checks():
    tree = DecisionTreeRegressor().fit(np.random.default_rng(0).normal(size=(20, 3)), np.arange(20))
    with pytest.raises(ValueError, match="3 features"):
        tree.predict(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="infinity"):
        tree.predict(np.array([[np.inf, 0.0, 0.0]]))
