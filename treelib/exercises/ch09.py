"""Chapter 9's checkers: the second-order gain of a split, a node's children's
histograms by sibling subtraction, and a leaf-wise tree grown from histograms (the
capstone).

Introduced in Chapter 9.
"""

import functools

import numpy as np
import torch

from ..hist_grower import TreeGrower
from ._framework import _BadOutput, _Case, _fmt, _run_cases, case_seed

SECOND_ORDER_HINTS = {
    "parent": "Subtract the parent's term G^2 / (H + l2), with G = G_L + G_R and "
    "H = H_L + H_R: the gain is what the split adds over keeping the node whole.",
    "l2": "Add l2 to every sum of hessians in a denominator: G_L^2 / (H_L + l2), and the "
    "same for the right child and the parent.",
    "half": "No factor 1/2 here: the gain is G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2), "
    "as scikit-learn and treelib compute it.",
    "square": "Square the sums of gradients: G_L**2 / (H_L + l2), not G_L / (H_L + l2).",
}
HISTOGRAM_HINTS = {
    "swapped": "The two histograms are swapped: return (left, right), the left child's "
    "first (the samples where `left` is True).",
    "count": "Row 2 is the number of samples per bin: torch.bincount(codes, minlength=n_bins), "
    "as floats.",
    "shape": "Return two tensors of shape (3, n_bins): rows sum of g, sum of h, count.",
    "parent": "The larger child's histogram is the parent's MINUS the smaller child's; the "
    "parent's holds every sample of the node.",
}
TREE_HINTS = {
    "shape": "Return one value per sample: a float tensor of length n, each sample's leaf "
    "value -G / (H + l2).",
    "depthwise": "Split the leaf of LARGEST gain next, wherever it is (a heap, or a max over "
    "the current leaves), not level by level.",
    "sign": "A leaf's value is -G / (H + l2): minus the sum of gradients over the sum of "
    "hessians plus l2.",
    "rules": "Check the rules: a leaf with fewer than 2 * min_samples_leaf samples is not "
    "split; a split needs min_samples_leaf samples on each side and a positive gain.",
}
FIXED_GAINS_9 = [
    (1.0, 1.0, -1.5, 0.75, 1.0),  # Section 9.1's seven samples, worked by hand: 261/154
    (2.0, 1.0, -2.0, 1.0, 0.0),
    (0.5, 0.25, 0.5, 0.25, 0.0),  # both children alike: the gain is 0
    (-3.0, 2.0, 1.0, 4.0, 2.5),
]


def _reference_gain(g_left, h_left, g_right, h_right, l2):
    g, h = g_left + g_right, h_left + h_right
    return g_left**2 / (h_left + l2) + g_right**2 / (h_right + l2) - g**2 / (h + l2)


def _gain_cases():
    rng = np.random.RandomState(case_seed(9))
    cases = [tuple(float(v) for v in case) for case in FIXED_GAINS_9]
    for i in range(8):
        g_left, g_right = rng.normal(scale=3, size=2)
        h_left, h_right = rng.uniform(0.1, 5, size=2)
        cases.append((g_left, h_left, g_right, h_right, (0.0, 0.5, 1.0, 3.0)[i % 4]))
    return [tuple(float(v) for v in case) for case in cases]


def _as_number(got):
    if got is None:
        raise _BadOutput("returned None", "Did you forget the `return` statement?")
    if isinstance(got, torch.Tensor | np.ndarray) and got.size != 1 and got.numel() != 1:
        raise _BadOutput(f"returned {_fmt(got)}", "Return one number, the gain.")
    try:
        return float(got)
    except (TypeError, ValueError):
        raise _BadOutput(f"returned {_fmt(got)}", "Return one number, the gain.") from None


def _close(a, b):
    return abs(a - b) <= 1e-9 + 1e-9 * abs(b)


def _gain_hint(args, got, expected):
    got = _as_number(got)
    g_left, h_left, g_right, h_right, l2 = args
    g, h = g_left + g_right, h_left + h_right
    variants = [
        (expected + g**2 / (h + l2), "parent"),
        (_reference_gain(g_left, h_left, g_right, h_right, 0.0), "l2"),
        (expected / 2, "half"),
        (g_left / (h_left + l2) + g_right / (h_right + l2) - g / (h + l2), "square"),
    ]
    return next((SECOND_ORDER_HINTS[k] for v, k in variants if _close(got, v)), None)


def check_split_gain(fn):
    """Check ``split_gain(G_L, H_L, G_R, H_R, l2)``, an exercise of Chapter 9.

    ``fn`` takes the sums of the gradients and of the hessians of a split's left
    and right child and the regularisation ``l2`` (floats) and returns the
    second-order gain ``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)``, where
    ``G = G_L + G_R`` and ``H = H_L + H_R`` are the parent's sums.

    Examples
    --------
    >>> def my_split_gain(G_L, H_L, G_R, H_R, l2):
    ...     G, H = G_L + G_R, H_L + H_R
    ...     return G_L**2 / (H_L + l2) + G_R**2 / (H_R + l2) - G**2 / (H + l2)
    >>> check_split_gain(my_split_gain)
    check_split_gain: all 12 cases passed. Well done!
    True
    """
    cases = [_Case(args, _reference_gain(*args)) for args in _gain_cases()]
    return _run_cases(
        "split_gain", fn, cases, lambda got, exp: _close(_as_number(got), exp), _gain_hint
    )


