"""Checkers for the book's exercises: instant feedback for learners, True/False for graders.

Introduced in Chapter 1 and used in every chapter.

Each ``check_*`` function takes the learner's function, runs it on hand-picked
cases and on seeded random cases, compares the answers with treelib's own
implementation and prints a short verdict: how many cases passed and, for the
first failure, the input, what came back, what was expected and a hint aimed at
the likely mistake. It never shows the reference code, never lets the learner's
exception escape, and returns ``True`` or ``False`` so that a grader can use it::

    from treelib.exercises import check_gini
    check_gini(my_gini)  # prints the verdict, returns True or False

``CHECKERS`` maps each exercise's name (``"gini"``, ...) to its checker.
"""

import functools
import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from .boosting import reweight, samme_alpha
from .criteria import entropy, gini, squared_error, target_stats
from .forest import bootstrap_counts
from .split import best_split, midpoint
from .tree import DecisionTreeClassifier
from .tree_structure import TREE_LEAF, Tree

RTOL, ATOL = 1e-6, 1e-9  # a number is right when it matches to 1e-6 (relative)
LN2 = math.log(2.0)
ERROR_HINT = "Call your function on this input yourself to see the full traceback."
DEFAULT_HINT = "Work this case out by hand and compare with your code, step by step."

# --- The framework: run the cases, compare, diagnose, print one verdict ---


class _Case(NamedTuple):
    """One test of a learner's function."""

    args: tuple
    expected: Any = None
    call: Callable | None = None  # how to call fn; default fn(*copies of args)
    show: str | None = None  # how the failure message names the call
    compare: Callable | None = None  # this case's own comparison, if any


