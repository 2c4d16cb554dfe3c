"""Growing a CART tree: the stump's split search, applied recursively.

Introduced in Chapter 2 (``notebooks/02_cart_classification``). This is the
readable builder: one Python call per node, each node's split search
vectorised over samples and features. Chapter 7 grows whole levels at once.
"""

import math
from functools import partial

import torch

from .criteria import criterion_of, leaf_value, node_sums, node_weight
from .node_random import child_keys, root_key, search_ranks
from .rules import (  # noqa: F401  (is_leaf_before_search, StoppingRules: named from here)
    FEATURE_THRESHOLD,
    StoppingRules,
    bigger_child_is_left,
    child_bounds,
    clip_value,
    goes_left,
    is_constant,
    is_leaf_before_search,
    too_small_a_decrease,
)
from .search import search_level
from .split import best_split
from .tree_structure import TREE_LEAF, TREE_UNDEFINED, NodeTable


def draw_features(X, max_features, key):
    """Features a node searches, in the (random) order that breaks ties.

    The order comes from the node's key (see :mod:`treelib.node_random`); with
    ``max_features`` below the number of features only some are searched.
    """
    p = X.shape[1]
    constant = None
    if max_features < p:
        constant = constant_features(X)[None, :]
    ranks = search_ranks(key, p, max_features, constant)[0]
    order = torch.argsort(ranks)
    return order[ranks[order] < p].tolist()


def constant_features(X):
    """Features a node cannot split: all NaN, or one value (``FEATURE_THRESHOLD``) and no NaN.

    As scikit-learn 1.9: a feature whose known values are all equal but that
    has NaN can still split the NaN from the rest.
    """
    missing = X.isnan()
    low = torch.where(missing, float("inf"), X).amin(0)
    high = torch.where(missing, float("-inf"), X).amax(0)
    has_missing = missing.any(0)
    return is_constant(low, high, has_missing, missing.all(0))


def evaluate_node(X, stats, idx, depth, key, criterion, rules, root_weight, bounds=None):
    """A new node of the samples ``idx``, and its best allowed split (or None).

    Introduced in Chapter 2: what both recursive builders (:func:`grow_tree`
    and the best-first one) do at each node. Sum the target statistics of the
    node's samples and compute its impurity and value; apply the stopping
    rules; search the best split among the features the node's ``key`` draws
    (with ``splitter="random"``, the best of one random threshold per drawn
    feature: :func:`treelib.extra_trees.random_split`, Chapter 5).
    Returns ``(node, split, left)``: ``node`` a dict of the node's fields (a
    leaf's), ``split`` None when the node stays a leaf, and ``left`` the mask
    of the samples of ``idx`` that the split sends left. ``bounds``: the
    node's ``(lower, upper)`` bounds in a monotonic tree (Chapter 6); its value
    is clipped to them.
    """
    node_stats = criterion_of(criterion).node_stats(stats[:, idx])  # (sums: in sample order)
    weight = float(node_weight(node_stats, criterion))
    impurity = float(criterion_of(criterion).impurity(node_stats))
    value = leaf_value(node_stats, criterion)
    monotonic = None
    if rules.monotonic is not None:
        value = clip_value(value, *bounds, not criterion_of(criterion).is_regression)
        monotonic = (rules.monotonic, *bounds)
    node = dict(
        feature=TREE_UNDEFINED, threshold=float(TREE_UNDEFINED), left=TREE_LEAF,
        right=TREE_LEAF, value=value, impurity=impurity,
        n=len(idx), weight=weight, categorical=False, missing_left=False,
    )  # fmt: skip
    if is_leaf_before_search(len(idx), weight, impurity, depth, rules):
        return node, None, None
    X_node = X[idx]
    search = best_split
    if rules.splitter == "random":  # extra trees (Chapter 5)
        from .extra_trees import random_split  # (it imports the forests, which import us)

        search = partial(random_split, key=key)
    split = search(
        X_node, stats[:, idx], criterion,
        features=draw_features(X_node, rules.max_features, key),
        categorical=rules.categorical,
        min_samples_leaf=rules.min_samples_leaf, min_weight_leaf=rules.min_weight_leaf,
        root_weight=root_weight, monotonic=monotonic,
    )  # fmt: skip
    if split is None or too_small_a_decrease(split.improvement, rules.min_impurity_decrease):
        return node, None, None
    x = X_node[:, split.feature]
    return node, split, goes_left(x, split.threshold, split.categorical, split.missing_left)


