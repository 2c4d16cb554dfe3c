"""Compiled loops: Chapter 9's histogram grower on the CPU, as scikit-learn's Cython does it.

Introduced in Chapter 9 (``notebooks/09_hist_gradient_boosting``, "How fast").
The grower (:mod:`treelib.hist_grower`) says *what* a split does: send a node's
samples left or right, build the smaller child's histograms, scan every
feature's bins for the best second-order gain. On the GPU, and for reading, it
does each step in a few torch and numpy operations over whole arrays
(:mod:`treelib.kernels`). On the CPU a node of a few hundred samples costs
dozens of such calls, each a few microseconds of set-up, and a histogram built
that way first writes an index array as long as the node's cells. Here each
step is one loop, compiled by `numba <https://numba.pydata.org>`_ when it is
installed: a node's samples are read once, straight into the three running
sums of their bins, as scikit-learn's Cython loops do (``histogram.pyx``, and
``splitting.pyx``: ``find_node_split`` for the scan of a numeric feature's bins,
``split_indices`` for the samples, which it splits in place). A categorical
feature's scan stays in numpy.

The grower's loops (histograms, partition, numeric scan, and the walk of a row down
a tree) do the same floating-point operations in the same order as the array
versions (``tests/test_compiled.py`` and ``tests/test_kernels.py`` check each pair
bit for bit): given the same gradients, the trees are the same with or without
them. Without numba, or with the environment variable ``TREELIB_COMPILED=0``,
:func:`available` is False and the grower uses the array versions.

The binary log-loss and its gradients (:class:`treelib.hist_gradient_boosting.HalfBinomialLoss`)
are compiled too, with scikit-learn's formulas. numba's ``exp`` and ``log`` are the C
library's (numba without Intel's SVML), as in scikit-learn's Cython; torch's vectorized
``exp`` differs from it in the last bit for about one input in two hundred (measured on
an x86 CPU). So on the CPU with numba the gradients are scikit-learn's bit for bit;
without it they may differ in the last place, and so may a binary classifier's scores.
"""

import math
import os

import numpy as np

_STATE = {}


def available():
    """Whether the compiled loops are used: numba imports and ``TREELIB_COMPILED`` is not ``0``."""
    if "ok" not in _STATE:
        _STATE["ok"] = os.environ.get("TREELIB_COMPILED", "1") != "0" and _compile()
    return _STATE["ok"]


def _compile():
    try:
        import numba
    except ImportError:
        return False
    jit = numba.njit(cache=True, nogil=True, boundscheck=False)
    # the scan calls the gain by this module's name: compiled first, inlined
    globals()["_gain"] = numba.njit(inline="always")(_candidate_gain)
    _STATE["histograms"] = jit(histograms_loop)
    _STATE["scan"] = jit(scan_numeric_loop)
    _STATE["partition"] = jit(partition_loop)
    _STATE["leaf_values"] = jit(leaf_values_loop)
    _STATE["binomial_loss"] = jit(binomial_loss_loop)
    _STATE["binomial_gradients"] = jit(binomial_gradients_loop)
    return True


def histograms(X_binned_T, rows, gradients, hessians, n_bins):
    """A node's histograms, (3, n_features, n_bins) float64: ``[sum_g, sum_h, count]``.

    ``X_binned_T``: uint8 (n_features, n_samples); ``rows``: int64 sample indices
    (None: every sample); ``gradients``, ``hessians``: float32 numpy arrays,
    ``hessians`` of length 1 when constant (then the hessian row is the count, as
    :func:`treelib.hist_grower.feature_histograms` gives it).
    """
    # each bin's three sums side by side while adding (one cache line), as scikit-learn's
    hist = np.zeros((X_binned_T.shape[0], n_bins, 3), dtype=np.float64)
    all_rows = rows is None
    rows = np.empty(0, dtype=np.int64) if all_rows else rows
    _STATE["histograms"](X_binned_T, rows, all_rows, gradients, hessians, hist)
    return np.ascontiguousarray(hist.transpose(2, 0, 1))


