"""Forests with sample weights against scikit-learn 1.9 (issue 5).

scikit-learn 1.9 draws a forest's bootstrap rows with probabilities proportional
to ``sample_weight`` (times the class weights) and grows each tree on its draw
counts alone: a class weight and the same weights given as ``sample_weight``
grow the same forest, and an integer weight ``k`` acts like ``k`` copies of the
row in the draws. Its errors for invalid forest parameters are compared word
for word, taken from scikit-learn at test time.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn import ensemble, tree
from sklearn.datasets import load_iris, make_classification
from sklearn.utils.class_weight import compute_sample_weight

from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)


def imbalanced(seed=0, n=300):
    return make_classification(
        n_samples=n, n_features=5, weights=[0.85, 0.15], flip_y=0.05, random_state=seed
    )


@pytest.mark.parametrize("class_weight", ["balanced", {0: 1.0, 1: 6.5}])
def test_class_weight_and_the_same_sample_weight_grow_the_same_forest(class_weight):
    X, y = imbalanced()
    weights = compute_sample_weight(class_weight, y)
    params = dict(n_estimators=30, min_samples_leaf=3, random_state=0)
    for library in (ensemble, None):  # scikit-learn 1.9 first: the property holds there
        cls = ensemble.RandomForestClassifier if library else RandomForestClassifier
        by_class = cls(**params, class_weight=class_weight).fit(X, y)
        by_sample = cls(**params).fit(X, y, sample_weight=weights)
        np.testing.assert_array_equal(by_class.predict_proba(X), by_sample.predict_proba(X))
        for a, b in zip(by_class.estimators_samples_, by_sample.estimators_samples_):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bootstrap", [True, False])
def test_sample_and_class_weights_multiply(bootstrap):
    """scikit-learn's test_class_weights_forest, its single-output part."""
    X, y = load_iris(return_X_y=True)
    w = np.where(y == 1, 100.0, 1.0)
    class_weight = {0: 1.0, 1: 100.0, 2: 1.0}
    params = dict(n_estimators=20, bootstrap=bootstrap, random_state=0)
    for library in (ensemble, None):
        cls = ensemble.RandomForestClassifier if library else RandomForestClassifier
        by_sample = cls(**params).fit(X, y, sample_weight=w**2)
        both = cls(**params, class_weight=class_weight).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(both.feature_importances_, by_sample.feature_importances_)
        np.testing.assert_array_equal(both.predict_proba(X), by_sample.predict_proba(X))


@pytest.mark.parametrize("max_samples", [None, 0.5, 1.0, 40])
@pytest.mark.parametrize("class_weight", [None, "balanced_subsample"])
def test_forest_draws_the_rows_sklearn_draws_with_sample_weight(max_samples, class_weight):
    X, y = imbalanced(1, n=120)
    w = np.random.default_rng(0).integers(1, 5, len(y)).astype(float)
    params = dict(n_estimators=4, max_samples=max_samples, max_depth=1, random_state=2)
    ours = RandomForestClassifier(**params, class_weight=class_weight).fit(X, y, sample_weight=w)
    theirs = ensemble.RandomForestClassifier(**params, class_weight=class_weight)
    theirs.fit(X, y, sample_weight=w)
    for a, b in zip(ours.estimators_samples_, theirs.estimators_samples_):
        np.testing.assert_array_equal(a, b)
    # every tree is grown on its draw counts alone (scikit-learn's trees: the same root)
    for our_tree, their_tree in zip(ours, theirs):
        assert our_tree.tree_.weighted_n_node_samples[0] == pytest.approx(
            their_tree.tree_.weighted_n_node_samples[0], rel=1e-12
        )
        assert our_tree.tree_.n_node_samples[0] == their_tree.tree_.n_node_samples[0]


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
def test_regressor_with_sample_weight_is_sklearns():
    # all features at every node (the regressor's default), continuous data and leaves of
    # at least 5 rows: no ties, so the same draws grow the same trees
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(80, 3)), rng.normal(size=80)
    w = rng.random(80) * 3
    params = dict(n_estimators=20, max_depth=3, min_samples_leaf=5, max_samples=0.7)
    params.update(random_state=5, oob_score=True)
    ours = RandomForestRegressor(**params).fit(X, y, sample_weight=w)
    theirs = ensemble.RandomForestRegressor(**params).fit(X, y, sample_weight=w)
    for a, b in zip(ours.estimators_samples_, theirs.estimators_samples_):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-9)
    np.testing.assert_allclose(ours.oob_prediction_, theirs.oob_prediction_, rtol=1e-9)


