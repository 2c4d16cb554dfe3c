"""Each fast kernel of treelib.kernels agrees with its reference version (Chapter 7).

The reference versions are plain loops over segments, nodes or features; the
fast ones work on whole levels, in blocks and pieces. Where the fast one only
moves or compares numbers, or adds them in the same order, the two agree bit
for bit; where it adds them in another order (a level-wide running sum minus
the earlier nodes' totals), within the tie tolerance of treelib.rules.
"""

import numpy as np
import pytest
import torch

import treelib.kernels
import treelib.levelwise
from treelib.criteria import node_sums, target_stats
from treelib.hist import HistogramSearch, bin_columns
from treelib.kernels import (
    cumsum_by_tree,
    cumsum_by_tree_reference,
    left_children_reference,
    level_candidates_reference,
    node_histogram_reference,
    regroup_codes,
    regroup_rows,
    regroup_rows_reference,
    segmented_argmax,
    segmented_argmax_reference,
)
from treelib.levelwise import level_candidates, level_candidates_missing
from treelib.rules import StoppingRules, tie_tolerance

SEEDS = range(6)


def random_sizes(generator, m, n_max=6):
    """Node sizes with empty and one-element nodes among them."""
    return torch.randint(0, n_max + 1, (m,), generator=generator)


def random_pairs(g, n):
    """n gradient + i hessian pairs over twelve orders of magnitude (rounding shows)."""
    scale = 10.0 ** torch.randint(-6, 6, (n,), generator=g)
    return torch.complex(
        torch.randn(n, generator=g, dtype=torch.float64) * scale,
        torch.rand(n, generator=g, dtype=torch.float64) * scale,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_segmented_argmax_agrees_with_a_loop_over_segments(seed):
    g = torch.Generator().manual_seed(seed)
    n_segments = 9
    sizes = random_sizes(g, n_segments)  # (empty segments get no winner)
    sizes[0] = 1  # a one-element segment
    segment = torch.repeat_interleave(torch.arange(n_segments), sizes)
    n = len(segment)
    scores = torch.randint(0, 4, (n,), generator=g).double() / 4  # many exact ties
    scores[torch.rand(n, generator=g) < 0.2] = float("-inf")  # not candidates
    scores += torch.rand(n, generator=g, dtype=torch.float64) * 1e-12  # ties within tol only
    tie_key = torch.randperm(n, generator=g)
    for tol in (0.0, 1e-9, torch.rand(n_segments, generator=g, dtype=torch.float64) * 0.3):
        fast = segmented_argmax(scores, segment, tie_key, n_segments, tol)
        reference = segmented_argmax_reference(scores, segment, tie_key, n_segments, tol)
        assert torch.equal(fast, reference)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("with_carry", [False, True])
def test_cumsum_by_tree_agrees_with_a_running_sum(seed, with_carry):
    g = torch.Generator().manual_seed(seed)
    lengths = [int(k) for k in torch.randint(1, 7, (4,), generator=g)]
    values = torch.randn(3, 2, sum(lengths), generator=g, dtype=torch.float64)
    carry = torch.randn(3, 2, 1, generator=g, dtype=torch.float64) if with_carry else None
    for parts in (None, lengths):
        fast = cumsum_by_tree(values, parts, carry)
        assert torch.equal(fast, cumsum_by_tree_reference(values, parts, carry))  # (CPU: in order)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("whole", [True, False])
def test_left_children_of_a_level_agree_with_each_nodes_own_sums(seed, whole):
    """The level's running sum minus the earlier nodes' totals (block_scores) is each node's
    running sum from zero: exactly for whole numbers, within rounding otherwise."""
    g = torch.Generator().manual_seed(seed)
    sizes = random_sizes(g, 7)
    n = int(sizes.sum())
    node = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
    base = torch.randint(0, 5, (3, n), generator=g).double()
    if not whole:
        base = base * torch.rand(3, n, generator=g, dtype=torch.float64) * 1e3
    # each feature's row: the same samples per node, in another order inside each node
    stats = torch.stack(
        [base[:, torch.argsort(node * n + torch.randperm(n, generator=g))] for _ in range(2)], 1
    )
    total = torch.zeros(3, len(sizes), dtype=torch.float64).index_add_(1, node, stats[:, 0])
    earlier = cumsum_by_tree(total) - total  # as level_candidates_missing
    fast = cumsum_by_tree(stats) - earlier[:, None].index_select(2, node)
    reference = left_children_reference(stats, sizes)
    if whole:
        assert torch.equal(fast, reference)
    else:
        # rounding: a few ulps of the level's running sum (n additions of at most its size)
        bound = n * torch.finfo(torch.float64).eps * stats.abs().sum(-1, keepdim=True)
        assert ((fast - reference).abs() <= bound).all()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("piece", [None, 1, 5])
def test_regroup_rows_agrees_with_a_stable_selection_per_child(monkeypatch, seed, piece):
    """Rows sorted by parent node (each row a different order inside each parent) regroup
    by child, each child's elements in their row order, dropped elements left out."""
    if piece is not None:
        monkeypatch.setattr(treelib.kernels, "PIECE", piece)
    g = torch.Generator().manual_seed(seed)
    parents = random_sizes(g, 5)
    n, m = int(parents.sum()), len(parents)
    parent = torch.repeat_interleave(torch.arange(m), parents)
    side = torch.randint(-1, 2, (n,), generator=g)  # -1 dropped (a leaf), 0 left, 1 right
    group_of = torch.where(side >= 0, 2 * parent + side, -1)  # per sample id
    rows = []
    for _ in range(4):  # each feature's row: the samples in parent order, shuffled inside each
        key = parent * n + torch.randperm(n, generator=g)
        rows.append(torch.argsort(key))
    ids = torch.stack(rows)  # (4, n): sample ids
    x = torch.randn(4, n, generator=g)
    group = group_of[ids]
    sizes = torch.bincount(group_of[group_of >= 0], minlength=2 * m)
    right = torch.arange(2 * m) % 2 == 1
    n_kept = int(sizes.sum())

    def codes_of(a, b):
        return regroup_codes(group[:, a:b], sizes, right)

    moved = regroup_rows([ids, x], codes_of, n_kept, n)
    assert torch.equal(moved[0], regroup_rows_reference(ids, group))
    assert torch.equal(moved[1], regroup_rows_reference(x, group))


def level_data(seed, kind, nan, weighted, n=60, p=4):
    g = torch.Generator().manual_seed(seed)
    X = torch.randint(0, 5, (n, p), generator=g).float()  # ties in every feature
    if nan:
        X[torch.rand(n, p, generator=g) < 0.15] = float("nan")
        X[:5, 2] = float("nan")  # (nodes with some NaN, some without)
    w = torch.randint(1, 4, (n,), generator=g).double() if weighted else torch.ones(n)
    if kind == "gini":
        y = torch.randint(0, 3, (n,), generator=g)
        stats = target_stats(y, w, "gini", 3)
    else:
        y = torch.randint(0, 7, (n,), generator=g).double() / 2
        stats = target_stats(y, w, "squared_error")
    node = torch.randint(0, 5, (n,), generator=g)
    node[0] = 5  # a one-sample node
    node_rows = [torch.nonzero(node == t).squeeze(1) for t in range(6)]
    return g, X, stats, node_rows


def level_layout(X, stats, node_rows):
    """The exact search's layout: per feature, each node's samples sorted (stably) by value."""
    xs, sorted_stats = [], []
    for j in range(X.shape[1]):
        order = torch.cat([rows[torch.argsort(X[rows, j], stable=True)] for rows in node_rows])
        xs.append(X[order, j])
        sorted_stats.append(stats[:, order])
    sizes = torch.tensor([len(rows) for rows in node_rows])
    total = torch.stack([node_sums(stats[:, rows]) for rows in node_rows], 1)
    return torch.stack(xs), torch.stack(sorted_stats, 1), sizes, total


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["gini", "squared_error"])
@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("block", [None, 7])
def test_level_candidates_agree_with_best_split_node_by_node(monkeypatch, seed, kind, nan, block):
    if block is not None:
        monkeypatch.setattr(treelib.levelwise, "BLOCK", block)
    g, X, stats, node_rows = level_data(seed, kind, nan, weighted=seed % 2 == 1)
    m, p = len(node_rows), X.shape[1]
    ranks = torch.stack([torch.randperm(p, generator=g) for _ in range(m)])
    ranks[1, ranks[1] == 0] = p  # a feature node 1 does not search
    rules = StoppingRules(min_samples_leaf=1 + seed % 3, min_weight_leaf=float(seed % 2))
    xs, sorted_stats, sizes, total = level_layout(X, stats, node_rows)
    search = level_candidates_missing if nan else level_candidates
    node, f, threshold, left, *missing = search(xs, sorted_stats, sizes, total, ranks, rules, kind)
    node, by_node = torch.sort(node)  # (with NaN: found block by block)
    f, threshold, left = f[by_node], threshold[by_node], left[:, by_node]
    missing = [learned[by_node] for learned in missing]
    found = level_candidates_reference(X, stats, node_rows, ranks, rules, kind)
    assert node.tolist() == [t for t, _, _ in found]
    assert f.tolist() == [split.feature for _, split, _ in found]
    assert threshold.tolist() == [split.threshold for _, split, _ in found]
    reference_left = torch.stack([lf for _, _, lf in found], 1)
    tol = tie_tolerance(total, kind).index_select(0, node)
    assert ((left - reference_left).abs() <= tol).all()
    if nan:  # where the node saw NaN in the feature, the side it learned
        learned = missing[0] >= 0
        sides = torch.tensor([split.missing_left for _, split, _ in found])
        assert torch.equal((missing[0] == 1)[learned], sides[learned])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", ["gini", "squared_error"])
