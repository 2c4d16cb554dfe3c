"""Kernels: the speed tricks of the fast builders, each beside a version written for reading.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). The level-wise builder
(:mod:`treelib.levelwise`) and the histogram search (:mod:`treelib.hist`) say
*what* a level's search does: score every candidate of every node, pick each
node's winner, regroup the samples by child. This module holds *how* they do
it fast: memory bounded by blocks and pieces (``BLOCK``, ``PIECE``), running
sums restarted per tree, segmented arg-max by scatter, regrouping as a merge
coded in int8, float32 histograms when every sum is exact. Each search step
also has a ``*_reference`` version below, a plain loop over nodes or
segments with no blocking, that computes the same thing
(``tests/test_kernels.py`` checks each pair agrees). The split rules are not
here: they live once in :mod:`treelib.rules`.
"""

import bisect
import weakref

import numpy as np
import torch

from .criteria import node_sums
from .rules import goes_left, is_tie_or_best
from .split import best_split

BLOCK = 2**15  # elements per block (of rows, or piece of a row) scored together: bounds memory
PIECE = 2**18  # elements of a sample-long array moved at a time in the level loop: bounds memory


def take(values, index):
    """``values.view(-1)[index]``: ``torch.take`` on a contiguous tensor, through ``index_select``.

    On the CPU ``index_select`` gathers two to five times faster than
    ``torch.take`` or advanced indexing (the same values; out-of-range indices
    raise an error as well).
    """
    return values.reshape(-1).index_select(0, index.reshape(-1)).view(index.shape)


def compress(values, mask):
    """``values[mask]`` for a 1-D tensor: ``torch.masked_select``, on the CPU through numpy.

    Chapter 9's grower splits every node's list of samples in two this way. On
    the CPU numpy's ``compress`` is five to eight times faster than
    ``masked_select`` or boolean indexing (measured on 500,000 rows); the result
    shares no memory with ``values``.
    """
    if values.device.type != "cpu":
        return torch.masked_select(values, mask)
    return torch.from_numpy(values.numpy().compress(mask.numpy()))


_ROW_MAJOR = {}  # (id(tensor), what) -> (weak reference, version, what was made of it)


def row_major(values):
    """``values.contiguous()`` for a 2-D tensor, kept while ``values`` lives unchanged.

    Chapter 9's grower gathers a small node's rows from a row-major copy of the
    binned data, which is feature-major. A boosting fit grows a tree per
    iteration on the same data: the copy is made once (on the CPU through
    numpy, three times faster than torch's) and kept until ``values`` is freed
    or changed in place (its version counter moves).
    """
    if values.is_contiguous() or values.is_inference():  # (no version counter: no cache)
        return values.contiguous()
    return _kept(values, "row_major", _row_major_copy)


def _row_major_copy(values):
    if values.device.type == "cpu":
        return torch.from_numpy(np.ascontiguousarray(values.numpy()))
    return values.contiguous()


def _kept(values, what, make):
    """``make(values)``, made once and kept until ``values`` is freed or changed in place."""
    key = (id(values), what)
    entry = _ROW_MAJOR.get(key)
    if entry is not None and entry[0]() is values and entry[1] == values._version:
        return entry[2]
    made = make(values)
    alive = weakref.ref(values, lambda _: _ROW_MAJOR.pop(key, None))  # freed with values
    _ROW_MAJOR[key] = (alive, values._version, made)
    return made


def bin_counts(X_binned, n_bins):
    """The number of samples in each (feature, bin): int64 (n_features, n_bins).

    Chapter 9's root histograms count every sample, whatever the gradients: a
    boosting fit grows a tree per iteration on the same binned data, so the
    counts are made once and kept, as :func:`row_major` keeps its copy (the
    root's sums of gradients and hessians are new at every tree).
    """
    if X_binned.is_inference():  # (no version counter: no cache)
        return bin_counts_reference(X_binned, n_bins)
    return _kept(X_binned, ("bin_counts", n_bins), lambda v: bin_counts_reference(v, n_bins))


TINY_NODE = 2048  # below this many samples, cell_sums adds in numpy on the CPU


