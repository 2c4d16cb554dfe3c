"""Cost-complexity pruning against scikit-learn (Chapter 2; issue 14, item 1).

On tie-free data (scikit-learn grows the same tree for every random state) the
pruning path must agree within 1e-9 and every pruned tree's ``tree_`` must be
scikit-learn's, node ids included.
"""

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import make_classification, make_regression
from sklearn_reference import (
    assert_same_tree,
    dyadic_weights,
    sklearn_tree,
    tie_free_for_treelib,
    tie_free_sklearn_fit,
)

from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from treelib.forest import bootstrap_counts
from treelib.pruning import prune, pruning_path

N_DATASETS = 20
OURS = {"classifier": DecisionTreeClassifier, "regressor": DecisionTreeRegressor}


def dataset(kind, seed, weighted):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(80, 200)), int(rng.integers(2, 6))
    if kind == "classifier":
        X, y = make_classification(
            n_samples=n, n_features=p, n_informative=min(p, 2), n_redundant=0,
            n_classes=int(rng.integers(2, 4)), n_clusters_per_class=1, flip_y=0.1,
            random_state=seed,
        )  # fmt: skip
    else:
        X, y = make_regression(n_samples=n, n_features=p, noise=20.0, random_state=seed)
    return X, y, dyadic_weights(rng, n, zeros=seed % 2 == 0) if weighted else None


def tie_free_cases(kind, weighted, criterion):
    """(X, y, w, params, scikit-learn's unpruned tree) on N_DATASETS tie-free data sets."""
    found = []
    smallest_leaf = 8 if kind == "classifier" else 5  # fewer ties between small nodes' splits
    for seed in range(300):
        X, y, w = dataset(kind, seed, weighted)
        params = dict(criterion=criterion, min_samples_leaf=smallest_leaf + seed % 4)
        sk = tie_free_sklearn_fit(kind, X, y, w, params)
        if sk is not None and tie_free_for_treelib(OURS[kind], X, y, w, params):
            found.append((X, y, w, params, sk))
        if len(found) == N_DATASETS:
            return found
    raise AssertionError(f"only {len(found)} tie-free data sets")


def alphas_to_check(ours, theirs):
    """Pairs (our alpha, scikit-learn's alpha): steps of the path and points between them.

    At a step each side uses its own path's value: a subtree is pruned when its
    effective alpha is at most ``ccp_alpha``, and the two libraries' impurities
    (so their alphas) may differ in the last bit.
    """
    steps = np.linspace(0, len(theirs) - 1, 4).round().astype(int)
    pairs = [(ours[k], theirs[k]) for k in steps]
    middles = [(theirs[k] + theirs[k + 1]) / 2 for k in steps[:-1] if theirs[k + 1] > theirs[k]]
    return pairs + [(a, a) for a in middles + [2 * theirs[-1]]]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    "kind, criterion",
    [("classifier", "gini"), ("classifier", "entropy"), ("regressor", "squared_error")],
)
def test_path_and_pruned_trees_equal_sklearn(kind, criterion, weighted):
    for X, y, w, params, sk in tie_free_cases(kind, weighted, criterion):
        ours = OURS[kind](**params, random_state=0)
        path = ours.cost_complexity_pruning_path(X, y, sample_weight=w)
        expected = sk.cost_complexity_pruning_path(X, y, sample_weight=w)
        assert sorted(path) == ["ccp_alphas", "impurities"]
        assert len(path.ccp_alphas) == len(expected.ccp_alphas)
        for key in ("ccp_alphas", "impurities"):
            np.testing.assert_allclose(path[key], expected[key], rtol=0, atol=1e-9, err_msg=key)
        for ours_alpha, alpha in alphas_to_check(path.ccp_alphas, expected.ccp_alphas):
            pruned = OURS[kind](**params, ccp_alpha=ours_alpha, random_state=0)
            pruned.fit(X, y, sample_weight=w)
            theirs = sklearn_tree(kind, 0, **params, ccp_alpha=alpha).fit(X, y, sample_weight=w)
            assert_same_tree(pruned, theirs)
            np.testing.assert_array_equal(pruned.apply(X), theirs.apply(X))


def test_path_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = [0, 0, 1, 0]
    tree = DecisionTreeClassifier().fit(X, y)
    # root: gini 3/8, split x <= 1.5 into {0, 0} (pure) and {1, 0} (gini 1/2), which
    # splits at 2.5 into pure leaves. R(t) = W_t/W * gini: root 3/8, right child
    # 2/4 * 1/2 = 1/4, leaves 0. g(root) = (3/8 - 0) / (3 - 1) = 3/16,
    # g(right child) = (1/4 - 0) / (2 - 1) = 1/4: the root is the weakest link.
    assert tree.tree_.node_count == 5
    path = tree.cost_complexity_pruning_path(X, y)
    np.testing.assert_allclose(path.ccp_alphas, [0.0, 3 / 16], rtol=0, atol=1e-15)
    np.testing.assert_allclose(path.impurities, [0.0, 3 / 8], rtol=0, atol=1e-15)
    assert DecisionTreeClassifier(ccp_alpha=0.18).fit(X, y).tree_.node_count == 5
    assert DecisionTreeClassifier(ccp_alpha=0.19).fit(X, y).tree_.node_count == 1


