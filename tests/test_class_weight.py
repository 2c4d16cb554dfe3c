"""class_weight on the tree and the forest classifiers against scikit-learn (issue 14, item 2).

scikit-learn multiplies ``sample_weight`` by ``compute_sample_weight(class_weight, y)``;
its forests do so once for a dict or ``"balanced"``, and with ``"balanced_subsample"``
multiply each tree's bootstrap counts by the balanced weights of that bootstrap sample.
"""

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import make_classification
from sklearn.ensemble._forest import _generate_sample_indices
from sklearn.utils.class_weight import compute_class_weight, compute_sample_weight
from sklearn_reference import (
    assert_same_tree,
    dyadic_weights,
    tie_free_for_treelib,
    tie_free_sklearn_fit,
)

from treelib import DecisionTreeClassifier, RandomForestClassifier

N_DATASETS = 20


def imbalanced(seed, weighted, flip_y=0.05):
    rng = np.random.default_rng(seed)
    n, p, k = int(rng.integers(100, 250)), int(rng.integers(2, 6)), int(rng.integers(2, 4))
    share = np.clip(rng.dirichlet(np.ones(k) * 0.7), 0.05, None)
    X, y = make_classification(
        n_samples=n, n_features=p, n_informative=min(p, 2), n_redundant=0, n_classes=k,
        n_clusters_per_class=1, weights=list(share / share.sum()), flip_y=flip_y,
        random_state=seed,
    )  # fmt: skip
    labels = np.array(["ant", "bee", "cat"])[y]  # string labels: dict keys are the labels
    return X, labels, dyadic_weights(rng, n) if weighted else None


def class_weights(seed, labels):
    """'balanced' or a dict of the labels to arbitrary weights, by seed."""
    if seed % 2 == 0:
        return "balanced"
    rng = np.random.default_rng(seed)
    return {label: float(rng.integers(1, 9)) / 2 for label in np.unique(labels)}


@pytest.mark.parametrize("weighted", [False, True])
def test_tree_identical_to_sklearn(weighted):
    checked = 0
    for seed in range(300):
        X, y, w = imbalanced(seed, weighted)
        params = dict(class_weight=class_weights(seed, y), max_depth=6, min_samples_leaf=6)
        sk = tie_free_sklearn_fit("classifier", X, y, w, params)
        if sk is None or not tie_free_for_treelib(DecisionTreeClassifier, X, y, w, params):
            continue
        ours = DecisionTreeClassifier(**params, random_state=0).fit(X, y, sample_weight=w)
        assert_same_tree(ours, sk)
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)
        checked += 1
        if checked == N_DATASETS:
            return
    raise AssertionError(f"only {checked} tie-free data sets")


def test_balanced_weights_by_hand():
    # 3 of class "a", 1 of "b": balanced weights n / (k * count) = 4/6 and 4/2
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array(["a", "a", "a", "b"])
    tree = DecisionTreeClassifier(class_weight="balanced", max_depth=1).fit(X, y)
    assert tree.tree_.weighted_n_node_samples[0] == pytest.approx(3 * 4 / 6 + 4 / 2)
    np.testing.assert_allclose(tree.tree_.value[0, 0], [0.5, 0.5])  # balanced: equal mass
    doubled = DecisionTreeClassifier(class_weight={"a": 1.0, "b": 3.0}, max_depth=1)
    np.testing.assert_allclose(doubled.fit(X, y).tree_.value[0, 0], [0.5, 0.5])