class _BadOutput(Exception):
    """The answer has the wrong type or shape or breaks a rule: what, and a hint."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.message, self.hint = message, hint


def _call_with_copies(fn, args):
    # a learner that edits its input in place must not spoil the next case
    return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])


def _attempt(name, fn, case, compare, diagnose):
    """``None`` if ``fn`` passes ``case``, else ``(what happened, hint)``."""
    show = case.show or f"{name}({', '.join(_fmt(a) for a in case.args)})"
    try:
        got = (case.call or _call_with_copies)(fn, case.args)
    except NotImplementedError:
        raise
    except Exception as error:
        hint = ERROR_HINT
        if isinstance(error, IndexError):
            hint = "An IndexError often means a loop or slice goes one step too far. " + hint
        return f"{show} raised {type(error).__name__}: {error}", hint
    returned = f"{show} returned {_fmt(got)}, expected {_fmt(case.expected)}"
    try:
        if (case.compare or compare)(got, case.expected):
            return None
    except _BadOutput as bad:
        return f"{show} {bad.message}", bad.hint or DEFAULT_HINT
    except Exception:  # an answer so odd that it cannot even be compared
        return returned, DEFAULT_HINT
    try:
        hint = diagnose(case.args, got, case.expected) if diagnose else None
    except Exception:  # a diagnosis is a bonus: it must never crash the check
        hint = None
    return returned, hint or DEFAULT_HINT


def _run_cases(name, fn, cases, compare, diagnose=None):
    """Run ``fn`` on every case, print the verdict and return whether all passed."""
    check = f"check_{name}"
    if not callable(fn):
        print(f"{check}: expected a function, got {_fmt(fn)}. Pass the function itself:")
        print(f"  {check}({name}), not {check}({name}(...)).")
        return False
    passed, failure = 0, None
    with warnings.catch_warnings():  # the learner's warnings would land on stderr
        warnings.simplefilter("ignore")
        for case in cases:
            try:
                outcome = _attempt(name, fn, case, compare, diagnose)
            except NotImplementedError:
                print(f"{check}: not implemented yet. Replace `raise NotImplementedError`")
                print("  with your code, run that cell, then run this check again.")
                return False
            passed += outcome is None
            failure = failure or outcome
    if failure is None:
        print(f"{check}: all {len(cases)} cases passed. Well done!")
        return True
    print(f"{check}: {passed}/{len(cases)} cases passed.")
    print(f"  First failure: {failure[0]}.")
    print(f"  Hint: {failure[1]}")
    return False


# --- Reading and showing answers ---


def _fmt_num(v, digits=10):
    if isinstance(v, bool | int | np.integer):
        return str(v)
    s = f"{float(v):.{digits}g}"
    return s if any(c in s for c in ".eni") else s + ".0"  # 3 -> 3.0; keep nan, inf, 1e-07


def _fmt(v):
    """A short, readable form of an input or an answer."""
    if isinstance(v, torch.Tensor) and v.dim() == 0:
        return f"tensor({_fmt_num(v.item())})"
    if isinstance(v, torch.Tensor) and v.dim() == 1:
        items = [_fmt_num(x, 6) for x in v.tolist()]
        if len(items) > 10:
            return f"tensor([{', '.join(items[:3])}, ..., {items[-1]}]) (length {len(items)})"
        return f"tensor([{', '.join(items)}])"
    if isinstance(v, torch.Tensor):
        return f"a tensor of shape {tuple(v.shape)}"
    if isinstance(v, float | int | np.number):
        return _fmt_num(v)
    if isinstance(v, tuple):
        return f"({', '.join(_fmt(x) for x in v)})"
    if isinstance(v, Tree):
        return f"tree_ ({v.node_count} nodes)"
    if isinstance(v, np.ndarray):
        return f"a numpy array {np.array2string(v, threshold=10, precision=6)}"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_float(got, what="returned"):
    """The answer as a Python float, or a ``_BadOutput`` saying what is wrong with it."""
    if got is None:
        raise _BadOutput(f"{what} None", "Did you forget the `return` statement?")
    if isinstance(got, torch.Tensor | np.ndarray):
        size = got.size if isinstance(got, np.ndarray) else got.numel()
        if size != 1:
            one = "Return one number: reduce over the values (e.g. with `.sum()`)."
            raise _BadOutput(f"{what} {_fmt(got)}, not a single number", one)
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, int | float | np.integer | np.floating):
        kind = type(got).__name__
        hint = "Return a number: a Python int or float, or a 0-d tensor."
        raise _BadOutput(f"{what} {_fmt(got)} (a {kind}), not a number", hint)
    return float(got)


def _close(a, b):
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)


def _compare_float(got, expected):
    return _close(_as_float(got), expected)


def _first_match(value, variants):
    """The hint of the first ``(wrong answer, hint)`` pair that ``value`` matches."""
    return next((hint for wrong, hint in variants if _close(value, float(wrong))), None)


def _counts(values):
    return torch.tensor(values, dtype=torch.float64)


def _random_counts(rng, n_cases, max_classes=5, high=15):
    """Seeded random class counts (some zero), never all zero."""
    cases = []
    for _ in range(n_cases):
        k = int(torch.randint(2, max_classes + 1, (), generator=rng))
        c = torch.randint(0, high, (k,), generator=rng).double()
        cases.append(c if c.sum() > 0 else c + 1)
    return cases


# --- Chapter 1: Gini impurity ---

FIXED_COUNTS = [[3, 1], [5, 5], [10, 0], [1, 1, 1], [2, 3, 5], [0, 4, 0], [7], [0.5, 1.5]]
FIXED_COUNTS += [[1, 2, 3, 4], [0, 3, 3]]
NORMALISE = "Turn the counts into proportions first: p = counts / counts.sum()."
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
    rng = torch.Generator().manual_seed(1)
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
    data += _random_splits(torch.Generator().manual_seed(2), 8)
    cases = [_Case((x, y), _reference_threshold(x, y)) for x, y in data]
    return _run_cases("best_threshold", fn, cases, _compare_float, _threshold_hint)


# --- Chapter 2: walking a fitted tree ---


@functools.lru_cache(maxsize=1)
def _fitted_trees():
    """Two small trees fitted on integer features, so every threshold is an exact half."""
    rng = torch.Generator().manual_seed(3)
    trees = []
    for n_features, n_classes, depth in ((2, 2, 3), (3, 3, 4)):
        X = torch.randint(0, 10, (80, n_features), generator=rng).float()
        noise = torch.randint(0, 4, (80,), generator=rng)
        y = (X.sum(1).long() + noise) * n_classes // (10 * n_features + 4)
        model = DecisionTreeClassifier(max_depth=depth, random_state=0)
        trees.append(model.fit(X.numpy(), y.numpy()).tree_)
    return tuple(trees)


def _walk(tree_, x, strict=False, swap=False):
    """The leaf ``x`` reaches, optionally with a classic mistake built in."""
    node = 0
    while int(tree_.children_left[node]) != TREE_LEAF:
        value, t = float(x[int(tree_.feature[node])]), float(tree_.threshold[node])
        left = (value < t if strict else value <= t) != swap
        node = int(tree_.children_left[node] if left else tree_.children_right[node])
    return node


def _tree_points(tree_, rng, n_points):
    """Points on a grid of halves; two in three are put exactly on thresholds on their way."""
    points = []
    for i in range(n_points):
        x = torch.randint(-2, 22, (int(tree_.feature.max()) + 1,), generator=rng).float() / 2
        node = 0
        while i % 3 and int(tree_.children_left[node]) != TREE_LEAF:
            f, t = int(tree_.feature[node]), float(tree_.threshold[node])
            if float(torch.rand((), generator=rng)) < 0.5:
                x[f] = t  # the node's region contains its threshold: ancestors are unchanged
            left = float(x[f]) <= t
            node = int(tree_.children_left[node] if left else tree_.children_right[node])
        points.append(x)
    return points


def _as_node_id(got):
    g = _as_float(got)
    if not g.is_integer():
        raise _BadOutput(f"returned {_fmt(got)}, not a node id", "Return the leaf's node id.")
    return int(g)


def _predict_one_hint(args, got, expected):
    tree_, x = args
    g = _as_node_id(got)
    if g == _walk(tree_, x, strict=True):
        return "At a node, `x[feature] <= threshold` goes left; you used `<`."
    if g == _walk(tree_, x, swap=True):
        return "Left and right are swapped: `x[feature] <= threshold` goes to children_left."
    if g == int(tree_.value[expected, 0].argmax()):
        return "That looks like the predicted class; return the leaf's node id instead."
    if not 0 <= g < tree_.node_count:
        return f"The tree has node ids 0..{tree_.node_count - 1} only."
    if int(tree_.children_left[g]) != TREE_LEAF:
        return f"Node {g} is not a leaf: keep walking until children_left[node] == -1."
    return None


def check_predict_one(fn):
    """Check ``predict_one(tree_, x)``, the exercise of Chapter 2.

    ``fn`` takes a fitted :class:`treelib.Tree` (``model.tree_``) and one sample
    ``x`` (1-D float32 tensor) and returns the id of the leaf that ``x`` reaches,
    starting at node 0 and going left when ``x[feature] <= threshold``. The
    trees are fitted with :class:`treelib.DecisionTreeClassifier` on seeded
    data, and many samples sit exactly on a threshold.

    Examples
    --------
    >>> def my_predict_one(tree_, x):
    ...     node = 0
    ...     while tree_.children_left[node] != -1:
    ...         if x[tree_.feature[node]] <= tree_.threshold[node]:
    ...             node = tree_.children_left[node]
    ...         else:
    ...             node = tree_.children_right[node]
    ...     return int(node)
    >>> check_predict_one(my_predict_one)
    check_predict_one: all 24 cases passed. Well done!
    True
    """
    rng = torch.Generator().manual_seed(4)
    cases = [
        _Case((tree_, x), int(tree_.apply(x[None])[0]))
        for tree_ in _fitted_trees()
        for x in _tree_points(tree_, rng, 12)
    ]
    same_leaf = lambda got, expected: _as_node_id(got) == expected  # noqa: E731
    return _run_cases("predict_one", fn, cases, same_leaf, _predict_one_hint)


# --- Chapter 3: squared error ---

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
    rng = torch.Generator().manual_seed(5)
    inputs = [torch.tensor(y, dtype=torch.float64) for y in FIXED_TARGETS]
    for _ in range(8):
        n = int(torch.randint(2, 13, (), generator=rng))
        inputs.append(torch.randn(n, generator=rng, dtype=torch.float64) * 3 + 1)
    cases = [_Case((y,), _reference_squared_error(y)) for y in inputs]
    return _run_cases("squared_error", fn, cases, _compare_float, _squared_error_hint)


# --- Chapter 4: entropy and information gain ---

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
    rng = torch.Generator().manual_seed(6)
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
    rng = torch.Generator().manual_seed(7)
    pairs = [(_counts(a), _counts(b)) for a, b in FIXED_GAINS]
    for _ in range(8):
        k = int(torch.randint(2, 5, (), generator=rng))
        left, right = (torch.randint(0, 9, (k,), generator=rng).double() for _ in "lr")
        pairs.append((left + (left.sum() == 0), right + (right.sum() == 0)))  # never empty
    cases = [_Case((a + b, a, b), _reference_gain(a + b, a, b)) for a, b in pairs]
    return _run_cases("information_gain", fn, cases, _compare_float, _gain_hint)


# --- Chapter 5: bootstrap samples ---

PERMUTATION = (
    "Every row was drawn exactly once: that is a permutation (sampling without replacement). "
    "A bootstrap draws n times WITH replacement: torch.randint(0, n, (n,), generator=generator)."
)
USE_GENERATOR = (
    "Draw with the generator passed in, e.g. torch.randint(0, n, (n,), generator=generator), "
    "and do not reseed inside your function."
)


def _generator(seed):
    return torch.Generator().manual_seed(seed)


def _check_counts(got, n):
    """True if ``got`` is a valid count vector of ``n`` draws of ``n`` rows, else ``_BadOutput``."""
    if not isinstance(got, torch.Tensor):
        hint = "Return a tensor of counts, e.g. torch.bincount(draws, minlength=n)."
        raise _BadOutput(f"returned {_fmt(got)}, not a torch tensor", hint)
    if got.dtype.is_floating_point or got.dtype.is_complex or got.dtype == torch.bool:
        hint = "Counts are whole numbers: return an integer tensor (torch.bincount gives int64)."
        raise _BadOutput(f"returned a {got.dtype} tensor", hint)
    if tuple(got.shape) != (n,):
        hint = "One count per row, zeros included: torch.bincount(draws, minlength=n)."
        raise _BadOutput(f"returned {_fmt(got)}, expected a tensor of length {n}", hint)
    if bool((got < 0).any()):
        raise _BadOutput(f"returned {_fmt(got)}, with negative counts", "Counts are >= 0.")
    if int(got.sum()) != n:
        hint = "Make exactly n draws, then count how often each row came up."
        raise _BadOutput(f"returned {_fmt(got)}, whose sum is {int(got.sum())}, not {n}", hint)
    return True


def _compare_same_seed(got, expected):
    first, second = got
    if _check_counts(first, 50) and _check_counts(second, 50) and not torch.equal(first, second):
        raise _BadOutput("gave different counts", USE_GENERATOR)
    return True


def _compare_other_seeds(got, expected):
    first, second = got
    if _check_counts(first, 50) and _check_counts(second, 50) and torch.equal(first, second):
        all_ones = bool((first == 1).all())
        raise _BadOutput("gave the same counts", PERMUTATION if all_ones else USE_GENERATOR)
    return True


@functools.lru_cache(maxsize=1)
def _reference_distinct_fraction(n=50, repeats=200):
    """treelib's mean fraction of rows drawn at least once (about 1 - 1/e)."""
    return float(np.mean([(bootstrap_counts(seed, n, n) > 0).mean() for seed in range(repeats)]))


