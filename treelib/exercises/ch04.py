"""Chapter 4's checkers: entropy and information gain.

Introduced in Chapter 4.
"""

import math

import torch

from ..criteria import entropy, gini
from ._framework import (
    FIXED_COUNTS,
    LN2,
    NORMALISE,
    _as_float,
    _Case,
    _compare_float,
    _counts,
    _first_match,
    _random_counts,
    _run_cases,
    case_seed,
)

ENTROPY_HINTS = {
    "nan": "A class with zero count gave 0 * log2(0) = nan; by convention 0 * log 0 = 0. Keep "
    "only the non-zero proportions (p = p[p > 0]) or use torch.special.xlogy(p, p).",
    "ln": "You used the natural log; entropy in bits needs log base 2 (torch.log2).",
    "log10": "You used log10; entropy in bits needs log base 2 (torch.log2).",
    "sign": "Forgot the minus sign: entropy is -sum(p * log2(p)), never negative.",
    "gini": "That is the Gini impurity; entropy is -sum(p * log2(p)).",
}


def _entropy_hint(args, got, expected):
    counts, g, h = args[0], _as_float(got), ENTROPY_HINTS
    if math.isnan(g) and bool((counts == 0).any()):
        return h["nan"]
    return _first_match(
        g,
        [
            (expected * LN2, h["ln"]),
            (expected * math.log10(2.0), h["log10"]),
            (-expected, h["sign"]),
            (gini(counts), h["gini"]),
            (-torch.special.xlogy(counts, counts).sum() / LN2, NORMALISE),
        ],
    )


def check_entropy(fn):
    """Check ``entropy(counts)``, the exercise of Chapter 4.

    ``fn`` takes a 1-D float64 tensor of class counts and returns the Shannon
    entropy in bits ``-sum_k p_k log2 p_k`` (with ``0 log 0 = 0``) as a float or
    0-d tensor.

    Examples
    --------
    >>> import torch
    >>> def my_entropy(counts):
    ...     p = counts / counts.sum()
    ...     p = p[p > 0]
    ...     return -(p * torch.log2(p)).sum()
    >>> check_entropy(my_entropy)
    check_entropy: all 18 cases passed. Well done!
    True
    """
    rng = torch.Generator().manual_seed(case_seed(6))
    inputs = [_counts(c) for c in FIXED_COUNTS] + _random_counts(rng, 8)
    cases = [_Case((c,), float(entropy(c)) + 0.0) for c in inputs]
    return _run_cases("entropy", fn, cases, _compare_float, _entropy_hint)


FIXED_GAINS = [([5, 0], [0, 5]), ([4, 1], [1, 4]), ([2, 2], [1, 1]), ([1, 0], [8, 3])]
FIXED_GAINS += [([6, 0], [1, 2]), ([3, 1, 0], [0, 1, 4]), ([7, 1], [1, 3])]
GAIN_HINTS = {
    "unweighted": "You averaged the children equally; weight each child by its share of the "
    "samples: H(parent) - n_L/n * H(L) - n_R/n * H(R).",
    "gini": "You used the Gini impurity; information gain uses the entropy in bits.",
    "children": "That is the children's weighted entropy; the gain is H(parent) minus it.",
    "sign": "Wrong way round: the gain is H(parent) minus the children's weighted entropy.",
    "counts": "Weight each child by its fraction n_L / n of the samples, not by its count n_L.",
}


def _gain_parts(parent, left, right):
    """Parent's and children's entropies, and the children's shares of the samples."""
    n = float(parent.sum())
    h = [float(entropy(c)) for c in (parent, left, right)]
    return h, float(left.sum()) / n, float(right.sum()) / n


def _reference_gain(parent, left, right):
    (hp, hl, hr), wl, wr = _gain_parts(parent, left, right)
    return hp - wl * hl - wr * hr + 0.0


def _gain_hint(args, got, expected):
    (parent, left, right), g, h = args, _as_float(got), GAIN_HINTS
    if math.isnan(g):
        return ENTROPY_HINTS["nan"]
    (hp, hl, hr), wl, wr = _gain_parts(parent, left, right)
    n = float(parent.sum())
    return _first_match(
        g,
        [
            (hp - (hl + hr) / 2, h["unweighted"]),
            (expected * LN2, ENTROPY_HINTS["ln"]),
            (gini(parent) - wl * gini(left) - wr * gini(right), h["gini"]),
            (wl * hl + wr * hr, h["children"]),
            (-expected, h["sign"]),
            (hp - n * (wl * hl + wr * hr), h["counts"]),
        ],
    )


def check_information_gain(fn):
    """Check ``information_gain(parent_counts, left_counts, right_counts)`` (Chapter 4).

    ``fn`` takes three 1-D float64 tensors of class counts and returns the
    information gain in bits ``H(parent) - n_L/n H(left) - n_R/n H(right)``.

    Examples
    --------
    >>> from treelib import entropy
    >>> def my_information_gain(parent, left, right):
    ...     n = parent.sum()
    ...     children = left.sum() / n * entropy(left) + right.sum() / n * entropy(right)
    ...     return entropy(parent) - children
    >>> check_information_gain(my_information_gain)
    check_information_gain: all 15 cases passed. Well done!
    True
    """
    rng = torch.Generator().manual_seed(case_seed(7))
    pairs = [(_counts(a), _counts(b)) for a, b in FIXED_GAINS]
    for _ in range(8):
        k = int(torch.randint(2, 5, (), generator=rng))
        left, right = (torch.randint(0, 9, (k,), generator=rng).double() for _ in "lr")
        pairs.append((left + (left.sum() == 0), right + (right.sum() == 0)))  # never empty
    cases = [_Case((a + b, a, b), _reference_gain(a + b, a, b)) for a, b in pairs]
    return _run_cases("information_gain", fn, cases, _compare_float, _gain_hint)
