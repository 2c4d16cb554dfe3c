"""HistGradientBoosting* (Chapter 9) against scikit-learn 1.9.1's, tree by tree.

Every dataset is tie-free (continuous features drawn from a seeded normal), so
scikit-learn's and treelib's trees must be the same: the same nodes (feature,
threshold, children, counts, side of the missing values) and the same values and
predictions within 1e-6. Fits are small (a few hundred rows, a few iterations).
"""

import re

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn import ensemble
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

from treelib import HistGradientBoostingClassifier, HistGradientBoostingRegressor

SEEDS = range(20)


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    """scikit-learn's fits on one thread: many tiny fits on a shared machine."""
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


INNER = ("feature_idx", "left", "right", "missing_go_to_left", "bin_threshold",
         "is_categorical")  # fmt: skip


def assert_same_trees(sk, tl):
    """The same number of iterations and the same trees, node by node."""
    assert tl.n_iter_ == sk.n_iter_
    assert tl.n_trees_per_iteration_ == sk.n_trees_per_iteration_
    np.testing.assert_allclose(tl._baseline_prediction, sk._baseline_prediction, atol=1e-12)
    for it_sk, it_tl in zip(sk._predictors, tl._predictors, strict=True):
        for p_sk, p_tl in zip(it_sk, it_tl, strict=True):
            a, b = p_sk.nodes, p_tl.nodes
            assert len(a) == len(b)
            np.testing.assert_array_equal(b["is_leaf"], a["is_leaf"])
            np.testing.assert_array_equal(b["count"], a["count"])
            inner = a["is_leaf"] == 0
            for field in INNER:
                np.testing.assert_array_equal(b[field][inner], a[field][inner], err_msg=field)
            num = inner & (a["is_categorical"] == 0)
            np.testing.assert_allclose(b["num_threshold"][num], a["num_threshold"][num],
                                       rtol=1e-12)  # fmt: skip
            leaf = ~inner
            np.testing.assert_allclose(b["value"][leaf], a["value"][leaf], atol=1e-6)
            cat = inner & (a["is_categorical"] == 1)
            if cat.any():
                np.testing.assert_array_equal(
                    np.asarray(p_tl.raw_left_cat_bitsets)[b["bitset_idx"][cat]],
                    p_sk.raw_left_cat_bitsets[a["bitset_idx"][cat]],
                )


def assert_same_predictions(sk, tl, X):
    if hasattr(sk, "predict_proba"):
        np.testing.assert_allclose(tl.decision_function(X), sk.decision_function(X), atol=1e-6)
        np.testing.assert_allclose(tl.predict_proba(X), sk.predict_proba(X), atol=1e-6)
        np.testing.assert_array_equal(tl.predict(X), sk.predict(X))
    else:
        np.testing.assert_allclose(tl.predict(X), sk.predict(X), atol=1e-6)


def compare(name, params, X, y, X_test, sample_weight=None):
    sk_cls = getattr(ensemble, name)
    tl_cls = {"HistGradientBoostingRegressor": HistGradientBoostingRegressor,
              "HistGradientBoostingClassifier": HistGradientBoostingClassifier}[name]  # fmt: skip
    sk = sk_cls(**params).fit(X, y, sample_weight=sample_weight)
    tl = tl_cls(**params).fit(X, y, sample_weight=sample_weight)
    assert_same_trees(sk, tl)
    assert_same_predictions(sk, tl, X_test)
    np.testing.assert_allclose(tl.train_score_, sk.train_score_, atol=1e-6)
    np.testing.assert_allclose(tl.validation_score_, sk.validation_score_, atol=1e-6)
    return sk, tl