def test_integer_weights_draw_like_repeated_rows():
    """A row of weight k is drawn as often as its k copies would be, in distribution.

    With ``max_samples=1.0`` both forests draw the total weight ``N`` rows, and a
    row of weight ``k`` is out of bag with probability ``(1 - k/N)^N``, like
    its ``k`` copies together (treelib's rule before 1.9's: ``(1 - 1/n)^n`` for
    every row, its count multiplied by ``k``).
    """
    rng = np.random.default_rng(0)
    n, n_trees = 30, 400
    X, y = rng.normal(size=(n, 2)), np.arange(n) % 2
    k = rng.integers(1, 4, n)
    N = int(k.sum())
    params = dict(n_estimators=n_trees, max_samples=1.0, max_depth=1)
    weighted = RandomForestClassifier(**params, random_state=0).fit(X, y, sample_weight=k)
    repeated = RandomForestClassifier(**params, random_state=1)
    repeated.fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    original_row = np.repeat(np.arange(n), k)  # the row each copy copies
    counts_w = np.array([np.bincount(s, minlength=n) for s in weighted.estimators_samples_])
    counts_r = np.array(
        [np.bincount(original_row[s], minlength=n) for s in repeated.estimators_samples_]
    )
    for t in weighted:  # each tree is grown on N draws, as each tree of the copies
        assert t.tree_.weighted_n_node_samples[0] == N
    for value in (1, 2, 3):
        rows = k == value
        expected = (1 - value / N) ** N
        se = np.sqrt(expected * (1 - expected) / (n_trees * rows.sum()))
        for counts in (counts_w, counts_r):
            assert abs((counts[:, rows] == 0).mean() - expected) < 4 * se
            assert counts[:, rows].mean() == pytest.approx(value, abs=4 * np.sqrt(value / n_trees))


def test_float_max_samples_warns_as_sklearn_with_sample_weight():
    X, y = imbalanced(2, n=40)
    w = np.full(len(y), 0.25)  # total weight 10: 20% of it is 2 draws

    def warning_of(forest):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            forest.fit(X, y, sample_weight=w)
        return [str(c.message) for c in caught if "max_samples" in str(c.message)]

    theirs = warning_of(ensemble.RandomForestClassifier(n_estimators=2, max_samples=0.2))
    assert theirs and "sum of sample weights" in theirs[0]
    assert warning_of(RandomForestClassifier(n_estimators=2, max_samples=0.2)) == theirs


def sklearn_error(estimator, X, y):
    with pytest.raises(Exception) as error:
        estimator.fit(X, y)
    return error.value


@pytest.mark.parametrize(
    "params",
    [
        dict(min_samples_split=1),
        dict(min_samples_split=1.5),
        dict(oob_score=True, bootstrap=False),
        dict(n_estimators=0),
        dict(n_jobs="all"),
        dict(max_samples=0),
        dict(max_samples=-0.5),
        dict(bootstrap=False, max_samples=10),
    ],
)
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_forest_errors_are_sklearns(params, kind):
    X, y = imbalanced(3, n=40)
    ours_cls = RandomForestClassifier if kind == "classifier" else RandomForestRegressor
    theirs_cls = getattr(ensemble, ours_cls.__name__)
    expected = sklearn_error(theirs_cls(**params), X, y)
    with pytest.raises(type(expected), match=f"^{re.escape(str(expected))}$"):
        ours_cls(**params).fit(X, y)


@pytest.mark.parametrize("ours_cls", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_tree_min_samples_split_error_is_sklearns(ours_cls):
    X, y = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([0, 1])
    expected = sklearn_error(getattr(tree, ours_cls.__name__)(min_samples_split=1), X, y)
    with pytest.raises(type(expected), match=f"^{re.escape(str(expected))}$"):
        ours_cls(min_samples_split=1).fit(X, y)
    ours_cls(min_samples_split=1.0).fit(X, y)  # a float 1.0 is valid, as in scikit-learn
