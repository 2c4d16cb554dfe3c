"""The exercise checkers (Chapter 1 onwards): right answers pass, typical mistakes get their hint.

The "learner" solutions below are written from scratch here on purpose: they
must not share code with the treelib reference they are checked against.
"""

import doctest
import importlib
import math
import pkgutil
import time
import warnings
from itertools import combinations

import numpy as np
import pytest
import torch

import treelib.exercises
from treelib.exercises import (
    CAPSTONES,
    CHECKERS,
    check_adaboost_round,
    check_best_threshold,
    check_bootstrap_counts,
    check_entropy,
    check_gini,
    check_information_gain,
    check_predict_one,
    check_squared_error,
)

# --- Correct solutions, from scratch ---


def gini(counts):
    p = counts / counts.sum()
    return 1 - (p**2).sum()


def entropy(counts, log=torch.log2):
    p = counts / counts.sum()
    p = p[p > 0]
    return -(p * log(p)).sum()


def best_threshold(x, y, threshold=lambda a, b: (a + b) / 2, goes_left=None, score=None):
    """The book's answer; the keyword arguments build the classic mistakes."""
    goes_left = goes_left or (lambda x, t: x <= t)
    score = score or (lambda n_l, g_l, n_r, g_r: (n_l * g_l + n_r * g_r) / (n_l + n_r))
    k, values = int(y.max()) + 1, sorted(set(x.tolist()))
    best, best_score = None, math.inf
    for a, b in zip(values[:-1], values[1:]):
        t = threshold(a, b)
        left = goes_left(x, t)
        g_l = float(gini(torch.bincount(y[left], minlength=k).double()))
        g_r = float(gini(torch.bincount(y[~left], minlength=k).double()))
        s = score(int(left.sum()), g_l, int((~left).sum()), g_r)
        if s < best_score:
            best, best_score = t, s
    return best


def information_gain(parent, left, right, impurity=entropy):
    n = parent.sum()
    children = left.sum() / n * impurity(left) + right.sum() / n * impurity(right)
    return impurity(parent) - children


def predict_one(tree_, x, goes_left=lambda v, t: v <= t, swap=False):
    node = 0
    while tree_.children_left[node] != -1:
        left = bool(goes_left(x[tree_.feature[node]], tree_.threshold[node])) != swap
        node = tree_.children_left[node] if left else tree_.children_right[node]
    return int(node)


def squared_error(y):
    return ((y - y.mean()) ** 2).mean()


def bootstrap_counts(n, generator):
    draws = torch.randint(0, n, (n,), generator=generator)
    return torch.bincount(draws, minlength=n)


def adaboost_round(weights, incorrect, n_classes, alpha_of=None, normalise=True):
    err = float(weights[incorrect].sum())
    alpha_of = alpha_of or (lambda err, k: math.log((1 - err) / err) + math.log(k - 1))
    alpha = alpha_of(err, n_classes)
    new = weights * torch.exp(alpha * incorrect.double())
    return alpha, new / new.sum() if normalise else new


def negative_gradient(loss_name, y, raw):
    if loss_name == "squared_error":
        return y - raw
    if loss_name == "absolute_error":
        return torch.sign(y - raw)
    return y - 1 / (1 + torch.exp(-raw))


def boosting_round(X, y, raw, learning_rate):
    from treelib import DecisionTreeRegressor

    p = 1 / (1 + torch.exp(-raw))
    tree = DecisionTreeRegressor(max_depth=2).fit(X.numpy(), (y - p).numpy())
    leaf = torch.from_numpy(tree.apply(X.numpy()))
    step = torch.zeros(len(y), dtype=torch.float64)
    for j in leaf.unique():
        here = leaf == j
        step[here] = (y - p)[here].sum() / (p * (1 - p))[here].sum()
    return raw + learning_rate * step


def split_gain(g_left, h_left, g_right, h_right, l2):
    g, h = g_left + g_right, h_left + h_right
    return g_left**2 / (h_left + l2) + g_right**2 / (h_right + l2) - g**2 / (h + l2)


def child_histograms(codes, g, h, left, n_bins):
    def hist(rows):
        out = torch.zeros(3, n_bins, dtype=torch.float64)
        for c, gi, hi in zip(codes[rows].tolist(), g[rows].tolist(), h[rows].tolist()):
            out[0, c] += gi
            out[1, c] += hi
            out[2, c] += 1
        return out

    parent = hist(torch.ones_like(left))
    if int(left.sum()) <= int((~left).sum()):
        small = hist(left)
        return small, parent - small
    small = hist(~left)
    return parent - small, small


