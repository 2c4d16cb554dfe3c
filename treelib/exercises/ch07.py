"""Chapter 7's capstone checker: the segmented cumulative sum.

Introduced in Chapter 7.
"""

import torch

from ..levelwise import segment_starts
from ._framework import _BadOutput, _Case, _fmt, _run_cases, case_seed

FIXED_SEGMENTS = [
    ([1, 0, 1, 0, 0, 1, 1, 0, 1], [3, 2, 4]),  # the exercise of Section 7.4
    ([1, 1, 0, 1, 0, 1, 1], [4, 3]),  # the worked table of Section 7.4
    ([2.0, 0.5, 1.5, 3.0], [4]),  # one segment: a plain cumulative sum
    ([1, 2, 3, 4, 5], [1, 1, 1, 1, 1]),  # segments of length 1
    ([1, 1, 1, 0, 1], [0, 3, 0, 2]),  # empty segments at the start and in between
    ([4, 1, 2], [1, 0, 0, 2, 0]),  # several empty ones, one at the end
    ([7.0], [1]),
]
SEGMENT_HINTS = {
    "plain": "The sum runs on across segment boundaries: restart it at every segment, by "
    "subtracting the running total just before the segment (Section 7.4).",
    "exclusive": "That is the exclusive sum (each entry leaves out its own value); entry i "
    "includes values[i]: left[i] = cum[i] - cum[start(i) - 1].",
    "at_start": "You subtracted cum[start(i)], the running total AT the segment's first "
    "position; subtract the total just BEFORE it, cum[start(i) - 1] (0 for the first segment).",
    "reversed": "That sums from the end of each segment; the cumulative sum runs left to right.",
    "totals": "That is each segment's total; the cumulative sum grows inside the segment.",
    "dtype": "Keep the dtype of `values` (float64): cumsum and subtraction keep it; do not "
    "convert to float32 or to integers.",
}


def _reference_segmented_cumsum(values, sizes):
    """treelib's segmented sum: one cumsum, minus the running total before each segment."""
    segment = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
    cum = values.cumsum(0)
    before = torch.cat([torch.zeros(1, dtype=values.dtype), cum])[segment_starts(sizes)]
    return cum - before[segment]


def _random_segments(rng, n_cases):
    """Seeded segment sizes (some zero) and values: whole numbers or random reals."""
    cases = []
    for i in range(n_cases):
        n_segments = int(torch.randint(1, 8, (), generator=rng))
        sizes = torch.randint(0, 6, (n_segments,), generator=rng)
        sizes[int(torch.randint(0, n_segments, (), generator=rng))] += 1  # never all empty
        n = int(sizes.sum())
        if i % 2:
            values = torch.randn(n, generator=rng, dtype=torch.float64)
        else:
            values = torch.randint(0, 4, (n,), generator=rng).double()
        cases.append((values, sizes))
    return cases


def _as_sums(got, values):
    """The answer as a float64 tensor of the length of ``values``, or a ``_BadOutput``."""
    if got is None:
        raise _BadOutput("returned None", "Did you forget the `return` statement?")
    if not isinstance(got, torch.Tensor):
        hint = "Return a torch tensor, one running sum per position."
        raise _BadOutput(f"returned {_fmt(got)}, not a torch tensor", hint)
    if tuple(got.shape) != tuple(values.shape):
        hint = f"Return one running sum per position: a 1-D tensor of length {len(values)}."
        raise _BadOutput(f"returned {_fmt(got)}, expected shape {tuple(values.shape)}", hint)
    if got.dtype != values.dtype:
        raise _BadOutput(f"returned a {got.dtype} tensor", SEGMENT_HINTS["dtype"])
    return got


def _same_sums(a, b):
    return bool(torch.allclose(a, b, rtol=1e-9, atol=1e-9))


def _compare_sums(got, expected):
    return _same_sums(_as_sums(got, expected), expected)


def _segment_hint(args, got, expected):
    values, sizes = args
    got, h = _as_sums(got, values), SEGMENT_HINTS
    segment = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
    totals = torch.zeros(len(sizes), dtype=values.dtype).index_add_(0, segment, values)
    starts = segment_starts(sizes)[segment]
    variants = [
        (values.cumsum(0), h["plain"]),
        (expected - values, h["exclusive"]),
        (expected - values[starts], h["at_start"]),
        (totals[segment] - expected + values, h["reversed"]),
        (totals[segment], h["totals"]),
    ]
    return next((hint for wrong, hint in variants if _same_sums(got, wrong)), None)


def check_segmented_cumsum(fn):
    """Check ``segmented_cumsum(values, sizes)``, the capstone exercise of Chapter 7.

    ``fn`` takes ``values``, a 1-D float64 tensor grouped by segment (node), and
    ``sizes``, a 1-D int64 tensor of segment sizes (zeros allowed; ``sizes.sum()``
    equals ``len(values)``), and returns a float64 tensor of the length of
    ``values``: at position ``i`` the sum of ``values`` from the start of its
    segment up to and including ``i``. Cases: fixed ones (one segment, segments
    of length 1, empty segments first, between and last) and seeded random ones,
    compared with the segmented sum of :mod:`treelib.levelwise`.

    Examples
    --------
    >>> import torch
    >>> def my_segmented_cumsum(values, sizes):
    ...     out = torch.empty_like(values)
    ...     start = 0
    ...     for size in sizes.tolist():
    ...         out[start : start + size] = values[start : start + size].cumsum(0)
    ...         start += size
    ...     return out
    >>> check_segmented_cumsum(my_segmented_cumsum)
    check_segmented_cumsum: all 17 cases passed. Well done!
    True
    """
    data = [
        (torch.tensor(v, dtype=torch.float64), torch.tensor(s, dtype=torch.int64))
        for v, s in FIXED_SEGMENTS
    ]
    data += _random_segments(torch.Generator().manual_seed(case_seed(14)), 10)
    cases = [_Case(d, _reference_segmented_cumsum(*d)) for d in data]
    return _run_cases("segmented_cumsum", fn, cases, _compare_sums, _segment_hint)
