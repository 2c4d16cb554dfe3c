"""The compiled loops of treelib.compiled agree with the array versions (Chapter 9).

Histograms, partitions and split scans bit for bit, and so the same trees;
the binary log-loss and its gradients bit for bit with scikit-learn's Cython.
(The walk of rows down a tree, ``compiled.leaf_values``, is checked in
``tests/test_kernels.py`` beside the two array versions.)
numba is in requirements.txt: without it these tests fail, they do not skip.
"""

import numpy as np
import pytest
import torch
from sklearn._loss.loss import HalfBinomialLoss as SklearnHalfBinomialLoss

from treelib import HistGradientBoostingClassifier, compiled, hist_grower
from treelib.hist_gradient_boosting import HalfBinomialLoss
from treelib.hist_grower import Splitter, TreeGrower, feature_histograms, gradient_pairs
from treelib.kernels import bins_left, compress


def test_the_compiled_loops_are_used_here():
    assert compiled.available()  # numba is pinned in requirements.txt


@pytest.fixture
def without_compiled(monkeypatch):
    """The array versions: as without numba (or with TREELIB_COMPILED=0)."""
    monkeypatch.setitem(compiled._STATE, "ok", False)


def binned_data(seed, n=3000, d=6, nan=True):
    """uint8 codes with a few bins for some features, NaN's bin (255) for others."""
    rng = np.random.default_rng(seed)
    n_bins_non_missing = rng.choice([2, 3, 17, 255], size=d).astype(np.uint32)
    codes = np.stack([rng.integers(0, b, n) for b in n_bins_non_missing], axis=1)
    if nan:
        codes[rng.random((n, d)) < 0.05 * (np.arange(d) % 2)] = 255
    return torch.from_numpy(codes.astype(np.uint8)), n_bins_non_missing


def gradients_of(seed, n, constant=False):
    g = torch.Generator().manual_seed(seed)
    scale = 10.0 ** torch.randint(-4, 4, (n,), generator=g)
    gradients = (torch.randn(n, generator=g, dtype=torch.float64) * scale).float()
    if constant:
        return gradients, torch.ones(1, dtype=torch.float32)
    return gradients, (torch.rand(n, generator=g, dtype=torch.float64) * scale).float()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("constant", [False, True])
@pytest.mark.parametrize("m", [None, 0, 1, 50, 2500])
def test_histograms_equal_the_scatter_version(seed, constant, m):
    X_binned, _ = binned_data(seed)
    gradients, hessians = gradients_of(seed, len(X_binned), constant)
    rows = None
    if m is not None:
        order = torch.randperm(len(X_binned), generator=torch.Generator().manual_seed(seed))
        rows = order[:m].sort().values if seed % 2 else order[:m]  # in order, or not
    X_binned_T = X_binned.T.contiguous()
    expected = feature_histograms(X_binned_T, rows, gradient_pairs(gradients, hessians),
                                  not constant, 256)  # fmt: skip
    got = compiled.histograms(X_binned_T.numpy(), None if rows is None else rows.numpy(),
                              gradients.numpy(), hessians.numpy(), 256)  # fmt: skip
    np.testing.assert_array_equal(got, expected.numpy())


@pytest.mark.parametrize("missing_left", [False, True])
@pytest.mark.parametrize("bin_idx", [0, 7, 254])
def test_numeric_partition_equals_bins_left_and_compress(missing_left, bin_idx):
    X_binned, _ = binned_data(1)
    column = X_binned.T.contiguous()[1]
    rows = torch.randperm(len(column), generator=torch.Generator().manual_seed(0))[:1000]
    missing = 255 if missing_left else None
    mask = bins_left(column, rows, bin_idx, missing)
    left, right = compiled.partition(column.numpy(), rows.numpy(), bin_idx,
                                     -1 if missing is None else missing, None)  # fmt: skip
    np.testing.assert_array_equal(left, compress(rows, mask).numpy())
    np.testing.assert_array_equal(right, compress(rows, ~mask).numpy())
    assert left.dtype == right.dtype == np.int64