@pytest.mark.parametrize("nan", [False, True])
def test_histograms_agree_with_one_node_at_a_time(seed, kind, nan):
    """HistogramSearch.histograms (one bincount for a batch of nodes) and a node's
    histogram built feature by feature; class counts in int or float32, exact."""
    weighted = seed % 3
    g, X, stats, node_rows = level_data(seed, kind, nan, weighted=weighted == 1)
    if weighted == 2:  # fractional weights (regression: float64 sums, in the same order)
        stats = stats * torch.rand(stats.shape[1], generator=g, dtype=torch.float64)
    bins = bin_columns(X, 3 if seed % 2 else 255)  # (few bins: values share them)
    search = HistogramSearch(X, stats, criterion=kind, bins=bins)
    rows = torch.cat(node_rows)
    local = torch.repeat_interleave(
        torch.arange(len(node_rows)), torch.tensor([len(r) for r in node_rows])
    )
    fast, _ = search.histograms(rows, local, len(node_rows))
    reference = torch.stack(
        [node_histogram_reference(bins.codes, stats, r, search.n_bins) for r in node_rows], 1
    )
    assert torch.equal(fast.double(), reference)


def test_compress_equals_boolean_indexing():
    from treelib.kernels import compress

    generator = torch.Generator().manual_seed(0)
    values = torch.randperm(1000, generator=generator)
    mask = torch.rand(1000, generator=generator) < 0.3
    assert torch.equal(compress(values, mask), values[mask])
    assert torch.equal(compress(values, ~mask), values[~mask])
    assert compress(values[:0], mask[:0]).numel() == 0


