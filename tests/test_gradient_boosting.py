"""treelib's gradient boosting against scikit-learn's (Chapter 8).

Equality is checked on tie-free data sets only. A data set is tie-free for a
setting when neither library's tie-breaking matters: scikit-learn grows the
same trees for three random states (its random feature order breaks exact
ties) and treelib grows the same trees for two (its hashed feature order breaks
ties and near-ties, within ``treelib.split.tie_tolerance``). Classification
targets make ties common: at the first stage the negative gradient takes one
value per class, so splits that cut the same numbers of each class score alike.
"""

import warnings

import numpy as np
import pytest
import torch
from sklearn import ensemble as ske
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelib import GradientBoostingClassifier, GradientBoostingRegressor
from treelib.gradient_boosting import newton_leaf_values, random_sample_mask

KINDS = ("regressor", "binary", "multiclass")
N_TIE_FREE = 20  # data sets per kind on which every tree is compared
PARAMS = dict(n_estimators=10, max_depth=3, min_samples_leaf=5, learning_rate=0.3)
# Depth 3 leaves too few 3-class data sets tie-free (ties at the first stage).
KIND_PARAMS = {"regressor": PARAMS, "binary": PARAMS, "multiclass": dict(PARAMS, max_depth=2)}
FIELDS_EXACT = ("children_left", "children_right", "feature", "n_node_samples")
FIELDS_CLOSE = ("threshold", "impurity", "weighted_n_node_samples", "value")


def make_data(kind, seed, n=160, p=3):
    """Continuous features (no duplicated values); a smooth signal plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    assert all(len(np.unique(column)) == n for column in X.T)
    signal = X[:, 0] + np.sin(2 * X[:, 1]) + 0.5 * X[:, 1] * X[:, 2]
    noise = rng.normal(size=n)
    if kind == "regressor":
        return X, signal + 0.3 * noise
    if kind == "binary":
        return X, np.where(signal + 0.7 * noise > 0, "yes", "no")
    return X, np.digitize(signal + 0.5 * noise, [-0.5, 0.5])


def classes(kind):
    if kind == "regressor":
        return ske.GradientBoostingRegressor, GradientBoostingRegressor
    return ske.GradientBoostingClassifier, GradientBoostingClassifier


def same_structure(a, b):
    """Same trees, node for node (structure only)."""
    for ta, tb in zip(a.estimators_.ravel(), b.estimators_.ravel(), strict=True):
        ta, tb = ta.tree_, tb.tree_
        if ta.node_count != tb.node_count:
            return False
        if not all(np.array_equal(getattr(ta, f), getattr(tb, f)) for f in FIELDS_EXACT):
            return False
    return True


def assert_same_trees(ours, theirs, atol=1e-9):
    """Every tree's ``tree_`` equal: structure exact, floats within atol."""
    assert ours.estimators_.shape == theirs.estimators_.shape
    pairs = zip(ours.estimators_.ravel(), theirs.estimators_.ravel(), strict=True)
    for index, (ta, tb) in enumerate(pairs):
        a, b = ta.tree_, tb.tree_
        assert a.node_count == b.node_count, f"tree {index}: {a.node_count} vs {b.node_count}"
        for field in FIELDS_EXACT:
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), f"{index} {field}")
        for field in FIELDS_CLOSE:
            np.testing.assert_allclose(
                getattr(a, field), getattr(b, field), rtol=0, atol=atol, err_msg=f"{index} {field}"
            )


def outputs(model, X):
    """What is compared: raw scores, predictions and (classifiers) probabilities."""
    if isinstance(model, (ske.GradientBoostingRegressor, GradientBoostingRegressor)):
        return {"predict": model.predict(X)}
    return {
        "decision_function": model.decision_function(X),
        "predict_proba": model.predict_proba(X),
        "predict": model.predict(X),
    }


def assert_same_outputs(ours, theirs, X, atol=1e-9):
    """Same predicted labels; scores and probabilities within atol."""
    expected = outputs(theirs, X)
    for name, value in outputs(ours, X).items():
        if name == "predict" and not isinstance(ours, GradientBoostingRegressor):
            np.testing.assert_array_equal(value, expected[name])
        else:
            np.testing.assert_allclose(value, expected[name], rtol=0, atol=atol, err_msg=name)


def dyadic_weights(seed, n):
    """Weights k/4, some 0: sums are exact, so a pure node's impurity is exactly 0.

    (With arbitrary floats scikit-learn can see a pure node's impurity as 4e-16
    and split it further; treelib does not. See tests/sklearn_reference.py.)
    """
    return np.random.default_rng(1000 + seed).integers(0, 17, size=n) / 4.0


