"""Level-wise (breadth-first) growth: all nodes of one depth split at once.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). The recursive builder of
Chapter 2 pays Python's overhead once per node; this one pays it once per
*level*. Each feature is sorted once, at the root. At every level the samples
of the open nodes are kept grouped by node and sorted by value inside each
node, so one cumulative sum per feature, minus the totals of the nodes before,
gives the left child of every candidate split of every node. A segmented
arg-max picks each node's winner, and a stable merge (no sort) regroups the
samples by child. It grows exactly the tree the recursive builder grows: the
same random choices (:mod:`treelib.node_random`) and the same tie rule
(:func:`treelib.split.is_tie_or_best`), so scores that its level-wide sums
round differently from the recursive builder's per-node sums still tie.
"""

import torch

from ._validation import EPSILON
from .criteria import CRITERIA, leaf_value, node_weight
from .node_random import child_keys, root_key, search_ranks
from .split import FEATURE_THRESHOLD, is_tie_or_best, split_scores, tie_tolerance
from .tree_structure import TREE_LEAF, TREE_UNDEFINED, Tree

BLOCK = 2**17  # elements per block of feature rows scored together: bounds temporary memory


def take(values, index):
    """``values[index]`` for a 1-D ``values``, or row by row for a 2-D one.

    ``torch.take`` on contiguous rows is much faster than advanced indexing.
    """
    if values.dim() == 1:
        return torch.take(values, index)
    return torch.stack([torch.take(row, index) for row in values.contiguous()])


def segment_starts(sizes):
    """Offset of each node's segment in an array grouped by node."""
    return torch.cumsum(sizes, 0) - sizes


def regroup_codes(group, sizes, right):
    """Per sample, what regrouping does with it: ``(code, base)``.

    ``group`` is each sample's new group (``-1``: dropped), ``sizes`` each
    group's size, ``right`` whether the group is a right child. ``code`` is 0
    (left child), 1 (right child) or 2 (dropped); ``base`` is where the sample's
    group starts, minus the samples of the same side in earlier groups.
    """
    g = group.clamp(min=0)
    code = torch.where(group >= 0, torch.take(right, g).to(torch.int8), 2)
    start = segment_starts(sizes)
    side_start = torch.where(right, segment_starts(sizes * right), segment_starts(sizes * ~right))
    return code, torch.take(start - side_start, g)


def regroup_positions(code, base, n_kept):
    """Where each element goes when every row is sorted by group, stably.

    ``code`` and ``base`` come from :func:`regroup_codes`, one per element.
    Each row is sorted by parent node, so along a row the left children's
    groups never decrease, nor do the right children's: the sort is a merge of
    the two. An element's place is its group's start (``base`` plus the
    elements of its side in earlier groups) plus its rank in its group, which
    is its rank among the elements of its side, counted along the row.
    Dropped elements go to position ``n_kept``.
    """
    on_right = code == 1
    rank = (code == 0).cumsum(-1)  # rank + 1 on the left side (in place from here: memory)
    rank += on_right * (on_right.cumsum(-1) - rank)  # ... and on the right side
    rank += base - 1
    return rank.masked_fill_(code == 2, n_kept)


def apply_positions(values, positions, n_kept):
    """Move ``values`` along the last axis to ``positions`` (from :func:`regroup_positions`)."""
    out = values.new_empty(values.shape[:-1] + (n_kept + 1,))
    return out.scatter_(-1, positions.expand_as(values), values)[..., :n_kept]


def cumsum_by_tree(values, lengths=None):
    """Cumulative sum along the last axis, restarted where each tree's part begins.

    ``lengths`` lists the parts' lengths (``None``: one part). A forest grown
    batched (:mod:`treelib.batched`) sums each tree's samples from zero, as the
    tree grown alone does, so both round alike.
    """
    if lengths is None:
        return values.cumsum(-1)
    return torch.cat([part.cumsum(-1) for part in values.split(lengths, -1)], -1)


def tree_parts(trees, sizes):
    """``(nodes per tree, samples per tree)`` as lists, for :func:`cumsum_by_tree`.

    ``trees`` is each node's tree (nodes grouped by tree), ``sizes`` its sample
    count; ``None`` gives ``(None, None)``: one tree.
    """
    if trees is None:
        return None, None
    _, nodes = torch.unique_consecutive(trees, return_counts=True)
    ends = torch.cumsum(nodes, 0) - 1
    samples = torch.diff(torch.cumsum(sizes, 0)[ends], prepend=sizes.new_zeros(1))
    return nodes.tolist(), samples.tolist()