def shapley_values(value, d, weight=None, plain=False, containing=False):
    """Shapley values by their definition; the keyword arguments build the classic mistakes."""
    weight = weight or (lambda s: math.factorial(s) * math.factorial(d - s - 1))
    phi = np.zeros(d)
    for i in range(d):
        for size in range(d):
            for S in combinations(range(d), size):
                if (i in S) != containing:
                    continue
                with_i = tuple(sorted(set(S) | {i}))
                w = 1.0 if plain else weight(size) / math.factorial(d)
                phi[i] += w * (value(with_i) - value(S))
    return phi


def pd_recursion(tree, feature, grid, share=None, goes_left=None, stop=False):
    """Friedman's weighted traversal, recursively; the keyword arguments build the mistakes."""
    n = tree.weighted_n_node_samples
    share = share or (lambda node, child: n[child] / n[node])
    goes_left = goes_left or (lambda x, t: x <= t)

    def walk(node, x):
        left, right = tree.children_left[node], tree.children_right[node]
        if left == -1 or (stop and tree.feature[node] != feature):
            return float(tree.value[node][0][0])
        if tree.feature[node] == feature:
            return walk(left if goes_left(x, tree.threshold[node]) else right, x)
        return share(node, left) * walk(left, x) + share(node, right) * walk(right, x)

    return np.array([walk(0, x) for x in grid])


SOLUTIONS = {
    "gini": gini,
    "best_threshold": best_threshold,
    "predict_one": predict_one,
    "squared_error": squared_error,
    "entropy": entropy,
    "information_gain": information_gain,
    "bootstrap_counts": bootstrap_counts,
    "adaboost_round": adaboost_round,
    "negative_gradient": negative_gradient,
    "boosting_round": boosting_round,
    "split_gain": split_gain,
    "child_histograms": child_histograms,
    "shapley_values": shapley_values,
    "pd_recursion": pd_recursion,
}


def verdict(checker, fn, capsys):
    """Run a checker; return (result, printed text), insisting that nothing reached stderr."""
    result = checker(fn)
    out, err = capsys.readouterr()
    assert err == ""
    return result, out


# --- Every checker: the right answer, an error, a stub, odd return values ---


def test_one_checker_per_exercise():
    # the capstones' solutions and tests are in tests/test_capstones.py
    assert set(CHECKERS) == set(SOLUTIONS) | set(CAPSTONES)
    assert not set(SOLUTIONS) & set(CAPSTONES)
    assert all(checker.__name__ == f"check_{name}" for name, checker in CHECKERS.items())


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_reference_solution_passes(name, capsys):
    result, out = verdict(CHECKERS[name], SOLUTIONS[name], capsys)
    assert result is True
    assert out.startswith(f"check_{name}: all ") and out.endswith("cases passed. Well done!\n")


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_exception_is_reported_not_raised(name, capsys):
    def boom(*args):
        raise ValueError("boom")

    result, out = verdict(CHECKERS[name], boom, capsys)
    assert result is False
    assert f"check_{name}: 0/" in out and "raised ValueError: boom" in out
    assert "Hint: Call your function on this input yourself" in out


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_stub_is_not_implemented_yet(name, capsys):
    def stub(*args):
        raise NotImplementedError

    result, out = verdict(CHECKERS[name], stub, capsys)
    assert result is False
    assert out.startswith(f"check_{name}: not implemented yet.")


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
@pytest.mark.parametrize("answer", [None, "text", [1, 2], torch.zeros(2, 2)])
def test_wrong_return_types_fail_gracefully(name, answer, capsys):
    result, out = verdict(CHECKERS[name], lambda *args: answer, capsys)
    assert result is False
    assert "First failure:" in out and "Hint:" in out


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_not_a_function(name, capsys):
    result, out = verdict(CHECKERS[name], 0.5, capsys)
    assert result is False
    assert "expected a function" in out


def test_index_error_hints_at_off_by_one(capsys):
    result, out = verdict(check_best_threshold, lambda x, y: float(x[len(x)]), capsys)
    assert result is False and "raised IndexError" in out and "one step too far" in out


def test_learner_warnings_stay_off_stderr(capsys):
    def noisy_gini(counts):
        warnings.warn("careful!", stacklevel=1)
        return gini(counts)

    assert verdict(check_gini, noisy_gini, capsys)[0] is True


