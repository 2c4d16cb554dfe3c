"""Multi-output y, y of shape (n_samples, n_outputs), against scikit-learn (Chapter 3).

Trees are compared field by field with scikit-learn's on data where scikit-learn
itself grows one tree whatever its random state (``tie_free_sklearn_fit``), so
the comparison does not depend on how ties are broken.
"""

import warnings

import matplotlib
import numpy as np
import pytest
from sklearn import ensemble as skensemble
from sklearn import tree as sktree
from sklearn.base import is_classifier
from sklearn.exceptions import DataConversionWarning

from tests.sklearn_reference import assert_same_tree, dyadic_weights, tie_free_sklearn_fit
from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    export_text,
    plot_tree,
)

matplotlib.use("Agg")

N_SETS = 30  # random data sets tried per kind; at least 20 must be tie-free


def classification_set(seed):
    """Continuous X; 2 or 3 outputs with 2 to 4 classes each (different counts)."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(60, 121)), int(rng.integers(3, 6))
    X = rng.normal(size=(n, p))
    n_classes = [2, 3, 4][: 2 + seed % 2]
    columns = []
    for k, c in enumerate(n_classes):  # labels depend on X, with noise
        score = X[:, k % p] + 0.5 * X[:, (k + 1) % p] + rng.normal(scale=0.7, size=n)
        columns.append(np.digitize(score, np.quantile(score, np.linspace(0, 1, c + 1)[1:-1])))
    y = np.stack(columns, axis=1)
    y[:, 0] = np.array([-1, 1])[y[:, 0]]  # labels other than 0..K-1
    return X, y


def regression_set(seed):
    rng = np.random.default_rng(1000 + seed)
    n, p = int(rng.integers(60, 121)), int(rng.integers(3, 6))
    X = rng.normal(size=(n, p))
    k = 2 + seed % 2
    y = np.stack([X[:, j % p] * (j + 1) + rng.normal(size=n) for j in range(k)], axis=1)
    return X, y


def class_weight_of(seed, y):
    if seed % 3 == 0:
        return None
    if seed % 3 == 1:
        return "balanced"
    return [{c: 1.0 + i for i, c in enumerate(np.unique(col))} for col in y.T]


def tie_free_cases(make, kind, params_of):
    cases = []
    for seed in range(N_SETS):
        X, y = make(seed)
        params = params_of(seed, y)
        sample_weight = (
            dyadic_weights(np.random.default_rng(seed), len(y)) if seed % 4 == 3 else None
        )
        theirs = tie_free_sklearn_fit(kind, X, y, sample_weight, params, n_states=6)
        if theirs is not None:
            cases.append((X, y, sample_weight, params, theirs))
    assert len(cases) >= 20, f"only {len(cases)} tie-free sets"
    return cases


def classifier_params(seed, y):
    return dict(
        criterion=["gini", "entropy"][seed % 2],
        min_samples_leaf=10,  # (smaller leaves: many splits tie on class counts)
        max_depth=[None, 4][seed % 2],
        class_weight=class_weight_of(seed, y),
        max_leaf_nodes=[None, 12][seed % 5 == 4],
    )


def regressor_params(seed, y):
    return dict(min_samples_leaf=5, max_depth=[None, 5][seed % 2],
                max_leaf_nodes=[None, 12][seed % 5 == 4])  # fmt: skip


def test_classifier_trees_equal_sklearn_on_tie_free_sets():
    for X, y, w, params, theirs in tie_free_cases(classification_set, "classifier",
                                                   classifier_params):  # fmt: skip
        for tree_method in ("recursive", "levelwise", "hist"):  # all grow it recursively
            ours = DecisionTreeClassifier(**params, tree_method=tree_method, random_state=0)
            ours.fit(X, y, sample_weight=w)
            assert_same_tree(ours, theirs, atol=1e-9)
            assert ours.tree_.value.shape == theirs.tree_.value.shape
            np.testing.assert_array_equal(ours.tree_.n_classes, theirs.tree_.n_classes)
        assert ours.n_outputs_ == theirs.n_outputs_ == y.shape[1]
        np.testing.assert_array_equal(ours.n_classes_, theirs.n_classes_)
        for a, b in zip(ours.classes_, theirs.classes_, strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
        for a, b in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
            np.testing.assert_allclose(a, b, atol=1e-12)
        for a, b in zip(ours.predict_log_proba(X), theirs.predict_log_proba(X), strict=True):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_regressor_trees_equal_sklearn_on_tie_free_sets():
    for X, y, w, params, theirs in tie_free_cases(regression_set, "regressor", regressor_params):
        ours = DecisionTreeRegressor(**params, random_state=0).fit(X, y, sample_weight=w)
        assert_same_tree(ours, theirs, atol=1e-9)
        assert ours.tree_.value.shape == theirs.tree_.value.shape == (ours.tree_.node_count,
                                                                       y.shape[1], 1)  # fmt: skip
        assert ours.n_outputs_ == y.shape[1]
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-12)
        assert ours.predict(X).shape == y.shape
        X32 = X.astype(np.float32)
        np.testing.assert_allclose(ours.tree_.predict(X32), theirs.tree_.predict(X32), atol=1e-12)


def median_or_poisson_set(criterion):
    """:func:`regression_set` with positive targets for Poisson (counts for odd seeds)."""

    def make(seed):
        X, y = regression_set(seed)
        if criterion == "poisson":
            rng = np.random.default_rng(2000 + seed)
            y = rng.poisson(np.exp(y / 4)) + 0.0 if seed % 2 else np.exp(y / 4)
        return X, y

    return make


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_absolute_error_and_poisson_trees_equal_sklearn_on_tie_free_sets(criterion):
    """scikit-learn's MAE and Poisson with several outputs: the outputs' mean impurity.

    Every field of ``tree_``, depth-first and best-first, with and without weights.
    """

    def params_of(seed, y):
        return {**regressor_params(seed, y), "criterion": criterion}

    make = median_or_poisson_set(criterion)
    for X, y, w, params, theirs in tie_free_cases(make, "regressor", params_of):
        for tree_method in ("recursive", "hist"):  # (both grow it with the exact search)
            ours = DecisionTreeRegressor(**params, tree_method=tree_method, random_state=0)
            ours.fit(X, y, sample_weight=w)
            assert_same_tree(ours, theirs, atol=1e-9)
            inner = theirs.tree_.children_left >= 0
            np.testing.assert_array_equal(ours.tree_.threshold[inner],
                                          theirs.tree_.threshold[inner])  # fmt: skip
            np.testing.assert_allclose(ours.tree_.impurity, theirs.tree_.impurity, rtol=1e-12)
            assert ours.tree_.value.shape == theirs.tree_.value.shape == (
                ours.tree_.node_count, y.shape[1], 1)  # fmt: skip
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
        assert ours.predict(X).shape == y.shape


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_extra_tree_leaves_by_hand(criterion):
    """Random splits (extra trees) with several outputs: each leaf holds, per output, the
    weighted median (absolute error) or the weighted mean (Poisson) of its rows, and its
    impurity is the outputs' mean absolute deviation or half Poisson deviance, averaged."""
    X, y = median_or_poisson_set(criterion)(0)  # (continuous targets)
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    tree = DecisionTreeRegressor(
        criterion=criterion, splitter="random", max_depth=4, random_state=0
    )
    leaves = tree.fit(X, y, sample_weight=w).apply(X)
    assert tree.tree_.node_count > 7
    for leaf in np.unique(leaves):
        rows = leaves == leaf
        yl, wl = y[rows], w[rows]
        value, impurity = tree.tree_.value[leaf, :, 0], 0.0
        for k in range(y.shape[1]):
            if criterion == "absolute_error":
                order = np.argsort(yl[:, k])
                cumulative = np.cumsum(wl[order])
                at = np.searchsorted(cumulative, cumulative[-1] / 2, side="right")
                assert value[k] == yl[order[at], k] or np.isclose(  # (half reached exactly)
                    cumulative[at - 1], cumulative[-1] / 2, rtol=1e-12)  # fmt: skip
                impurity += np.dot(wl, np.abs(yl[:, k] - value[k])) / wl.sum()
            else:
                mean = np.dot(wl, yl[:, k]) / wl.sum()
                assert value[k] == pytest.approx(mean, rel=1e-12)
                impurity += np.dot(wl, yl[:, k] * np.log(yl[:, k] / mean)) / wl.sum()
        assert tree.tree_.impurity[leaf] == pytest.approx(impurity / y.shape[1], rel=1e-9)


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_forests_with_absolute_error_and_poisson_equal_sklearn(criterion):
    # scikit-learn's bootstrap draws; all features at every node and leaves of >= 10
    X, y = median_or_poisson_set(criterion)(2)
    params = dict(n_estimators=8, criterion=criterion, max_features=None, min_samples_leaf=10,
                  random_state=3, oob_score=True)  # fmt: skip
    ours = RandomForestRegressor(**params).fit(X, y)
    theirs = skensemble.RandomForestRegressor(**params).fit(X, y)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert_same_tree(a, b, atol=1e-9)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
    np.testing.assert_allclose(ours.oob_prediction_, theirs.oob_prediction_, rtol=1e-12)
    forest = ExtraTreesRegressor(n_estimators=3, criterion=criterion, max_depth=4, random_state=0)
    predictions = forest.fit(X, y).predict(X)
    assert predictions.shape == y.shape
    np.testing.assert_allclose(predictions, np.mean([t.predict(X) for t in forest], axis=0))