# --- Chapter 9's grower (treelib.hist_grower) ------------------------------------------------


@pytest.mark.parametrize("m", [1, 300, 3000])  # numpy's add.at below TINY_NODE, torch above
@pytest.mark.parametrize("count_needed", [True, False])
def test_cell_sums_agree_with_a_loop_over_features(m, count_needed):
    """One scatter over all (sample, feature) cells adds each bin's samples in the
    order of ``rows``, as a scatter per feature does: the same float64 sums, bit for bit
    (the values span twelve orders of magnitude, so another order would round otherwise)."""
    from treelib.kernels import TINY_NODE, cell_sums, cell_sums_reference

    assert 300 < TINY_NODE < 3000
    g = torch.Generator().manual_seed(m)
    n, d, n_bins = 5000, 4, 8
    X_rows = torch.randint(0, n_bins, (n, d), generator=g, dtype=torch.uint8)
    pairs = random_pairs(g, n)
    rows = torch.sort(torch.randperm(n, generator=g)[:m]).values
    sums, counts = cell_sums(X_rows, rows, pairs, n_bins, count_needed)
    ref_sums, ref_counts = cell_sums_reference(X_rows, rows, pairs, n_bins, count_needed)
    assert torch.equal(sums, ref_sums)
    if count_needed:
        assert torch.equal(counts, ref_counts)
        assert int(counts.sum()) == m * d
    else:
        assert counts is None