def test_learner_editing_its_input_cannot_spoil_later_cases(capsys):
    def destructive_gini(counts):
        value = gini(counts)
        counts.zero_()
        return value

    assert verdict(check_gini, destructive_gini, capsys)[0] is True
    assert verdict(check_gini, gini, capsys)[0] is True


def test_verdicts_are_deterministic(capsys):
    first = verdict(check_bootstrap_counts, bootstrap_counts, capsys)
    assert first == verdict(check_bootstrap_counts, bootstrap_counts, capsys)
    wrong = lambda y: y.var()  # noqa: E731
    assert verdict(check_squared_error, wrong, capsys) == verdict(
        check_squared_error, wrong, capsys
    )


def exercise_modules():
    package = treelib.exercises
    names = [m.name for m in pkgutil.iter_modules(package.__path__)]
    return [package] + [importlib.import_module(f"{package.__name__}.{n}") for n in names]


def test_docstring_examples():
    results = [doctest.testmod(module) for module in exercise_modules()]
    assert sum(r.attempted for r in results) >= 2 * len(CHECKERS)  # every checker's example
    assert all(r.failed == 0 for r in results)


def test_one_module_per_chapter():
    modules = {m.__name__.rsplit(".", 1)[1]: m for m in exercise_modules()[1:]}
    assert set(modules) == {"_framework"} | {f"ch{n:02d}" for n in range(1, 11)}
    for name, checker in CHECKERS.items():
        chapter = checker.__module__.rsplit(".", 1)[1]
        assert f"Chapter {int(chapter[2:])}" in checker.__doc__, name
        assert getattr(treelib.exercises, checker.__name__) is checker


def test_the_old_module_s_public_names_still_import():
    # treelib/exercises.py was one module; every public name it had is still importable
    old = ["CHECKERS", "RTOL", "ATOL", "LN2", "ERROR_HINT", "DEFAULT_HINT", "FIXED_COUNTS"]
    old += ["NORMALISE", "GINI_HINTS", "FIXED_SPLITS", "THRESHOLD_HINTS", "FIXED_TARGETS"]
    old += ["SQUARED_ERROR_HINTS", "ENTROPY_HINTS", "FIXED_GAINS", "GAIN_HINTS", "PERMUTATION"]
    old += ["USE_GENERATOR", "FIXED_ROUNDS", "ROUND_HINTS"]
    old += [checker.__name__ for checker in CHECKERS.values()]
    assert all(hasattr(treelib.exercises, name) for name in old)
    assert set(old) <= set(treelib.exercises.__all__)


def test_every_checker_names_its_chapter():
    chapters = {"gini": 1, "best_threshold": 1, "predict_one": 2, "squared_error": 3}
    chapters |= {"entropy": 4, "information_gain": 4, "bootstrap_counts": 5, "adaboost_round": 6}
    chapters |= {"grow_tree": 2, "random_forest": 5, "adaboost": 6, "segmented_cumsum": 7}
    chapters |= {"negative_gradient": 8, "boosting_round": 8}
    chapters |= {"split_gain": 9, "child_histograms": 9, "leafwise_tree": 9}
    chapters |= {"shapley_values": 10, "pd_recursion": 10, "tree_shap": 10}
    for name, checker in CHECKERS.items():
        assert f"Chapter {chapters[name]}" in checker.__doc__
        assert ">>> check_" in checker.__doc__


# --- Chapter 1: Gini ---


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda c: ((c / c.sum()) ** 2).sum(), "You returned sum(p**2)"),
        (lambda c: 1 - (c**2).sum(), "Turn the counts into proportions first"),
        (lambda c: 1 - ((c / len(c)) ** 2).sum(), "not by len(counts)"),
        (lambda c: entropy(c), "That is the entropy"),
        (lambda c: c / c.sum(), "not a single number"),
    ],
)
def test_gini_mistakes(wrong, hint, capsys):
    result, out = verdict(check_gini, wrong, capsys)
    assert result is False and hint in out
    assert "First failure: gini(tensor([3.0, 1.0]))" in out


def test_gini_failure_message(capsys):
    _, out = verdict(check_gini, lambda c: float(((c / c.sum()) ** 2).sum()), capsys)
    assert out == (
        "check_gini: 2/18 cases passed.\n"
        "  First failure: gini(tensor([3.0, 1.0])) returned 0.625, expected 0.375.\n"
        "  Hint: You returned sum(p**2); Gini impurity is 1 - sum(p**2).\n"
    )


