"""Monotonic constraints in the level-wise and histogram builders (Chapters 6 and 7).

The level-wise (``tree_method="levelwise"``) and histogram (``"hist"``, with
bins holding every distinct value) builders grow monotonic trees themselves
(no fallback to the recursive builder): every field of ``tree_`` equals the
recursive builder's tree and scikit-learn 1.9's, on tie-free data
(``tests/sklearn_reference.py``), with and without NaN; with ``max_features``
below the number of features (scikit-learn draws other features) the
comparison is with the recursive builder. Forests grow them batched. With
coarse bins the histogram tree is not the exact one, but its predictions are
still monotonic.
"""

import numpy as np
import pytest
from sklearn import tree as sktree
from sklearn.ensemble import RandomForestClassifier as SkForestClassifier
from sklearn_reference import (
    N_SETS,
    assert_same_tree,
    dyadic_weights,
    tie_free_for_treelib,
    tie_free_sklearn_fit,
)

import treelib
from treelib import DecisionTreeClassifier, DecisionTreeRegressor
from treelib.batched import fit_trees_batched

FAST = ["levelwise", "hist"]


def tree_class(kind):
    return DecisionTreeClassifier if kind == "classifier" else DecisionTreeRegressor


def outputs(model, X, kind):
    return model.predict_proba(X) if kind == "classifier" else model.predict(X)


def problem(seed, kind, nan=False, partial_features=False):
    """A small random monotonic problem: continuous X (NaN if asked), a constraint per feature.

    The target follows a random linear signal plus noise (a binary class for
    the classifier, with dyadic sample weights). At most 250 samples: the
    histogram builder's default 255 bins hold every distinct value.
    """
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(40, 250)), int(rng.integers(2 if partial_features else 1, 6))
    X = rng.normal(size=(n, p)).astype(np.float32)
    if nan:
        X[rng.random((n, p)) < rng.uniform(0.05, 0.3)] = np.nan
    signal = np.nan_to_num(X) @ rng.normal(size=p)
    if kind == "classifier":
        y, w = (signal + rng.normal(size=n) > 0).astype(int), dyadic_weights(rng, n)
    else:
        y, w = signal + rng.normal(size=n), None
    cst = rng.integers(-1, 2, p)
    cst[int(rng.integers(p))] = rng.choice([-1, 1])  # at least one constrained feature
    params = dict(
        max_depth=int(rng.integers(1, 8)),
        min_samples_leaf=int(rng.integers(1, 6)),
        monotonic_cst=cst.tolist(),
    )
    if partial_features:
        params["max_features"] = int(rng.integers(1, p))
    X_new = rng.normal(size=(60, p)).astype(np.float32)
    if nan:
        X_new[rng.random((60, p)) < 0.3] = np.nan
    return X, y, w, params, X_new


def fit_all(kind, X, y, w, params, tree_method):
    """The tree grown by ``tree_method`` and the recursive builder's; checks the builder used."""
    cls, params = tree_class(kind), {"random_state": 0, **params}
    ours = cls(**params, tree_method=tree_method)
    assert ours._builder(missing=bool(np.isnan(X).any())) == tree_method  # no fallback
    ours.fit(X, y, sample_weight=w)
    exact = cls(**params, tree_method="recursive").fit(X, y, sample_weight=w)
    return ours, exact


def assert_same_as(ours, other, X_new, kind, atol=1e-12):
    assert_same_tree(ours, other, atol=atol)
    inner = other.tree_.children_left >= 0
    np.testing.assert_array_equal(
        ours.tree_.missing_go_to_left[inner], other.tree_.missing_go_to_left[inner]
    )
    np.testing.assert_allclose(outputs(ours, X_new, kind), outputs(other, X_new, kind), atol=atol)


@pytest.mark.parametrize("nan", [False, True], ids=["no-nan", "nan"])
@pytest.mark.parametrize("tree_method", FAST)
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_monotonic_tree_equals_recursive_and_sklearn(kind, tree_method, nan):
    compared = 0
    for seed in range(4 * N_SETS):
        X, y, w, params, X_new = problem(seed, kind, nan)
        theirs = tie_free_sklearn_fit(kind, X, y, w, params)
        if theirs is None or not tie_free_for_treelib(tree_class(kind), X, y, w, params):
            continue
        ours, exact = fit_all(kind, X, y, w, params, tree_method)
        assert_same_as(ours, exact, X_new, kind)
        assert_same_as(ours, theirs, X_new, kind, atol=1e-6)
        compared += 1
        if compared == N_SETS:
            break
    assert compared == N_SETS


