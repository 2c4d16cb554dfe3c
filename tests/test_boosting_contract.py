"""AdaBoost keeps scikit-learn's contract (issue 17): edge cases and the full API.

Where a scikit-learn weak learner is boosted, treelib and scikit-learn run the same
learners on the same data with the same seeds, so their results must agree exactly.
"""

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.datasets import load_iris, make_classification
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier as SkTree

from treelib import AdaBoostClassifier, DecisionTreeClassifier


def _iris():
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    return X[order], y[order]


def _both(learner, **params):
    """treelib's and scikit-learn's AdaBoost around the same weak learner."""
    return AdaBoostClassifier(learner, **params), ensemble.AdaBoostClassifier(learner, **params)


def _assert_same_ensemble(ours, theirs, X):
    assert len(ours.estimators_) == len(theirs.estimators_)
    # equal up to rounding: scikit-learn reweights as exp(log(w) + alpha), the book w * exp(alpha)
    np.testing.assert_allclose(ours.estimator_weights_, theirs.estimator_weights_, rtol=1e-12)
    np.testing.assert_allclose(ours.estimator_errors_, theirs.estimator_errors_, rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-12)


# Item 1: an unfitted ensemble as the weak learner (its len() must never be called).


def test_unfitted_random_forest_as_weak_learner_matches_sklearn():
    X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    forest = ensemble.RandomForestClassifier(n_estimators=5, max_depth=2)
    ours, theirs = _both(forest, n_estimators=4, random_state=0)
    ours.fit(X, y), theirs.fit(X, y)
    _assert_same_ensemble(ours, theirs, X)
    assert [f.random_state for f in ours.estimators_] == [
        f.random_state for f in theirs.estimators_
    ]


def test_nested_random_states_are_seeded_like_sklearn():
    X, y = make_classification(n_samples=80, n_features=4, random_state=1)
    bagging = ensemble.BaggingClassifier(SkTree(max_depth=1), n_estimators=3)
    ours, theirs = _both(bagging, n_estimators=3, random_state=5)
    ours.fit(X, y), theirs.fit(X, y)
    seeds = [(b.random_state, b.estimator.random_state) for b in ours.estimators_]
    assert seeds == [(b.random_state, b.estimator.random_state) for b in theirs.estimators_]
    assert all(None not in pair for pair in seeds)
    _assert_same_ensemble(ours, theirs, X)


# Item 2: a huge learning rate overflows the sample weights.


@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")  # sklearn's
def test_huge_learning_rate_stops_with_sklearns_warning_and_keeps_learners():
    X, y = _iris()
    ours, theirs = _both(SkTree(max_depth=1), n_estimators=30, learning_rate=23.0, random_state=0)
    with pytest.warns(UserWarning, match="Sample weights have reached infinite values"):
        ours.fit(X, y)
    with pytest.warns(UserWarning, match="Sample weights have reached infinite values"):
        theirs.fit(X, y)
    assert 1 < len(ours.estimators_) < 30
    _assert_same_ensemble(ours, theirs, X)


def test_huge_learning_rate_with_default_stumps_gives_finite_model():
    X, y = _iris()
    boost = AdaBoostClassifier(n_estimators=30, learning_rate=23.0, random_state=0)
    with pytest.warns(UserWarning, match="Sample weights have reached infinite values"):
        boost.fit(X, y)
    assert np.isfinite(boost.sample_weights_).all()
    assert np.isfinite(boost.predict_proba(X)).all()
    assert len(boost.sample_weights_) == len(boost.estimators_) > 1


# Item 3: one class.


@pytest.mark.parametrize("learner", [None, SkTree(max_depth=1)])
def test_one_class_outputs_match_sklearn(learner):
    X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], float)
    y = np.full(len(X), "only")
    ours = AdaBoostClassifier(learner).fit(X, y)
    theirs = ensemble.AdaBoostClassifier(learner).fit(X, y)
    for method in ("predict", "predict_proba", "decision_function"):
        expected = getattr(theirs, method)(X)
        np.testing.assert_array_equal(getattr(ours, method)(X), expected)
        assert getattr(ours, method)(X).shape == expected.shape
    np.testing.assert_array_equal(ours.predict_proba(X), np.ones((6, 1)))
    np.testing.assert_array_equal(ours.predict_log_proba(X), np.zeros((6, 1)))


def test_one_class_staged_outputs():
    # scikit-learn's staged methods divide by K - 1 = 0 here; ours stay consistent
    X = np.arange(8.0).reshape(4, 2)
    boost = AdaBoostClassifier().fit(X, [7, 7, 7, 7])
    [proba] = list(boost.staged_predict_proba(X))
    [decision] = list(boost.staged_decision_function(X))
    [labels] = list(boost.staged_predict(X))
    np.testing.assert_array_equal(proba, np.ones((4, 1)))
    np.testing.assert_array_equal(decision, np.zeros((4, 1)))
    np.testing.assert_array_equal(labels, [7, 7, 7, 7])
    assert list(boost.staged_score(X, [7, 7, 7, 7])) == [1.0]


