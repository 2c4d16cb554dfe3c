"""The capstone checkers (Chapters 2, 5, 6, 7, 9 and 10): a from-scratch solution passes, classic
mistakes fail with their hint.

The solutions below are written here from scratch on purpose (a plain Gini search, a loop
over segments, numpy's random generator): they share no code with the treelib reference
they are checked against. The forest and AdaBoost use treelib's DecisionTreeClassifier as
their building block, as the exercises ask.
"""

import math
import warnings

import numpy as np
import pytest
import torch

from treelib import DecisionTreeClassifier, RandomForestClassifier
from treelib.exercises import (
    CAPSTONES,
    CHECKERS,
    check_adaboost,
    check_grow_tree,
    check_random_forest,
    check_segmented_cumsum,
)
from treelib.exercises.ch05 import (
    ACCURACY_TOL,
    MIN_SAMPLES_LEAF,
    N_TREES,
    OOB_TOL,
    _forest_cases,
)


def verdict(checker, fn, capsys):
    """Run a checker; return (result, printed text), insisting that nothing reached stderr."""
    result = checker(fn)
    out, err = capsys.readouterr()
    assert err == ""
    return result, out


def hint_of(out):
    return out.split("Hint:")[1]


# --- Chapter 2: recursive CART, from scratch ---


def gini_sum(counts):
    """n * Gini impurity of a node with these class counts (0 for an empty node)."""
    n = counts.sum()
    return n - (counts**2).sum() / n if n else 0.0


def scratch_best_split(X, y, k):
    """(feature, threshold) minimising the children's summed n * Gini; None if none."""
    best, best_score = None, math.inf
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for a, b in zip(values[:-1], values[1:]):
            t = (a + b) / 2
            left = X[:, j] <= t
            score = gini_sum(np.bincount(y[left], minlength=k)) + gini_sum(
                np.bincount(y[~left], minlength=k)
            )
            if score < best_score - 1e-9:
                best, best_score = (j, float(t)), score
    return best


def grow_tree(X, y, max_depth, first_class=False, extra_depth=0, swap=False, split_pure=False,
              strict=False):  # fmt: skip
    """The exercise's answer; the keyword arguments build the classic mistakes."""
    X = X.double().numpy() if isinstance(X, torch.Tensor) else X
    y = y.numpy() if isinstance(y, torch.Tensor) else y
    k = int(y.max()) + 1

    def grow(idx, depth):
        counts = np.bincount(y[idx], minlength=k)
        leaf = {"class": int(y[idx][0]) if first_class else int(counts.argmax())}
        pure = (counts > 0).sum() == 1 and not split_pure
        if len(idx) < 2 or pure or (max_depth is not None and depth == max_depth + extra_depth):
            return leaf
        split = scratch_best_split(X[idx], y[idx], k)
        if split is None:
            return leaf
        j, t = split
        left = ((X[idx, j] < t) if strict else (X[idx, j] <= t)) != swap
        if left.all() or not left.any():
            return leaf
        return {
            "feature": j,
            "threshold": t,
            "left": grow(idx[left], depth + 1),
            "right": grow(idx[~left], depth + 1),
        }

    return grow(np.arange(len(y)), 0)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda X, y, d: grow_tree(X, y, d, extra_depth=1), "one level too deep"),
        (lambda X, y, d: grow_tree(X, y, d, extra_depth=-1), "stops one level early"),
        (lambda X, y, d: grow_tree(X, y, d, first_class=True), "MAJORITY class"),
        (lambda X, y, d: grow_tree(X, y, d, swap=True), "Left and right are swapped"),
        (lambda X, y, d: grow_tree(X, y, d, split_pure=True), "a pure node"),
        (lambda X, y, d: [grow_tree(X, y, d)], 'a leaf is {"class": k}'),
        (lambda X, y, d: {"feature": 0, "threshold": 1.0}, 'a leaf is {"class": k}'),
    ],
)
def test_grow_tree_mistakes(wrong, hint, capsys):
    result, out = verdict(check_grow_tree, wrong, capsys)
    assert result is False and hint in hint_of(out)