def forest_tree_weights(class_weight, y, w, seed, n_draws):
    """The weights scikit-learn 1.9's forest grows one tree on, from its own helpers.

    A dict or "balanced" (frequencies counted with ``w``) makes ``w * class weight``
    the probability of drawing each row; the tree gets the counts of the draws.
    """
    p = w
    if class_weight == "balanced":
        classes = np.unique(y)
        balanced = compute_class_weight("balanced", classes=classes, y=y, sample_weight=w)
        class_weight = dict(zip(classes, balanced))
    if class_weight != "balanced_subsample":
        p = compute_sample_weight(class_weight, y) * (1.0 if w is None else w)
    draws = _generate_sample_indices(seed, len(y), n_draws, p)
    counts = np.bincount(draws, minlength=len(y)).astype(float)
    if class_weight == "balanced_subsample":
        counts *= compute_sample_weight("balanced", y, indices=draws)
    return counts


@pytest.mark.parametrize("preset", ["balanced", "balanced_subsample", "dict", None])
def test_forest_identical_to_sklearn(preset):
    checked = 0
    for seed in range(300):
        # sample weights on every other data set (always without class weights): with
        # them rows are drawn by weight, as in scikit-learn 1.9
        weighted = seed % 2 == 1 or preset is None
        X, y, w = imbalanced(seed, weighted, flip_y=0.2)  # noisy: few pure leaves
        class_weight = class_weights(1, y) if preset == "dict" else preset
        params = dict(n_estimators=2, max_features=None, min_samples_leaf=6, max_depth=4)
        theirs = ensemble.RandomForestClassifier(
            **params, class_weight=class_weight, random_state=seed
        ).fit(X, y, sample_weight=w)
        tree_params = dict(min_samples_leaf=6, max_depth=4)
        references = []
        for tree in theirs:
            tree_w = forest_tree_weights(class_weight, y, w, tree.random_state, len(y))
            sk = tie_free_sklearn_fit("classifier", X, y, tree_w, tree_params)
            free = sk is not None and tie_free_for_treelib(
                DecisionTreeClassifier, X, y, tree_w, tree_params
            )
            references.append(sk if free else None)
        if any(r is None for r in references):
            continue
        ours = RandomForestClassifier(**params, class_weight=class_weight, random_state=seed)
        ours.fit(X, y, sample_weight=w)
        for our_tree, their_tree, reference in zip(ours, theirs, references):
            assert_same_tree(their_tree, reference)  # our weight formula is scikit-learn's
            assert_same_tree(our_tree, their_tree)
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), atol=1e-9)
        checked += 1
        if checked == N_DATASETS:
            return
    raise AssertionError(f"only {checked} tie-free data sets")


def test_balanced_subsample_without_bootstrap_is_balanced():
    X, y, _ = imbalanced(3, False)
    params = dict(n_estimators=2, bootstrap=False, max_features=None, random_state=0)
    a = RandomForestClassifier(**params, class_weight="balanced_subsample").fit(X, y)
    b = RandomForestClassifier(**params, class_weight="balanced").fit(X, y)
    for s, t in zip(a, b):
        assert_same_tree(s, t, atol=0)


def test_balanced_subsample_balances_every_bootstrap_sample():
    X, y, _ = imbalanced(4, False)
    params = dict(n_estimators=5, max_features=None, random_state=0)
    forest = RandomForestClassifier(**params, class_weight="balanced_subsample").fit(X, y)
    plain = RandomForestClassifier(**params).fit(X, y)
    for tree, plain_tree in zip(forest, plain):
        # n_draws / (k * count of the class in the draws): each class carries n_draws / k
        k = int((plain_tree.tree_.value[0, 0] > 0).sum())
        np.testing.assert_allclose(tree.tree_.value[0, 0][tree.tree_.value[0, 0] > 0], 1 / k)
        assert tree.tree_.weighted_n_node_samples[0] == pytest.approx(len(X))
        assert not np.allclose(plain_tree.tree_.value[0, 0], 1 / k)  # the data are imbalanced