def test_categorical_partition_follows_the_left_set():
    column = np.array([0, 3, 3, 255, 1, 2, 0], dtype=np.uint8)
    categories = np.zeros(256, dtype=bool)
    categories[[0, 2, 255]] = True
    left, right = compiled.partition(column, np.arange(7, dtype=np.int64), 0, -1, categories)
    assert left.tolist() == [0, 3, 5, 6] and right.tolist() == [1, 2, 4]


def node_requests(seed, histograms, k):
    """k nodes as the grower asks for them, totals read off the histograms."""
    rng = np.random.default_rng(seed)
    requests = []
    for i in range(k):
        hist = histograms[i].numpy()
        sum_g, sum_h, n = hist[0, 0].sum(), hist[1, 0].sum(), int(hist[2, 0].sum())
        value = -sum_g / (sum_h + 1e-15)
        lower, upper = (-np.inf, np.inf) if i % 2 == 0 else sorted(rng.normal(0, 1e-3, 2))
        requests.append((n, float(sum_g), float(sum_h), value, lower, upper, None))
    return requests


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("monotonic", [False, True])
@pytest.mark.parametrize("nan", [False, True])
def test_split_scan_equals_the_array_version(seed, monotonic, nan):
    k, d = 3, 6
    X_binned, n_bins_non_missing = binned_data(seed, d=d, nan=nan)
    gradients, hessians = gradients_of(seed, len(X_binned))
    if seed % 3 == 0:  # exact ties: gradients and hessians from a few values
        gradients, hessians = gradients.sign(), torch.full_like(hessians, 0.25)
    pairs = gradient_pairs(gradients, hessians)
    X_binned_T = X_binned.T.contiguous()
    parts = torch.randperm(len(X_binned), generator=torch.Generator().manual_seed(seed))
    histograms = torch.stack([
        feature_histograms(X_binned_T, rows.sort().values, pairs, True, 256)
        for rows in parts.chunk(k)
    ])  # fmt: skip
    rng = np.random.default_rng(seed)
    has_missing = (X_binned == 255).any(0).numpy().astype(np.uint8)
    cst = rng.choice([-1, 0, 1], d) if monotonic else np.zeros(d)
    splitter = Splitter(
        n_bins_non_missing, 255, has_missing, np.zeros(d, dtype=np.uint8),
        cst.astype(np.int8), [0.0, 0.5][seed % 2], 1e-3, [1, 20][seed % 2], [0.0, 1e-3][seed % 2],
        False, 1.0, np.random.default_rng(0), "cpu",
    )  # fmt: skip
    requests = node_requests(seed, histograms, k)
    assert splitter._compiled
    got = splitter._scan_numeric(histograms, requests)
    splitter._compiled = False
    expected = splitter._scan_numeric(histograms, requests)
    gain = np.array(expected["gain"])
    np.testing.assert_array_equal(np.array(got["gain"]), gain)
    assert (gain > 0).sum() > k  # splits were found: the comparison below is not empty
    valid = gain > -1  # (an invalid candidate's sums are not read)
    for key in ("bin", "missing_left", "g_left", "h_left", "n_left"):
        np.testing.assert_array_equal(np.asarray(got[key])[valid], expected[key][valid], key)


def grow(X_binned, n_bins_non_missing, gradients, hessians, **params):
    has_missing = (X_binned == 255).any(0).numpy().astype(np.uint8)
    grower = TreeGrower(X_binned, gradients, hessians, n_bins_non_missing=n_bins_non_missing,
                        has_missing_values=has_missing, **params)  # fmt: skip
    grower.grow()
    return grower.make_predictor([np.arange(b, dtype=np.float64) for b in n_bins_non_missing])