# --- The children's histograms, one of them by subtraction ---


def _direct_histogram(codes, g, h, rows, n_bins):
    return torch.stack(
        [
            torch.bincount(codes[rows], weights=g[rows], minlength=n_bins),
            torch.bincount(codes[rows], weights=h[rows], minlength=n_bins),
            torch.bincount(codes[rows], minlength=n_bins).double(),
        ]
    )


@functools.lru_cache(maxsize=1)
def _histogram_data():
    rng = torch.Generator().manual_seed(case_seed(9))
    cases = []
    for i in range(8):
        n, n_bins = (6, 4) if i == 0 else (int(torch.randint(5, 300, (), generator=rng)), 4 + i)
        codes = torch.randint(0, n_bins, (n,), generator=rng)
        g = torch.randn(n, generator=rng, dtype=torch.float64)
        h = torch.rand(n, generator=rng, dtype=torch.float64) + 0.1
        left = torch.rand(n, generator=rng) < (0.3 if i % 2 else 0.7)
        left[0], left[-1] = True, False  # both children hold a sample
        cases.append((codes, g, h, left, n_bins))
    return tuple(cases)


def _as_pair(got, n_bins):
    if got is None:
        raise _BadOutput("returned None", "Did you forget the `return` statement?")
    if not isinstance(got, tuple | list) or len(got) != 2:
        raise _BadOutput(f"returned {_fmt(got)}", HISTOGRAM_HINTS["shape"])
    out = []
    for part in got:
        if not isinstance(part, torch.Tensor | np.ndarray) or tuple(part.shape) != (3, n_bins):
            raise _BadOutput(f"returned a part {_fmt(part)}", HISTOGRAM_HINTS["shape"])
        out.append(torch.as_tensor(part).detach().double())
    return out


def _same_pair(got, expected):
    return all(torch.allclose(a, b, rtol=1e-9, atol=1e-9) for a, b in zip(got, expected))


def _histogram_hint(args, got, expected):
    codes, g, h, left, n_bins = args
    got = _as_pair(got, n_bins)
    if _same_pair(got, expected[::-1]):
        return HISTOGRAM_HINTS["swapped"]
    if all(torch.allclose(a[:2], b[:2]) for a, b in zip(got, expected)):
        return HISTOGRAM_HINTS["count"]
    parent = _direct_histogram(codes, g, h, torch.arange(len(codes)), n_bins)
    small = 0 if int(left.sum()) < int((~left).sum()) else 1
    if torch.allclose(got[1 - small], parent + expected[small]):
        return HISTOGRAM_HINTS["parent"]
    return None


def check_child_histograms(fn):
    """Check ``child_histograms(codes, g, h, left, n_bins)``, an exercise of Chapter 9.

    ``codes`` (int64, length n) are the bins of one feature for a node's samples,
    ``g`` and ``h`` (float64) their gradients and hessians, ``left`` (bool) which
    samples go to the left child. Return ``(left_hist, right_hist)``, each a float
    tensor of shape (3, n_bins): per bin, the sum of ``g``, the sum of ``h`` and the
    count of the child's samples. Build the smaller child's from its samples and
    the larger child's as the parent's histogram minus it (sibling subtraction).

    Examples
    --------
    >>> import torch
    >>> def my_child_histograms(codes, g, h, left, n_bins):
    ...     def hist(rows):
    ...         return torch.stack([torch.bincount(codes[rows], g[rows], n_bins),
    ...                             torch.bincount(codes[rows], h[rows], n_bins),
    ...                             torch.bincount(codes[rows], minlength=n_bins).double()])
    ...     parent = hist(torch.ones_like(left))
    ...     if left.sum() <= (~left).sum():
    ...         small = hist(left)
    ...         return small, parent - small
    ...     small = hist(~left)
    ...     return parent - small, small
    >>> check_child_histograms(my_child_histograms)
    check_child_histograms: all 8 cases passed. Well done!
    True
    """
    cases = []
    for codes, g, h, left, n_bins in _histogram_data():
        expected = (
            _direct_histogram(codes, g, h, left, n_bins),
            _direct_histogram(codes, g, h, ~left, n_bins),
        )
        cases.append(_Case((codes, g, h, left, n_bins), expected))

    def compare(got, expected):
        return _same_pair(_as_pair(got, expected[0].shape[1]), expected)

    return _run_cases("child_histograms", fn, cases, compare, _histogram_hint)


# --- The capstone: a leaf-wise tree from histograms ---