def cell_sums(X_rows, rows, pairs, n_bins, count_needed=True):
    """Chapter 9's histograms of a small node: per (feature, bin), the sum of the
    complex ``pairs`` (``g + i h``) of the samples ``rows``, and their count.

    ``X_rows`` is the binned data, row-major (n_samples, n_features). Returns
    complex128 sums (n_features, n_bins) and int64 counts (``None`` unless
    ``count_needed``). The node's (sample, feature) cells are taken one after
    the other, cell ``(i, f)`` adding into bin ``f * n_bins + code``: each bin
    adds its samples in the order of ``rows``, as a loop over features would
    (:func:`cell_sums_reference`). One scatter for all the features costs less
    than one per feature; below :data:`TINY_NODE` samples on the CPU, numpy's
    ``add.at`` (which adds in index order) costs less than torch's scatter.
    """
    n_features = X_rows.shape[1]
    size = n_features * n_bins
    if X_rows.device.type == "cpu" and len(rows) < TINY_NODE:
        r = rows.numpy()
        flat = np.add(X_rows.numpy().take(r, axis=0), np.arange(0, size, n_bins), dtype=np.intp)
        flat = flat.ravel()
        sums = np.zeros(size, dtype=np.complex128)
        np.add.at(sums, flat, np.repeat(pairs.numpy().take(r), n_features))
        counts = (
            np.bincount(flat, minlength=size).reshape(n_features, n_bins) if count_needed else None
        )
        return torch.from_numpy(sums.reshape(n_features, n_bins)), (
            None if counts is None else torch.from_numpy(counts)
        )
    codes = X_rows.index_select(0, rows).long()  # (m, d)
    codes += torch.arange(0, size, n_bins, device=codes.device)
    flat = codes.view(-1)
    sums = torch.zeros(size, dtype=torch.complex128, device=codes.device)
    sums.scatter_add_(0, flat, pairs.index_select(0, rows)[:, None].expand(codes.shape).reshape(-1))
    counts = torch.bincount(flat, minlength=size).view(n_features, n_bins) if count_needed else None
    return sums.view(n_features, n_bins), counts


def gathered_sums(X_binned_T, rows, pairs, n_bins, count_needed=True, buffers=None):
    """Chapter 9's histograms of a node of a few thousand samples: :func:`cell_sums`
    from the feature-major data, in buffers kept across nodes.

    ``X_binned_T`` is feature-major (n_features, n_samples). The node's codes are
    gathered into one (n_features, m) block, then one scatter along its rows adds
    each sample's pair into its bin of every feature (the pairs are read once per
    feature, not copied per cell), each bin in the order of ``rows``
    (:func:`cell_sums_reference`). The codes and pairs go into ``buffers`` (a dict,
    filled on first use, for nodes of up to ``buffers["capacity"]`` samples): a
    tree's small nodes reuse the same arrays instead of making new ones of varying
    sizes, which the memory allocator would keep, fragmented, from tree to tree.
    """
    n_features, m = X_binned_T.shape[0], len(rows)
    device = X_binned_T.device
    buffers = {} if buffers is None else buffers
    if "codes8" not in buffers or buffers["size"] < m:
        size = max(m, buffers.get("capacity", 0))
        buffers["size"] = size
        buffers["codes8"] = torch.empty(n_features * size, dtype=X_binned_T.dtype, device=device)
        buffers["codes"] = torch.empty(n_features * size, dtype=torch.int64, device=device)
        buffers["pairs"] = torch.empty(size, dtype=pairs.dtype, device=device)
    codes8 = buffers["codes8"][: n_features * m].view(n_features, m)
    if device.type == "cpu":  # (numpy's gather along the rows is faster)
        np.take(X_binned_T.numpy(), rows.numpy(), axis=1, out=codes8.numpy())
    else:
        torch.index_select(X_binned_T, 1, rows, out=codes8)
    codes = buffers["codes"][: n_features * m].view(n_features, m)
    codes.copy_(codes8)
    node_pairs = torch.index_select(pairs, 0, rows, out=buffers["pairs"][:m])
    sums = torch.zeros(n_features, n_bins, dtype=pairs.dtype, device=device)
    sums.scatter_add_(1, codes, node_pairs[None, :].expand(n_features, m))
    if not count_needed:
        return sums, None
    codes += torch.arange(0, n_features * n_bins, n_bins, device=device)[:, None]
    counts = torch.bincount(codes.view(-1), minlength=n_features * n_bins)
    return sums, counts.view(n_features, n_bins)