def tie_free_fits(kind, params, n_wanted=N_TIE_FREE, max_tries=60, weighted=False):
    """``(X, y, w, ours, theirs)`` on the first ``n_wanted`` tie-free data sets."""
    sk_class, our_class = classes(kind)
    found = []
    for seed in range(max_tries):
        X, y = make_data(kind, seed)
        w = dyadic_weights(seed, len(y)) if weighted else None
        theirs = [sk_class(random_state=s, **params).fit(X, y, w) for s in range(3)]
        if not all(same_structure(theirs[0], other) for other in theirs[1:]):
            continue
        ours = [our_class(random_state=s, **params).fit(X, y, w) for s in range(2)]
        if not all(same_structure(ours[0], other) for other in ours[1:]):
            continue
        found.append((X, y, w, ours[0], theirs[0]))
        if len(found) == n_wanted:
            return found
    raise AssertionError(f"only {len(found)} tie-free data sets in {max_tries} tries")


@pytest.fixture(scope="module", params=KINDS)
def fitted(request):
    return request.param, tie_free_fits(request.param, KIND_PARAMS[request.param])


def test_every_tree_equals_sklearn(fitted):
    kind, fits = fitted
    assert len(fits) >= N_TIE_FREE
    for *_, ours, theirs in fits:
        assert_same_trees(ours, theirs)
        assert ours.n_estimators_ == theirs.n_estimators_ == PARAMS["n_estimators"]


def test_predictions_equal_sklearn(fitted):
    kind, fits = fitted
    for X, _, _, ours, theirs in fits:
        rng = np.random.default_rng(0)
        X_new = np.vstack([X, rng.normal(size=X.shape).astype(np.float32)])
        assert_same_outputs(ours, theirs, X_new)
        if kind != "regressor":
            np.testing.assert_array_equal(ours.classes_, theirs.classes_)
            assert ours.n_classes_ == theirs.n_classes_
            np.testing.assert_allclose(
                ours.predict_log_proba(X), theirs.predict_log_proba(X), rtol=0, atol=1e-9
            )
        np.testing.assert_allclose(ours.train_score_, theirs.train_score_, rtol=0, atol=1e-9)
        np.testing.assert_allclose(
            ours.feature_importances_, theirs.feature_importances_, rtol=0, atol=1e-9
        )
        np.testing.assert_array_equal(ours.apply(X), theirs.apply(X))


def test_staged_predictions_equal_sklearn(fitted):
    kind, fits = fitted
    for X, _, _, ours, theirs in fits[:5]:
        staged = [("staged_predict", np.testing.assert_array_equal)]
        if kind == "regressor":
            staged = [("staged_predict", np.testing.assert_allclose)]
        else:
            staged += [("staged_predict_proba", None), ("staged_decision_function", None)]
        for name, compare in staged:
            ours_stages = list(getattr(ours, name)(X))
            their_stages = list(getattr(theirs, name)(X))
            assert len(ours_stages) == len(their_stages) == PARAMS["n_estimators"]
            for a, b in zip(ours_stages, their_stages, strict=True):
                if compare is None:
                    np.testing.assert_allclose(np.squeeze(a), np.squeeze(b), rtol=0, atol=1e-9)
                else:
                    compare(a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_subsample_draws_the_same_rows_as_sklearn(kind):
    """With continuous weights the in-bag weight sum identifies the rows drawn."""
    sk_class, our_class = classes(kind)
    params = dict(PARAMS, subsample=0.7, n_estimators=6)
    for seed in range(4):
        X, y = make_data(kind, seed)
        w = np.random.default_rng(seed).uniform(0.5, 2.0, size=len(y))
        ours = our_class(random_state=seed, **params).fit(X, y, sample_weight=w)
        theirs = sk_class(random_state=seed, **params).fit(X, y, sample_weight=w)
        for ta, tb in zip(ours.estimators_.ravel(), theirs.estimators_.ravel(), strict=True):
            assert ta.tree_.n_node_samples[0] == tb.tree_.n_node_samples[0] == 112
            np.testing.assert_allclose(
                ta.tree_.weighted_n_node_samples[0], tb.tree_.weighted_n_node_samples[0], rtol=1e-12
            )
        assert_same_trees(ours, theirs)
        for name in ("train_score_", "oob_scores_", "oob_improvement_"):
            np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), atol=1e-9)
        assert ours.oob_score_ == pytest.approx(theirs.oob_score_, abs=1e-9)
        assert_same_outputs(ours, theirs, X)


