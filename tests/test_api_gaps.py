"""scikit-learn API gaps found by running scikit-learn's tree tests (issue 14, item 8)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier as SkTree

from treelib import (
    AdaBoostClassifier,
    DecisionStump,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

CLASSIFIERS = [
    DecisionStump(),
    DecisionTreeClassifier(max_depth=3),
    RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
    AdaBoostClassifier(n_estimators=3, random_state=0),
]
ALL = CLASSIFIERS[1:] + [DecisionTreeRegressor(), RandomForestRegressor(n_estimators=2)]


@pytest.mark.parametrize("estimator", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_predict_log_proba_is_the_log_of_predict_proba(estimator):
    X, y = load_iris(return_X_y=True)
    estimator = clone(estimator).fit(X, y)
    proba = estimator.predict_proba(X)
    with np.errstate(divide="ignore"):
        expected = np.log(proba)
    np.testing.assert_array_equal(estimator.predict_log_proba(X), expected)


def test_tree_predict_log_proba_equals_sklearn():
    X, y = load_iris(return_X_y=True)
    ours = DecisionTreeClassifier(max_depth=2).fit(X, y)
    sk = SkTree(max_depth=2, random_state=0).fit(X, y)
    with np.errstate(divide="ignore"):
        expected = sk.predict_log_proba(X)
    np.testing.assert_allclose(ours.predict_log_proba(X), expected, atol=1e-12)
    assert np.isneginf(ours.predict_log_proba(X)).any()  # pure leaves: log 0


@pytest.mark.parametrize("estimator", ALL, ids=lambda e: type(e).__name__)
def test_feature_importances_before_fit_raise_not_fitted(estimator):
    with pytest.raises(NotFittedError):
        _ = clone(estimator).feature_importances_  # a fresh, unfitted copy


@pytest.mark.parametrize("estimator", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_n_classes_is_the_number_of_classes(estimator):
    X, y = load_iris(return_X_y=True)
    estimator = clone(estimator)
    assert estimator.fit(X[:100], y[:100]).n_classes_ == 2
    assert estimator.fit(X, np.array(["a", "b", "c"])[y]).n_classes_ == 3
    assert estimator.n_classes_ == SkTree().fit(X, y).n_classes_
