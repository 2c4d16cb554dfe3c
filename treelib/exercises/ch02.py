"""Chapter 2's checkers: walking a fitted tree, and growing one (the capstone).

Introduced in Chapter 2.
"""

import functools

import numpy as np
import torch

from ..criteria import target_stats
from ..split import best_split
from ..tree import DecisionTreeClassifier
from ..tree_structure import TREE_LEAF
from ._framework import (
    _as_float,
    _BadOutput,
    _Case,
    _fmt,
    _run_cases,
    case_seed,
)


@functools.lru_cache(maxsize=1)
def _fitted_trees():
    """Two small trees fitted on integer features, so every threshold is an exact half."""
    rng = torch.Generator().manual_seed(case_seed(3))
    trees = []
    for n_features, n_classes, depth in ((2, 2, 3), (3, 3, 4)):
        X = torch.randint(0, 10, (80, n_features), generator=rng).float()
        noise = torch.randint(0, 4, (80,), generator=rng)
        y = (X.sum(1).long() + noise) * n_classes // (10 * n_features + 4)
        model = DecisionTreeClassifier(max_depth=depth, random_state=0)
        trees.append(model.fit(X.numpy(), y.numpy()).tree_)
    return tuple(trees)


def _walk(tree_, x, strict=False, swap=False):
    """The leaf ``x`` reaches, optionally with a classic mistake built in."""
    node = 0
    while int(tree_.children_left[node]) != TREE_LEAF:
        value, t = float(x[int(tree_.feature[node])]), float(tree_.threshold[node])
        left = (value < t if strict else value <= t) != swap
        node = int(tree_.children_left[node] if left else tree_.children_right[node])
    return node


def _tree_points(tree_, rng, n_points):
    """Points on a grid of halves; two in three are put exactly on thresholds on their way."""
    points = []
    for i in range(n_points):
        x = torch.randint(-2, 22, (int(tree_.feature.max()) + 1,), generator=rng).float() / 2
        node = 0
        while i % 3 and int(tree_.children_left[node]) != TREE_LEAF:
            f, t = int(tree_.feature[node]), float(tree_.threshold[node])
            if float(torch.rand((), generator=rng)) < 0.5:
                x[f] = t  # the node's region contains its threshold: ancestors are unchanged
            left = float(x[f]) <= t
            node = int(tree_.children_left[node] if left else tree_.children_right[node])
        points.append(x)
    return points


def _as_node_id(got):
    g = _as_float(got)
    if not g.is_integer():
        raise _BadOutput(f"returned {_fmt(got)}, not a node id", "Return the leaf's node id.")
    return int(g)


def _predict_one_hint(args, got, expected):
    tree_, x = args
    g = _as_node_id(got)
    if g == _walk(tree_, x, strict=True):
        return "At a node, `x[feature] <= threshold` goes left; you used `<`."
    if g == _walk(tree_, x, swap=True):
        return "Left and right are swapped: `x[feature] <= threshold` goes to children_left."
    if g == int(tree_.value[expected, 0].argmax()):
        return "That looks like the predicted class; return the leaf's node id instead."
    if not 0 <= g < tree_.node_count:
        return f"The tree has node ids 0..{tree_.node_count - 1} only."
    if int(tree_.children_left[g]) != TREE_LEAF:
        return f"Node {g} is not a leaf: keep walking until children_left[node] == -1."
    return None


def check_predict_one(fn):
    """Check ``predict_one(tree_, x)``, the exercise of Chapter 2.

    ``fn`` takes a fitted :class:`treelib.Tree` (``model.tree_``) and one sample
    ``x`` (1-D float32 tensor) and returns the id of the leaf that ``x`` reaches,
    starting at node 0 and going left when ``x[feature] <= threshold``. The
    trees are fitted with :class:`treelib.DecisionTreeClassifier` on seeded
    data, and many samples sit exactly on a threshold.

    Examples
    --------
    >>> def my_predict_one(tree_, x):
    ...     node = 0
    ...     while tree_.children_left[node] != -1:
    ...         if x[tree_.feature[node]] <= tree_.threshold[node]:
    ...             node = tree_.children_left[node]
    ...         else:
    ...             node = tree_.children_right[node]
    ...     return int(node)
    >>> check_predict_one(my_predict_one)
    check_predict_one: all 24 cases passed. Well done!
    True
    """
    rng = torch.Generator().manual_seed(case_seed(4))
    cases = [
        _Case((tree_, x), int(tree_.apply(x[None])[0]))
        for tree_ in _fitted_trees()
        for x in _tree_points(tree_, rng, 12)
    ]
    same_leaf = lambda got, expected: _as_node_id(got) == expected  # noqa: E731
    return _run_cases("predict_one", fn, cases, same_leaf, _predict_one_hint)


# --- The capstone: growing the tree recursively ---

