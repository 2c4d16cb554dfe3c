"""Missing values (NaN) and monotonic constraints, as scikit-learn 1.9's trees (Chapter 6).

Equality is checked on data that is tie-free for both libraries
(``tests/sklearn_reference.py``): the whole ``tree_``, ``missing_go_to_left`` of
every split, and predictions on new data with NaN, for every builder.
"""

import numpy as np
import pytest
from sklearn import tree as sktree
from sklearn_reference import (
    BUILDERS,
    N_SETS,
    assert_same_tree,
    dyadic_weights,
    tie_free_for_treelib,
    tie_free_sklearn_fit,
)

import treelib
from treelib import DecisionTreeClassifier, DecisionTreeRegressor


def random_problem(seed, kind, nan_rate=(0.0, 0.4)):
    """A small random problem with NaN in X (continuous features and targets)."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(30, 250)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < rng.uniform(*nan_rate)] = np.nan
    if kind == "classifier":
        y, w = rng.integers(0, 3, n), dyadic_weights(rng, n)
    else:
        y, w = np.nan_to_num(X).sum(1) + rng.normal(size=n), None
    params = dict(max_depth=int(rng.integers(1, 8)), min_samples_leaf=int(rng.integers(1, 6)))
    X_new = rng.normal(size=(60, p)).astype(np.float32)
    X_new[rng.random((60, p)) < 0.3] = np.nan
    return X, y, w, params, X_new


def treelib_class(kind):
    return DecisionTreeClassifier if kind == "classifier" else DecisionTreeRegressor


def outputs(model, X, kind):
    return model.predict_proba(X) if kind == "classifier" else model.predict(X)


def assert_same_as_sklearn(ours, theirs, X_new, kind):
    assert_same_tree(ours, theirs)
    inner = theirs.tree_.children_left >= 0
    np.testing.assert_array_equal(
        ours.tree_.missing_go_to_left[inner], theirs.tree_.missing_go_to_left[inner]
    )
    np.testing.assert_allclose(outputs(ours, X_new, kind), outputs(theirs, X_new, kind), atol=1e-12)


def compare_tie_free_sets(kind, builder, problems, wanted, check_treelib_ties=True):
    """Fit treelib and scikit-learn on ``problems`` until ``wanted`` tie-free sets compared.

    ``problems`` yields ``(X, y, w, params, X_new)``; ``builder`` gives the
    ``tree_method`` (and e.g. ``max_leaf_nodes``). Returns how many were compared.
    """
    compared = 0
    for X, y, w, params, X_new in problems:
        params = {**params, **{k: v for k, v in builder.items() if k != "tree_method"}}
        theirs = tie_free_sklearn_fit(kind, X, y, w, params)
        if theirs is None or (
            check_treelib_ties and not tie_free_for_treelib(treelib_class(kind), X, y, w, params)
        ):
            continue
        ours = treelib_class(kind)(**params, tree_method=builder["tree_method"], random_state=0)
        assert_same_as_sklearn(ours.fit(X, y, sample_weight=w), theirs, X_new, kind)
        compared += 1
        if compared == wanted:
            break
    return compared


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: "-".join(map(str, b.values())))
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_missing_values_equal_sklearn(kind, builder):
    problems = (random_problem(seed, kind) for seed in range(2 * N_SETS))
    assert compare_tie_free_sets(kind, builder, problems, N_SETS) == N_SETS


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: "-".join(map(str, b.values())))
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_nan_only_at_predict_time_goes_to_the_bigger_child(kind, builder):
    """A tree that saw no NaN sends one to the child with more training samples."""
    problems = (random_problem(s, kind, nan_rate=(0.0, 0.0)) for s in range(2 * N_SETS))
    compared = compare_tie_free_sets(kind, builder, problems, N_SETS // 2, check_treelib_ties=False)
    assert compared == N_SETS // 2


def test_missing_side_by_hand():
    """Worked by hand: the NaN samples are class 1, so the best split sends them with x > 2.

    x = [1, 2, 3, 4, nan, nan], y = [0, 0, 1, 1, 1, 1]. Every threshold with the
    NaN on the left mixes the classes; ``x <= 2.5`` with the NaN on the right
    is pure on both sides (Gini 0), so it wins and ``missing_go_to_left`` is 0.
    With y = [1, 1, 0, 0, 1, 1] the NaN belong with the small values instead.
    """
    X = np.array([[1.0], [2.0], [3.0], [4.0], [np.nan], [np.nan]])
    tree = DecisionTreeClassifier(max_depth=1).fit(X, [0, 0, 1, 1, 1, 1])
    assert tree.tree_.threshold[0] == 2.5 and tree.tree_.missing_go_to_left[0] == 0
    assert tree.predict([[np.nan], [0.0]]).tolist() == [1, 0]
    tree = DecisionTreeClassifier(max_depth=1).fit(X, [1, 1, 0, 0, 1, 1])
    assert tree.tree_.threshold[0] == 2.5 and tree.tree_.missing_go_to_left[0] == 1
    assert tree.predict([[np.nan], [9.0]]).tolist() == [1, 0]


def test_nan_alone_on_one_side_has_an_infinite_threshold():
    """When only "missing or not" separates the classes, the threshold is inf (scikit-learn's)."""
    X = np.array([[1.0], [1.0], [1.0], [np.nan], [np.nan]])
    tree = DecisionTreeClassifier().fit(X, [0, 0, 0, 1, 1])
    theirs = sktree.DecisionTreeClassifier().fit(X, [0, 0, 0, 1, 1])
    assert tree.tree_.threshold[0] == np.inf == theirs.tree_.threshold[0]
    assert tree.predict([[np.nan], [5.0]]).tolist() == [1, 0]


def test_infinity_is_still_an_error():
    X = np.array([[1.0], [np.inf], [2.0]])
    with pytest.raises(ValueError, match="infinity"):
        DecisionTreeClassifier().fit(X, [0, 1, 0])
    tree = DecisionTreeClassifier().fit([[1.0], [2.0]], [0, 1])
    with pytest.raises(ValueError, match="infinity"):
        tree.predict([[np.inf]])


def test_a_categorical_feature_refuses_nan():
    X = np.array([[0.0], [1.0], [np.nan], [2.0]])
    with pytest.raises(ValueError, match="Categorical feature 0 has missing values"):
        DecisionTreeClassifier(categorical_features=[0]).fit(X, [0, 1, 0, 1])


# --- monotonic constraints ----------------------------------------------------------------


def monotonic_problem(seed, kind):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(40, 250)), int(rng.integers(1, 5))
    X = rng.normal(size=(n, p)).astype(np.float32)
    if seed % 3 == 0:
        X[rng.random((n, p)) < 0.2] = np.nan
    signal = np.nan_to_num(X) @ rng.normal(size=p)
    if kind == "classifier":
        y, w = (signal + rng.normal(size=n) > 0).astype(int), dyadic_weights(rng, n)
    else:
        y, w = signal + rng.normal(size=n), None
    params = dict(
        max_depth=int(rng.integers(1, 8)),
        min_samples_leaf=int(rng.integers(1, 6)),
        monotonic_cst=rng.integers(-1, 2, p).tolist(),
    )
    return X, y, w, params


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: "-".join(map(str, b.values())))
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_monotonic_cst_equal_sklearn(kind, builder):
    problems = (
        (X, y, w, params, X)  # predictions compared on the training data
        for X, y, w, params in (monotonic_problem(seed, kind) for seed in range(2 * N_SETS))
    )
    assert compare_tie_free_sets(kind, builder, problems, N_SETS) == N_SETS


