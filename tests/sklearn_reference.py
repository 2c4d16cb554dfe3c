"""Helpers that compare treelib's trees with scikit-learn's.

"Tie-free" is decided by scikit-learn itself: scikit-learn breaks ties between
equally good splits with its random feature order, so a dataset is tie-free
for a setting when scikit-learn grows the same tree for several random states.
"""

import numpy as np
from sklearn import tree as sktree

FIELDS_EXACT = ("children_left", "children_right", "feature", "n_node_samples")
FIELDS_CLOSE = ("threshold", "impurity", "weighted_n_node_samples", "value")

# every builder a tree_method can choose (Chapter 7), best-first through max_leaf_nodes
BUILDERS = [
    dict(tree_method="recursive"),
    dict(tree_method="levelwise"),
    dict(tree_method="hist"),
    dict(tree_method="levelwise", max_leaf_nodes=12),  # best-first
]
N_SETS = 20  # data sets per comparison with scikit-learn


def sklearn_tree(kind, random_state, **params):
    cls = sktree.DecisionTreeClassifier if kind == "classifier" else sktree.DecisionTreeRegressor
    return cls(random_state=random_state, **params)


def tie_free_sklearn_fit(kind, X, y, sample_weight, params, n_states=12):
    """scikit-learn's fitted tree if it is the same for n_states random states, else None."""
    fits = [
        sklearn_tree(kind, seed, **params).fit(X, y, sample_weight=sample_weight)
        for seed in range(n_states)
    ]
    first = fits[0].tree_
    for other in fits[1:]:
        if other.tree_.node_count != first.node_count:
            return None
        if not all(
            np.array_equal(getattr(first, f), getattr(other.tree_, f)) for f in FIELDS_EXACT
        ):
            return None
    return fits[0]


def tie_free_for_treelib(cls, X, y, w, params, n_states=8):
    """Whether treelib grows one tree for several random states.

    scikit-learn's own check misses a tie whose two scores its sums round apart
    (e.g. two features that split a small node into the same two groups);
    treelib's tie rule sees it, and its random feature order picks the winner.
    """
    trees = [cls(**params, random_state=s).fit(X, y, sample_weight=w) for s in range(n_states)]
    return (
        all(
            np.array_equal(getattr(t.tree_, f), getattr(trees[0].tree_, f))
            for t in trees[1:]
            for f in FIELDS_EXACT
            if t.tree_.node_count == trees[0].tree_.node_count
        )
        and len({t.tree_.node_count for t in trees}) == 1
    )


def assert_same_tree(ours, theirs, atol=1e-6):
    """Every field of ``tree_`` equal (exact structure, floats within atol)."""
    a, b = ours.tree_, theirs.tree_
    assert a.node_count == b.node_count, f"{a.node_count} nodes vs {b.node_count}"
    for field in FIELDS_EXACT:
        np.testing.assert_array_equal(np.asarray(getattr(a, field)), getattr(b, field), field)
    for field in FIELDS_CLOSE:
        np.testing.assert_allclose(
            np.asarray(getattr(a, field)), getattr(b, field), atol=atol, rtol=0, err_msg=field
        )
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=atol)
    assert ours.get_depth() == theirs.get_depth()
    assert ours.get_n_leaves() == theirs.get_n_leaves()


def dyadic_weights(rng, n, zeros=False):
    """Weights k/4: sums are exact in float64, so a pure node's impurity is exactly 0.

    (With arbitrary floats scikit-learn can see a pure node's impurity as 4e-16 >
    eps and split it further; treelib computes node sums directly and does not.)
    """
    low = 0 if zeros else 1
    return rng.integers(low, 17, size=n) / 4.0