def _compare_distinct_fraction(got, expected):
    for counts in got:
        _check_counts(counts, 50)
    if all(bool((counts == 1).all()) for counts in got):
        raise _BadOutput("always drew every row exactly once", PERMUTATION)
    fraction = float(np.mean([float((counts > 0).double().mean()) for counts in got]))
    if abs(fraction - expected) > 0.03:  # ~7 standard errors (seeded anyway)
        hint = "Each of the n draws should pick any row 0..n-1 with equal probability."
        if fraction > expected:
            hint = "Too many distinct rows: are you sampling without replacement?"
        message = f"drew {fraction:.3f} of the rows at least once on average, expected about "
        raise _BadOutput(message + f"{expected:.3f} (1 - 1/e = 0.632 for large n)", hint)
    return True


def _bootstrap_cases():
    sizes = [1, 2, 5, 10, 37, 100] + torch.randint(2, 60, (6,), generator=_generator(8)).tolist()
    cases = [
        _Case((n, seed), n, call=lambda fn, a: fn(a[0], _generator(a[1])))
        for seed, n in enumerate(sizes)
    ]
    cases = [
        c._replace(show=f"bootstrap_counts({c.args[0]}, generator seeded with {c.args[1]})")
        for c in cases
    ]
    twice = "bootstrap_counts(50, generator), called with generators seeded with"
    same = lambda fn, a: (fn(50, _generator(7)), fn(50, _generator(7)))  # noqa: E731
    other = lambda fn, a: (fn(50, _generator(1)), fn(50, _generator(2)))  # noqa: E731
    many = lambda fn, a: [fn(50, g) for g in [_generator(11)] for _ in range(200)]  # noqa: E731
    return cases + [
        _Case((50,), None, same, f"{twice} 7 and 7,", _compare_same_seed),
        _Case(
            (50,),
            _reference_distinct_fraction(),
            many,
            "Over 200 calls, bootstrap_counts(50, generator)",
            _compare_distinct_fraction,
        ),
        _Case((50,), None, other, f"{twice} 1 and 2,", _compare_other_seeds),
    ]