def set_split(node, split):
    """Make ``node`` an inner node that splits by ``split``."""
    node.update(
        feature=split.feature, threshold=split.threshold, categorical=split.categorical,
        missing_left=split.missing_left,
    )  # fmt: skip


def split_bounds(split, rules, bounds):
    """The bounds of the children of a node split by ``split`` (Chapter 6), or (None, None)."""
    if rules.monotonic is None:
        return None, None
    return child_bounds(int(rules.monotonic[split.feature]), *bounds, split.middle)


def grow_tree(X, stats, criterion, rules, seed):
    """Grow a tree depth-first; node ids come out in preorder.

    ``X`` is float32 (n, p); ``stats`` the per-sample target statistics;
    ``seed`` an int that fixes every node's feature order.
    """
    nodes = []  # one dict per node, in preorder
    root_weight = float(node_weight(node_sums(stats), criterion))

    def grow(idx, depth, key, bounds):
        node, split, left = evaluate_node(
            X, stats, idx, depth, key, criterion, rules, root_weight, bounds
        )
        nodes.append(node)
        node_id = len(nodes) - 1
        if split is not None:  # an inner node: grow the left subtree, then the right one
            set_split(node, split)
            left_bounds, right_bounds = split_bounds(split, rules, bounds)
            node["left"] = grow(idx[left], depth + 1, child_keys(key, 0), left_bounds)
            node["right"] = grow(idx[~left], depth + 1, child_keys(key, 1), right_bounds)
        return node_id

    root = torch.arange(X.shape[0], device=X.device)
    grow(root, 0, root_key(seed, X.device), (-math.inf, math.inf))
    return tree_of(nodes, X.device)


def grow_tree_best_first(X, stats, criterion, rules, seed, max_leaf_nodes):
    """Grow at most ``max_leaf_nodes`` leaves, best first, as scikit-learn's BestFirstTreeBuilder.

    Introduced in Chapter 2. Every node is created with its best allowed split
    (the same rules and search as :func:`grow_tree`) and waits in a frontier;
    the waiting node whose split has the largest improvement (the weighted
    impurity decrease, scaled by the node's share of the root weight) is split
    next, until ``max_leaf_nodes - 1`` nodes have been split; every other node
    is a leaf. ``max_depth`` and ``min_impurity_decrease`` act when a node is
    created: a node they stop never enters the race. Ties between equal
    improvements go to the node created first (scikit-learn's heap leaves
    that order unspecified). Node ids are in order of creation: the root,
    then the two children of each split node, left first, in splitting order.
    The feature order of each node comes from its path (:mod:`treelib.node_random`),
    so it does not depend on when the node is split.
    """
    nodes = []
    root_weight = float(node_weight(node_sums(stats), criterion))
    frontier = {}  # node id -> (improvement, split, samples, left mask, depth, key, bounds)

    def add(idx, depth, key, bounds):
        node, split, left = evaluate_node(
            X, stats, idx, depth, key, criterion, rules, root_weight, bounds
        )
        nodes.append(node)
        if split is not None:
            frontier[len(nodes) - 1] = (split.improvement, split, idx, left, depth, key, bounds)
        return len(nodes) - 1

    add(
        torch.arange(X.shape[0], device=X.device),
        0,
        root_key(seed, X.device),
        (-math.inf, math.inf),
    )
    for _ in range(max_leaf_nodes - 1):
        if not frontier:
            break
        node_id = next_to_split(frontier)
        _, split, idx, left, depth, key, bounds = frontier.pop(node_id)
        set_split(nodes[node_id], split)
        left_bounds, right_bounds = split_bounds(split, rules, bounds)
        nodes[node_id]["left"] = add(idx[left], depth + 1, child_keys(key, 0), left_bounds)
        nodes[node_id]["right"] = add(idx[~left], depth + 1, child_keys(key, 1), right_bounds)
    return tree_of(nodes, X.device)