@functools.lru_cache(maxsize=1)
def _tree_data():
    """Seeded binned data, gradients exact in float32 (so float32 and float64 sums agree)."""
    rng = np.random.RandomState(case_seed(9))
    cases = []
    for i in range(5):
        n, d, n_bins = 150 + 60 * i, 2 + i % 3, (8, 16, 32)[i % 3]
        X_binned = torch.from_numpy(rng.randint(0, n_bins, size=(n, d)).astype(np.uint8))
        g = torch.from_numpy(rng.normal(size=n).astype(np.float32)).double()
        h = torch.from_numpy(rng.uniform(0.1, 1.0, size=n).astype(np.float32)).double()
        settings = ((4, 10, 0.0), (8, 5, 1.0), (12, 8, 0.5), (3, 20, 0.0), (16, 4, 2.0))[i]
        cases.append((X_binned, g, h, *settings))
    return tuple(cases)


def _reference_tree(X_binned, g, h, max_leaf_nodes, min_samples_leaf, l2):
    n_bins_non_missing = (X_binned.max(0).values.long() + 1).numpy()
    grower = TreeGrower(
        X_binned, g.float(), h.float(), max_leaf_nodes=max_leaf_nodes,
        min_samples_leaf=min_samples_leaf, l2_regularization=l2,
        n_bins_non_missing=n_bins_non_missing,
    )  # fmt: skip
    grower.grow()
    return grower.add_to_raw_predictions(torch.zeros(len(g), dtype=torch.float64))


def _as_values(got, n):
    if got is None:
        raise _BadOutput("returned None", "Did you forget the `return` statement?")
    if not isinstance(got, torch.Tensor | np.ndarray) or tuple(got.shape) != (n,):
        raise _BadOutput(f"returned {_fmt(got)}", TREE_HINTS["shape"])
    return torch.as_tensor(got).detach().double()


def _tree_hint(args, got, expected):
    got = _as_values(got, len(args[1]))
    if torch.allclose(got, -expected, rtol=1e-6, atol=1e-9):
        return TREE_HINTS["sign"]
    n_leaves_got, n_leaves = len(torch.unique(got)), len(torch.unique(expected))
    if n_leaves_got == n_leaves:
        return TREE_HINTS["depthwise"]
    return TREE_HINTS["rules"]


def check_leafwise_tree(fn):
    """Check ``leafwise_tree(X_binned, g, h, max_leaf_nodes, min_samples_leaf, l2)``,
    the capstone exercise of Chapter 9.

    Grow one tree leaf-wise from histograms: ``X_binned`` (uint8, (n, d)) holds
    each sample's bin per feature, ``g`` and ``h`` (float64, length n) its gradient
    and hessian. A split of a node sends the samples with ``X_binned[:, f] <= b``
    left; its gain is ``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)``. Split the
    leaf of largest gain first, until ``max_leaf_nodes`` leaves; a leaf with fewer
    than ``2 * min_samples_leaf`` samples is not split, a split needs
    ``min_samples_leaf`` samples on each side and a positive gain. Return each
    sample's leaf value ``-G / (H + l2)`` (float, length n). Compared with
    ``treelib.hist_grower.TreeGrower`` on seeded tie-free data.

    Examples
    --------
    >>> import torch
    >>> def my_leafwise_tree(X_binned, g, h, max_leaf_nodes, min_samples_leaf, l2):
    ...     n, d = X_binned.shape
    ...     def best(rows):  # (gain, feature, bin) of a leaf's best split, or None
    ...         G, H, found = g[rows].sum(), h[rows].sum(), None
    ...         for f in range(d):
    ...             codes = X_binned[rows, f].long()
    ...             for b in range(int(codes.max())):
    ...                 left = codes <= b
    ...                 n_left = int(left.sum())
    ...                 if min(n_left, len(rows) - n_left) < min_samples_leaf:
    ...                     continue
    ...                 GL, HL = g[rows][left].sum(), h[rows][left].sum()
    ...                 gain = (GL**2 / (HL + l2) + (G - GL)**2 / (H - HL + l2)
    ...                         - G**2 / (H + l2))
    ...                 if gain > 0 and (found is None or gain > found[0]):
    ...                     found = (float(gain), f, b)
    ...         return found
    ...     leaves = [(torch.arange(n), None)]
    ...     while len(leaves) < max_leaf_nodes:
    ...         scored = [(best(r) if len(r) >= 2 * min_samples_leaf else None, r)
    ...                   for r, _ in leaves]
    ...         options = [(s, r) for s, r in scored if s is not None]
    ...         if not options:
    ...             break
    ...         (gain, f, b), rows = max(options, key=lambda o: o[0][0])
    ...         leaves = [(r, None) for r, _ in leaves if r is not rows]
    ...         left = X_binned[rows, f].long() <= b
    ...         leaves += [(rows[left], None), (rows[~left], None)]
    ...     out = torch.zeros(n, dtype=torch.float64)
    ...     for rows, _ in leaves:
    ...         out[rows] = -g[rows].sum() / (h[rows].sum() + l2)
    ...     return out
    >>> check_leafwise_tree(my_leafwise_tree)
    check_leafwise_tree: all 5 cases passed. Well done!
    True
    """
    cases = [_Case(args, _reference_tree(*args)) for args in _tree_data()]

    def compare(got, expected):
        return bool(torch.allclose(_as_values(got, len(expected)), expected, rtol=1e-6, atol=1e-9))

    return _run_cases("leafwise_tree", fn, cases, compare, _tree_hint)