def histograms_loop(X_binned_T, rows, all_rows, gradients, hessians, hist):
    """Add each sample's gradient, hessian and 1 into its bin of every feature, in
    the order of ``rows`` (float64 sums of float32 values, as scikit-learn's)."""
    n_features = X_binned_T.shape[0]
    m = X_binned_T.shape[1] if all_rows else rows.shape[0]
    constant = hessians.shape[0] == 1
    g = np.empty(m, dtype=np.float64)
    h = np.empty(m, dtype=np.float64)
    for i in range(m):  # the node's gradients, gathered once for every feature
        r = i if all_rows else rows[i]
        g[i] = gradients[r]
        h[i] = 1.0 if constant else hessians[r]
    for f in range(n_features):
        codes = X_binned_T[f]
        sums = hist[f]
        if all_rows:
            for i in range(m):
                b = codes[i]
                sums[b, 0] += g[i]
                sums[b, 1] += h[i]
                sums[b, 2] += 1.0
        else:
            for i in range(m):
                b = codes[rows[i]]
                sums[b, 0] += g[i]
                sums[b, 1] += h[i]
                sums[b, 2] += 1.0


def partition(column, rows, bin_idx, missing_bin, categories):
    """The node's ``rows`` split in two, each in its order: those whose code in
    ``column`` goes left, and the others.

    Numeric split: code ``<= bin_idx``, or ``== missing_bin`` (``-1``: NaN goes
    right). Categorical split: ``categories`` (bool, 256) holds the left codes.
    """
    left = np.empty(rows.shape[0], dtype=np.int64)
    right = np.empty(rows.shape[0], dtype=np.int64)
    is_categorical = categories is not None
    categories = np.zeros(1, dtype=np.bool_) if categories is None else categories
    n_left, n_right = _STATE["partition"](
        column, rows, bin_idx, missing_bin, is_categorical, categories, left, right
    )
    # (copies of the exact length: a leaf keeps its samples, not the whole buffer)
    return left[:n_left].copy(), right[:n_right].copy()


def partition_loop(column, rows, bin_idx, missing_bin, is_categorical, categories, left, right):
    n_left = n_right = 0
    for i in range(rows.shape[0]):
        r = rows[i]
        code = column[r]
        if is_categorical:
            goes_left = categories[code]
        else:
            goes_left = code <= bin_idx or code == missing_bin
        if goes_left:
            left[n_left] = r
            n_left += 1
        else:
            right[n_right] = r
            n_right += 1
    return n_left, n_right


def scan_numeric(hist, totals, loss_current_node, lower, upper, monotonic, allowed,
                 any_missing, min_samples_leaf, min_hessian_to_split, min_gain_to_split,
                 l2_regularization):  # fmt: skip
    """Both scans of every feature of every node: the best candidate per (node, feature).

    ``hist``: (k, 3, n_features, n_bins) float64; ``totals``: (k, 3) each node's
    ``[G, H, n]``; ``loss_current_node``, ``lower``, ``upper``: (k,); ``allowed``:
    (2, n_features, width) the candidates of each scan (the right-to-left one
    stored from the highest bin down). Returns the arrays of
    :meth:`treelib.hist_grower.Splitter._scan_numeric`: gain (``-1`` without a
    valid split), bin, missing_left, g_left, h_left, n_left, each (k, n_features).
    """
    k, n_features = hist.shape[0], hist.shape[2]
    out = np.empty((5, k, n_features), dtype=np.float64)
    bins = np.empty((k, n_features), dtype=np.int64)
    missing_left = np.zeros((k, n_features), dtype=np.bool_)
    _STATE["scan"](
        hist, totals, loss_current_node, lower, upper, monotonic, allowed, any_missing,
        float(min_samples_leaf), min_hessian_to_split, max(min_gain_to_split, -1.0),
        l2_regularization, out, bins, missing_left,
    )  # fmt: skip
    return out[0], bins, missing_left, out[1], out[2], out[3]