def check_bootstrap_counts(fn):
    """Check ``bootstrap_counts(n, generator)``, the exercise of Chapter 5.

    ``fn`` takes a number of rows ``n`` and a ``torch.Generator`` and returns an
    integer tensor of length ``n``: how often each row was drawn in ``n`` draws
    with replacement. Checked: type, length, counts >= 0 summing to ``n``; the
    same counts for the same seed and different ones for another; and, over
    200 calls, the fraction of distinct rows (about 0.632) against
    :func:`treelib.forest.bootstrap_counts`.

    Examples
    --------
    >>> import torch
    >>> def my_bootstrap_counts(n, generator):
    ...     draws = torch.randint(0, n, (n,), generator=generator)
    ...     return torch.bincount(draws, minlength=n)
    >>> check_bootstrap_counts(my_bootstrap_counts)
    check_bootstrap_counts: all 15 cases passed. Well done!
    True
    """
    return _run_cases("bootstrap_counts", fn, _bootstrap_cases(), _check_counts)


# --- Chapter 6: one round of AdaBoost (SAMME) ---

FIXED_ROUNDS = [
    ([0.25, 0.25, 0.25, 0.25], [1, 0, 0, 0], 2),
    ([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 0], 2),
    ([0.5, 0.125, 0.125, 0.25], [0, 0, 1, 1], 2),
    ([0.2, 0.2, 0.2, 0.2, 0.2], [1, 0, 0, 0, 0], 3),
    ([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1], 3),
    ([0.05, 0.15, 0.2, 0.2, 0.1, 0.3], [1, 1, 0, 0, 0, 0], 4),
]
ROUND_HINTS = {
    "half": "0.5 * ln((1 - err) / err) is the confidence-rated vote of Schapire & Singer (1999) "
    "(Freund & Schapire's own vote is ln((1 - err) / err)): for K = 2 it gives the same "
    "predictions, but not the book's SAMME weights alpha = ln((1 - err) / err) + ln(K - 1).",
    "K-1": "Forgot the + log(K - 1) term of SAMME: it is 0 for K = 2 but not for K > 2.",
    "fraction": "err is the weighted error sum(w[incorrect]), not the fraction of mistakes.",
    "alpha": "Check alpha: err = sum(w[incorrect]), alpha = log((1 - err) / err) + log(K - 1).",
    "normalise": "Forgot to renormalise: divide the new weights by their sum.",
    "correct": "You up-weighted the correct samples; multiply the INCORRECT ones by exp(alpha).",
    "sum": "The new weights must sum to 1: divide them by their sum.",
}