@pytest.mark.parametrize("nan", [False, True], ids=["no-nan", "nan"])
@pytest.mark.parametrize("tree_method", FAST)
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_monotonic_tree_with_max_features_equals_recursive(kind, tree_method, nan):
    """``max_features`` < p: each node searches the features its key draws, in every builder.

    (scikit-learn draws other features: the comparison is with the recursive
    builder, on every set, each with its own ``random_state``.)
    """
    for seed in range(N_SETS):
        X, y, w, params, X_new = problem(seed, kind, nan, partial_features=True)
        ours, exact = fit_all(kind, X, y, w, {**params, "random_state": seed}, tree_method)
        assert_same_as(ours, exact, X_new, kind)


def test_a_constraint_changes_the_level_wise_tree():
    """Worked by hand: y falls with x, so +1 forbids every split and -1 allows them.

    x = 1..6, y = 6..1 (squared error). Every split puts a larger mean on the
    left, which ``monotonic_cst=[1]`` forbids: the tree is the root alone,
    value 3.5. With -1 it grows until the leaves are pure, as unconstrained.
    """
    X = np.arange(1, 7, dtype=np.float32)[:, None]
    y = np.arange(6, 0, -1, dtype=np.float64)
    for tree_method in FAST:
        up = DecisionTreeRegressor(monotonic_cst=[1], tree_method=tree_method).fit(X, y)
        assert up._builder() == tree_method
        assert up.tree_.node_count == 1 and up.tree_.value[0, 0, 0] == 3.5
        down = DecisionTreeRegressor(monotonic_cst=[-1], tree_method=tree_method).fit(X, y)
        assert down.tree_.node_count == 11
        np.testing.assert_array_equal(down.predict(X), y)


def test_values_are_clipped_to_the_bounds():
    """Worked by hand: a value outside its node's bounds is clipped, as scikit-learn does.

    x0 = [1, 1, 2, 2], x1 = [1, 2, 1, 2], y = [0, 8, 9, 11],
    ``monotonic_cst=[1, 0]``, depth 2. The root splits on x0 (squared errors
    32 + 2 = 34, against 40.5 + 4.5 = 45 on x1): means 4 and 10, so the left
    child's values stay at or below the middle 7 and the right child's at or
    above it. Each child then splits on x1, which is unconstrained (no check):
    the left child's leaves are 0 and 8, 8 clipped to 7; the right's 9 and 11.
    """
    X = np.array([[1, 1], [1, 2], [2, 1], [2, 2]], dtype=np.float32)
    y = np.array([0.0, 8.0, 9.0, 11.0])
    theirs = sktree.DecisionTreeRegressor(monotonic_cst=[1, 0], max_depth=2).fit(X, y)
    np.testing.assert_array_equal(theirs.predict(X), [0, 7, 9, 11])
    for tree_method in FAST:
        ours = DecisionTreeRegressor(monotonic_cst=[1, 0], max_depth=2, tree_method=tree_method)
        assert ours._builder() == tree_method
        ours.fit(X, y)
        np.testing.assert_array_equal(ours.tree_.value.ravel(), [7, 4, 0, 7, 10, 9, 11])
        assert_same_as(ours, theirs, X, "regressor")


@pytest.mark.parametrize("tree_method", FAST)
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_monotonic_forest_equals_recursive_forest_and_sklearn(kind, tree_method, monkeypatch):
    """A forest grows its monotonic trees batched; each is the recursive builder's and sklearn's.

    treelib draws its own bootstrap samples: each tree is compared with
    scikit-learn's tree refitted on that tree's rows and counts (every
    feature searched: ``max_features=None``), and with the tree of the same
    forest grown by the recursive builder.
    """
    forest_class = {
        "classifier": treelib.RandomForestClassifier,
        "regressor": treelib.RandomForestRegressor,
    }[kind]
    batched = []  # what each call of fit_trees_batched answered (True: grown batched)

    def spy(*args, **kwargs):
        batched.append(fit_trees_batched(*args, **kwargs))
        return batched[-1]

    monkeypatch.setattr(treelib.forest, "fit_trees_batched", spy)
    compared = 0
    for seed in range(60):
        X, y, _, params, X_new = problem(seed, kind, nan=seed % 2 == 1)
        settings = dict(n_estimators=3, max_features=None, random_state=seed, **params)
        forest = forest_class(**settings, tree_method=tree_method).fit(X, y)
        assert batched.pop() is True
        exact = forest_class(**settings, tree_method="recursive").fit(X, y)
        for tree, other, rows in zip(
            forest.estimators_, exact.estimators_, forest.estimators_samples_
        ):
            assert_same_as(tree, other, X_new, kind)
            counts = np.bincount(rows, minlength=len(X)).astype(np.float64)
            theirs = tie_free_sklearn_fit(kind, X, y, counts, params)
            if theirs is None or not tie_free_for_treelib(tree_class(kind), X, y, counts, params):
                continue
            assert_same_as(tree, theirs, X_new, kind, atol=1e-6)
            compared += 1
        if compared >= N_SETS:
            break
    assert compared >= N_SETS