# --- Chapter 1: best threshold ---


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            lambda x, y: best_threshold(x, y, lambda a, b: b, lambda x, t: x < t),
            "with `x < t` going left",
        ),
        (lambda x, y: best_threshold(x, y, lambda a, b: a), "is a data value"),
        (
            lambda x, y: best_threshold(x, y, score=lambda n_l, g_l, n_r, g_r: g_l + g_r),
            "averaged the children's impurities equally",
        ),
        (lambda x, y: float(x.max()) + 0.5, "off-by-one"),
        (lambda x, y: best_threshold(x, y, score=lambda *s: -s[0] * s[1] - s[2] * s[3]), "worst"),
    ],
)
def test_best_threshold_mistakes(wrong, hint, capsys):
    result, out = verdict(check_best_threshold, wrong, capsys)
    assert result is False
    assert hint in out.split("Hint:")[1]


def test_best_threshold_off_by_one_neighbour(capsys):
    def shifted(x, y):
        """Scores the split after the threshold it reports."""
        values = sorted(set(x.tolist()))
        best = best_threshold(x, y)
        i = next(i for i, (a, b) in enumerate(zip(values, values[1:])) if (a + b) / 2 == best)
        return (values[i - 1] + values[i]) / 2 if i > 0 else (values[1] + values[2]) / 2

    result, out = verdict(check_best_threshold, shifted, capsys)
    assert result is False and "one candidate away from the best" in out


def test_best_threshold_accepts_a_tensor_answer(capsys):
    as_tensor = lambda x, y: torch.tensor(best_threshold(x, y))  # noqa: E731
    assert verdict(check_best_threshold, as_tensor, capsys)[0] is True


# --- Chapter 2: predict_one ---


def test_predict_one_mistakes(capsys):
    strict = lambda tree_, x: predict_one(tree_, x, lambda v, t: v < t)  # noqa: E731
    result, out = verdict(check_predict_one, strict, capsys)
    assert result is False and "you used `<`" in out
    swapped = lambda tree_, x: predict_one(tree_, x, swap=True)  # noqa: E731
    result, out = verdict(check_predict_one, swapped, capsys)
    assert result is False and "Left and right are swapped" in out


def test_predict_one_returning_the_class(capsys):
    def predict_class(tree_, x):
        return int(tree_.value[predict_one(tree_, x), 0].argmax())

    result, out = verdict(check_predict_one, predict_class, capsys)
    assert result is False and "looks like the predicted class" in out


def test_predict_one_stopping_early(capsys):
    def one_step_short(tree_, x):
        node, parent = 0, 0
        while tree_.children_left[node] != -1:
            left = x[tree_.feature[node]] <= tree_.threshold[node]
            parent, node = node, tree_.children_left[node] if left else tree_.children_right[node]
        return int(parent)

    result, out = verdict(check_predict_one, one_step_short, capsys)
    assert result is False and "is not a leaf" in out


# --- Chapter 3: squared error ---


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda y: y.var(), "You divided by n - 1"),
        (lambda y: (y - y.mean()).abs().mean(), "Forgot to square"),
        (lambda y: y.std(correction=0), "standard deviation"),
        (lambda y: ((y - y.mean()) ** 2).sum(), "sum of squared deviations"),
    ],
)
def test_squared_error_mistakes(wrong, hint, capsys):
    result, out = verdict(check_squared_error, wrong, capsys)
    assert result is False and hint in out.split("Hint:")[1]


# --- Chapter 4: entropy and information gain ---


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda c: entropy(c, torch.log), "natural log"),
        (lambda c: -(c / c.sum() * torch.log2(c / c.sum())).sum(), "0 * log2(0) = nan"),
        (lambda c: -entropy(c), "Forgot the minus sign"),
        (gini, "That is the Gini impurity"),
    ],
)
def test_entropy_mistakes(wrong, hint, capsys):
    result, out = verdict(check_entropy, wrong, capsys)
    assert result is False and hint in out.split("Hint:")[1]


def test_entropy_nan_shows_the_pure_node(capsys):
    naive = lambda c: -(c / c.sum() * torch.log2(c / c.sum())).sum()  # noqa: E731
    _, out = verdict(check_entropy, naive, capsys)
    assert "First failure: entropy(tensor([10.0, 0.0])) returned tensor(nan), expected 0.0" in out


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            lambda p, left, right: entropy(p) - (entropy(left) + entropy(right)) / 2,
            "averaged the children",
        ),
        (
            lambda p, left, right: information_gain(
                p, left, right, lambda c: entropy(c, torch.log)
            ),
            "natural",
        ),
        (lambda p, left, right: information_gain(p, left, right, gini), "Gini impurity"),
        (
            lambda p, left, right: (
                entropy(p) - left.sum() * entropy(left) - right.sum() * entropy(right)
            ),
            "not by its",
        ),
    ],
)
def test_information_gain_mistakes(wrong, hint, capsys):
    result, out = verdict(check_information_gain, wrong, capsys)
    assert result is False and hint in out.split("Hint:")[1]