def test_grow_tree_strict_comparison_is_not_a_mistake_here(capsys):
    # thresholds are midpoints, never a data value: x < t and x <= t split the data alike
    def strict(X, y, max_depth):
        return grow_tree(X, y, max_depth, strict=True)

    assert verdict(check_grow_tree, strict, capsys)[0] is True


# --- Chapter 5: a random forest, from scratch around treelib's trees ---


def random_forest(X, y, X_test, n_trees, seed, last_row=True, replace=True, hard=False,
                  oob_in_bag=False, use_weights=False):  # fmt: skip
    """The exercise's answer; the keyword arguments build the classic mistakes."""
    rng, n, k = np.random.default_rng(seed), len(y), int(y.max()) + 1
    proba, oob = np.zeros((len(X_test), k)), np.zeros((n, k))
    in_bag = np.zeros((n_trees, n), dtype=np.int64)
    for t in range(n_trees):
        rows = rng.integers(0, n if last_row else n - 1, n) if replace else rng.permutation(n)
        in_bag[t] = np.bincount(rows, minlength=n)
        tree = DecisionTreeClassifier(
            max_features="sqrt",
            min_samples_leaf=MIN_SAMPLES_LEAF,
            random_state=int(rng.integers(2**31)),
        )
        tree.fit(X, y, sample_weight=in_bag[t]) if use_weights else tree.fit(X[rows], y[rows])
        p = tree.predict_proba(X_test)
        proba += (np.eye(k)[p.argmax(1)] if hard else p) / n_trees
        out = np.ones(n, dtype=bool) if oob_in_bag else in_bag[t] == 0
        if out.any():
            oob[out] += tree.predict_proba(X[out])
    scored = oob.sum(1) > 0
    return proba, float((oob[scored].argmax(1) == y[scored]).mean()), in_bag


def test_random_forest_accepts_other_ways_to_bootstrap(capsys):
    def with_weights(*args):
        return random_forest(*args, use_weights=True)

    def torch_draws(X, y, X_test, n_trees, seed):
        generator, n = torch.Generator().manual_seed(seed), len(y)
        in_bag = torch.stack([torch.bincount(torch.randint(0, n, (n,), generator=generator),
                                             minlength=n) for _ in range(n_trees)])  # fmt: skip
        trees = [
            DecisionTreeClassifier(max_features="sqrt", min_samples_leaf=5, random_state=t).fit(
                X, y, sample_weight=in_bag[t].numpy()
            )
            for t in range(n_trees)
        ]
        proba = torch.tensor(np.mean([tree.predict_proba(X_test) for tree in trees], axis=0))
        votes = sum(
            tree.predict_proba(X) * (in_bag[t] == 0).numpy()[:, None]
            for t, tree in enumerate(trees)
        )
        return proba, float((votes.argmax(1) == y).mean()), in_bag

    assert verdict(check_random_forest, with_weights, capsys)[0] is True
    assert verdict(check_random_forest, torch_draws, capsys)[0] is True


@pytest.mark.parametrize(
    "mistake, hint",
    [
        ({"last_row": False}, "randint(0, n - 1) can never draw the last row"),
        ({"replace": False}, "that is a permutation"),
        ({"hard": True}, "hard (majority) vote"),
        ({"oob_in_bag": True}, "did you count in-bag rows?"),
    ],
)
def test_random_forest_mistakes(mistake, hint, capsys):
    result, out = verdict(check_random_forest, lambda *a: random_forest(*a, **mistake), capsys)
    assert result is False and hint in hint_of(out)


