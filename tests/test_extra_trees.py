"""Extra trees (Chapter 5): ``splitter="random"`` and ``ExtraTreesClassifier/Regressor``.

treelib draws its random thresholds from each node's key, not from
scikit-learn's generator, so its trees are not scikit-learn's: the split rule
is checked by hand, reproducibility and the range of the thresholds exactly,
and the agreement with scikit-learn statistically (accuracy and R^2 over
several seeds, the distribution of the root threshold).
"""

import os
import re

import numpy as np
import pytest
import torch
from scipy import stats
from sklearn import ensemble
from sklearn import tree as sktree
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks

from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
)
from treelib.extra_trees import random_split, threshold_draws
from treelib.node_random import root_key

ESTIMATORS = [
    DecisionTreeClassifier(splitter="random"),
    DecisionTreeRegressor(splitter="random"),
    ExtraTreesClassifier(n_estimators=10),
    ExtraTreesRegressor(n_estimators=10),
]
TREES = (DecisionTreeClassifier, DecisionTreeRegressor)
FIELDS = (
    "children_left", "children_right", "feature", "threshold", "value", "impurity",
    "n_node_samples", "weighted_n_node_samples",
)  # fmt: skip


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_defaults_are_scikit_learns():
    """Every ExtraTrees parameter scikit-learn 1.9.1 has, with its default (plus ``device``)."""
    for ours, theirs in [
        (ExtraTreesClassifier(), ensemble.ExtraTreesClassifier()),
        (ExtraTreesRegressor(), ensemble.ExtraTreesRegressor()),
    ]:
        expected = theirs.get_params()
        got = ours.get_params()
        assert {name: got[name] for name in expected} == expected
        assert set(got) - set(expected) == {"device"}
    assert DecisionTreeClassifier().splitter == sktree.DecisionTreeClassifier().splitter


@pytest.mark.parametrize("bad", ["worst", "Random", 3, None])
@pytest.mark.parametrize(
    "ours, theirs",
    [
        (DecisionTreeClassifier, sktree.DecisionTreeClassifier),
        (DecisionTreeRegressor, sktree.DecisionTreeRegressor),
    ],
)
def test_bad_splitter_is_refused_as_scikit_learn_refuses_it(ours, theirs, bad):
    X, y = [[0.0], [1.0], [2.0]], [0, 1, 1]
    with pytest.raises(ValueError) as expected:
        theirs(splitter=bad).fit(X, y)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        ours(splitter=bad).fit(X, y)


