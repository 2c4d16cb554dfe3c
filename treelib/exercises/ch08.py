"""Chapter 8's checkers: the negative gradient of a loss, and one round of boosting.

Introduced in Chapter 8.
"""

import functools

import numpy as np
import torch

from ..gradient_boosting import BinomialLoss, newton_leaf_values
from ..tree import DecisionTreeRegressor
from ._framework import _BadOutput, _Case, _fmt, _run_cases, case_seed

LOSSES = ("squared_error", "absolute_error", "log_loss")
GRADIENT_HINTS = {
    "sign": "The sign is flipped: the NEGATIVE gradient points downhill, e.g. y - F for "
    "squared error, not F - y.",
    "half": "For the loss (y - F)^2 / 2 the negative gradient is y - F: no factor 2 or 1/2.",
    "sigmoid": "For log-loss F is a log-odds: turn it into a probability first, "
    "p = torch.sigmoid(F), then return y - p.",
    "abs": "The absolute error |y - F| has the slope +-1: return torch.sign(y - F).",
    "shape": "Return one value per sample: a tensor of the same length as y.",
}
ROUND_HINTS = {
    "mean": "Those are the tree's own leaf means of the residuals. Log-loss leaves take one "
    "Newton step instead: sum(y - p) / sum(p * (1 - p)) over the leaf's samples.",
    "rate": "Forgot the learning rate: add learning_rate * leaf value to raw.",
    "sign": "The step goes the wrong way: fit the tree to y - p (the negative gradient), and "
    "add the leaf values to raw.",
    "hessian": "The denominator is the sum of the hessians p * (1 - p), one per sample.",
    "newton": "Check each leaf: gamma = sum(y - p) / sum(p * (1 - p)) over its samples, "
    "p = sigmoid(raw); then raw + learning_rate * gamma of each sample's leaf.",
}
MAX_DEPTH = 2


def _reference_gradient(loss_name, y, raw):
    if loss_name == "squared_error":
        return y - raw
    if loss_name == "absolute_error":
        return torch.sign(y - raw)
    return y - torch.sigmoid(raw)


def _gradient_cases():
    rng = torch.Generator().manual_seed(case_seed(8))
    cases = [
        ("squared_error", [1.0, 2.0, 3.0], [0.5, 2.5, 3.0]),
        ("absolute_error", [1.0, -2.0, 3.0, 0.0], [0.5, 2.5, 2.0, -1.0]),
        ("log_loss", [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 2.0, -1.0]),
    ]
    cases = [(name, torch.tensor(y).double(), torch.tensor(r).double()) for name, y, r in cases]
    for i in range(9):
        name, n = LOSSES[i % 3], int(torch.randint(3, 12, (), generator=rng))
        raw = torch.randn(n, generator=rng, dtype=torch.float64)
        if name == "log_loss":
            y = torch.randint(0, 2, (n,), generator=rng).double()
        else:
            y = 2 * torch.randn(n, generator=rng, dtype=torch.float64)
        cases.append((name, y, raw))
    return cases


def _as_vector(got, n, what="returned"):
    if got is None:
        raise _BadOutput(f"{what} None", "Did you forget the `return` statement?")
    if not isinstance(got, torch.Tensor | np.ndarray) or tuple(got.shape) != (n,):
        raise _BadOutput(f"{what} {_fmt(got)}", GRADIENT_HINTS["shape"])
    return torch.as_tensor(got).detach().double()


def _same(a, b):
    return bool(torch.allclose(a, b, rtol=1e-6, atol=1e-9))


def _compare_gradient(got, expected):
    return _same(_as_vector(got, len(expected)), expected)


def _gradient_hint(args, got, expected):
    name, y, raw = args
    got = _as_vector(got, len(y))
    variants = [(-expected, "sign"), (2 * expected, "half"), (0.5 * expected, "half")]
    if name == "log_loss":
        variants += [(y - raw, "sigmoid"), (raw - y, "sigmoid"), (torch.sigmoid(raw) - y, "sign")]
    if name == "absolute_error":
        variants += [((y - raw).abs(), "abs"), (y - raw, "abs")]
    return next((GRADIENT_HINTS[h] for wrong, h in variants if _same(got, wrong)), None)


def check_negative_gradient(fn):
    """Check ``negative_gradient(loss_name, y, raw)``, an exercise of Chapter 8.

    ``fn`` takes the name of a loss, the targets ``y`` and the raw predictions
    ``raw`` (1-D float64 tensors of the same length) and returns the negative
    gradient of the loss with respect to ``raw``, one value per sample:
    ``y - raw`` for ``"squared_error"`` (the loss ``(y - F)^2 / 2``),
    ``sign(y - raw)`` for ``"absolute_error"`` and ``y - sigmoid(raw)`` for
    ``"log_loss"`` (``y`` in {0, 1}, ``raw`` a log-odds).

    Examples
    --------
    >>> import torch
    >>> def my_negative_gradient(loss_name, y, raw):
    ...     if loss_name == "squared_error":
    ...         return y - raw
    ...     if loss_name == "absolute_error":
    ...         return torch.sign(y - raw)
    ...     return y - torch.sigmoid(raw)
    >>> check_negative_gradient(my_negative_gradient)
    check_negative_gradient: all 12 cases passed. Well done!
    True
    """
    cases = [_Case(args, _reference_gradient(*args)) for args in _gradient_cases()]
    return _run_cases("negative_gradient", fn, cases, _compare_gradient, _gradient_hint)