def test_random_forest_without_replacement_crashing_on_empty_oob(capsys):
    def crashes(X, y, X_test, n_trees, seed):
        rows = np.random.default_rng(seed).permutation(len(y))
        tree = DecisionTreeClassifier(max_features="sqrt").fit(X[rows], y[rows])
        tree.predict_proba(X[np.bincount(rows, minlength=len(y)) == 0])  # no row left out

    result, out = verdict(check_random_forest, crashes, capsys)
    assert result is False and "sampling without replacement" in hint_of(out)


def test_random_forest_tolerances_cover_the_spread_over_seeds():
    """treelib's own forest, with seeds the reference never used, passes the tolerances."""
    for (X, y, X_test, y_test), (accuracy, oob) in _forest_cases():
        for seed in range(100, 106):
            params = dict(min_samples_leaf=MIN_SAMPLES_LEAF, oob_score=True, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                forest = RandomForestClassifier(N_TREES, **params).fit(X, y)
            assert abs(forest.score(X_test, y_test) - accuracy) <= ACCURACY_TOL
            assert abs(forest.oob_score_ - oob) <= OOB_TOL
        # and the OOB score counting in-bag rows (about the training accuracy) falls outside
        assert forest.score(X, y) - oob > OOB_TOL


# --- Chapter 6: the SAMME loop, from scratch around treelib's stumps ---


def adaboost(X, y, X_test, n_rounds, log_k=True, renormalise=True, start=None, divide=True,
             half=False, up_correct=False, vote="alpha"):  # fmt: skip
    """The exercise's answer; the keyword arguments build the classic mistakes."""
    k, n = int(y.max()) + 1, len(y)
    w = np.full(n, 1.0 / n if start is None else start)
    alphas, votes = [], np.zeros((len(X_test), k))
    for _ in range(n_rounds):
        stump = DecisionTreeClassifier(max_depth=1, random_state=7).fit(X, y, sample_weight=w)
        incorrect = stump.predict(X) != y
        err = w[incorrect].sum() / (w.sum() if divide else 1.0)
        alpha = (0.5 if half else 1.0) * np.log((1 - err) / err) + (np.log(k - 1) if log_k else 0)
        w = w * np.exp(alpha * (~incorrect if up_correct else incorrect))
        w = w / w.sum() if renormalise else w
        alphas.append(float(alpha))
        votes[np.arange(len(X_test)), stump.predict(X_test)] += alpha if vote == "alpha" else 1
        last = stump.predict(X_test)
    return alphas, (last if vote == "last" else votes.argmax(1))


def test_adaboost_renormalising_is_optional_when_the_error_is_divided(capsys):
    def no_renormalising(*args):
        return adaboost(*args, renormalise=False)

    assert verdict(check_adaboost, no_renormalising, capsys)[0] is True


@pytest.mark.parametrize(
    "mistake, hint",
    [
        ({"log_k": False}, "Forgot the + log(K - 1) term"),
        ({"renormalise": False, "divide": False}, "renormalise the weights after each update"),
        ({"start": 1.0, "divide": False}, "the weighted error is sum(w[incorrect]) / sum(w)"),
        ({"half": True, "log_k": False}, "confidence-rated vote"),
        ({"up_correct": True}, "multiply the INCORRECT ones"),
        ({"vote": "count"}, "weight each vote by the stump's alpha"),
        ({"vote": "last"}, "the last stump's prediction only"),
    ],
)
def test_adaboost_mistakes(mistake, hint, capsys):
    with np.errstate(all="ignore"):  # the mistakes make NaN and infinite weights
        result, out = verdict(check_adaboost, lambda *a: adaboost(*a, **mistake), capsys)
    assert result is False and hint in hint_of(out)


def test_adaboost_unweighted_stumps(capsys):
    def unweighted(X, y, X_test, n_rounds):
        k, w, alphas = int(y.max()) + 1, np.full(len(y), 1 / len(y)), []
        for _ in range(n_rounds):
            incorrect = DecisionTreeClassifier(max_depth=1).fit(X, y).predict(X) != y
            err = w[incorrect].sum()
            alphas.append(math.log((1 - err) / err) + math.log(k - 1))
            w = w * np.exp(alphas[-1] * incorrect)
            w = w / w.sum()
        return alphas, np.zeros(len(X_test), dtype=int)

    result, out = verdict(check_adaboost, unweighted, capsys)
    assert result is False and "sample_weight=w" in hint_of(out)


# --- Chapter 7: the segmented cumulative sum, from scratch ---


def segmented_cumsum(values, sizes):
    out, start = torch.empty_like(values), 0
    for size in sizes.tolist():
        running = 0.0
        for i in range(start, start + size):
            running += float(values[i])
            out[i] = running
        start += size
    return out


def no_restart(values, sizes):
    return values.cumsum(0)


def exclusive(values, sizes):
    return segmented_cumsum(values, sizes) - values


def at_start(values, sizes):
    starts = torch.cumsum(sizes, 0) - sizes
    segment = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
    cum = values.cumsum(0)
    return cum - cum[starts[segment]]


def float32(values, sizes):
    return segmented_cumsum(values, sizes).float()


def integers(values, sizes):
    return segmented_cumsum(values, sizes).long()


def one_per_segment(values, sizes):
    return torch.stack([v.sum() for v in torch.split(values, sizes.tolist())])


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (no_restart, "restart it at every segment"),
        (exclusive, "That is the exclusive sum"),
        (at_start, "subtract the total just BEFORE it"),
        (float32, "Keep the dtype of `values` (float64)"),
        (integers, "Keep the dtype of `values` (float64)"),
        (one_per_segment, "one running sum per position"),
        (lambda values, sizes: segmented_cumsum(values, sizes).numpy(), "Return a torch tensor"),
    ],
)
def test_segmented_cumsum_mistakes(wrong, hint, capsys):
    result, out = verdict(check_segmented_cumsum, wrong, capsys)
    assert result is False and hint in hint_of(out)