def test_pruned_multi_output_tree_equals_sklearn():
    X, y = classification_set(0)
    params = dict(min_samples_leaf=3, ccp_alpha=0.01)
    theirs = tie_free_sklearn_fit("classifier", X, y, None, params, n_states=6)
    assert theirs is not None
    assert_same_tree(DecisionTreeClassifier(**params, random_state=0).fit(X, y), theirs)


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_forests_equal_sklearn_tree_by_tree(kind):
    # all features at every node and leaves of >= 10 samples: tie-free trees, and
    # the bootstrap draws are scikit-learn's
    X, y = (classification_set if kind == "classifier" else regression_set)(2)
    params = dict(n_estimators=8, max_features=None, min_samples_leaf=10, random_state=3,
                  oob_score=True)  # fmt: skip
    if kind == "classifier":  # two binary outputs: OOB estimates exist (multilabel)
        y = np.stack([y[:, 0], (y[:, 1] > 0).astype(int)], axis=1)
        params["class_weight"] = [{-1: 1.0, 1: 2.0}, {0: 1.0, 1: 0.5}]
        ours = RandomForestClassifier(**params).fit(X, y)
        theirs = skensemble.RandomForestClassifier(**params).fit(X, y)
    else:
        ours = RandomForestRegressor(**params).fit(X, y)
        theirs = skensemble.RandomForestRegressor(**params).fit(X, y)
    assert ours.n_outputs_ == theirs.n_outputs_ == y.shape[1]
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert_same_tree(a, b, atol=1e-9)
    if kind == "classifier":
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
        for a, b in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
            np.testing.assert_allclose(a, b, atol=1e-12)
        assert ours.oob_decision_function_.shape == theirs.oob_decision_function_.shape
        np.testing.assert_allclose(
            ours.oob_decision_function_, theirs.oob_decision_function_, atol=1e-12
        )
    else:
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-12)
        np.testing.assert_allclose(ours.oob_prediction_, theirs.oob_prediction_, atol=1e-12)
    assert ours.oob_score_ == pytest.approx(theirs.oob_score_, abs=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-9)