def segmented_argmax(scores, segment, tie_key, n_segments, tol=0.0):
    """Per segment, the position with the highest score (lowest ``tie_key`` on ties).

    ``scores`` and ``tie_key`` are 1-D, ``segment[i]`` is the segment of
    position ``i``; scores within ``tol[segment]`` of the segment's best are
    ties (:func:`treelib.split.is_tie_or_best`). Returns a bool mask with at
    most one True per segment; segments whose scores are all ``-inf`` get none.
    """
    best = torch.full((n_segments,), float("-inf"), dtype=scores.dtype, device=scores.device)
    best.scatter_reduce_(0, segment, scores, "amax")
    tol = tol[segment] if torch.is_tensor(tol) else tol
    is_best = is_tie_or_best(scores, best[segment], tol)
    key = torch.where(is_best, tie_key, torch.iinfo(torch.int64).max)
    best_key = torch.full((n_segments,), torch.iinfo(torch.int64).max, device=scores.device)
    best_key.scatter_reduce_(0, segment, key, "amin")
    return is_best & (key == best_key[segment])


def level_candidates(xs, sorted_stats, sizes, total, ranks, rules, criterion, trees=None):
    """Score every ``x <= t`` candidate of every node of a level; return each node's best.

    ``xs`` is ``(p, n_active)``: per feature, the values of the samples of the
    level's open nodes, grouped by node (``sizes`` samples each, in node order)
    and sorted inside each node; ``sorted_stats`` holds their statistics in the
    same layout and ``total`` each node's sums. The segments lie at the same
    positions in every row, so whatever depends only on the node is a vector
    over positions, shared by the ``p`` rows. Features are scored a block of
    rows at a time (``BLOCK`` elements), which bounds the temporary arrays.
    ``trees`` gives each node's tree when several trees grow side by side:
    each tree's cumulative sums then start from zero (:func:`cumsum_by_tree`).
    """
    p, n_active = xs.shape
    m, device = len(sizes), xs.device
    positions = torch.arange(n_active, device=device)
    node = torch.repeat_interleave(torch.arange(m, device=device), sizes, output_size=n_active)
    n_left = positions - segment_starts(sizes)[node] + 1
    n_right = sizes[node] - n_left
    node_parts, parts = tree_parts(trees, sizes)
    shared = dict(
        node=node,
        parts=parts,
        earlier=(cumsum_by_tree(total, node_parts) - total)[:, None, node],  # earlier nodes' totals
        total=total[:, None, node],
        big_enough=(n_left >= rules.min_samples_leaf) & (n_right >= rules.min_samples_leaf),
    )
    scores = torch.empty(p, n_active, dtype=total.dtype, device=device)
    per_feature = torch.full((p, m), float("-inf"), dtype=total.dtype, device=device)
    rows = max(1, BLOCK // max(n_active, 1))
    for r in range(0, p, rows):
        block = slice(r, r + rows)
        scores[block] = block_scores(xs[block], sorted_stats[:, block], shared, rules, criterion)
        per_feature[block].scatter_reduce_(
            1, node.expand(len(scores[block]), -1), scores[block], "amax"
        )
    # each node's best feature: the lowest rank among the features whose best
    # score ties with the node's best (the tie rule of treelib.split)
    per_feature = torch.where(ranks.T < p, per_feature, float("-inf"))  # not searched
    best, tol = per_feature.max(0).values, tie_tolerance(total, criterion)
    tie = torch.where(is_tie_or_best(per_feature, best, tol), ranks.T, p).min(0).values
    searched = torch.nonzero(best > float("-inf")).squeeze(1)
    feature = (ranks == tie[:, None]).int().argmax(1)  # the feature with that rank
    # inside that feature's row, the first position (smallest threshold) that ties
    row_scores = scores[feature[node], positions]
    key = torch.where(is_tie_or_best(row_scores, best[node], tol[node]), positions, n_active)
    first = torch.full((m,), n_active, device=device).scatter_reduce_(0, node, key, "amin")
    f, i = feature[searched], first[searched]
    a, b = xs[f, i].double(), xs[f, i + 1].double()
    t = a / 2 + b / 2
    threshold = torch.where((t == b) | t.isinf(), a, t)  # scikit-learn's midpoint rule
    # the winners' left children: a cumulative sum along each node's chosen row
    chosen = cumsum_by_tree(sorted_stats[:, feature[node], positions], parts)  # (n_stats, n_active)
    start = segment_starts(sizes)[searched]
    first_of_tree = torch.zeros(n_active + 1, dtype=torch.bool, device=device)
    first_of_tree[segment_starts(torch.tensor(parts or [n_active], device=device))] = True
    restarts = first_of_tree[start]  # a tree's first node: nothing before it
    before = torch.where(restarts, 0.0, chosen[:, (start - 1).clamp(min=0)])
    return searched, f, threshold, chosen[:, i] - before


def block_scores(xs, sorted_stats, shared, rules, criterion):
    """The scores of a block of feature rows (``-inf``: not a candidate)."""
    # segmented cumulative sum: the running sum minus the totals of the earlier nodes
    left = cumsum_by_tree(sorted_stats, shared["parts"]) - shared["earlier"]  # (n_stats, rows, n)
    right = shared["total"] - left
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)
    allowed = torch.zeros_like(xs, dtype=torch.bool)
    allowed[:, :-1] = xs[:, 1:] > xs[:, :-1] + FEATURE_THRESHOLD  # float32, as sklearn
    allowed &= shared["big_enough"]
    if rules.min_weight_leaf > 0:
        allowed &= (w_left >= rules.min_weight_leaf) & (w_right >= rules.min_weight_leaf)
    return torch.where(allowed, scores, float("-inf"))


