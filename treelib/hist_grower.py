"""The engine of histogram gradient boosting: bins, histograms, splits, leaf-wise trees.

Introduced in Chapter 9 (``notebooks/09_hist_gradient_boosting``). The estimators
that use it are in :mod:`treelib.hist_gradient_boosting`.

The API mirrors scikit-learn 1.9.1's private engine
(``sklearn/ensemble/_hist_gradient_boosting``: ``binning._BinMapper``,
``grower.TreeGrower``, ``predictor.TreePredictor``), with torch tensors where
scikit-learn passes numpy arrays. On the CPU, with numba, a node's histograms, the
split of its samples and the scan of its bins run as compiled loops
(:mod:`treelib.compiled`), as scikit-learn's run in Cython; the array versions here
give the same trees.
"""

import heapq
import numbers

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils.stats import _weighted_percentile

from . import compiled
from .kernels import (
    TINY_NODE,
    add_to_groups,
    bin_counts,
    bins_left,
    cell_sums,
    complex_pairs,
    compress,
    feature_sums,
    gathered_sums,
    histogram_rows,
    leaf_values_binned,
    row_major,
    unbounded_gain,
)

# scikit-learn's node record (common.pyx PREDICTOR_RECORD_DTYPE), kept as is so that
# a fitted predictor's ``nodes`` read the same.
PREDICTOR_RECORD_DTYPE = np.dtype(
    [
        ("value", np.float64),
        ("count", np.uint32),
        ("feature_idx", np.intp),
        ("num_threshold", np.float64),
        ("missing_go_to_left", np.uint8),
        ("left", np.uint32),
        ("right", np.uint32),
        ("gain", np.float64),
        ("depth", np.uint32),
        ("is_leaf", np.uint8),
        ("bin_threshold", np.uint8),
        ("is_categorical", np.uint8),
        ("bitset_idx", np.uint32),
    ]
)
ALMOST_INF = 1e300  # scikit-learn's (LightGBM's AvoidInf): no +inf bin threshold
SMALL_NODE = 8192  # below this many samples a node's histograms take one scatter


# --- bins ------------------------------------------------------------------------


def find_binning_thresholds(col_data, max_bins, sample_weight=None):
    """The bin edges of one continuous feature, as scikit-learn's (Chapter 9).

    NaN is ignored (it has a bin of its own). With at most ``max_bins`` distinct
    values the edges are the midpoints between consecutive values; with more, the
    ``max_bins``-quantiles (``np.percentile``'s ``"averaged_inverted_cdf"``, or the
    weighted percentile with ``sample_weight``), duplicates removed. A value ``x``
    falls in bin ``i`` when ``edges[i - 1] < x <= edges[i]``.
    """
    missing_mask = np.isnan(col_data)
    any_missing = missing_mask.any()
    if any_missing:
        col_data = col_data[~missing_mask]
    if sample_weight is not None:
        if any_missing:
            sample_weight = sample_weight[~missing_mask]
        nnz_sw = sample_weight != 0
        col_data = col_data[nnz_sw]
        sample_weight = sample_weight[nnz_sw]
    if sample_weight is not None:  # (np.percentile needs no sorted data: only the weights do)
        sort_idx = np.argsort(col_data)
        col_data = col_data[sort_idx]
        sample_weight = sample_weight[sort_idx]
    distinct_values = np.unique(col_data).astype(np.float64)
    if len(distinct_values) <= 1:
        return np.asarray([], dtype=np.float64)
    percentiles = np.linspace(0, 100, num=max_bins + 1)[1:-1]
    if len(distinct_values) <= max_bins:
        bin_thresholds = (distinct_values[:-1] + distinct_values[1:]) / 2
    elif sample_weight is None:
        bin_thresholds = np.percentile(col_data, percentiles, method="averaged_inverted_cdf")
    else:
        bin_thresholds = np.array(
            [_weighted_percentile_averaged(col_data, sample_weight, p) for p in percentiles]
        )
    unique_bin_values = np.unique(bin_thresholds)
    if unique_bin_values.shape[0] != bin_thresholds.shape[0]:
        bin_thresholds = unique_bin_values
    np.clip(bin_thresholds, a_min=None, a_max=ALMOST_INF, out=bin_thresholds)
    return bin_thresholds


def _weighted_percentile_averaged(values, weight, percentile):
    """scikit-learn's ``_weighted_percentile(..., average=True)`` (1.7+); older versions
    (Colab's 1.6) have no ``average`` and give the lower weighted percentile instead."""
    try:
        return _weighted_percentile(values, weight, percentile, average=True)
    except TypeError:
        return _weighted_percentile(values, weight, percentile)


