"""Level-wise (breadth-first) growth: all nodes of one depth split at once.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). The recursive builder of
Chapter 2 pays Python's overhead once per node; this one pays it once per
*level*. Each feature is sorted once, at the root. At every level the samples
of the open nodes are kept grouped by node and sorted by value inside each
node, so one cumulative sum per feature, minus the totals of the nodes before,
gives the left child of every candidate split of every node. A segmented
arg-max picks each node's winner, and a stable merge (no sort) regroups the
sorted samples by child (the loop's own list of the level's samples, which the
histogram search reads, is regrouped by a stable sort of integer child ids:
:func:`next_level_nodes`). With NaN in X each node keeps its missing samples
after its sorted values and tries the recursive builder's three blocks of
candidates (:func:`level_candidates_missing`). A categorical feature (Chapter 6)
is split one-vs-rest: each category of a node is a run of equal values in its
sorted row (:func:`level_categories`). It grows exactly the tree the
recursive builder grows: the same random choices (:mod:`treelib.node_random`)
and the same tie rule (:func:`treelib.rules.is_tie_or_best`), so scores that
its level-wide sums round differently from the recursive builder's per-node
sums still tie.
"""

import torch

from .criteria import criterion_of, leaf_value, node_sums, node_weight
from .kernels import (  # noqa: F401  (the speed tricks, moved to treelib.kernels: old paths work)
    BLOCK,
    PIECE,
    columns,
    cumsum_by_tree,
    group_codes,
    group_offsets,
    piece_parts,
    pieces,
    regroup_codes,
    regroup_positions,
    regroup_rows,
    segment_starts,
    segmented_argmax,
    take,
    tree_parts,
    whole_sums,
)
from .node_random import child_keys, root_key, search_ranks
from .rules import (
    big_enough,
    bigger_child_is_left,
    child_bounds,
    clip_value,
    distinct,
    goes_left,
    heavy_enough,
    is_constant,
    is_leaf_before_search,
    is_tie_or_best,
    midpoints,
    tie_tolerance,
    too_small_a_decrease,
    weighted_decrease,
)
from .split import middle_value, monotonic_mask, split_scores
from .tree_structure import TREE_LEAF, TREE_UNDEFINED, NodeTable, Tree  # noqa: F401  (named)