@pytest.mark.parametrize("class_weight", ["balanced_subsample", "balanced"])
def test_multi_class_multi_output_forest_classifier_equals_sklearn(class_weight):
    X, y = classification_set(3)  # 3 outputs: 2, 3 and 4 classes
    w = dyadic_weights(np.random.default_rng(0), len(y)) if class_weight == "balanced" else None
    params = dict(n_estimators=6, max_features=None, min_samples_leaf=10, random_state=0,
                  class_weight=class_weight)  # fmt: skip
    ours = RandomForestClassifier(**params).fit(X, y, sample_weight=w)
    theirs = skensemble.RandomForestClassifier(**params).fit(X, y, sample_weight=w)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert_same_tree(a, b, atol=1e-9)
    np.testing.assert_array_equal(ours.n_classes_, theirs.n_classes_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for a, b in zip(ours.predict_log_proba(X), theirs.predict_log_proba(X), strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_extra_trees_average_their_trees_per_output():
    # the random thresholds are treelib's own: compare with the trees' average
    X, y = classification_set(1)
    forest = ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y)
    expected = [np.mean([t.predict_proba(X)[k] for t in forest], axis=0) for k in range(3)]
    for a, b in zip(forest.predict_proba(X), expected, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-12)
    assert forest.predict(X).shape == y.shape
    X, y = regression_set(1)
    forest = ExtraTreesRegressor(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(
        forest.predict(X), np.mean([t.predict(X) for t in forest], axis=0), atol=1e-12
    )


def test_string_labels_and_shapes_as_sklearn():
    X, y = classification_set(5)
    labels = np.array(["ant", "bee", "cat", "dog"], dtype=object)
    y = np.stack([labels[(y[:, 0] > 0).astype(int)], labels[y[:, 1]]], axis=1)
    ours = DecisionTreeClassifier(random_state=0, min_samples_leaf=3).fit(X, y)
    theirs = sktree.DecisionTreeClassifier(random_state=0, min_samples_leaf=3).fit(X, y)
    assert ours.predict(X).dtype == theirs.predict(X).dtype
    assert [p.shape for p in ours.predict_proba(X)] == [p.shape for p in theirs.predict_proba(X)]


def test_column_vector_y_is_one_output():
    X, y = classification_set(0)
    column = y[:, :1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scikit-learn's trees do not warn
        tree = DecisionTreeClassifier(random_state=0).fit(X, column)
    assert tree.n_outputs_ == 1 and tree.n_classes_ == 2
    np.testing.assert_array_equal(tree.classes_, [-1, 1])
    assert tree.predict(X).shape == (len(X),)
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed"):
        forest = RandomForestRegressor(n_estimators=2, random_state=0).fit(X, column * 1.0)
    assert forest.n_outputs_ == 1 and forest.predict(X).shape == (len(X),)


def test_errors_as_sklearn():
    X, y = classification_set(0)
    with pytest.raises(ValueError, match="number of elements in class_weight should match"):
        DecisionTreeClassifier(class_weight=[{-1: 0.5, 1: 1.0}]).fit(X, y)
    with pytest.raises(ValueError, match="class_weight should be a list of dicts"):
        DecisionTreeClassifier(class_weight={-1: 0.5, 1: 1.0}).fit(X, y)
    cst = np.zeros(X.shape[1], dtype=int)
    for estimator in (DecisionTreeClassifier(monotonic_cst=cst),
                      RandomForestClassifier(n_estimators=2, monotonic_cst=cst),
                      DecisionTreeRegressor(monotonic_cst=cst)):  # fmt: skip
        with pytest.raises(ValueError, match="not supported with multiple outputs"):
            estimator.fit(X, y if is_classifier(estimator) else y * 1.0)
    with pytest.raises(ValueError, match="The type of target cannot be used to compute OOB"):
        RandomForestClassifier(n_estimators=4, oob_score=True).fit(*classification_set(1))


def test_export_text_and_plot_tree_write_what_sklearn_writes():
    import matplotlib.pyplot as plt

    for X, y, _, params, theirs in tie_free_cases(classification_set, "classifier",
                                                  classifier_params)[:3]:  # fmt: skip
        ours = DecisionTreeClassifier(**params, random_state=0).fit(X, y)
        for show_weights in (False, True):
            assert export_text(ours, show_weights=show_weights) == sktree.export_text(
                theirs, show_weights=show_weights
            )
        boxes = [a.get_text().strip() for a in plot_tree(ours, max_depth=2)]
        expected = [a.get_text().strip() for a in sktree.plot_tree(theirs, max_depth=2)]
        assert boxes == [text for text in expected if text not in ("True", "False")]
        plt.close("all")
    X, y = regression_set(0)
    ours = DecisionTreeRegressor(max_depth=2, min_samples_leaf=5, random_state=0).fit(X, y)
    theirs = sktree.DecisionTreeRegressor(max_depth=2, min_samples_leaf=5, random_state=0)
    assert export_text(ours) == sktree.export_text(theirs.fit(X, y))