TREE_FORMAT = (
    'Return nested dicts: a leaf is {"class": k}, a split node is {"feature": j, '
    '"threshold": t, "left": <node>, "right": <node>}, with x[j] <= t going left.'
)
GROW_HINTS = {
    "deeper": "Your tree is one level too deep: the root is at depth 0, and a node at depth "
    "max_depth must be a leaf (stop when depth == max_depth).",
    "shallower": "Your tree stops one level early: the root is at depth 0, so a node at depth "
    "max_depth - 1 may still split; stop only when depth == max_depth.",
    "first": "A leaf predicts the MAJORITY class of its samples (argmax of the class counts, "
    "e.g. torch.bincount(y, minlength=K).argmax()), not the class of its first sample.",
    "swap": "Left and right are swapped: the samples with x[feature] <= threshold go to the "
    "LEFT child.",
    "pure": "The predictions are right but the tree is deeper than treelib's: a pure node (one "
    "class only) is a leaf; do not split it further.",
    "depth": "The predictions are right but not the depth. Check the stopping rules: depth == "
    "max_depth, a pure node, or no split found (best_split returned None).",
}


def _variant_tree(X, y, max_depth, mistake=None, k=None, depth=0):
    """Recursive CART on :func:`treelib.split.best_split`, with one classic mistake built in."""
    k = k or int(y.max()) + 1
    counts = torch.bincount(y, minlength=k)
    leaf = {"class": int(y[0]) if mistake == "first" else int(counts.argmax())}
    shift = {"deeper": 1, "shallower": -1}.get(mistake, 0)
    limit = None if max_depth is None else max_depth + shift
    pure = int((counts > 0).sum()) == 1 and mistake != "pure"
    if len(y) < 2 or pure or (limit is not None and depth >= limit):
        return leaf
    split = best_split(X, target_stats(y, torch.ones(len(y)), "gini", k), "gini")
    if split is None:
        return leaf
    left = X[:, split.feature] <= split.threshold
    left = ~left if mistake == "swap" else left
    if bool(left.all()) or not bool(left.any()):
        return leaf
    child = functools.partial(_variant_tree, max_depth=max_depth, mistake=mistake, k=k)
    return {
        "feature": split.feature,
        "threshold": split.threshold,
        "left": child(X[left], y[left], depth=depth + 1),
        "right": child(X[~left], y[~left], depth=depth + 1),
    }


def _node_fields(node):
    """``(class,)`` for a leaf, ``(feature, threshold, left, right)`` for a split, else raise."""
    if not isinstance(node, dict):
        raise _BadOutput(f"returned a tree with a node {_fmt(node)}, not a dict", TREE_FORMAT)
    if "class" in node:
        return (int(node["class"]),)
    if not {"feature", "threshold", "left", "right"} <= set(node):
        raise _BadOutput(f"returned a tree with a node with keys {sorted(node)}", TREE_FORMAT)
    return int(node["feature"]), float(node["threshold"]), node["left"], node["right"]


def _dict_depth(node, depth=0):
    fields = _node_fields(node)
    if depth > 100:
        raise _BadOutput("returned a tree more than 100 levels deep", GROW_HINTS["depth"])
    if len(fields) == 1:
        return 0
    return 1 + max(_dict_depth(fields[2], depth + 1), _dict_depth(fields[3], depth + 1))


def _dict_predict(node, X):
    """The class of every row of ``X``, walking the nested dicts with ``x <= t`` going left."""
    predictions = []
    for x in X.tolist():
        fields = _node_fields(node)
        while len(fields) == 4:
            feature, threshold, left, right = fields
            fields = _node_fields(left if x[feature] <= threshold else right)
        predictions.append(fields[0])
    return np.array(predictions)


@functools.lru_cache(maxsize=1)
def _growing_data():
    """Seeded tie-free data sets: treelib grows the same tree whatever its feature order."""
    rng, found = torch.Generator().manual_seed(case_seed(16)), []
    while len(found) < 8:
        n, d, k = 30 + 5 * len(found), 2 + len(found) % 2, 2 + len(found) % 3 // 2
        X = (torch.rand(n, d, generator=rng) * 100).round() / 10  # one decimal: exact halves
        noise = torch.rand(n, generator=rng)
        y = ((X[:, 0] + X[:, -1] * noise) * k / 20).long().clamp(max=k - 1)
        X_test = torch.cat([X[:10], (torch.rand(20, d, generator=rng) * 100).round() / 10])
        max_depth = (1, 2, 3, None)[len(found) % 4]
        fits = [
            DecisionTreeClassifier(max_depth=max_depth, random_state=s).fit(X.numpy(), y.numpy())
            for s in range(3)
        ]
        t = fits[0].tree_
        same = all(
            np.array_equal(f.tree_.feature, t.feature)
            and np.array_equal(f.tree_.threshold, t.threshold)
            for f in fits
        )
        leaves = t.value[t.children_left == TREE_LEAF, 0]
        top2 = np.sort(leaves, axis=1)[:, -2:] if leaves.shape[1] > 1 else None
        unique_majority = top2 is None or bool((top2[:, 1] - top2[:, 0] > 1e-9).all())
        if len(torch.unique(y)) == k and same and unique_majority and t.max_depth >= 1:
            expected = (int(fits[0].get_depth()), fits[0].predict(X_test.numpy()))
            found.append(((X, y, max_depth), X_test, expected))
    return tuple(found)