@pytest.mark.parametrize(
    "cls, class_weight, message",
    [
        (DecisionTreeClassifier, [{0: 1.0, 1: 2.0}], "list of dicts"),
        (DecisionTreeClassifier, "balanced_subsample", "class_weight must be"),
        (DecisionTreeClassifier, "auto", "class_weight must be"),
        (RandomForestClassifier, [{0: 1.0, 1: 2.0}], "list of dicts"),
        (RandomForestClassifier, "nope", "class_weight must be"),
        (DecisionTreeClassifier, {0: 0.0, 1: 0.0}, "positive sum"),
    ],
)
def test_bad_class_weight_raises(cls, class_weight, message):
    X, y = make_classification(n_samples=40, n_features=3, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match=message):
        cls(class_weight=class_weight).fit(X, y)


@pytest.mark.parametrize("max_samples", [None, 0.5, 40])
def test_forest_draws_the_rows_sklearn_draws(max_samples):
    X, y, w = imbalanced(5, weighted=True)
    params = dict(n_estimators=4, max_samples=max_samples, random_state=2)
    for class_weight in ("balanced", {"ant": 1.0, "bee": 3.5, "cat": 0.5}):
        ours = RandomForestClassifier(**params, class_weight=class_weight, max_depth=1)
        theirs = ensemble.RandomForestClassifier(**params, class_weight=class_weight, max_depth=1)
        ours.fit(X, y, sample_weight=w)
        theirs.fit(X, y, sample_weight=w)
        for a, b in zip(ours.estimators_samples_, theirs.estimators_samples_):
            np.testing.assert_array_equal(a, b)


def test_balanced_weights_equal_scikit_learn_with_sample_weights():
    """treelib's own "balanced" (scikit-learn before 1.7 has no sample_weight there)."""
    from sklearn.utils.class_weight import compute_class_weight

    from treelib.forest import balanced_weights

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=50)
    w = rng.random(50)
    for weights in (None, w):
        expected = compute_class_weight(
            "balanced", classes=np.arange(3), y=y, sample_weight=weights
        )
        np.testing.assert_allclose(balanced_weights(y, weights), expected, rtol=1e-15)


@pytest.mark.parametrize("name", ["RandomForestClassifier", "ExtraTreesClassifier"])
@pytest.mark.parametrize("n_outputs", [1, 2])
def test_validate_y_class_weight_is_scikit_learns(name, n_outputs):
    """scikit-learn's private ``_validate_y_class_weight``, called as its tests call it."""
    rng = np.random.default_rng(n_outputs)
    labels = [np.array(["ant", "bee", "cat"]), np.array(["x", "y", "z"])]
    y = np.stack([c[rng.integers(0, 3, 30)] for c in labels], axis=1)[:, :n_outputs]
    weights = [{"ant": 1.0, "bee": 2.5, "cat": 0.5}, {"x": 3.0, "y": 1.0, "z": 0.25}]
    settings = [
        dict(class_weight=None),
        dict(class_weight=weights[0] if n_outputs == 1 else weights),
        dict(class_weight="balanced"),
        dict(class_weight="balanced_subsample", bootstrap=False),
        dict(class_weight="balanced_subsample", bootstrap=True),
    ]
    ours_cls = getattr(__import__("treelib"), name)
    theirs_cls = getattr(ensemble, name)
    for sample_weight in (None, rng.integers(1, 5, 30).astype(float)):
        for params in settings:
            ours, theirs = ours_cls(**params), theirs_cls(**params)
            for forest in (ours, theirs):
                forest._n_samples, forest.n_outputs_ = y.shape
            codes, expanded = ours._validate_y_class_weight(y, sample_weight)
            their_codes, their_expanded = theirs._validate_y_class_weight(y, sample_weight)
            np.testing.assert_array_equal(codes, their_codes)
            if their_expanded is None:
                assert expanded is None
            else:
                np.testing.assert_array_equal(expanded, their_expanded)
            np.testing.assert_array_equal(ours.n_classes_, theirs.n_classes_)
            for a, b in zip(ours.classes_, theirs.classes_, strict=True):
                np.testing.assert_array_equal(a, b)
