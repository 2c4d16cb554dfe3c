"""Chapter 6's checkers: one round of AdaBoost (SAMME), and the whole loop (the capstone).

Introduced in Chapter 6.
"""

import functools
import math

import numpy as np
import torch

from ..boosting import AdaBoostClassifier, reweight, samme_alpha
from ..tree import DecisionTreeClassifier
from ._framework import (
    ATOL,
    RTOL,
    _as_float,
    _BadOutput,
    _Case,
    _close,
    _counts,
    _first_match,
    _fmt,
    _run_cases,
    case_seed,
)

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
    rounds += _random_rounds(torch.Generator().manual_seed(case_seed(9)), 8)
    cases = [_Case(r, _reference_round(*r)) for r in rounds]
    return _run_cases("adaboost_round", fn, cases, _compare_round, _round_hint)


# --- The capstone: the whole SAMME loop ---

ADABOOST_HINTS = {
    "K-1": ROUND_HINTS["K-1"],
    "half": ROUND_HINTS["half"],
    "normalise": "The alphas go wrong after the first round: renormalise the weights after "
    "each update (w = w / w.sum()) or divide the weighted error by w.sum().",
    "divide": "err must be a fraction: the weighted error is sum(w[incorrect]) / sum(w). "
    "With weights that do not sum to 1 (e.g. starting at 1), divide by their sum.",
    "correct": ROUND_HINTS["correct"],
    "unweighted": "Each stump needs this round's weights: fit(X, y, sample_weight=w).",
    "alpha": "Check each round: err = sum(w[incorrect]) / sum(w), alpha = log((1 - err) / err) "
    "+ log(K - 1), then w = w * exp(alpha * incorrect), renormalised.",
    "vote": "The alphas are right but the predictions are not: predict the class k with the "
    "largest sum of alpha_t over the stumps that vote k (argmax over classes).",
    "majority": "You counted each stump's vote once; weight each vote by the stump's alpha.",
    "last": "You used the last stump's prediction only; the ensemble adds up all the votes.",
}
N_ROUNDS = 6


def _stump(X, y, w):
    return DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y, sample_weight=w)


def _samme_variant(X, y, n_rounds, mistake=None):
    """The alphas of a SAMME loop with one classic mistake built in (for the hints)."""
    k, n = int(y.max()) + 1, len(y)
    w, alphas = np.full(n, 1.0 / n), []
    for _ in range(n_rounds):
        incorrect = _stump(X, y, np.ones(n) if mistake == "unweighted" else w).predict(X) != y
        error = float(w[incorrect].sum())
        if not 0 < error < 1:
            return None
        ratio = math.log((1 - error) / error)
        alpha = {"K-1": ratio, "half": 0.5 * ratio}.get(mistake, ratio + math.log(k - 1))
        alphas.append(alpha)
        w = w * np.exp(alpha * (~incorrect if mistake == "correct" else incorrect))
        w = w if mistake == "normalise" else w / w.sum()
    return np.array(alphas)


def _votes(X, y, X_test, alphas):
    """Per test point and class, the total alpha and the number of stumps voting for it;
    and the last stump's predictions."""
    k, n = int(y.max()) + 1, len(y)
    w, rows = np.full(n, 1.0 / n), np.arange(len(X_test))
    by_alpha, by_count = np.zeros((len(X_test), k)), np.zeros((len(X_test), k))
    for alpha in alphas:
        stump = _stump(X, y, w)
        votes = stump.predict(X_test)
        by_alpha[rows, votes] += alpha
        by_count[rows, votes] += 1
        w = w * np.exp(alpha * (stump.predict(X) != y))
        w = w / w.sum()
    return by_alpha, by_count, votes


@functools.lru_cache(maxsize=1)
def _boosting_data():
    """Seeded data sets (2 to 4 classes) on which SAMME runs all rounds, tie-free.

    Tie-free: the stumps fitted with two different seeds give the same alphas, so
    any correct loop, whatever the seeds of its stumps, gets treelib's alphas.
    """
    rng, found = np.random.RandomState(case_seed(15)), []
    while len(found) < 5:
        n, k = 40 + 10 * len(found), 2 + len(found) % 3
        X = rng.normal(size=(n, 3)).round(3)
        score = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.7, size=n)
        y = np.searchsorted(np.quantile(score, np.arange(1, k) / k), score)
        X_test = np.vstack([X[:10], rng.normal(size=(20, 3)).round(3)])
        fits = [
            AdaBoostClassifier(_stump_model(), n_estimators=N_ROUNDS, random_state=seed).fit(X, y)
            for seed in (0, 1)
        ]
        alphas = [f.estimator_weights_[: len(f.estimators_)] for f in fits]
        if len(alphas[0]) == N_ROUNDS and np.allclose(alphas[0], alphas[1], rtol=1e-12):
            found.append((X, y, X_test, alphas[0], fits[0].predict(X_test)))
    return tuple(found)


def _stump_model():
    return DecisionTreeClassifier(max_depth=1)