# The missing API: staged_predict_proba, staged_score, predict_log_proba, estimator_.


@pytest.mark.parametrize("n_classes", [2, 3])
def test_staged_methods_match_sklearn(n_classes):
    X, y = make_classification(
        n_samples=150, n_features=5, n_informative=3, n_classes=n_classes,
        n_clusters_per_class=1, random_state=n_classes,
    )  # fmt: skip
    w = np.random.default_rng(0).integers(1, 5, size=len(y))
    ours, theirs = _both(SkTree(max_depth=1), n_estimators=8, random_state=0)
    ours.fit(X, y, sample_weight=w), theirs.fit(X, y, sample_weight=w)
    pairs = zip(ours.staged_predict_proba(X), theirs.staged_predict_proba(X), strict=True)
    for a, b in pairs:
        np.testing.assert_allclose(a, b, rtol=1e-12)
    ours_scores = list(ours.staged_score(X, y, sample_weight=w))
    assert ours_scores == list(theirs.staged_score(X, y, sample_weight=w))
    assert ours_scores[-1] == ours.score(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X))


def test_staged_methods_with_treelib_stumps_end_at_the_final_model():
    X, y = _iris()
    boost = AdaBoostClassifier(n_estimators=10, random_state=0).fit(X, y)
    probas = list(boost.staged_predict_proba(X))
    scores = list(boost.staged_score(X, y))
    assert len(probas) == len(scores) == len(boost.estimators_)
    np.testing.assert_allclose(probas[-1], boost.predict_proba(X))
    assert scores[-1] == boost.score(X, y)
    np.testing.assert_allclose(boost.predict_log_proba(X), np.log(boost.predict_proba(X)))


def test_estimator_attribute_is_the_base_learner():
    X, y = make_classification(n_samples=60, n_features=5, random_state=0)
    default = AdaBoostClassifier(n_estimators=2).fit(X, y).estimator_
    assert isinstance(default, DecisionTreeClassifier) and default.max_depth == 1
    learner = SkTree(max_depth=2)
    ours, theirs = _both(learner, n_estimators=2)
    assert ours.fit(X, y).estimator_ is learner is theirs.fit(X, y).estimator_


# X reaches a non-treelib learner as scikit-learn passes it.


class _RecordingClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the majority class and records the X it is given."""

    def fit(self, X, y, sample_weight=None):
        self.seen_ = [(X.dtype, X.shape)]
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        self.seen_.append((X.dtype, X.shape))
        return np.full(len(X), self.classes_[0])


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_x_reaches_a_sklearn_learner_unchanged(dtype):
    X = (np.arange(40).reshape(20, 2) % 7).astype(dtype)
    y = np.r_[np.zeros(12), np.ones(8)]
    boost = AdaBoostClassifier(_RecordingClassifier(), n_estimators=2).fit(X, y)
    boost.predict(X)
    assert {seen for seen in boost.estimators_[0].seen_} == {(np.dtype(dtype), (20, 2))}


def test_float64_x_is_not_rounded_for_a_sklearn_learner():
    # logistic regression works in float64: a float32 cast would move its coefficients
    X, y = make_classification(n_samples=100, n_features=4, random_state=3)
    X = X + 1e4
    ours, theirs = _both(LogisticRegression(), n_estimators=3, random_state=0)
    ours.fit(X, y), theirs.fit(X, y)
    np.testing.assert_array_equal(ours.estimators_[0].coef_, theirs.estimators_[0].coef_)
    np.testing.assert_array_equal(ours.decision_function(X), theirs.decision_function(X))


def test_n_dimensional_x_for_a_learner_that_accepts_it():
    rng = np.random.RandomState(0)
    X, y = rng.randn(51, 3, 3), rng.choice([0, 1], 51)
    ours, theirs = _both(DummyClassifier(strategy="most_frequent"))
    ours.fit(X, y), theirs.fit(X, y)
    assert ours.n_features_in_ == 3
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X))
    with pytest.raises(ValueError):
        AdaBoostClassifier().fit(X, y)  # a treelib tree needs 2-d X


# Errors as scikit-learn raises them.


class _NoWeights(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.zeros(len(X))


def test_learner_without_sample_weight_is_rejected():
    X, y = _iris()
    with pytest.raises(ValueError, match="_NoWeights doesn't support sample_weight"):
        AdaBoostClassifier(_NoWeights()).fit(X, y)


def test_first_learner_worse_than_random_raises():
    X, y = [[1, 1]] * 4, ["foo", "bar", 1, 2]
    with pytest.raises(ValueError, match="worse than random"):
        AdaBoostClassifier(DummyClassifier(strategy="most_frequent")).fit(X, y)


def test_feature_importances_before_fit_raise_not_fitted():
    with pytest.raises(NotFittedError):
        _ = AdaBoostClassifier().feature_importances_