@pytest.mark.parametrize("constraint", [1, -1])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_predictions_are_monotonic_along_a_constrained_feature(kind, constraint):
    """Property: moving one constrained feature, every other fixed, never breaks the order."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3)).astype(np.float32)
    signal = np.sin(3 * X[:, 0]) + X[:, 1]  # not monotonic in feature 0 by itself
    noise = 0.3 * rng.normal(size=400)
    y = (signal + noise > 0).astype(int) if kind == "classifier" else signal + noise
    grid = np.linspace(-3, 3, 301, dtype=np.float32)

    def worst_step(model):
        worst = 0.0
        for row in X[:40]:
            sweep = np.repeat(row[None], len(grid), 0)
            sweep[:, 0] = grid
            out = model.predict_proba(sweep)[:, 1] if kind == "classifier" else model.predict(sweep)
            worst = min(worst, float((np.diff(out) * constraint).min()))
        return worst

    cls = treelib_class(kind)
    assert worst_step(cls(monotonic_cst=[constraint, 0, 0], random_state=0).fit(X, y)) >= 0
    assert worst_step(cls(random_state=0).fit(X, y)) < 0  # the constraint is what does it


@pytest.mark.parametrize(
    "params, y",
    [
        (dict(monotonic_cst=[1, 0, 0]), [0, 1, 2, 0, 1, 2]),  # multiclass
        (dict(monotonic_cst=[1, 0]), [0, 1, 0, 1, 0, 1]),  # wrong length
        (dict(monotonic_cst=[2, 0, 0]), [0, 1, 0, 1, 0, 1]),  # not -1, 0 or 1
    ],
)
def test_monotonic_errors_are_sklearns(params, y):
    X = np.arange(18, dtype=np.float64).reshape(6, 3)
    with pytest.raises(ValueError) as theirs:
        sktree.DecisionTreeClassifier(**params).fit(X, y)
    with pytest.raises(ValueError) as ours:
        DecisionTreeClassifier(**params).fit(X, y)
    assert str(ours.value) == str(theirs.value)


def test_rules_live_in_one_module():
    """The split search, the builders and Tree route samples with the same function."""
    from treelib import grow, rules, split, tree_structure

    assert split.goes_left is rules.goes_left is grow.goes_left is tree_structure.goes_left
    assert split.is_tie_or_best is rules.is_tie_or_best
    assert treelib.levelwise.is_tie_or_best is rules.is_tie_or_best


def test_export_shows_where_nan_goes():
    """export_text and plot_tree name the NaN side of a tree that saw NaN, and only then."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    X = np.array([[1.0], [2.0], [3.0], [4.0], [np.nan], [np.nan]])
    tree = DecisionTreeClassifier(max_depth=1).fit(X, [0, 0, 1, 1, 1, 1])
    text = treelib.export_text(tree)
    assert text.splitlines()[0] == "|--- feature_0 <= 2.50"
    assert text.splitlines()[2] == "|--- feature_0 >  2.50 or NaN"
    _, ax = plt.subplots()
    boxes = [a.get_text() for a in treelib.plot_tree(tree, ax=ax)]
    assert "NaN goes right" in boxes[0]
    plt.close("all")
    clean = DecisionTreeClassifier(max_depth=1).fit(X[:4], [0, 0, 1, 1])
    assert "NaN" not in treelib.export_text(clean)
    assert treelib.export_text(clean) == sktree.export_text(
        sktree.DecisionTreeClassifier(max_depth=1).fit(X[:4], [0, 0, 1, 1])
    )