# --- Chapter 5: bootstrap counts ---


def bincount(draws, n):
    return torch.bincount(draws, minlength=n)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda n, g: bincount(torch.randperm(n, generator=g), n), "that is a permutation"),
        (lambda n, g: torch.ones(n, dtype=torch.int64), "that is a permutation"),
        (lambda n, g: bincount(torch.randint(0, n, (n,)), n), "generator passed in"),
        (
            lambda n, g: bootstrap_counts(n, torch.Generator().manual_seed(0)),
            "do not reseed inside your function",
        ),
        (lambda n, g: bootstrap_counts(n, g).double(), "integer tensor"),
        (lambda n, g: torch.bincount(torch.randint(0, n, (n,), generator=g)), "minlength=n"),
        (lambda n, g: bincount(torch.randint(0, n, (n // 2 + 1,), generator=g), n), "exactly n"),
        (lambda n, g: bootstrap_counts(n, g).numpy(), "Return a tensor of counts"),
        (lambda n, g: bincount(torch.randint(0, n // 2 + 1, (n,), generator=g), n), "equal prob"),
    ],
)
def test_bootstrap_counts_mistakes(wrong, hint, capsys):
    result, out = verdict(check_bootstrap_counts, wrong, capsys)
    assert result is False and hint in out.split("Hint:")[1]


@pytest.mark.parametrize(
    "high",
    [
        lambda n: n - 1,  # fails at n = 1: torch.randint(0, 0) raises
        lambda n: max(n - 1, 1),  # never draws the last row, but n = 1 works
    ],
)
def test_bootstrap_counts_rejects_the_exclusive_high_off_by_one(high, capsys):
    def off_by_one(n, generator):
        return bincount(torch.randint(0, high(n), (n,), generator=generator), n)

    result, out = verdict(check_bootstrap_counts, off_by_one, capsys)
    assert result is False
    assert "randint(0, n - 1) can never draw the last row" in out.split("Hint:")[1]


def test_bootstrap_counts_pass_message_is_unchanged(capsys):
    # Chapter 5 stores this output: the new case must not change the count of cases
    assert verdict(check_bootstrap_counts, bootstrap_counts, capsys)[1] == (
        "check_bootstrap_counts: all 15 cases passed. Well done!\n"
    )


# --- Chapter 6: one AdaBoost round ---


def fraction_error_round(weights, incorrect, n_classes):
    err = float(incorrect.double().mean())  # the mistake: unweighted
    alpha = math.log((1 - err) / err) + math.log(n_classes - 1)
    new = weights * torch.exp(alpha * incorrect.double())
    return alpha, new / new.sum()


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda w, i, k: adaboost_round(w, i, k, normalise=False), "Forgot to renormalise"),
        (
            lambda w, i, k: adaboost_round(w, i, k, lambda e, k: 0.5 * math.log((1 - e) / e)),
            "Schapire & Singer (1999)",
        ),
        (fraction_error_round, "weighted error sum(w[incorrect])"),
        (lambda w, i, k: adaboost_round(w, i, k)[0], "Return a pair"),
    ],
)
def test_adaboost_round_mistakes(wrong, hint, capsys):
    result, out = verdict(check_adaboost_round, wrong, capsys)
    assert result is False and hint in out.split("Hint:")[1]


def test_adaboost_round_forgot_log_k_minus_1(capsys):
    """Passes every two-class case, fails the first three-class one."""
    binary_alpha = lambda e, k: math.log((1 - e) / e)  # noqa: E731
    result, out = verdict(
        check_adaboost_round, lambda w, i, k: adaboost_round(w, i, k, binary_alpha), capsys
    )
    assert result is False and "Forgot the + log(K - 1) term" in out
    assert "]), 3) returned" in out  # the first failure has K = 3


def test_adaboost_round_upweighting_the_correct_samples(capsys):
    def upweight_correct(w, incorrect, k):
        alpha = adaboost_round(w, incorrect, k)[0]
        new = w * torch.exp(alpha * (~incorrect).double())
        return alpha, new / new.sum()

    result, out = verdict(check_adaboost_round, upweight_correct, capsys)
    assert result is False and "You up-weighted the correct samples" in out


def test_checkers_refuse_treelibs_own_implementation(capsys):
    """From-scratch exercises answered with treelib's own function fail, under any name."""
    import treelib
    from treelib.criteria import entropy as renamed

    counts = torch.tensor([3.0, 1.0], dtype=torch.float64)
    assert not check_gini(treelib.gini)
    assert not check_entropy(lambda c: renamed(c))
    assert "treelib's own implementation" in capsys.readouterr().out
    assert float(treelib.gini(counts)) == 0.375  # put back afterwards
    assert abs(float(renamed(counts)) - 0.8112781244591328) < 1e-12


# --- Chapter 9: the second-order gain and the children's histograms ---


def test_split_gain_by_hand():
    # Section 9.1's seven samples: 1/2 + 9/7 - 1/11 = 261/154
    assert split_gain(1.0, 1.0, -1.5, 0.75, 1.0) == pytest.approx(261 / 154)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda gl, hl, gr, hr, l2: gl**2 / (hl + l2) + gr**2 / (hr + l2), "parent"),
        (lambda gl, hl, gr, hr, l2: split_gain(gl, hl, gr, hr, 0.0), "l2"),
        (lambda gl, hl, gr, hr, l2: split_gain(gl, hl, gr, hr, l2) / 2, "half"),
    ],
)
def test_split_gain_mistakes(wrong, hint, capsys):
    from treelib.exercises import SECOND_ORDER_HINTS, check_split_gain

    result, out = verdict(check_split_gain, wrong, capsys)
    assert result is False
    assert SECOND_ORDER_HINTS[hint] in out