def _reference_round(weights, incorrect, n_classes):
    alpha = float(samme_alpha(float(weights[incorrect].sum()), n_classes))
    new = reweight(weights.numpy(), incorrect.numpy(), alpha)
    return alpha, torch.from_numpy(new / new.sum())


def _random_rounds(rng, n_cases):
    """Seeded rounds whose weak learner beats guessing (0 < err < 1 - 1/K)."""
    found = []
    while len(found) < n_cases:
        n, k = (int(torch.randint(lo, hi, (), generator=rng)) for lo, hi in ((4, 9), (2, 6)))
        w = torch.rand(n, generator=rng, dtype=torch.float64) + 0.05
        w, incorrect = w / w.sum(), torch.rand(n, generator=rng) < 0.35
        if 0 < float(w[incorrect].sum()) < 1 - 1 / k:
            found.append((w, incorrect, k))
    return found


def _as_round(got, n):
    """The answer as ``(alpha, new_weights)``: a float and a float64 tensor of length n."""
    if not isinstance(got, tuple | list) or len(got) != 2:
        raise _BadOutput(f"returned {_fmt(got)}", "Return a pair: `return alpha, new_weights`.")
    alpha, weights = _as_float(got[0], what="returned an alpha of"), got[1]
    if not isinstance(weights, torch.Tensor | np.ndarray) or tuple(weights.shape) != (n,):
        hint = f"new_weights must be a tensor with one weight per sample (length {n})."
        raise _BadOutput(f"returned new weights {_fmt(weights)}", hint)
    return alpha, torch.as_tensor(weights).detach().double()