def _candidate_gain(g_l, h_l, n_l, total_g, total_h, most, min_samples_leaf,
                    min_hessian_to_split, loss_current_node, cst, lower, upper, l2):  # fmt: skip
    """The gain of one candidate from its left child's sums, ``-inf`` when the candidate
    is not allowed: :meth:`treelib.hist_grower.Splitter._scan_numeric`'s rules and
    :func:`treelib.hist_grower.split_gain`'s operations."""
    g_r, h_r = total_g - g_l, total_h - h_l
    if n_l < min_samples_leaf or n_l > most:
        return -np.inf
    if h_l < min_hessian_to_split or h_r < min_hessian_to_split:
        return -np.inf
    value_left = -g_l / (h_l + l2 + 1e-15)
    value_left = min(max(value_left, lower), upper)
    value_right = -g_r / (h_r + l2 + 1e-15)
    value_right = min(max(value_right, lower), upper)
    if (cst == 1 and value_left > value_right) or (cst == -1 and value_left < value_right):
        return -1.0
    return loss_current_node - g_l * value_left - g_r * value_right


_gain = _candidate_gain


def scan_numeric_loop(hist, totals, loss_current_node, lower, upper, monotonic, allowed,
                      any_missing, min_samples_leaf, min_hessian_to_split, min_gain,
                      l2, out, bins, missing_left):  # fmt: skip
    k, n_features = hist.shape[0], hist.shape[2]
    width = allowed.shape[2]
    for node in range(k):
        total_g, total_h, total_n = totals[node, 0], totals[node, 1], totals[node, 2]
        most = total_n - min_samples_leaf
        loss = loss_current_node[node]
        lo, hi = lower[node], upper[node]
        for f in range(n_features):
            cst = monotonic[f]
            sum_g, sum_h, count = hist[node, 0, f], hist[node, 1, f], hist[node, 2, f]
            # left to right: the left child holds bins 0..b (NaN goes right)
            best, best_bin = -np.inf, 0
            best_g = best_h = best_n = 0.0
            g_l = h_l = n_l = 0.0
            first = True
            for b in range(width):
                if first:
                    g_l, h_l, n_l = sum_g[b], sum_h[b], count[b]
                    first = False
                else:
                    g_l += sum_g[b]
                    h_l += sum_h[b]
                    n_l += count[b]
                if not allowed[0, f, b]:
                    continue
                gain = _gain(g_l, h_l, n_l, total_g, total_h, most, min_samples_leaf,
                             min_hessian_to_split, loss, cst, lo, hi, l2)  # fmt: skip
                if gain > min_gain and gain > best:
                    best, best_bin = gain, b
                    best_g, best_h, best_n = g_l, h_l, n_l
            ltr_score = max(best, -1.0)
            use_rtl = False
            if any_missing:
                # right to left: the right child holds the known bins above b, summed
                # from the end; NaN goes left (the left sums are the totals minus them)
                rtl_best, rtl_bin = -np.inf, 0
                rtl_g = rtl_h = rtl_n = 0.0
                r_g = r_h = r_n = 0.0
                for j in range(width):
                    if j == 1:
                        r_g, r_h, r_n = sum_g[width - 1], sum_h[width - 1], count[width - 1]
                    elif j > 1:
                        r_g += sum_g[width - j]
                        r_h += sum_h[width - j]
                        r_n += count[width - j]
                    if not allowed[1, f, j]:
                        continue
                    g_l, h_l, n_l = total_g - r_g, total_h - r_h, total_n - r_n
                    gain = _gain(g_l, h_l, n_l, total_g, total_h, most, min_samples_leaf,
                                 min_hessian_to_split, loss, cst, lo, hi, l2)  # fmt: skip
                    # (strictly better: among equal gains the first met, the highest bin)
                    if gain > min_gain and gain > rtl_best:
                        rtl_best, rtl_bin = gain, width - 1 - j
                        rtl_g, rtl_h, rtl_n = g_l, h_l, n_l
                use_rtl = rtl_best > ltr_score
                if use_rtl:
                    ltr_score = rtl_best
                    best_bin, best_g, best_h, best_n = rtl_bin, rtl_g, rtl_h, rtl_n
            out[0, node, f] = ltr_score
            out[1, node, f] = best_g
            out[2, node, f] = best_h
            out[3, node, f] = best_n
            bins[node, f] = best_bin
            missing_left[node, f] = use_rtl