def test_random_splits_with_missing_values():
    """NaN as scikit-learn 1.9's random splitter: thresholds among the known values only,
    the missing samples on one side drawn per split, or the bigger child where none were.

    The missing values here carry the class (NaN only in class 1), so a forest that
    handles them scores as well as scikit-learn's extra trees on the same data.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3)).astype(np.float32)
    y = (X[:, 0] + 0.5 * rng.normal(size=600) > 0).astype(int)
    X[(y == 1) & (rng.random(600) < 0.5), 1] = np.nan
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    tree = DecisionTreeClassifier(splitter="random", random_state=0).fit(X_train, y_train)
    inner = np.flatnonzero(tree.tree_.children_left >= 0)
    assert np.isfinite(tree.tree_.threshold[inner]).all()
    known = X_train[~np.isnan(X_train[:, 1]), 1]
    on_1 = inner[tree.tree_.feature[inner] == 1]
    assert on_1.size and (tree.tree_.threshold[on_1] >= known.min()).all()
    ours = ExtraTreesClassifier(n_estimators=30, random_state=0).fit(X_train, y_train)
    theirs = ensemble.ExtraTreesClassifier(n_estimators=30, random_state=0).fit(X_train, y_train)
    assert ours.score(X_test, y_test) >= theirs.score(X_test, y_test) - 0.03
    sides = np.concatenate(
        [t.tree_.missing_go_to_left[t.tree_.feature == 1] for t in ours.estimators_]
    )
    assert 0.3 < sides.mean() < 0.7  # the side of the NaN is drawn, about half each way


def test_random_splits_with_a_monotonic_constraint():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 2)).astype(np.float32)
    y = np.sin(3 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=400)
    model = ExtraTreesRegressor(n_estimators=10, monotonic_cst=[1, 0], random_state=0).fit(X, y)
    sweep = np.repeat(X[:1], 200, 0)
    sweep[:, 0] = np.linspace(-3, 3, 200)
    assert (np.diff(model.predict(sweep)) >= -1e-12).all()
    free = ExtraTreesRegressor(n_estimators=10, random_state=0).fit(X, y)
    assert (np.diff(free.predict(sweep)) < 0).any()


def test_random_splits_refuse_categorical_features():
    X, y = [[0.0, 1.0], [1.0, 2.0], [2.0, 0.0]], [0, 1, 1]
    with pytest.raises(ValueError, match="categorical_features"):
        DecisionTreeClassifier(splitter="random", categorical_features=[0]).fit(X, y)


def test_oob_score_needs_the_bootstrap():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="bootstrap"):
        ExtraTreesClassifier(n_estimators=3, oob_score=True).fit(X, y)
    forest = ExtraTreesClassifier(n_estimators=30, bootstrap=True, oob_score=True, random_state=0)
    assert 0.8 < forest.fit(X, y).oob_score_ <= 1.0


@pytest.mark.parametrize("cls", TREES)
def test_same_seed_same_tree_other_seed_other_tree(cls):
    X, y = load_wine(return_X_y=True)
    a, b, c = (cls(splitter="random", random_state=s).fit(X, y).tree_ for s in (0, 0, 1))
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)
    assert not np.array_equal(a.threshold, c.threshold)


def test_forest_same_seed_same_trees_other_seed_other_trees():
    X, y = load_iris(return_X_y=True)
    a, b, c = (ExtraTreesClassifier(n_estimators=5, random_state=s).fit(X, y) for s in (0, 0, 1))
    for ta, tb in zip(a, b):
        assert all(np.array_equal(getattr(ta.tree_, f), getattr(tb.tree_, f)) for f in FIELDS)
    assert not all(np.array_equal(ta.tree_.threshold, tc.tree_.threshold) for ta, tc in zip(a, c))
    assert all(tree.splitter == "random" for tree in a)


@pytest.mark.parametrize("tree_method", ["levelwise", "hist"])
def test_every_tree_method_grows_the_recursive_builders_random_tree(tree_method):
    """Random splits are grown by the recursive builder whatever ``tree_method`` says."""
    X, y = load_wine(return_X_y=True)
    params = dict(splitter="random", random_state=3)
    recursive = DecisionTreeClassifier(tree_method="recursive", **params).fit(X, y).tree_
    other = DecisionTreeClassifier(tree_method=tree_method, **params).fit(X, y).tree_
    assert all(np.array_equal(getattr(recursive, f), getattr(other, f)) for f in FIELDS)


def node_samples(estimator, X):
    """For every node, the boolean mask of the training rows that reach it."""
    return estimator.decision_path(X).toarray().astype(bool).T


@pytest.mark.parametrize(
    "cls, data, params",
    [
        (DecisionTreeClassifier, load_wine, {}),
        (DecisionTreeClassifier, load_breast_cancer, {"max_features": "sqrt"}),
        (DecisionTreeRegressor, load_diabetes, {"min_samples_leaf": 3}),
        (DecisionTreeRegressor, load_diabetes, {"max_leaf_nodes": 20}),
    ],
)
def test_every_threshold_lies_between_the_nodes_min_and_max(cls, data, params):
    X, y = data(return_X_y=True)
    X32 = X.astype(np.float32).astype(np.float64)  # the values the tree compares
    model = cls(splitter="random", random_state=0, **params).fit(X, y)
    tree, reach = model.tree_, node_samples(model, X)
    inner = np.flatnonzero(tree.children_left >= 0)
    assert len(inner) > 5
    for node in inner:
        values = X32[reach[node], tree.feature[node]]
        assert values.min() <= tree.threshold[node] < values.max()
        left = reach[tree.children_left[node]]
        np.testing.assert_array_equal(left[reach[node]], values <= tree.threshold[node])
        n_leaf = params.get("min_samples_leaf", 1)
        assert n_leaf <= left[reach[node]].sum() <= reach[node].sum() - n_leaf


def gini(y, n_classes=2):
    p = np.bincount(y, minlength=n_classes) / len(y)
    return 1.0 - (p**2).sum()


def test_the_split_rule_by_hand():
    """Two features, one random threshold each; the lower weighted Gini wins.

    The uniform numbers ``u`` are the node's draws; the rest is worked out here:
    ``t = lo + (hi - lo) u``, the partition ``x <= t``, the children's Gini, the
    winner and scikit-learn's improvement. With the key of seed 5, ``u = (0.9008,
    0.1661)``: feature 0 (values 0..8) is cut at 7.21, leaving one row of class 1
    alone on the right (weighted Gini 5/6 * 0.48 = 0.4); feature 1 (values 1..9)
    at 2.33, putting its two smallest rows, both of class 1, on the left
    (4/6 * 0.375 = 0.25). Feature 1 wins, though it comes second.
    """
    X = np.array([[0, 5], [1, 4], [2, 9], [4, 8], [7, 1], [8, 2]], dtype=np.float32)
    y = np.array([0, 0, 0, 1, 1, 1])
    stats_ = torch.nn.functional.one_hot(torch.tensor(y)).T.double()
    key = root_key(5)
    u = threshold_draws(key, [0, 1]).numpy()
    np.testing.assert_allclose(u, [0.9008, 0.1661], atol=5e-5)
    t = np.array([0 + (8 - 0) * u[0], 1 + (9 - 1) * u[1]])
    assert (X[:, 0] <= t[0]).tolist() == [True] * 5 + [False]
    assert (X[:, 1] <= t[1]).tolist() == [False] * 4 + [True, True]
    children = [5 / 6 * gini(y[:5]), 4 / 6 * gini(y[:4])]
    np.testing.assert_allclose(children, [0.4, 0.25])
    split = random_split(torch.tensor(X), stats_, "gini", features=[0, 1], key=key)
    assert split.feature == 1 and split.threshold == pytest.approx(t[1], abs=1e-12)
    assert split.improvement == pytest.approx(0.5 - 0.25)
    assert (split.impurity_left, split.impurity_right) == pytest.approx((0.0, 0.375))
    # with max_features=1 (here: features=[0] alone) feature 0 is split at its own draw
    only = random_split(torch.tensor(X), stats_, "gini", features=[0], key=key)
    assert only.feature == 0 and only.threshold == pytest.approx(t[0], abs=1e-12)
    assert only.improvement == pytest.approx(0.5 - 0.4)
    # min_samples_leaf=2 rejects feature 0's split (one row on the right), 3 both
    limited = random_split(
        torch.tensor(X), stats_, "gini", features=[0, 1], key=key, min_samples_leaf=2
    )
    assert limited.feature == 1
    assert random_split(torch.tensor(X), stats_, "gini", features=[0, 1], key=key,
                        min_samples_leaf=3) is None  # fmt: skip


def test_a_tie_goes_to_the_feature_searched_first():
    """With the key of seed 123 each feature's cut leaves one row of class 1 alone."""
    X = np.array([[0, 5], [1, 4], [2, 9], [4, 8], [7, 1], [8, 2]], dtype=np.float32)
    y = np.array([0, 0, 0, 1, 1, 1])
    stats_ = torch.nn.functional.one_hot(torch.tensor(y)).T.double()
    key = root_key(123)
    u = threshold_draws(key, [0, 1]).numpy()
    t = np.array([8 * u[0], 1 + 8 * u[1]])
    assert (X[:, 0] > t[0]).sum() == 1 and (X[:, 1] <= t[1]).sum() == 1  # the same Gini
    for order in ([0, 1], [1, 0]):
        split = random_split(torch.tensor(X), stats_, "gini", features=order, key=key)
        assert split.feature == order[0]


