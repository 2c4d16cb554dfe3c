"""What a split search is: the protocol every level builder calls, and three searches.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). A builder decides which
nodes to open and in which order (:mod:`treelib.grow`, :mod:`treelib.levelwise`);
a *split search* finds the best split of each open node of a "level" (a
depth of the tree, or the two children of one split), under the rules of
:mod:`treelib.rules`. Three searches obey :class:`SplitSearch`:

- :class:`treelib.levelwise.ExactSearch`: every feature sorted once at the
  root, kept grouped by node and sorted inside each node;
- :class:`treelib.hist.HistogramSearch`: per-node histograms of binned features;
- :class:`NodeSearch`: one call of :func:`treelib.split.best_split` (the
  recursive builder's search, Chapter 2) per node.

On data whose bins hold every distinct value, all three return the same splits.
"""

from typing import Protocol, runtime_checkable

import torch

from .criteria import criterion_of, leaf_value, node_sums, node_weight
from .levelwise import node_is_open, take
from .rules import goes_left, too_small_a_decrease, weighted_decrease
from .split import best_split
from .tree_structure import TREE_LEAF, TREE_UNDEFINED


@runtime_checkable
class SplitSearch(Protocol):
    """The calls a builder makes to a split search (Chapter 7).

    A builder holds its level's ``samples`` (sample ids, grouped by node in
    node order) and ``node`` (each one's node, numbered from 0 in the level).
    For each level it calls :meth:`regroup_level` and then :meth:`best_splits`
    once, and reads the values its splits compare with :meth:`split_values`.
    """

    takes_grouped: bool
    """True: the search reads the builder's samples grouped by node (their
    order kept); False: it keeps its own copy and needs only each sample's node."""

    def regroup_level(self, samples, node, group_of_node, sizes):
        """Keep the samples of the level's open nodes for :meth:`best_splits`.

        ``samples`` (int64, the level's sample ids, grouped by node in node
        order) and ``node`` (each sample's node in the level); ``group_of_node``
        numbers the open nodes from 0 in node order (``-1``: a leaf, not
        searched); ``sizes`` holds the open nodes' sample counts.
        """

    def best_splits(self, total, keys, rules, criterion, trees=None, bounds=None):
        """The best allowed split of each open node (group).

        ``total`` ``(n_stats, n_groups)``: each group's summed statistics;
        ``keys`` each group's random key (:mod:`treelib.node_random`: which
        features it searches, in which order); ``rules`` the
        :class:`treelib.rules.StoppingRules`; ``trees`` each group's tree when
        several grow side by side (``None``: one tree); ``bounds`` ``(2, n_groups)``
        each group's lower and upper bound under monotonic constraints
        (``rules.monotonic``, Chapter 6; ``None``: none). Returns
        ``(group, feature, threshold, left)``: the groups that have an allowed
        split (in any order), their split's feature (int64) and threshold
        (float64; ``x <= threshold`` goes left), and the left child's summed
        statistics ``(n_stats, len(group))``. A search that saw NaN returns a
        fifth array, ``missing_left`` (int8): 1 a NaN goes left, 0 right, -1
        the group has no NaN in that feature (a future NaN follows the bigger
        child, :func:`treelib.rules.bigger_child_is_left`).
        """

    def split_values(self, samples, features):
        """Each sample's value of a feature, as a split's threshold is compared with it.

        ``samples`` and ``features`` are int64 tensors of one length; the
        result goes to :func:`treelib.rules.goes_left`.
        """