def test_child_histograms_mistakes(capsys):
    from treelib.exercises import HISTOGRAM_HINTS, check_child_histograms

    def swapped(*args):
        return child_histograms(*args)[::-1]

    def no_counts(*args):
        left, right = child_histograms(*args)
        return left * torch.tensor([[1.0], [1.0], [0.0]]), right * torch.tensor(
            [[1.0], [1.0], [0.0]]
        )

    for wrong, hint in [(swapped, "swapped"), (no_counts, "count")]:
        result, out = verdict(check_child_histograms, wrong, capsys)
        assert result is False
        assert HISTOGRAM_HINTS[hint] in out


# --- Chapter 10: exact Shapley values and partial dependence by recursion ---


def test_shapley_games_worked_by_hand():
    """The checker's expected values of its hand-picked games, worked out by hand."""
    from treelib.exercises.ch10 import _shapley, _shapley_games

    games = _shapley_games()
    # v() = 0, v(0) = 1, v(1) = 2, v(0, 1) = 5: phi_0 = (1 + 3) / 2, phi_1 = (2 + 4) / 2
    assert np.allclose(_shapley(*games[0][:2]), [2.0, 3.0], rtol=0, atol=1e-15)
    assert np.allclose(_shapley(*games[1][:2]), [3.0])  # one player takes all: 5 - 2
    assert np.allclose(_shapley(*games[2][:2]), [1 / 3] * 3)  # the majority game
    assert np.allclose(_shapley(*games[3][:2]), [4.0] * 4)  # |S|^2: 16 shared four ways
    assert np.allclose(_shapley(*games[4][:2]), [2.0, 1.5, 1.5, 0.0])  # 3 is a dummy


def test_shapley_values_tree_games_are_the_tree_s_expectations(capsys):
    """The tree games are what shap's brute force explains: efficiency to the prediction."""
    from treelib.exercises.ch10 import _shapley_games

    for values, d, what in _shapley_games():
        if "tree" in what:
            assert len(values) == 2**d
            phi = shapley_values(values.__getitem__, d)
            assert phi.sum() == pytest.approx(values[tuple(range(d))] - values[()])


def one_order(value, d):
    return np.array([value(tuple(range(i + 1))) - value(tuple(range(i))) for i in range(d)])


