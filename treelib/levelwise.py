"""Level-wise (breadth-first) growth: all nodes of one depth split at once.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). The recursive builder of
Chapter 2 pays Python's overhead once per node; this one pays it once per
*level*. Each feature is sorted once, at the root. At every level the samples
are kept grouped by node and sorted by value inside each node, so one cumulative
sum per feature, minus its value at the start of each node's segment, gives
the left child of every candidate split of every node. A segmented arg-max
picks each node's winner. It grows exactly the tree the recursive builder grows.
"""

import torch

from ._validation import EPSILON
from .criteria import CRITERIA, leaf_value, node_weight
from .node_random import child_keys, root_key, search_ranks
from .split import FEATURE_THRESHOLD, split_scores
from .tree_structure import TREE_LEAF, TREE_UNDEFINED, Tree


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


def segmented_argmax(scores, segment, tie_key, n_segments):
    """Per segment, the position with the highest score (lowest ``tie_key`` on ties).

    Returns a bool mask with at most one True per segment; segments whose
    scores are all ``-inf`` get none.
    """
    flat_seg = segment.reshape(-1)
    best = torch.full((n_segments,), float("-inf"), dtype=scores.dtype, device=scores.device)
    best.scatter_reduce_(0, flat_seg, scores.reshape(-1), "amax")
    is_best = (scores == take(best, segment)) & (scores > float("-inf"))
    key = torch.where(is_best, tie_key, torch.iinfo(torch.int64).max)
    best_key = torch.full((n_segments,), torch.iinfo(torch.int64).max, device=scores.device)
    best_key.scatter_reduce_(0, flat_seg, key.reshape(-1), "amin")
    return is_best & (key == take(best_key, segment))


def level_candidates(X, stats, order, node_of, total, sizes, splittable, ranks, rules, criterion):
    """Score every ``x <= t`` candidate of every node of a level; return each node's best.

    ``order`` is ``(p, n_active)``: per feature, the active samples grouped by node
    and sorted by value inside each node.
    """
    p, n_active = order.shape
    xs = torch.gather(X.T, 1, order)  # (p, n_active) sorted values
    node = take(node_of, order)  # (p, n_active) node of each position
    cum = take(stats, order).cumsum(-1)  # (n_stats, p, n_active)
    start = take(segment_starts(sizes), node)
    before = torch.gather(cum, 2, (start - 1).clamp(min=0).expand_as(cum))
    left = cum - torch.where(start > 0, before, 0.0)  # left child if we split after here
    right = take(total, node) - left
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)

    n_left = torch.arange(n_active, device=X.device) - start + 1
    n_right = take(sizes, node) - n_left
    distinct = torch.zeros_like(node, dtype=torch.bool)
    distinct[:, :-1] = xs[:, 1:] > xs[:, :-1] + FEATURE_THRESHOLD  # float32, as sklearn
    rank = torch.gather(ranks.T, 1, node)
    allowed = distinct & (n_left >= rules.min_samples_leaf) & (n_right >= rules.min_samples_leaf)
    allowed &= (w_left >= rules.min_weight_leaf) & (w_right >= rules.min_weight_leaf)
    allowed &= take(splittable, node) & (rank < p)
    scores = torch.where(allowed, scores, float("-inf"))
    winner = segmented_argmax(scores, node, rank * n_active + n_left, len(sizes))
    f, i = winner.nonzero(as_tuple=True)
    a, b = xs[f, i].double(), xs[f, i + 1].double()
    t = a / 2 + b / 2
    threshold = torch.where((t == b) | t.isinf(), a, t)  # scikit-learn's midpoint rule
    return node[f, i], f, threshold, left[:, f, i]


def node_is_open(sizes, weight, impurity, depth, rules):
    """The stopping rules of :func:`treelib.grow.is_leaf_before_search`, for a whole level."""
    closed = (sizes < rules.min_samples_split) | (sizes < 2 * rules.min_samples_leaf)
    closed |= (weight < 2 * rules.min_weight_leaf) | (impurity <= EPSILON)
    return ~closed & (depth < rules.max_depth)