def node_is_open(sizes, weight, impurity, depth, rules):
    """The stopping rules of :func:`treelib.grow.is_leaf_before_search`, for a whole level."""
    closed = (sizes < rules.min_samples_split) | (sizes < 2 * rules.min_samples_leaf)
    closed |= (weight < 2 * rules.min_weight_leaf) | (impurity <= EPSILON)
    return ~closed & (depth < rules.max_depth)


class ExactSearch:
    """Exact split search for a whole level: features sorted once, kept grouped by node.

    It holds, per feature, the samples of the level's *open* nodes (the ones
    that will be searched), grouped by open node in node order and sorted by
    value inside each node: their ids (``order``), values (``xs``) and
    statistics (``sorted_stats``).
    """

    def __init__(self, X, stats):
        XT = X.T.contiguous()
        self.order = torch.argsort(XT, dim=1, stable=True)  # (p, n): the only full sort
        self.xs = torch.gather(XT, 1, self.order)
        self.sorted_stats = take(stats, self.order)  # (n_stats, p, n)
        self.sizes = torch.tensor([X.shape[0]], device=X.device)

    @classmethod
    def for_trees(cls, X, stats, rows, sizes):
        """The search of many trees grown side by side (:mod:`treelib.batched`).

        Sample ``i`` is row ``rows[i]`` of ``X``; the samples come tree after
        tree (``sizes`` each), each tree's in increasing row order. Each row of
        ``X.T`` is sorted once; each tree's samples are then picked out of that
        order, so inside a tree equal values keep their row order, as a tree
        grown alone sorts them.
        """
        search = cls.__new__(cls)
        XT = X.T.contiguous()
        order = torch.argsort(XT, dim=1, stable=True)  # (p, n)
        trees = torch.arange(len(sizes), device=X.device)
        tree = torch.repeat_interleave(trees, sizes, output_size=len(rows))
        sample = torch.full((len(sizes), X.shape[0]), -1, dtype=torch.int64, device=X.device)
        sample[tree, rows] = torch.arange(len(rows), device=X.device)
        parts = []
        for t in range(len(sizes)):  # tree t's samples, in each feature's sorted order
            ids = sample[t].index_select(0, order.view(-1)).view(order.shape)
            parts.append(ids[ids >= 0].view(X.shape[1], -1))
        search.order = torch.cat(parts, 1)
        search.xs = torch.gather(XT, 1, torch.take(rows, search.order))
        search.sorted_stats = take(stats, search.order)
        search.sizes = sizes
        return search

    def regroup(self, group, n_groups, right):
        """Keep samples with ``group >= 0``, regrouped by group, each group still sorted.

        ``group`` gives each sample its open node's index (``-1``: not searched
        any more), ``right`` says which groups are right children. Groups are
        numbered in node order, so a *stable* sort of each row by group keeps
        every group's samples sorted by value (:func:`regroup_positions`).
        """
        self.sizes = torch.bincount(group[group >= 0], minlength=n_groups)
        code, base = regroup_codes(group, self.sizes, right)
        n_kept = int(self.sizes.sum())
        positions = regroup_positions(take(code, self.order), take(base, self.order), n_kept)
        self.order = apply_positions(self.order, positions, n_kept)
        self.xs = apply_positions(self.xs, positions, n_kept)
        self.sorted_stats = apply_positions(self.sorted_stats, positions, n_kept)

    def constant_features(self):
        """``(n_groups, p)``: is the feature constant inside the group?"""
        start = segment_starts(self.sizes)
        last = start + self.sizes - 1
        return (self.xs[:, last] <= self.xs[:, start] + FEATURE_THRESHOLD).T

    def best_splits(self, total, keys, rules, criterion, trees=None):
        """Each open node's best split: ``(group, feature, threshold, left statistics)``.

        ``trees``: each open node's tree, when several trees grow side by side.
        """
        p = self.xs.shape[0]
        if rules.max_features >= p:
            ranks = search_ranks(keys, p, p)
            return level_candidates(
                self.xs, self.sorted_stats, self.sizes, total, ranks, rules, criterion, trees
            )
        # each node searches at most max_features features: gather only those rows
        ranks = search_ranks(keys, p, rules.max_features, self.constant_features())
        k, device = rules.max_features, self.xs.device
        drawn = torch.argsort(ranks, dim=1)[:, :k]  # (m, k): the searched features, in order
        slot_rank = torch.gather(ranks, 1, drawn)  # p: an unused slot
        node = torch.repeat_interleave(torch.arange(len(self.sizes), device=device), self.sizes)
        rows = drawn[node].T  # (k, n_active): the feature behind each slot, per position
        xs = torch.gather(self.xs, 0, rows)
        stats = torch.stack([torch.gather(s, 0, rows) for s in self.sorted_stats])
        slot_ranks = torch.where(slot_rank < p, torch.arange(k, device=device), k)  # in order
        groups, slot, threshold, left = level_candidates(
            xs, stats, self.sizes, total, slot_ranks, rules, criterion, trees
        )
        return groups, drawn[groups, slot], threshold, left


