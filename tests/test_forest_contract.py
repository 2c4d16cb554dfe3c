"""Random forests keep scikit-learn's contract (Chapter 5; issue 17).

Where trees are tie-free (continuous features, leaves of >= 10 samples) our
forest draws the same bootstrap rows and grows the same trees as scikit-learn's,
so we compare exactly; elsewhere we compare behaviour.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import load_iris, make_regression
from sklearn.metrics import explained_variance_score

from treelib import DecisionTreeClassifier, RandomForestClassifier, RandomForestRegressor

X_REG, Y_REG = make_regression(n_samples=120, n_features=4, noise=5.0, random_state=0)
TIE_FREE = dict(n_estimators=6, min_samples_leaf=10, random_state=0)
IRIS_X, IRIS_Y = load_iris(return_X_y=True)


def both(**params):
    """Our regressor and scikit-learn's, fitted on the same tie-free data."""
    params = {**TIE_FREE, **params}
    ours = RandomForestRegressor(**params).fit(X_REG, Y_REG)
    theirs = ensemble.RandomForestRegressor(**params).fit(X_REG, Y_REG)
    return ours, theirs


@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_max_samples_without_bootstrap_raises_like_sklearn(forest):
    with pytest.raises(ValueError, match="max_sample` cannot be set if `bootstrap=False"):
        forest(bootstrap=False, max_samples=0.5).fit(IRIS_X, IRIS_Y)
    with pytest.raises(ValueError, match="max_sample` cannot be set if `bootstrap=False"):
        ensemble.RandomForestRegressor(bootstrap=False, max_samples=0.5).fit(IRIS_X, IRIS_Y)


@pytest.mark.parametrize("max_samples", [1.5, 300, 0.5, 7])
def test_max_samples_above_n_draws_the_rows_sklearn_draws(max_samples):
    ours, theirs = both(max_samples=max_samples)
    assert ours._n_samples_bootstrap == theirs._n_samples_bootstrap
    for a, b in zip(ours.estimators_samples_, theirs.estimators_samples_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(ours.predict(X_REG), theirs.predict(X_REG), rtol=1e-10)


@pytest.mark.parametrize("max_samples", [0, -1, 0.0, -0.5, "half"])
def test_max_samples_below_one_draw_is_rejected(max_samples):
    with pytest.raises(ValueError, match="max_samples"):
        RandomForestRegressor(n_estimators=2, max_samples=max_samples).fit(X_REG, Y_REG)


def test_callable_oob_score_gives_the_callables_value():
    ours, theirs = both(n_estimators=15, oob_score=explained_variance_score)
    expected = explained_variance_score(Y_REG, ours.oob_prediction_)
    assert ours.oob_score_ == pytest.approx(expected)
    assert ours.oob_score_ == pytest.approx(theirs.oob_score_)
    r2 = RandomForestRegressor(**{**TIE_FREE, "n_estimators": 15}, oob_score=True)
    assert ours.oob_score_ != pytest.approx(r2.fit(X_REG, Y_REG).oob_score_)


def test_callable_oob_score_on_a_classifier_gets_class_indices():
    y = np.array(["a", "b", "c"])[IRIS_Y]
    seen = []

    def score(y_true, y_pred):
        seen.append((y_true, y_pred))
        return 0.25

    forest = RandomForestClassifier(n_estimators=40, oob_score=score, random_state=0)
    assert forest.fit(IRIS_X, y).oob_score_ == 0.25
    np.testing.assert_array_equal(seen[0][0], IRIS_Y)  # encoded, as scikit-learn


@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_warns_when_some_rows_are_never_out_of_bag(forest):
    params = dict(n_estimators=1, oob_score=True, random_state=0)
    with pytest.warns(UserWarning, match="Some inputs do not have OOB scores"):
        forest(**params).fit(IRIS_X, IRIS_Y)
    with pytest.warns(UserWarning, match="Some inputs do not have OOB scores"):
        ensemble.RandomForestClassifier(**params).fit(IRIS_X, IRIS_Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # enough trees: every row is out of bag somewhere
        forest(**{**params, "n_estimators": 40}).fit(IRIS_X, IRIS_Y)


@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_identical_fits_pickle_to_identical_bytes(forest):
    a = forest(n_estimators=3, random_state=0).fit(IRIS_X, IRIS_Y)
    b = forest(n_estimators=3, random_state=0).fit(IRIS_X, IRIS_Y)
    assert pickle.dumps(a) == pickle.dumps(b)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)).predict(IRIS_X), a.predict(IRIS_X))


def test_apply_and_decision_path_match_sklearn():
    ours, theirs = both()
    leaves = ours.apply(X_REG)
    assert leaves.shape == (len(X_REG), TIE_FREE["n_estimators"])
    np.testing.assert_array_equal(leaves, theirs.apply(X_REG))
    indicator, ptr = ours.decision_path(X_REG)
    their_indicator, their_ptr = theirs.decision_path(X_REG)
    np.testing.assert_array_equal(ptr, their_ptr)
    assert indicator.format == "csr" and indicator.shape == their_indicator.shape
    np.testing.assert_array_equal(indicator.toarray(), their_indicator.toarray())


