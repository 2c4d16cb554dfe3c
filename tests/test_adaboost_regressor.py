"""AdaBoost.R2 (``AdaBoostRegressor``) against scikit-learn's, and by hand (Chapter 6).

With the same weak learner and ``random_state``, treelib's rounds draw the same
seeds and the same weighted bootstrap samples as scikit-learn's, so with
scikit-learn's own trees the two ensembles are equal bit for bit. treelib's own
trees are scikit-learn's only without ties; a bootstrap sample repeats rows, and
a small node holding a few distinct rows is often split equally well by two
features (scikit-learn then picks one with its random feature order). With one
feature there is no such tie: there the trees are the same, and the weights
agree to rounding (a leaf's mean is summed in another order).
"""

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.dummy import DummyRegressor
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeRegressor as SkTree

from treelib import AdaBoostRegressor, DecisionTreeRegressor
from treelib.boosting import r2_errors, weighted_median

LOSSES = ["linear", "square", "exponential"]


def make_data(seed, n_features=None):
    """Continuous (tie-free) regression data; every other seed with sample weights."""
    rng = np.random.RandomState(seed)
    n = rng.randint(20, 120)
    p = n_features or rng.randint(1, 6)
    X = rng.normal(size=(n, p))
    y = 2 * X[:, 0] + np.sin(3 * X[:, -1]) + 0.3 * rng.normal(size=n)
    w = None
    if seed % 2:
        w = rng.uniform(0, 2, n)
        w[rng.rand(n) < 0.1] = 0.0  # some zero weights: never drawn, never counted
    return X, y, w, rng.normal(size=(50, p))


def both(loss, seed, learner=None, **params):
    """treelib's and scikit-learn's AdaBoostRegressor with the same settings."""
    params = {"loss": loss, "n_estimators": 30, "random_state": seed, **params}
    ours = AdaBoostRegressor(learner, **params)
    theirs = ensemble.AdaBoostRegressor(learner or SkTree(max_depth=3), **params)
    return ours, theirs


@pytest.mark.parametrize("loss", LOSSES)
def test_identical_to_sklearn_with_its_trees(loss):
    stopped_early = 0
    for seed in range(20):
        X, y, w, X_new = make_data(seed)
        lr = [1.0, 0.5, 2.0][seed % 3]
        ours, theirs = both(loss, seed, SkTree(max_depth=3), learning_rate=lr)
        ours.fit(X, y, sample_weight=w)
        theirs.fit(X, y, sample_weight=w)
        assert len(ours.estimators_) == len(theirs.estimators_)
        stopped_early += len(ours.estimators_) < 30
        np.testing.assert_array_equal(ours.estimator_weights_, theirs.estimator_weights_)
        np.testing.assert_array_equal(ours.estimator_errors_, theirs.estimator_errors_)
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
        staged = zip(ours.staged_predict(X_new), theirs.staged_predict(X_new), strict=True)
        for a, b in staged:
            np.testing.assert_array_equal(a, b)
        assert ours.score(X, y) == theirs.score(X, y)
        if seed < 3:
            assert list(ours.staged_score(X, y)) == list(theirs.staged_score(X, y))
        np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_)
        for a, b in zip(ours, theirs):  # same seeds
            assert a.random_state == b.random_state
    if loss == "linear":  # the largest losses: some ensembles met a learner with err >= 0.5
        assert stopped_early


