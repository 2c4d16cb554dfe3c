"""Growing a CART tree: the stump's split search, applied recursively.

Introduced in Chapter 2 (``notebooks/02_cart_classification``). This is the
readable builder: one Python call per node, each node's split search
vectorised over samples and features. Chapter 7 grows whole levels at once.
"""

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


def grow_tree(X, stats, criterion, rules, seed):
    """Grow a tree depth-first; node ids come out in preorder.

    ``X`` is float32 (n, p); ``stats`` the per-sample target statistics;
    ``seed`` an int that fixes every node's feature order.
    """
    nodes = []  # one dict per node, in preorder
    impurity_of = CRITERIA[criterion]
    root_weight = float(node_weight(stats.sum(1), criterion))

    def grow(idx, depth, key):
        node_stats = stats[:, idx].sum(1)
        weight, impurity = float(node_weight(node_stats, criterion)), float(impurity_of(node_stats))
        node = dict(
            feature=TREE_UNDEFINED, threshold=float(TREE_UNDEFINED), left=TREE_LEAF,
            right=TREE_LEAF, value=leaf_value(node_stats, criterion), impurity=impurity,
            n=len(idx), weight=weight, categorical=False,
        )  # fmt: skip
        nodes.append(node)
        if is_leaf_before_search(len(idx), weight, impurity, depth, rules):
            return len(nodes) - 1
        X_node = X[idx]
        split = best_split(
            X_node, stats[:, idx], criterion,
            features=draw_features(X_node, rules.max_features, key),
            categorical=rules.categorical,
            min_samples_leaf=rules.min_samples_leaf, min_weight_leaf=rules.min_weight_leaf,
            root_weight=root_weight,
        )  # fmt: skip
        if split is None or split.improvement + EPSILON < rules.min_impurity_decrease:
            return len(nodes) - 1
        left = goes_left(X_node[:, split.feature], split.threshold, split.categorical)
        node_id = len(nodes) - 1
        node.update(feature=split.feature, threshold=split.threshold, categorical=split.categorical)
        node["left"] = grow(idx[left], depth + 1, child_keys(key, 0))
        node["right"] = grow(idx[~left], depth + 1, child_keys(key, 1))
        return node_id

    grow(torch.arange(X.shape[0]), 0, root_key(seed))
    return Tree(
        device=X.device,
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