@pytest.mark.parametrize("all_rows", [True, False])
def test_feature_sums_in_chunks_agree_with_a_loop_over_features(monkeypatch, all_rows):
    """Chunks of samples scattered into the sums of the earlier chunks: each bin adds
    its samples in the same order as one scatter per feature, bit for bit."""
    import treelib.kernels
    from treelib.kernels import cell_sums_reference, feature_sums

    monkeypatch.setattr(treelib.kernels, "CHUNK", 128)  # several chunks, a ragged last one
    g = torch.Generator().manual_seed(5)
    n, d, n_bins = 3000, 3, 16
    X_rows = torch.randint(0, n_bins, (n, d), generator=g, dtype=torch.uint8)
    pairs = random_pairs(g, n)
    rows = torch.arange(n) if all_rows else torch.sort(torch.randperm(n, generator=g)[:1001]).values
    sums, counts = feature_sums(X_rows.T.contiguous(), None if all_rows else rows, pairs, n_bins)
    ref_sums, ref_counts = cell_sums_reference(X_rows, rows, pairs, n_bins)
    assert torch.equal(sums, ref_sums) and torch.equal(counts, ref_counts)
    buffers = {}  # chunk buffers kept from node to node: the same sums
    for node_rows in (rows[:700], rows, rows[:5]):
        sums, counts = feature_sums(X_rows.T.contiguous(), node_rows, pairs, n_bins, True, buffers)
        ref_sums, ref_counts = cell_sums_reference(X_rows, node_rows, pairs, n_bins)
        assert torch.equal(sums, ref_sums) and torch.equal(counts, ref_counts)
    assert buffers["chunk"] == 128


@pytest.mark.parametrize("missing_bin", [None, 255])
def test_bins_left_agrees_with_torch(missing_bin):
    from treelib.kernels import bins_left, bins_left_reference

    g = torch.Generator().manual_seed(1)
    column = torch.randint(0, 256, (2000,), generator=g, dtype=torch.uint8)
    column[::7] = 255  # the missing-values bin
    rows = torch.sort(torch.randperm(2000, generator=g)[:900]).values
    for bin_idx in (0, 17, 254):
        fast = bins_left(column, rows, bin_idx, missing_bin)
        reference = bins_left_reference(column, rows, bin_idx, missing_bin)
        assert fast.dtype == torch.bool and torch.equal(fast, reference)


def test_row_major_copy_is_kept_until_the_data_changes():
    from treelib.kernels import row_major

    feature_major = torch.arange(60, dtype=torch.uint8).view(6, 10)
    X = feature_major.T  # (10, 6), not contiguous
    first = row_major(X)
    assert first.is_contiguous() and torch.equal(first, X)
    assert row_major(X) is first  # kept across trees
    feature_major[2, 3] = 200  # changed in place: a new copy
    second = row_major(X)
    assert second is not first and torch.equal(second, X)
    contiguous = X.contiguous()
    assert row_major(contiguous) is contiguous


def test_complex_pairs_equal_torch_complex():
    from treelib.kernels import complex_pairs

    g = torch.Generator().manual_seed(2)
    real, imag = torch.randn(500, generator=g), torch.rand(500, generator=g)  # float32
    assert torch.equal(complex_pairs(real, imag), torch.complex(real.double(), imag.double()))
    constant = complex_pairs(real, torch.ones(1))
    assert torch.equal(constant.imag, torch.ones(500, dtype=torch.float64))


def test_add_to_groups_agrees_with_index_add():
    from treelib.kernels import add_to_groups, add_to_groups_reference

    g = torch.Generator().manual_seed(3)
    groups = torch.randperm(1000, generator=g).tensor_split([100, 350, 351, 900])
    amounts = torch.randn(len(groups), generator=g, dtype=torch.float64).tolist()
    start = torch.randn(1000, generator=g, dtype=torch.float64)
    fast = add_to_groups(start.clone(), groups, amounts)
    assert torch.equal(fast, add_to_groups_reference(start.clone(), groups, amounts))
    assert torch.equal(fast[groups[2]], start[groups[2]] + amounts[2])