def test_segmented_cumsum_loop_that_skips_empty_segments_wrongly(capsys):
    def by_nonzero_sizes(values, sizes):  # drops the empty segments, then mis-places the rest
        return segmented_cumsum(values, sizes[sizes > 0].flip(0))

    result, out = verdict(check_segmented_cumsum, by_nonzero_sizes, capsys)
    assert result is False and "First failure:" in out


# --- Every capstone: the answer passes; errors, stubs and odd answers fail gracefully ---


def leafwise_tree(X_binned, g, h, max_leaf_nodes, min_samples_leaf, l2):
    """A leaf-wise tree from scratch: per-bin sums by plain loops over the samples."""
    n, d = X_binned.shape
    codes = X_binned.long().tolist()
    gl, hl = g.tolist(), h.tolist()

    def best(rows):
        G, H = sum(gl[i] for i in rows), sum(hl[i] for i in rows)
        found = None
        for f in range(d):
            n_bins = 1 + max(codes[i][f] for i in rows)
            sums = [[0.0, 0.0, 0] for _ in range(n_bins)]
            for i in rows:
                cell = sums[codes[i][f]]
                cell[0] += gl[i]
                cell[1] += hl[i]
                cell[2] += 1
            GL = HL = 0.0
            NL = 0
            for b in range(n_bins - 1):
                GL, HL, NL = GL + sums[b][0], HL + sums[b][1], NL + sums[b][2]
                if NL < min_samples_leaf or len(rows) - NL < min_samples_leaf:
                    continue
                gain = GL**2 / (HL + l2) + (G - GL) ** 2 / (H - HL + l2) - G**2 / (H + l2)
                if gain > 0 and (found is None or gain > found[0]):
                    found = (gain, f, b)
        return found

    leaves = [list(range(n))]
    scores = [best(leaves[0]) if n >= 2 * min_samples_leaf else None]
    while len(leaves) < max_leaf_nodes and any(s is not None for s in scores):
        k = max((i for i, s in enumerate(scores) if s is not None), key=lambda i: scores[i][0])
        _, f, b = scores[k]
        rows = leaves.pop(k)
        scores.pop(k)
        for part in ([i for i in rows if codes[i][f] <= b], [i for i in rows if codes[i][f] > b]):
            leaves.append(part)
            scores.append(best(part) if len(part) >= 2 * min_samples_leaf else None)
    out = torch.zeros(n, dtype=torch.float64)
    for rows in leaves:
        out[rows] = -sum(gl[i] for i in rows) / (sum(hl[i] for i in rows) + l2)
    return out


