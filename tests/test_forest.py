"""Random forests against scikit-learn's (Chapter 5)."""

from unittest.mock import patch

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.base import is_classifier
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_regression
from sklearn.model_selection import train_test_split

from treelib import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from treelib.forest import bootstrap_counts


@pytest.mark.parametrize("loader", [load_iris, load_wine, load_breast_cancer])
def test_accuracy_within_two_points_of_sklearn(loader):
    X, y = loader(return_X_y=True)
    ours, theirs = [], []
    for seed in range(10):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed)
        params = dict(n_estimators=30, random_state=seed)
        ours.append(RandomForestClassifier(**params).fit(X_tr, y_tr).score(X_te, y_te))
        theirs.append(ensemble.RandomForestClassifier(**params).fit(X_tr, y_tr).score(X_te, y_te))
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.02, (np.mean(ours), np.mean(theirs))


def test_regressor_identical_to_sklearn_when_trees_are_tie_free():
    # same bootstrap draws (scikit-learn's recipe) and all features per node; with
    # leaves of >= 10 samples no two features split a node into the same two groups
    # here (at 10-sample nodes that can happen: a tie scikit-learn breaks at random)
    X, y = make_regression(n_samples=300, n_features=5, noise=5.0, random_state=0)
    params = dict(n_estimators=30, min_samples_leaf=10, random_state=0, oob_score=True)
    ours = RandomForestRegressor(**params).fit(X, y)
    theirs = ensemble.RandomForestRegressor(**params).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-10)
    np.testing.assert_allclose(ours.oob_prediction_, theirs.oob_prediction_, rtol=1e-10)
    assert ours.oob_score_ == pytest.approx(theirs.oob_score_)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-12)


def test_bootstrap_draws_about_63_percent_distinct_rows():
    counts = bootstrap_counts(0, 10_000, 10_000)
    assert counts.sum() == 10_000
    assert (counts > 0).mean() == pytest.approx(1 - np.exp(-1), abs=0.01)


def test_oob_score_is_close_to_held_out_accuracy():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    forest = RandomForestClassifier(n_estimators=60, oob_score=True, random_state=0).fit(X_tr, y_tr)
    assert forest.oob_decision_function_.shape == (len(y_tr), 2)
    np.testing.assert_allclose(forest.oob_decision_function_.sum(1), 1.0)
    assert abs(forest.oob_score_ - forest.score(X_te, y_te)) < 0.05


def test_soft_vote_is_mean_of_tree_probabilities_and_hard_vote_is_majority():
    X, y = load_iris(return_X_y=True)
    forest = RandomForestClassifier(n_estimators=7, max_depth=2, random_state=1).fit(X, y)
    probas = np.stack([tree.predict_proba(X) for tree in forest.estimators_])
    np.testing.assert_allclose(forest.predict_proba(X), probas.mean(0))
    votes = np.stack([tree.predict(X) for tree in forest.estimators_])
    majority = [np.bincount(column, minlength=3).argmax() for column in votes.T]
    np.testing.assert_array_equal(forest.predict_majority(X), majority)


def test_reproducible_and_importances_sum_to_one():
    X, y = load_wine(return_X_y=True)
    a = RandomForestClassifier(n_estimators=5, random_state=3).fit(X, y)
    b = RandomForestClassifier(n_estimators=5, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.feature_importances_.sum() == pytest.approx(1.0)
    no_bootstrap = RandomForestClassifier(n_estimators=3, bootstrap=False, max_features=None)
    trees = no_bootstrap.fit(X, y).estimators_
    np.testing.assert_array_equal(trees[0].predict(X), y)  # full data, full depth


@pytest.mark.parametrize(
    "params,message",
    [
        ({"n_estimators": 0}, "n_estimators"),
        ({"max_samples": 0}, "max_samples"),
        ({"max_samples": -0.5}, "max_samples"),
        ({"bootstrap": False, "max_samples": 0.5}, "max_sample"),
        ({"bootstrap": False, "oob_score": True}, "bootstrap"),
        ({"max_features": "all"}, "max_features"),
    ],
)
def test_bad_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        RandomForestClassifier(**params).fit([[0.0], [1.0], [2.0]], [0, 1, 1])


def test_progress_bar_is_silent_by_default(capsys):
    RandomForestClassifier(n_estimators=3).fit([[0.0], [1.0], [2.0]], [0, 1, 1])
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    RandomForestClassifier(n_estimators=3, verbose=True).fit([[0.0], [1.0], [2.0]], [0, 1, 1])
    assert "trees" in capsys.readouterr().err


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (RandomForestClassifier, ensemble.RandomForestClassifier),
        (RandomForestRegressor, ensemble.RandomForestRegressor),
        (ExtraTreesClassifier, ensemble.ExtraTreesClassifier),
        (ExtraTreesRegressor, ensemble.ExtraTreesRegressor),
    ],
)
def test_estimator_is_the_unfitted_template_tree_as_scikit_learns(ours, theirs):
    forest, reference = ours(max_depth=3), theirs(max_depth=3)
    assert ("estimator" in forest.get_params()) == ("estimator" in reference.get_params())
    assert forest.estimator.splitter == reference.estimator.splitter
    assert forest.estimator.get_params()["max_depth"] is None  # a default tree, unfitted
    assert not hasattr(forest.estimator, "tree_")
    assert is_classifier(forest.estimator) == is_classifier(reference.estimator)


@pytest.mark.parametrize("cls", [RandomForestClassifier, RandomForestRegressor])
def test_a_warm_start_without_new_trees_does_not_score_oob_again(cls):
    X, y = make_regression(n_samples=80, n_features=4, random_state=0)
    y = y if cls is RandomForestRegressor else (y > 0).astype(int)
    forest = cls(n_estimators=20, warm_start=True, oob_score=True, random_state=0)
    with patch.object(
        forest, "_set_oob_score_and_attributes", wraps=forest._set_oob_score_and_attributes
    ) as scorer:
        forest.fit(X, y)
        with pytest.warns(UserWarning, match="Warm-start fitting without increasing"):
            forest.fit(X, y)
        scorer.assert_called_once()
