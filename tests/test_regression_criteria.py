"""The regression criteria "absolute_error", "poisson" and "friedman_mse", as scikit-learn 1.9.

Chapter 3. Equality is checked on data that is tie-free for both libraries
(``tests/sklearn_reference.py``): the whole ``tree_`` for every builder, with
and without sample weights, NaN in X and monotonic constraints.
"""

import numpy as np
import pytest
from sklearn import datasets
from sklearn import ensemble as skensemble
from sklearn import tree as sktree
from sklearn_reference import BUILDERS, FIELDS_EXACT, N_SETS, tie_free_for_treelib

from treelib import (
    DecisionTreeRegressor,
    ExtraTreesRegressor,
    RandomForestRegressor,
)

RTOL = 1e-12


def random_problem(seed, criterion, weighted, nan=False, monotonic=False):
    """A small random problem: continuous X and y (positive y for Poisson)."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(30, 200)), int(rng.integers(1, 6))
    X = rng.normal(size=(n, p)).astype(np.float32)
    if nan:
        X[rng.random((n, p)) < rng.uniform(0.0, 0.4)] = np.nan
    y = np.nan_to_num(X).sum(1) + rng.normal(size=n)
    if criterion == "poisson":
        y = np.exp(y / 2)
    w = rng.uniform(0.5, 2.0, size=n) if weighted else None
    params = dict(max_depth=int(rng.integers(1, 8)), min_samples_leaf=int(rng.integers(1, 6)))
    if monotonic:
        params["monotonic_cst"] = rng.integers(-1, 2, size=p).tolist()
    return X, y, w, {"criterion": criterion, **params}


def sklearn_fits(X, y, w, params, n_states=8):
    """scikit-learn's tree if several random states grow the same one, else None."""
    fits = [
        sktree.DecisionTreeRegressor(random_state=s, **params).fit(X, y, sample_weight=w)
        for s in range(n_states)
    ]
    first = fits[0].tree_
    for other in fits[1:]:
        if other.tree_.node_count != first.node_count or not all(
            np.array_equal(getattr(first, f), getattr(other.tree_, f)) for f in FIELDS_EXACT
        ):
            return None
    return fits[0]


def assert_equal_trees(ours, theirs):
    """Structure exactly; thresholds, impurity, weights and values within 1e-12 relative."""
    a, b = ours.tree_, theirs.tree_
    assert a.node_count == b.node_count, f"{a.node_count} nodes vs {b.node_count}"
    for field in FIELDS_EXACT:
        np.testing.assert_array_equal(np.asarray(getattr(a, field)), getattr(b, field), field)
    inner = b.children_left >= 0
    np.testing.assert_array_equal(a.threshold[inner], b.threshold[inner])
    np.testing.assert_array_equal(a.missing_go_to_left[inner], b.missing_go_to_left[inner])
    for field in ("impurity", "weighted_n_node_samples", "value"):
        np.testing.assert_allclose(
            np.asarray(getattr(a, field)).ravel(), getattr(b, field).ravel(),
            rtol=RTOL, atol=RTOL * np.abs(theirs_scale(theirs)), err_msg=field,
        )  # fmt: skip


def theirs_scale(theirs):
    """The size of the targets: absolute rounding errors of near-zero impurities are below it."""
    return np.abs(theirs.tree_.value).max()


def compare(criterion, builder, wanted=N_SETS, **problem):
    compared = 0
    for seed in range(4 * wanted):
        X, y, w, params = random_problem(seed, criterion, **problem)
        params = {**params, **{k: v for k, v in builder.items() if k != "tree_method"}}
        theirs = sklearn_fits(X, y, w, params)
        if theirs is None or not tie_free_for_treelib(DecisionTreeRegressor, X, y, w, params):
            continue
        ours = DecisionTreeRegressor(**params, tree_method=builder["tree_method"], random_state=0)
        assert_equal_trees(ours.fit(X, y, sample_weight=w), theirs)
        X_new = np.random.default_rng(seed).normal(size=(40, X.shape[1])).astype(np.float32)
        np.testing.assert_allclose(ours.predict(X_new), theirs.predict(X_new), rtol=RTOL)
        compared += 1
        if compared == wanted:
            break
    assert compared == wanted, f"only {compared} tie-free sets"


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: "-".join(map(str, b.values())))
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_equal_sklearn(criterion, weighted, builder):
    compare(criterion, builder, weighted=weighted)


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: "-".join(map(str, b.values())))
@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_equal_sklearn_with_nan(criterion, builder):
    compare(criterion, builder, wanted=N_SETS // 2, weighted=True, nan=True)


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_equal_sklearn_monotonic(criterion):
    compare(
        criterion, dict(tree_method="levelwise"), wanted=N_SETS // 2, weighted=True, monotonic=True
    )


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_forest_equal_sklearn(criterion):
    """Without bootstrap and with every feature, each tree is scikit-learn's (weighted rows)."""
    X, y, w, _ = random_problem(3, criterion, weighted=True)
    params = dict(n_estimators=3, criterion=criterion, bootstrap=False, max_depth=4, random_state=0)
    ours = RandomForestRegressor(**params).fit(X, y, sample_weight=w)
    theirs = skensemble.RandomForestRegressor(**params).fit(X, y, sample_weight=w)
    for a, b in zip(ours.estimators_, theirs.estimators_):
        assert_equal_trees(a, b)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=RTOL)


