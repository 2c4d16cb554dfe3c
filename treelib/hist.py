"""Histogram split search: bin each feature once, then split on bin edges.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). Each feature is cut
into at most ``max_bins`` quantile bins before growing (a forest bins once for
all its trees). At every level a ``bincount`` builds, for a batch of nodes at
once, the statistics of every (class, node, feature, bin) cell; a cumulative
sum over the bins gives every left child, and only the boundaries after
non-empty bins are scored. No feature is sorted after the binning. When a
feature has at most ``max_bins`` distinct values every value is its own bin and
the split search is exact; thresholds are always reported as real feature values.

NaN (Chapter 6's missing values) gets one more bin per feature that has any,
after the known values' bins (:func:`bin_with_missing`); a node's search tries
the exact builders' three blocks of candidates (the NaN right, alone on the
right, left: :meth:`HistogramSearch.best_in_cells_missing`). So with
``max_bins`` at least the number of distinct (float32) known values of every
feature, ``hist`` grows exactly the tree of the exact builders (same tie rule,
:func:`treelib.rules.is_tie_or_best`, same ``missing_go_to_left``). With more
distinct values than bins it only tries the bin edges: its trees are close to
the exact ones, not equal.

A categorical feature (Chapter 6) gets one bin per category, never quantile
cuts (:func:`check_categories`: more categories than ``max_bins`` is an
error), and its one-vs-rest candidates ``x == c`` read one bin each
(:meth:`HistogramSearch.scan_with_categories`): its splits are always the
exact builders'.
"""

import math
from typing import NamedTuple

import torch

from ._validation import categorical_nan_error
from .criteria import criterion_of, node_weight
from .kernels import (  # noqa: F401  (moved to treelib.kernels: old paths work)
    columns,
    first_last_bins_grid,
    first_last_bins_listed,
    float32_is_exact,
    nodes_within,
    segment_starts,
    segmented_argmax,
    take,
    whole_sums,
)
from .levelwise import best_of_both, masked_scores  # noqa: F401  (masked_scores: named here since Chapter 7)
from .node_random import search_ranks
from .rules import (
    FEATURE_THRESHOLD,  # noqa: F401  (named in the docstrings)
    big_enough,
    distinct,
    is_constant,
    is_tie_or_best,
    midpoints,
    tie_tolerance,
)

MAX_CELLS = 2**20  # (node, feature, bin) cells per histogram batch: bounds memory
MAX_SCAN = 2**17  # non-empty cells scanned for splits at a time (whole nodes): bounds memory
CHUNK = 2**20  # (sample, feature) pairs counted at a time: bounds memory
INF = float("inf")
SUBSAMPLE = 200_000  # rows the bin edges are computed from (scikit-learn's default)
SPARSE_RATIO = 16  # list non-empty cells when nodes hold < bins * classes / SPARSE_RATIO samples
GRID_RATIO = 3  # scan histograms in place when >= 1 / GRID_RATIO of their cells are non-empty
LOOKUP_CELLS = 4  # cells per cut of bucket_codes's lookup grid
LOOKUP_MAX = 8  # more cuts than this in one cell of the grid: torch.bucketize instead


def sorted_quantiles(values, n_bins):
    """The ``n_bins - 1`` inner quantiles of sorted ``values``, as ``torch.quantile`` does.

    ``torch.quantile`` would sort ``values`` again; this reads them directly.
    """
    q = torch.linspace(0, 1, n_bins + 1, dtype=values.dtype, device=values.device)[1:-1]
    rank = q * (len(values) - 1)
    below, above = rank.long(), rank.ceil().long()
    return torch.lerp(values[below], values[above], rank - below)


def bin_feature(x, max_bins, sample=None):
    """Bin codes of one float32 column, and each bin's smallest and largest value.

    Bin ``b`` holds the values ``cut[b-1] < x <= cut[b]``. With ``sample`` (row
    indices) the cuts come from those rows only, as scikit-learn's
    HistGradientBoosting does for large ``n``; if the sample has at most
    ``max_bins`` distinct values but the column has a value the sample missed,
    the column is binned from all rows, so a column with at most ``max_bins``
    distinct values always gets one bin per value.
    """
    if sample is not None:
        values = torch.unique(x.index_select(0, sample))  # sorted
        every_value = len(values) <= max_bins
        cuts = values[:-1] if every_value else quantile_cuts(values, max_bins)
        codes = bucket_codes(x.contiguous(), cuts)  # cut[b-1] < x <= cut[b]
        low, high = bin_ranges(x, codes, len(cuts) + 1)
        if not every_value or bool((low == high).all()):
            return codes, low, high
    sorted_x, order = torch.sort(x)
    values = torch.unique_consecutive(sorted_x)
    if len(values) <= max_bins:
        cuts = values[:-1]  # one bin per distinct value
    else:
        cuts = quantile_cuts(values, max_bins)
    # along the sorted column the code goes up by one after each cut
    steps = torch.zeros(len(x) + 1, dtype=torch.int64, device=x.device)
    steps.index_add_(
        0, torch.searchsorted(sorted_x, cuts, right=True), torch.ones_like(cuts, dtype=torch.int64)
    )
    codes = torch.empty_like(order).scatter_(0, order, torch.cumsum(steps[:-1], 0))
    return (codes, *bin_ranges(x, codes, len(cuts) + 1))


def bucket_codes(x, cuts):
    """``torch.bucketize(x, cuts)`` for sorted distinct ``cuts``: the cuts below each value.

    Introduced in Chapter 7. ``torch.bucketize`` runs a binary search per
    value, about eight hard-to-predict branches each. Here a grid of
    ``LOOKUP_CELLS * len(cuts)`` equal cells over the cuts' range gives each
    value a cell (a subtraction, a product, a ``floor``); a table gives the
    number of cuts in the earlier cells, and the value is compared with at
    most ``LOOKUP_MAX`` cuts from its cell's first one on (a later cell's cuts
    lie above it). The result is exact: values and cuts of one dtype get their
    cells by the same rounded arithmetic, which never reverses an order, so a
    cut in an earlier cell is below the value and one in a later cell is above
    it. On a CPU it is usually several times faster (how much depends on the
    data). It calls ``torch.bucketize`` instead on other devices, for values
    and cuts of different dtypes, values or cuts that are not finite, fewer
    than two cuts, and where one cell would hold more than ``LOOKUP_MAX`` cuts
    (a few huge values stretch the grid).
    """
    n_cells = LOOKUP_CELLS * len(cuts)
    if x.device.type != "cpu" or x.dtype != cuts.dtype or len(cuts) < 2:
        return torch.bucketize(x, cuts)
    low, high = float(cuts[0]), float(cuts[-1])
    scale = torch.tensor(n_cells / (high - low) if high > low else INF, dtype=x.dtype)
    finite = math.isfinite(low) and math.isfinite(high) and bool(torch.isfinite(scale))
    if not finite or not bool(torch.isfinite(x).all()):
        return torch.bucketize(x, cuts)

    def cell_of(values):  # rounded, but never out of order
        return values.sub(low).mul_(scale).floor_().clamp_(0, n_cells - 1).to(torch.int32)

    in_cell = torch.bincount(cell_of(cuts), minlength=n_cells)
    most = int(in_cell.max())
    if most > LOOKUP_MAX:
        return torch.bucketize(x, cuts)
    first = (torch.cumsum(in_cell, 0) - in_cell).to(torch.int32)  # cuts in earlier cells
    cuts = torch.cat([cuts, cuts.new_full((most,), INF)])  # (a cell's last cuts read past the end)
    below = first.index_select(0, cell_of(x))
    codes = below.to(torch.int64)
    for i in range(most):  # the cuts of the value's own cell (and later ones: above it)
        codes += cuts.index_select(0, below + i if i else below) < x
    return codes