def leaf_values(nodes, binned_sets, X_binned, missing_values_bin_idx):
    """Each row's leaf value: :func:`treelib.kernels.leaf_values_binned` as one loop
    that walks each row of the uint8 ``X_binned`` down the tree (scikit-learn's
    ``_predict_binned``)."""
    out = np.empty(X_binned.shape[0], dtype=np.float64)
    sets = binned_sets if len(binned_sets) else np.zeros((1, 256), dtype=np.bool_)
    _STATE["leaf_values"](
        np.ascontiguousarray(nodes["feature_idx"], dtype=np.int64),
        np.ascontiguousarray(nodes["bin_threshold"]),
        np.ascontiguousarray(nodes["missing_go_to_left"]),
        np.ascontiguousarray(nodes["is_categorical"]),
        np.ascontiguousarray(nodes["bitset_idx"]),
        np.ascontiguousarray(nodes["left"]),
        np.ascontiguousarray(nodes["right"]),
        np.ascontiguousarray(nodes["is_leaf"]),
        np.ascontiguousarray(nodes["value"]),
        sets, X_binned, missing_values_bin_idx, out,
    )  # fmt: skip
    return out


def leaf_values_loop(feature, bin_threshold, missing_left, categorical, bitset_idx, left,
                     right, is_leaf, value, binned_sets, X_binned, missing_bin, out):  # fmt: skip
    for i in range(X_binned.shape[0]):
        node = 0
        while not is_leaf[node]:
            code = X_binned[i, feature[node]]
            if code == missing_bin:  # NaN's side first, for a categorical split too
                goes_left = missing_left[node] != 0
            elif categorical[node]:
                goes_left = binned_sets[bitset_idx[node], code]
            else:
                goes_left = code <= bin_threshold[node]
            node = left[node] if goes_left else right[node]
        out[i] = value[node]


def binomial_loss(y, raw):
    """Each sample's half binomial loss, ``log(1 + exp(raw)) - y raw`` (float64 arrays)."""
    out = np.empty(raw.shape[0], dtype=np.float64)
    _STATE["binomial_loss"](y, raw, out)
    return out


def binomial_loss_loop(y, raw, out):
    """scikit-learn's ``closs_half_binomial``: its piecewise ``log1pexp``."""
    for i in range(raw.shape[0]):
        x = raw[i]
        if x <= -37:
            lpe = math.exp(x)
        elif x <= -2:
            lpe = math.log1p(math.exp(x))
        elif x <= 18:
            lpe = math.log(1.0 + math.exp(x))
        elif x <= 33.3:
            lpe = x + math.exp(-x)
        else:
            lpe = x
        out[i] = lpe - y[i] * x


def binomial_gradients(y, raw, weight, gradient, hessian):
    """Fill ``gradient`` and ``hessian`` (float32) with the half binomial loss's
    gradients and hessians, times ``weight`` (float64, or None)."""
    has_weight = weight is not None
    weight = np.ones(1, dtype=np.float64) if weight is None else weight
    _STATE["binomial_gradients"](y, raw, has_weight, weight, gradient, hessian)


def binomial_gradients_loop(y, raw, has_weight, weight, gradient, hessian):
    """scikit-learn's ``cgrad_hess_half_binomial`` (a first-order Taylor step below -37)."""
    for i in range(raw.shape[0]):
        x = raw[i]
        if x > -37:
            t = math.exp(-x)
            g = ((1 - y[i]) - y[i] * t) / (1 + t)
            h = t / (1 + t) ** 2
        else:
            h = math.exp(x)
            g = h - y[i]
        if has_weight:
            g *= weight[i]
            h *= weight[i]
        gradient[i] = g
        hessian[i] = h