def bins_left(column, rows, bin_idx, missing_bin=None):
    """``(codes <= bin_idx) | (codes == missing_bin)``, ``codes`` being ``column[rows]``.

    Chapter 9's grower sends a node's samples left or right this way (a numeric
    split; ``missing_bin`` None when NaN goes right). On the CPU through numpy:
    its comparisons of uint8 codes are about ten times faster than torch's, and
    its gather a little faster (:func:`bins_left_reference` is the plain torch).
    """
    if column.device.type != "cpu":
        return bins_left_reference(column, rows, bin_idx, missing_bin)
    codes = column.numpy().take(rows.numpy())
    left = codes <= bin_idx
    if missing_bin is not None:
        left |= codes == missing_bin
    return torch.from_numpy(left)


def complex_pairs(real, imag):
    """``torch.complex(real.double(), imag.double())``; ``imag`` of one element is
    broadcast (Chapter 9's gradient pairs ``g + i h``, constant hessians).

    On the CPU numpy writes both parts straight into the complex array: no
    float64 temporaries, about twice as fast at a million samples.
    """
    if real.device.type != "cpu":
        return torch.complex(real.double(), imag.double().expand(real.shape))
    pairs = np.empty(real.shape, dtype=np.complex128)
    pairs.real = real.detach().numpy()
    pairs.imag = imag.detach().numpy()
    return torch.from_numpy(pairs)


def add_to_groups(values, groups, amounts):
    """``values[groups[k]] += amounts[k]`` for every group ``k``, in place.

    The groups are disjoint (Chapter 9: the leaves of a tree and their samples);
    each element takes one addition, so any order gives the same numbers. On the
    CPU numpy first writes each element's amount into one array, then adds it to
    ``values`` in one pass (:func:`add_to_groups_reference`: one ``index_add_``,
    three times slower at a million samples). Every element must be in a group.
    """
    if values.device.type != "cpu" or sum(len(g) for g in groups) != len(values):
        return add_to_groups_reference(values, groups, amounts)
    per_element = np.empty(values.shape, dtype=values.numpy().dtype)
    for rows, amount in zip(groups, amounts):
        per_element[rows.numpy()] = amount
    out = values.numpy()
    out += per_element
    return values


def histogram_rows(sums, counts):
    """Chapter 9's ``[sum_g, sum_h, count]`` histograms, (3, n_features, n_bins) float64,
    from the complex sums ``g + i h`` and the int64 counts (``None``: the count is
    the hessian row, as with constant hessians).

    On the CPU numpy copies the three rows (a few times faster than torch's
    indexed assignments for arrays this small); :func:`histogram_rows_reference`
    is the torch version.
    """
    if sums.device.type != "cpu":
        return histogram_rows_reference(sums, counts)
    complex_sums = sums.numpy()
    hist = np.empty((3,) + complex_sums.shape, dtype=np.float64)
    hist[0] = complex_sums.real
    hist[1] = complex_sums.imag
    hist[2] = complex_sums.imag if counts is None else counts.numpy()
    return torch.from_numpy(hist)


ELEMENTWISE_PIECE = 2**16  # elements of a sample-long array computed at a time (512 KB of float64)


def elementwise_in_pieces(fn, arrays, outs, size=None):
    """``outs[k][:] = fn(*arrays)[k]``, a piece of ``size`` elements at a time.

    Chapter 9's boosting loop computes each iteration's losses, gradients and
    hessians this way. ``fn`` works element by element, so every element comes
    out as from one call on the whole arrays (:func:`elementwise_in_pieces_reference`);
    but its temporaries are a piece long, of the same sizes at every iteration,
    instead of a dozen sample-long arrays, which the memory allocator would keep,
    fragmented, from one iteration to the next (a fifth of the peak memory of a
    fit on 100,000 rows). ``None`` in ``arrays`` (no sample weights) stays None.
    """
    size = size or ELEMENTWISE_PIECE
    n = len(outs[0])
    for a in range(0, n, size):
        b = min(a + size, n)
        results = fn(*(None if x is None else x[a:b] for x in arrays))
        for out, result in zip(outs, results):
            out[a:b] = result
    return outs