def test_refit_without_subsample_drops_oob_attributes():
    X, y = make_data("regressor", 0)
    model = GradientBoostingRegressor(n_estimators=3, subsample=0.5, random_state=0).fit(X, y)
    assert model.oob_scores_.shape == (3,)
    model.set_params(subsample=1.0).fit(X, y)
    assert not hasattr(model, "oob_scores_") and not hasattr(model, "oob_improvement_")


def test_random_sample_mask_matches_sklearn():
    from sklearn.ensemble._gradient_boosting import _random_sample_mask

    for n, n_inbag in [(10, 3), (101, 50), (7, 7), (5, 1)]:
        ours = random_sample_mask(n, n_inbag, np.random.RandomState(n))
        theirs = _random_sample_mask(n, n_inbag, np.random.RandomState(n))
        np.testing.assert_array_equal(ours, theirs)
        assert ours.sum() == n_inbag


@pytest.mark.parametrize("kind", KINDS)
def test_sample_weight_equals_sklearn(kind):
    """Weights k/4 with some zeros, on tie-free data sets."""
    for X, _, w, ours, theirs in tie_free_fits(kind, KIND_PARAMS[kind], 5, weighted=True):
        assert (w == 0).any() and len(np.unique(w)) > 2
        assert_same_trees(ours, theirs)
        assert_same_outputs(ours, theirs, X)
        np.testing.assert_allclose(ours.train_score_, theirs.train_score_, rtol=0, atol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_early_stopping_stops_where_sklearn_does(kind):
    sk_class, our_class = classes(kind)
    params = dict(
        n_estimators=200, max_depth=3, min_samples_leaf=5, learning_rate=0.5,
        n_iter_no_change=3, validation_fraction=0.2, tol=1e-3,
    )  # fmt: skip
    X, y = make_data(kind, 1, n=300)
    theirs = sk_class(random_state=0, **params).fit(X, y)
    ours = our_class(random_state=0, **params).fit(X, y)
    assert theirs.n_estimators_ < 200  # it does stop early
    assert ours.n_estimators_ == theirs.n_estimators_
    assert ours.estimators_.shape == theirs.estimators_.shape
    np.testing.assert_allclose(ours.train_score_, theirs.train_score_, rtol=0, atol=1e-9)


def test_newton_leaf_values_by_hand():
    """Two leaves; the second has p(1 - p) = 0 everywhere and gets 0."""
    leaves = torch.tensor([1, 1, 2, 2])
    g = torch.tensor([0.5, -0.25, 0.0, 0.0], dtype=torch.float64)
    h = torch.tensor([0.25, 0.1875, 0.0, 0.0], dtype=torch.float64)
    w = torch.tensor([1.0, 2.0, 1.0, 1.0], dtype=torch.float64)
    values = newton_leaf_values(leaves, g, h, w, n_nodes=3)
    # leaf 1: (0.5 - 0.5) / (0.25 + 0.375) = 0
    assert values[1].item() == pytest.approx(0.0)
    assert values[2].item() == 0.0
    w = torch.tensor([3.0, 2.0, 1.0, 1.0], dtype=torch.float64)
    # leaf 1: (1.5 - 0.5) / (0.75 + 0.375) = 1 / 1.125
    assert newton_leaf_values(leaves, g, h, w, 3)[1].item() == pytest.approx(1 / 1.125)
    assert newton_leaf_values(leaves, g, h, w, 3, scale=0.5)[1].item() == pytest.approx(0.5 / 1.125)


@pytest.mark.parametrize("kind", KINDS)
def test_hist_equals_levelwise_when_every_value_has_its_bin(kind):
    _, our_class = classes(kind)
    X, y = make_data(kind, 3)  # 160 distinct values per feature < 255 bins
    exact = our_class(random_state=0, **PARAMS).fit(X, y)
    hist = our_class(random_state=0, tree_method="hist", max_bins=255, **PARAMS).fit(X, y)
    assert_same_trees(hist, exact, atol=0)
    for name, value in outputs(exact, X).items():
        np.testing.assert_array_equal(outputs(hist, X)[name], value)
    coarse = our_class(random_state=0, tree_method="hist", max_bins=8, **PARAMS).fit(X, y)
    assert not same_structure(coarse, exact)  # the comparison can tell models apart


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(learning_rate=-0.1), "learning_rate"),
        (dict(learning_rate="fast"), "learning_rate"),
        (dict(subsample=0.0), "subsample"),
        (dict(subsample=1.5), "subsample"),
        (dict(n_estimators=0), "n_estimators"),
        (dict(validation_fraction=1.0, n_iter_no_change=2), "validation_fraction"),
        (dict(n_iter_no_change=0), "n_iter_no_change"),
        (dict(tol=-1.0), "tol"),
        (dict(tree_method="exact"), "tree_method"),
        (dict(max_depth=0), "max_depth"),
    ],
)
@pytest.mark.parametrize("our_class", [GradientBoostingRegressor, GradientBoostingClassifier])
def test_bad_parameters_raise_clear_errors(our_class, params, message):
    X, y = data_for(our_class)
    with pytest.raises(ValueError, match=message):
        our_class(**{"n_estimators": 2, **params}).fit(X, y)