class BinMapper:
    """Quantile bins of every feature, computed once per fit (Chapter 9).

    As scikit-learn's ``_BinMapper``: ``n_bins`` counts the missing-values bin,
    which is always the last one (index ``n_bins - 1``), whether the feature has
    NaN or not. Above ``subsample`` rows the edges come from ``subsample`` rows
    drawn with replacement (with probabilities proportional to ``sample_weight``)
    from ``random_state``; a categorical feature's bins are its known categories,
    in increasing order.

    Parameters
    ----------
    n_bins : int, default=256
    subsample : int or None, default=200_000
    is_categorical : array of bool (n_features,) or None
    known_categories : list of (float64 ndarray or None), one per feature
    random_state : int, RandomState or None

    Attributes
    ----------
    bin_thresholds_ : list of float64 ndarrays (the known categories for a
        categorical feature)
    n_bins_non_missing_ : uint32 ndarray (n_features,)
    missing_values_bin_idx_ : int (``n_bins - 1``)
    is_categorical_ : uint8 ndarray (n_features,)
    """

    def __init__(
        self,
        n_bins=256,
        subsample=200_000,
        is_categorical=None,
        known_categories=None,
        random_state=None,
    ):
        self.n_bins = n_bins
        self.subsample = subsample
        self.is_categorical = is_categorical
        self.known_categories = known_categories
        self.random_state = random_state

    def fit(self, X, sample_weight=None):
        """Find the bin edges of every column of the float64 array ``X``."""
        if not (3 <= self.n_bins <= 256):
            raise ValueError(
                f"n_bins={self.n_bins} should be no smaller than 3 and no larger than 256."
            )
        X = _as_numpy(X)
        max_bins = self.n_bins - 1
        rng = check_random_state(self.random_state)
        if self.subsample is not None and X.shape[0] > self.subsample:
            probabilities = None
            if sample_weight is not None:
                sample_weight = _as_numpy(sample_weight)
                probabilities = sample_weight / np.sum(sample_weight)
            subset = rng.choice(X.shape[0], self.subsample, p=probabilities, replace=True)
            X = X.take(subset, axis=0)
            sample_weight = None
        elif sample_weight is not None:
            sample_weight = _as_numpy(sample_weight)
        n_features = X.shape[1]
        if self.is_categorical is None:
            self.is_categorical_ = np.zeros(n_features, dtype=np.uint8)
        else:
            self.is_categorical_ = np.asarray(self.is_categorical, dtype=np.uint8)
        known = self.known_categories or [None] * n_features
        for f in range(n_features):
            if self.is_categorical_[f] and known[f] is None:
                raise ValueError(f"Known categories for feature {f} must be provided.")
            if not self.is_categorical_[f] and known[f] is not None:
                raise ValueError(
                    f"Feature {f} isn't marked as a categorical feature, "
                    "but categories were passed."
                )
        self.missing_values_bin_idx_ = self.n_bins - 1
        self.bin_thresholds_ = []
        for f in range(n_features):
            if self.is_categorical_[f]:
                self.bin_thresholds_.append(np.asarray(known[f], dtype=np.float64))
            else:
                self.bin_thresholds_.append(
                    find_binning_thresholds(X[:, f], max_bins, sample_weight)
                )
        self.n_bins_non_missing_ = np.array(
            [
                len(t) if self.is_categorical_[f] else len(t) + 1
                for f, t in enumerate(self.bin_thresholds_)
            ],
            dtype=np.uint32,
        )
        return self

    def transform(self, X, device=None):
        """The bin of every value: a ``torch.uint8`` tensor (n_samples, n_features).

        NaN, and a negative value of a categorical feature, go to the missing-values
        bin; any other value to the first bin whose edge is at least the value (a
        binary search: ``torch.searchsorted``).
        """
        X = torch.as_tensor(_as_numpy(X) if not torch.is_tensor(X) else X)
        X = X.to(device=device, dtype=torch.float64)
        if X.shape[1] != len(self.bin_thresholds_):
            raise ValueError(
                f"This estimator was fitted with {len(self.bin_thresholds_)} features "
                f"but {X.shape[1]} got passed to transform()"
            )
        # feature-major storage (scikit-learn's Fortran order): a column is contiguous
        binned = torch.empty(X.shape[1], X.shape[0], dtype=torch.uint8, device=X.device)
        for f, edges in enumerate(self.bin_thresholds_):
            column = X[:, f]
            edges = torch.as_tensor(edges, dtype=torch.float64, device=X.device)
            codes = torch.searchsorted(edges, column.contiguous())
            missing = column.isnan()
            if self.is_categorical_[f]:
                missing |= column < 0
            codes = codes.masked_fill(missing, self.missing_values_bin_idx_)
            binned[f] = codes.to(torch.uint8)
        return binned.T

    def make_known_categories_bitsets(self):
        """The known categories of each categorical feature, as scikit-learn's bitsets.

        Returns ``known_cat_bitsets`` (uint32, (n_categorical_features, 8)) and
        ``f_idx_map`` (uint32, (n_features,)): feature index -> row of the bitsets.
        """
        categorical = np.flatnonzero(self.is_categorical_)
        f_idx_map = np.zeros(self.is_categorical_.size, dtype=np.uint32)
        f_idx_map[categorical] = np.arange(categorical.size, dtype=np.uint32)
        known_cat_bitsets = np.zeros((categorical.size, 8), dtype=np.uint32)
        for row, f in enumerate(categorical):
            for value in self.bin_thresholds_[f]:
                set_bitset(known_cat_bitsets[row], int(value))
        return known_cat_bitsets, f_idx_map


def _as_numpy(X):
    if torch.is_tensor(X):
        return X.detach().cpu().numpy().astype(np.float64, copy=False)
    X = np.asarray(X, dtype=np.float64)
    return X if X.flags.writeable else X.copy()  # torch warns on read-only arrays