CHUNK = 2**16  # samples of a big node summed at a time: their pairs stay in the cache


def feature_sums(X_binned_T, rows, pairs, n_bins, count_needed=True, buffers=None):
    """Chapter 9's histograms of a big node, feature by feature: complex128 sums
    (n_features, n_bins) of the ``pairs`` of the samples ``rows`` (all when None),
    and int64 counts (``None`` unless ``count_needed``).

    ``X_binned_T`` is feature-major (n_features, n_samples). On the CPU the
    samples come :data:`CHUNK` at a time, each chunk's pairs read by every
    feature while they are in the cache, into buffers made once; each bin still
    adds its samples in the order of ``rows`` (a scatter adds into the sums of
    the earlier chunks), so the sums are those of one scatter per feature. The
    chunk buffers may come in ``buffers`` (a dict, filled on first use), kept
    across a tree's nodes.
    """
    n_features = X_binned_T.shape[0]
    device = X_binned_T.device
    m = X_binned_T.shape[1] if rows is None else len(rows)
    sums = torch.zeros(n_features, n_bins, dtype=torch.complex128, device=device)
    counts = torch.zeros(n_features, n_bins, dtype=torch.int64, device=device)
    step = max(1, min(CHUNK if device.type == "cpu" else m, m))
    buffers = {} if buffers is None else buffers
    if buffers.get("chunk", 0) < step:
        buffers["chunk"] = step
        buffers["chunk_codes8"] = torch.empty(step, dtype=X_binned_T.dtype, device=device)
        buffers["chunk_codes"] = torch.empty(step, dtype=torch.int64, device=device)
        buffers["chunk_pairs"] = torch.empty(step, dtype=pairs.dtype, device=device)
    codes8, codes = buffers["chunk_codes8"], buffers["chunk_codes"]
    for a in range(0, m, step):
        b = min(a + step, m)
        if rows is None:
            chunk_pairs = pairs[a:b]
        else:
            chunk_rows = rows[a:b]
            chunk_pairs = torch.index_select(pairs, 0, chunk_rows,
                                             out=buffers["chunk_pairs"][: b - a])  # fmt: skip
        for f in range(n_features):
            if rows is None:
                c8 = X_binned_T[f, a:b]
            else:
                c8 = torch.index_select(X_binned_T[f], 0, chunk_rows, out=codes8[: b - a])
            c = codes[: b - a].copy_(c8)
            sums[f].scatter_add_(0, c, chunk_pairs)
            if count_needed:
                counts[f] += torch.bincount(c8, minlength=n_bins)
    return sums, (counts if count_needed else None)


def leaf_values_binned(nodes, binned_sets, X_binned, missing_values_bin_idx):
    """Chapter 9's ``TreePredictor.predict_binned`` on the CPU: each row's leaf value.

    ``nodes`` is the predictor's structured array, ``binned_sets`` its categorical
    bitsets as a bool array (n_categorical_splits, 256), ``X_binned`` a numpy
    uint8 array. Instead of moving every row one level down per step (the torch
    loop of ``predict_binned``, depth steps over all rows), the rows are split node
    by node, as in training: each row is compared once per node on its path, in
    a few numpy steps per node. Leaf values are copied, not computed.
    """
    n = X_binned.shape[0]
    out = np.empty(n, dtype=np.float64)
    feature, bin_threshold = nodes["feature_idx"], nodes["bin_threshold"]
    missing_left, categorical = nodes["missing_go_to_left"], nodes["is_categorical"]
    left_child, right_child = nodes["left"], nodes["right"]
    stack = [(0, np.arange(n))]
    while stack:
        node, rows = stack.pop()
        if nodes["is_leaf"][node]:
            out[rows] = nodes["value"][node]
            continue
        codes = X_binned[:, feature[node]].take(rows)
        if categorical[node]:
            left = binned_sets[nodes["bitset_idx"][node]][codes]
            left[codes == missing_values_bin_idx] = missing_left[node]  # (NaN's side first)
        else:
            left = codes <= bin_threshold[node]
            if missing_left[node]:
                left |= codes == missing_values_bin_idx
        stack.append((right_child[node], rows[~left]))
        stack.append((left_child[node], rows[left]))
    return out