class NodeSearch:
    """The recursive builder's per-node search (Chapter 2) behind :class:`SplitSearch`.

    Introduced in Chapter 7. Each open node's samples are searched by
    :func:`treelib.split.best_split`, in the feature order the node's key
    draws (:func:`treelib.grow.draw_features`): one Python call per node, as
    the recursive builder; here to show that the protocol is all a builder
    needs, and to check the faster searches against.
    """

    takes_grouped = True  # it reads each open node's samples from the builder's list

    def __init__(self, X, stats):
        self.X, self.stats = X, stats  # (float32 (n, p), float64 (n_stats, n))
        self.has_nan = bool(X.isnan().any())
        self.active = self.sizes = None

    def regroup_level(self, samples, node, group_of_node, sizes):
        """Keep the open nodes' samples, in the builder's order (see the protocol)."""
        group = take(group_of_node, node)
        self.active = samples.index_select(0, torch.nonzero(group >= 0).squeeze(1))
        self.sizes = sizes

    def best_splits(self, total, keys, rules, criterion, trees=None, bounds=None):
        """:func:`treelib.split.best_split` of each group (:meth:`SplitSearch.best_splits`)."""
        from .grow import draw_features  # (grow imports this module: not at the top)

        found = []  # (group, feature, threshold, left sums, missing_left)
        for g, idx in enumerate(self.active.split(self.sizes.tolist())):
            X, stats = self.X.index_select(0, idx), self.stats.index_select(1, idx)
            monotonic = None
            if bounds is not None:  # (the node's bounds: Chapter 6)
                monotonic = (rules.monotonic, float(bounds[0, g]), float(bounds[1, g]))
            split = best_split(
                X, stats, criterion,
                features=draw_features(X, rules.max_features, keys[g : g + 1]),
                categorical=rules.categorical, min_samples_leaf=rules.min_samples_leaf,
                min_weight_leaf=rules.min_weight_leaf, monotonic=monotonic,
            )  # fmt: skip
            if split is None:
                continue
            x = X[:, split.feature]
            left = goes_left(x, split.threshold, split.categorical, split.missing_left)
            learned = int(split.missing_left) if bool(x.isnan().any()) else -1
            found.append((g, split.feature, split.threshold, node_sums(stats[:, left]), learned))
        device = total.device
        groups, features, thresholds, lefts, learned = zip(*found) if found else ([],) * 5
        out = (
            torch.tensor(groups, dtype=torch.int64, device=device),
            torch.tensor(features, dtype=torch.int64, device=device),
            torch.tensor(thresholds, dtype=torch.float64, device=device),
            torch.stack(lefts, 1) if lefts else total.new_zeros(len(total), 0),
        )
        if self.has_nan:
            return out + (torch.tensor(learned, dtype=torch.int8, device=device),)
        return out

    def split_values(self, samples, features):
        """Each sample's value of a feature: ``X[samples, features]``."""
        return self.X[samples, features]


def search_level(search, stats, samples, sizes, depth, keys, criterion, rules, root_weight):
    """The nodes of a small level and the best splits of those that may split (Chapter 7).

    What :func:`treelib.levelwise.grow_levels` does with one level, for the
    best-first builder on a search (:func:`treelib.grow.grow_best_first_on`):
    ``samples`` are the level's samples grouped by node (``sizes`` each), at
    depth ``depth``, the nodes' keys ``keys``. Each node's sums give its
    value, weight and impurity; the stopping rules before the search
    (:func:`treelib.levelwise.node_is_open`) pick the nodes ``search``
    searches; a split whose improvement (:func:`treelib.rules.weighted_decrease`)
    is too small (:func:`treelib.rules.too_small_a_decrease`) is dropped.
    Returns ``(nodes, splits)``: a leaf's node dict per node
    (:func:`treelib.grow.tree_of`), and per node that can split (by index in
    the level) ``(improvement, feature, threshold, missing_left)``, where
    ``missing_left`` is 1, 0 or -1 as :meth:`SplitSearch.best_splits` gives it.
    """
    impurity_of, device = criterion_of(criterion).impurity, stats.device
    m = len(sizes)
    node = torch.repeat_interleave(torch.arange(m, device=device), sizes)
    total = torch.zeros(stats.shape[0], m, dtype=stats.dtype, device=device)
    total.index_add_(1, node, stats.index_select(1, samples))
    weight, impurity = node_weight(total, criterion), impurity_of(total)
    values = leaf_value(total, criterion).T
    nodes = [
        dict(
            feature=TREE_UNDEFINED,
            threshold=float(TREE_UNDEFINED),
            left=TREE_LEAF,
            right=TREE_LEAF,
            value=values[i],
            impurity=float(impurity[i]),
            n=int(sizes[i]),
            weight=float(weight[i]),
            categorical=False,
            missing_left=False,
        )  # fmt: skip
        for i in range(m)
    ]
    is_open = node_is_open(sizes, weight, impurity, depth, rules)
    open_nodes = torch.nonzero(is_open).squeeze(1)
    if len(open_nodes) == 0:
        return nodes, {}
    group_of_node = torch.where(is_open, torch.cumsum(is_open, 0) - 1, -1)  # -1: a leaf
    search.regroup_level(samples, node, group_of_node, sizes.index_select(0, open_nodes))
    found = search.best_splits(total[:, open_nodes], keys[open_nodes], rules, criterion)
    groups, f, threshold, left, *learned = found
    split = open_nodes[groups]
    right = total[:, split] - left
    improvement = weighted_decrease(
        weight[split], root_weight, impurity[split],
        node_weight(left, criterion), impurity_of(left),
        node_weight(right, criterion), impurity_of(right),
    )  # fmt: skip
    keep = ~too_small_a_decrease(improvement, rules.min_impurity_decrease)
    learned = learned[0] if learned else torch.full_like(groups, -1)
    splits = {
        int(i): (float(gain), int(feature), float(t), int(side))
        for i, gain, feature, t, side, kept in zip(
            split.tolist(),
            improvement.tolist(),
            f.tolist(),
            threshold.tolist(),
            learned.tolist(),
            keep.tolist(),
        )  # fmt: skip
        if kept
    }
    return nodes, splits