def grow_tree_levelwise(X, stats, criterion, rules, seed, search=None):
    """Grow the same tree as :func:`treelib.grow.grow_tree`, one level at a time.

    ``search`` finds each level's splits: exact (:class:`ExactSearch`, the
    default) or on histograms (:class:`treelib.hist.HistogramSearch`).
    """
    search = ExactSearch(X, stats) if search is None else search
    root_weight = node_weight(stats.sum(1), criterion)[None]
    node_of = torch.zeros(X.shape[0], dtype=torch.int64, device=X.device)
    keys = root_key(seed, X.device)
    levels = grow_levels(X, stats, criterion, rules, keys, node_of, root_weight, search)
    return assemble_preorder(levels, X.device)


def grow_levels(X, stats, criterion, rules, keys, node_of, root_weight, search, rows=None):
    """The level loop, for one tree or for many grown side by side (a forest).

    ``node_of`` gives each sample its root (``-1``: in no tree), ``keys`` and
    ``root_weight`` are the roots' keys and total weights. With several roots a
    "sample" is one sample of one tree (:mod:`treelib.batched`) and ``rows[i]``
    is its row of ``X`` (``None``: sample ``i`` is row ``i``). Nodes of one level
    are numbered tree after tree, so every tree's nodes stay contiguous. Returns
    the levels: per node its arrays and ``"tree"``, the index of its root.
    """
    impurity_of, device = CRITERIA[criterion], X.device
    tree, levels = torch.arange(len(keys), device=device), []
    several = len(keys) > 1
    while True:
        m, samples = len(keys), torch.nonzero(node_of >= 0).squeeze(1)
        node = node_of.index_select(0, samples)
        total = torch.zeros(stats.shape[0], m, dtype=stats.dtype, device=device)
        total.index_add_(1, node, stats.index_select(1, samples))
        sizes = torch.bincount(node, minlength=m)
        weight, impurity = node_weight(total, criterion), impurity_of(total)
        level = new_level(total, sizes, weight, impurity, criterion)
        level["tree"] = tree
        levels.append(level)
        is_open = node_is_open(sizes, weight, impurity, len(levels) - 1, rules)
        open_nodes = torch.nonzero(is_open).squeeze(1)
        if len(open_nodes) == 0:
            break
        if len(levels) > 1 or len(open_nodes) < m:  # the roots' samples are already in place
            group_of_node = torch.where(is_open, torch.cumsum(is_open, 0) - 1, -1)
            group = torch.where(node_of >= 0, take(group_of_node, node_of.clamp(min=0)), -1)
            search.regroup(group, len(open_nodes), open_nodes % 2 == 1)
        trees = tree[open_nodes] if several else None
        found = search.best_splits(total[:, open_nodes], keys[open_nodes], rules, criterion, trees)
        groups, f, threshold, left = found
        nodes = open_nodes[groups]
        right = total[:, nodes] - left
        w, wl, wr = weight[nodes], node_weight(left, criterion), node_weight(right, criterion)
        decrease = impurity[nodes] - wr / w * impurity_of(right) - wl / w * impurity_of(left)
        share = w / root_weight[tree[nodes]]
        keep = share * decrease + EPSILON >= rules.min_impurity_decrease
        nodes, f, threshold = nodes[keep], f[keep], threshold[keep]
        if len(nodes) == 0:
            break
        nodes, sort = torch.sort(nodes)
        level["feature"][nodes], level["threshold"][nodes] = f[sort], threshold[sort]
        level["child"][nodes] = 2 * torch.arange(len(nodes), device=device)
        node_of = next_level_nodes(X, samples, node, level, rows)
        sides = torch.arange(2 * len(nodes), device=device) % 2
        keys = child_keys(keys[nodes].repeat_interleave(2), sides)
        tree = tree[nodes].repeat_interleave(2)
    return levels