def data_for(our_class):
    """Binary data; numeric targets for the regressor."""
    X, y = make_data("binary", 0)
    return X, (y if our_class is GradientBoostingClassifier else (y == "yes") * 1.0)


@pytest.mark.parametrize("our_class", [GradientBoostingRegressor, GradientBoostingClassifier])
def test_bad_input_raises_clear_errors(our_class):
    X, y = data_for(our_class)
    model = our_class(n_estimators=2)
    with pytest.raises(NotFittedError):
        model.predict(X)
    X_nan = X.copy()
    X_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        our_class(n_estimators=2).fit(X_nan, y)
    model.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(X_nan)


def test_one_weighted_class_is_an_error():
    X, y = make_data("binary", 0)
    with pytest.raises(ValueError, match="class"):
        GradientBoostingClassifier(n_estimators=2).fit(X, y, sample_weight=(y == "yes") * 1.0)


def test_criterion_is_ignored_by_sklearn():
    """What the module docstring says: scikit-learn's trees split on squared error."""
    X, y = make_data("regressor", 0)
    default = ske.GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        friedman = ske.GradientBoostingRegressor(
            n_estimators=3, random_state=0, criterion="friedman_mse"
        ).fit(X, y)
    assert any(issubclass(w.category, FutureWarning) for w in caught)
    assert all(t.criterion == "squared_error" for t in friedman.estimators_.ravel())
    np.testing.assert_array_equal(friedman.predict(X), default.predict(X))


def test_numpy_outputs_and_torch_input():
    X, y = make_data("multiclass", 0)
    model = GradientBoostingClassifier(n_estimators=3).fit(torch.from_numpy(X), torch.from_numpy(y))
    for value in (model.predict_proba(X), model.decision_function(X), model.predict(X)):
        assert isinstance(value, np.ndarray)
    assert model.estimators_.shape == (3, 3)
    assert model.apply(X).shape == (len(X), 3, 3)
    reg = GradientBoostingRegressor(n_estimators=3).fit(X, y.astype(float))
    assert reg.apply(X).shape == (len(X), 3)


def test_max_features_is_reproducible_and_used():
    """treelib draws features its own way (not scikit-learn's): same seed, same model."""
    X, y = make_data("regressor", 0, p=6)
    params = dict(n_estimators=5, max_features=2, random_state=3)
    a = GradientBoostingRegressor(**params).fit(X, y)
    b = GradientBoostingRegressor(**params).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert all(t.max_features_ == 2 for t in a.estimators_.ravel())
    full = GradientBoostingRegressor(n_estimators=5, random_state=3).fit(X, y)
    assert not same_structure(a, full)


def test_feature_names_device_and_verbose(capsys):
    import pandas as pd

    X, y = make_data("binary", 0)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    clf = GradientBoostingClassifier(n_estimators=2, verbose=1).fit(frame, y)
    np.testing.assert_array_equal(clf.feature_names_in_, ["a", "b", "c"])
    assert capsys.readouterr().out.count("train loss") == 2
    with pytest.raises(ValueError, match="device"):
        GradientBoostingClassifier(n_estimators=2, device="nowhere").fit(X, y)


@parametrize_with_checks(
    [GradientBoostingRegressor(n_estimators=10), GradientBoostingClassifier(n_estimators=10)]
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("kind", ["regressor", "multiclass"])
@pytest.mark.parametrize("max_features", [None, 7, 1, 0.35, 0.01, 1.0, "sqrt", "log2"])
def test_max_features_attribute_as_sklearn(kind, max_features):
    """``max_features_`` after fit is scikit-learn's (its ``_set_max_features``)."""
    X, y = make_data(kind, 0, n=40, p=30)  # 30 features: sqrt 5, log2 4, 0.35 * 30 = 10.5
    sk_class, our_class = classes(kind)
    params = dict(n_estimators=2, max_depth=2, max_features=max_features, random_state=0)
    ours = our_class(**params).fit(X, y)
    theirs = sk_class(**params).fit(X, y)
    assert ours.max_features_ == theirs.max_features_
    assert type(ours.max_features_) is int
    assert all(t.max_features_ == ours.max_features_ for t in ours.estimators_.ravel())