@pytest.mark.parametrize("tree_method", FAST)
def test_multiclass_is_refused_with_sklearns_error(tree_method):
    """The level-wise builders are chosen, and refuse multiclass with scikit-learn's error."""
    assert DecisionTreeClassifier(monotonic_cst=[1, 0], tree_method=tree_method)._builder() == (
        tree_method
    )
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), rng.integers(0, 3, 60)
    with pytest.raises(ValueError) as theirs:
        sktree.DecisionTreeClassifier(monotonic_cst=[1, 0]).fit(X, y)
    for model in (
        DecisionTreeClassifier(monotonic_cst=[1, 0], tree_method=tree_method),
        treelib.RandomForestClassifier(monotonic_cst=[1, 0], tree_method=tree_method),
    ):
        with pytest.raises(ValueError) as ours:
            model.fit(X, y)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs:
        SkForestClassifier(monotonic_cst=[1, 0]).fit(X, y)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("nan", [False, True], ids=["no-nan", "nan"])
@pytest.mark.parametrize("constraint", [1, -1])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_coarse_histogram_trees_are_monotonic(kind, constraint, nan):
    """Property: with 16 bins (not the exact tree) predictions are monotonic along feature 0.

    Moving the constrained feature, every other fixed, never breaks the
    order; the same settings without the constraint do break it.
    """
    rng = np.random.default_rng(11)
    X = rng.normal(size=(2000, 3)).astype(np.float32)
    signal = np.sin(3 * X[:, 0]) + X[:, 1]  # not monotonic in feature 0 by itself
    noise = 0.3 * rng.normal(size=len(X))
    y = (signal + noise > 0).astype(int) if kind == "classifier" else signal + noise
    if nan:
        X[rng.random(X.shape) < 0.1] = np.nan
    grid = np.linspace(-3, 3, 301, dtype=np.float32)

    def worst_step(model):
        worst = 0.0
        for row in X[:40]:
            sweep = np.repeat(row[None], len(grid), 0)
            sweep[:, 0] = grid
            out = model.predict_proba(sweep)[:, 1] if kind == "classifier" else model.predict(sweep)
            worst = min(worst, float((np.diff(out) * constraint).min()))
        return worst

    cls, settings = tree_class(kind), dict(tree_method="hist", max_bins=16, random_state=0)
    model = cls(monotonic_cst=[constraint, 0, 0], **settings)
    assert model._builder(missing=nan) == "hist"
    assert worst_step(model.fit(X, y)) >= 0
    exact = cls(monotonic_cst=[constraint, 0, 0], tree_method="recursive").fit(X, y)
    assert not np.array_equal(model.tree_.threshold, exact.tree_.threshold)  # not exact
    assert worst_step(cls(**settings).fit(X, y)) < 0  # the constraint is what does it


@pytest.mark.parametrize("nan", [False, True], ids=["no-nan", "nan"])
@pytest.mark.parametrize("tree_method", FAST)
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_monotonic_in_small_blocks_equals_recursive(kind, tree_method, nan, monkeypatch):
    """The bounds follow the nodes through every batch, scan part and block of the searches.

    Tiny memory caps (blocks of rows and pieces of rows in the exact search,
    batches of histograms and parts of their scans) cut each level into many
    parts; the tree stays the recursive builder's.
    """
    monkeypatch.setattr(treelib.levelwise, "BLOCK", 64)
    monkeypatch.setattr(treelib.levelwise, "PIECE", 100)
    monkeypatch.setattr(treelib.hist, "MAX_CELLS", 300)
    monkeypatch.setattr(treelib.hist, "MAX_SCAN", 50)
    monkeypatch.setattr(treelib.hist, "CHUNK", 200)
    for seed in range(6):
        X, y, w, params, X_new = problem(seed, kind, nan, partial_features=seed % 2 == 1)
        ours, exact = fit_all(kind, X, y, w, {**params, "random_state": seed}, tree_method)
        assert_same_as(ours, exact, X_new, kind)
