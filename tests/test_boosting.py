"""AdaBoost (SAMME) against scikit-learn's, and its formulas by hand (Chapter 6)."""

import math

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier as SkTree

from treelib import AdaBoostClassifier, DecisionTreeClassifier
from treelib.boosting import reweight, samme_alpha


def test_alpha_and_reweighting_by_hand():
    # binary, err = 0.2: alpha = ln(0.8 / 0.2) = ln 4
    assert samme_alpha(0.2, 2) == pytest.approx(math.log(4))
    # three classes add ln(K - 1) = ln 2
    assert samme_alpha(0.2, 3) == pytest.approx(math.log(8))
    assert samme_alpha(0.5, 2) == pytest.approx(0.0)  # a coin flip has no say
    w = reweight(
        np.array([0.25, 0.25, 0.5, 0.0]), np.array([True, False, False, True]), math.log(4)
    )
    assert w.tolist() == [1.0, 0.25, 0.5, 0.0]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_identical_to_sklearn_with_stumps(n_classes):
    for seed in range(10):
        X, y = make_classification(
            n_samples=250, n_features=6, n_informative=4, n_classes=n_classes,
            n_clusters_per_class=1, random_state=seed,
        )  # fmt: skip
        params = dict(n_estimators=25, random_state=seed, learning_rate=[1.0, 0.5][seed % 2])
        ours = AdaBoostClassifier(**params).fit(X, y)
        theirs = ensemble.AdaBoostClassifier(SkTree(max_depth=1), **params).fit(X, y)
        np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, atol=1e-6)
        np.testing.assert_allclose(ours.estimator_errors_, theirs.estimator_errors_, atol=1e-6)
        X_new = np.random.default_rng(seed).normal(size=(100, 6)) * 2
        np.testing.assert_array_equal(ours.predict(X_new), theirs.predict(X_new))
        np.testing.assert_allclose(
            ours.predict_proba(X_new), theirs.predict_proba(X_new), atol=1e-9
        )
        np.testing.assert_allclose(
            ours.decision_function(X_new), theirs.decision_function(X_new), atol=1e-9
        )
        np.testing.assert_allclose(
            ours.feature_importances_, theirs.feature_importances_, atol=1e-9
        )
        for a, b in zip(ours.staged_predict(X_new), theirs.staged_predict(X_new)):
            np.testing.assert_array_equal(a, b)


def test_sample_weights_per_round_are_normalised_and_focus_on_mistakes():
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    boost = AdaBoostClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert boost.sample_weights_.shape == (5, 200)
    np.testing.assert_allclose(boost.sample_weights_.sum(1), 1.0)
    wrong = boost.estimators_[0].predict(X) != y
    w1 = boost.sample_weights_[1]
    assert w1[wrong].min() > w1[~wrong].max()  # every mistake was up-weighted


def test_perfect_learner_stops_with_weight_one():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    boost = AdaBoostClassifier(n_estimators=10).fit(X, ["a", "a", "b", "b"])
    assert len(boost.estimators_) == 1
    assert boost.estimator_weights_[0] == 1.0 and boost.estimator_errors_[0] == 0.0
    assert boost.predict([[-5.0], [5.0]]).tolist() == ["a", "b"]


def test_any_treelib_tree_as_learner():
    X, y = make_classification(n_samples=200, n_features=5, random_state=2)
    boost = AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=10).fit(X, y)
    assert all(tree.get_depth() <= 2 for tree in boost.estimators_)
    assert boost.score(X, y) > 0.9


@pytest.mark.parametrize(
    "params,message",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"learning_rate": -1.0}, "learning_rate"),
    ],
)
def test_bad_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        AdaBoostClassifier(**params).fit([[0.0], [1.0], [2.0]], [0, 1, 1])