# --- One round of gradient boosting with log-loss ---


def _tree(X, residual, random_state=0):
    return DecisionTreeRegressor(max_depth=MAX_DEPTH, random_state=random_state).fit(X, residual)


def _round(X, y, raw, learning_rate, leaf="newton", random_state=0):
    """One log-loss round; ``leaf`` builds the classic mistakes for the hints."""
    p = torch.sigmoid(raw)
    residual = y - p
    tree = _tree(X.numpy(), residual.numpy(), random_state)
    leaves = torch.from_numpy(tree.apply(X.numpy()))
    n_nodes = tree.tree_.node_count
    if leaf == "mean":
        values = torch.from_numpy(tree.tree_.value[:, 0, 0])
    else:
        hessian = p if leaf == "hessian" else p * (1 - p)
        ones = torch.ones_like(y)
        values = newton_leaf_values(leaves, residual, hessian, ones, n_nodes)
    return raw + learning_rate * values[leaves]


@functools.lru_cache(maxsize=1)
def _round_data():
    """Seeded tie-free rounds: two seeds of the tree give the same answer."""
    rng, found = np.random.RandomState(case_seed(8)), []
    while len(found) < 6:
        n = 30 + 10 * len(found)
        X = torch.from_numpy(rng.normal(size=(n, 3)).round(3))
        score = X[:, 0] - X[:, 1] ** 2 + torch.from_numpy(rng.normal(scale=0.8, size=n))
        y = (score > 0).double()
        if len(found) % 2:  # a later round: any log-odds
            raw = torch.from_numpy(rng.normal(scale=0.5, size=n))
        else:  # the first round: every sample starts at the log-odds of the prior
            raw = BinomialLoss().init_raw_prediction(y, torch.ones(n)).expand(n).clone()
        rate = (0.1, 0.5, 1.0)[len(found) % 3]
        a, b = (_round(X, y, raw, rate, random_state=s) for s in (0, 1))
        if torch.allclose(a, b, rtol=0, atol=1e-12):
            found.append((X, y, raw, rate, a))
    return tuple(found)


def _round_hint(args, got, expected):
    X, y, raw, rate = args
    got = _as_vector(got, len(y))
    variants = [
        (_round(X, y, raw, rate, leaf="mean"), "mean"),
        (_round(X, y, raw, 1.0), "rate"),
        (raw - (expected - raw), "sign"),
        (_round(X, y, raw, rate, leaf="hessian"), "hessian"),
    ]
    if rate == 1.0:
        variants.pop(1)
    return next(
        (ROUND_HINTS[h] for wrong, h in variants if _same(got, wrong)), ROUND_HINTS["newton"]
    )


def check_boosting_round(fn):
    """Check ``boosting_round(X, y, raw, learning_rate)``, an exercise of Chapter 8.

    One round of gradient boosting with log-loss (two classes): ``X`` a float64
    tensor (n, d), ``y`` a float64 tensor of 0s and 1s, ``raw`` the current
    log-odds (float64, length n). Fit ``treelib.DecisionTreeRegressor(max_depth=2)``
    to the residuals ``y - sigmoid(raw)``; give every leaf the Newton value
    ``sum(y - p) / sum(p (1 - p))`` over its samples; return the new log-odds
    ``raw + learning_rate * value`` of each sample's leaf (length n). Compared
    with treelib's own round on seeded tie-free data.

    Examples
    --------
    >>> import torch
    >>> from treelib import DecisionTreeRegressor
    >>> def my_boosting_round(X, y, raw, learning_rate):
    ...     p = torch.sigmoid(raw)
    ...     tree = DecisionTreeRegressor(max_depth=2).fit(X.numpy(), (y - p).numpy())
    ...     leaf = torch.from_numpy(tree.apply(X.numpy()))
    ...     gamma = torch.zeros(tree.tree_.node_count, dtype=torch.float64)
    ...     for j in leaf.unique():
    ...         here = leaf == j
    ...         gamma[j] = (y - p)[here].sum() / (p * (1 - p))[here].sum()
    ...     return raw + learning_rate * gamma[leaf]
    >>> check_boosting_round(my_boosting_round)
    check_boosting_round: all 6 cases passed. Well done!
    True
    """
    cases = []
    for X, y, raw, rate, expected in _round_data():
        show = f"boosting_round(X, y, raw, {rate}) on {len(y)} rows, {X.shape[1]} features"
        cases.append(_Case((X, y, raw, rate), expected, show=show))
    return _run_cases("boosting_round", fn, cases, _compare_gradient, _round_hint)