def quantile_cuts(values, max_bins):
    """At most ``max_bins - 1`` cuts at the quantiles of sorted distinct ``values``."""
    return torch.unique(sorted_quantiles(values.double(), max_bins).float())


def bin_ranges(x, codes, n_bins):
    """Each bin's smallest and largest value (``inf``, ``-inf``: empty)."""
    low = torch.full((n_bins,), float("inf"), device=x.device).scatter_reduce(0, codes, x, "amin")
    high = torch.full((n_bins,), float("-inf"), device=x.device).scatter_reduce(0, codes, x, "amax")
    return low, high


class Bins(NamedTuple):
    """Every feature's bins: codes ``(n, p)``, smallest and largest value ``(p, B)``."""

    codes: torch.Tensor
    low: torch.Tensor
    high: torch.Tensor

    def select(self, rows):
        """The bins of some rows (a forest bins once and grows each tree on some rows)."""
        return Bins(self.codes[rows], self.low, self.high)

    def to(self, device):
        return Bins(*(values.to(device) for values in self))


def bin_columns(X, max_bins, categorical=()):
    """Bin every column of ``X`` (:func:`bin_feature`); bins padded to the largest count.

    Above ``SUBSAMPLE`` rows the cuts come from ``SUBSAMPLE`` rows drawn once
    (seeded: the same rows on every run), as in scikit-learn's HistGradientBoosting.
    The ``categorical`` features (Chapter 6) must get one bin per category:
    :func:`check_categories`.
    """
    check_categories(X, categorical, max_bins)
    missing = X.isnan().any(0).tolist()  # NaN: one more bin, after the known values' ones
    code_type = torch.uint8 if max_bins + any(missing) <= 256 else torch.int32  # (one byte)
    codes = torch.empty(X.shape, dtype=code_type, device=X.device)
    lows, highs = [], []
    sample = None
    if X.shape[0] > SUBSAMPLE:
        generator = torch.Generator().manual_seed(0)
        sample = torch.randperm(X.shape[0], generator=generator)[:SUBSAMPLE].to(X.device)
    for j, column in enumerate(X.T):
        binned = bin_with_missing if missing[j] else bin_feature
        c, low, high = binned(column, max_bins, sample)
        codes[:, j] = c
        lows.append(low)
        highs.append(high)
    B = max(len(low) for low in lows)
    low = torch.stack([torch.nn.functional.pad(lo, (0, B - len(lo)), value=float("inf"))
                       for lo in lows])  # fmt: skip
    high = torch.stack([torch.nn.functional.pad(hi, (0, B - len(hi)), value=float("-inf"))
                        for hi in highs])  # fmt: skip
    return Bins(codes, low, high)


def check_categories(X, categorical, max_bins):
    """Every category of a categorical feature is a bin of its own (Chapter 7).

    A one-vs-rest split ``x == c`` (Chapter 6) reads one bin's statistics, so
    the bins of a categorical feature must hold one category each:
    :func:`bin_feature` gives every distinct value its own bin when there are
    at most ``max_bins`` of them. More categories than that, or a NaN (which
    no builder accepts in a categorical feature), raise a ``ValueError``.
    """
    for f in sorted(categorical):
        column = X[:, f]
        if bool(column.isnan().any()):
            raise categorical_nan_error(f)
        n_categories = len(torch.unique(column))
        if n_categories > max_bins:
            raise ValueError(
                f"Categorical feature {f} has {n_categories} categories, more than "
                f"max_bins={max_bins}: the histogram builder needs one bin per category. "
                "Raise max_bins or use "
                'tree_method="recursive".'
            )


def bin_with_missing(x, max_bins, sample=None):
    """:func:`bin_feature` of a column with NaN: the known values' bins, then the NaN's own.

    Introduced in Chapter 7, as scikit-learn's HistGradientBoosting: the cuts
    come from the known values only (up to ``max_bins`` bins of their own) and
    every NaN goes to one more bin after them, whose smallest and largest
    value are NaN (a split compares a NaN sample's NaN: it follows the
    split's ``missing_left``, :func:`treelib.rules.goes_left`).
    """
    known = ~x.isnan()
    rows = torch.nonzero(known).squeeze(1)
    codes = torch.zeros(len(x), dtype=torch.int64, device=x.device)
    if len(rows) == 0:  # all NaN: the NaN bin alone
        low = high = x.new_full((1,), float("nan"))
        return codes, low, high
    if sample is not None:  # the sampled rows' known values, numbered among the known rows
        sample = sample[known.index_select(0, sample)]
        sample = (torch.cumsum(known, 0) - 1).index_select(0, sample) if len(sample) else None
    known_codes, low, high = bin_feature(x.index_select(0, rows), max_bins, sample)
    codes.fill_(len(low)).index_copy_(0, rows, known_codes)
    nan = x.new_full((1,), float("nan"))
    return codes, torch.cat([low, nan]), torch.cat([high, nan])


