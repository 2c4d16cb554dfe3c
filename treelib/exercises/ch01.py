"""Chapter 1's checkers: Gini impurity and the best threshold.

Introduced in Chapter 1.
"""

import functools

import torch

from ..criteria import entropy, gini, target_stats
from ..split import best_split, midpoint
from ._framework import (
    FIXED_COUNTS,
    LN2,
    NORMALISE,
    _as_float,
    _Case,
    _close,
    _compare_float,
    _counts,
    _first_match,
    _random_counts,
    _run_cases,
    case_seed,
)

GINI_HINTS = {
    "sum_p2": "You returned sum(p**2); Gini impurity is 1 - sum(p**2).",
    "by_len": "Divide by the total count counts.sum(), not by len(counts).",
    "entropy": "That is the entropy; Gini impurity uses no logarithm: 1 - sum(p**2).",
    "error": "That is the error rate 1 - max(p); Gini impurity is 1 - sum(p**2).",
}


def _gini_hint(args, got, expected):
    counts, g, h = args[0], _as_float(got), GINI_HINTS
    p, q = counts / counts.sum(), counts / len(counts)
    return _first_match(
        g,
        [
            ((p * p).sum(), h["sum_p2"]),
            (1 - (counts * counts).sum(), NORMALISE),
            ((counts * counts).sum(), NORMALISE),
            (1 - (q * q).sum(), h["by_len"]),
            (entropy(counts), h["entropy"]),
            (entropy(counts) * LN2, h["entropy"]),
            (1 - p.max(), h["error"]),
        ],
    )


def check_gini(fn):
    """Check ``gini(counts)``, the exercise of Chapter 1.

    ``fn`` takes a 1-D float64 tensor of class counts and returns the Gini
    impurity ``1 - sum_k p_k**2`` (``p`` = proportions) as a float or 0-d tensor.
    Prints a verdict and returns True if every case passes.

    Examples
    --------
    >>> def my_gini(counts):
    ...     p = counts / counts.sum()
    ...     return 1 - (p**2).sum()
    >>> check_gini(my_gini)
    check_gini: all 18 cases passed. Well done!
    True
    """
    rng = torch.Generator().manual_seed(case_seed(1))
    inputs = [_counts(c) for c in FIXED_COUNTS] + _random_counts(rng, 8)
    cases = [_Case((c,), float(gini(c)) + 0.0) for c in inputs]  # + 0.0: no "-0.0"
    return _run_cases("gini", fn, cases, _compare_float, _gini_hint)


# --- Chapter 1: the best threshold ---

FIXED_SPLITS = [
    ([1, 2, 3, 4, 5, 6], [0, 0, 1, 1, 1, 1]),  # the worst split, 5.5, is far from the best
    ([3, 1, 4, 2], [1, 0, 1, 0]),
    ([1, 1, 2, 2, 3, 3], [0, 0, 0, 0, 1, 1]),
    ([6, 1, 4, 3, 5, 2], [1, 0, 1, 0, 1, 1]),  # equal-weight children would pick 1.5
    ([2, 5, 1, 6, 3, 4, 7], [0, 1, 0, 0, 0, 1, 1]),
    ([2.5, 3.0, 1.0, 1.5, 0.5, 2.0], [2, 2, 1, 2, 0, 2]),
    ([1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 0, 0, 1, 1, 1, 1]),
]
THRESHOLD_HINTS = {
    "unweighted": "You averaged the children's impurities equally; weight each by its share "
    "of the samples: (n_L * G_L + n_R * G_R) / n.",
    "worst": "That is the worst split: pick the threshold that MINIMISES the children's "
    "weighted Gini.",
    "neighbour": "Your threshold is one candidate away from the best: an off-by-one between "
    "the sorted position and the samples you count as left (x <= threshold).",
}


def _split_table(x, y):
    """Every candidate threshold, with the children's weighted and unweighted mean Gini."""
    values = torch.unique(x.double()).tolist()
    thresholds = [midpoint(a, b) for a, b in zip(values[:-1], values[1:])]
    k, n = int(y.max()) + 1, len(y)
    weighted, unweighted = [], []
    for t in thresholds:
        left = x.double() <= t
        gl, gr = (float(gini(torch.bincount(y[s], minlength=k).double())) for s in (left, ~left))
        weighted.append((int(left.sum()) * gl + int((~left).sum()) * gr) / n)
        unweighted.append((gl + gr) / 2)
    as_tensor = functools.partial(torch.tensor, dtype=torch.float64)
    return thresholds, as_tensor(weighted), as_tensor(unweighted)


