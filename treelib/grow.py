"""Growing a CART tree: the stump's split search, applied recursively.

Introduced in Chapter 2 (``notebooks/02_cart_classification``). This is the
readable builder: one Python call per node, each node's split search
vectorised over samples and features. Chapter 7 grows whole levels at once.
"""

from functools import partial
from typing import NamedTuple

import torch

from ._validation import EPSILON
from .criteria import CRITERIA, leaf_value, node_weight
from .node_random import child_keys, root_key, search_ranks
from .split import FEATURE_THRESHOLD, best_split, goes_left
from .tree_structure import TREE_LEAF, TREE_UNDEFINED, Tree


class StoppingRules(NamedTuple):
    """Resolved hyper-parameters that decide when a node becomes a leaf."""

    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    min_impurity_decrease: float
    max_features: int
    categorical: frozenset = frozenset()  # features split one-vs-rest (Chapter 6)
    splitter: str = "best"  # "random": one random threshold per feature (Chapter 5)


def draw_features(X, max_features, key):
    """Features a node searches, in the (random) order that breaks ties.

    The order comes from the node's key (see :mod:`treelib.node_random`); with
    ``max_features`` below the number of features only some are searched.
    """
    p = X.shape[1]
    constant = None
    if max_features < p:
        low, high = torch.aminmax(X, dim=0)
        constant = (high <= low + FEATURE_THRESHOLD)[None, :]
    ranks = search_ranks(key, p, max_features, constant)[0]
    order = torch.argsort(ranks)
    return order[ranks[order] < p].tolist()


def is_leaf_before_search(n, weight, impurity, depth, rules):
    """scikit-learn's stopping rules that need no split search."""
    return (
        depth >= rules.max_depth
        or n < rules.min_samples_split
        or n < 2 * rules.min_samples_leaf
        or weight < 2 * rules.min_weight_leaf
        or impurity <= EPSILON
    )


def evaluate_node(X, stats, idx, depth, key, criterion, rules, root_weight):
    """A new node of the samples ``idx``, and its best allowed split (or None).

    Introduced in Chapter 2: what both recursive builders (:func:`grow_tree`
    and the best-first one) do at each node. Sum the target statistics of the
    node's samples and compute its impurity and value; apply the stopping
    rules; search the best split among the features the node's ``key`` draws
    (with ``splitter="random"``, the best of one random threshold per drawn
    feature: :func:`treelib.extra_trees.random_split`, Chapter 5).
    Returns ``(node, split, left)``: ``node`` a dict of the node's fields (a
    leaf's), ``split`` None when the node stays a leaf, and ``left`` the mask
    of the samples of ``idx`` that the split sends left.
    """
    node_stats = stats[:, idx].sum(1)
    weight = float(node_weight(node_stats, criterion))
    impurity = float(CRITERIA[criterion](node_stats))
    node = dict(
        feature=TREE_UNDEFINED, threshold=float(TREE_UNDEFINED), left=TREE_LEAF,
        right=TREE_LEAF, value=leaf_value(node_stats, criterion), impurity=impurity,
        n=len(idx), weight=weight, categorical=False,
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
        root_weight=root_weight,
    )  # fmt: skip
    if split is None or split.improvement + EPSILON < rules.min_impurity_decrease:
        return node, None, None
    return node, split, goes_left(X_node[:, split.feature], split.threshold, split.categorical)


def set_split(node, split):
    """Make ``node`` an inner node that splits by ``split``."""
    node.update(feature=split.feature, threshold=split.threshold, categorical=split.categorical)


def grow_tree(X, stats, criterion, rules, seed):
    """Grow a tree depth-first; node ids come out in preorder.

    ``X`` is float32 (n, p); ``stats`` the per-sample target statistics;
    ``seed`` an int that fixes every node's feature order.
    """
    nodes = []  # one dict per node, in preorder
    root_weight = float(node_weight(stats.sum(1), criterion))

    def grow(idx, depth, key):
        node, split, left = evaluate_node(X, stats, idx, depth, key, criterion, rules, root_weight)
        nodes.append(node)
        node_id = len(nodes) - 1
        if split is not None:  # an inner node: grow the left subtree, then the right one
            set_split(node, split)
            node["left"] = grow(idx[left], depth + 1, child_keys(key, 0))
            node["right"] = grow(idx[~left], depth + 1, child_keys(key, 1))
        return node_id

    grow(torch.arange(X.shape[0], device=X.device), 0, root_key(seed, X.device))
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
    root_weight = float(node_weight(stats.sum(1), criterion))
    frontier = {}  # node id -> (improvement, split, samples, left mask, depth, key)

    def add(idx, depth, key):
        node, split, left = evaluate_node(X, stats, idx, depth, key, criterion, rules, root_weight)
        nodes.append(node)
        if split is not None:
            frontier[len(nodes) - 1] = (split.improvement, split, idx, left, depth, key)
        return len(nodes) - 1

    add(torch.arange(X.shape[0], device=X.device), 0, root_key(seed, X.device))
    for _ in range(max_leaf_nodes - 1):
        if not frontier:
            break
        node_id = max(frontier, key=lambda i: (frontier[i][0], -i))  # ties: the oldest node
        _, split, idx, left, depth, key = frontier.pop(node_id)
        set_split(nodes[node_id], split)
        nodes[node_id]["left"] = add(idx[left], depth + 1, child_keys(key, 0))
        nodes[node_id]["right"] = add(idx[~left], depth + 1, child_keys(key, 1))
    return tree_of(nodes, X.device)


def tree_of(nodes, device):
    """A :class:`Tree` from a list of node dicts (the node id is the list index)."""
    return Tree(
        device=device,
        children_left=[n["left"] for n in nodes],
        children_right=[n["right"] for n in nodes],
        feature=[n["feature"] for n in nodes],
        threshold=[n["threshold"] for n in nodes],
        value=torch.stack([n["value"] for n in nodes]).unsqueeze(1),
        impurity=[n["impurity"] for n in nodes],
        n_node_samples=[n["n"] for n in nodes],
        weighted_n_node_samples=[n["weight"] for n in nodes],
        categorical=[n["categorical"] for n in nodes],
    )