def _allclose(a, b):
    return bool(torch.allclose(a, b, rtol=RTOL, atol=1e-12))


def _compare_round(got, expected):
    alpha, weights = _as_round(got, len(expected[1]))
    return _close(alpha, expected[0]) and _allclose(weights, expected[1])


def _round_hint(args, got, expected):
    (w, incorrect, k), h = args, ROUND_HINTS
    alpha, new = _as_round(got, len(w))
    error = float(w[incorrect].sum())
    if not _close(alpha, expected[0]):
        ratio = math.log((1 - error) / error)
        fraction = float(samme_alpha(float(incorrect.double().mean()), k))
        variants = [(0.5 * ratio, h["half"]), (ratio, h["K-1"]), (fraction, h["fraction"])]
        return _first_match(alpha, variants) or h["alpha"]
    grown = w * torch.exp(alpha * incorrect.double())
    shrunk = w * torch.exp(alpha * (~incorrect).double())
    if _allclose(new, grown):
        return h["normalise"]
    if _allclose(new, shrunk) or _allclose(new, shrunk / shrunk.sum()):
        return h["correct"]
    return None if math.isclose(float(new.sum()), 1.0, rel_tol=1e-6) else h["sum"]


def check_adaboost_round(fn):
    """Check ``adaboost_round(weights, incorrect, n_classes)``, the exercise of Chapter 6.

    ``fn`` takes sample weights (float64 tensor summing to 1), a bool tensor of
    the weak learner's mistakes and the number of classes ``K``, and returns
    ``(alpha, new_weights)`` as SAMME does: ``err = sum(w[incorrect])``,
    ``alpha = log((1 - err) / err) + log(K - 1)``, ``new_weights`` proportional
    to ``w * exp(alpha * incorrect)`` and summing to 1.

    Examples
    --------
    >>> import math
    >>> import torch
    >>> def my_adaboost_round(weights, incorrect, n_classes):
    ...     err = weights[incorrect].sum().item()
    ...     alpha = math.log((1 - err) / err) + math.log(n_classes - 1)
    ...     new = weights * torch.exp(alpha * incorrect)
    ...     return alpha, new / new.sum()
    >>> check_adaboost_round(my_adaboost_round)
    check_adaboost_round: all 14 cases passed. Well done!
    True
    """
    rounds = [(_counts(w), torch.tensor(i, dtype=torch.bool), k) for w, i, k in FIXED_ROUNDS]
    rounds += _random_rounds(torch.Generator().manual_seed(9), 8)
    cases = [_Case(r, _reference_round(*r)) for r in rounds]
    return _run_cases("adaboost_round", fn, cases, _compare_round, _round_hint)


CHECKERS = {
    "gini": check_gini,
    "best_threshold": check_best_threshold,
    "predict_one": check_predict_one,
    "squared_error": check_squared_error,
    "entropy": check_entropy,
    "information_gain": check_information_gain,
    "bootstrap_counts": check_bootstrap_counts,
    "adaboost_round": check_adaboost_round,
}
