"""Chapter 3's checker: squared error.

Introduced in Chapter 3.
"""

import math

import torch

from ..criteria import squared_error
from ._framework import (
    _as_float,
    _Case,
    _compare_float,
    _first_match,
    _run_cases,
    case_seed,
)

FIXED_TARGETS = [[1, 2, 3, 4], [0, 10], [-1, 1, 3], [2.5, 0.5, 1.0, 4.0, 3.0], [5], [2, 2, 2]]
SQUARED_ERROR_HINTS = {
    "n-1": "You divided by n - 1 (the sample variance, torch.var's default); a node's squared "
    "error divides by n: ((y - y.mean())**2).mean() or torch.var(y, correction=0).",
    "n-1 nan": "With one sample, n - 1 = 0: the squared error divides by n, not n - 1.",
    "square": "Forgot to square: average (y - y.mean())**2.",
    "sum": "That is the sum of squared deviations; divide by n to get their mean.",
    "std": "That is the standard deviation; drop the square root.",
    "mean": "Subtract the mean first: average (y - y.mean())**2.",
}


def _reference_squared_error(y):
    moments = torch.stack([torch.tensor(len(y), dtype=y.dtype), y.sum(), (y * y).sum()])
    return float(squared_error(moments)) + 0.0


def _squared_error_hint(args, got, expected):
    y, g, h = args[0], _as_float(got), SQUARED_ERROR_HINTS
    n, dev = len(y), y - y.mean()
    if math.isnan(g) and n == 1:
        return h["n-1 nan"]
    return _first_match(
        g,
        [
            (expected * n / max(n - 1, 1), h["n-1"]),
            (dev.abs().mean(), h["square"]),
            (dev.mean(), h["square"]),
            (expected * n, h["sum"]),
            (math.sqrt(expected), h["std"]),
            ((y * y).mean(), h["mean"]),
        ],
    )


def check_squared_error(fn):
    """Check ``squared_error(y)``, the exercise of Chapter 3.

    ``fn`` takes a node's targets ``y`` (1-D float64 tensor) and returns the
    mean squared deviation from their mean (the population variance, dividing
    by ``n``) as a float or 0-d tensor.

    Examples
    --------
    >>> def my_squared_error(y):
    ...     return ((y - y.mean()) ** 2).mean()
    >>> check_squared_error(my_squared_error)
    check_squared_error: all 14 cases passed. Well done!
    True
    """
    rng = torch.Generator().manual_seed(case_seed(5))
    inputs = [torch.tensor(y, dtype=torch.float64) for y in FIXED_TARGETS]
    for _ in range(8):
        n = int(torch.randint(2, 13, (), generator=rng))
        inputs.append(torch.randn(n, generator=rng, dtype=torch.float64) * 3 + 1)
    cases = [_Case((y,), _reference_squared_error(y)) for y in inputs]
    return _run_cases("squared_error", fn, cases, _compare_float, _squared_error_hint)
