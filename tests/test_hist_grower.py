"""Chapter 9's engine (treelib.hist_grower) against scikit-learn's private one.

For the same binned data, float32 gradients and hessians, the grower must grow
scikit-learn 1.9.1's tree: the same nodes in the same order (feature, bin and
numeric threshold, NaN side, children, counts, depth), and the same values and
gains. scikit-learn's ``_BinMapper``, ``TreeGrower`` and ``TreePredictor`` are
the reference; they are private, and these tests pin the version they were read
from (requirements.txt).
"""

import numpy as np
import pytest
import torch
from sklearn.ensemble._hist_gradient_boosting.binning import _BinMapper
from sklearn.ensemble._hist_gradient_boosting.grower import TreeGrower as SkTreeGrower

from treelib.hist_grower import (
    SMALL_NODE,
    BinMapper,
    TreeGrower,
    compute_node_value,
    node_histograms,
    split_gain,
)

STRUCTURE = (
    "count",
    "feature_idx",
    "num_threshold",
    "missing_go_to_left",
    "left",
    "right",
    "depth",
    "is_leaf",
    "bin_threshold",
    "is_categorical",
)
CASES = {
    "plain": {},
    "nan": {"nan": True},
    "constant-hessian": {"constant_hessian": True},
    "monotonic": {"monotonic": True},
    "monotonic-nan": {"monotonic": True, "nan": True},
    "interaction": {"interaction": True},
    "categorical": {"categorical": True},
    "categorical-nan": {"categorical": True, "nan": True},
    "l2": {"l2": 1.0},
    "max-depth": {"max_depth": 3, "max_leaf_nodes": None},
    "feature-fraction": {"feature_fraction": 0.5},
}