def new_level(total, sizes, weight, impurity, criterion):
    """A level's node arrays; every node starts as a leaf."""
    m, device = len(sizes), sizes.device
    return dict(
        value=leaf_value(total, criterion).T, impurity=impurity, n=sizes, weight=weight,
        feature=torch.full((m,), TREE_UNDEFINED, device=device),
        threshold=torch.full((m,), float(TREE_UNDEFINED), dtype=torch.float64, device=device),
        child=torch.full((m,), TREE_LEAF, device=device),
    )  # fmt: skip


def next_level_nodes(X, samples, node, level, rows=None):
    """Send each sample of a split node to its child; samples in leaves get -1.

    ``samples`` are the samples still in the tree and ``node`` their node;
    ``rows`` maps samples to rows of ``X`` (``None``: sample ``i`` is row ``i``).
    """
    child = take(level["child"], node)
    row = samples if rows is None else torch.take(rows, samples)
    x = torch.take(X, row * X.shape[1] + take(level["feature"], node).clamp(min=0)).double()
    goes_right = (~(x <= take(level["threshold"], node))).long()
    new = torch.full((X.shape[0] if rows is None else len(rows),), -1, device=X.device)
    return new.index_copy_(0, samples, torch.where(child >= 0, child + goes_right, -1))


def assemble_preorder(levels, device=None):
    """Concatenate the levels into a :class:`Tree` with preorder node ids.

    The bookkeeping runs on the CPU (one transfer per tree); the tree goes to ``device``.
    """
    levels = [{name: values.cpu() for name, values in level.items()} for level in levels]
    subtree = torch.ones_like(levels[-1]["n"])  # sizes of subtrees, bottom-up
    for level in reversed(levels[:-1]):
        child = level["child"]
        split = child >= 0
        below = torch.zeros_like(child)
        below[split] = subtree[child[split]] + subtree[child[split] + 1]
        level["subtree"], subtree = subtree, 1 + below
    n_nodes = int(subtree[0])
    fields = {name: [] for name in ("id", "left", "right")}
    ids = torch.zeros(1, dtype=torch.int64)
    for level in levels:
        child, left, right = level["child"], torch.full_like(ids, TREE_LEAF), None
        right = left.clone()
        split = child >= 0
        if split.any():
            next_ids = torch.zeros(2 * int(split.sum()), dtype=torch.int64)
            next_ids[child[split]] = ids[split] + 1
            next_ids[child[split] + 1] = ids[split] + 1 + level["subtree"][child[split]]
            left[split], right[split] = next_ids[child[split]], next_ids[child[split] + 1]
        fields["id"].append(ids)
        fields["left"].append(left)
        fields["right"].append(right)
        ids = next_ids if split.any() else ids[:0]
    position = torch.cat(fields["id"])

    def in_preorder(values):
        out = torch.empty((n_nodes,) + values.shape[1:], dtype=values.dtype)
        out[position] = values
        return out

    def gather(name):
        return in_preorder(torch.cat([level[name] for level in levels]))

    return Tree(
        device=device,
        children_left=in_preorder(torch.cat(fields["left"])),
        children_right=in_preorder(torch.cat(fields["right"])),
        feature=gather("feature"),
        threshold=gather("threshold"),
        value=gather("value").unsqueeze(1),
        impurity=gather("impurity"),
        n_node_samples=gather("n"),
        weighted_n_node_samples=gather("weight"),
        categorical=torch.zeros(n_nodes, dtype=torch.bool),
    )