def data(seed, n=300, d=4, nan=0.0):
    """Tie-free features, a smooth target; a fraction ``nan`` of the cells missing."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n + 50, d))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 2] * X[:, min(3, d - 1)]
    y = y + 0.1 * rng.normal(size=n + 50)
    if nan:
        X[rng.uniform(size=X.shape) < nan] = np.nan
    return X[:n], y[:n], X[n:]


SMALL = dict(max_iter=5, random_state=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_squared_error_same_trees(seed):
    X, y, X_test = data(seed, n=200 + 10 * seed)
    compare("HistGradientBoostingRegressor", dict(SMALL, max_leaf_nodes=8 + seed), X, y, X_test)


@pytest.mark.parametrize("seed", SEEDS)
def test_absolute_error_and_poisson_same_trees(seed):
    X, y, X_test = data(seed)
    compare("HistGradientBoostingRegressor", dict(SMALL, loss="absolute_error"), X, y, X_test)
    compare("HistGradientBoostingRegressor", dict(SMALL, loss="poisson"), X, np.exp(y), X_test)


@pytest.mark.parametrize("loss", ["gamma", "quantile"])
def test_gamma_and_quantile_same_trees(loss):
    X, y, X_test = data(0)
    params = dict(SMALL, loss=loss, quantile=0.8 if loss == "quantile" else None)
    compare("HistGradientBoostingRegressor", params, X, np.exp(y), X_test)


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_same_trees(seed):
    X, y, X_test = data(seed)
    labels = np.where(y > np.median(y), "yes", "no")
    compare("HistGradientBoostingClassifier", dict(SMALL, max_depth=3 + seed % 3), X, labels,
            X_test)  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_multiclass_same_trees(seed):
    X, y, X_test = data(seed)
    labels = np.digitize(y, np.quantile(y, [0.3, 0.6]))
    compare("HistGradientBoostingClassifier", dict(SMALL, max_iter=3), X, labels, X_test)


@pytest.mark.parametrize("seed", SEEDS)
def test_missing_values_same_trees(seed):
    X, y, X_test = data(seed, nan=0.1)
    compare("HistGradientBoostingRegressor", SMALL, X, y, X_test)
    compare("HistGradientBoostingClassifier", SMALL, X, y > 0, X_test)


def categorical_data(seed, n=300):
    """Two categorical columns (codes, one with NaN) among continuous ones."""
    rng = np.random.RandomState(seed)
    X, y, X_test = data(seed, n=n, d=4)
    effect = rng.normal(size=(2, 12))
    both = np.vstack([X, X_test])
    codes = rng.randint(0, 12, size=(len(both), 2)).astype(float)
    codes[rng.uniform(size=len(both)) < 0.05, 1] = np.nan
    both[:, [1, 3]] = codes
    y = y + effect[0][codes[:n, 0].astype(int)] + 2 * np.nan_to_num(codes[:n, 1]) % 3
    return both[:n], y, both[n:]


@pytest.mark.parametrize("seed", SEEDS)
def test_categorical_same_trees(seed):
    X, y, X_test = categorical_data(seed)
    cat = [1, 3] if seed % 2 else [False, True, False, True]
    compare("HistGradientBoostingRegressor", dict(SMALL, categorical_features=cat), X, y,
            X_test)  # fmt: skip


def test_categorical_from_dtype_and_names():
    X, y, X_test = categorical_data(0)
    columns = ["a", "b", "c", "d"]
    df, df_test = pd.DataFrame(X, columns=columns), pd.DataFrame(X_test, columns=columns)
    for frame in (df, df_test):
        frame["b"] = pd.Categorical(frame["b"], categories=np.arange(12.0))
    sk, tl = compare("HistGradientBoostingRegressor", SMALL, df, y, df_test)
    np.testing.assert_array_equal(tl.is_categorical_, [False, True, False, False])
    np.testing.assert_array_equal(tl.feature_names_in_, columns)
    params = dict(SMALL, categorical_features=["b", "d"])
    compare("HistGradientBoostingRegressor", params, pd.DataFrame(X, columns=columns), y,
            pd.DataFrame(X_test, columns=columns))  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_monotonic_constraints_same_trees(seed):
    X, y, X_test = data(seed)
    params = dict(SMALL, monotonic_cst=[1, -1, 0, 1])
    sk, tl = compare("HistGradientBoostingRegressor", params, X, y, X_test)
    compare("HistGradientBoostingClassifier", params, X, y > 0, X_test)
    grid = np.tile(X_test[:1], (50, 1))
    grid[:, 0] = np.linspace(-3, 3, 50)
    assert np.all(np.diff(tl.predict(grid)) >= 0)


def test_monotonic_constraints_by_name():
    X, y, X_test = data(0)
    columns = ["a", "b", "c", "d"]
    params = dict(SMALL, monotonic_cst={"a": 1, "b": -1})
    compare("HistGradientBoostingRegressor", params, pd.DataFrame(X, columns=columns), y,
            pd.DataFrame(X_test, columns=columns))  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_interaction_constraints_same_trees(seed):
    X, y, X_test = data(seed)
    cst = [[[0, 1], [2, 3]], "pairwise", "no_interactions", [{0, 2}]][seed % 4]
    compare("HistGradientBoostingRegressor", dict(SMALL, interaction_cst=cst), X, y, X_test)


@pytest.mark.parametrize("seed", range(4))
def test_sample_weight_class_weight_l2_max_features(seed):
    X, y, X_test = data(seed)
    w = np.random.RandomState(seed).uniform(0.5, 2.0, size=len(y))
    params = dict(SMALL, l2_regularization=0.5, min_samples_leaf=10, max_bins=63)
    compare("HistGradientBoostingRegressor", params, X, y, X_test, sample_weight=w)
    compare("HistGradientBoostingRegressor", dict(params, loss="absolute_error"), X, y, X_test,
            sample_weight=w)  # fmt: skip
    compare("HistGradientBoostingClassifier", dict(params, class_weight="balanced"), X,
            y > 0.5, X_test)  # fmt: skip
    compare("HistGradientBoostingClassifier", dict(SMALL, max_features=0.5), X, y > 0, X_test)


@pytest.mark.parametrize("seed", range(6))
def test_early_stopping_same_iteration(seed):
    X, y, X_test = data(seed, n=400)
    params = dict(early_stopping=True, n_iter_no_change=3, learning_rate=0.5, max_iter=60,
                  random_state=seed, max_leaf_nodes=15)  # fmt: skip
    sk, tl = compare("HistGradientBoostingRegressor", params, X, y, X_test)
    assert sk.n_iter_ < 60
    sk, tl = compare("HistGradientBoostingClassifier", params, X, y > 0, X_test)
    assert sk.n_iter_ < 60
    no_val = dict(params, validation_fraction=None, tol=1e-2)
    compare("HistGradientBoostingRegressor", no_val, X, y, X_test)
    compare("HistGradientBoostingClassifier", dict(params, scoring="accuracy"), X, y > 0, X_test)


def test_early_stopping_auto_on_more_than_10000_rows_with_a_scorer():
    X, y, X_test = data(0, n=11_500, d=3)
    params = dict(max_iter=30, n_iter_no_change=2, random_state=3, max_leaf_nodes=7,
                  learning_rate=0.8, scoring="neg_mean_absolute_error", tol=1e-2)  # fmt: skip
    sk, tl = compare("HistGradientBoostingRegressor", params, X, y, X_test)
    assert tl.do_early_stopping_ and sk.n_iter_ < 30
    assert len(tl.train_score_) == tl.n_iter_ + 1
    params = dict(params, scoring=None, max_iter=8)  # accuracy on a stratified subsample
    compare("HistGradientBoostingClassifier", params, X, y > 0, X_test)


def test_validation_data_passed_to_fit():
    X, y, X_test = data(1, n=400)
    kw = dict(X_val=X_test, y_val=X_test[:, 0])
    sk = ensemble.HistGradientBoostingRegressor(**SMALL).fit(X, y, **kw)
    tl = HistGradientBoostingRegressor(**SMALL).fit(X, y, **kw)
    assert_same_trees(sk, tl)
    np.testing.assert_allclose(tl.validation_score_, sk.validation_score_, atol=1e-6)


@pytest.mark.parametrize("name", ["HistGradientBoostingRegressor",
                                  "HistGradientBoostingClassifier"])  # fmt: skip
def test_warm_start_adds_the_same_trees(name):
    X, y, X_test = data(2)
    target = y if "Regressor" in name else np.digitize(y, [-0.5, 0.5])
    tl_cls = (
        HistGradientBoostingRegressor if "Regressor" in name else HistGradientBoostingClassifier
    )
    sk = getattr(ensemble, name)(max_iter=3, warm_start=True, random_state=0, max_features=0.7)
    tl = tl_cls(max_iter=3, warm_start=True, random_state=0, max_features=0.7)
    sk.fit(X, target)
    tl.fit(X, target)
    sk.set_params(max_iter=6).fit(X, target)
    tl.set_params(max_iter=6).fit(X, target)
    assert_same_trees(sk, tl)
    assert_same_predictions(sk, tl, X_test)
    with pytest.raises(ValueError, match="max_iter=2 must be larger than or equal to n_iter_=6"):
        tl.set_params(max_iter=2).fit(X, target)


def test_staged_methods_match_scikit_learn():
    X, y, X_test = data(3)
    labels = np.digitize(y, [-0.5, 0.5])
    sk = ensemble.HistGradientBoostingClassifier(**SMALL).fit(X, labels)
    tl = HistGradientBoostingClassifier(**SMALL).fit(X, labels)
    for a, b in zip(sk.staged_predict_proba(X_test), tl.staged_predict_proba(X_test),
                    strict=True):  # fmt: skip
        np.testing.assert_allclose(b, a, atol=1e-6)
    for a, b in zip(sk.staged_decision_function(X_test), tl.staged_decision_function(X_test),
                    strict=True):  # fmt: skip
        np.testing.assert_allclose(b, a, atol=1e-6)
    for a, b in zip(sk.staged_predict(X_test), tl.staged_predict(X_test), strict=True):
        np.testing.assert_array_equal(b, a)
    sk = ensemble.HistGradientBoostingRegressor(**SMALL).fit(X, y)
    tl = HistGradientBoostingRegressor(**SMALL).fit(X, y)
    for a, b in zip(sk.staged_predict(X_test), tl.staged_predict(X_test), strict=True):
        np.testing.assert_allclose(b, a, atol=1e-6)


def test_attributes_and_numpy_outputs():
    X, y, X_test = data(4)
    tl = HistGradientBoostingClassifier(**SMALL).fit(X, y > 0, sample_weight=np.ones(len(y)))
    assert isinstance(tl.predict_proba(X_test), np.ndarray)
    assert isinstance(tl.decision_function(X_test), np.ndarray)
    assert tl.n_features_in_ == 4 and tl.is_categorical_ is None
    assert not tl.do_early_stopping_ and tl.train_score_.size == 0
    np.testing.assert_array_equal(tl.classes_, [False, True])
    reg = HistGradientBoostingRegressor(**SMALL, device="cpu").fit(X, y)
    assert isinstance(reg.predict(X_test), np.ndarray)


def raised(make, X, y, method="fit", X_pred=None):
    """The exception type and message of a fit (or of a prediction after a fit)."""
    try:
        est = make()
        if method == "fit":
            est.fit(X, y)
        else:
            getattr(est.fit(X, y) if X is not None else est, method)(X_pred)
    except Exception as error:  # noqa: BLE001 - compared with scikit-learn's
        message = str(error).replace("HistGradientBoosting", "HGB")
        # a set of options prints in an order that depends on PYTHONHASHSEED: sorted here
        message = re.sub(r"\{([^{}]*)\}",
                         lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}",
                         message)  # fmt: skip
        return type(error), message
    return None


@pytest.mark.parametrize(
    "params, X_kind, y_kind, method",
    [
        ({}, "ok", "nan", "fit"),
        ({}, "ok", "ok", "wrong_n_features"),
        ({}, None, None, "predict"),
        ({"max_iter": 0}, "ok", "ok", "fit"),
        ({"learning_rate": -1.0}, "ok", "ok", "fit"),
        ({"max_bins": 256}, "ok", "ok", "fit"),
        ({"loss": "hinge"}, "ok", "ok", "fit"),
        ({"max_features": 0}, "ok", "ok", "fit"),
        ({"interaction_cst": [[0, 7]]}, "ok", "ok", "fit"),
        ({"interaction_cst": [0, 1]}, "ok", "ok", "fit"),
        ({"monotonic_cst": [1, 0]}, "ok", "ok", "fit"),
        ({"categorical_features": [1.5]}, "ok", "ok", "fit"),
        ({"loss": "poisson"}, "ok", "negative", "fit"),
        ({"loss": "gamma"}, "ok", "negative", "fit"),
        ({"loss": "quantile"}, "ok", "ok", "fit"),
        ({}, "empty", "empty", "fit"),
        ({}, "inf_y", "ok", "fit"),
    ],
)
def test_errors_as_scikit_learn(params, X_kind, y_kind, method):
    X, y, X_test = data(0, n=60)
    X = {"ok": X, "empty": X[:0], "inf_y": X, None: None}[X_kind]
    y = {"ok": y, "nan": np.where(np.arange(60) == 3, np.nan, y), "negative": y,
         "empty": y[:0], None: None}[y_kind]  # fmt: skip
    if X_kind == "inf_y":
        y = np.where(np.arange(60) == 3, np.inf, y)
    X_pred = X_test[:, :3] if method == "wrong_n_features" else X_test
    method = "predict" if method == "wrong_n_features" else method
    expected = raised(lambda: ensemble.HistGradientBoostingRegressor(**params), X, y, method,
                      X_pred)  # fmt: skip
    got = raised(lambda: HistGradientBoostingRegressor(**params), X, y, method, X_pred)
    assert expected is not None
    assert got == expected


def test_classifier_errors_as_scikit_learn():
    X, y, _ = data(0, n=60)
    labels = np.digitize(y, [-0.5, 0.5])
    for params in ({"monotonic_cst": [1, 0, 0, 0]}, {"class_weight": "unbalanced"},
                   {"loss": "squared_error"}):  # fmt: skip
        expected = raised(lambda p=params: ensemble.HistGradientBoostingClassifier(**p), X, labels)
        got = raised(lambda p=params: HistGradientBoostingClassifier(**p), X, labels)
        assert expected is not None and got == expected
    with pytest.raises(NotFittedError):
        HistGradientBoostingClassifier().predict_proba(X)
    with pytest.raises(InvalidParameterError):
        HistGradientBoostingClassifier(early_stopping="yes").fit(X, labels)


def test_categorical_features_fallback_follows_scikit_learn():
    # scikit-learn 1.6 (Colab's) has no _check_categorical_features: treelib's own must
    # give what scikit-learn 1.9.1's gives, errors included
    import pandas as pd
    from sklearn.utils.validation import _check_categorical_features as theirs

    from treelib.hist_gradient_boosting import _check_categorical_features_pandas as ours

    frame = pd.DataFrame(
        {"a": pd.Categorical([1, 2, 1]), "b": [1.0, 2.0, 3.0], "c": pd.Categorical(["x", "y", "x"])}
    )
    array = np.zeros((3, 3))
    cases = [
        (frame, "from_dtype"), (frame, ["b"]), (frame, [0, 2]), (frame, [True, False, True]),
        (frame, None), (frame, []), (array, "from_dtype"), (array, [1]), (array, [False] * 3),
        (array, ["a"]), (array, [3]), (array, [True, False]), (array, [0.5]), (frame, ["zz"]),
        (frame, [1, "b"]),
    ]  # fmt: skip
    for X, spec in cases:
        try:
            expected = theirs(X, spec)
        except ValueError as error:
            with pytest.raises(ValueError, match=re.escape(str(error))):
                ours(X, spec)
            continue
        got = ours(X, spec)
        assert (got is None) == (expected is None), spec
        if expected is not None:
            np.testing.assert_array_equal(got, expected)


def test_binomial_loss_pieces_follow_scikit_learn():
    # log(1 + exp(x)) piece by piece, and the gradient and hessian with their small-x
    # branch, against scikit-learn's compiled loss on every piece's range
    from sklearn._loss.loss import HalfBinomialLoss as Theirs

    from treelib.hist_gradient_boosting import HalfBinomialLoss

    raw = np.concatenate([np.linspace(-60, 60, 2401), [-37.0, -2.0, 18.0, 33.3]])
    y = (np.arange(len(raw)) % 2).astype(np.float64)
    theirs = Theirs()
    ours = HalfBinomialLoss()
    np.testing.assert_allclose(
        ours.pointwise(torch.from_numpy(y), torch.from_numpy(raw)).numpy(),
        theirs.loss(y_true=y, raw_prediction=raw),
        rtol=1e-15,
        atol=1e-300,
    )
    g, h = ours.grad_hess(torch.from_numpy(y), torch.from_numpy(raw))
    g_sk, h_sk = theirs.gradient_hessian(y_true=y, raw_prediction=raw)
    np.testing.assert_allclose(g.numpy(), g_sk, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(h.numpy(), h_sk, rtol=1e-15, atol=1e-300)