@pytest.mark.parametrize("method", ["recursive", "levelwise", "hist"])
def test_every_builder_gives_the_same_pruned_tree(method):
    X, y = make_classification(  # 200 distinct values: hist's 255 bins hold them all
        n_samples=200, n_features=4, n_redundant=0, flip_y=0.2, random_state=1
    )
    path = DecisionTreeClassifier(random_state=0).cost_complexity_pruning_path(X, y)
    alpha = path.ccp_alphas[len(path.ccp_alphas) // 2]
    params = dict(ccp_alpha=alpha, random_state=0)  # the data has ties: fix the feature order
    reference = DecisionTreeClassifier(tree_method="recursive", **params).fit(X, y)
    tree = DecisionTreeClassifier(tree_method=method, **params).fit(X, y)
    assert_same_tree(tree, reference, atol=1e-12)
    full = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert 1 < tree.tree_.node_count < full.tree_.node_count


def test_prune_renumbers_in_preorder_and_keeps_the_tree_at_alpha_zero():
    X, y = make_regression(n_samples=120, n_features=3, noise=30.0, random_state=2)
    tree = DecisionTreeRegressor().fit(X, y).tree_
    assert prune(tree, 0.0) is tree
    path = pruning_path(tree)
    pruned = prune(tree, path["ccp_alphas"][-3])
    assert pruned.n_leaves == 3
    left = pruned.children_left
    inner = np.flatnonzero(left != -1)
    np.testing.assert_array_equal(left[inner], inner + 1)  # preorder: left child is next
    assert (pruned.feature[left == -1] == -2).all() and (pruned.threshold[left == -1] == -2).all()
    assert prune(tree, path["ccp_alphas"][-1]).node_count == 1


@pytest.mark.parametrize(
    "ours_cls, theirs_cls",
    [
        (RandomForestRegressor, ensemble.RandomForestRegressor),
        (RandomForestClassifier, ensemble.RandomForestClassifier),
    ],
)
def test_forest_prunes_every_tree_as_sklearn(ours_cls, theirs_cls):
    if ours_cls is RandomForestRegressor:
        X, y = make_regression(n_samples=200, n_features=4, noise=10.0, random_state=0)
        alpha = 20.0
    else:
        X, y = make_classification(
            n_samples=200, n_features=4, n_redundant=0, flip_y=0.1, random_state=0
        )
        alpha = 0.003
    params = dict(max_features=None, min_samples_leaf=5)
    ours = ours_cls(n_estimators=8, **params, ccp_alpha=alpha, random_state=0).fit(X, y)
    unpruned = ours_cls(n_estimators=8, **params, random_state=0).fit(X, y)
    kind = "regressor" if ours_cls is RandomForestRegressor else "classifier"
    checked = 0
    for tree, full in zip(ours, unpruned):
        assert tree.tree_.node_count < full.tree_.node_count
        counts = bootstrap_counts(tree.random_state, len(X), len(X)).astype(float)
        # scikit-learn's forest grows tree i on these counts as weights; compare where tie-free
        sk = tie_free_sklearn_fit(kind, X, y, counts, dict(params, ccp_alpha=alpha))
        if sk is not None:
            assert_same_tree(tree, sk)
            checked += 1
    assert checked >= 4
    theirs = theirs_cls(n_estimators=8, **params, ccp_alpha=alpha, random_state=0).fit(X, y)
    if checked == 8:
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-9)


@pytest.mark.parametrize("alpha", [-0.1, "0.1", None, float("nan")])
def test_invalid_ccp_alpha_raises(alpha):
    X, y = make_classification(n_samples=30, n_features=3, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="ccp_alpha"):
        DecisionTreeClassifier(ccp_alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match="ccp_alpha"):
        RandomForestRegressor(n_estimators=2, ccp_alpha=alpha).fit(X, y.astype(float))


def test_pruned_trees_keep_the_learned_side_of_missing_values():
    """A pruned split node keeps the side its split learned for NaN (scikit-learn copies
    missing_go_to_left), not the bigger child's; a collapsed node, a leaf, has 0."""
    checked = learned_smaller = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        X = rng.random((80, 3))
        X[rng.random((80, 3)) < 0.3] = np.nan
        y = (X[:, 0] > 0.5) ^ (rng.random(80) < 0.3)
        params = dict(min_samples_leaf=3, ccp_alpha=0.01)
        sk = tie_free_sklearn_fit("classifier", X, y, None, params)
        if sk is None or not tie_free_for_treelib(DecisionTreeClassifier, X, y, None, params):
            continue
        ours = DecisionTreeClassifier(**params, random_state=0).fit(X, y)
        assert_same_tree(ours, sk)
        np.testing.assert_array_equal(ours.tree_.missing_go_to_left, sk.tree_.missing_go_to_left)
        t = sk.tree_
        inner = t.children_left >= 0
        bigger_left = t.n_node_samples[t.children_left] > t.n_node_samples[t.children_right]
        learned_smaller += int((t.missing_go_to_left[inner] != bigger_left[inner]).sum())
        checked += 1
    assert checked >= 10 and learned_smaller >= 3  # (the data do test the learned side)