def test_a_single_tree_with_max_features_one_on_a_tiny_example():
    """One feature, four rows: the root splits at its draw and each side is pure or split again."""
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    model = DecisionTreeClassifier(splitter="random", max_features=1, random_state=0).fit(X, y)
    tree = model.tree_
    assert 0.0 <= tree.threshold[0] < 3.0
    assert model.score(X, y) == 1.0  # grown until pure
    left = np.flatnonzero(X[:, 0] <= tree.threshold[0])
    assert tree.n_node_samples[tree.children_left[0]] == len(left)


def test_constant_features_are_skipped():
    """A constant feature never splits; a node whose features are all constant is a leaf."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(40), rng.normal(size=40), np.full(40, 2.0)])
    y = rng.integers(0, 2, 40)
    model = DecisionTreeClassifier(splitter="random", random_state=0).fit(X, y)
    inner = model.tree_.children_left >= 0
    assert set(model.tree_.feature[inner]) == {1}
    constant = DecisionTreeClassifier(splitter="random").fit(np.ones((5, 2)), [0, 1, 0, 1, 0])
    assert constant.tree_.node_count == 1


def test_root_thresholds_are_uniform_like_scikit_learns():
    """Over many seeds the root threshold is uniform on [min, max), as scikit-learn's."""
    rng = np.random.default_rng(0)
    X = np.concatenate([[0.0, 10.0], rng.uniform(0, 10, 30)])[:, None]
    y = rng.integers(0, 2, len(X))
    seeds = range(400)
    ours = [
        DecisionTreeClassifier(splitter="random", max_depth=1, random_state=s).fit(X, y)
        for s in seeds
    ]
    theirs = [
        sktree.DecisionTreeClassifier(splitter="random", max_depth=1, random_state=s).fit(X, y)
        for s in seeds
    ]
    t_ours = np.array([m.tree_.threshold[0] for m in ours])
    t_theirs = np.array([m.tree_.threshold[0] for m in theirs])
    assert stats.kstest(t_ours / 10.0, "uniform").pvalue > 1e-3
    assert stats.kstest(t_theirs / 10.0, "uniform").pvalue > 1e-3  # the test's own sanity
    assert stats.ks_2samp(t_ours, t_theirs).pvalue > 1e-3
    assert len(np.unique(t_ours)) == len(t_ours)