@pytest.mark.parametrize("seed", range(3))
def test_leaf_values_binned_agree_with_the_level_by_level_loop(seed):
    """Rows split node by node (numpy), and walked down one at a time (the compiled
    loop of ``predict_binned``), land in the leaves where the torch loop, one level per
    step, puts them: numeric and categorical splits, NaN bins included."""
    import numpy as np

    from treelib.hist_grower import BinMapper, TreeGrower

    rng = np.random.RandomState(seed)
    n, d = 3000, 4
    X = rng.normal(size=(n, d))
    X[:, 0] = rng.randint(0, 12, n)
    X[rng.rand(n, d) < 0.1] = np.nan
    is_categorical = np.array([1, 0, 0, 0], dtype=np.uint8)
    known = [np.arange(12.0), None, None, None]
    mapper = BinMapper(is_categorical=is_categorical, known_categories=known, random_state=0)
    X_binned = mapper.fit(X).transform(X)
    gradients = torch.from_numpy(rng.normal(size=n).astype(np.float32))
    grower = TreeGrower(
        X_binned, gradients, torch.ones(1), max_leaf_nodes=15, min_samples_leaf=5,
        n_bins_non_missing=mapper.n_bins_non_missing_, has_missing_values=True,
        is_categorical=is_categorical,
    )  # fmt: skip
    grower.grow()
    predictor = grower.make_predictor(mapper.bin_thresholds_)
    assert predictor.nodes["is_categorical"].any() and predictor.get_n_leaf_nodes() == 15
    new = torch.from_numpy(rng.randint(0, 256, size=(500, d)).astype(np.uint8))
    from treelib import compiled
    from treelib.hist_grower import bitset_to_mask
    from treelib.kernels import leaf_values_binned

    assert compiled.available()  # predict_binned runs the compiled walk
    sets = bitset_to_mask(predictor.binned_left_cat_bitsets)
    for data in (X_binned, new):
        reference = predictor._predict_binned_by_level(data, 255)
        assert torch.equal(predictor.predict_binned(data, 255), reference)
        node_by_node = leaf_values_binned(predictor.nodes, sets, data.numpy(), 255)
        assert torch.equal(torch.from_numpy(node_by_node), reference)


def test_row_major_in_inference_mode_copies_without_caching():
    from treelib.kernels import row_major

    with torch.inference_mode():
        X = torch.arange(12, dtype=torch.uint8).view(3, 4).T
        assert torch.equal(row_major(X), X) and row_major(X).is_contiguous()


@pytest.mark.parametrize("l2", [0.0, 0.7])
def test_unbounded_gain_equals_split_gain_bit_for_bit(l2):
    from treelib.hist_grower import split_gain
    from treelib.kernels import unbounded_gain

    rng = np.random.default_rng(3)
    g_l, g_r = rng.normal(size=(2, 4, 50))
    h_l, h_r = rng.uniform(0.01, 5, size=(2, 4, 50))
    loss = -1.25
    expected = split_gain(g_l, h_l, g_r, h_r, loss, 0, -np.inf, np.inf, l2)
    np.testing.assert_array_equal(unbounded_gain(g_l, h_l, g_r, h_r, loss, l2), expected)


@pytest.mark.parametrize("with_counts", [True, False])
def test_histogram_rows_equal_the_torch_rows(with_counts):
    from treelib.kernels import histogram_rows, histogram_rows_reference

    g = torch.Generator().manual_seed(4)
    sums = torch.complex(torch.randn(7, 256, generator=g, dtype=torch.float64),
                         torch.rand(7, 256, generator=g, dtype=torch.float64))  # fmt: skip
    counts = torch.randint(0, 50, (7, 256), generator=g) if with_counts else None
    fast = histogram_rows(sums, counts)
    assert fast.dtype == torch.float64 and fast.shape == (3, 7, 256)
    assert torch.equal(fast, histogram_rows_reference(sums, counts))
    assert torch.equal(fast[0], sums.real) and torch.equal(fast[1], sums.imag)
    assert torch.equal(fast[2], sums.imag if counts is None else counts.double())