def test_decision_path_ends_at_the_leaf_apply_gives():
    forest = RandomForestClassifier(n_estimators=4, random_state=0).fit(IRIS_X, IRIS_Y)
    indicator, ptr = forest.decision_path(IRIS_X)
    leaves = forest.apply(IRIS_X)
    for i, tree in enumerate(forest):
        block = indicator[:, ptr[i] : ptr[i + 1]].toarray()
        assert (block[:, 0] == 1).all()  # every path starts at the root
        np.testing.assert_array_equal(
            block.shape[1] - 1 - np.argmax(block[:, ::-1], 1), leaves[:, i]
        )
        assert (block.sum(1) == np.asarray(tree.tree_.node_depth())[leaves[:, i]] + 1).all()


@pytest.mark.parametrize("bootstrap", [True, False])
def test_estimators_samples_are_the_rows_each_tree_saw(bootstrap):
    ours, theirs = both(bootstrap=bootstrap)
    for tree, rows, their_rows in zip(ours, ours.estimators_samples_, theirs.estimators_samples_):
        np.testing.assert_array_equal(rows, their_rows)
        assert rows.dtype == their_rows.dtype
        counts = np.bincount(rows, minlength=len(X_REG))
        assert tree.tree_.weighted_n_node_samples[0] == counts.sum()


def test_forest_is_a_sequence_of_trees():
    forest = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    forest.fit(IRIS_X, IRIS_Y)
    assert len(forest) == 5 and forest[2] is forest.estimators_[2]
    assert list(forest) == forest.estimators_
    assert (
        forest.n_classes_ == 3 == ensemble.RandomForestClassifier().fit(IRIS_X, IRIS_Y).n_classes_
    )
    template = forest.estimator_
    assert isinstance(template, DecisionTreeClassifier) and not hasattr(template, "tree_")
    assert template.max_depth == 3 and template.max_features == "sqrt"


def test_predict_log_proba_is_log_of_predict_proba():
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(IRIS_X, IRIS_Y)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(
            forest.predict_log_proba(IRIS_X), np.log(forest.predict_proba(IRIS_X))
        )


@pytest.mark.parametrize("forest", [RandomForestClassifier, RandomForestRegressor])
def test_warm_start_grows_the_trees_of_a_single_fit(forest):
    grown = forest(n_estimators=4, random_state=42, warm_start=True).fit(IRIS_X, IRIS_Y)
    first = list(grown)
    grown.set_params(n_estimators=9).fit(IRIS_X, IRIS_Y)
    assert len(grown) == 9 and grown[:4] == first  # the first trees are kept
    at_once = forest(n_estimators=9, random_state=42).fit(IRIS_X, IRIS_Y)
    np.testing.assert_array_equal(grown.apply(IRIS_X), at_once.apply(IRIS_X))
    sklearn_forest = ensemble.RandomForestClassifier(n_estimators=9, random_state=42)
    seeds = [tree.random_state for tree in sklearn_forest.fit(IRIS_X, IRIS_Y)]
    assert [tree.random_state for tree in grown] == seeds


def test_warm_start_with_fewer_or_as_many_trees():
    forest = RandomForestRegressor(n_estimators=3, warm_start=True, random_state=0)
    forest.fit(X_REG, Y_REG)
    trees = list(forest)
    with pytest.warns(UserWarning, match="Warm-start fitting without increasing n_estimators"):
        forest.set_params(random_state=1).fit(X_REG, Y_REG)
    assert list(forest) == trees
    with pytest.raises(ValueError, match="n_estimators=2 must be larger or equal"):
        forest.set_params(n_estimators=2).fit(X_REG, Y_REG)
    forest.set_params(warm_start=False, n_estimators=3, random_state=0).fit(X_REG, Y_REG)
    assert all(new is not old for new, old in zip(forest, trees))


def test_warm_start_oob_score_equals_a_single_fit():
    single = RandomForestRegressor(**{**TIE_FREE, "n_estimators": 15}, oob_score=True)
    warm = RandomForestRegressor(**{**TIE_FREE, "n_estimators": 5}).fit(X_REG, Y_REG)
    warm.set_params(warm_start=True, oob_score=True, n_estimators=15).fit(X_REG, Y_REG)
    assert warm.oob_score_ == single.fit(X_REG, Y_REG).oob_score_
    late = RandomForestRegressor(**{**TIE_FREE, "n_estimators": 15}, warm_start=True)
    late.fit(X_REG, Y_REG)
    with pytest.warns(UserWarning, match="Warm-start"):
        late.set_params(oob_score=True).fit(X_REG, Y_REG)
    assert late.oob_score_ == single.oob_score_


def test_n_jobs_is_accepted_and_changes_nothing():
    one = RandomForestClassifier(n_estimators=4, random_state=0).fit(IRIS_X, IRIS_Y)
    many = RandomForestClassifier(n_estimators=4, random_state=0, n_jobs=-1)
    assert many.get_params()["n_jobs"] == -1
    np.testing.assert_array_equal(many.fit(IRIS_X, IRIS_Y).apply(IRIS_X), one.apply(IRIS_X))
    with pytest.raises(ValueError, match="n_jobs"):
        RandomForestClassifier(n_jobs="all").fit(IRIS_X, IRIS_Y)