def columns(values, index):
    """``values.index_select(-1, index)`` for a vector or a few rows (class counts, moments).

    On the CPU a gather from each contiguous row, one row at a time, is about
    a third faster than one gather along the last axis of the 2-D tensor.
    """
    if values.dim() == 1 or values.device.type != "cpu":
        return values.index_select(-1, index)
    out = values.new_empty(len(values), len(index))
    for row, into in zip(values, out):  # (each gathered straight into its row: no copy)
        torch.index_select(row, 0, index, out=into)
    return out


def segment_starts(sizes):
    """Offset of each node's segment in an array grouped by node."""
    return torch.cumsum(sizes, 0) - sizes


def group_offsets(sizes, right):
    """Per group: where it starts, minus the samples of its side in earlier groups."""
    side_start = torch.where(right, segment_starts(sizes * right), segment_starts(sizes * ~right))
    return segment_starts(sizes) - side_start


def regroup_codes(group, sizes, right, offsets=None):
    """Per sample, what regrouping does with it: ``(code, base)``.

    ``group`` is each sample's new group (``-1``: dropped), ``sizes`` each
    group's size, ``right`` whether the group is a right child. ``code`` is 0
    (left child), 1 (right child) or 2 (dropped); ``base`` is where the sample's
    group starts, minus the samples of the same side in earlier groups
    (:func:`group_offsets`, which may be passed as ``offsets``).
    """
    g = group.clamp(min=0)
    code = torch.where(group >= 0, take(right, g).to(torch.int8), 2)
    offsets = group_offsets(sizes, right) if offsets is None else offsets
    return code, take(offsets, g)


def group_codes(group, ids, sizes, right):
    """``codes_of(a, b)``: the :func:`regroup_codes` of the samples ``ids[a:b]``.

    ``sizes`` holds each group's number of samples (the level loop counted
    them); the per-group offsets are computed once for all pieces.
    """
    offsets = group_offsets(sizes, right)

    def codes_of(a, b):
        return regroup_codes(group.index_select(0, ids[a:b]), sizes, right, offsets)

    return codes_of


def pieces(n):
    """``(a, b)`` bounds of consecutive pieces of ``PIECE`` elements covering ``0:n``."""
    return [(a, min(a + PIECE, n)) for a in range(0, n, PIECE)]


def regroup_positions(code, base, n_kept, before=None):
    """Where each element goes when every row is sorted by group, stably.

    ``code`` and ``base`` come from :func:`regroup_codes`, one per element.
    Each row is sorted by parent node, so along a row the left children's
    groups never decrease, nor do the right children's: the sort is a merge of
    the two. An element's place is its group's start (``base`` plus the
    elements of its side in earlier groups) plus its rank in its group, which
    is its rank among the elements of its side, counted along the row.
    Dropped elements go to position ``n_kept``. The row may come a piece at a
    time: ``before`` holds the left and the right elements of its earlier
    pieces (``None``: none). Returns the positions and those counts after
    this piece.
    """
    on_right = code == 1
    left, right = (code == 0).cumsum(-1), on_right.cumsum(-1)  # rank + 1 on each side
    if before is not None:
        left += before[0]
        right += before[1]
    after = (left[..., -1:].clone(), right[..., -1:].clone())
    rank = torch.where(on_right, right, left)
    rank += base - 1
    return rank.masked_fill_(code == 2, n_kept), after


def regroup_rows(values, codes_of, n_kept, n):
    """Move ``values`` (arrays of ``n`` elements on the last axis) to their regrouped places.

    ``codes_of(a, b)`` gives the ``(code, base)`` of elements ``a:b``
    (:func:`regroup_codes`). The positions are computed and applied a piece
    of ``PIECE`` elements at a time, so the temporaries stay small; each
    array gets a new one of ``n_kept`` elements.
    """
    outs = [v.new_empty(v.shape[:-1] + (n_kept + 1,)) for v in values]
    before = None
    for a, b in pieces(n):
        code, base = codes_of(a, b)
        positions, before = regroup_positions(code, base, n_kept, before)
        for out, v in zip(outs, values):
            out.scatter_(-1, positions.expand(v.shape[:-1] + (b - a,)), v[..., a:b])
    return [out[..., :n_kept] for out in outs]