# --- Chapter 10: path-dependent TreeSHAP, Lundberg et al.'s Algorithm 2 (as shap's C++) ---


def tree_shap(tree, x, merge=True, goes_left=None, cover=None):
    """Algorithm 2 of Lundberg et al. (2020); the keyword arguments build the classic mistakes.

    A path is a list of [feature, zero fraction, one fraction, weight]; its first entry
    is a placeholder (feature -1).
    """
    goes_left = goes_left or (lambda v, t: v <= t)
    cover = tree.weighted_n_node_samples if cover is None else cover
    left, right, value = tree.children_left, tree.children_right, tree.value[:, 0, 0]
    phi = np.zeros(len(x))

    def extend(path, zero, one, feature):
        path = [list(e) for e in path] + [[feature, zero, one, 1.0 if not path else 0.0]]
        depth = len(path) - 1
        for i in range(depth - 1, -1, -1):
            path[i + 1][3] += one * path[i][3] * (i + 1) / (depth + 1)
            path[i][3] = zero * path[i][3] * (depth - i) / (depth + 1)
        return path

    def unwound_sum(path, k):
        depth, (_, zero, one, _) = len(path) - 1, path[k]
        total, next_one = 0.0, path[depth][3]
        for i in range(depth - 1, -1, -1):
            if one != 0:
                tmp = next_one * (depth + 1) / ((i + 1) * one)
                total += tmp
                next_one = path[i][3] - tmp * zero * (depth - i) / (depth + 1)
            else:
                total += path[i][3] / zero / ((depth - i) / (depth + 1))
        return total

    def unwind(path, k):
        depth, (_, zero, one, _) = len(path) - 1, path[k]
        path = [list(e) for e in path]
        next_one = path[depth][3]
        for i in range(depth - 1, -1, -1):
            if one != 0:
                tmp = path[i][3]
                path[i][3] = next_one * (depth + 1) / ((i + 1) * one)
                next_one = tmp - path[i][3] * zero * (depth - i) / (depth + 1)
            else:
                path[i][3] = path[i][3] * (depth + 1) / (zero * (depth - i))
        weights = [e[3] for e in path[:-1]]
        path = path[:k] + path[k + 1 :]
        for e, w in zip(path, weights):
            e[3] = w
        return path

    def recurse(node, path, zero, one, feature):
        path = extend(path, zero, one, feature)
        if left[node] == -1:
            for k in range(1, len(path)):
                f, z, o, _ = path[k]
                phi[f] += unwound_sum(path, k) * (o - z) * value[node]
            return
        f = tree.feature[node]
        hot, cold = (left[node], right[node])
        if not goes_left(x[f], tree.threshold[node]):
            hot, cold = cold, hot
        zero_in, one_in = 1.0, 1.0
        k = next((k for k in range(1, len(path)) if path[k][0] == f), None)
        if merge and k is not None:  # the feature is on the path already: undo that split
            zero_in, one_in = path[k][1], path[k][2]
            path = unwind(path, k)
        recurse(hot, path, cover[hot] / cover[node] * zero_in, one_in, f)
        recurse(cold, path, cover[cold] / cover[node] * zero_in, 0.0, f)

    recurse(0, [], 1.0, 1.0, -1)
    return phi