def equal_split_from_four(value, d):
    """Right for up to three players, then each gets (v(all) - v(empty)) / d."""
    if d <= 3:
        return shapley_values(value, d)
    return np.full(d, (value(tuple(range(d))) - value(())) / d)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (
            lambda v, d: shapley_values(
                v, d, weight=lambda s: math.factorial(s) * math.factorial(d - s)
            ),  # fmt: skip
            "(d - |S| - 1)!, not (d - |S|)!",
        ),
        (lambda v, d: shapley_values(v, d, plain=True), "plain average (or sum)"),
        (lambda v, d: shapley_values(v, d, plain=True) / 2 ** (d - 1), "Banzhaf"),
        (lambda v, d: shapley_values(v, d, containing=True), "do NOT contain i"),
        (one_order, "ONE order of the players"),
        (equal_split_from_four, "(the dummy property)"),
        (
            lambda v, d: [
                sum(v(tuple(sorted(S + (i,)))) - v(S) for S in combinations(range(d), 1))
                for i in range(d)
            ],
            "repeats a player: build S + {i} only for the coalitions S that do not contain i",
        ),
        (lambda v, d: shapley_values(v, d).astype(np.float32), "float64"),
        (lambda v, d: v(0), "takes a tuple of players"),
    ],
)
def test_shapley_values_mistakes(wrong, hint, capsys):
    from treelib.exercises import check_shapley_values

    result, out = verdict(check_shapley_values, wrong, capsys)
    assert result is False
    assert hint in out


def test_shapley_values_efficiency_hint_gives_the_numbers(capsys):
    from treelib.exercises import check_shapley_values

    off_by_one = lambda v, d: shapley_values(v, d, weight=lambda s: math.factorial(s)  # noqa: E731
                                             * math.factorial(d - s))  # fmt: skip
    result, out = verdict(check_shapley_values, off_by_one, capsys)
    # the 2-player game: weights 1 and 1/2 give (1 + 3/2, 2 + 4/2), which add up to 6.5
    assert "Your values add up to 6.5, but v(all) - v(empty) = 5.0: efficiency fails." in out

    result, out = verdict(check_shapley_values, lambda v, d: shapley_values(v, d) + 0.1, capsys)
    assert result is False
    assert "Your values add up to 5.2, but v(all) - v(empty) = 5.0: efficiency fails." in out
    assert "(v(0) = 1.0; v(1) = 2.0; v(0, 1) = 5.0" in out or "v(0, 1) = 5.0" in out


def test_shapley_values_symmetry_hint():
    """An answer that adds up and spares the dummies, but treats twins differently."""
    from treelib.exercises.ch10 import SHAPLEY_HINTS, _Game, _game, _shapley_hint

    values = _game(3, lambda S: float(len(S) >= 2))  # the majority game: 1/3 each
    hint = _shapley_hint((_Game(values, 3), 3), np.array([0.5, 0.25, 0.25]), np.full(3, 1 / 3))
    assert hint == SHAPLEY_HINTS["symmetry"].format(i=0, j=1, a="0.5", b="0.25")


def test_shapley_values_accepts_lists_sets_and_unsorted_coalitions(capsys):
    from treelib.exercises import check_shapley_values

    def loose(value, d):
        phi = [0.0] * d
        for i in range(d):
            for size in range(d):
                w = math.factorial(size) * math.factorial(d - size - 1) / math.factorial(d)
                for S in combinations([j for j in range(d) if j != i], size):
                    phi[i] += w * (value([i, *S][::-1]) - value(set(S)))
        return phi

    assert verdict(check_shapley_values, loose, capsys)[0] is True


@pytest.mark.parametrize(
    "mistake, hint",
    [
        ({"share": lambda node, child: 0.5}, "half"),
        ({"stop": True}, "node_value"),
        ({"goes_left": lambda x, t: x < t}, "strict"),
        ({"goes_left": lambda x, t: x > t}, "swapped"),
    ],
)
def test_pd_recursion_mistakes(mistake, hint, capsys):
    from treelib.exercises import PD_HINTS, check_pd_recursion

    def wrong(tree, feature, grid):
        return pd_recursion(tree, feature, grid, **mistake)

    result, out = verdict(check_pd_recursion, wrong, capsys)
    assert result is False
    # stopping at the root (a split on another feature) returns the mean: the same hint
    assert PD_HINTS[hint] in out or hint == "node_value" and PD_HINTS["constant"] in out
    assert "Hint: Work this case out by hand" not in out


def test_pd_recursion_unweighted_counts_and_the_mean(capsys):
    from treelib.exercises import PD_HINTS, check_pd_recursion

    def counts(tree, feature, grid):
        n = tree.n_node_samples
        return pd_recursion(tree, feature, grid, share=lambda node, child: n[child] / n[node])

    result, out = verdict(check_pd_recursion, counts, capsys)
    assert result is False and PD_HINTS["counts"] in out

    def mean(tree, feature, grid):  # the tree's mean prediction, whatever the grid value
        return np.full(len(grid), tree.value[0, 0, 0])

    result, out = verdict(check_pd_recursion, mean, capsys)
    assert result is False and PD_HINTS["constant"] in out