def _reference_threshold(x, y):
    stats = target_stats(y, torch.ones(len(y)), "gini", int(y.max()) + 1)
    return best_split(x[:, None].float(), stats, "gini").threshold


def _random_splits(rng, n_cases):
    """Seeded one-feature data (repeated values, 2 or 3 classes) with a unique best split."""
    found = []
    while len(found) < n_cases:
        n = int(torch.randint(6, 16, (), generator=rng))
        x = torch.randint(0, 12, (n,), generator=rng).float() / 2
        y = torch.randint(0, 2 + len(found) % 2, (n,), generator=rng)
        if len(torch.unique(x)) < 3 or len(torch.unique(y)) < 2:
            continue
        scores = _split_table(x, y)[1].sort().values
        if scores[1] - scores[0] > 1e-9:  # a unique winner: no tie to argue about
            found.append((x, y))
    return found


def _threshold_hint(args, got, expected):
    x, y = args
    g, values = _as_float(got), torch.unique(x.double()).tolist()
    thresholds, weighted, unweighted = _split_table(x, y)
    j = min(range(len(thresholds)), key=lambda i: abs(thresholds[i] - expected))
    a, b = values[j], values[j + 1]
    halfway = f"halfway between consecutive distinct sorted values: ({a} + {b}) / 2"
    if _close(g, b):
        return (
            f"{g} is the upper value b of the best pair (a, b) = ({a}, {b}): it looks like you "
            f"tried data values as thresholds with `x < t` going left. The book sends `x <= t` "
            f"left and puts the threshold {halfway}."
        )
    if any(_close(g, v) for v in values):
        return f"{g} is a data value; a threshold sits {halfway}."
    if not values[0] < g < values[-1]:
        return (
            f"{g} lies outside the data, so it sends every sample to one side. Check your loop "
            "bounds (off-by-one): the last candidate lies between the two largest values."
        )
    h = THRESHOLD_HINTS
    neighbours = [thresholds[i] for i in (j - 1, j + 1) if 0 <= i < len(thresholds)]
    return _first_match(
        g,
        [(thresholds[int(unweighted.argmin())], h["unweighted"])]
        + [(t, h["neighbour"]) for t in neighbours]
        + [(thresholds[int(weighted.argmax())], h["worst"])],
    )


def check_best_threshold(fn):
    """Check ``best_threshold(x, y)``, the exercise of Chapter 1.

    ``fn`` takes one feature ``x`` (1-D float32 tensor) and classes ``y`` (1-D
    int64 tensor) and returns the threshold that minimises the children's
    weighted Gini impurity, with ``x <= threshold`` going left and the threshold
    halfway between consecutive distinct sorted values (as :func:`treelib.best_split`).

    Examples
    --------
    >>> import torch
    >>> from treelib import gini
    >>> def my_best_threshold(x, y):
    ...     k = int(y.max()) + 1
    ...     values = torch.unique(x)
    ...     best, best_score = None, float("inf")
    ...     for a, b in zip(values[:-1], values[1:]):
    ...         t = float((a + b) / 2)
    ...         score = 0.0
    ...         for side in (x <= t, x > t):
    ...             score += side.sum() * gini(torch.bincount(y[side], minlength=k).double())
    ...         if score < best_score:
    ...             best, best_score = t, score
    ...     return best
    >>> check_best_threshold(my_best_threshold)
    check_best_threshold: all 15 cases passed. Well done!
    True
    """
    data = [(torch.tensor(x, dtype=torch.float32), torch.tensor(y)) for x, y in FIXED_SPLITS]
    data += _random_splits(torch.Generator().manual_seed(case_seed(2)), 8)
    cases = [_Case((x, y), _reference_threshold(x, y)) for x, y in data]
    return _run_cases("best_threshold", fn, cases, _compare_float, _threshold_hint)