def level_candidates(
    xs, sorted_stats, sizes, total, ranks, rules, criterion, trees=None, monotonic=None
):
    """Score every ``x <= t`` candidate of every node of a level; return each node's best.

    ``xs`` is ``(p, n_active)``: per feature, the values of the samples of the
    level's open nodes, grouped by node (``sizes`` samples each, in node order)
    and sorted inside each node; ``sorted_stats`` holds their statistics in the
    same layout and ``total`` each node's sums. The segments lie at the same
    positions in every row, so whatever depends only on the node is a vector
    over positions, shared by the ``p`` rows. Features are scored a block of
    rows at a time (``BLOCK`` elements), which bounds the temporary arrays: of
    a block's scores only the few that tie with their row's best in their node
    are kept, since only those can win. ``trees`` gives each node's tree when
    several trees grow side by side: each tree's cumulative sums then start
    from zero (:func:`cumsum_by_tree`). ``monotonic`` (Chapter 6's
    constraints): ``(constraint, lower, upper)``, the constraint of each row
    (``(p, 1)``) or of each row and position (``(p, n_active)``: a node's
    drawn features), and each node's bounds (``(m,)``); None: no constraint.
    """
    p, n_active = xs.shape
    m, device = len(sizes), xs.device
    node = torch.repeat_interleave(torch.arange(m, device=device), sizes, output_size=n_active)
    node_parts, parts = tree_parts(trees, sizes)
    earlier = cumsum_by_tree(total, node_parts) - total  # each node's earlier nodes' totals
    big_enough = leaves_big_enough(sizes, node, rules.min_samples_leaf)
    tree_starts = segment_starts(torch.tensor(parts or [n_active])).tolist()
    tol = tie_tolerance(total, criterion)
    per_feature = torch.full((p, m), float("-inf"), dtype=total.dtype, device=device)
    found = []  # (row, position, score) of the scores that tie with their row's best so far
    rows, piece = max(1, BLOCK // max(n_active, 1)), max(BLOCK, 1)
    carry = {}  # per block of rows, its running sums before the piece
    for a in range(0, n_active, piece):  # a long row: a piece of it at a time
        b = min(a + piece, n_active)
        at, (lengths, goes_on) = node[a:b], piece_parts(tree_starts, a, b)
        shared = dict(
            parts=lengths,
            earlier=earlier[:, None, at],
            total=total[:, None, at],
            big_enough=big_enough[a:b],
        )
        for r in range(0, p, rows):
            block = slice(r, r + rows)
            shared["carry"] = carry.get(r) if goes_on else None
            shared["monotonic"] = block_monotonic(monotonic, block, at, a, b)
            stats = sorted_stats[:, block, a:b]
            scores, carry[r] = block_scores(xs[block, a : b + 1], stats, shared, rules, criterion)
            row_best = per_feature[block].scatter_reduce_(
                1, at.expand(len(scores), -1), scores, "amax"
            )
            # the scores that tie with their row's best so far (-inf: no candidate at all)
            tie = is_tie_or_best(scores, row_best[:, at], tol.index_select(0, at))
            row, position = torch.nonzero(tie, as_tuple=True)
            found.append((row + r, position + a, scores[row, position]))
    # each node's best feature: the lowest rank among the features whose best
    # score ties with the node's best (the tie rule of treelib.split)
    per_feature = torch.where(ranks.T < p, per_feature, float("-inf"))  # not searched
    best = per_feature.max(0).values
    tie = torch.where(is_tie_or_best(per_feature, best, tol), ranks.T, p).min(0).values
    searched = torch.nonzero(best > float("-inf")).squeeze(1)
    feature = (ranks == tie[:, None]).int().argmax(1)  # the feature with that rank
    # inside that feature's row, the first position (smallest threshold) that ties
    row, position, score = (torch.cat(column) for column in zip(*found))
    at = node[position]
    wins = (row == feature[at]) & is_tie_or_best(score, best[at], tol[at])
    key = torch.where(wins, position, n_active)
    first = torch.full((m,), n_active, device=device).scatter_reduce_(0, at, key, "amin")
    f, i = feature[searched], first[searched]
    a, b = xs[f, i].double(), xs[f, i + 1].double()
    threshold = midpoints(a, b)  # scikit-learn's midpoint rule
    # the winners' left children: a cumulative sum along each node's chosen row,
    # read at each winner and just before its node, a piece of the row at a time
    start = segment_starts(sizes)[searched]
    first_of_tree = torch.zeros(n_active + 1, dtype=torch.bool, device=device)
    first_of_tree[segment_starts(torch.tensor(parts or [n_active], device=device))] = True
    restarts = first_of_tree[start]  # a tree's first node: nothing before it
    need = torch.cat([i, (start - 1).clamp(min=0)])
    chosen = total.new_empty(total.shape[0], len(need))
    carry = None
    for a in range(0, n_active, piece):
        b = min(a + piece, n_active)
        lengths, goes_on = piece_parts(tree_starts, a, b)
        positions = torch.arange(a, b, device=device)
        stats = sorted_stats[:, feature[node[a:b]], positions]  # (n_stats, b - a)
        running = cumsum_by_tree(stats, lengths, carry if goes_on else None)
        carry, inside = running[:, -1:].clone(), (need >= a) & (need < b)
        chosen[:, inside] = running[:, need[inside] - a]
    before = torch.where(restarts, 0.0, chosen[:, len(i) :])
    return searched, f, threshold, chosen[:, : len(i)] - before


def block_monotonic(monotonic, block, at, a, b):
    """The monotonic constraints of positions ``a:b`` of a block of rows (None: none).

    ``at`` is each position's node; see :func:`level_candidates`.
    """
    if monotonic is None:
        return None
    constraint, lower, upper = monotonic
    constraint = constraint[block]
    if constraint.shape[1] > 1:  # (one constraint per row and position)
        constraint = constraint[:, a:b]
    if not bool(constraint.any()):  # unconstrained rows: every candidate allowed, no check
        return None
    return constraint, lower.index_select(0, at), upper.index_select(0, at)


def masked_scores(left, total, allowed, rules, criterion, monotonic=None):
    """Scores of candidate splits from their left children (``-inf``: not allowed).

    ``total`` holds each candidate's node statistics (broadcast against
    ``left``); ``allowed`` the candidates that pass the other rules. Both scans
    of the histogram search (:meth:`treelib.hist.HistogramSearch.best_in_cells`,
    :meth:`treelib.hist.HistogramSearch.best_in_grid`) and the exact search
    of nodes with NaN (:func:`level_candidates_missing`) score this way.
    ``monotonic``: ``(constraint, lower, upper)`` broadcast against the
    candidates (:func:`treelib.split.monotonic_mask`, Chapter 6), or None.
    """
    right = total - left
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    allowed = allowed & heavy_enough(w_left, w_right, rules.min_weight_leaf)
    if monotonic is not None:
        allowed &= monotonic_mask(left, right, w_left, w_right, criterion, monotonic)
    return torch.where(
        allowed, split_scores(left, right, w_left, w_right, criterion), float("-inf")
    )


def level_candidates_missing(
    xs, sorted_stats, sizes, total, ranks, rules, criterion, trees=None, monotonic=None
):
    """:func:`level_candidates` where ``xs`` holds NaN: five arrays, ``missing_left`` last.

    Introduced in Chapter 7. NaN sorts last, so inside each node a feature's
    row holds its known values, sorted, then its NaN (a stable regrouping
    keeps them there). The candidates are the exact search's three blocks
    (:func:`treelib.split.missing_value_candidates`): the running sum gives
    block 1 (NaN right) between distinct known values and block 2 (every
    known value left, the NaN alone right, threshold ``inf``) at the node's
    last known value; block 3 adds the node's NaN statistics to each block-1
    left child. Tie keys: the feature's rank, then block 1 and 2 by position,
    then block 3 by position. ``missing_left``: 1 for block 3, 0 for the
    others, -1 where the node has no NaN in the feature (a future NaN goes to
    the bigger child: :func:`missing_sides`). It scores the whole level at
    once (no blocks of ``BLOCK`` elements): memory ``O(n_stats * p * n)``.
    ``monotonic`` as in :func:`level_candidates`.
    """
    p, n = xs.shape
    m, device, msl = len(sizes), xs.device, rules.min_samples_leaf
    node = torch.repeat_interleave(torch.arange(m, device=device), sizes, output_size=n)
    node_parts, parts = tree_parts(trees, sizes)
    earlier = cumsum_by_tree(total, node_parts) - total  # each node's earlier nodes' totals
    stats = sorted_stats[:, :, :] if isinstance(sorted_stats, OneHotStats) else sorted_stats
    left = cumsum_by_tree(stats, parts) - earlier[:, None].index_select(2, node)  # (n_stats, p, n)
    start = segment_starts(sizes)
    n_left = torch.arange(1, n + 1, device=device) - start.index_select(0, node)  # block 1's
    size = sizes.index_select(0, node)
    nan = xs.isnan()
    n_missing = torch.zeros(p, m, dtype=sizes.dtype, device=device)
    n_missing.index_add_(1, node, nan.to(sizes.dtype))
    n_known = sizes - n_missing  # (p, m)
    at_known = (start + n_known - 1).clamp(min=0)  # each node's last known value
    known = left.gather(2, at_known.expand(len(left), -1, -1))
    missing = total[:, None] - torch.where(n_known > 0, known, 0)  # (n_stats, p, m): NaN's sums
    has_missing = (n_missing > 0).index_select(1, node)  # (p, n)
    n_missing, n_known = n_missing.index_select(1, node), n_known.index_select(1, node)
    searched = (ranks.T < p).index_select(1, node)  # p: not searched
    between = torch.zeros_like(nan)
    between[:, :-1] = distinct(xs[:, :-1], xs[:, 1:])  # never next to a NaN
    between &= searched
    alone = (n_left == n_known) & has_missing & searched  # block 2
    allowed = (between | alone) & big_enough(n_left, size - n_left, msl)
    n_left_nan = n_left + n_missing
    allowed_nan = between & has_missing & big_enough(n_left_nan, size - n_left_nan, msl)
    left_nan = left + missing.index_select(2, node)
    grand = total[:, None].index_select(2, node)
    if monotonic is not None:  # (each position's node's bounds)
        constraint, lower, upper = monotonic
        monotonic = (constraint, lower.index_select(0, node), upper.index_select(0, node))
    scores = torch.stack([
        masked_scores(left, grand, allowed, rules, criterion, monotonic),
        masked_scores(left_nan, grand, allowed_nan, rules, criterion, monotonic),
    ])  # fmt: skip
    position = torch.arange(2 * n, device=device).view(2, 1, n)
    key = ranks.T.index_select(1, node) * (2 * n) + position  # (2, p, n)
    segment = node.expand(2, p, n)
    tol = tie_tolerance(total, criterion)
    won = torch.nonzero(
        segmented_argmax(scores.view(-1), segment.reshape(-1), key.view(-1), m, tol)
    )
    won = won.squeeze(1)
    block3, f, i = won // (p * n) == 1, won % (p * n) // n, won % n
    a, b = xs[f, i].double(), xs[f, (i + 1).clamp(max=n - 1)].double()
    threshold = torch.where(~block3 & b.isnan(), float("inf"), midpoints(a, b))
    missing_left = torch.where(block3, 1, torch.where(has_missing[f, i], 0, -1)).to(torch.int8)
    chosen = torch.where(block3, left_nan[:, f, i], left[:, f, i])
    return node[i], f, threshold, chosen, missing_left


def level_categories(xs, sorted_stats, sizes, total, ranks, rules, criterion):
    """Each node's best one-vs-rest split ``x == c`` of its categorical rows (Chapter 6).

    Introduced in Chapter 7. ``xs`` holds, per row, the level's samples
    grouped by node and sorted inside each node (:class:`ExactSearch`), so
    each category of a node is one run of equal values: its statistics (one
    ``index_add_`` over all runs of the searched rows) are the left child, the
    node's total minus them the right. ``ranks`` (``(nodes, rows)``) is
    ``len(xs)`` for a row not searched one-vs-rest (an ordinal one). A run is a
    candidate if it is not the whole node; ties go to the lower rank, then
    the smaller category, as :func:`treelib.split.best_categorical_candidate`.
    Returns ``(node, row, category, left)``.
    """
    rows, n = xs.shape
    m, device = len(sizes), xs.device
    searched = torch.nonzero((ranks < rows).any(0)).squeeze(1)  # rows with a categorical node
    node = torch.repeat_interleave(torch.arange(m, device=device), sizes, output_size=n)
    x = xs.index_select(0, searched)  # (r, n)
    starts = torch.zeros(n, dtype=torch.bool, device=device)
    starts[segment_starts(sizes[sizes > 0])] = True  # (a node's first sample starts a run)
    new_run = starts.expand_as(x).clone()
    new_run[:, 1:] |= x[:, 1:] != x[:, :-1]
    at = torch.nonzero(new_run.view(-1)).squeeze(1)  # each run's first element, in order
    run = torch.cumsum(new_run.view(-1), 0) - 1
    left = total.new_zeros(len(total), len(at))
    if isinstance(sorted_stats, OneHotStats):  # (each sample's class: no dense copy)
        labels = sorted_stats.labels.index_select(0, searched).view(-1).long()
        weights = sorted_stats.weights
        if weights is None:
            weights = torch.ones(len(labels), dtype=total.dtype, device=device)
        else:
            weights = weights.index_select(0, searched).reshape(-1).to(total.dtype)
        left.index_put_((labels, run), weights, accumulate=True)
    else:
        stats = sorted_stats.index_select(1, searched).reshape(len(total), -1)
        left.index_add_(1, run, stats.to(total.dtype))
    count = torch.bincount(run, minlength=len(at))
    row, position = searched.index_select(0, at // n), at % n
    g = node.index_select(0, position)
    rank = ranks[g, row]
    size = sizes.index_select(0, g)
    allowed = (rank < rows) & (count < size)  # (a category alone in its node: no right child)
    allowed &= big_enough(count, size - count, rules.min_samples_leaf)
    scores = masked_scores(left, columns(total, g), allowed, rules, criterion)
    tol = tie_tolerance(total, criterion)
    won = torch.nonzero(segmented_argmax(scores, g, rank * n + position, m, tol)).squeeze(1)
    row, position = row.index_select(0, won), position.index_select(0, won)
    return g.index_select(0, won), row, xs[row, position].double(), columns(left, won)


def best_of_both(found, won, rank_found, rank_won, total, rules, criterion):
    """Per node, the better of its ``x <= t`` winner and its ``x == c`` winner (Chapter 6).

    Introduced in Chapter 7. ``found`` and ``won`` are the two searches'
    ``(node, feature, threshold, left[, missing_left])`` and ``rank_*`` their
    winners' ranks in the node's search order; the lower rank wins a tie
    (:func:`treelib.rules.is_tie_or_best`), as the recursive builder's
    :func:`treelib.split.best_split`. A categorical winner's ``missing_left``
    is 0: a NaN goes right (``x == c`` is false).
    """
    if len(found) == 5:  # (NaN somewhere: a categorical split sends it right)
        won = (*won, torch.zeros_like(won[0], dtype=torch.int8))
    both = [torch.cat(parts, dim=-1) for parts in zip(found, won)]
    g, left, rank = both[0], both[3], torch.cat([rank_found, rank_won])
    everywhere = torch.ones_like(g, dtype=torch.bool)
    scores = masked_scores(left, columns(total, g), everywhere, rules, criterion)
    tol = tie_tolerance(total, criterion)
    chosen = segmented_argmax(scores, g, rank, total.shape[1], tol)
    chosen = torch.nonzero(chosen).squeeze(1)
    return tuple(parts.index_select(-1, chosen) for parts in both)


def leaves_big_enough(sizes, node, min_samples_leaf):
    """Per position: would both children keep ``min_samples_leaf`` samples?"""
    n_left = torch.arange(len(node), device=node.device) - segment_starts(sizes)[node] + 1
    return big_enough(n_left, sizes[node] - n_left, min_samples_leaf)


def block_scores(xs, sorted_stats, shared, rules, criterion):
    """The scores of a block of feature rows (``-inf``: not a candidate), and the running sums.

    The block may be a piece of the rows: ``shared["carry"]`` then holds the
    running sums before it, and ``xs`` the value after it (one more column).
    """
    # segmented cumulative sum: the running sum minus the totals of the earlier nodes
    running = cumsum_by_tree(sorted_stats, shared["parts"], shared["carry"])  # (n_stats, rows, n)
    left = running - shared["earlier"]
    right = shared["total"] - left
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)
    allowed = torch.zeros(scores.shape, dtype=torch.bool, device=xs.device)
    allowed[:, : xs.shape[1] - 1] = distinct(xs[:, :-1], xs[:, 1:])  # float32, as sklearn
    allowed &= shared["big_enough"]
    allowed &= heavy_enough(w_left, w_right, rules.min_weight_leaf)
    if shared.get("monotonic") is not None:  # (Chapter 6's constraints)
        allowed &= monotonic_mask(left, right, w_left, w_right, criterion, shared["monotonic"])
    carry = running[..., -1:].clone()  # not a view: `running` is freed
    return torch.where(allowed, scores, float("-inf")), carry


def node_is_open(sizes, weight, impurity, depth, rules):
    """The stopping rules of :func:`treelib.rules.is_leaf_before_search`, for a whole level."""
    return ~is_leaf_before_search(sizes, weight, impurity, depth, rules)


class OneHotStats:
    """Sorted statistics with at most one nonzero per sample: its index and its value.

    Classification statistics are one-hot class counts times the sample
    weight, so a ``(p, n)`` array of labels (and of weights, unless every
    weight is one) replaces the ``(n_stats, p, n)`` float64 array. Indexing
    ``stats[:, rows_or_positions...]`` builds that part of the dense array,
    with exactly the same floats.
    """

    def __init__(self, labels, weights, n_stats, dtype):
        self.labels, self.weights, self.n_stats, self.dtype = labels, weights, n_stats, dtype

    @classmethod
    def of(cls, stats):
        """The per-sample ``(labels, weights)`` of ``stats``, or ``None`` if not exact."""
        if stats.shape[0] > 2**15 or torch.signbit(stats).any():  # -0.0 or negative: dense
            return None
        if ((stats != 0).sum(0) > 1).any():
            return None
        labels = (stats != 0).to(torch.int8).argmax(0)  # 0 where the weight is 0: exact too
        weights = stats.gather(0, labels[None])[0]
        if torch.equal(weights, torch.ones_like(weights)):
            weights = None
        elif torch.equal(weights.float().double(), weights):
            weights = weights.float()  # exact in float32 (bootstrap counts, say): half the memory
        small = torch.int8 if stats.shape[0] <= 127 else torch.int16
        return cls(labels.to(small), weights, stats.shape[0], stats.dtype)

    def __getitem__(self, index):
        """The dense statistics ``stats[index]``, ``index[0]`` being ``:`` (all statistics)."""
        labels = self.labels[index[1:]]
        if self.weights is None:  # the fastest way to build it
            classes = torch.arange(self.n_stats, dtype=labels.dtype, device=labels.device)
            return (labels[None] == classes.view((-1,) + (1,) * labels.dim())).to(self.dtype)
        out = torch.zeros((self.n_stats,) + labels.shape, dtype=self.dtype, device=labels.device)
        return out.scatter_(0, labels[None].long(), self.weights[index[1:]][None].to(self.dtype))


class ExactSearch:
    """Exact split search for a whole level: features sorted once, kept grouped by node.

    It holds, per feature, the samples of the level's *open* nodes (the ones
    that will be searched), grouped by open node in node order and sorted by
    value inside each node: their ids (``order``, int32 when that suffices),
    values (``xs``) and statistics (``sorted_stats``: a :class:`OneHotStats`
    for one-hot statistics, else the dense ``(n_stats, p, n)`` array). Every
    ``(p, n)`` array is built one feature row at a time and regrouped
    ``PIECE`` elements at a time (a piece of one long row, or several short
    rows at once), so the temporaries are ``O(n + PIECE)``.
    """

    takes_grouped = False  # the level loop hands it each sample's open node (regroup)

    def __init__(self, X, stats):
        p, n = X.shape[1], X.shape[0]
        self.start(stats, p, n, X.device)
        self.X, self.rows = X, None  # (sample i is row i)
        self.has_nan = bool(X.isnan().any())  # (NaN sorts last: level_candidates_missing)
        for j in range(p):
            column = X[:, j].contiguous()
            order = torch.argsort(column, stable=True)  # each feature sorted once
            self.set_row(j, order, column.index_select(0, order), order)
        self.sizes = torch.tensor([n], device=X.device)

    @classmethod
    def for_trees(cls, X, stats, rows, sizes):
        """The search of many trees grown side by side (:mod:`treelib.batched`).

        Sample ``i`` is row ``rows[i]`` of ``X``; the samples come tree after
        tree (``sizes`` each), each tree's in increasing row order. Each column
        of ``X`` is sorted once; each tree's samples are then picked out of that
        order, so inside a tree equal values keep their row order, as a tree
        grown alone sorts them.
        """
        search = cls.__new__(cls)
        p, n = X.shape[1], len(rows)
        search.start(stats, p, n, X.device)
        search.X, search.rows = X, rows
        search.has_nan = bool(X.isnan().any())
        trees = torch.arange(len(sizes), device=X.device)
        tree = torch.repeat_interleave(trees, sizes, output_size=n)
        sample = torch.full((len(sizes), X.shape[0]), -1, dtype=torch.int64, device=X.device)
        sample[tree, rows] = torch.arange(n, device=X.device)
        for j in range(p):
            column = X[:, j].contiguous()
            by_value = torch.argsort(column, stable=True)
            ids = sample.index_select(1, by_value)  # per tree, its samples in sorted order
            order = ids[ids >= 0]
            x = column.index_select(0, take(rows, order))
            search.set_row(j, order, x, order)
        search.sizes = sizes
        return search

    def start(self, stats, p, n, device):
        """Allocate the sorted arrays of ``p`` features and ``n`` samples."""
        small = torch.int32 if n < 2**31 else torch.int64
        self.order = torch.empty(p, n, dtype=small, device=device)
        self.xs = torch.empty(p, n, dtype=torch.float32, device=device)
        self.stats_of = OneHotStats.of(stats)  # per sample; None: dense statistics
        if self.stats_of is None:
            self.stats_of = stats
            self.sorted_stats = stats.new_empty(stats.shape[0], p, n)
        else:
            labels, weights = self.stats_of.labels, self.stats_of.weights
            self.sorted_stats = OneHotStats(
                labels.new_empty(p, n),
                None if weights is None else weights.new_empty(p, n),
                stats.shape[0],
                stats.dtype,
            )
        self.code_of = self.base_of = None
        self.n_samples = stats.shape[1]
        self.group, self.written, self.at_roots = None, None, True

    def regroup_level(self, samples, node, group_of_node, sizes):
        """Keep the open nodes' samples for the next search (the level loop's call).

        ``samples`` are the level's samples and ``node`` their node;
        ``group_of_node`` numbers the open nodes (``-1``: a leaf), which hold
        ``sizes`` samples each. The search keeps each sample's open node by
        sample id (``-1`` for the samples of the last level's leaves) and
        regroups its rows (:meth:`regroup`). At the roots, all open, the
        samples are already in place.
        """
        at_roots, self.at_roots = self.at_roots, False
        if at_roots and len(sizes) == len(group_of_node):
            return
        if self.group is None:
            self.group = torch.full((self.n_samples,), -1, device=samples.device)
        else:
            self.group.index_fill_(0, self.written, -1)
        for a, b in pieces(len(samples)):
            self.group.index_copy_(0, samples[a:b], take(group_of_node, node[a:b]))
        self.written = samples
        right = torch.nonzero(group_of_node >= 0).squeeze(1) % 2 == 1  # odd nodes: right children
        self.regroup(self.group, sizes, right)

    def split_values(self, samples, features):
        """Each sample's value of a feature, as a split's threshold is compared with it.

        Sample ``i`` is row ``rows[i]`` of ``X`` (``rows`` None: row ``i``).
        """
        row = samples if self.rows is None else take(self.rows, samples)
        return take(self.X, features.add(row * self.X.shape[1]))

    def arrays(self):
        """The sorted ``(p, n)`` arrays, and the dense statistics ``(n_stats, p, n)``."""
        stats = self.sorted_stats
        if isinstance(stats, OneHotStats):
            return [self.order, self.xs, stats.labels] + [
                w for w in [stats.weights] if w is not None
            ]
        return [self.order, self.xs, stats]

    def set_row(self, j, order, x, ids):
        """Write feature ``j``'s sorted row: sample ids, values, and the statistics of ``ids``."""
        self.order[j], self.xs[j] = order, x
        stats = self.sorted_stats
        if isinstance(stats, OneHotStats):
            stats.labels[j] = self.stats_of.labels.index_select(0, ids)
            if stats.weights is not None:
                stats.weights[j] = self.stats_of.weights.index_select(0, ids)
        else:
            stats[:, j] = self.stats_of.index_select(1, ids)

    def regroup(self, group, sizes, right):
        """Keep samples with ``group >= 0``, regrouped by group, each group still sorted.

        ``group`` gives each sample its open node's index (``-1``: not searched
        any more), ``sizes`` how many samples each group holds, ``right``
        which groups are right children. Groups are
        numbered in node order, so a *stable* sort of each row by group keeps
        every group's samples sorted by value (:func:`regroup_positions`). Rows
        are moved a few at a time (a piece of ``PIECE`` elements: one row of a
        large data set, a piece at a time, or several short rows at once;
        :func:`regroup_rows`), into the first ``n_kept`` places of their row.
        """
        first_row, n = self.order[0], self.order.shape[1]  # every row lists the open nodes' samples
        self.sizes, codes_of = sizes, group_codes(group, first_row, sizes, right)
        if self.code_of is None:  # by sample id, written for the open nodes' samples only
            self.code_of, self.base_of = (
                group.new_empty(len(group), dtype=torch.int8),
                group.clone(),
            )
        for a, b in pieces(n):
            ids, (code, base) = first_row[a:b].long(), codes_of(a, b)
            self.code_of.index_copy_(0, ids, code)
            self.base_of.index_copy_(0, ids, base)
        n_kept = int(self.sizes.sum())
        arrays = self.arrays()
        at_once = max(1, PIECE // max(n, 1))  # rows moved together (short rows: several)
        for j in range(0, self.order.shape[0], at_once):
            block = slice(j, j + at_once)
            order = self.order[block]

            def codes_of(a, b, order=order):
                ids = order[:, a:b]
                return take(self.code_of, ids), take(self.base_of, ids)

            rows = [values[block] if values.dim() == 2 else values[:, block] for values in arrays]
            moved = regroup_rows(rows, codes_of, n_kept, n)
            for values, new in zip(arrays, moved):
                if values.dim() == 2:
                    values[block, :n_kept] = new
                else:  # dense statistics (n_stats, p, n)
                    values[:, block, :n_kept] = new
        self.order, self.xs = self.order[:, :n_kept], self.xs[:, :n_kept]
        stats = self.sorted_stats
        if isinstance(stats, OneHotStats):
            weights = None if stats.weights is None else stats.weights[:, :n_kept]
            self.sorted_stats = OneHotStats(
                stats.labels[:, :n_kept], weights, stats.n_stats, stats.dtype
            )
        else:
            self.sorted_stats = stats[..., :n_kept]

    def constant_features(self):
        """``(n_groups, p)``: is the feature constant inside the group?"""
        start = segment_starts(self.sizes)
        low, high = self.xs[:, start], self.xs[:, start + self.sizes - 1]  # (NaN: last)
        if not self.has_nan:
            return is_constant(low, high).T
        return is_constant(low, high, high.isnan(), low.isnan()).T

    def best_splits(self, total, keys, rules, criterion, trees=None, bounds=None):
        """Each open node's best split: ``(group, feature, threshold, left statistics)``.

        ``trees``: each open node's tree, when several trees grow side by side.
        ``bounds``: ``(2, m)``, each open node's lower and upper bound under
        monotonic constraints (``rules.monotonic``, Chapter 6), or None.
        """
        p = self.xs.shape[0]
        candidates = level_candidates_missing if self.has_nan else level_candidates
        if rules.categorical:  # one-vs-rest splits too (Chapter 6)
            candidates = self.with_categories(candidates, rules)
        monotonic = None
        if bounds is not None:
            monotonic = (rules.monotonic[:, None], bounds[0], bounds[1])
        if rules.max_features >= p:
            ranks = search_ranks(keys, p, p)
            return candidates(
                self.xs, self.sorted_stats, self.sizes, total, ranks, rules, criterion, trees,
                monotonic,
            )  # fmt: skip
        # each node searches at most max_features features: gather only those rows
        ranks = search_ranks(keys, p, rules.max_features, self.constant_features())
        k, device = rules.max_features, self.xs.device
        drawn = torch.argsort(ranks, dim=1)[:, :k]  # (m, k): the searched features, in order
        slot_rank = torch.gather(ranks, 1, drawn)  # p: an unused slot
        node = torch.repeat_interleave(torch.arange(len(self.sizes), device=device), self.sizes)
        rows = drawn[node].T  # (k, n_active): the feature behind each slot, per position
        xs = torch.gather(self.xs, 0, rows)
        if isinstance(self.sorted_stats, OneHotStats):
            stats = self.sorted_stats
            weights = None if stats.weights is None else torch.gather(stats.weights, 0, rows)
            stats = OneHotStats(
                torch.gather(stats.labels, 0, rows), weights, stats.n_stats, stats.dtype
            )
        else:
            stats = torch.stack([torch.gather(s, 0, rows) for s in self.sorted_stats])
        slot_ranks = torch.where(slot_rank < p, torch.arange(k, device=device), k)  # in order
        self.drawn = drawn  # (the features behind the slots: with_categories)
        if monotonic is not None:  # each slot's feature's constraint, per position
            monotonic = (rules.monotonic.index_select(0, rows.reshape(-1)).view(rows.shape),
                         *monotonic[1:])  # fmt: skip
        groups, slot, threshold, left, *learned = candidates(
            xs, stats, self.sizes, total, slot_ranks, rules, criterion, trees, monotonic
        )
        self.drawn = None
        return groups, drawn[groups, slot], threshold, left, *learned

    drawn = None  # each node's searched features, while best_splits gathers them into slots

    def with_categories(self, candidates, rules):
        """``candidates`` on the ordinal rows, :func:`level_categories` on the categorical ones.

        Introduced in Chapter 7 (one-vs-rest splits: Chapter 6). A row of
        ``xs`` is feature ``r``, or, while :meth:`best_splits` searches
        ``max_features`` of them, the node's ``r``-th drawn feature
        (``self.drawn``); each search skips the other kind of row (rank
        ``len(xs)``) and :func:`best_of_both` keeps each node's better winner.
        """
        categorical = sorted(rules.categorical)

        def search(
            xs, sorted_stats, sizes, total, ranks, rules, criterion, trees=None, monotonic=None
        ):
            rows = xs.shape[0]
            if self.drawn is None:
                is_categorical = torch.zeros(rows, dtype=torch.bool, device=xs.device)
                is_categorical[categorical] = True
                is_categorical = is_categorical.expand(ranks.shape)
            else:
                codes = torch.tensor(categorical, device=xs.device)
                is_categorical = torch.isin(self.drawn, codes)
            ordinal_ranks = torch.where(is_categorical, rows, ranks)
            found = candidates(
                xs, sorted_stats, sizes, total, ordinal_ranks, rules, criterion, trees, monotonic
            )
            category_ranks = torch.where(is_categorical, ranks, rows)
            won = level_categories(xs, sorted_stats, sizes, total, category_ranks, rules, criterion)
            rank_found, rank_won = ranks[found[0], found[1]], ranks[won[0], won[1]]
            return best_of_both(found, won, rank_found, rank_won, total, rules, criterion)

        return search


def grow_tree_levelwise(X, stats, criterion, rules, seed, search=None):
    """Grow the same tree as :func:`treelib.grow.grow_tree`, one level at a time.

    ``search`` finds each level's splits: exact (:class:`ExactSearch`, the
    default) or on histograms (:class:`treelib.hist.HistogramSearch`).
    """
    search = ExactSearch(X, stats) if search is None else search  # (hist: X may be None)
    device = stats.device
    root_weight = node_weight(node_sums(stats), criterion)[None]  # as the recursive builder
    keys, root_sizes = root_key(seed, device), torch.tensor([stats.shape[1]], device=device)
    levels = grow_levels(stats, criterion, rules, keys, root_sizes, root_weight, search)
    return assemble_preorder(levels, device)


def grow_levels(stats, criterion, rules, keys, root_sizes, root_weight, search):
    """The level loop, for one tree or for many grown side by side (a forest).

    The samples come root after root, ``root_sizes`` each; ``keys`` and
    ``root_weight`` are the roots' keys and total weights. With several roots a
    "sample" is one sample of one tree (:mod:`treelib.batched`). Nodes of one
    level are numbered tree after tree, so every tree's nodes stay contiguous.
    The ``search`` finds the splits and gives the values they compare
    (``split_values``); a search that saw NaN also gives each split's
    ``missing_left`` (kept as the level's ``"missing_left"``: 1 left, 0
    right, -1 where the node saw no NaN in the split's feature). Returns the
    levels: per node its arrays and ``"tree"``, the index of its root.
    Under monotonic constraints (``rules.monotonic``, Chapter 6) each node
    carries its ``(lower, upper)`` bounds (``bounds``, ``(2, m)``; the roots
    unbounded) from level to level, as the keys: its value is clipped to them,
    the search allows only the splits they allow, and each split node's
    children get theirs from :func:`treelib.rules.child_bounds`.
    """
    impurity_of, device = criterion_of(criterion).impurity, stats.device
    tree, levels = torch.arange(len(keys), device=device), []
    bounds = None
    if rules.monotonic is not None:
        rules = rules._replace(monotonic=rules.monotonic.to(device))
        bounds = torch.tensor([[-torch.inf], [torch.inf]], dtype=torch.float64, device=device)
        bounds = bounds.expand(2, len(keys))
    several = len(keys) > 1
    n = int(root_sizes.sum())
    samples = torch.arange(n, device=device)  # the samples in the level's nodes ...
    node = torch.repeat_interleave(tree, root_sizes, output_size=n)  # ... and their node, in order
    whole = whole_sums(stats)  # then the children's sums are the split's: no summing again
    children = None
    while True:
        m = len(keys)
        total = children
        if total is None:
            total = torch.zeros(stats.shape[0], m, dtype=stats.dtype, device=device)
            for a, b in pieces(len(samples)):  # (a piece at a time: bounded memory)
                total.index_add_(1, node[a:b], stats.index_select(1, samples[a:b]))
        sizes = torch.bincount(node, minlength=m)
        weight, impurity = node_weight(total, criterion), impurity_of(total)
        level = new_level(total, sizes, weight, impurity, criterion, bounds)
        level["tree"] = tree
        levels.append(level)
        is_open = node_is_open(sizes, weight, impurity, len(levels) - 1, rules)
        open_nodes = torch.nonzero(is_open).squeeze(1)
        if len(open_nodes) == 0:
            break
        group_of_node = torch.where(is_open, torch.cumsum(is_open, 0) - 1, -1)  # -1: a leaf
        search.regroup_level(samples, node, group_of_node, sizes[open_nodes])
        trees = tree[open_nodes] if several else None
        open_bounds = None if bounds is None else bounds[:, open_nodes]
        found = search.best_splits(
            total[:, open_nodes], keys[open_nodes], rules, criterion, trees, bounds=open_bounds
        )
        groups, f, threshold, left, *learned = found  # (+ missing_left: a search saw NaN)
        nodes = open_nodes[groups]
        right = total[:, nodes] - left
        w, wl, wr = weight[nodes], node_weight(left, criterion), node_weight(right, criterion)
        improvement = weighted_decrease(
            w, root_weight[tree[nodes]], impurity[nodes],
            wl, impurity_of(left), wr, impurity_of(right),
        )  # fmt: skip
        keep = ~too_small_a_decrease(improvement, rules.min_impurity_decrease)
        nodes, f, threshold = nodes[keep], f[keep], threshold[keep]
        if len(nodes) == 0:
            break
        nodes, sort = torch.sort(nodes)
        if bounds is not None:  # the children's bounds, left and right of each split node
            middle = middle_value(left, right, wl, wr, criterion)[keep][sort]
            sides = child_bounds(rules.monotonic[f[sort]], *bounds[:, nodes], middle)
            bounds = torch.stack([torch.stack(pair, 1).view(-1) for pair in zip(*sides)])
        if learned:  # 1: a NaN goes left, 0: right, -1: the node saw none (the bigger child)
            level["missing_left"] = torch.full((m,), -1, dtype=torch.int8, device=device)
            level["missing_left"][nodes] = learned[0][keep][sort]
        if rules.categorical:  # one-vs-rest splits (Chapter 6): x == c goes left, a NaN right
            mark_categorical(level, nodes, f[sort], rules.categorical)
        if whole:  # the left and right child of each split node, in order
            split_sums = [side[:, keep].index_select(1, sort) for side in (left, right)]
            children = torch.stack(split_sums, 2).view(len(total), -1)
        level["feature"][nodes], level["threshold"][nodes] = f[sort], threshold[sort]
        level["child"][nodes] = 2 * torch.arange(len(nodes), device=device)
        samples, node = next_level_nodes(
            search.split_values, samples, node, level, search.takes_grouped
        )
        sides = torch.arange(2 * len(nodes), device=device) % 2
        keys = child_keys(keys[nodes].repeat_interleave(2), sides)
        tree = tree[nodes].repeat_interleave(2)
    return levels


def mark_categorical(level, nodes, features, categorical):
    """Record which of a level's split ``nodes`` split a categorical feature (Chapter 6).

    Introduced in Chapter 7. A split on a feature of ``categorical`` is
    one-vs-rest: the level's ``"categorical"`` flag makes
    :func:`next_level_nodes` route it with ``x == c`` (:func:`treelib.rules.goes_left`),
    and its ``"missing_left"`` is 0, as in the recursive builder: a NaN goes
    right (``x == c`` is false).
    """
    m, device = len(level["n"]), nodes.device
    codes = torch.tensor(sorted(categorical), dtype=features.dtype, device=device)
    is_categorical = torch.isin(features, codes)
    level["categorical"] = torch.zeros(m, dtype=torch.bool, device=device)
    level["categorical"][nodes] = is_categorical
    if "missing_left" not in level:
        level["missing_left"] = torch.full((m,), -1, dtype=torch.int8, device=device)
    level["missing_left"][nodes[is_categorical]] = 0


def new_level(total, sizes, weight, impurity, criterion, bounds=None):
    """A level's node arrays; every node starts as a leaf.

    ``bounds`` (``(2, m)``, monotonic constraints: Chapter 6): the values are
    clipped to them (:func:`treelib.rules.clip_value`).
    """
    m, device = len(sizes), sizes.device
    value = leaf_value(total, criterion)
    if bounds is not None:
        value = clip_value(value, bounds[0], bounds[1], not criterion_of(criterion).is_regression)
    return dict(
        value=value.T, impurity=impurity, n=sizes, weight=weight,
        feature=torch.full((m,), TREE_UNDEFINED, device=device),
        threshold=torch.full((m,), float(TREE_UNDEFINED), dtype=torch.float64, device=device),
        child=torch.full((m,), TREE_LEAF, device=device),
    )  # fmt: skip


def next_level_nodes(split_values, samples, node, level, grouped=True):
    """The samples of the split nodes, grouped by the child each one goes to, and that child.

    ``samples`` are the samples in the level's nodes, grouped by node in node
    order, and ``node`` their node; samples in leaves are left out.
    ``split_values(samples, features)`` gives each sample's value of its
    node's split feature (the search's ``split_values``). A stable sort of
    the samples' child ids (integers: on a CPU, a radix sort for long lists)
    groups them by child and keeps their order inside each child. With
    ``grouped`` false (a search that regroups by sample id, which needs no
    such order) the samples only leave the leaves, in the order they were.
    """
    child = torch.empty(len(node), dtype=torch.int32, device=node.device)
    for a, b in pieces(len(node)):  # a piece at a time: bounded memory
        t = node[a:b]
        c = take(level["child"], t)
        value = split_values(samples[a:b], take(level["feature"], t).clamp_(min=0))
        missing_left = False  # (-1: no NaN in the node's feature, none to route)
        if "missing_left" in level:
            missing_left = take(level["missing_left"], t) > 0
        categorical = take(level["categorical"], t) if "categorical" in level else False
        goes_right = ~goes_left(value, take(level["threshold"], t), categorical, missing_left)
        child[a:b] = torch.where(c >= 0, c + goes_right, -1)  # -1: a leaf's sample
    if not grouped:
        kept = torch.nonzero(child >= 0).squeeze(1)
        return samples.index_select(0, kept), child.index_select(0, kept).long()
    child, order = torch.sort(child, stable=True)
    dropped = int(torch.searchsorted(child, 0))  # (the leaves' samples come first)
    return samples.index_select(0, order[dropped:]), child[dropped:].long()


def assemble_preorder(levels, device=None):
    """Concatenate the levels into a :class:`Tree` with preorder node ids.

    A level's split nodes have their children next to each other in the next
    level, in order (``"child"``: ``0, 2, 4, ...``; -1 for a leaf). The
    bookkeeping runs on the CPU (each level's arrays are copied there once);
    the tree goes to ``device``.
    """
    return assemble_trees(levels, device)[0]


def missing_sides(levels, arrays, in_preorder):
    """Where each node sends a NaN: as its split learned, else to the bigger child.

    Introduced in Chapter 7. A level's ``"missing_left"`` (if any) holds 1
    (left), 0 (right) or -1: the node saw no NaN in its split's feature, so a
    NaN follows the child with more samples (:func:`treelib.rules.bigger_child_is_left`),
    as in the exact search. ``arrays`` holds the trees' preorder
    ``children_left``, ``children_right`` and ``n_node_samples``.
    """
    learned = in_preorder(torch.cat([
        level.get("missing_left", torch.full_like(level["n"], -1, dtype=torch.int8))
        for level in levels
    ]))  # fmt: skip
    left, right, n = (arrays[k] for k in ("children_left", "children_right", "n_node_samples"))
    inner = torch.nonzero(left >= 0).squeeze(1)
    bigger = torch.zeros_like(learned)
    bigger[inner] = bigger_child_is_left(n[left[inner]], n[right[inner]]).to(torch.int8)
    return torch.where(learned >= 0, learned, bigger).to(torch.uint8)


def assemble_trees(levels, device=None):
    """:func:`assemble_preorder` for levels whose first level holds several roots.

    Introduced in Chapter 7. The trees of a forest grown side by side
    (:mod:`treelib.batched`) share their levels, each level's nodes tree after
    tree, each split node's children next to each other in the next level
    (``"child"``: ``0, 2, 4, ...`` across the whole level). The trees are
    numbered in preorder one after the other, for all of them at once: one
    bottom-up pass over the levels (subtree sizes), one top-down pass (ids);
    each tree then gets its own stretch, its child ids counted from its root.
    Returns one :class:`Tree` per root.
    """
    levels = [{name: values.cpu() for name, values in level.items()} for level in levels]
    splits = [torch.nonzero(level["child"] >= 0).squeeze(1) for level in levels]
    subtree = torch.ones_like(levels[-1]["n"])  # sizes of subtrees, bottom-up
    for level, split in zip(reversed(levels[:-1]), reversed(splits[:-1])):
        level["subtree"] = subtree  # (of the next level's nodes)
        below = torch.zeros_like(level["child"])
        below[split] = subtree.view(-1, 2).sum(1)  # both children's subtrees
        subtree = below.add_(1)
    sizes = subtree  # nodes per tree
    n_nodes, roots = int(sizes.sum()), segment_starts(sizes)  # each root's id: tree after tree
    fields = {name: [] for name in ("id", "left", "right")}
    ids = roots
    for level, split in zip(levels, splits):
        left, right = torch.full_like(ids, TREE_LEAF), torch.full_like(ids, TREE_LEAF)
        left_ids = ids.index_select(0, split) + 1  # a left child comes right after its parent
        if len(split):
            right_ids = left_ids + level["subtree"][0::2]  # ... a right one after the left subtree
            left[split], right[split] = left_ids, right_ids
            ids_next = torch.stack([left_ids, right_ids], 1).view(-1)
        fields["id"].append(ids)
        fields["left"].append(left)
        fields["right"].append(right)
        ids = ids_next if len(split) else left_ids
    position = torch.cat(fields["id"])

    def in_preorder(values):
        out = torch.empty((n_nodes,) + values.shape[1:], dtype=values.dtype)
        out[position] = values
        return out

    def gather(name):
        return in_preorder(torch.cat([level[name] for level in levels]))

    root = torch.repeat_interleave(roots, sizes)  # each node's root id
    table = NodeTable(
        children_left=in_preorder(torch.cat(fields["left"])),
        children_right=in_preorder(torch.cat(fields["right"])),
        feature=gather("feature"),
        threshold=gather("threshold"),
        value=gather("value"),
        impurity=gather("impurity"),
        n_node_samples=gather("n"),
        weighted_n_node_samples=gather("weight"),
        categorical=in_preorder(
            torch.cat(
                [
                    level.get("categorical", torch.zeros_like(level["n"], dtype=torch.bool))
                    for level in levels
                ]
            )
        ),  # fmt: skip
    )
    arrays = table.columns
    if any("missing_left" in level for level in levels):  # a search that saw NaN
        arrays["missing_go_to_left"] = missing_sides(levels, arrays, in_preorder)
    for name in ("children_left", "children_right"):  # ids from each tree's root
        children = arrays[name]
        arrays[name] = torch.where(children >= 0, children - root, children)
    return [part.to_tree(device) for part in table.split(sizes.tolist())]