class ExactSearch:
    """Exact split search for a whole level: features sorted once, kept grouped by node."""

    def __init__(self, X):
        self.X = X
        self.order = torch.argsort(X.T, dim=1, stable=True)  # (p, n): the only full sort

    def samples(self):
        return self.order[0]

    def best_splits(self, stats, node_of, total, sizes, is_open, keys, rules, criterion):
        X, order = self.X, self.order
        constant = None
        if rules.max_features < X.shape[1]:  # which features are constant inside each node
            xs, start = torch.gather(X.T, 1, order), segment_starts(sizes)
            constant = (xs[:, start + sizes - 1] <= xs[:, start] + FEATURE_THRESHOLD).T
        ranks = search_ranks(keys, X.shape[1], rules.max_features, constant)
        return level_candidates(
            X, stats, order, node_of, total, sizes, is_open, ranks, rules, criterion
        )

    def next_level(self, node_of):
        """Drop finished samples; regroup by child node, keeping each group sorted."""
        p = self.order.shape[0]
        order = self.order[take(node_of, self.order) >= 0].view(p, -1)
        regroup = torch.sort(take(node_of, order), dim=1, stable=True).indices
        self.order = torch.gather(order, 1, regroup)


def grow_tree_levelwise(X, stats, criterion, rules, seed, search=None):
    """Grow the same tree as :func:`treelib.grow.grow_tree`, one level at a time.

    ``search`` finds each level's splits: exact (:class:`ExactSearch`, the
    default) or on histograms (:class:`treelib.hist.HistogramSearch`).
    """
    search = ExactSearch(X) if search is None else search
    impurity_of = CRITERIA[criterion]
    root_weight = node_weight(stats.sum(1), criterion)
    node_of = torch.zeros(X.shape[0], dtype=torch.int64, device=X.device)
    keys, levels = root_key(seed, X.device), []
    while True:
        m, samples = len(keys), search.samples()
        total = torch.zeros(stats.shape[0], m, dtype=stats.dtype, device=X.device)
        total.index_add_(1, node_of[samples], stats[:, samples])
        sizes = torch.bincount(node_of[samples], minlength=m)
        weight, impurity = node_weight(total, criterion), impurity_of(total)
        level = new_level(total, sizes, weight, impurity, criterion)
        levels.append(level)
        is_open = node_is_open(sizes, weight, impurity, len(levels) - 1, rules)
        if not bool(is_open.any()):
            break
        found = search.best_splits(stats, node_of, total, sizes, is_open, keys, rules, criterion)
        nodes, f, threshold, left = found
        right = total[:, nodes] - left
        w, wl, wr = weight[nodes], node_weight(left, criterion), node_weight(right, criterion)
        decrease = impurity[nodes] - wr / w * impurity_of(right) - wl / w * impurity_of(left)
        keep = (w / root_weight) * decrease + EPSILON >= rules.min_impurity_decrease
        nodes, f, threshold = nodes[keep], f[keep], threshold[keep]
        if len(nodes) == 0:
            break
        nodes, sort = torch.sort(nodes)
        level["feature"][nodes], level["threshold"][nodes] = f[sort], threshold[sort]
        level["child"][nodes] = 2 * torch.arange(len(nodes), device=X.device)
        node_of = next_level_nodes(X, samples, node_of, level)
        search.next_level(node_of)
        sides = torch.arange(2 * len(nodes), device=X.device) % 2
        keys = child_keys(keys[nodes].repeat_interleave(2), sides)
    return assemble_preorder(levels, X.device)


def new_level(total, sizes, weight, impurity, criterion):
    """A level's node arrays; every node starts as a leaf."""
    m, device = len(sizes), sizes.device
    return dict(
        value=leaf_value(total, criterion).T, impurity=impurity, n=sizes, weight=weight,
        feature=torch.full((m,), TREE_UNDEFINED, device=device),
        threshold=torch.full((m,), float(TREE_UNDEFINED), dtype=torch.float64, device=device),
        child=torch.full((m,), TREE_LEAF, device=device),
    )  # fmt: skip


def next_level_nodes(X, samples, node_of, level):
    """Send each sample of a split node to its child; samples in leaves get -1."""
    node = node_of[samples]
    child = take(level["child"], node)
    x = X[samples, take(level["feature"], node).clamp(min=0)].double()
    goes_right = (~(x <= take(level["threshold"], node))).long()
    new = torch.full_like(node_of, -1)
    new[samples] = torch.where(child >= 0, child + goes_right, -1)
    return new


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