def test_extra_trees_leaves_hold_the_weighted_median():
    """Random splits (Chapter 5) with absolute error: each leaf predicts its rows' median."""
    X, y, w, _ = random_problem(5, "absolute_error", weighted=False)
    forest = ExtraTreesRegressor(n_estimators=3, criterion="absolute_error", max_depth=3)
    for tree in forest.fit(X, y).estimators_:
        leaves = tree.apply(X)
        for leaf in np.unique(leaves):
            np.testing.assert_allclose(tree.tree_.value[leaf, 0, 0], np.median(y[leaves == leaf]))


def test_weighted_median_by_hand():
    """scikit-learn 1.9's weighted median: where the cumulative weight passes half the total.

    y = [1, 2, 3, 4]: with equal weights the cumulative weight reaches half (2 of 4)
    exactly at 2, so the median is the midpoint 2.5; with weights [1, 1, 3, 1] it
    first exceeds half (3 of 6) at 3; with weights [3, 1, 1, 1] it reaches
    half exactly at 1: the midpoint 1.5. Impurity: the mean absolute deviation.
    """
    X = np.zeros((4, 1))
    for w, median in (([1, 1, 1, 1], 2.5), ([1, 1, 3, 1], 3.0), ([3, 1, 1, 1], 1.5)):
        tree = DecisionTreeRegressor(criterion="absolute_error").fit(X, [1, 2, 3, 4], w)
        assert tree.tree_.value[0, 0, 0] == median
        deviation = np.dot(w, np.abs(np.array([1, 2, 3, 4]) - median)) / np.sum(w)
        assert tree.tree_.impurity[0] == pytest.approx(deviation, rel=1e-15)
        theirs = sktree.DecisionTreeRegressor(criterion="absolute_error").fit(X, [1, 2, 3, 4], w)
        assert theirs.tree_.value[0, 0, 0] == median


@pytest.mark.parametrize(
    "cls, sk_cls",
    [
        (DecisionTreeRegressor, sktree.DecisionTreeRegressor),
        (RandomForestRegressor, skensemble.RandomForestRegressor),
        (ExtraTreesRegressor, skensemble.ExtraTreesRegressor),
    ],
)
def test_friedman_mse_is_squared_error_with_a_future_warning(cls, sk_cls):
    with pytest.warns(FutureWarning) as ours:
        model = cls(criterion="friedman_mse")
    with pytest.warns(FutureWarning) as theirs:
        sk_cls(criterion="friedman_mse")
    assert str(ours[0].message) == str(theirs[0].message)
    assert model.get_params()["criterion"] == "squared_error"


@pytest.mark.parametrize(
    "cls, sk_cls",
    [
        (DecisionTreeRegressor, sktree.DecisionTreeRegressor),
        (RandomForestRegressor, skensemble.RandomForestRegressor),
    ],
)
@pytest.mark.parametrize("y", [[0.0, 0.0, 0.0], [5.0, -0.1, 2.0]])
def test_poisson_target_errors_are_scikit_learns(cls, sk_cls, y):
    X = [[0.0], [1.0], [2.0]]
    with pytest.raises(ValueError) as theirs:
        sk_cls(criterion="poisson").fit(X, y)
    with pytest.raises(ValueError, match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")):
        cls(criterion="poisson").fit(X, y)


def test_poisson_target_is_checked_before_the_lengths():
    """scikit-learn's test_error: the Poisson error comes first."""
    with pytest.raises(ValueError, match="y is not positive.*Poisson"):
        DecisionTreeRegressor(criterion="poisson").fit([[0, 1, 2]], [0, 0, 0])


def test_poisson_never_predicts_zero():
    """A child whose targets sum to zero is not allowed: every leaf predicts a positive rate."""
    X = np.arange(10, dtype=float)[:, None]
    y = np.array([0, 0, 0, 0, 0, 1, 2, 3, 4, 5.0])
    ours = DecisionTreeRegressor(criterion="poisson").fit(X, y)
    theirs = sktree.DecisionTreeRegressor(criterion="poisson").fit(X, y)
    assert np.all(ours.predict(X) > 0)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=RTOL)


@pytest.mark.parametrize("criterion", ["absolute_error", "poisson"])
def test_builder(criterion):
    """absolute_error (a median) and poisson grow with the exact builders."""
    assert DecisionTreeRegressor(criterion=criterion, tree_method="hist")._builder() == "recursive"
    tree = DecisionTreeRegressor(criterion=criterion, max_leaf_nodes=5)
    assert tree._builder() == "best-first"


@pytest.mark.parametrize("tree_method", ["recursive", "levelwise", "hist"])
def test_poisson_children_have_a_rate(tree_method):
    """scikit-learn's test_poisson_zero_nodes: many zero targets, no leaf predicts 0."""
    X, y = datasets.make_regression(
        effective_rank=6, tail_strength=0.6, n_samples=1000, n_features=10,
        n_informative=6, random_state=1,
    )  # fmt: skip
    y[(-1 < y) & (y < 0)] = 0
    reg = DecisionTreeRegressor(criterion="poisson", tree_method=tree_method, random_state=1)
    assert np.all(reg.fit(X, np.abs(y)).predict(X) > 0)