def saabas(tree, x):
    phi, node, value = np.zeros(len(x)), 0, tree.value[:, 0, 0]
    while tree.children_left[node] != -1:
        f = tree.feature[node]
        left = x[f] <= tree.threshold[node]
        child = tree.children_left[node] if left else tree.children_right[node]
        phi[f] += value[child] - value[node]
        node = child
    return phi


SOLUTIONS = {
    "grow_tree": grow_tree,
    "random_forest": random_forest,
    "adaboost": adaboost,
    "segmented_cumsum": segmented_cumsum,
    "leafwise_tree": leafwise_tree,
    "tree_shap": tree_shap,
}


def test_every_capstone_is_a_checker():
    assert set(CAPSTONES) == set(SOLUTIONS) and set(CAPSTONES) <= set(CHECKERS)


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


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_stub_is_not_implemented_yet(name, capsys):
    def stub(*args):
        raise NotImplementedError

    result, out = verdict(CHECKERS[name], stub, capsys)
    assert result is False and out.startswith(f"check_{name}: not implemented yet.")


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
@pytest.mark.parametrize("answer", [None, "text", [1, 2], (1, 2, 3), torch.zeros(2, 2), {}])
def test_wrong_return_types_fail_gracefully(name, answer, capsys):
    result, out = verdict(CHECKERS[name], lambda *args: answer, capsys)
    assert result is False
    assert "First failure:" in out and "Hint:" in out


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_not_a_function(name, capsys):
    result, out = verdict(CHECKERS[name], 0.5, capsys)
    assert result is False and "expected a function" in out


@pytest.mark.parametrize("name", sorted(SOLUTIONS))
def test_verdicts_are_deterministic(name, capsys):
    def wrong(*args):
        return SOLUTIONS[name](*args) if name != "segmented_cumsum" else no_restart(*args)

    first = verdict(CHECKERS[name], wrong, capsys)
    assert first == verdict(CHECKERS[name], wrong, capsys)


def test_leafwise_tree_mistakes(capsys):
    from treelib.exercises import TREE_HINTS, check_leafwise_tree

    def flipped(*args):
        return -leafwise_tree(*args)

    result, out = verdict(check_leafwise_tree, flipped, capsys)
    assert result is False and TREE_HINTS["sign"] in out

    def too_small(X_binned, g, h, max_leaf_nodes, min_samples_leaf, l2):
        return leafwise_tree(X_binned, g, h, max(2, max_leaf_nodes // 2), min_samples_leaf, l2)

    result, out = verdict(check_leafwise_tree, too_small, capsys)
    assert result is False and "First failure:" in out


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda tree, x: -tree_shap(tree, x), "sign"),
        (saabas, "saabas"),
        (lambda tree, x: tree_shap(tree, x, merge=False), "repeated"),
        (lambda tree, x: tree_shap(tree, x, goes_left=lambda v, t: v < t), "strict"),
        (lambda tree, x: tree_shap(tree, x, cover=tree.n_node_samples), "counts"),
    ],
)
def test_tree_shap_mistakes(wrong, hint, capsys):
    from treelib.exercises import TREE_SHAP_HINTS, check_tree_shap

    result, out = verdict(check_tree_shap, wrong, capsys)
    assert result is False and TREE_SHAP_HINTS[hint] in hint_of(out)


def test_tree_shap_efficiency_and_dummy_hints(capsys):
    from treelib.exercises import check_tree_shap

    result, out = verdict(check_tree_shap, lambda tree, x: tree_shap(tree, x) / 2, capsys)
    assert result is False
    assert "Your values add up to" in out and "f(x) - E[f(X)] =" in out

    def unused_gets_some(tree, x):  # adds up, but credits a feature the tree never uses
        phi = tree_shap(tree, x)
        internal = tree.children_left != -1
        unused = sorted(set(range(len(x))) - set(tree.feature[internal].tolist()))
        if unused:
            phi[unused[0]] += 0.25
            phi[tree.feature[0]] -= 0.25
        return phi

    result, out = verdict(check_tree_shap, unused_gets_some, capsys)
    assert result is False and "is never split on in this tree, so its SHAP value is 0" in out


