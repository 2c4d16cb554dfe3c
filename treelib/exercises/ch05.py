"""Chapter 5's checkers: bootstrap samples, and a whole random forest (the capstone).

Introduced in Chapter 5.
"""

import functools
import warnings

import numpy as np
import torch

from ..forest import RandomForestClassifier, bootstrap_counts
from ._framework import (
    _BadOutput,
    _Case,
    _fmt,
    _run_cases,
    case_seed,
)

PERMUTATION = (
    "Every row was drawn exactly once: that is a permutation (sampling without replacement). "
    "A bootstrap draws n times WITH replacement: torch.randint(0, n, (n,), generator=generator)."
)
USE_GENERATOR = (
    "Draw with the generator passed in, e.g. torch.randint(0, n, (n,), generator=generator), "
    "and do not reseed inside your function."
)


EXCLUSIVE_HIGH = (
    "The upper bound of torch.randint (like numpy's randint and integers) is exclusive: "
    "randint(0, n - 1) can never draw the last row n - 1. Draw with "
    "torch.randint(0, n, (n,), generator=generator)."
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
    never = (torch.stack(list(got)) == 0).all(0).nonzero().flatten().tolist()
    if never == [49]:  # any one row is missed by a call with probability 0.36: by all 200, never
        raise _BadOutput("never drew the last row, 49", EXCLUSIVE_HIGH)
    fraction = float(np.mean([float((counts > 0).double().mean()) for counts in got]))
    if abs(fraction - expected) > 0.03:  # ~7 standard errors (seeded anyway)
        hint = "Each of the n draws should pick any row 0..n-1 with equal probability."
        if fraction > expected:
            hint = "Too many distinct rows: are you sampling without replacement?"
        message = f"drew {fraction:.3f} of the rows at least once on average, expected about "
        raise _BadOutput(message + f"{expected:.3f} (1 - 1/e = 0.632 for large n)", hint)
    return True


def _bootstrap_cases():
    sizes = [1, 2, 5, 10, 37, 100] + torch.randint(
        2, 60, (6,), generator=_generator(case_seed(8))
    ).tolist()
    cases = [
        _Case(
            (n, seed),
            n,
            call=lambda fn, a: fn(a[0], _generator(a[1])),
            error_hints=(("expects 'from' to be less than 'to'", EXCLUSIVE_HIGH),),
        )
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
    200 calls, that every row is drawn at least once (``randint(0, n - 1)``
    never draws the last row) and the fraction of distinct rows (about 0.632)
    against :func:`treelib.forest.bootstrap_counts`.

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


# --- The capstone: a random forest from bootstrap samples and treelib's trees ---

N_TREES, MIN_SAMPLES_LEAF = 25, 5
# Tolerances: over 60 seeds of treelib's forest (25 trees) on these two data sets, the test
# accuracy strayed at most 0.049 and the OOB score at most 0.083 from their mean over the
# 3 reference seeds; the OOB score counting in-bag rows (about the training accuracy) sits
# 0.21 (two classes) and 0.38 (three) above it. tests/test_capstones.py checks the spread.
N_REFERENCE_SEEDS = 3
ACCURACY_TOL, OOB_TOL = 0.06, 0.12
FOREST_HINTS = {
    "permutation": "Every row was drawn exactly once in every tree: that is a permutation. "
    "Each tree's bootstrap draws n rows WITH replacement, so about a third are left out.",
    "in_bag": "in_bag[t, i] counts how often tree t drew row i: a (n_trees, n) integer array "
    "whose rows sum to n, e.g. np.bincount(draws, minlength=n) for each tree.",
    "hard": "Every probability is a multiple of 1/n_trees: that is a hard (majority) vote. "
    "Average the trees' predict_proba instead (soft vote).",
    "proba": "proba holds one row per row of X_test and one column per class: the mean of the "
    "trees' predict_proba(X_test); each row sums to 1.",
    "oob_high": "The OOB score is far above treelib's: did you count in-bag rows? For each row "
    "i, average the probabilities of the trees with in_bag[t, i] == 0 only.",
    "oob_low": "The OOB score is far below treelib's: for each row, average the predict_proba "
    "of the trees that did not draw it, take the argmax and compare with y.",
    "empty": "A tree left no row out of its bootstrap sample, so it had no OOB rows to "
    "predict: are you sampling without replacement (every row once)? Draw n rows WITH "
    "replacement.",
    "accuracy": "The test accuracy is far from treelib's forest: check the bootstrap (rows "
    "drawn with replacement), the trees' settings (max_features='sqrt', "
    "min_samples_leaf=5, on the drawn rows) and the soft vote.",
}


def _forest_data(seed, n_classes, n=200, m=400, d=8):
    """A seeded data set with an interaction, noise and ``n_classes`` equal-sized classes."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n + m, d)).round(2)
    score = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + rng.normal(scale=0.5, size=n + m)
    y = np.searchsorted(np.quantile(score, np.arange(1, n_classes) / n_classes), score)
    return X[:n], y[:n], X[n:], y[n:]


@functools.lru_cache(maxsize=1)
def _forest_cases():
    """Data sets (two and three classes) and treelib's mean accuracy and OOB over 3 seeds."""
    cases = []
    for data_seed, k in ((22, 2), (23, 3)):
        X, y, X_test, y_test = _forest_data(case_seed(data_seed), k)
        scores = []
        with warnings.catch_warnings():  # a row that no tree left out: nothing to say here
            warnings.simplefilter("ignore")
            for seed in range(N_REFERENCE_SEEDS):
                forest = RandomForestClassifier(
                    N_TREES, min_samples_leaf=MIN_SAMPLES_LEAF, oob_score=True, random_state=seed
                ).fit(X, y)
                scores.append((forest.score(X_test, y_test), forest.oob_score_))
        cases.append(((X, y, X_test, y_test), tuple(np.mean(scores, axis=0))))
    return tuple(cases)


def _as_int_matrix(in_bag, shape):
    in_bag = np.asarray(in_bag.tolist() if hasattr(in_bag, "tolist") else in_bag)
    if in_bag.shape != shape or not np.issubdtype(in_bag.dtype, np.number):
        raise _BadOutput(
            f"returned in_bag of shape {in_bag.shape}, expected {shape}", FOREST_HINTS["in_bag"]
        )
    if not np.array_equal(in_bag, np.round(in_bag)) or (in_bag < 0).any():
        raise _BadOutput("returned in_bag with entries that are not counts", FOREST_HINTS["in_bag"])
    return in_bag


def _check_in_bag(in_bag, n):
    """A ``_BadOutput`` for a bootstrap that is not one: sums, permutation, the last row."""
    in_bag = _as_int_matrix(in_bag, (N_TREES, n))
    sums = in_bag.sum(1)
    if (sums != n).any():
        message = f"returned in_bag rows summing to {int(sums[sums != n][0])}, not n = {n}"
        raise _BadOutput(message, FOREST_HINTS["in_bag"])
    if (in_bag == 1).all():
        raise _BadOutput("drew every row exactly once in every tree", FOREST_HINTS["permutation"])
    never = np.flatnonzero((in_bag == 0).all(0)).tolist()
    if never:  # a row is missed by all 25 trees with probability 1e-11
        hint = EXCLUSIVE_HIGH if never == [n - 1] else "Every row 0..n-1 must be possible."
        raise _BadOutput(f"never drew row {never[-1]} in any of the {N_TREES} trees", hint)


def _compare_forest(y_test, got, expected):
    """True if the answer is a forest like treelib's, else a ``_BadOutput`` with a hint."""
    if not isinstance(got, tuple | list) or len(got) != 3:
        hint = "Return a triple: `return proba, oob_score, in_bag`."
        raise _BadOutput(f"returned {_fmt(got)}", hint)
    proba, oob, in_bag = got
    k, m = int(y_test.max()) + 1, len(y_test)
    proba = np.asarray(proba.tolist() if hasattr(proba, "tolist") else proba, dtype=float)
    if proba.shape != (m, k) or not np.allclose(proba.sum(1), 1.0):
        raise _BadOutput(f"returned proba of shape {proba.shape}", FOREST_HINTS["proba"])
    _check_in_bag(in_bag, expected[2])
    if np.allclose(proba * N_TREES, np.round(proba * N_TREES)):
        raise _BadOutput("returned hard-vote probabilities", FOREST_HINTS["hard"])
    accuracy, oob = float((proba.argmax(1) == y_test).mean()), float(oob)
    if not abs(accuracy - expected[0]) <= ACCURACY_TOL:
        message = f"reached test accuracy {accuracy:.3f}; treelib's forest {expected[0]:.3f}"
        raise _BadOutput(f"{message} (+- {ACCURACY_TOL})", FOREST_HINTS["accuracy"])
    if not abs(oob - expected[1]) <= OOB_TOL:
        message = f"gave OOB score {oob:.3f}; treelib's forest {expected[1]:.3f} (+- {OOB_TOL})"
        raise _BadOutput(message, FOREST_HINTS["oob_high" if oob > expected[1] else "oob_low"])
    return True


def check_random_forest(fn):
    """Check ``random_forest(X, y, X_test, n_trees, seed)``, the capstone of Chapter 5.

    ``fn`` grows ``n_trees`` (here 25) trees, each
    ``treelib.DecisionTreeClassifier(max_features="sqrt", min_samples_leaf=5,
    random_state=...)`` (the per-node feature draws happen inside the tree)
    fitted on its own bootstrap sample of the rows: ``n`` draws with
    replacement, taken with ``seed`` (e.g. ``torch.Generator().manual_seed(seed)``).
    ``X`` and ``X_test`` are float64 numpy arrays, ``y`` an int numpy array of
    classes ``0..K-1``. It returns ``(proba, oob_score, in_bag)``: ``proba`` the
    soft vote on ``X_test`` (the mean of the trees' ``predict_proba``, shape
    (m, K)); ``oob_score`` the accuracy on the training rows of the soft vote of
    the trees that did not draw each row; ``in_bag`` a (n_trees, n) integer
    array, ``in_bag[t, i]`` the number of times tree ``t`` drew row ``i``. The
    test accuracy and the OOB score must lie within 0.06 and 0.12 of the mean of
    :class:`treelib.RandomForestClassifier` (same settings) over 3 seeds: the
    spread measured over 60 seeds (see ``ACCURACY_TOL``). Checked also: the
    bootstrap draws with replacement, can draw the last row, and the vote is soft.

    Examples
    --------
    >>> import numpy as np
    >>> from treelib import DecisionTreeClassifier
    >>> def my_random_forest(X, y, X_test, n_trees, seed):
    ...     rng, n, k = np.random.default_rng(seed), len(y), int(y.max()) + 1
    ...     proba, oob, in_bag = 0, np.zeros((n, k)), np.zeros((n_trees, n), dtype=int)
    ...     for t in range(n_trees):
    ...         rows = rng.integers(0, n, n)
    ...         in_bag[t] = np.bincount(rows, minlength=n)
    ...         tree = DecisionTreeClassifier(max_features="sqrt", min_samples_leaf=5,
    ...                                       random_state=int(rng.integers(2**31)))
    ...         tree.fit(X[rows], y[rows])
    ...         proba = proba + tree.predict_proba(X_test) / n_trees
    ...         out = in_bag[t] == 0
    ...         oob[out] += tree.predict_proba(X[out])
    ...     scored = oob.sum(1) > 0
    ...     oob_score = (oob[scored].argmax(1) == y[scored]).mean()
    ...     return proba, oob_score, in_bag
    >>> check_random_forest(my_random_forest)
    check_random_forest: all 2 cases passed. Well done!
    True
    """
    cases = []
    for (X, y, X_test, y_test), (accuracy, oob) in _forest_cases():
        k = int(y.max()) + 1
        show = f"random_forest(X, y, X_test, {N_TREES}, seed=0) on {len(y)} rows, {k} classes"
        compare = functools.partial(_compare_forest, y_test)
        empty = (("0 sample(s)", FOREST_HINTS["empty"]),)
        args, expected = (X, y, X_test, N_TREES, 0), (accuracy, oob, len(y))
        cases.append(_Case(args, expected, show=show, compare=compare, error_hints=empty))
    return _run_cases("random_forest", fn, cases, None)