def cumsum_by_tree(values, lengths=None, carry=None):
    """Cumulative sum along the last axis, restarted where each tree's part begins.

    ``lengths`` lists the parts' lengths (``None``: one part). A forest grown
    batched (:mod:`treelib.batched`) sums each tree's samples from zero, as the
    tree grown alone does, so both round alike. ``carry`` (last axis of length
    1) continues the first part's sum from a running sum of earlier positions:
    the same additions, in the same order, as one sum over both.
    """
    if carry is not None:
        lengths = None if lengths is None else [lengths[0] + 1] + lengths[1:]
        return cumsum_by_tree(torch.cat([carry, values], -1), lengths)[..., 1:]
    if lengths is None:
        return values.cumsum(-1)
    return torch.cat([part.cumsum(-1) for part in values.split(lengths, -1)], -1)


def piece_parts(tree_starts, a, b):
    """Positions ``a:b`` of a row: ``(lengths of its trees' parts, does it go on a part?)``.

    ``tree_starts`` lists where each tree's samples start (``[0]``: one tree);
    the lengths are ``None`` when the piece lies inside one tree. The piece
    goes on a part when ``a`` is not a tree's start: its sums continue a carry.
    """
    cuts = [a] + [s for s in tree_starts if a < s < b] + [b]
    lengths = [hi - lo for lo, hi in zip(cuts, cuts[1:])]
    return (None if len(lengths) == 1 else lengths), a not in tree_starts


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
    ties (:func:`treelib.rules.is_tie_or_best`). Returns a bool mask with at
    most one True per segment; segments whose scores are all ``-inf`` get none.
    """
    best = torch.full((n_segments,), float("-inf"), dtype=scores.dtype, device=scores.device)
    best.scatter_reduce_(0, segment, scores, "amax")
    tol = tol.index_select(0, segment) if torch.is_tensor(tol) else tol
    is_best = is_tie_or_best(scores, best.index_select(0, segment), tol)
    key = torch.where(is_best, tie_key, torch.iinfo(torch.int64).max)
    best_key = torch.full((n_segments,), torch.iinfo(torch.int64).max, device=scores.device)
    best_key.scatter_reduce_(0, segment, key, "amin")
    return is_best & (key == best_key.index_select(0, segment))


def whole_sums(values, below=2**53):
    """Are all sums of ``values`` exact (whole numbers, in all below ``below``)?

    Introduced in Chapter 7. float64 holds every whole number below ``2**53``
    (float32: below ``2**24``), so such sums come out the same in any order:
    a child's statistics are the left (or right) sums of its parent's split,
    and :func:`grow_levels` need not add its samples up again. Unit weights
    and a forest's bootstrap counts give whole class counts.
    """
    return bool((values == values.round()).all()) and float(values.abs().sum()) < below


def nodes_within(starts, first, limit, n):
    """End of the run of nodes from ``first`` holding at most ``limit`` items (one node at least).

    ``starts[t]`` is where node ``t``'s items start (``n + 1`` entries, increasing).
    """
    end = bisect.bisect_right(starts, starts[first] + limit) - 1
    return max(first + 1, min(end, n))


def float32_is_exact(weight):
    """Are all sums of ``weight`` exact in float32 (whole numbers, in all below ``2**24``)?

    Introduced in Chapter 7. A classification forest's bootstrap counts (times
    whole sample weights, if any) are, below that total per batch of trees: the
    histograms then count the class weights in float32, and every cell, row
    and node sum is the number float64 would give. (Running sums along a list
    of cells, which span many nodes, are taken in float64.)
    """
    return whole_sums(weight, below=2**24)


def first_last_bins_listed(cell, row, n_rows, n_bins):
    """First and last non-empty bin of each of ``n_rows`` (node, slot) rows, from listed cells.

    ``cell`` and ``row`` list the non-empty cells (:meth:`HistogramSearch.sparse_cells`).
    """
    b = cell & (n_bins - 1)  # (n_bins: a power of two)
    first = torch.full((n_rows,), n_bins - 1, device=cell.device)
    last = torch.zeros(n_rows, dtype=b.dtype, device=cell.device)
    return first.scatter_reduce_(0, row, b, "amin"), last.scatter_reduce_(0, row, b, "amax")


def first_last_bins_grid(present):
    """First and last non-empty bin of each (node, slot) row of dense histograms, flattened."""
    B = present.shape[-1]
    rows = present.view(-1, B).to(torch.uint8)
    return rows.argmax(1), B - 1 - rows.flip(1).argmax(1)


# --- reference versions, written for reading ------------------------------------------------
#
# Each computes what its fast twin computes, with plain loops over segments,
# nodes or features: no blocks, no pieces, no int8 codes. They are slow; the
# builders never call them. tests/test_kernels.py checks each pair agrees.


def cell_sums_reference(X_rows, rows, pairs, n_bins, count_needed=True):
    """:func:`cell_sums`, one feature at a time: each feature's codes of the node's
    samples, and one scatter of their ``pairs`` into that feature's bins."""
    n_features = X_rows.shape[1]
    sums = torch.zeros(n_features, n_bins, dtype=torch.complex128, device=X_rows.device)
    counts = torch.zeros(n_features, n_bins, dtype=torch.int64, device=X_rows.device)
    node_pairs = pairs[rows]
    for f in range(n_features):
        codes = X_rows[rows, f].long()
        sums[f].scatter_add_(0, codes, node_pairs)
        counts[f].scatter_add_(0, codes, torch.ones_like(codes))
    return sums, (counts if count_needed else None)