@pytest.mark.parametrize("count_needed", [True, False])
def test_gathered_sums_agree_with_a_loop_over_features(count_needed):
    """The (feature, sample) codes of a node scattered row by row: each bin adds its
    samples in the order of ``rows``, bit for bit (values over twelve orders of
    magnitude), for nodes of growing and shrinking sizes sharing one set of buffers."""
    from treelib.kernels import cell_sums_reference, gathered_sums

    g = torch.Generator().manual_seed(5)
    n, d, n_bins = 6000, 4, 8
    X_rows = torch.randint(0, n_bins, (n, d), generator=g, dtype=torch.uint8)
    X_binned_T = X_rows.T.contiguous()
    pairs = random_pairs(g, n)
    buffers = {"capacity": 1000}
    for m in (1, 700, 3000, 20, 3000):  # (3000: the buffers grow once, then are reused)
        rows = torch.sort(torch.randperm(n, generator=g)[:m]).values
        sums, counts = gathered_sums(X_binned_T, rows, pairs, n_bins, count_needed, buffers)
        ref_sums, ref_counts = cell_sums_reference(X_rows, rows, pairs, n_bins, count_needed)
        assert torch.equal(sums, ref_sums)
        assert torch.equal(counts, ref_counts) if count_needed else counts is None
    assert buffers["size"] == 3000
    alone = gathered_sums(X_binned_T, rows, pairs, n_bins, count_needed)  # no buffers
    assert torch.equal(alone[0], sums)


def test_elementwise_in_pieces_equals_one_call():
    """The log-loss and its gradients and hessians, a few samples at a time, equal one
    call on all of them, bit for bit (every branch: raw below -37, above 18 and 33.3)."""
    from treelib.hist_gradient_boosting import HalfBinomialLoss
    from treelib.kernels import elementwise_in_pieces, elementwise_in_pieces_reference

    g = torch.Generator().manual_seed(6)
    n = 1000
    raw = torch.randn(n, generator=g, dtype=torch.float64) * 20
    y = (torch.rand(n, generator=g) < 0.5).double()
    weight = torch.rand(n, generator=g, dtype=torch.float64)
    loss = HalfBinomialLoss()

    def weighted(y, raw, weight):
        gradient, hessian = loss.grad_hess(y, raw)
        return gradient * weight, hessian * weight, loss.pointwise(y, raw)

    def outs():
        f32, f64 = torch.float32, torch.float64
        return torch.empty(n, dtype=f32), torch.empty(n, dtype=f32), torch.empty(n, dtype=f64)

    expected = elementwise_in_pieces_reference(weighted, (y, raw, weight), outs())
    for size in (7, 64, n, 2 * n):
        got = elementwise_in_pieces(weighted, (y, raw, weight), outs(), size)
        assert all(torch.equal(a, b) for a, b in zip(got, expected))
    gradient, hessian, pointwise = weighted(y, raw, weight)
    assert torch.equal(expected[0], gradient.float()) and torch.equal(expected[2], pointwise)
    only_gradient = elementwise_in_pieces(lambda y: (y * 2, y * 3), (y,), (torch.empty_like(y),), 9)
    assert torch.equal(only_gradient[0], y * 2)


def test_bin_counts_are_kept_until_the_data_changes():
    """The counts per (feature, bin) equal a count by hand, are made once per binned data
    (a fit's root histograms), and anew once the data changes in place."""
    from treelib.kernels import bin_counts, bin_counts_reference

    g = torch.Generator().manual_seed(7)
    X = torch.randint(0, 5, (3, 400), generator=g, dtype=torch.uint8).T  # feature-major
    first = bin_counts(X, 8)
    by_hand = torch.tensor([[int((X[:, f] == b).sum()) for b in range(8)] for f in range(3)])
    assert torch.equal(first, by_hand) and torch.equal(first, bin_counts_reference(X, 8))
    assert bin_counts(X, 8) is first  # kept across trees
    assert bin_counts(X, 16).shape == (3, 16)  # (another number of bins: its own counts)
    X[0, 1] = 7  # changed in place: counted anew
    second = bin_counts(X, 8)
    assert second is not first and int(second[1, 7]) == 1