# a node dict's short names of the Tree's fields (its other keys are the fields' own names)
NODE_FIELDS = dict(
    left="children_left",
    right="children_right",
    n="n_node_samples",
    weight="weighted_n_node_samples",
    missing_left="missing_go_to_left",
)


def next_to_split(frontier):
    """The node a best-first builder splits next: the largest improvement (Chapter 2).

    ``frontier`` maps node ids to tuples whose first entry is the node's
    improvement; ties go to the node created first (the smallest id).
    """
    return max(frontier, key=lambda i: (frontier[i][0], -i))


def grow_best_first_on(search, stats, criterion, rules, seed, max_leaf_nodes):
    """:func:`grow_tree_best_first` on a level search: leaf-wise growth (Chapter 7).

    ``search`` obeys :class:`treelib.search.SplitSearch` and reads the
    samples grouped by node (``takes_grouped``: the histograms of
    :class:`treelib.hist.HistogramSearch`, or :class:`treelib.search.NodeSearch`).
    The root, then each split's two children, are searched together as a
    small level (:func:`treelib.search.search_level`); the frontier rule is
    the exact builder's (:func:`next_to_split`), so the nodes, their ids and
    the tree are the same. Chapter 8's gradient boosting grows its trees this way
    when given ``max_leaf_nodes`` and ``tree_method="hist"``.
    """
    nodes, frontier, device = [], {}, stats.device
    root_weight = float(node_weight(node_sums(stats), criterion))

    def add(samples, sizes, depth, keys):  # new nodes and their splits: into the frontier
        new, splits = search_level(
            search, stats, samples, sizes, depth, keys, criterion, rules, root_weight
        )
        first = len(nodes)
        nodes.extend(new)
        for i, part in enumerate(samples.split(sizes.tolist())):
            if i in splits:
                frontier[first + i] = splits[i] + (part, depth, keys[i : i + 1])
        return first

    n = stats.shape[1]
    add(torch.arange(n, device=device), torch.tensor([n], device=device), 0, root_key(seed, device))
    for _ in range(max_leaf_nodes - 1):
        if not frontier:
            break
        node_id = next_to_split(frontier)
        _, feature, threshold, learned, samples, depth, key = frontier.pop(node_id)
        categorical = feature in rules.categorical  # one-vs-rest: x == c (Chapter 6)
        value = search.split_values(samples, torch.full_like(samples, feature))
        left = goes_left(value, threshold, categorical, missing_left=learned == 1)
        n_left = int(left.sum())
        sizes = torch.tensor([n_left, len(samples) - n_left], device=device)
        keys = child_keys(key.repeat(2), torch.arange(2, device=device))
        first = add(torch.cat([samples[left], samples[~left]]), sizes, depth + 1, keys)
        missing_left = learned == 1 if learned >= 0 else bigger_child_is_left(*sizes.tolist())
        nodes[node_id].update(
            feature=feature, threshold=threshold, left=first, right=first + 1,
            categorical=categorical, missing_left=missing_left and not categorical,
        )  # fmt: skip
    return tree_of(nodes, device)


def tree_of(nodes, device):
    """A :class:`Tree` from a list of node dicts (the node id is the list index).

    A node's value has shape (n_values,), or (n_outputs, n_values) with
    several outputs (Chapter 3). The dicts of :func:`evaluate_node` fill a
    :class:`treelib.tree_structure.NodeTable` row by row (:data:`NODE_FIELDS`:
    their short names of the Tree's fields).
    """
    table = NodeTable()
    for node in nodes:
        table.add(**{NODE_FIELDS.get(name, name): value for name, value in node.items()})
    return table.to_tree(device)