def _as_boosting(got, n_rounds, n_test):
    """The answer as ``(alphas, predictions)``: numpy arrays of the right lengths."""
    if not isinstance(got, tuple | list) or len(got) != 2:
        hint = "Return a pair: `return alphas, predictions`."
        raise _BadOutput(f"returned {_fmt(got)}", hint)
    try:
        alphas = np.asarray([float(a) for a in got[0]], dtype=np.float64)
        predictions = np.asarray(got[1].tolist() if hasattr(got[1], "tolist") else got[1])
    except (TypeError, ValueError):
        hint = "alphas: one float per round; predictions: one class per row of X_test."
        raise _BadOutput(f"returned {_fmt(got)}", hint) from None
    if len(alphas) != n_rounds:
        hint = f"Return one alpha per round: {n_rounds} of them."
        raise _BadOutput(f"returned {len(alphas)} alphas, expected {n_rounds}", hint)
    if predictions.shape != (n_test,):
        hint = f"Return one predicted class per row of X_test ({n_test} rows)."
        raise _BadOutput(f"returned predictions of shape {predictions.shape}", hint)
    return alphas, predictions


def _same_alphas(a, b):
    return b is not None and np.allclose(a, b, rtol=RTOL, atol=ATOL)


def _compare_boosting(args, got, expected):
    """True if alphas and predictions are treelib's, else a ``_BadOutput`` with its hint."""
    X, y, X_test, n_rounds = args
    alphas, predictions = _as_boosting(got, n_rounds, len(X_test))
    if not _same_alphas(alphas, expected[0]):
        r = int(np.flatnonzero(~np.isclose(alphas, expected[0], rtol=RTOL, atol=ATOL))[0])
        message = f"gave alpha {alphas[r]:.6g} in round {r + 1}, expected {expected[0][r]:.6g}"
        raise _BadOutput(message, _alpha_hint(X, y, alphas))
    wrong = np.flatnonzero(predictions != expected[1])
    if len(wrong):
        i = int(wrong[0])
        message = (
            f"gave the right alphas but {len(wrong)} wrong predictions of {len(X_test)}; "
            f"row {i} of X_test: {_fmt(predictions[i])}, expected {int(expected[1][i])}"
        )
        raise _BadOutput(message, _vote_hint(X, y, X_test, expected[0], predictions))
    return True


def _alpha_hint(X, y, alphas):
    for mistake in ["K-1", "half", "normalise", "correct", "unweighted"]:
        if _same_alphas(alphas, _samme_variant(X, y, len(alphas), mistake)):
            return ADABOOST_HINTS[mistake]
    if np.isnan(alphas).any() or alphas[0] < 0:
        return ADABOOST_HINTS["divide"]
    return ADABOOST_HINTS["alpha"]


def _vote_hint(X, y, X_test, alphas, predictions):
    _, counts, last = _votes(X, y, X_test, alphas)
    if np.array_equal(predictions, counts.argmax(1)):
        return ADABOOST_HINTS["majority"]
    if np.array_equal(predictions, last):
        return ADABOOST_HINTS["last"]
    return ADABOOST_HINTS["vote"]


def check_adaboost(fn):
    """Check ``adaboost(X, y, X_test, n_rounds)``, the capstone exercise of Chapter 6.

    ``fn`` boosts ``n_rounds`` stumps with SAMME and returns ``(alphas,
    predictions)``. ``X`` is a float64 numpy array of shape (n, d), ``y`` an int
    numpy array of classes ``0..K-1`` (K = 2, 3 or 4), ``X_test`` a float64
    array of shape (m, d). Start from equal weights ``1/n``; each round fits
    ``treelib.DecisionTreeClassifier(max_depth=1)`` with
    ``sample_weight=w``, computes ``err = sum(w[incorrect]) / sum(w)`` and
    ``alpha = log((1 - err) / err) + log(K - 1)``, and multiplies the weights of
    the misclassified rows by ``exp(alpha)``, renormalised. ``alphas`` holds the
    ``n_rounds`` alphas (list or array), ``predictions`` the class of each row of
    ``X_test``: the ``k`` with the largest total alpha of the stumps voting
    ``k``. Compared with :class:`treelib.AdaBoostClassifier` (its
    ``estimator_weights_`` and ``predict``) on seeded tie-free data sets on which
    no round stops boosting early.

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from treelib import DecisionTreeClassifier
    >>> def my_adaboost(X, y, X_test, n_rounds):
    ...     K, w = int(y.max()) + 1, np.full(len(y), 1 / len(y))
    ...     alphas, votes = [], np.zeros((len(X_test), K))
    ...     for _ in range(n_rounds):
    ...         stump = DecisionTreeClassifier(max_depth=1).fit(X, y, sample_weight=w)
    ...         incorrect = stump.predict(X) != y
    ...         err = w[incorrect].sum() / w.sum()
    ...         alpha = math.log((1 - err) / err) + math.log(K - 1)
    ...         w = w * np.exp(alpha * incorrect)
    ...         w = w / w.sum()
    ...         alphas.append(alpha)
    ...         votes[np.arange(len(X_test)), stump.predict(X_test)] += alpha
    ...     return alphas, votes.argmax(axis=1)
    >>> check_adaboost(my_adaboost)
    check_adaboost: all 5 cases passed. Well done!
    True
    """
    cases = []
    for X, y, X_test, alphas, predictions in _boosting_data():
        args = (X, y, X_test, N_ROUNDS)
        compare = functools.partial(_compare_boosting, args)
        show = _show_boosting(X, y, X_test)
        nan = (("NaN", ADABOOST_HINTS["divide"]), ("math domain error", ADABOOST_HINTS["divide"]))
        cases.append(_Case(args, (alphas, predictions), None, show, compare, nan))
    return _run_cases("adaboost", fn, cases, None)


def _show_boosting(X, y, X_test):
    k = int(y.max()) + 1
    return (
        f"adaboost(X, y, X_test, {N_ROUNDS}) on {len(y)} rows, {X.shape[1]} features, {k} classes"
    )