class HistogramSearch:
    """Level-wise split search on per-node histograms (see the module docstring).

    For classification each cell also carries the class: one ``bincount``
    counts every (node, feature, bin, class) at once.
    """

    def __init__(self, X, stats, max_bins=255, criterion="gini", bins=None, categorical=()):
        bins = bin_columns(X, max_bins, categorical) if bins is None else bins
        n, p = bins.codes.shape
        device = bins.codes.device
        # bins per feature, padded with empty ones to a power of two: a cell id's
        # bin and row are then a mask and a shift (cell & (B - 1), cell >> shift)
        self.n_bins = B = 1 << (bins.low.shape[1] - 1).bit_length()
        self.shift = B.bit_length() - 1
        self.n_used = bins.low.shape[1]  # (the batches and scans are sized on the bins used)
        pad = B - self.n_used
        self.low = torch.nn.functional.pad(bins.low, (0, pad), value=INF)
        self.high = torch.nn.functional.pad(bins.high, (0, pad), value=-INF)
        nan = self.high.isnan()  # a feature's NaN bin (bin_with_missing): after its known ones
        self.has_nan = bool(nan.any())
        if self.has_nan:  # (without NaN in X: nothing more to do, nor to scan)
            self.nan_bin = torch.where(nan.any(1), nan.int().argmax(1), B)  # B: none
            self.low_known = torch.where(nan, INF, self.low)  # (the grid's running minimum)
        self.stats, self.classify = stats, not criterion_of(criterion).is_regression
        self.criterion = criterion
        self.n_classes = stats.shape[0] if self.classify else 1
        self.codes, self.feature_offset = bins.codes, torch.arange(p, device=device) * B
        self.feature_offset = self.feature_offset.to(torch.int32)
        self.index_type = torch.int32 if MAX_CELLS * self.n_classes < 2**31 else torch.int64
        if self.classify:
            weight = stats.sum(0)  # one class per sample: its weight sits in its class
            self.unit_weights = bool((weight == 1).all())
            self.weight = None if self.unit_weights else weight  # (memory: counts need none)
            if not self.unit_weights and float32_is_exact(weight):  # a forest's bootstrap counts
                self.weight = weight.float()  # (bincount adds float32 faster)
            label_type = torch.uint8 if self.n_classes <= 256 else torch.int64
            self.label = torch.zeros(stats.shape[1], dtype=label_type, device=stats.device)
            for k in range(1, self.n_classes):  # (an argmax across the rows is far slower)
                self.label.masked_fill_(stats[k] > 0, k)
        self.positive = bool((node_weight(stats, criterion) > 0).all())  # (fit drops the rest)
        self.active = self.group = self.sizes = None  # the level loop hands them (regroup_level)
        self.at_root, self.at_roots = False, True

    takes_grouped = True  # it reads the level loop's samples grouped by node

    def regroup_level(self, samples, node, group_of_node, sizes):
        """Keep the open nodes' samples for the next search (the level loop's call).

        The level loop keeps its ``samples`` grouped by node, in node order
        (:func:`treelib.levelwise.next_level_nodes`), ``node`` being theirs:
        the open nodes' samples are those samples, less the ones in leaves
        (``group_of_node`` numbers the open nodes, ``-1``: a leaf), with no
        regrouping; ``sizes`` counts them per open node. The search keeps no
        copy. One root, at the start: every sample, in order (no picking).
        """
        at_roots, self.at_roots = self.at_roots, False
        active, group = samples, node
        if len(sizes) < len(group_of_node):  # (the samples of leaves leave)
            group = take(group_of_node, node)
            keep = torch.nonzero(group >= 0).squeeze(1)
            active, group = samples.index_select(0, keep), group.index_select(0, keep)
        self.active, self.group, self.sizes = active, group, sizes
        self.at_root = at_roots and len(group_of_node) == 1

    def split_values(self, samples, features):
        """The value a split compares for each sample: the largest value of its bin.

        A split after bin ``b`` of a node puts its threshold between the
        largest value of bin ``b`` and the smallest value of the node's next
        non-empty bin (:meth:`best_in_cells`), so the node's samples of bins up
        to ``b`` have a largest value at most the threshold and the others one
        above it: the same side as their own value, with no need for ``X``.
        """
        p = self.codes.shape[1]
        code = take(self.codes, samples * p + features)
        return take(self.high, features * self.n_bins + code)

    def slot_codes(self, rows, local, features):
        """Bin codes of the nodes' searched features, ``(slots, len(rows))``.

        ``features`` (``(nodes, slots)``) lists each node's features, one per
        slot (``None``: every feature, in order); ``local`` is each row's node.
        Slot-major: a sample's weight or label, repeated once per slot, is a
        tiled copy (``repeat``), far cheaper than repeating each value in place.
        """
        if features is None:
            return self.codes.index_select(0, rows).T
        small = self.codes.numel() < 2**31  # int32 positions: half the memory traffic
        kind = torch.int32 if small else torch.int64
        index = columns(features.T.to(kind).contiguous(), local)
        index.add_(rows.to(kind), alpha=self.codes.shape[1])
        return take(self.codes, index)

    def histograms(self, rows, local, count, with_counts=False, features=None, listing=False):
        """Statistics of every (node, slot, bin) cell of ``count`` nodes.

        ``rows`` are the nodes' samples (``None``: all samples, in order) and
        ``local`` their node, numbered from 0; slot ``s`` of node ``t`` is its
        feature ``features[t, s]`` (``None``: feature ``s``). Returns a tensor
        of shape ``(n_stats, count, slots, B)`` (classes: integer counts if every
        weight is one, float32 for whole ones, :func:`float32_is_exact`) and,
        if asked, the number of samples in each cell, ``(count, slots, B)``.
        With ``listing``, also each (slot, sample) pair's cell id
        (:meth:`sorted_cells`).
        """
        p = self.codes.shape[1] if features is None else features.shape[1]
        B, K = self.n_bins, self.n_classes
        size = count * p * B  # cells of one class (or one statistic)
        integer = self.classify and self.unit_weights  # plain counts
        step = max(1, CHUNK // p)
        hist, counts, pair_cells = None, None, []
        n_rows = len(self.codes) if rows is None else len(rows)
        for lo in range(0, max(n_rows, 1), step):  # a chunk of samples at a time: bounded memory
            part = slice(lo, lo + step)
            everyone = torch.arange(lo, min(lo + step, n_rows), device=self.codes.device)
            chunk = everyone if rows is None else rows[part]
            base = (local[part] * (p * B)).to(self.index_type)  # the node's block of cells
            cell = base + self.feature_offset[:p, None]  # (slots, samples): the slot's row ...
            cell += self.slot_codes(chunk, local[part], features)  # ... and the bin in it
            if listing:  # (each pair's cell, for sorted_cells)
                pair_cells.append(cell.view(-1).clone())
            if self.classify:  # class k's histograms come after those of classes 0..k-1
                cell += (self.label.index_select(0, chunk).to(cell.dtype) * size)[None]
            cell = cell.view(-1)
            if integer:
                parts = [torch.bincount(cell, None, size * K)]
            else:
                sources = [self.weight] if self.classify else self.stats
                weights = [s.index_select(0, chunk).repeat(p) for s in sources]
                parts = [torch.bincount(cell, w, size * K) for w in weights]
            if hist is None:  # (no stacking copy for one statistic)
                hist = parts[0][None] if len(parts) == 1 else torch.stack(parts)
            else:
                for row, part_hist in zip(hist, parts):
                    row.add_(part_hist)
            if with_counts:
                part_counts = torch.bincount(cell, None, size * K)
                counts = part_counts if counts is None else counts.add_(part_counts)
        if counts is not None:
            counts = counts.view(K, count, p, B).sum(0)
        hist = hist.view(-1, count, p, B)
        if listing:
            return hist, counts, torch.cat(pair_cells)
        return hist, counts

    def best_splits(self, total, keys, rules, criterion, trees=None, bounds=None):
        """Each open node's best split: ``(group, feature, threshold, left statistics)``.

        With ``max_features`` below the number of features, a node searches
        the first ``max_features`` features of its visiting order
        (:func:`treelib.node_random.search_ranks`) that are not constant: only
        those get histograms, and only nodes where all of them are constant
        look at the rest of the order (the first feature that varies).
        ``trees`` (each node's tree, when several grow side by side) is not
        used: each node's histograms are its own, and the running sums along
        the list of bins are restarted per (node, feature) by subtraction, as
        between the nodes of one tree (the tie rule absorbs the rounding).
        ``bounds``: ``(2, m)``, each open node's lower and upper bound under
        monotonic constraints (``rules.monotonic``, Chapter 6), or None.
        """
        p, k = self.codes.shape[1], rules.max_features
        nodes = torch.arange(total.shape[1], device=total.device)
        if k >= p:
            ranks = search_ranks(keys, p, p)
            return self.search_nodes(
                nodes, None, ranks, total, rules, criterion, value_bounds=bounds
            )[0]
        order = torch.argsort(search_ranks(keys, p, p), dim=1)  # each node's visiting order
        found, fallback = self.search_nodes(
            nodes, order[:, :k], 0, total, rules, criterion, value_bounds=bounds
        )
        if len(fallback) == 0:
            return found
        # every drawn feature is constant there: search the first one of the rest that varies
        later = order[fallback, k:]
        more, _ = self.search_nodes(
            fallback, later, k, total, rules, criterion, first_only=True, value_bounds=bounds
        )
        return tuple(torch.cat(parts, dim=-1) for parts in zip(found, more))

    def search_nodes(
        self, nodes, features, ranks, total, rules, criterion, first_only=False, value_bounds=None
    ):
        """The best splits of some open nodes (``nodes``, increasing), a batch at a time.

        ``features`` (``(len(nodes), slots)`` or ``None``: every feature) are
        the features each node searches, in its visiting order; ``ranks`` is
        either each node's rank of every feature (``(len(nodes), p)``) or the
        rank of the first slot: slot ``s`` then has rank ``ranks + s`` and a
        constant slot is skipped (with ``first_only``, every slot after the
        first that varies is skipped too). Where the nodes are large, each
        batch gets dense histograms (:meth:`histograms`); where they hold fewer
        samples on average than ``n_bins * n_classes / SPARSE_RATIO`` (16),
        most cells would be empty, and the batch lists only its non-empty
        cells (:meth:`sparse_cells`), at a cost that follows the samples, not
        the bins. Returns the splits found and the nodes whose slots were all
        constant. ``value_bounds``: every open node's monotonic bounds (``(2, m)``),
        or None.
        """
        p, B = self.codes.shape[1], self.n_bins
        slots = p if features is None else features.shape[1]
        sizes = self.sizes.index_select(0, nodes)
        start = segment_starts(self.sizes).index_select(0, nodes)  # where their samples start
        bounds = torch.cat([sizes.new_zeros(1), torch.cumsum(sizes, 0)]).tolist()
        used = self.n_used
        sparse = bounds[-1] * SPARSE_RATIO < len(nodes) * used * self.n_classes
        batch = max(1, MAX_CELLS // (slots * used * self.n_classes))
        max_rows = max(1, CHUNK // slots)
        every_node = len(nodes) == len(self.sizes)  # then the samples are all in a row
        found, constant_nodes, first = [], [], 0
        while first < len(nodes):
            if sparse:  # as many nodes as hold at most max_rows samples (at least one)
                count = nodes_within(bounds, first, max_rows, len(nodes)) - first
            else:
                count = min(batch, len(nodes) - first)
            part, n_rows = slice(first, first + count), bounds[first + count] - bounds[first]
            if every_node:  # (each sample's node is already listed: self.group)
                rows = self.active[bounds[first] : bounds[first + count]]
                local = self.group[bounds[first] : bounds[first + count]]
                local = local - first if first > 0 else local
            else:  # the samples of listed nodes: each node's stretch of self.active
                batch_nodes = torch.arange(count, device=sizes.device)
                local = torch.repeat_interleave(batch_nodes, sizes[part], output_size=n_rows)
                shift = start[part] - (segment_starts(sizes[part]))
                rows = self.active[torch.arange(n_rows, device=sizes.device) + shift[local]]
            drawn = None if features is None else features[part]
            with_counts = rules.min_samples_leaf > 1
            grid = present = cells = row = None  # dense histograms, scanned in place
            if sparse:
                cells = self.sparse_cells(rows, local, with_counts, drawn)
            else:  # (at the root, all samples in order: no rows to pick)
                everyone = None if self.at_root and every_node else rows
                # fewer (sample, slot) pairs than a GRID_RATIO-th of the cells: mostly empty
                listing = self.positive and n_rows * GRID_RATIO < count * used
                grid = self.histograms(everyone, local, count, with_counts, drawn, listing)
                if listing:
                    cells, grid = self.sorted_cells(*grid), None
                else:
                    present = node_weight(grid[0], self.criterion) > 0
                    if int(present.sum()) * GRID_RATIO < count * slots * used:  # mostly empty: list
                        cells, grid = self.listed_cells(*grid, present), None
            if grid is None:
                row = cells[0] >> self.shift  # node * slots + slot (cell // B)
            if features is None:
                batch_ranks = ranks[part]
            else:
                if grid is None:
                    first_bin, last_bin = first_last_bins_listed(cells[0], row, count * slots, B)
                else:
                    first_bin, last_bin = first_last_bins_grid(present)
                constant = self.constant_slots(first_bin, last_bin, drawn).view(count, slots)
                slot = torch.arange(slots, device=nodes.device)
                skip = constant
                if first_only:  # only the first slot that varies
                    skip = skip | (slot > (~constant).int().argmax(1, keepdim=True))
                batch_ranks = torch.where(skip, p, ranks + slot)
                constant_nodes.append(nodes[part][constant.all(1)])
            batch_total = total.index_select(1, nodes[part])
            context = (batch_total, sizes[part], batch_ranks, drawn, rules, criterion)
            batch_bounds = None
            if value_bounds is not None:
                batch_bounds = value_bounds.index_select(1, nodes[part])
            if rules.categorical:  # (one-vs-rest splits too: Chapter 6; never with constraints)
                g, *split = self.scan_with_categories(cells, row, grid, present, context)
            elif grid is None:
                g, *split = self.scan_cells(cells, row, *context, bounds=batch_bounds)
            else:
                g, *split = self.scan_grid(*grid, present, *context, bounds=batch_bounds)
            found.append((nodes[part][g], *split))
            first += count
        found = tuple(torch.cat(parts, dim=-1) for parts in zip(*found))
        return found, torch.cat(constant_nodes) if constant_nodes else nodes[:0]

    def scan_with_categories(self, cells, row, grid, present, context):
        """The scans of :meth:`search_nodes` where some features are categorical.

        Introduced in Chapter 7 (one-vs-rest splits: Chapter 6). The ``x <= t``
        scan (:meth:`scan_cells` or :meth:`scan_grid`) searches the ordinal
        slots only, :meth:`best_categories_in_cells` or
        :meth:`best_categories_in_grid` the categorical ones; each node then
        keeps the better of its two winners (:func:`treelib.levelwise.best_of_both`).
        """
        total, sizes, ranks, features, rules, criterion = context
        p = self.codes.shape[1]
        categorical = torch.zeros(p, dtype=torch.bool, device=ranks.device)
        categorical[sorted(rules.categorical)] = True
        if features is None:
            is_categorical = categorical.expand(ranks.shape)
        else:
            is_categorical = take(categorical, features)
        ordinal_ranks = torch.where(is_categorical, p, ranks)
        category_ranks = torch.where(is_categorical, ranks, p)
        ordinal = (total, sizes, ordinal_ranks, features, rules, criterion)
        one_vs_rest = (total, sizes, category_ranks, features, rules, criterion)
        if grid is None:
            found = self.scan_cells(cells, row, *ordinal)
            won = self.best_categories_in_cells(*cells, row, *one_vs_rest)
        else:
            found = self.scan_grid(*grid, present, *ordinal)
            won = self.best_categories_in_grid(*grid, present, *one_vs_rest)
        rank_found = self.rank_of(found, ranks, features)
        rank_won = self.rank_of(won, ranks, features)
        return best_of_both(found, won, rank_found, rank_won, total, rules, criterion)

    @staticmethod
    def rank_of(found, ranks, features):
        """The rank of each winner's feature in its node's search order (``ranks``: per slot)."""
        g, f = found[0], found[1]
        if features is None:  # (slot s is feature s)
            return ranks[g, f]
        slot = (features.index_select(0, g) == f[:, None]).int().argmax(1)
        return ranks[g, slot]

    def best_categories_in_cells(
        self, cell, values, n_in, row, total, sizes, ranks, features, rules, criterion
    ):
        """Each node's best one-vs-rest split ``x == c`` from its non-empty cells.

        Introduced in Chapter 7 (the split: Chapter 6). The arguments of
        :meth:`best_in_cells`; a categorical feature's bins hold one category
        each (:func:`check_categories`), so a candidate's left child is one
        cell and its right child the node's total minus it. Every non-empty
        cell of a searched slot is a candidate if its row has another
        non-empty cell (else the right child would be empty); ties go to the
        lower rank, then the smaller category (bin), as
        :func:`treelib.split.best_categorical_candidate`. Returns ``(node,
        feature, category, left)``.
        """
        p, B, (count, slots) = self.codes.shape[1], self.n_bins, ranks.shape
        rank = take(ranks, row)
        same_row = row[1:] == row[:-1]
        shared = torch.zeros(len(cell), dtype=torch.bool, device=cell.device)
        shared[:-1] |= same_row
        shared[1:] |= same_row
        # only the candidates' cells from here on (most cells may be ordinal)
        at = torch.nonzero(shared & (rank < p)).squeeze(1)  # p: not searched
        row, rank, b = row.index_select(0, at), rank.index_select(0, at), cell[at] & (B - 1)
        g = row // slots
        f = row % slots if features is None else take(features, row)
        left = columns(values, at).to(total.dtype)
        allowed = torch.ones_like(at, dtype=torch.bool)
        if rules.min_samples_leaf > 1:
            n_in, size = n_in.index_select(0, at), sizes.index_select(0, g)
            allowed &= big_enough(n_in, size - n_in, rules.min_samples_leaf)
        scores = masked_scores(left, columns(total, g), allowed, rules, criterion)
        tol = tie_tolerance(total, criterion)
        won = torch.nonzero(segmented_argmax(scores, g, rank * B + b, count, tol)).squeeze(1)
        f, b = f.index_select(0, won), b.index_select(0, won)
        category = take(self.high, f * B + b).double()
        return g.index_select(0, won), f, category, columns(left, won)

    def best_categories_in_grid(
        self, hist, counts, present, total, sizes, ranks, features, rules, criterion
    ):
        """:meth:`best_categories_in_cells` on dense histograms.

        The arguments of :meth:`best_in_grid`: every non-empty bin of a searched
        categorical slot whose row has another non-empty bin is a candidate.
        """
        p, (count, slots, B) = self.codes.shape[1], present.shape
        device = present.device
        if features is None:
            features = torch.arange(slots, device=device).expand(count, slots)
        searched = (ranks < p)[..., None]
        shared = present.sum(-1, keepdim=True) > 1  # (one category alone: no right child)
        allowed = present & searched & shared
        if rules.min_samples_leaf > 1:
            allowed &= big_enough(counts, sizes[:, None, None] - counts, rules.min_samples_leaf)
        left = hist.to(total.dtype)
        scores = masked_scores(left, total[:, :, None, None], allowed, rules, criterion)
        g, at = grid_winners(scores, ranks, tie_tolerance(total, criterion))
        f = take(features.contiguous(), at // B)
        category = take(self.high, f * B + at % B).double()
        return g, f, category, left.reshape(len(left), -1).index_select(1, at)

    def constant_slots(self, first, last, features):
        """Per (node, slot): is the slot's feature constant in the node?

        The exact builders' rule: its largest value in the node is at most
        ``FEATURE_THRESHOLD`` above its smallest, read here from the first and
        the last non-empty bin of the row (exact when each value has its own
        bin): ``first`` and ``last``, one per (node, slot), in order.
        """
        f = features.reshape(-1) * self.n_bins
        low, high = take(self.low, f + first), take(self.high, f + last)
        if not self.has_nan:
            return is_constant(low, high)
        nan_bin = take(self.nan_bin, features.reshape(-1))  # the last bin of its row, if any
        return is_constant(low, high, last == nan_bin, first == nan_bin)

    def sorted_cells(self, hist, counts, pair_cells):
        """:meth:`listed_cells` from the cell of each (slot, sample) pair: a sort, no scan.

        A cell is non-empty when a pair falls in it (every sample weighs more
        than zero): sorting the pairs' cell ids and dropping repeats lists the
        non-empty cells in order, at a cost that follows the pairs, not the cells.
        """
        cell = torch.unique_consecutive(torch.sort(pair_cells).values).to(torch.int64)
        return self.cells_at(hist, counts, cell)

    def listed_cells(self, hist, counts, present):
        """The non-empty cells of dense histograms (:meth:`histograms`), listed.

        ``present`` marks the non-empty cells. Returns ``(cell, values, n_in)``
        as :meth:`sparse_cells` does.
        """
        cell = torch.nonzero(present.view(-1)).squeeze(1)  # in (node, slot, bin) order
        return self.cells_at(hist, counts, cell)

    @staticmethod
    def cells_at(hist, counts, cell):
        """``(cell, values, n_in)``: the listed ``cell`` ids with their statistics and counts."""
        values = columns(hist.view(hist.shape[0], -1), cell)
        return cell, values, None if counts is None else counts.view(-1).index_select(0, cell)

    def sparse_cells(self, rows, local, with_counts, features=None):
        """The non-empty (node, slot, bin) cells of the nodes of ``rows``, listed.

        ``local`` numbers the samples' nodes from 0; slots as in
        :meth:`histograms`. Returns ``cell`` (sorted ids ``(node * slots +
        slot) * B + bin``), ``values`` (the cells' statistics, ``(n_stats,
        n_cells)``) and ``n_in`` (their sample counts, if asked, else None).
        Cost: a sort of ``len(rows) * slots`` ids.
        """
        p = self.codes.shape[1] if features is None else features.shape[1]
        B, K = self.n_bins, self.n_classes
        codes = self.slot_codes(rows, local, features).to(torch.int64)
        offset = self.feature_offset[:p, None].to(torch.int64)
        cell = (local * (p * B) + offset + codes).view(-1)  # slot-major, as slot_codes
        n_in = None
        if self.classify:  # one id per (cell, class): each class's weight summed apart
            key = cell * K + self.label.index_select(0, rows).repeat(p)
            keys, inverse = torch.unique(key, return_inverse=True)
            if self.weight is None:  # counts
                sums = torch.bincount(inverse, minlength=len(keys)).to(self.stats.dtype)
            else:
                w = self.weight.index_select(0, rows).repeat(p)
                sums = torch.zeros_like(keys, dtype=w.dtype).index_add_(0, inverse, w)
            cell, where = torch.unique_consecutive(keys // K, return_inverse=True)
            values = torch.zeros(K, len(cell), dtype=sums.dtype, device=sums.device)
            values[keys % K, where] = sums
            if with_counts:
                per_key = torch.bincount(inverse, minlength=len(keys))
                n_in = torch.zeros_like(cell).index_add_(0, where, per_key)
        else:
            cell, inverse = torch.unique(cell, return_inverse=True)
            stats = columns(self.stats, rows).repeat(1, p)
            values = stats.new_zeros(len(stats), len(cell)).index_add_(1, inverse, stats)
            if with_counts:
                n_in = torch.bincount(inverse, minlength=len(cell))
        return cell, values, n_in

    def scan_cells(self, cells, row, total, sizes, ranks, features, rules, criterion, bounds=None):
        """:meth:`best_in_cells` on at most ``MAX_SCAN`` cells at a time, in whole nodes.

        A node with more than ``MAX_SCAN`` cells is scanned alone. ``bounds``:
        the nodes' monotonic bounds (``(2, nodes)``, Chapter 6), or None
        (:func:`cell_monotonic`).

        A batch of dense histograms may hold up to ``MAX_CELLS`` non-empty
        cells; scanning them in parts bounds the temporary arrays of the scan
        (about twenty numbers per cell) without making the batches smaller.
        """
        cell, values, n_in = cells
        count, slots = ranks.shape
        if len(cell) <= MAX_SCAN:
            return self.best_in_cells(
                *cells, row, total, sizes, ranks, features, rules, criterion, bounds
            )
        nodes = torch.arange(count + 1, device=row.device)
        node_starts = torch.searchsorted(row // slots, nodes).tolist()  # each node's first cell
        found, first = [], 0
        while first < count:
            end = nodes_within(node_starts, first, MAX_SCAN, count)
            a, b = node_starts[first], node_starts[end]
            g, *split = self.best_in_cells(
                cell[a:b] - first * slots * self.n_bins,
                values[:, a:b],
                None if n_in is None else n_in[a:b],
                row[a:b] - first * slots,
                total[:, first:end],
                sizes[first:end],
                ranks[first:end],
                None if features is None else features[first:end],
                rules,
                criterion,
                None if bounds is None else bounds[:, first:end],
            )
            found.append((g + first, *split))
            first = end
        return tuple(torch.cat(parts, dim=-1) for parts in zip(*found))

    def best_in_cells(
        self, cell, values, n_in, row, total, sizes, ranks, features, rules, criterion, bounds=None
    ):
        """Each node's best split from its non-empty cells: ``(node, feature, threshold, left)``.

        ``cell``, ``values``, ``n_in``: from :meth:`listed_cells`,
        :meth:`sorted_cells` or :meth:`sparse_cells`, ``row`` their ``cell //
        B`` (``node * slots + slot``); ``total``, ``sizes``, ``ranks`` (``(nodes, slots)``; the
        number of features: not searched) and ``features`` (``None``: slot
        ``s`` is feature ``s``) are the nodes' own, numbered from 0. Only
        non-empty bins matter: listed in (node, slot, bin) order, the next
        entry of the same (node, slot) is the next non-empty bin, the right
        side of a split after this one.
        """
        p, B, (count, slots) = self.codes.shape[1], self.n_bins, ranks.shape
        n = len(cell)
        # a candidate after each cell whose next cell in the list is in the same row
        same_row = torch.zeros(n, dtype=torch.bool, device=cell.device)
        torch.eq(row[1:], row[:-1], out=same_row[:-1])
        # left children: a running sum along the list, minus the one before the row's start
        row_start = torch.arange(1, n + 1, device=cell.device)
        row_start[1:].masked_fill_(same_row[:-1], 0)  # (k + 1 where a row starts at k)
        row_start = torch.cummax(row_start, 0).values - 1  # the start of each cell's row

        def left_of(values):  # (running sums from a zero column: the row start's is the one before)
            cum = torch.zeros(values.shape[:-1] + (n + 1,), dtype=total.dtype, device=cell.device)
            for into, source in zip(cum.view(-1, n + 1), values.reshape(-1, n)):
                torch.cumsum(source, 0, out=into[1:])
            return cum[..., 1:] - columns(cum, row_start)

        left = left_of(values)
        nxt = torch.cat([cell[1:], cell[-1:]]) & (B - 1)  # the next cell's bin (the last: none)
        g, b = row // slots, cell & (B - 1)
        f = row % slots if features is None else take(features, row)
        rank = take(ranks, row)
        low, high = take(self.low, f * B + nxt), take(self.high, f * B + b)
        allowed = same_row & distinct(high, low) & (rank < p)  # p: not searched
        n_left = left_of(n_in) if rules.min_samples_leaf > 1 else None
        if self.has_nan:
            return self.best_in_cells_missing(
                left, values, n_left, n_in, same_row, nxt, g, b, f, rank, row, allowed, low,
                high, total, sizes, count, slots, rules, criterion, bounds,
            )  # fmt: skip
        if n_left is not None:
            allowed &= big_enough(n_left, sizes.index_select(0, g) - n_left, rules.min_samples_leaf)
        monotonic = cell_monotonic(rules, bounds, f, g)
        scores = masked_scores(left, columns(total, g), allowed, rules, criterion, monotonic)
        tol = tie_tolerance(total, criterion)
        winner = segmented_argmax(scores, g, rank * B + b, count, tol)  # ties: rank, then bin
        won = torch.nonzero(winner).squeeze(1)  # (once: a mask is searched at every use)
        high, low = high.index_select(0, won).double(), low.index_select(0, won).double()
        return g[won], f[won], midpoints(high, low), columns(left, won)

    def best_in_cells_missing(
        self, left, values, n_left, n_in, same_row, nxt, g, b, f, rank, row, known, low,
        high, total, sizes, count, slots, rules, criterion, bounds=None,
    ):  # fmt: skip
        """:meth:`best_in_cells` where some feature has NaN: five arrays, ``missing_left`` last.

        Introduced in Chapter 7. The candidates of a row with NaN come in the
        exact search's three blocks (:func:`treelib.split.missing_value_candidates`).
        The NaN bin is its row's last listed cell: the running sum gives
        block 1 (NaN right) at the known candidates (``known``) and block 2
        (every known value left, the NaN alone right, threshold ``inf``) at
        the cell just before the NaN cell; block 3 adds the row's NaN
        statistics to each known candidate's left sums. Tie keys: per row,
        block 1 and 2 by bin, then block 3 by bin. ``missing_left`` is 1 for
        block 3, 0 for the others, and -1 where the node has no NaN in the
        feature (the bigger child gets a future NaN:
        :func:`treelib.levelwise.missing_sides`).
        """
        B, n, msl = self.n_bins, len(b), rules.min_samples_leaf
        nan_bin = take(self.nan_bin, f)
        is_nan = b == nan_bin  # the row's NaN cell
        searched = rank < self.codes.shape[1]
        alone = same_row & (nxt == nan_bin) & searched  # block 2: the NaN alone on the right
        nan_cells = torch.nonzero(is_nan).squeeze(1)
        nan_rows = row.index_select(0, nan_cells)
        n_rows = count * slots
        missing = total.new_zeros(len(total), n_rows)
        missing.index_copy_(1, nan_rows, values.index_select(1, nan_cells).to(total.dtype))
        has_missing = torch.zeros(n_rows, dtype=torch.bool, device=b.device)
        has_missing.index_fill_(0, nan_rows, True)
        third = torch.nonzero(known & take(has_missing, row)).squeeze(1)  # block 3's cells
        allowed = known | alone
        third_left = columns(left, third) + columns(missing, row.index_select(0, third))
        third_allowed = torch.ones(len(third), dtype=torch.bool, device=b.device)
        if n_left is not None:  # (min_samples_leaf > 1)
            size = sizes.index_select(0, g)
            allowed &= big_enough(n_left, size - n_left, msl)
            n_missing = torch.zeros(n_rows, dtype=n_in.dtype, device=b.device)
            n_missing.index_copy_(0, nan_rows, n_in.index_select(0, nan_cells))
            third_n = n_left.index_select(0, third) + n_missing.index_select(0, row[third])
            third_allowed = big_enough(third_n, size.index_select(0, third) - third_n, msl)
        g3 = g.index_select(0, third)
        monotonic = cell_monotonic(rules, bounds, f, g)
        monotonic3 = cell_monotonic(rules, bounds, f.index_select(0, third), g3)
        scores = torch.cat([
            masked_scores(left, columns(total, g), allowed, rules, criterion, monotonic),
            masked_scores(
                third_left, columns(total, g3), third_allowed, rules, criterion, monotonic3
            ),
        ])  # fmt: skip
        key = torch.cat([rank * (2 * B) + b, rank[third] * (2 * B) + B + b[third]])
        tol = tie_tolerance(total, criterion)
        won = torch.nonzero(segmented_argmax(scores, torch.cat([g, g3]), key, count, tol))
        won = won.squeeze(1)
        block3 = won >= n
        third_at = torch.cat([third, third.new_zeros(1)])  # (no block 3: an unread 0)
        at = torch.where(block3, third_at.index_select(0, (won - n).clamp(min=0)), won)
        a, c = high.index_select(0, at).double(), low.index_select(0, at).double()
        threshold = torch.where(c.isnan(), INF, midpoints(a, c))  # (c NaN: block 2)
        missing_left = torch.where(
            block3, 1, torch.where(take(has_missing, row.index_select(0, at)), 0, -1)
        ).to(torch.int8)
        chosen = torch.cat([left, third_left], -1).index_select(-1, won)
        return g[at], f[at], threshold, chosen, missing_left

    def scan_grid(
        self, hist, counts, present, total, sizes, ranks, features, rules, criterion, bounds=None
    ):
        """:meth:`best_in_grid` on at most ``MAX_SCAN`` cells at a time, in whole nodes."""
        count, slots, B = present.shape
        step = max(1, MAX_SCAN // (slots * B))
        found = []
        for a in range(0, count, step):
            part = slice(a, a + step)
            g, *split = self.best_in_grid(
                hist[:, part],
                None if counts is None else counts[part],
                present[part],
                total[:, part],
                sizes[part],
                ranks[part],
                None if features is None else features[part],
                rules,
                criterion,
                None if bounds is None else bounds[:, part],
            )
            found.append((g + a, *split))
        return tuple(torch.cat(parts, dim=-1) for parts in zip(*found))

    def best_in_grid(
        self, hist, counts, present, total, sizes, ranks, features, rules, criterion, bounds=None
    ):
        """Each node's best split from its dense histograms: ``(node, feature, threshold, left)``.

        The rules of :meth:`best_in_cells` on the whole (node, slot, bin) grid
        instead of a list of its non-empty cells: a candidate after each
        non-empty bin that has a non-empty bin further on in its row, whose
        smallest value (carried back along the row by a reversed running
        minimum) is more than ``FEATURE_THRESHOLD`` above the bin's largest.
        Where most cells are non-empty (the top of a tree), this saves listing
        them and reading every list entry's row, feature and bin back.
        ``hist`` is ``(n_stats, nodes, slots, B)``, ``counts`` and ``present``
        ``(nodes, slots, B)``; the rest (``bounds`` too) as in :meth:`best_in_cells`.
        """
        p, (count, slots, B) = self.codes.shape[1], present.shape
        device = present.device
        if features is None:
            features = torch.arange(slots, device=device).expand(count, slots)
        drawn = features.reshape(-1)
        high = self.high.index_select(0, drawn).view(count, slots, B)
        low = self.low_known if self.has_nan else self.low  # (a NaN bin: no known value)
        low = torch.where(present, low.index_select(0, drawn).view(count, slots, B), INF)
        # the smallest value of the next non-empty bin of the row (inf: none)
        nxt = torch.cat(
            [low[..., 1:].flip(-1).cummin(-1).values.flip(-1), torch.full_like(low[..., :1], INF)],
            -1,
        )
        searched = (ranks < p)[..., None]  # p: a slot not searched
        allowed = present & (nxt < INF) & distinct(high, nxt) & searched
        left = hist.cumsum(-1).to(total.dtype)
        n_left = counts.cumsum(-1) if rules.min_samples_leaf > 1 else None
        monotonic = grid_monotonic(rules, bounds, features)
        if self.has_nan:
            return self.best_in_grid_missing(
                hist, counts, present, total, sizes, ranks, features, rules, criterion,
                high, nxt, searched, allowed, left, n_left, monotonic,
            )  # fmt: skip
        if n_left is not None:
            allowed &= big_enough(n_left, sizes[:, None, None] - n_left, rules.min_samples_leaf)
        scores = masked_scores(left, total[:, :, None, None], allowed, rules, criterion, monotonic)
        g, at = grid_winners(scores, ranks, tie_tolerance(total, criterion))  # winners in the grid
        threshold = midpoints(take(high, at).double(), take(nxt, at).double())
        f = take(features.contiguous(), at // B)
        return g, f, threshold, left.reshape(len(left), -1).index_select(1, at)

    def best_in_grid_missing(
        self, hist, counts, present, total, sizes, ranks, features, rules, criterion,
        high, nxt, searched, known, left, n_left, monotonic=None,
    ):  # fmt: skip
        """:meth:`best_in_grid` where some feature has NaN: five arrays, ``missing_left`` last.

        Introduced in Chapter 7. The blocks of :meth:`best_in_cells_missing`
        on the grid: block 1 at the known candidates (``known``), block 2 at
        each row's last non-empty known bin (no known bin after it: ``nxt``
        is ``inf``) when the row's NaN bin is non-empty, block 3 (the NaN
        left) a second grid, the row's NaN statistics added to the running
        sums; the tie keys of a row run through both grids. ``monotonic``:
        :func:`grid_monotonic`'s constraints, or None.
        """
        count, slots, B = present.shape
        msl, device = rules.min_samples_leaf, present.device
        nan_bin = self.nan_bin.index_select(0, features.reshape(-1)).view(count, slots, 1)
        at_nan = torch.arange(B, device=device) == nan_bin
        has_missing = (present & at_nan).any(-1, keepdim=True)
        alone = present & ~at_nan & (nxt == INF) & has_missing & searched  # block 2
        nan_at = nan_bin.clamp(max=B - 1)
        missing = hist.gather(-1, nan_at.expand(len(hist), -1, -1, -1)).to(total.dtype)
        missing = torch.where(has_missing, missing, 0)
        left_nan = left + missing  # block 3: the NaN on the left
        allowed, allowed_nan = known | alone, known & has_missing
        if n_left is not None:
            n_missing = torch.where(has_missing, counts.gather(-1, nan_at), 0)
            size = sizes[:, None, None]
            allowed &= big_enough(n_left, size - n_left, msl)
            allowed_nan &= big_enough(n_left + n_missing, size - n_left - n_missing, msl)
        grand = total[:, :, None, None]
        scores = torch.cat([
            masked_scores(left, grand, allowed, rules, criterion, monotonic),
            masked_scores(left_nan, grand, allowed_nan, rules, criterion, monotonic),
        ], -1).view(count, slots * 2 * B)  # fmt: skip
        best = scores.amax(1, keepdim=True)
        tie = is_tie_or_best(scores, best, tie_tolerance(total, criterion)[:, None])
        key = ranks[..., None] * (2 * B) + torch.arange(2 * B, device=device)  # blocks 1-2, 3
        key = torch.where(tie, key.view(count, slots * 2 * B), torch.iinfo(torch.int64).max)
        g = torch.nonzero(best.squeeze(1) > -INF).squeeze(1)  # nodes with a candidate
        won = key.argmin(1).index_select(0, g)  # (slot, block, bin) in the node's row
        row, j = g * slots + won // (2 * B), won % (2 * B)
        block3, at = j >= B, row * B + j % B  # at: the bin in the grid
        a, c = take(high, at).double(), take(nxt, at).double()
        threshold = torch.where(~block3 & (c == INF), INF, midpoints(a, c))  # block 2: inf
        learned = take(has_missing.view(-1), row)
        missing_left = torch.where(block3, 1, torch.where(learned, 0, -1)).to(torch.int8)
        f = take(features.contiguous(), row)
        both = torch.cat([left, left_nan], -1).reshape(len(left), -1)
        return g, f, threshold, both.index_select(1, row * (2 * B) + j), missing_left


def grid_winners(scores, ranks, tol):
    """Each node's winner in a ``(nodes, slots, B)`` grid of scores (Chapter 7).

    The node's best score, and of the candidates that tie with it
    (:func:`treelib.rules.is_tie_or_best`, within ``tol`` per node) the first
    in the node's search order: the lowest slot rank (``ranks``,
    ``(nodes, slots)``), then the lowest bin. Returns the nodes that have a
    candidate and their winners' positions in the flattened grid.
    """
    count, slots, B = scores.shape
    scores = scores.reshape(count, slots * B)
    best = scores.amax(1, keepdim=True)
    tie = is_tie_or_best(scores, best, tol[:, None])
    key = ranks[..., None] * B + torch.arange(B, device=scores.device)  # ties: rank, then bin
    key = torch.where(tie, key.view(count, slots * B), torch.iinfo(torch.int64).max)
    g = torch.nonzero(best.squeeze(1) > -INF).squeeze(1)  # nodes with a candidate
    return g, g * (slots * B) + key.argmin(1).index_select(0, g)


def cell_monotonic(rules, bounds, features, nodes):
    """The monotonic constraints of listed candidates (Chapter 6), or None.

    ``features`` and ``nodes`` are each candidate's feature and node;
    ``bounds`` the nodes' ``(lower, upper)`` (``(2, nodes)``, None: no
    constraint). The ``monotonic`` argument of :func:`treelib.levelwise.masked_scores`.
    """
    if bounds is None:
        return None
    constraint = rules.monotonic.index_select(0, features)
    return constraint, bounds[0].index_select(0, nodes), bounds[1].index_select(0, nodes)


def grid_monotonic(rules, bounds, features):
    """:func:`cell_monotonic` for a ``(nodes, slots, B)`` grid; ``features``: ``(nodes, slots)``."""
    if bounds is None:
        return None
    constraint = rules.monotonic.index_select(0, features.reshape(-1)).view(features.shape)
    return constraint[..., None], bounds[0][:, None, None], bounds[1][:, None, None]