def test_pd_recursion_grids_hold_thresholds_and_both_libraries():
    """The cases test x == threshold (goes left) on trees of both libraries, some weighted."""
    from treelib.exercises.ch10 import _pd_cases

    cases = _pd_cases()
    kinds = {type(model).__module__.split(".")[0] for model, *_ in cases}
    assert kinds == {"sklearn", "treelib"}
    at = [np.isin(grid, model.tree_.threshold).any() for model, _, grid, _ in cases]
    assert sum(at) >= 3
    depths = [model.tree_.max_depth for model, *_ in cases]
    assert min(depths) == 3 and max(depths) == 6
    assert any((m.tree_.weighted_n_node_samples != m.tree_.n_node_samples).any() for m, *_ in cases)


def test_pd_recursion_matches_scikit_learn_s_public_partial_dependence():
    """The expected values: scikit-learn's own partial_dependence(method="recursion")."""
    from sklearn.inspection import partial_dependence

    from treelib.exercises.ch10 import _pd_cases

    for model, feature, grid, expected in _pd_cases():
        if type(model).__module__.startswith("sklearn"):
            X = np.zeros((2, model.n_features_in_))
            got = partial_dependence(model, X, [feature], custom_values={feature: grid},
                                     method="recursion")  # fmt: skip
            assert np.array_equal(got["average"][0], expected)
        assert np.allclose(pd_recursion(model.tree_, feature, grid), expected, rtol=0, atol=1e-12)


def test_pd_recursion_answers_as_lists_and_tensors_pass(capsys):
    from treelib.exercises import check_pd_recursion

    as_list = lambda *args: pd_recursion(*args).tolist()  # noqa: E731
    as_tensor = lambda *args: torch.from_numpy(pd_recursion(*args))  # noqa: E731
    assert verdict(check_pd_recursion, as_list, capsys)[0] is True
    assert verdict(check_pd_recursion, as_tensor, capsys)[0] is True


def test_pd_recursion_learner_editing_the_tree_cannot_spoil_later_cases(capsys):
    from treelib.exercises import check_pd_recursion

    def destructive(tree, feature, grid):
        out = pd_recursion(tree, feature, grid)
        tree.value[:] = 0.0
        tree.weighted_n_node_samples[:] = 1.0
        grid[:] = 0.0
        return out

    assert verdict(check_pd_recursion, destructive, capsys)[0] is True
    assert verdict(check_pd_recursion, pd_recursion, capsys)[0] is True


def test_chapter_10_checkers_refuse_treelib_explain(capsys):
    from treelib import explain
    from treelib.exercises import check_pd_recursion, check_shapley_values

    def with_treelib(value, d):
        return explain.shapley_weight(0, d) * np.zeros(d)

    assert check_shapley_values(with_treelib) is False
    assert "treelib's own implementation" in capsys.readouterr().out
    assert explain.shapley_weight(1, 3) == pytest.approx(1 / 6)  # put back afterwards

    def via_explain(tree, feature, grid):
        return explain.partial_dependence(None, np.zeros((2, 2)), [feature])

    assert check_pd_recursion(via_explain) is False
    assert "treelib's own implementation" in capsys.readouterr().out


def test_chapter_10_checkers_are_quick(capsys):
    from treelib.exercises import check_pd_recursion, check_shapley_values

    verdict(check_shapley_values, shapley_values, capsys)  # the cases are built once
    start = time.perf_counter()
    assert verdict(check_shapley_values, shapley_values, capsys)[0] is True
    assert verdict(check_pd_recursion, pd_recursion, capsys)[0] is True
    assert time.perf_counter() - start < 10


def test_pd_recursion_leaf_values_of_shape_1_1_get_their_hint(capsys):
    from treelib.exercises import check_pd_recursion
    from treelib.exercises.ch10 import VALUE_HINT

    def kept_shape(tree, feature, grid):  # each leaf's tree.value[node], shape (1, 1)
        return pd_recursion(tree, feature, grid)[:, None, None]

    result, out = verdict(check_pd_recursion, kept_shape, capsys)
    assert result is False and VALUE_HINT in out

    def assigns_values(tree, feature, grid):
        out = np.zeros(len(grid))
        out[0] = tree.value[:2]  # ValueError: setting an array element with a sequence
        return out

    result, out = verdict(check_pd_recursion, assigns_values, capsys)
    assert result is False and "raised ValueError" in out and VALUE_HINT in out
