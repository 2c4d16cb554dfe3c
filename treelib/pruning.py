"""Minimal cost-complexity (weakest-link) pruning, as scikit-learn does it.

Introduced in Chapter 2 (``notebooks/02_cart_classification``). Pruning is a
post-processing of a fitted :class:`~treelib.tree_structure.Tree`, so it works
the same for every builder (recursive, levelwise, hist, best-first).

The cost of a subtree ``T`` is ``R_alpha(T) = R(T) + alpha |leaves(T)|`` with
``R(T)`` the sum over its leaves of ``W_t i_t / W`` (weighted impurity, as a
share of the root's weight ``W``). Collapsing inner node ``t`` into a leaf
changes ``R`` by ``R(t) - R(T_t)`` and removes ``|leaves(T_t)| - 1`` leaves, so it
pays off once ``alpha`` reaches ``g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)``.
Weakest-link pruning collapses the node with the smallest ``g`` (on a tie, the
smallest node id, as scikit-learn's strict ``<`` scan), updates its ancestors,
and repeats until the root is a leaf. The ``g`` at each step form the pruning
path; ``ccp_alpha`` keeps the last subtree whose ``g`` is at most ``ccp_alpha``.
"""

import numpy as np

from .tree_structure import TREE_LEAF, TREE_UNDEFINED, NodeTable


def _parents(tree):
    parent = np.full(tree.node_count, TREE_UNDEFINED, dtype=np.intp)
    inner = np.flatnonzero(tree.children_left != TREE_LEAF)
    parent[tree.children_left[inner]] = inner
    parent[tree.children_right[inner]] = inner
    return parent


def _subtree(tree, node):
    """Ids of ``node`` and all its descendants."""
    found, stack = [], [node]
    while stack:
        t = stack.pop()
        found.append(t)
        if tree.children_left[t] != TREE_LEAF:
            stack += [tree.children_left[t], tree.children_right[t]]
    return found


def weakest_link_pruning(tree, ccp_alpha=None):
    """Run weakest-link pruning on ``tree`` (scikit-learn's ``_cost_complexity_prune``).

    Introduced in Chapter 2.

    Parameters
    ----------
    tree : Tree
        A fitted tree (node ids in any order; the root is node 0).
    ccp_alpha : float or None, default=None
        Stop before the first step whose effective alpha exceeds ``ccp_alpha``;
        None prunes down to the root (the whole path).

    Returns
    -------
    is_leaf : ndarray of bool, shape (node_count,)
        The nodes that are leaves of the pruned tree.
    ccp_alphas, impurities : ndarray of float64
        The effective alpha of every step taken (``0`` first, for the full
        tree) and the total leaf impurity ``R`` of the tree after it.
    """
    n = tree.node_count
    parent = _parents(tree)
    r_node = tree.weighted_n_node_samples * tree.impurity / tree.weighted_n_node_samples[0]
    is_leaf = tree.children_left == TREE_LEAF
    in_tree = np.ones(n, dtype=bool)
    r_branch, n_leaves = np.zeros(n), np.zeros(n, dtype=np.intp)
    for leaf in np.flatnonzero(is_leaf):  # bubble each leaf's R up, in scikit-learn's order
        r_branch[leaf] = r_node[leaf]
        node = leaf
        while node != 0:
            node = parent[node]
            r_branch[node] += r_node[leaf]
            n_leaves[node] += 1
    alphas, impurities = [0.0], [r_branch[0]]
    while not is_leaf[0]:
        candidate = ~is_leaf & in_tree
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(candidate, (r_node - r_branch) / (n_leaves - 1), np.inf)
        weakest = int(np.argmin(g))  # the first of equal minima: the smallest id
        if ccp_alpha is not None and ccp_alpha < g[weakest]:
            break
        below = _subtree(tree, weakest)
        in_tree[below], is_leaf[below] = False, False
        in_tree[weakest], is_leaf[weakest] = True, True
        pruned_leaves, r_diff = n_leaves[weakest] - 1, r_node[weakest] - r_branch[weakest]
        n_leaves[weakest], r_branch[weakest] = 0, r_node[weakest]
        node = parent[weakest]
        while node != TREE_UNDEFINED:
            n_leaves[node] -= pruned_leaves
            r_branch[node] += r_diff
            node = parent[node]
        alphas.append(float(g[weakest]))
        impurities.append(r_branch[0])
    return is_leaf & in_tree, np.array(alphas), np.array(impurities)


def pruning_path(tree):
    """The cost-complexity pruning path of ``tree``: a dict with ``ccp_alphas``, ``impurities``.

    Introduced in Chapter 2. As scikit-learn's ``ccp_pruning_path``: step ``k``
    gives the effective alpha at which the ``k``-th node is collapsed and the
    total leaf impurity of the tree that remains (the last entry is the root alone).
    """
    _, alphas, impurities = weakest_link_pruning(tree)
    return {"ccp_alphas": alphas, "impurities": impurities}


def prune(tree, ccp_alpha):
    """The subtree of ``tree`` that cost-complexity pruning keeps for ``ccp_alpha``.

    Introduced in Chapter 2. ``ccp_alpha == 0`` returns ``tree`` itself (as
    scikit-learn: no pruning). Node ids of the pruned tree are renumbered in
    preorder (a node, its left subtree, its right subtree), as scikit-learn's
    ``_build_pruned_tree``; a collapsed node keeps its value, impurity and
    sample counts and gets ``feature == threshold == -2``.

    Parameters
    ----------
    tree : Tree
    ccp_alpha : float >= 0

    Returns
    -------
    Tree
    """
    if ccp_alpha == 0.0:
        return tree
    is_leaf, _, _ = weakest_link_pruning(tree, ccp_alpha)
    old_ids, stack = [], [0]
    while stack:  # preorder: pop the left child first
        node = stack.pop()
        old_ids.append(node)
        if not is_leaf[node]:
            stack += [tree.children_right[node], tree.children_left[node]]
    old_ids = np.array(old_ids, dtype=np.intp)
    new_id = np.full(tree.node_count, TREE_LEAF, dtype=np.intp)
    new_id[old_ids] = np.arange(len(old_ids))
    leaf = is_leaf[old_ids]
    pruned = NodeTable(
        children_left=np.where(leaf, TREE_LEAF, new_id[tree.children_left[old_ids]]),
        children_right=np.where(leaf, TREE_LEAF, new_id[tree.children_right[old_ids]]),
        feature=np.where(leaf, TREE_UNDEFINED, tree.feature[old_ids]),
        threshold=np.where(leaf, float(TREE_UNDEFINED), tree.threshold[old_ids]),
        value=tree.value[old_ids],
        impurity=tree.impurity[old_ids],
        n_node_samples=tree.n_node_samples[old_ids],
        weighted_n_node_samples=tree.weighted_n_node_samples[old_ids],
        categorical=np.where(leaf, False, tree.categorical[old_ids]),
        missing_go_to_left=np.where(leaf, 0, tree.missing_go_to_left[old_ids]),  # (as learned)
    )
    return pruned.to_tree(tree.device, tree.n_features)