@pytest.mark.parametrize("seed", range(4))
def test_trees_are_the_same_with_and_without_the_compiled_loops(seed, monkeypatch):
    X_binned, n_bins_non_missing = binned_data(seed, n=5000)
    gradients, hessians = gradients_of(seed, len(X_binned), constant=seed % 2 == 1)
    params = dict(max_leaf_nodes=[31, None][seed % 2], min_samples_leaf=5,
                  l2_regularization=0.1 * seed, monotonic_cst=[0, 1, 0, -1, 0, 0][: 6])  # fmt: skip
    fast = grow(X_binned, n_bins_non_missing, gradients, hessians, **params)
    monkeypatch.setitem(compiled._STATE, "ok", False)
    plain = grow(X_binned, n_bins_non_missing, gradients, hessians, **params)
    assert fast.get_n_leaf_nodes() > 10
    for field in fast.nodes.dtype.names:
        np.testing.assert_array_equal(fast.nodes[field], plain.nodes[field], field)


def test_a_classifier_is_the_same_with_and_without_the_compiled_loops(without_compiled):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=12_000, n_features=6, random_state=0)
    X[::7, 2] = np.nan
    plain = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, y)
    compiled._STATE["ok"] = True
    fast = HistGradientBoostingClassifier(max_iter=15, random_state=0).fit(X, y)
    # (the gradients may differ in the last bit: torch's exp is not the C library's)
    np.testing.assert_allclose(fast.decision_function(X), plain.decision_function(X), atol=1e-9)
    np.testing.assert_allclose(fast.validation_score_, plain.validation_score_, rtol=1e-12)
    assert fast.n_iter_ == plain.n_iter_


def raw_scores():
    rng = np.random.default_rng(0)
    edges = [-40.0, -37.0, -36.9, -2.0, -1.9, 18.0, 18.1, 33.3, 33.4, 50.0]
    return np.concatenate([rng.normal(0, 5, 5000), rng.uniform(-60, 60, 5000), edges])


def test_binomial_loss_equals_scikit_learns_cython():
    raw = raw_scores()
    y = (np.arange(len(raw)) % 2).astype(np.float64)
    expected = SklearnHalfBinomialLoss().loss(y, raw)
    np.testing.assert_array_equal(compiled.binomial_loss(y, raw), expected)
    ours = HalfBinomialLoss()(torch.from_numpy(y), torch.from_numpy(raw))
    assert ours == float(torch.from_numpy(expected).mean())


@pytest.mark.parametrize("weighted", [False, True])
def test_binomial_gradients_equal_scikit_learns_cython(weighted):
    raw = raw_scores()
    y = (np.arange(len(raw)) % 3 == 0).astype(np.float64)
    weight = np.linspace(0.1, 3, len(raw)) if weighted else None
    g_expected = np.empty(len(raw), dtype=np.float32)
    h_expected = np.empty(len(raw), dtype=np.float32)
    SklearnHalfBinomialLoss().gradient_hessian(y, raw, weight, g_expected, h_expected)
    gradient = torch.empty((len(raw), 1), dtype=torch.float32)
    hessian = torch.empty((len(raw), 1), dtype=torch.float32)
    HalfBinomialLoss().gradient_hessian(
        torch.from_numpy(y), torch.from_numpy(raw)[:, None],
        None if weight is None else torch.from_numpy(weight), gradient, hessian,
    )  # fmt: skip
    np.testing.assert_array_equal(gradient[:, 0].numpy(), g_expected)
    np.testing.assert_array_equal(hessian[:, 0].numpy(), h_expected)


def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("TREELIB_COMPILED", "0")
    monkeypatch.delitem(compiled._STATE, "ok", raising=False)
    assert not compiled.available()
    monkeypatch.setenv("TREELIB_COMPILED", "1")
    monkeypatch.delitem(compiled._STATE, "ok", raising=False)
    assert compiled.available()
    assert hist_grower.compiled is compiled
