"""Chapter 8's checkers: a right answer passes, the classic mistakes fail with their hint.

The reference answers are written here from the formulas (the negative gradients
of three losses; one log-loss round with Newton leaves), not taken from treelib's
boosting code, so a wrong reference in treelib would fail these tests.
"""

import numpy as np
import pytest
import torch

from treelib import DecisionTreeRegressor
from treelib.exercises import CHECKERS, check_boosting_round, check_negative_gradient
from treelib.exercises.ch08 import GRADIENT_HINTS, ROUND_HINTS


def verdict(checker, fn, capsys):
    result = checker(fn)
    out, err = capsys.readouterr()
    assert err == ""
    return result, out


# --- the negative gradient -----------------------------------------------------------


def negative_gradient(loss_name, y, raw, flip=1.0, scale=1.0, sigmoid=True, sign=True):
    """The book's answer; the keyword arguments build the classic mistakes."""
    if loss_name == "squared_error":
        return flip * scale * (y - raw)
    if loss_name == "absolute_error":
        return flip * (torch.sign(y - raw) if sign else (y - raw).abs())
    return flip * (y - (1 / (1 + torch.exp(-raw)) if sigmoid else raw))


def test_negative_gradient_reference_passes(capsys):
    result, out = verdict(check_negative_gradient, negative_gradient, capsys)
    assert result is True
    assert out == "check_negative_gradient: all 12 cases passed. Well done!\n"


def test_negative_gradient_hand_values():
    # the checker's first fixed case of each loss, worked out by hand
    y, raw = torch.tensor([0.0, 1.0]), torch.tensor([0.0, 0.0])
    assert negative_gradient("log_loss", y, raw).tolist() == [-0.5, 0.5]
    y, raw = torch.tensor([1.0, -2.0, 0.0]), torch.tensor([0.5, 2.5, 0.0])
    assert negative_gradient("absolute_error", y, raw).tolist() == [1.0, -1.0, 0.0]


@pytest.mark.parametrize(
    "mistake, hint",
    [
        (dict(flip=-1.0), "sign"),
        (dict(scale=2.0), "half"),
        (dict(sigmoid=False), "sigmoid"),
        (dict(sign=False), "abs"),
    ],
)
def test_negative_gradient_mistakes_get_their_hint(mistake, hint, capsys):
    def wrong(loss_name, y, raw):
        return negative_gradient(loss_name, y, raw, **mistake)

    result, out = verdict(check_negative_gradient, wrong, capsys)
    assert result is False
    assert f"Hint: {GRADIENT_HINTS[hint]}" in out


def test_negative_gradient_wrong_shape(capsys):
    result, out = verdict(check_negative_gradient, lambda name, y, raw: (y - raw).sum(), capsys)
    assert result is False and GRADIENT_HINTS["shape"] in out


# --- one boosting round ---------------------------------------------------------------


def boosting_round(X, y, raw, learning_rate, leaf="newton", rate=None, flip=1.0):
    """One log-loss round from the formulas; the keyword arguments build mistakes."""
    p = 1 / (1 + torch.exp(-raw))
    residual = y - p
    tree = DecisionTreeRegressor(max_depth=2).fit(X.numpy(), residual.numpy())
    leaves = tree.apply(X.numpy())
    step = torch.zeros(len(y), dtype=torch.float64)
    for j in np.unique(leaves):
        here = torch.from_numpy(leaves == j)
        if leaf == "mean":
            step[here] = residual[here].mean()
        elif leaf == "hessian":
            step[here] = residual[here].sum() / p[here].sum()
        else:
            step[here] = residual[here].sum() / (p * (1 - p))[here].sum()
    return raw + flip * (learning_rate if rate is None else rate) * step


def test_boosting_round_reference_passes(capsys):
    result, out = verdict(check_boosting_round, boosting_round, capsys)
    assert result is True
    assert out == "check_boosting_round: all 6 cases passed. Well done!\n"


def test_boosting_round_newton_value_by_hand():
    # four samples at F = 0 (p = 1/2): a stump cannot split a constant X, one leaf;
    # Newton value sum(y - p) / sum(p (1 - p)) = (3 * 0.5 - 0.5) / (4 * 0.25) = 1
    X = torch.zeros((4, 1), dtype=torch.float64)
    y = torch.tensor([1.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    new = boosting_round(X, y, torch.zeros(4, dtype=torch.float64), 0.5)
    assert torch.allclose(new, torch.full((4,), 0.5, dtype=torch.float64))


@pytest.mark.parametrize(
    "mistake, hint",
    [
        (dict(leaf="mean"), "mean"),
        (dict(rate=1.0), "rate"),
        (dict(flip=-1.0), "sign"),
        (dict(leaf="hessian"), "hessian"),
    ],
)
def test_boosting_round_mistakes_get_their_hint(mistake, hint, capsys):
    def wrong(X, y, raw, learning_rate):
        return boosting_round(X, y, raw, learning_rate, **mistake)

    result, out = verdict(check_boosting_round, wrong, capsys)
    assert result is False
    assert f"Hint: {ROUND_HINTS[hint]}" in out


# --- both: errors, stubs, odd answers ----------------------------------------------------


@pytest.mark.parametrize("name", ["negative_gradient", "boosting_round"])
def test_errors_stubs_and_odd_answers_fail_gracefully(name, capsys):
    checker = CHECKERS[name]

    def boom(*args):
        raise ValueError("boom")

    def stub(*args):
        raise NotImplementedError

    result, out = verdict(checker, boom, capsys)
    assert result is False and "raised ValueError: boom" in out
    result, out = verdict(checker, stub, capsys)
    assert result is False and out.startswith(f"check_{name}: not implemented yet.")
    for answer in [None, "text", [1, 2], torch.zeros(2, 2)]:
        result, out = verdict(checker, lambda *args, a=answer: a, capsys)
        assert result is False and "First failure:" in out and "Hint:" in out
    result, out = verdict(checker, 0.5, capsys)
    assert result is False and "expected a function" in out