@pytest.mark.parametrize("loss", LOSSES)
def test_treelib_trees_match_sklearn_on_one_feature(loss):
    for seed in range(20):
        X, y, w, X_new = make_data(seed, n_features=1)
        ours, theirs = both(loss, seed, n_estimators=20)
        ours.fit(X, y, sample_weight=w)
        theirs.fit(X, y, sample_weight=w)
        assert isinstance(ours.estimator_, DecisionTreeRegressor)
        assert ours.estimator_.max_depth == 3
        assert len(ours.estimators_) == len(theirs.estimators_)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
            np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_allclose(
            ours.estimator_weights_, theirs.estimator_weights_, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            ours.estimator_errors_, theirs.estimator_errors_, rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(ours.predict(X_new), theirs.predict(X_new), atol=1e-12)


def test_weighted_median_by_hand():
    predictions = np.array([[3.0, 1.0, 2.0]])
    # sorted 1, 2, 3 with weights (w1, w2, w0): the first cumulative weight >= half
    assert weighted_median(predictions, np.array([1.0, 1.0, 1.0])).tolist() == [2.0]
    assert weighted_median(predictions, np.array([3.0, 1.0, 1.0])).tolist() == [3.0]
    assert weighted_median(predictions, np.array([1.0, 3.0, 1.0])).tolist() == [1.0]
    # cumulative 1, 2, 4 of total 4: the half is reached exactly at the second
    assert weighted_median(predictions, np.array([2.0, 1.0, 1.0])).tolist() == [2.0]
    # all weights zero (a single learner with err >= 0.5): the smallest prediction
    assert weighted_median(predictions, np.zeros(3)).tolist() == [1.0]


def test_losses_by_hand():
    y_pred, y = np.array([0.0, 1.0, 4.0]), np.array([0.0, 0.0, 0.0])
    np.testing.assert_array_equal(r2_errors(y_pred, y, "linear"), [0.0, 0.25, 1.0])
    np.testing.assert_array_equal(r2_errors(y_pred, y, "square"), [0.0, 0.0625, 1.0])
    np.testing.assert_allclose(
        r2_errors(y_pred, y, "exponential"), 1 - np.exp(-np.array([0.0, 0.25, 1.0]))
    )
    np.testing.assert_array_equal(r2_errors(y, y, "linear"), [0.0, 0.0, 0.0])  # no 0/0


def test_one_round_by_hand():
    # A learner predicting 0 everywhere: errors |y| / max|y| = (0, 0.25, 0.25, 0.5, 1) / ...
    X = np.arange(5.0)[:, None]
    y = np.array([0.0, 1.0, 1.0, 2.0, 0.0])
    boost = AdaBoostRegressor(DummyRegressor(strategy="constant", constant=0.0), n_estimators=2)
    boost.fit(X, y)
    e = np.array([0.0, 0.5, 0.5, 1.0, 0.0])
    err = e.mean()  # 0.4 with uniform weights
    beta = err / (1 - err)
    assert boost.estimator_errors_[0] == pytest.approx(err)
    assert boost.estimator_weights_[0] == pytest.approx(np.log(1 / beta))
    w = 0.2 * beta ** (1 - e)
    np.testing.assert_allclose(boost.sample_weights_[1], w / w.sum())


def test_perfect_learner_stops_with_weight_one():
    X = np.random.RandomState(0).normal(size=(30, 2))
    ours, theirs = both("linear", 0)
    for boost in (ours, theirs):
        boost.fit(X, np.full(30, 3.0))
        assert len(boost.estimators_) == 1
    np.testing.assert_array_equal(ours.estimator_weights_, theirs.estimator_weights_)
    np.testing.assert_array_equal(ours.estimator_errors_, theirs.estimator_errors_)
    assert ours.estimator_weights_[0] == 1.0 and ours.estimator_errors_[0] == 0.0


def test_bad_first_learner_is_kept_alone():
    # a constant 0 against nine targets of 1: err = 0.9 >= 0.5, the only learner stays
    X, y = np.arange(10.0)[:, None], np.r_[0.0, np.ones(9)]
    ours, theirs = both("linear", 0, DummyRegressor(strategy="constant", constant=0.0))
    for boost in (ours, theirs):
        boost.fit(X, y)
        assert len(boost.estimators_) == 1
        np.testing.assert_array_equal(boost.predict(X), np.zeros(10))
    np.testing.assert_array_equal(ours.estimator_weights_, theirs.estimator_weights_)
    np.testing.assert_array_equal(ours.estimator_errors_, theirs.estimator_errors_)


def test_zero_weight_samples_are_never_drawn():
    X, y, _, _ = make_data(3, n_features=2)
    w = np.ones(len(y))
    w[::3] = 0.0

    class Recorder(SkTree):
        def fit(self, X, y, sample_weight=None):
            self.rows_ = X
            return super().fit(X, y, sample_weight)

    boost = AdaBoostRegressor(Recorder(max_depth=3), n_estimators=5, random_state=0)
    boost.fit(X, y, sample_weight=w)
    excluded = {tuple(row) for row in X[::3]}
    for learner in boost:
        assert not excluded & {tuple(row) for row in learner.rows_}
    assert (boost.sample_weights_[:, ::3] == 0).all()


@pytest.mark.parametrize(
    "params",
    [{"n_estimators": 0}, {"learning_rate": 0.0}, {"learning_rate": -1}, {"loss": "huber"}],
)
def test_bad_parameters_raise_sklearns_errors(params):
    X, y = [[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0]
    with pytest.raises(ValueError) as theirs:
        ensemble.AdaBoostRegressor(**params).fit(X, y)
    with pytest.raises(type(theirs.value)) as ours:
        AdaBoostRegressor(**params).fit(X, y)
    if "loss" in params:  # scikit-learn lists its options in set order
        assert str(ours.value).startswith("The 'loss' parameter of AdaBoostRegressor must be")
    else:
        assert str(ours.value) == str(theirs.value)


def test_bad_input_raises():
    X, y = [[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        AdaBoostRegressor().fit(X, y, sample_weight=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="could not convert string to float"):
        AdaBoostRegressor().fit(X, ["a", "b", "c"])
    with pytest.raises(NotFittedError):
        AdaBoostRegressor().predict(X)
    boost = AdaBoostRegressor(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features"):
        boost.predict([[0.0, 1.0]])


def test_attributes_and_pandas_names():
    pd = pytest.importorskip("pandas")
    X, y, _, _ = make_data(0, n_features=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    boost = AdaBoostRegressor(n_estimators=5, random_state=0).fit(frame, y)
    assert boost.n_features_in_ == 3
    assert boost.feature_names_in_.tolist() == ["a", "b", "c"]
    assert boost.estimator_weights_.shape == boost.estimator_errors_.shape == (5,)
    assert boost.feature_importances_.sum() == pytest.approx(1.0)
    assert len(boost) == len(boost.estimators_) and boost[0] is boost.estimators_[0]