def _compare_tree(X_test, got, expected):
    """True if the learner's tree has treelib's depth and predictions, else a ``_BadOutput``."""
    depth, predictions = _dict_depth(got), _dict_predict(got, X_test)
    wrong = np.flatnonzero(predictions != expected[1])
    if len(wrong):
        i = int(wrong[0])
        message = (
            f"returned a tree of depth {depth} that predicts {len(wrong)} of {len(X_test)} test "
            f"points wrongly; {_fmt(X_test[i])}: class {predictions[i]}, expected {expected[1][i]}"
        )
        raise _BadOutput(message)
    if depth != expected[0]:
        message = f"returned a tree of depth {depth}, expected {expected[0]} (same predictions)"
        raise _BadOutput(message)
    return True


def _grow_hint(args, X_test, got):
    """The classic mistake whose tree makes the learner's predictions and depth."""
    X, y, max_depth = args
    seen = (_dict_depth(got), _dict_predict(got, X_test).tolist())
    for mistake in ["deeper", "shallower", "first", "swap", "pure"]:
        wrong = _variant_tree(X, y, max_depth, mistake)
        if (_dict_depth(wrong), _dict_predict(wrong, X_test).tolist()) == seen:
            return GROW_HINTS[mistake]
    return None


def _compare_with_hint(args, X_test, got, expected):
    try:
        return _compare_tree(X_test, got, expected)
    except _BadOutput as bad:
        if bad.hint is None:
            try:
                bad.hint = _grow_hint(args, X_test, got)
            except Exception:  # a diagnosis is a bonus: it must never crash the check
                bad.hint = None
            if bad.hint is None and "same predictions" in bad.message:
                bad.hint = GROW_HINTS["depth"]
        raise


def check_grow_tree(fn):
    """Check ``grow_tree(X, y, max_depth)``, the capstone exercise of Chapter 2.

    ``fn`` grows a classification tree recursively with the Gini criterion, on
    top of the split search of Chapter 1 (for example
    ``treelib.best_split(X, stats, "gini")`` with ``stats =
    treelib.criteria.target_stats(y, torch.ones(len(y)), "gini", K)``, or your
    own ``best_threshold`` on every feature). ``X`` is a float32 tensor of shape
    (n, d), ``y`` an int64 tensor of classes ``0..K-1`` and ``max_depth`` an int
    or ``None`` (grow until every leaf is pure). A node becomes a leaf at depth
    ``max_depth`` (the root has depth 0), when it is pure, or when no split is
    found. It returns nested dicts: a leaf is ``{"class": k}`` (the majority
    class of its samples) and a split node ``{"feature": j, "threshold": t,
    "left": node, "right": node}``, the samples with ``x[j] <= t`` going left.
    The checker walks the tree on test points and compares its predictions and
    its depth with :class:`treelib.DecisionTreeClassifier` (same ``max_depth``)
    on seeded data sets where no two splits tie.

    Examples
    --------
    >>> import torch
    >>> from treelib import best_split
    >>> from treelib.criteria import target_stats
    >>> def my_grow_tree(X, y, max_depth, depth=0, k=None):
    ...     k = k or int(y.max()) + 1
    ...     counts = torch.bincount(y, minlength=k)
    ...     leaf = {"class": int(counts.argmax())}
    ...     if depth == max_depth or int((counts > 0).sum()) == 1:
    ...         return leaf
    ...     split = best_split(X, target_stats(y, torch.ones(len(y)), "gini", k), "gini")
    ...     if split is None:
    ...         return leaf
    ...     left = X[:, split.feature] <= split.threshold
    ...     return {
    ...         "feature": split.feature,
    ...         "threshold": split.threshold,
    ...         "left": my_grow_tree(X[left], y[left], max_depth, depth + 1, k),
    ...         "right": my_grow_tree(X[~left], y[~left], max_depth, depth + 1, k),
    ...     }
    >>> check_grow_tree(my_grow_tree)
    check_grow_tree: all 8 cases passed. Well done!
    True
    """
    cases = []
    for args, X_test, expected in _growing_data():
        X, y, max_depth = args
        show = f"grow_tree(X, y, max_depth={max_depth}) on {len(y)} rows, {X.shape[1]} features"
        compare = functools.partial(_compare_with_hint, args, X_test)
        cases.append(_Case(args, expected, show=show, compare=compare))
    return _run_cases("grow_tree", fn, cases, None)