def histogram_rows_reference(sums, counts):
    """:func:`histogram_rows` in torch: the real parts, the imaginary parts, the counts."""
    hist = torch.empty((3,) + sums.shape, dtype=torch.float64, device=sums.device)
    hist[0] = sums.real
    hist[1] = sums.imag
    hist[2] = sums.imag if counts is None else counts
    return hist


def elementwise_in_pieces_reference(fn, arrays, outs):
    """:func:`elementwise_in_pieces` in one call on the whole arrays."""
    for out, result in zip(outs, fn(*arrays)):
        out[:] = result
    return outs


def bin_counts_reference(X_binned, n_bins):
    """:func:`bin_counts` made anew: one ``bincount`` per feature."""
    return torch.stack([torch.bincount(column, minlength=n_bins) for column in X_binned.T])


def bins_left_reference(column, rows, bin_idx, missing_bin=None):
    """:func:`bins_left` in torch: the node's codes, compared with the split's bin."""
    codes = column.index_select(0, rows)
    left = codes <= bin_idx
    if missing_bin is not None:
        left |= codes == missing_bin
    return left


def add_to_groups_reference(values, groups, amounts):
    """:func:`add_to_groups` as one ``index_add_``: each group's rows, its amount repeated."""
    rows = torch.cat(list(groups))
    per_row = torch.tensor(list(amounts), dtype=values.dtype, device=values.device)
    sizes = torch.tensor([len(g) for g in groups], device=values.device)
    values.index_add_(0, rows.to(values.device), per_row.repeat_interleave(sizes))
    return values


def segmented_argmax_reference(scores, segment, tie_key, n_segments, tol=0.0):
    """:func:`segmented_argmax`, one segment at a time.

    In each segment: its best score, the positions that tie with it
    (:func:`treelib.rules.is_tie_or_best`), and of those the lowest ``tie_key``.
    """
    won = torch.zeros(len(scores), dtype=torch.bool, device=scores.device)
    for s in range(n_segments):
        at = torch.nonzero(segment == s).squeeze(1)  # the segment's positions
        if len(at) == 0:
            continue
        tol_s = tol[s] if torch.is_tensor(tol) else tol
        tie = is_tie_or_best(scores[at], scores[at].max(), tol_s)
        if tie.any():
            won[at[tie][tie_key[at[tie]].argmin()]] = True
    return won


def cumsum_by_tree_reference(values, lengths=None, carry=None):
    """:func:`cumsum_by_tree`: a running sum, one position after another, restarted per part.

    ``carry`` (the running sum of earlier positions) starts the first part.
    """
    n = values.shape[-1]
    starts = {0}
    for end in torch.tensor(lengths or [n]).cumsum(0).tolist():
        starts.add(end)
    out, running = torch.empty_like(values), None
    for i in range(n):
        if i in starts:  # a new part: start from zero (the first part: from the carry)
            running = carry[..., 0] if (i == 0 and carry is not None) else 0
        running = running + values[..., i]
        out[..., i] = running
    return out