def test_tree_shap_by_brute_force_on_the_small_trees():
    """The expected values are the Shapley values of the tree's expectations (2^d subsets),
    and efficiency holds: they add up to the prediction minus the root's value."""
    from itertools import combinations

    from treelib.exercises.ch10 import _tree_shap_cases
    from treelib.explain import tree_expectation

    for model, x, expected in _tree_shap_cases():
        d = len(x)
        prediction = model.predict(x[None])[0]
        assert expected.sum() == pytest.approx(prediction - model.tree_.value[0, 0, 0], abs=1e-9)
        if d > 4:
            continue
        v = {S: tree_expectation(model, x, S) for k in range(d + 1)
             for S in combinations(range(d), k)}  # fmt: skip
        phi = np.zeros(d)
        for i in range(d):
            for S in v:
                if i not in S:
                    w = math.factorial(len(S)) * math.factorial(d - len(S) - 1) / math.factorial(d)
                    phi[i] += w * (v[tuple(sorted(S + (i,)))] - v[S])
        assert np.allclose(phi, expected, rtol=1e-12, atol=1e-12)
        assert np.allclose(tree_shap(model.tree_, x), expected, rtol=1e-12, atol=1e-12)


def test_tree_shap_cases_hold_the_tricky_parts():
    """Repeated features on a path, samples exactly at thresholds, weights, 24 features."""
    from treelib.exercises.ch10 import _tree_shap_cases

    cases = _tree_shap_cases()
    kinds = {type(model).__module__.split(".")[0] for model, *_ in cases}
    assert kinds == {"sklearn", "treelib"}
    at = sum(np.isin(x, model.tree_.threshold).sum() for model, x, _ in cases)
    assert at >= 5
    weighted = [
        m for m, *_ in cases if (m.tree_.weighted_n_node_samples != m.tree_.n_node_samples).any()
    ]
    assert len(weighted) >= 2
    big = cases[-1][0].tree_
    assert (
        big.n_features == 24 and big.max_depth == 8 and len(set(big.feature[big.feature >= 0])) > 12
    )
    assert all(not np.allclose(tree_shap(m.tree_, x, merge=False), e) for m, x, e in cases)


def test_tree_shap_slow_functions_get_a_note(monkeypatch, capsys):
    import time

    from treelib.exercises import ch10, check_tree_shap

    monkeypatch.setattr(ch10, "SLOW_SECONDS", 0.05)

    def slow(tree, x):
        if tree.n_features == 24:
            time.sleep(0.5)
        return tree_shap(tree, x)

    result, out = verdict(check_tree_shap, slow, capsys)
    assert result is True  # slow but right: a note, not a failure
    assert "still waiting after 0 s on one tree (24 features, depth 8" in out
    assert "2^24 coalitions" in out and out.rstrip().endswith("Well done!")


def test_tree_shap_refuses_treelib_explain(capsys):
    from treelib.exercises import check_tree_shap

    def with_treelib(tree, x):
        from treelib.explain import TreeExplainer

        return TreeExplainer(tree).shap_values(x[None])[0]

    result, out = verdict(check_tree_shap, with_treelib, capsys)
    assert result is False and "treelib's own implementation" in out


def test_tree_shap_learner_editing_the_tree_cannot_spoil_later_cases(capsys):
    from treelib.exercises import check_tree_shap

    def destructive(tree, x):
        phi = tree_shap(tree, x)
        tree.value[:] = 0.0
        tree.threshold[:] = 0.0
        x[:] = 0.0
        return phi

    assert verdict(check_tree_shap, destructive, capsys)[0] is True
    assert verdict(check_tree_shap, tree_shap, capsys)[0] is True