# --- forests ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
@pytest.mark.parametrize("tree_method", ["recursive", "levelwise", "hist"])
def test_forest_with_nan_equals_scikit_learns_trees_on_its_samples(kind, tree_method):
    """Each tree of a forest fitted with NaN is scikit-learn's tree on that tree's sample.

    treelib draws its own bootstrap samples, so compare tree by tree: refit
    scikit-learn on the rows (and counts) each treelib tree drew, with every
    feature searched (max_features=None keeps the comparison tie-free).
    """
    forest_class = (
        treelib.RandomForestClassifier if kind == "classifier" else (treelib.RandomForestRegressor)
    )
    compared = 0
    for seed in range(40):
        X, y, _, params, X_new = random_problem(seed, kind)
        forest = forest_class(
            n_estimators=3, max_features=None, random_state=seed, tree_method=tree_method,
            **params,
        ).fit(X, y)  # fmt: skip
        for tree, rows in zip(forest.estimators_, forest.estimators_samples_):
            counts = np.bincount(rows, minlength=len(X)).astype(np.float64)
            theirs = tie_free_sklearn_fit(kind, X, y, counts, params)
            if theirs is None or not tie_free_for_treelib(
                treelib_class(kind), X, y, counts, params
            ):
                continue
            assert_same_as_sklearn(tree, theirs, X_new, kind)
            compared += 1
        if compared >= 20:
            break
    assert compared >= 20
    assert forest.predict(X_new).shape == (len(X_new),)


def test_forest_monotonic_cst():
    """A forest of monotonic trees is monotonic; multiclass is refused with scikit-learn's error."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2)).astype(np.float32)
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=300)
    forest = treelib.RandomForestRegressor(n_estimators=10, monotonic_cst=[1, 0], random_state=0)
    forest.fit(X, y)
    sweep = np.repeat(X[:1], 200, 0)
    sweep[:, 0] = np.linspace(-3, 3, 200)
    assert (np.diff(forest.predict(sweep)) >= -1e-12).all()
    y3 = rng.integers(0, 3, 300)
    from sklearn.ensemble import RandomForestClassifier as SkForest

    with pytest.raises(ValueError) as theirs:
        SkForest(monotonic_cst=[1, 0]).fit(X, y3)
    with pytest.raises(ValueError) as ours:
        treelib.RandomForestClassifier(monotonic_cst=[1, 0]).fit(X, y3)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("builder", ["recursive", "levelwise", "hist"])
@pytest.mark.parametrize("constraint", [None, -1])
def test_a_nodes_sums_are_added_in_sample_order_as_scikit_learns(builder, constraint):
    # y = linspace(-2, 2, 10): adding in order gives exactly 0, a pairwise sum
    # -8.9e-16; against the constraint the root cannot split and predicts the mean
    X = np.linspace(-2, 2, 10).reshape(-1, 1)
    y = X.ravel()
    params = dict(monotonic_cst=None if constraint is None else [constraint])
    ours = DecisionTreeRegressor(tree_method=builder, **params).fit(X, y)
    theirs = sktree.DecisionTreeRegressor(**params).fit(X, y)
    assert ours.tree_.node_count == theirs.tree_.node_count
    # the root's samples come in their order (deeper, in scikit-learn's sort's order)
    assert ours.tree_.value[0, 0, 0] == theirs.tree_.value[0, 0, 0]  # bit for bit
    assert ours.tree_.impurity[0] == theirs.tree_.impurity[0]
    np.testing.assert_allclose(ours.tree_.value, theirs.tree_.value, rtol=0, atol=1e-12)