def left_children_reference(sorted_stats, sizes):
    """The left child of every candidate of every node: each node's own running sum.

    Mirrors the segmented cumulative sum of :func:`treelib.levelwise.block_scores`
    and :func:`treelib.levelwise.level_candidates_missing`: one running sum
    along the whole level (:func:`cumsum_by_tree`), minus the totals of the
    nodes before. Here each node's segment is summed from zero on its own:
    the same sums, added in another order (they agree up to rounding, exactly
    for whole numbers).
    """
    parts = sorted_stats.split(sizes.tolist(), -1)  # one segment per node
    return torch.cat([part.cumsum(-1) for part in parts], -1)


def regroup_rows_reference(values, group):
    """:func:`regroup_rows` by a per-node stable selection: each group's elements, in order.

    ``values`` holds rows of ``n`` elements (last axis), ``group`` each
    element's new group per row (``-1``: dropped). The elements of group 0
    come first, then those of group 1, and so on, each group's in the order
    they had in the row (so each child stays sorted by value).
    """
    n_groups = int(group.max()) + 1
    out = []
    for v, g in zip(values.reshape(-1, values.shape[-1]), group.reshape(-1, group.shape[-1])):
        out.append(torch.cat([v[g == k] for k in range(n_groups)]))
    return torch.stack(out).view(values.shape[:-1] + (-1,))


def node_histogram_reference(codes, stats, rows, n_bins):
    """One node's histograms, ``(n_stats, p, n_bins)``: the statistics of each (feature, bin).

    Mirrors :meth:`treelib.hist.HistogramSearch.histograms`, which counts
    every (node, feature, bin) cell of a batch of nodes with one ``bincount``
    (class weights as int or float32 counts where that is exact, a chunk of
    samples at a time). Here: one feature at a time, the statistics of the
    node's ``rows`` added into the bins ``codes[rows, feature]``.
    """
    p = codes.shape[1]
    hist = stats.new_zeros(stats.shape[0], p, n_bins)
    for j in range(p):
        hist[:, j].index_add_(1, codes[rows, j].long(), stats[:, rows])
    return hist


def level_candidates_reference(X, stats, node_rows, ranks, rules, criterion):
    """The best split of every node of a level: :func:`treelib.split.best_split`, node by node.

    Mirrors :func:`treelib.levelwise.level_candidates` (and, with NaN in
    ``X``, :func:`treelib.levelwise.level_candidates_missing`), which score
    every candidate of every node at once. ``node_rows`` lists each node's
    samples; ``ranks[t, j]`` is feature ``j``'s place in node ``t``'s search
    order (``p``: not searched). Returns ``(node, split, left)`` for each node
    that found a split: its :class:`treelib.split.Split` and the statistics of
    its left child.
    """
    found = []
    for t, rows in enumerate(node_rows):
        features = [f for f in torch.argsort(ranks[t]).tolist() if ranks[t, f] < X.shape[1]]
        split = best_split(
            X[rows], stats[:, rows], criterion, features=features,
            min_samples_leaf=rules.min_samples_leaf, min_weight_leaf=rules.min_weight_leaf,
        )  # fmt: skip
        if split is not None:
            left = goes_left(X[rows, split.feature], split.threshold, False, split.missing_left)
            found.append((t, split, node_sums(stats[:, rows][:, left])))
    return found


def unbounded_gain(g_l, h_l, g_r, h_r, loss_current_node, l2_regularization):
    """Chapter 9's :func:`treelib.hist_grower.split_gain` without bounds nor constraints,
    in fewer numpy steps (the split scans of the histogram grower).

    The same floating-point operations: ``G * (-G / x)`` is ``-(G * (G / x))``
    exactly (a negation only flips the sign bit), and ``loss - (-q)`` is
    ``loss + q``; ``H + 0.0`` is ``H``, so a zero ``l2_regularization`` is skipped.
    """
    gain = None
    for g, h in ((g_l, h_l), (g_r, h_r)):
        if l2_regularization:
            q = np.add(h, l2_regularization)
            q += 1e-15
        else:
            q = np.add(h, 1e-15)
        np.divide(g, q, out=q)
        q *= g
        if gain is None:
            gain = np.add(loss_current_node, q, out=q)
        else:
            gain += q
    return gain