def data(seed, n, d, nan, categorical):
    """Tie-free continuous features from a seeded normal (and one categorical)."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    if nan:
        X[rng.rand(n, d) < 0.1] = np.nan
    is_categorical = known = None
    if categorical:
        X[:, 0] = rng.randint(0, 12, n).astype(float)
        if nan:
            X[rng.rand(n) < 0.1, 0] = np.nan
        is_categorical = np.zeros(d, dtype=bool)
        is_categorical[0] = True
        known = [np.unique(X[~np.isnan(X[:, 0]), 0])] + [None] * (d - 1)
    return rng, X, is_categorical, known


def grow_both(seed, n=1000, d=5, nan=False, constant_hessian=False, monotonic=False,
              interaction=False, categorical=False, l2=0.0, max_leaf_nodes=31,
              max_depth=None, feature_fraction=1.0):  # fmt: skip
    rng, X, is_categorical, known = data(seed, n, d, nan, categorical)
    options = {"is_categorical": is_categorical, "known_categories": known, "random_state": 0}
    sk_bins = _BinMapper(n_bins=256, n_threads=1, **options).fit(X)
    bins = BinMapper(n_bins=256, **options).fit(X)
    X_binned = sk_bins.transform(X)
    assert np.array_equal(bins.transform(X).numpy(), X_binned)
    g = rng.normal(size=n).astype(np.float32)
    h = np.ones(1, np.float32) if constant_hessian else rng.uniform(0.1, 1, n).astype(np.float32)
    monotonic_cst = None
    if monotonic:
        monotonic_cst = np.zeros(d, np.int8)
        monotonic_cst[1], monotonic_cst[2] = 1, -1
    settings = {
        "max_leaf_nodes": max_leaf_nodes,
        "max_depth": max_depth,
        "min_samples_leaf": 20,
        "n_bins": 256,
        "n_bins_non_missing": sk_bins.n_bins_non_missing_,
        "has_missing_values": np.isnan(X).any(0),
        "is_categorical": is_categorical,
        "monotonic_cst": monotonic_cst,
        "interaction_cst": [{0, 1}, {1, 2, 3}] if interaction else None,
        "l2_regularization": l2,
        "feature_fraction_per_split": feature_fraction,
        "shrinkage": 0.1,
    }
    theirs = SkTreeGrower(X_binned, g, h, rng=np.random.default_rng(seed), n_threads=1, **settings)
    theirs.grow()
    ours = TreeGrower(torch.from_numpy(np.ascontiguousarray(X_binned)), torch.from_numpy(g),
                      torch.from_numpy(h), rng=np.random.default_rng(seed), **settings)  # fmt: skip
    ours.grow()
    return X, X_binned, sk_bins, theirs, ours


@pytest.mark.parametrize("case", list(CASES))
def test_grower_grows_scikit_learns_tree(case):
    for seed in range(20):
        X, X_binned, sk_bins, theirs, ours = grow_both(seed, **CASES[case])
        expected = theirs.make_predictor(sk_bins.bin_thresholds_)
        got = ours.make_predictor(sk_bins.bin_thresholds_)
        assert len(got.nodes) == len(expected.nodes), (case, seed)
        assert len(expected.nodes) > 3
        for field in STRUCTURE:
            assert np.array_equal(got.nodes[field], expected.nodes[field]), (case, seed, field)
        np.testing.assert_allclose(got.nodes["value"], expected.nodes["value"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            got.nodes["gain"], expected.nodes["gain"], rtol=1e-12, atol=1e-12
        )
        np.testing.assert_array_equal(got.raw_left_cat_bitsets, expected.raw_left_cat_bitsets)
        known, f_idx_map = sk_bins.make_known_categories_bitsets()
        np.testing.assert_allclose(
            got.predict(torch.from_numpy(X), known, f_idx_map).numpy(),
            expected.predict(X, known, f_idx_map, 1),
            rtol=0,
            atol=1e-12,
        )
        binned = torch.from_numpy(np.ascontiguousarray(X_binned))
        by_bins = expected.predict_binned(X_binned, 255, 1)
        np.testing.assert_allclose(got.predict_binned(binned, 255).numpy(), by_bins, atol=1e-12)
        # the grower's own record of each sample's leaf gives the same predictions
        raw = ours.add_to_raw_predictions(torch.zeros(len(X), dtype=torch.float64))
        np.testing.assert_allclose(raw.numpy(), by_bins, rtol=0, atol=1e-12)


def test_bins_equal_scikit_learns_with_subsample_and_weights():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 3))
    X[:, 1] = rng.randint(0, 40, 3000)  # fewer distinct values than bins: midpoints
    X[rng.rand(3000) < 0.05, 2] = np.nan
    weight = rng.uniform(0, 2, 3000)
    for kwargs in ({}, {"subsample": 1000}):
        for w in (None, weight):
            theirs = _BinMapper(n_bins=64, random_state=3, n_threads=1, **kwargs).fit(
                X, sample_weight=w
            )
            ours = BinMapper(n_bins=64, random_state=3, **kwargs).fit(X, sample_weight=w)
            for a, b in zip(theirs.bin_thresholds_, ours.bin_thresholds_):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(theirs.n_bins_non_missing_, ours.n_bins_non_missing_)
            np.testing.assert_array_equal(theirs.transform(X), ours.transform(X).numpy())


def test_node_histograms_by_hand():
    # 4 samples, 2 features, 4 bins; sums worked by hand
    X_binned = torch.tensor([[0, 3], [1, 3], [1, 0], [3, 2]], dtype=torch.uint8)
    g = torch.tensor([1.0, 2.0, -4.0, 0.5])
    h = torch.tensor([0.25, 0.5, 1.0, 2.0])
    hist = node_histograms(X_binned, None, g, h, 4)
    assert hist[0, 0].tolist() == [1.0, -2.0, 0.0, 0.5]
    assert hist[1, 0].tolist() == [0.25, 1.5, 0.0, 2.0]
    assert hist[2, 0].tolist() == [1.0, 2.0, 0.0, 1.0]
    assert hist[0, 1].tolist() == [-4.0, 0.0, 0.5, 3.0]
    rows = torch.tensor([1, 3])
    part = node_histograms(X_binned, rows, g, h, 4)
    assert part[0, 0].tolist() == [0.0, 2.0, 0.0, 0.5]
    assert part[2, 1].tolist() == [0.0, 0.0, 1.0, 1.0]
    constant = node_histograms(X_binned, rows, g, torch.tensor([1.0]), 4)
    assert torch.equal(constant[1], constant[2])


def test_sibling_subtraction_equals_the_brute_force_histogram():
    rng = np.random.RandomState(1)
    X_binned = torch.from_numpy(rng.randint(0, 255, (5000, 4)).astype(np.uint8))
    g = torch.from_numpy(rng.normal(size=5000).astype(np.float32))
    h = torch.from_numpy(rng.uniform(0.1, 1, 5000).astype(np.float32))
    parent = node_histograms(X_binned, None, g, h, 256)
    left = torch.from_numpy(np.flatnonzero(rng.rand(5000) < 0.3))
    right = torch.from_numpy(np.setdiff1d(np.arange(5000), left.numpy()))
    brute = node_histograms(X_binned, right, g, h, 256)
    subtracted = parent - node_histograms(X_binned, left, g, h, 256)
    torch.testing.assert_close(subtracted, brute, rtol=0, atol=1e-10)
    assert torch.equal(subtracted[2], brute[2])  # counts are exact


def test_gain_and_value_by_hand():
    # G_L = -6, H_L = 2, G_R = 4, H_R = 3, lambda = 1: gain = 36/3 + 16/4 - 4/6
    parent_value = compute_node_value(-2.0, 5.0, -np.inf, np.inf, 1.0)
    assert parent_value == pytest.approx(2.0 / 6.0)
    gain = split_gain(-6.0, 2.0, 4.0, 3.0, -2.0 * parent_value, 0, -np.inf, np.inf, 1.0)
    assert gain == pytest.approx(12.0 + 4.0 - 4.0 / 6.0)
    # values: left 2, right -1; an increasing constraint forbids it, a decreasing one allows it
    assert split_gain(-6.0, 2.0, 4.0, 3.0, 0.0, 1, -np.inf, np.inf, 1.0) == -1
    assert split_gain(-6.0, 2.0, 4.0, 3.0, 0.0, -1, -np.inf, np.inf, 1.0) > 0
    assert compute_node_value(-6.0, 2.0, -0.5, 0.5, 1.0) == 0.5  # clipped to the bound


@pytest.mark.parametrize("seed", range(5))
def test_missing_bin_at_a_categorical_split_goes_to_nans_side(seed):
    """A categorical feature without NaN in training: at predict time its missing-values
    bin follows the split's ``missing_go_to_left`` (the bigger child), as in
    scikit-learn, not the categories' bitset (which never holds that bin then)."""
    rng = np.random.RandomState(seed)
    n = 2000
    X = rng.normal(size=(n, 3))
    X[:, 0] = rng.randint(0, 12, n)
    is_categorical = np.array([1, 0, 0], dtype=np.uint8)
    known = [np.arange(12.0), None, None]
    sk_bins = _BinMapper(is_categorical=is_categorical, known_categories=known, random_state=0)
    X_binned = sk_bins.fit(X).transform(X)
    g = rng.permutation(12)[X[:, 0].astype(int)] - 6 + rng.normal(size=n) * 0.1
    g = g.astype(np.float32)
    h = np.ones(1, dtype=np.float32)
    settings = dict(max_leaf_nodes=8, n_bins_non_missing=sk_bins.n_bins_non_missing_,
                    has_missing_values=False, is_categorical=is_categorical)  # fmt: skip
    theirs = SkTreeGrower(X_binned, g, h, **settings)
    theirs.grow()
    ours = TreeGrower(torch.from_numpy(np.ascontiguousarray(X_binned)), torch.from_numpy(g),
                      torch.from_numpy(h), **settings)  # fmt: skip
    ours.grow()
    expected = theirs.make_predictor(sk_bins.bin_thresholds_)
    got = ours.make_predictor(sk_bins.bin_thresholds_)
    assert got.nodes["is_categorical"].any()
    new = np.ascontiguousarray(X_binned[:300])
    new[::2, 0] = 255  # the missing-values bin, unseen in training
    want = expected.predict_binned(new, 255, 1)
    assert np.array_equal(got.predict_binned(torch.from_numpy(new), 255).numpy(), want)
    by_level = got._predict_binned_by_level(torch.from_numpy(new), 255)
    assert np.array_equal(by_level.numpy(), want)


def test_only_the_leaves_keep_their_samples():
    """A split node lets go of its sample indices (a boosting fit's memory); the leaves
    keep theirs, which together hold every sample once (the training predictions).
    No node keeps its histograms, nor the grower its buffers, once the tree is grown."""
    X, X_binned, sk_bins, theirs, ours = grow_both(0, n=20000)
    assert ours._buffers == {"capacity": SMALL_NODE}
    nodes, leaves = [ours.root], []
    while nodes:
        node = nodes.pop()
        assert node.histograms is None
        if node.is_leaf:
            leaves.append(node)
        else:
            assert node.sample_indices is None
            nodes += [node.left_child, node.right_child]
    assert len(leaves) == 31
    rows = torch.cat([leaf.sample_indices for leaf in leaves])
    assert torch.equal(rows.sort().values, torch.arange(len(X)))
    assert [len(leaf.sample_indices) for leaf in leaves] == [leaf.n_samples for leaf in leaves]