def set_bitset(bitset, value):
    """Set bit ``value`` (0-255) of a bitset of 8 uint32 words, as scikit-learn's."""
    bitset[value // 32] |= np.uint32(1 << (value % 32))


def in_bitset(bitset, value):
    return bool((int(bitset[value // 32]) >> (value % 32)) & 1)


def bitset_to_mask(bitsets):
    """uint32 bitsets (..., 8) -> bool array (..., 256): bit ``v`` of each row."""
    bits = np.unpackbits(np.ascontiguousarray(bitsets).view(np.uint8), bitorder="little")
    return bits.reshape(*bitsets.shape[:-1], 256).astype(bool)


# --- gain and value ----------------------------------------------------------------


def compute_node_value(sum_gradient, sum_hessian, lower_bound, upper_bound, l2_regularization):
    """A leaf's Newton step, ``-G / (H + lambda)``, clipped to the monotonic bounds.

    Introduced in Chapter 9; scikit-learn's ``compute_node_value`` (the ``1e-15``
    keeps an empty hessian from dividing by zero). Works on floats and on tensors.
    """
    value = -sum_gradient / (sum_hessian + l2_regularization + 1e-15)
    if torch.is_tensor(value):
        return value.clamp(lower_bound, upper_bound)
    if isinstance(value, np.ndarray):
        return np.clip(value, lower_bound, upper_bound)
    return min(max(value, lower_bound), upper_bound)


def split_gain(
    sum_gradient_left,
    sum_hessian_left,
    sum_gradient_right,
    sum_hessian_right,
    loss_current_node,
    monotonic_cst,
    lower_bound,
    upper_bound,
    l2_regularization,
):
    """The second-order gain of a split (Chapter 9): XGBoost's equation 7.

    The loss of a node of value ``v`` is ``G * v``, which is ``-G**2 / (H + lambda)``
    for the unbounded value; the gain is the parent's loss minus its children's.
    A split against a monotonic constraint (``monotonic_cst`` +1: left value above
    the right; -1: below) gets gain -1. Tensors broadcast: ``monotonic_cst`` may be
    one constraint per candidate.
    """
    value_left = compute_node_value(
        sum_gradient_left, sum_hessian_left, lower_bound, upper_bound, l2_regularization
    )
    value_right = compute_node_value(
        sum_gradient_right, sum_hessian_right, lower_bound, upper_bound, l2_regularization
    )
    gain = loss_current_node - sum_gradient_left * value_left - sum_gradient_right * value_right
    wrong_way = ((monotonic_cst == 1) & (value_left > value_right)) | (
        (monotonic_cst == -1) & (value_left < value_right)
    )
    if torch.is_tensor(gain):
        return gain.masked_fill(wrong_way, -1.0)
    if isinstance(gain, np.ndarray):
        return np.where(wrong_way, -1.0, gain)
    return -1.0 if wrong_way else gain


# --- histograms ------------------------------------------------------------------


def node_histograms(X_binned, rows, gradients, hessians, n_bins):
    """Sums of gradients, of hessians, and counts per feature and bin (Chapter 9).

    Returns a float64 tensor (3, n_features, n_bins): ``[sum_g, sum_h, count]``.
    ``rows`` None means every sample (the root). With constant hessians
    (``hessians`` of length 1) the hessian row is the count times that hessian.
    The sums are float64, as scikit-learn's (its gradients are float32), and
    each bin adds its samples in the order of ``rows``, as scikit-learn does.
    """
    constant = hessians.numel() == 1
    pairs = gradient_pairs(gradients, hessians)
    hist = feature_histograms(X_binned.T.contiguous(), rows, pairs, not constant, n_bins)
    if constant:
        hist[1] *= float(hessians.reshape(-1)[0])
    return hist


def gradient_pairs(gradients, hessians):
    """Each sample's ``g + i h`` (complex128; ``h`` is 1 when the hessians are constant).

    A speed trick only: one scatter of complex numbers sums the gradients (real
    part) and the hessians, or the counts (imaginary part), in one pass.
    """
    h = torch.ones(1, device=gradients.device) if hessians.numel() == 1 else hessians
    return complex_pairs(gradients, h)


def feature_histograms(X_binned_T, rows, pairs, count_needed, n_bins, X_binned=None,
                       buffers=None):  # fmt: skip
    """The histograms of the samples ``rows`` (all when None); ``X_binned_T`` is
    feature-major (n_features, n_samples). Returns (3, n_features, n_bins) float64;
    with constant hessians (``count_needed`` False) rows 1 and 2 are both the count.

    Speed tricks (:mod:`treelib.kernels`, each checked against a plain version): a
    big node is summed feature by feature, a chunk of samples at a time
    (``feature_sums``); a small one (fewer than :data:`SMALL_NODE` samples) in one
    scatter along the rows of its gathered (feature, sample) codes, in ``buffers``
    kept across the tree's nodes (``gathered_sums``); a tiny one (fewer than
    ``TINY_NODE``, on the CPU) in one numpy scatter over all its (sample, feature)
    cells, gathered from a row-major copy of ``X_binned`` kept across trees
    (``cell_sums``, ``row_major``): fewer, bigger steps cost less. Every bin adds
    its samples in the order of ``rows`` either way. The root's counts, the same
    at every tree, are made once per ``X_binned`` and kept (``bin_counts``).
    """
    tiny = rows is not None and len(rows) < TINY_NODE and X_binned_T.device.type == "cpu"
    if X_binned is not None and tiny:
        sums, counts = cell_sums(row_major(X_binned), rows, pairs, n_bins, count_needed)
    elif rows is not None and len(rows) < SMALL_NODE:
        sums, counts = gathered_sums(X_binned_T, rows, pairs, n_bins, count_needed, buffers)
    elif rows is None and X_binned is not None and count_needed:  # the root: counts kept
        sums, _ = feature_sums(X_binned_T, rows, pairs, n_bins, False, buffers)
        counts = bin_counts(X_binned, n_bins)
    else:
        sums, counts = feature_sums(X_binned_T, rows, pairs, n_bins, count_needed, buffers)
    return histogram_rows(sums, counts)  # [real parts, imaginary parts, counts]


# --- split finding -------------------------------------------------------------


class SplitInfo:
    """The best split of a node, as scikit-learn's ``SplitInfo`` (Chapter 9)."""

    __slots__ = (
        "gain",
        "feature_idx",
        "bin_idx",
        "missing_go_to_left",
        "sum_gradient_left",
        "sum_hessian_left",
        "sum_gradient_right",
        "sum_hessian_right",
        "n_samples_left",
        "n_samples_right",
        "value_left",
        "value_right",
        "is_categorical",
        "left_cat_bitset",
    )

    def __init__(self, gain=-1.0, feature_idx=0, is_categorical=False):
        self.gain = gain
        self.feature_idx = feature_idx
        self.bin_idx = 0
        self.missing_go_to_left = False
        self.is_categorical = is_categorical
        self.left_cat_bitset = None


class Splitter:
    """Finds each node's best split from its histograms (Chapter 9).

    The rules are scikit-learn's ``Splitter.find_node_split``:

    - a numeric feature is scanned from the left (NaN, if the feature had any in
      training, goes right; the last candidate puts every known value left and the
      NaN alone right), then, if it has NaN, from the right (NaN goes left);
    - a candidate needs ``min_samples_leaf`` samples and ``min_hessian_to_split``
      hessian on each side, and a gain above ``min_gain_to_split``;
    - ties: within the left-to-right scan the first bin wins, the right-to-left
      scan must beat it strictly (and among its own candidates the highest bin
      wins), and between features the first one;
    - a categorical feature orders its categories by ``G / (H + 10)`` (those with
      enough hessian) and scans that order from both ends (Fisher's ordering);
    - ``feature_fraction_per_split < 1`` draws the features of each node from
      ``rng`` exactly as scikit-learn does (one ``shuffle`` per node).
    """

    def __init__(
        self,
        n_bins_non_missing,
        missing_values_bin_idx,
        has_missing_values,
        is_categorical,
        monotonic_cst,
        l2_regularization,
        min_hessian_to_split,
        min_samples_leaf,
        min_gain_to_split,
        hessians_are_constant,
        feature_fraction_per_split,
        rng,
        device,
    ):
        self.n_bins_non_missing = n_bins_non_missing
        self.missing_values_bin_idx = missing_values_bin_idx
        self.has_missing_values = has_missing_values
        self.is_categorical = is_categorical
        self.monotonic_cst = monotonic_cst
        self.l2_regularization = l2_regularization
        self.min_hessian_to_split = min_hessian_to_split
        self.min_samples_leaf = min_samples_leaf
        self.min_gain_to_split = min_gain_to_split
        self.hessians_are_constant = hessians_are_constant
        self.feature_fraction_per_split = feature_fraction_per_split
        self.rng = rng
        n_features = len(n_bins_non_missing)
        # bins of known values that some feature uses: 0 .. max(n_bins_non_missing) - 1
        self._width = width = max(1, int(n_bins_non_missing.max()))
        bins = np.arange(width)
        nbnm = n_bins_non_missing.astype(np.int64)[:, None]
        missing = has_missing_values.astype(bool)[:, None]
        allowed = np.empty((2, n_features, len(bins)), dtype=bool)
        # left-to-right candidates: bin < n_bins_non_missing - 1 + has_missing
        allowed[0] = bins[None, :] < nbnm - 1 + missing
        # right-to-left (features with NaN only): bin <= n_bins_non_missing - 2; the
        # scan's candidates are stored from the highest bin down
        allowed[1] = ((bins[None, :] <= nbnm - 2) & missing)[:, ::-1]
        self._allowed = allowed
        self._monotonic = monotonic_cst.astype(np.int64)[:, None]
        self._any_monotonic = bool(np.any(monotonic_cst != 0))
        self._any_missing = bool(np.any(has_missing_values))
        self.n_features = n_features
        self._features = np.arange(n_features)
        # the scans as one compiled loop (treelib.compiled), on the CPU with numba
        self._compiled = torch.device(device).type == "cpu" and compiled.available()
        self._monotonic_int8 = np.ascontiguousarray(monotonic_cst, dtype=np.int8)
        every_feature_drawn = feature_fraction_per_split >= 1.0
        self._every_feature_numeric_and_drawn = every_feature_drawn and not np.any(is_categorical)

    def find_node_split(
        self,
        n_samples,
        histograms,
        sum_gradients,
        sum_hessians,
        value,
        lower_bound=-np.inf,
        upper_bound=np.inf,
        allowed_features=None,
    ):
        """The best :class:`SplitInfo` among the (allowed, drawn) features."""
        node = (n_samples, sum_gradients, sum_hessians, value, lower_bound, upper_bound,
                allowed_features)  # fmt: skip
        return self.find_node_splits([node], histograms[None])[0]

    def find_node_splits(self, nodes, histograms):
        """:meth:`find_node_split` of a few nodes at once (a split's two children).

        ``nodes`` lists each node's ``(n_samples, sum_gradients, sum_hessians,
        value, lower_bound, upper_bound, allowed_features)``; ``histograms`` is
        their histograms stacked, (k, 3, n_features, n_bins). A speed trick only:
        the numeric scans of all the nodes run in one set of numpy steps; the
        features are drawn from ``rng`` node after node, in the order given, as
        scikit-learn draws them one node at a time.
        """
        histograms = torch.as_tensor(histograms).cpu()
        hist = histograms.numpy()
        drawn = [self._draw(node[6]) for node in nodes]
        numeric = self._scan_numeric(histograms, nodes)
        return [
            self._best_split(hist[i], node, drawn[i], numeric, i) for i, node in enumerate(nodes)
        ]

    def _draw(self, allowed_features):
        """The features drawn for one node (``feature_fraction_per_split``), and all
        the allowed ones; None when every feature is allowed and drawn, and numeric."""
        if allowed_features is None and self._every_feature_numeric_and_drawn:
            return None
        features = np.arange(self.n_features) if allowed_features is None else allowed_features
        n_allowed = len(features)
        drawn = np.ones(n_allowed, dtype=bool)
        if self.feature_fraction_per_split < 1.0:
            n_drawn = max(1, int(np.ceil(self.feature_fraction_per_split * n_allowed)))
            drawn = np.full(n_allowed, False)
            drawn[:n_drawn] = True
            self.rng.shuffle(drawn)
        return features, drawn

    def _best_split(self, histograms, node, features_drawn, numeric, i):
        """The winner among one node's features (numeric scans already done)."""
        n_samples, sum_gradients, sum_hessians, value, lower_bound, upper_bound, _ = node
        gains = numeric["gain"][i]  # per feature, -1 without a valid split
        if features_drawn is None:  # every feature, numeric: the first best gain
            best = f = max(range(self.n_features), key=gains.__getitem__)
            gain, drawn = gains[f], None
        else:
            features, drawn = features_drawn
            loss_current_node = sum_gradients * value
            candidates = []
            for position, f in enumerate(features):
                f = int(f)
                if not drawn[position]:
                    candidates.append((-1.0, f, None))
                elif self.is_categorical[f]:
                    info = self._scan_categorical(
                        f, n_samples, histograms, sum_gradients, sum_hessians,
                        loss_current_node, lower_bound, upper_bound,
                    )  # fmt: skip
                    candidates.append((info.gain, f, info))
                else:
                    candidates.append((gains[f], f, None))
            best = 0
            for j in range(1, len(candidates)):
                if candidates[j][0] > candidates[best][0]:
                    best = j
            gain, f, info = candidates[best]
            if info is not None:
                return info
        if gain <= -1.0 or (drawn is not None and not drawn[best]) or self.is_categorical[f]:
            return SplitInfo(-1.0, f, bool(self.is_categorical[f]))
        info = SplitInfo(gain, f, False)
        info.bin_idx = int(numeric["bin"][i, f])
        info.missing_go_to_left = bool(numeric["missing_left"][i, f])
        info.sum_gradient_left = float(numeric["g_left"][i, f])
        info.sum_hessian_left = float(numeric["h_left"][i, f])
        info.n_samples_left = int(numeric["n_left"][i, f])
        self._finish(info, n_samples, sum_gradients, sum_hessians, lower_bound, upper_bound)
        return info

    def _finish(self, info, n_samples, sum_gradients, sum_hessians, lower_bound, upper_bound):
        info.sum_gradient_right = sum_gradients - info.sum_gradient_left
        info.sum_hessian_right = sum_hessians - info.sum_hessian_left
        info.n_samples_right = n_samples - info.n_samples_left
        l2 = self.l2_regularization
        info.value_left = compute_node_value(
            info.sum_gradient_left, info.sum_hessian_left, lower_bound, upper_bound, l2
        )
        info.value_right = compute_node_value(
            info.sum_gradient_right, info.sum_hessian_right, lower_bound, upper_bound, l2
        )

    def _scan_numeric(self, histograms, nodes):
        """Both scans of every feature of every node at once: the best candidate per
        (node, feature).

        ``histograms`` holds the nodes' histograms, (k, 3, n_features, n_bins), on
        the CPU. The running sums are torch's ``cumsum`` (one addition after the
        other, as scikit-learn's loop; three times faster than numpy's), the rest
        numpy: the arrays are small and the steps many. Only the bins some feature
        uses are read, and the right-to-left scan only runs when a feature has NaN.
        """
        k = len(nodes)
        width = self._width
        columns = list(zip(*nodes))
        n_samples, sum_gradients, sum_hessians, value, lower, upper = columns[:6]
        if self._compiled:
            return self._scan_numeric_compiled(histograms, columns)
        known = histograms[..., :width]  # (k, 3, d, bins of known values)
        totals = np.array([sum_gradients, sum_hessians, n_samples], dtype=np.float64).T
        totals = totals[:, :, None, None, None]  # (k, 3, 1, 1, 1)
        loss_current_node = np.multiply(sum_gradients, value)[:, None, None, None]
        # left to right: the left child holds bins 0..b (running sums, in bin order)
        left = torch.cumsum(known, -1).numpy()[:, :, None]  # (k, 3, 1, d, width)
        if self._any_missing:
            # right to left: the right child holds bins b+1..end, summed from the end;
            # stored reversed (position j is bin width - 1 - j), as the scan meets them
            right = np.zeros(left.shape, dtype=np.float64)
            right[..., 1:] = torch.cumsum(known.flip(-1)[..., :-1], -1).numpy()[:, :, None]
            sums_left = np.concatenate([left, totals - right], axis=2)
            allowed = self._allowed
        else:
            sums_left = left
            allowed = self._allowed[:1]
        g_l, h_l, n_l = sums_left[:, 0], sums_left[:, 1], sums_left[:, 2]
        g_r, h_r = totals[:, 0] - g_l, totals[:, 1] - h_l  # (k, scans, d, width)
        l2 = self.l2_regularization
        bounded = any(b != -np.inf for b in lower) or any(b != np.inf for b in upper)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self._any_monotonic or bounded:
                lower = np.array(lower, dtype=np.float64)[:, None, None, None]
                upper = np.array(upper, dtype=np.float64)[:, None, None, None]
                gain = split_gain(
                    g_l, h_l, g_r, h_r, loss_current_node, self._monotonic, lower, upper, l2,
                )  # fmt: skip
            else:
                gain = unbounded_gain(g_l, h_l, g_r, h_r, loss_current_node, l2)
        # (the right child's count n - n_l is exact: whole numbers)
        most = totals[:, 2] - self.min_samples_leaf
        ok = allowed & (n_l >= self.min_samples_leaf)
        ok &= n_l <= most
        ok &= h_l >= self.min_hessian_to_split
        ok &= h_r >= self.min_hessian_to_split
        ok &= gain > max(self.min_gain_to_split, -1.0)
        gain = np.where(ok, gain, -np.inf)
        position = gain.argmax(axis=3)  # the first maximum of each scan: (k, scans, d)
        best = gain.max(axis=3)
        ltr_score = np.maximum(best[:, 0], -1.0)  # (k, d)
        nodes_, features = np.arange(k)[:, None], self._features
        if self._any_missing:
            use_rtl = best[:, 1] > ltr_score  # the right-to-left scan must do strictly better
            scan = use_rtl.astype(np.int64)
            j = position[nodes_, scan, features]
            at = (nodes_, scan, features, j)
            bins = np.where(use_rtl, width - 1 - j, j)
            gains = np.where(use_rtl, best[:, -1], ltr_score)
        else:
            use_rtl = np.zeros(ltr_score.shape, dtype=bool)
            j = position[:, 0]
            at = (nodes_, 0, features, j)
            bins, gains = j, ltr_score
        return {
            "gain": gains.tolist(),
            "bin": bins,
            "missing_left": use_rtl,
            "g_left": g_l[at],
            "h_left": h_l[at],
            "n_left": n_l[at],
        }

    def _scan_numeric_compiled(self, histograms, columns):
        """:meth:`_scan_numeric` as one compiled loop (:func:`treelib.compiled.scan_numeric`):
        the same candidates, gains and ties, bit for bit (a feature without a valid
        split gets gain ``-1`` and zero sums, which are not read)."""
        n_samples, sum_gradients, sum_hessians, value, lower, upper = columns[:6]
        totals = np.array([sum_gradients, sum_hessians, n_samples], dtype=np.float64).T
        gain, bins, missing_left, g_left, h_left, n_left = compiled.scan_numeric(
            np.ascontiguousarray(histograms.numpy()),
            np.ascontiguousarray(totals),
            np.multiply(sum_gradients, value, dtype=np.float64),
            np.array(lower, dtype=np.float64),
            np.array(upper, dtype=np.float64),
            self._monotonic_int8,
            self._allowed,
            self._any_missing,
            self.min_samples_leaf,
            float(self.min_hessian_to_split),
            float(self.min_gain_to_split),
            float(self.l2_regularization),
        )
        return {
            "gain": gain.tolist(),
            "bin": bins,
            "missing_left": missing_left,
            "g_left": g_left,
            "h_left": h_left,
            "n_left": n_left,
        }

    def _scan_categorical(
        self, f, n_samples, histograms, sum_gradients, sum_hessians, loss_current_node,
        lower_bound, upper_bound,
    ):  # fmt: skip
        """Fisher's ordering: categories sorted by ``G / (H + 10)``, scanned from both ends.

        scikit-learn's ``_find_best_bin_to_split_category``: a category (the NaN bin
        included) takes part when its hessian times ``n / H`` is at least 10; at most
        half of the categories (rounded up) go left from either end.
        """
        info = SplitInfo(-1.0, f, True)
        hist = histograms[:, f, :]
        sum_g, sum_h, count = hist[0], hist[1], hist[2]
        min_cat_support = 10.0
        support_factor = n_samples / sum_hessians
        bins = list(range(int(self.n_bins_non_missing[f])))
        if self.has_missing_values[f]:
            bins.append(self.missing_values_bin_idx)
        used = [b for b in bins if sum_h[b] * support_factor >= min_cat_support]
        if len(used) <= 1:
            return info
        ratio = np.array([sum_g[b] / (sum_h[b] + min_cat_support) for b in used])
        order = [used[i] for i in np.argsort(ratio, kind="stable")]
        n_used = len(order)
        best_gain, best = -1.0, None
        for direction in (1, -1):
            middle = (n_used + 1) // 2 if direction == 1 else (n_used + 1) // 2 - 1
            g_left = h_left = 0.0
            n_left = 0
            for i in range(middle):
                position = i if direction == 1 else n_used - 1 - i
                b = order[position]
                n_left += int(count[b])
                n_right = n_samples - n_left
                h_left += float(sum_h[b])
                h_right = sum_hessians - h_left
                g_left += float(sum_g[b])
                g_right = sum_gradients - g_left
                if n_left < self.min_samples_leaf or h_left < self.min_hessian_to_split:
                    continue
                if n_right < self.min_samples_leaf or h_right < self.min_hessian_to_split:
                    break
                gain = split_gain(
                    g_left, h_left, g_right, h_right, loss_current_node,
                    int(self.monotonic_cst[f]), lower_bound, upper_bound,
                    self.l2_regularization,
                )  # fmt: skip
                if gain > best_gain and gain > self.min_gain_to_split:
                    best_gain = gain
                    best = (position, g_left, h_left, n_left, direction)
        if best is None:
            return info
        position, g_left, h_left, n_left, direction = best
        info.gain = best_gain
        info.sum_gradient_left, info.sum_hessian_left, info.n_samples_left = (
            g_left,
            h_left,
            n_left,
        )
        self._finish(info, n_samples, sum_gradients, sum_hessians, lower_bound, upper_bound)
        left = order[: position + 1] if direction == 1 else order[position:]
        bitset = np.zeros(8, dtype=np.uint32)
        for b in left:
            set_bitset(bitset, b)
        info.left_cat_bitset = bitset
        if self.has_missing_values[f]:
            info.missing_go_to_left = in_bitset(bitset, self.missing_values_bin_idx)
        return info


# --- growing ---------------------------------------------------------------------


class TreeNode:
    """A node while the tree grows, as scikit-learn's grower's ``TreeNode``."""

    def __init__(self, depth, sample_indices, sum_gradients, sum_hessians, value=None):
        self.depth = depth
        self.sample_indices = sample_indices
        self.n_samples = int(sample_indices.shape[0])
        self.sum_gradients = sum_gradients
        self.sum_hessians = sum_hessians
        self.value = value
        self.is_leaf = False
        self.allowed_features = None
        self.interaction_cst_indices = None
        self.set_children_bounds(float("-inf"), float("+inf"))
        self.split_info = None
        self.left_child = None
        self.right_child = None
        self.histograms = None

    def set_children_bounds(self, lower, upper):
        """Bounds of the children's values, for the monotonic constraints."""
        self.children_lower_bound = lower
        self.children_upper_bound = upper

    def __lt__(self, other):
        # The heap pops the node of highest gain first (scikit-learn's order).
        return self.split_info.gain > other.split_info.gain


class TreeGrower:
    """Grows one tree leaf-wise on gradient and hessian histograms (Chapter 9).

    scikit-learn's ``TreeGrower``, step for step: the root's histograms are built
    from all samples; the node of highest gain is split next (a heap); of its two
    children only the smaller one's histograms are built from its samples, the
    other's are the parent's minus those (**sibling subtraction**); a child is a
    leaf when it reaches ``max_depth``, has fewer than ``2 * min_samples_leaf``
    samples, or has no split of positive gain; when ``max_leaf_nodes`` is reached
    every remaining node is a leaf. Leaf values are the Newton steps
    ``-G / (H + l2_regularization)``, clipped to the monotonic bounds, times the
    ``shrinkage`` at the end. The samples of every leaf are kept, so that the
    training predictions are updated without walking the tree.

    Parameters
    ----------
    X_binned : torch.uint8 tensor (n_samples, n_features)
    gradients : torch.float32 tensor (n_samples,)
    hessians : torch.float32 tensor (n_samples,), or (1,) when constant
    max_leaf_nodes, max_depth, min_samples_leaf, min_gain_to_split,
    min_hessian_to_split, n_bins, n_bins_non_missing, has_missing_values,
    is_categorical, monotonic_cst, interaction_cst, l2_regularization,
    feature_fraction_per_split, rng, shrinkage :
        scikit-learn's (``rng`` a numpy ``Generator``).
    """

    def __init__(
        self,
        X_binned,
        gradients,
        hessians,
        max_leaf_nodes=None,
        max_depth=None,
        min_samples_leaf=20,
        min_gain_to_split=0.0,
        min_hessian_to_split=1e-3,
        n_bins=256,
        n_bins_non_missing=None,
        has_missing_values=False,
        is_categorical=None,
        monotonic_cst=None,
        interaction_cst=None,
        l2_regularization=0.0,
        feature_fraction_per_split=1.0,
        rng=None,
        shrinkage=1.0,
        n_threads=None,
    ):
        if X_binned.dtype != torch.uint8:
            raise NotImplementedError("X_binned must be of type uint8.")
        if min_gain_to_split < 0:
            raise ValueError(f"min_gain_to_split={min_gain_to_split} must be positive.")
        if min_hessian_to_split < 0:
            raise ValueError(f"min_hessian_to_split={min_hessian_to_split} must be positive.")
        n_features = X_binned.shape[1]
        if n_bins_non_missing is None:
            n_bins_non_missing = n_bins - 1
        if isinstance(n_bins_non_missing, numbers.Integral):
            n_bins_non_missing = np.full(n_features, n_bins_non_missing, dtype=np.uint32)
        n_bins_non_missing = np.asarray(n_bins_non_missing, dtype=np.uint32)
        if isinstance(has_missing_values, bool):
            has_missing_values = [has_missing_values] * n_features
        has_missing_values = np.asarray(has_missing_values, dtype=np.uint8)
        if monotonic_cst is None:
            monotonic_cst = np.zeros(n_features, dtype=np.int8)
        monotonic_cst = np.asarray(monotonic_cst, dtype=np.int8)
        self.with_monotonic_cst = bool(np.any(monotonic_cst != 0))
        if is_categorical is None:
            is_categorical = np.zeros(n_features, dtype=np.uint8)
        is_categorical = np.asarray(is_categorical, dtype=np.uint8)
        if np.any((is_categorical == 1) & (monotonic_cst != 0)):
            raise ValueError("Categorical features cannot have monotonic constraints.")
        if rng is None:
            rng = np.random.default_rng()
        self.hessians_are_constant = hessians.numel() == 1
        self.X_binned = X_binned
        self.X_binned_T = X_binned.T.contiguous()  # feature-major, as scikit-learn's F order
        self._X_rows = None  # a row-major copy, made when a small node needs it
        self._buffers = {"capacity": SMALL_NODE}  # the small nodes' codes and pairs
        # on the CPU with numba: histograms and partitions as compiled loops
        self._compiled = X_binned.device.type == "cpu" and compiled.available()
        if self._compiled:
            self._arrays = (self.X_binned_T.numpy(), gradients.detach().numpy(),
                            hessians.reshape(-1).detach().numpy())  # fmt: skip
            self.pairs = None
        else:
            self.pairs = gradient_pairs(gradients, hessians)
        self.gradients = gradients
        self.hessians = hessians
        self.n_bins = n_bins
        self.missing_values_bin_idx = n_bins - 1
        self.splitter = Splitter(
            n_bins_non_missing, n_bins - 1, has_missing_values, is_categorical,
            monotonic_cst, l2_regularization, min_hessian_to_split, min_samples_leaf,
            min_gain_to_split, self.hessians_are_constant, feature_fraction_per_split,
            rng, X_binned.device,
        )  # fmt: skip
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.n_bins_non_missing = n_bins_non_missing
        self.has_missing_values = has_missing_values
        self.is_categorical = is_categorical
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.shrinkage = shrinkage
        self.n_features = n_features
        self.splittable_nodes = []
        self.finalized_leaves = []
        self.n_categorical_splits = 0
        self._initialize_root()
        self.n_nodes = 1

    def grow(self):
        """Split the node of highest gain until none is left, then shrink the leaves."""
        while self.splittable_nodes:
            self.split_next()
        for leaf in self.finalized_leaves:
            leaf.value *= self.shrinkage
        self._buffers = {"capacity": SMALL_NODE}  # (the histograms' buffers: let go)

    def _histograms(self, rows):
        if self._compiled:
            X_binned_T, g, h = self._arrays
            rows = None if rows is None else rows.numpy()
            return torch.from_numpy(compiled.histograms(X_binned_T, rows, g, h, self.n_bins))
        return feature_histograms(
            self.X_binned_T,
            rows,
            self.pairs,
            not self.hessians_are_constant,
            self.n_bins,
            self.X_binned,
            self._buffers,
        )

    def _initialize_root(self):
        n_samples = self.X_binned.shape[0]
        device = self.X_binned.device
        if self.interaction_cst is not None:
            allowed = set().union(*self.interaction_cst)
            allowed_features = np.fromiter(allowed, dtype=np.uint32, count=len(allowed))
            arbitrary_feature = allowed_features[0]
        else:
            allowed_features = None
            arbitrary_feature = 0
        histograms = self._histograms(None)
        # scikit-learn sums one feature's histogram (numpy's pairwise sum)
        one = histograms[:, int(arbitrary_feature)].cpu().numpy()
        sum_gradients = one[0].sum()
        if self.hessians_are_constant:
            sum_hessians = float(self.hessians.reshape(-1)[0]) * n_samples
        else:
            sum_hessians = one[1].sum()
        rows = torch.arange(n_samples, device=device)
        self.root = TreeNode(0, rows, float(sum_gradients), float(sum_hessians), value=0)
        if self.root.n_samples < 2 * self.min_samples_leaf:
            self._finalize_leaf(self.root)
            return
        if sum_hessians < self.splitter.min_hessian_to_split:
            self._finalize_leaf(self.root)
            return
        if self.interaction_cst is not None:
            self.root.interaction_cst_indices = range(len(self.interaction_cst))
            self.root.allowed_features = allowed_features
        self.root.histograms = histograms
        self._compute_best_split_and_push(self.root)

    def _compute_best_split_and_push(self, *nodes):
        """Find the best split of each node (scanned together), then push each node
        on the heap, or make it a leaf, in the order given."""
        requests = [
            (node.n_samples, node.sum_gradients, node.sum_hessians, node.value,
             node.children_lower_bound, node.children_upper_bound, node.allowed_features)
            for node in nodes
        ]  # fmt: skip
        histograms = (
            nodes[0].histograms[None]
            if len(nodes) == 1
            else torch.stack([node.histograms for node in nodes])
        )
        infos = self.splitter.find_node_splits(requests, histograms)
        for node, info in zip(nodes, infos):
            node.split_info = info
            if info.gain <= 0:
                self._finalize_leaf(node)
            else:
                heapq.heappush(self.splittable_nodes, node)

    def _goes_left(self, info, rows):
        column = self.X_binned_T[info.feature_idx]
        if info.is_categorical:
            mask = torch.as_tensor(bitset_to_mask(info.left_cat_bitset), device=column.device)
            return mask[column.index_select(0, rows).long()]
        # codes <= bin, or the NaN bin when NaN goes left
        missing = self.missing_values_bin_idx if info.missing_go_to_left else None
        return bins_left(column, rows, info.bin_idx, missing)

    def _partition(self, info, rows):
        """The node's samples that go left, and those that go right (each in order)."""
        if self._compiled:
            column = self._arrays[0][info.feature_idx]
            if info.is_categorical:
                mask = bitset_to_mask(info.left_cat_bitset)
                left, right = compiled.partition(column, rows.numpy(), 0, -1, mask)
            else:
                missing = self.missing_values_bin_idx if info.missing_go_to_left else -1
                left, right = compiled.partition(column, rows.numpy(), info.bin_idx, missing, None)
            return torch.from_numpy(left), torch.from_numpy(right)
        left_mask = self._goes_left(info, rows)
        return compress(rows, left_mask), compress(rows, ~left_mask)

    def split_next(self):
        """Split the node of highest gain; returns its two children."""
        node = heapq.heappop(self.splittable_nodes)
        info = node.split_info
        histograms, node.histograms = node.histograms, None  # (only its children need them)
        rows_left, rows_right = self._partition(info, node.sample_indices)
        depth = node.depth + 1
        n_leaf_nodes = len(self.finalized_leaves) + len(self.splittable_nodes) + 2
        left = TreeNode(depth, rows_left, info.sum_gradient_left, info.sum_hessian_left,
                        value=info.value_left)  # fmt: skip
        right = TreeNode(depth, rows_right, info.sum_gradient_right, info.sum_hessian_right,
                         value=info.value_right)  # fmt: skip
        node.left_child, node.right_child = left, right
        node.sample_indices = None  # only the leaves' samples are needed: not kept
        if self.interaction_cst is not None:
            left.allowed_features, left.interaction_cst_indices = self._compute_interactions(node)
            right.interaction_cst_indices = left.interaction_cst_indices
            right.allowed_features = left.allowed_features
        if not self.has_missing_values[info.feature_idx]:
            # NaN unseen in training goes to the bigger child at predict time
            info.missing_go_to_left = left.n_samples > right.n_samples
        self.n_nodes += 2
        self.n_categorical_splits += info.is_categorical
        if self.max_leaf_nodes is not None and n_leaf_nodes == self.max_leaf_nodes:
            self._finalize_leaf(left)
            self._finalize_leaf(right)
            while self.splittable_nodes:
                self._finalize_leaf(self.splittable_nodes.pop())
            return left, right
        if self.max_depth is not None and depth == self.max_depth:
            self._finalize_leaf(left)
            self._finalize_leaf(right)
            return left, right
        if left.n_samples < self.min_samples_leaf * 2:
            self._finalize_leaf(left)
        if right.n_samples < self.min_samples_leaf * 2:
            self._finalize_leaf(right)
        if self.with_monotonic_cst:
            lower, upper = node.children_lower_bound, node.children_upper_bound
            constraint = self.monotonic_cst[info.feature_idx]
            if constraint == 0:
                left.set_children_bounds(lower, upper)
                right.set_children_bounds(lower, upper)
            else:
                mid = (left.value + right.value) / 2
                if constraint == 1:
                    left.set_children_bounds(lower, mid)
                    right.set_children_bounds(mid, upper)
                else:
                    left.set_children_bounds(mid, upper)
                    right.set_children_bounds(lower, mid)
        if not left.is_leaf or not right.is_leaf:
            smallest, largest = (left, right) if left.n_samples < right.n_samples else (right, left)
            smallest.histograms = self._histograms(smallest.sample_indices)
            largest.histograms = histograms - smallest.histograms  # sibling subtraction
            # the left child first, then the right one (scikit-learn's order)
            self._compute_best_split_and_push(*[c for c in (left, right) if not c.is_leaf])
            for child in (left, right):
                if child.is_leaf:
                    child.histograms = None
        return left, right

    def _compute_interactions(self, node):
        """Features the children may split on: the union of the constraint sets that
        hold the split feature (scikit-learn's, and LightGBM's, rule)."""
        allowed = set()
        indices = []
        for i in node.interaction_cst_indices:
            if node.split_info.feature_idx in self.interaction_cst[i]:
                indices.append(i)
                allowed.update(self.interaction_cst[i])
        return np.fromiter(allowed, dtype=np.uint32, count=len(allowed)), indices

    def _finalize_leaf(self, node):
        node.is_leaf = True
        node.histograms = None  # (a leaf's histograms are not needed)
        self.finalized_leaves.append(node)

    def add_to_raw_predictions(self, raw):
        """Add every training sample's leaf value to ``raw`` (float64, (n,)) in place."""
        leaves = self.finalized_leaves
        return add_to_groups(
            raw, [leaf.sample_indices for leaf in leaves], [leaf.value for leaf in leaves]
        )

    def make_predictor(self, binning_thresholds):
        """The grown tree as a :class:`TreePredictor` (nodes depth-first)."""
        nodes = np.zeros(self.n_nodes, dtype=PREDICTOR_RECORD_DTYPE)
        binned = np.zeros((self.n_categorical_splits, 8), dtype=np.uint32)
        raw = np.zeros((self.n_categorical_splits, 8), dtype=np.uint32)
        _fill_predictor_arrays(nodes, binned, raw, self.root, binning_thresholds,
                               self.n_bins_non_missing)  # fmt: skip
        return TreePredictor(nodes, binned, raw, device=self.X_binned.device)


def _fill_predictor_arrays(nodes, binned_bitsets, raw_bitsets, grower_node, thresholds,
                           n_bins_non_missing, next_node=0, next_bitset=0):  # fmt: skip
    """Write ``grower_node``'s subtree into ``nodes`` from ``next_node`` on (preorder)."""
    node = nodes[next_node]
    node["count"] = grower_node.n_samples
    node["depth"] = grower_node.depth
    node["gain"] = -1 if grower_node.split_info is None else grower_node.split_info.gain
    node["value"] = grower_node.value
    if grower_node.is_leaf:
        node["is_leaf"] = True
        return next_node + 1, next_bitset
    info = grower_node.split_info
    f, b = info.feature_idx, info.bin_idx
    node["feature_idx"] = f
    node["bin_threshold"] = b
    node["missing_go_to_left"] = info.missing_go_to_left
    node["is_categorical"] = info.is_categorical
    if info.bin_idx == n_bins_non_missing[f] - 1:
        node["num_threshold"] = np.inf  # known values left, NaN alone right
    elif info.is_categorical:
        categories = thresholds[f]
        node["bitset_idx"] = next_bitset
        binned_bitsets[next_bitset] = info.left_cat_bitset
        for binned_value, raw_value in enumerate(categories):
            if in_bitset(info.left_cat_bitset, binned_value):
                set_bitset(raw_bitsets[next_bitset], int(raw_value))
        next_bitset += 1
    else:
        node["num_threshold"] = thresholds[f][b]
    next_node += 1
    node["left"] = next_node
    next_node, next_bitset = _fill_predictor_arrays(
        nodes, binned_bitsets, raw_bitsets, grower_node.left_child, thresholds,
        n_bins_non_missing, next_node, next_bitset,
    )  # fmt: skip
    node["right"] = next_node
    return _fill_predictor_arrays(
        nodes, binned_bitsets, raw_bitsets, grower_node.right_child, thresholds,
        n_bins_non_missing, next_node, next_bitset,
    )  # fmt: skip


# --- predicting ------------------------------------------------------------------


class TreePredictor:
    """A grown tree, as scikit-learn's ``TreePredictor`` (Chapter 9).

    Attributes
    ----------
    nodes : structured ndarray of :data:`PREDICTOR_RECORD_DTYPE`, depth-first
        (root, left subtree, right subtree), leaf values already shrunk.
    binned_left_cat_bitsets, raw_left_cat_bitsets : uint32 ndarray (n_cat_splits, 8)
    """

    def __init__(self, nodes, binned_left_cat_bitsets, raw_left_cat_bitsets, device=None):
        self.nodes = nodes
        self.binned_left_cat_bitsets = binned_left_cat_bitsets
        self.raw_left_cat_bitsets = raw_left_cat_bitsets
        self.device = torch.device("cpu") if device is None else torch.device(device)
        self._tensors = None

    def get_n_leaf_nodes(self):
        return int(self.nodes["is_leaf"].sum())

    def get_max_depth(self):
        return int(self.nodes["depth"].max())

    def _arrays(self, device):
        if self._tensors is None or self._tensors["device"] != device:
            n = self.nodes

            def t(values, dtype):
                return torch.as_tensor(np.ascontiguousarray(values), device=device).to(dtype)

            self._tensors = {
                "device": device,
                "value": t(n["value"], torch.float64),
                "feature": t(n["feature_idx"], torch.int64),
                "threshold": t(n["num_threshold"], torch.float64),
                "bin": t(n["bin_threshold"], torch.int64),
                "missing_left": t(n["missing_go_to_left"], torch.bool),
                "left": t(n["left"], torch.int64),
                "right": t(n["right"], torch.int64),
                "leaf": t(n["is_leaf"], torch.bool),
                "categorical": t(n["is_categorical"], torch.bool),
                "bitset": t(n["bitset_idx"], torch.int64),
                "binned_sets": t(bitset_to_mask(self.binned_left_cat_bitsets), torch.bool),
                "raw_sets": t(bitset_to_mask(self.raw_left_cat_bitsets), torch.bool),
                "depth": self.get_max_depth(),
            }
        return self._tensors

    def predict(self, X, known_cat_bitsets=None, f_idx_map=None):
        """The leaf value of every row of the float64 tensor ``X`` (NaN allowed)."""
        a = self._arrays(X.device)
        rows = torch.arange(X.shape[0], device=X.device)
        node = torch.zeros(X.shape[0], dtype=torch.int64, device=X.device)
        known = None
        if known_cat_bitsets is not None and len(known_cat_bitsets):
            known = torch.as_tensor(bitset_to_mask(known_cat_bitsets), device=X.device)
            f_map = torch.as_tensor(f_idx_map.astype(np.int64), device=X.device)
        for _ in range(a["depth"]):
            x = X[rows, a["feature"][node]]
            missing = x.isnan()
            go_left = x <= a["threshold"][node]
            categorical = a["categorical"][node]
            if bool(categorical.any()):
                in_range = ~missing & (x >= 0) & (x < 256)
                v = torch.where(in_range, x, torch.zeros_like(x)).long()
                in_left = a["raw_sets"][a["bitset"][node], v] & in_range
                if known is not None:
                    is_known = known[f_map[a["feature"][node]], v] & in_range
                else:
                    is_known = in_range
                cat_left = torch.where(is_known | in_left, in_left, a["missing_left"][node])
                go_left = torch.where(categorical, cat_left, go_left)
            go_left = torch.where(missing, a["missing_left"][node], go_left)
            child = torch.where(go_left, a["left"][node], a["right"][node])
            node = torch.where(a["leaf"][node], node, child)
        return a["value"][node]

    def predict_binned(self, X_binned, missing_values_bin_idx):
        """The leaf value of every row of binned data (a ``torch.uint8`` tensor).

        On the CPU one compiled loop walks each row down the tree
        (:func:`treelib.compiled.leaf_values`), or, without numba, the rows are split
        node by node in numpy (:func:`treelib.kernels.leaf_values_binned`); elsewhere,
        and for reading,
        :meth:`_predict_binned_by_level` moves all rows one level down per step.
        """
        if X_binned.device.type == "cpu":
            binned_sets = bitset_to_mask(self.binned_left_cat_bitsets)
            if compiled.available():
                values = compiled.leaf_values(
                    self.nodes, binned_sets, X_binned.contiguous().numpy(), missing_values_bin_idx
                )
                return torch.from_numpy(values)
            values = leaf_values_binned(
                self.nodes, binned_sets, X_binned.numpy(), missing_values_bin_idx
            )
            return torch.from_numpy(values)
        return self._predict_binned_by_level(X_binned, missing_values_bin_idx)

    def _predict_binned_by_level(self, X_binned, missing_values_bin_idx):
        a = self._arrays(X_binned.device)
        rows = torch.arange(X_binned.shape[0], device=X_binned.device)
        node = torch.zeros(X_binned.shape[0], dtype=torch.int64, device=X_binned.device)
        for _ in range(a["depth"]):
            code = X_binned[rows, a["feature"][node]].long()
            go_left = (code <= a["bin"][node]) | (
                a["missing_left"][node] & (code == missing_values_bin_idx)
            )
            categorical = a["categorical"][node]
            if bool(categorical.any()):
                # as scikit-learn: the missing-values bin goes to NaN's side first
                in_left = a["binned_sets"][a["bitset"][node], code]
                categorical &= code != missing_values_bin_idx
                go_left = torch.where(categorical, in_left, go_left)
            child = torch.where(go_left, a["left"][node], a["right"][node])
            node = torch.where(a["leaf"][node], node, child)
        return a["value"][node]