def test_threshold_draws_are_uniform_and_independent_of_the_feature():
    keys = torch.cat([root_key(s) for s in range(2000)])
    u = torch.stack([threshold_draws(k[None], [0, 1]) for k in keys]).numpy()
    assert ((u >= 0) & (u < 1)).all()
    assert stats.kstest(u[:, 0], "uniform").pvalue > 1e-3
    assert stats.kstest(u[:, 1], "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[:, 0], u[:, 1])[0, 1]) < 0.1


def test_forest_differs_from_the_random_forest_and_uses_all_rows():
    X, y = load_iris(return_X_y=True)
    extra = ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    for tree in extra:
        assert tree.tree_.n_node_samples[0] == len(y)
        assert tree.tree_.weighted_n_node_samples[0] == len(y)
    assert all(len(rows) == len(y) for rows in extra.estimators_samples_)
    assert not np.array_equal(extra[0].tree_.threshold, forest[0].tree_.threshold)


CLASSIFICATION = {"iris": load_iris, "wine": load_wine, "breast cancer": load_breast_cancer}


@pytest.mark.parametrize("name", CLASSIFICATION)
def test_accuracy_matches_scikit_learns_extra_trees(name):
    """Mean test accuracy over 8 splits within 2.5 points of scikit-learn's.

    Over 8 splits with forests of 20 trees, the paired difference of the two
    libraries' mean accuracies was at most about one point in our runs.
    """
    X, y = CLASSIFICATION[name](return_X_y=True)
    diffs = []
    for seed in range(8):
        Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)
        params = dict(n_estimators=20, random_state=seed)
        ours = ExtraTreesClassifier(**params).fit(Xa, ya).score(Xb, yb)
        theirs = ensemble.ExtraTreesClassifier(**params).fit(Xa, ya).score(Xb, yb)
        diffs.append(ours - theirs)
    assert abs(np.mean(diffs)) < 0.025, diffs


@pytest.mark.parametrize("max_features", [1.0, 0.3])
def test_r2_matches_scikit_learns_extra_trees(max_features):
    """Mean test R^2 on diabetes over 8 splits within 0.03 of scikit-learn's."""
    X, y = load_diabetes(return_X_y=True)
    diffs = []
    for seed in range(8):
        Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=seed)
        params = dict(n_estimators=20, max_features=max_features, min_samples_leaf=5)
        ours = ExtraTreesRegressor(random_state=seed, **params).fit(Xa, ya).score(Xb, yb)
        theirs = ensemble.ExtraTreesRegressor(random_state=seed, **params)
        diffs.append(ours - theirs.fit(Xa, ya).score(Xb, yb))
    assert abs(np.mean(diffs)) < 0.03, diffs


def test_threshold_draws_are_the_bits_of_the_tensor_hash():
    """The Python-integer hashes equal :func:`mix32` on int64 tensors (which wrap around)."""
    from treelib.extra_trees import THRESHOLD_SALT
    from treelib.node_random import GOLDEN, mix32

    keys = torch.cat([root_key(s) for s in range(50)])
    f = torch.arange(7)
    base = mix32(keys[:, None] * GOLDEN + THRESHOLD_SALT) * GOLDEN
    high, low = mix32(base + 2 * f) >> 5, mix32(base + 2 * f + 1) >> 6
    expected = (high * 2**26 + low).double() / 2.0**53
    got = torch.stack([threshold_draws(k[None], range(7)) for k in keys])
    assert torch.equal(got, expected)


DEVICE = os.environ.get("TREELIB_TEST_DEVICE", "cuda")


@pytest.mark.skipif(
    torch.device(DEVICE).type == "cuda" and not torch.cuda.is_available(),
    reason=f"needs a {DEVICE} device (TREELIB_TEST_DEVICE chooses it; cpu checks the test)",
)
@pytest.mark.parametrize("cls", [ExtraTreesClassifier, ExtraTreesRegressor])
def test_the_device_grows_the_cpus_trees(cls):
    """The thresholds come from the node's key: on another device, the same trees.

    Dyadic targets keep every sum exact, so no score can round differently.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = rng.integers(0, 3, 300) if cls is ExtraTreesClassifier else rng.integers(0, 16, 300) / 8
    params = dict(n_estimators=4, max_features=3, random_state=0)
    cpu = cls(**params).fit(X, y)
    other = cls(device=DEVICE, **params).fit(X, y)
    for a, b in zip(cpu, other):
        assert all(np.array_equal(getattr(a.tree_, f), getattr(b.tree_, f)) for f in FIELDS)
    np.testing.assert_array_equal(cpu.predict(X), other.predict(X))


def test_random_splits_are_not_grown_batched():
    from treelib.batched import batchable

    assert batchable(DecisionTreeClassifier(), 10, 3) is not None
    assert batchable(DecisionTreeClassifier(splitter="random"), 10, 3) is None
