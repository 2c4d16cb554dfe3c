"""Chapter 10's checkers: exact Shapley values of a small game, a tree's partial dependence
by the recursion method, and path-dependent TreeSHAP (the capstone).

Introduced in Chapter 10.

The learner's trees are ``tree_`` objects of fitted regression trees (scikit-learn's and
treelib's: the same arrays). Each call gets its own copy of the tree and of the arrays,
so a function that edits its input cannot spoil a later case or a later check.
"""

import copy
import functools
import math
import threading
from itertools import combinations

import numpy as np

from ._framework import _BadOutput, _Case, _fmt, _run_cases, case_seed

SHAPLEY_HINTS = {
    "weights": "Check the weights: a coalition S without i counts |S|! (d - |S| - 1)! / d!, "
    "with (d - |S| - 1)!, not (d - |S|)!.",
    "average": "Weight each marginal contribution v(S + {i}) - v(S) by "
    "|S|! (d - |S| - 1)! / d!: a plain average (or sum) over the coalitions is not the "
    "Shapley value (the plain average is the Banzhaf value).",
    "containing": "Every value is 0: sum over the coalitions S that do NOT contain i; for an S "
    "that already holds i, v(S + {i}) - v(S) is 0.",
    "efficiency": "Your values add up to {got}, but v(all) - v(empty) = {want}: efficiency fails.",
    "count": "Check the weights |S|! (d - |S| - 1)! / d! and that each coalition S without i "
    "is counted once, with v(S + {i}) - v(S).",
    "shape": "Return one number per player: a float64 numpy array of length d.",
    "dummy": "Player {j} adds nothing to any coalition (v(S + {{{j}}}) = v(S) for every S), so "
    "its Shapley value is 0 (the dummy property); yours is {got}.",
    "symmetry": "Players {i} and {j} are interchangeable in this game (swapping them changes no "
    "v(S)), so they get the same value (symmetry); yours are {a} and {b}.",
    "order": "Those are the marginal contributions in ONE order of the players (0, 1, ..., "
    "d - 1). The Shapley value averages them over all d! orders: equivalently, weigh each "
    "coalition S without i by |S|! (d - |S| - 1)! / d!.",
    "repeat": "Your function asked for the value of a coalition that repeats a player: build "
    "S + {i} only for the coalitions S that do not contain i.",
    "float64": "Right to about 1e-6 but not to 1e-9: compute and return float64 values "
    "(np.zeros(d) is float64; float32 loses digits).",
}
PD_HINTS = {
    "constant": "Your answer does not change with the grid value: it is the tree's mean "
    "prediction (the root's value). Walk from the root down to the leaves: at a split on "
    "`feature` follow the grid value's side (x <= threshold goes left); at a split on another "
    "feature take both children, weighted, rather than stopping at that node's value.",
    "half": "Weight the two children of a split on another feature by their share of the "
    "node's training weight: weighted_n_node_samples[child] / weighted_n_node_samples[node], "
    "not 1/2 each.",
    "counts": "Use weighted_n_node_samples, not n_node_samples: this tree was fitted with "
    "sample weights, and the recursion follows the training weight.",
    "node_value": "Do not stop at a split on another feature with that node's value: "
    "descend into both children (weighted) down to the leaves, since a split on `feature` "
    "further down still depends on the grid value.",
    "strict": "A grid value exactly equal to a threshold goes LEFT: compare with x <= threshold, "
    "not x < threshold.",
    "swapped": "Left and right are swapped: x <= threshold goes to children_left.",
    "shape": "Return one number per grid value: a float64 numpy array of length len(grid).",
}
TREE_SHAP_HINTS = {
    "sign": "Every value has the wrong sign: a feature that raises the prediction above the "
    "mean gets a positive value (the leaf's o_j minus its z_j, times v).",
    "saabas": "That is Saabas's attribution (the change of the node value along the "
    "sample's path, credited to each split's feature): it adds up right but is not the "
    "Shapley value. Each leaf's share must weigh every coalition of the path's features.",
    "repeated": "This tree splits on the same feature twice along a path, and you treated the "
    "second split as a new player. Merge them: a feature's zero fraction is the product of "
    "its cover fractions along the path and its one fraction 1 only if x passes all of its "
    "conditions (in Algorithm 2: find the feature's earlier entry, unwind it and extend with "
    "the merged fractions).",
    "strict": "A sample exactly at a threshold goes LEFT: compare with x <= threshold, not "
    "x < threshold.",
    "counts": "Use weighted_n_node_samples, not n_node_samples: this tree was fitted with "
    "sample weights, and the cover fractions follow the training weight.",
    "efficiency": "Your values add up to {got}, but the prediction minus the tree's mean, "
    "f(x) - E[f(X)] = {want} (efficiency: E[f(X)] is the root's value).",
    "unused": "Feature {j} is never split on in this tree, so its SHAP value is 0 (a dummy); "
    "yours is {got}.",
    "shape": "Return one number per feature: a float64 numpy array of length len(x).",
}
VALUE_HINT = (
    "tree.value[node] has shape (1, 1) (one output, one value): the leaf's number is "
    "tree.value[node, 0, 0]."
)
VALUE_ERRORS = tuple(
    (text, VALUE_HINT)
    for text in ("array element with a sequence", "ndim > 0 to a scalar", "only length-1 arrays")
)
SLOW_SECONDS = 20.0  # after this long on one case, say that a polynomial method is wanted
SLOW_NOTE = (
    "check_tree_shap: still waiting after {seconds:.0f} s on one tree ({d} features, depth "
    "{depth}, {leaves} leaves). Enumerating the 2^{d} coalitions of features does not finish; "
    "an exact polynomial method (Algorithm 2, or each leaf's polynomial over its path's "
    "features) takes well under a second. Interrupt the kernel to stop this check."
)


def _as_vector(got, n, shape_hint):
    """The answer as a float64 vector of length ``n``, or a ``_BadOutput``."""
    if got is None:
        raise _BadOutput("returned None", "Did you forget the `return` statement?")
    if hasattr(got, "detach"):  # a torch tensor
        got = got.detach().cpu().numpy()
    if isinstance(got, str | dict | set) or np.ndim(got) != 1:
        if np.shape(got)[1:] == (1, 1):  # leaf values kept as tree.value[node]
            shape_hint = f"{shape_hint} {VALUE_HINT}"
        raise _BadOutput(f"returned {_fmt(got)}", shape_hint)
    try:
        values = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise _BadOutput(f"returned {_fmt(got)}", shape_hint) from None
    if values.shape != (n,):
        raise _BadOutput(f"returned {len(values)} values, expected {n}", shape_hint)
    if not np.all(np.isfinite(values)):
        hint = "A value is NaN or infinite: look for a division by zero."
        raise _BadOutput(f"returned {_fmt(values)}", hint)
    return values


def _low_precision(got):
    if hasattr(got, "detach"):
        return str(got.dtype) in ("torch.float32", "torch.float16", "torch.bfloat16")
    return np.asarray(got).dtype in (np.float32, np.float16)


def _same(got, expected, tol=1e-9):
    return bool(np.allclose(got, expected, rtol=tol, atol=tol))


def _show_array(values):
    text = np.array2string(np.asarray(values), precision=6, threshold=12, separator=", ",
                           max_line_width=10**6)  # fmt: skip
    return " ".join(text.split())


def _tree_name(model):
    library = "treelib" if type(model).__module__.startswith("treelib") else "scikit-learn"
    tree = model.tree_
    return (
        f"the tree_ of a {library} DecisionTreeRegressor ({tree.n_features} features, "
        f"depth {tree.max_depth}, {tree.node_count} nodes)"
    )


# --- Exact Shapley values of a small game ---


def _weight(size, d):
    return math.factorial(size) * math.factorial(d - size - 1) / math.factorial(d)


def _shapley(values, d, weight=_weight):
    """Shapley values of the game ``values`` ({sorted tuple: v}), with ``weight(|S|, d)``."""
    phi = np.zeros(d)
    for i in range(d):
        others = [j for j in range(d) if j != i]
        for size in range(d):
            for subset in combinations(others, size):
                with_i = tuple(sorted(subset + (i,)))
                phi[i] += weight(size, d) * (values[with_i] - values[subset])
    return phi


class _Game:
    """The value function handed to the learner: ``value(S)`` for a tuple of players ``S``."""

    def __init__(self, values, d):
        self.values, self.d = values, d

    def __call__(self, coalition):
        if isinstance(coalition, int | np.integer):
            raise TypeError(
                f"value() takes a tuple of players, e.g. value(({int(coalition)},)), "
                f"not value({int(coalition)})"
            )
        players = [int(j) for j in coalition]
        if len(set(players)) != len(players):
            raise ValueError(f"the coalition {tuple(players)} repeats a player")
        if any(j < 0 or j >= self.d for j in players):
            outside = f"names a player outside 0..{self.d - 1}"
            raise ValueError(f"the coalition {tuple(players)} {outside}")
        return float(self.values[tuple(sorted(players))])


def _game(d, v):
    return {s: float(v(s)) for size in range(d + 1) for s in combinations(range(d), size)}


def _describe_game(values, d):
    if d > 2:
        return None
    parts = [f"v({', '.join(map(str, s))}) = {_fmt(v)}" for s, v in values.items()]
    return "; ".join(parts)


@functools.lru_cache(maxsize=1)
def _shapley_games():
    """(values, d, description), hand-worked ones first, then trees' and random games."""
    from sklearn.tree import DecisionTreeRegressor

    from ..explain import tree_expectation

    games = [
        ({(): 0.0, (0,): 1.0, (1,): 2.0, (0, 1): 5.0}, 2, "a 2-player game"),  # phi = (2, 3)
        ({(): 2.0, (0,): 5.0}, 1, "a 1-player game"),  # phi = (3,)
        (_game(3, lambda s: float(len(s) >= 2)), 3, "the 3-player majority game"),  # 1/3 each
        (_game(4, lambda s: len(s) ** 2), 4, "a symmetric 4-player game v(S) = |S|^2"),  # 4 each
        (
            _game(4, lambda s: 1 + 2 * (0 in s) + 3 * (1 in s and 2 in s)),
            4,
            "a 4-player game where player 3 is a dummy",  # (2, 1.5, 1.5, 0)
        ),
    ]
    rng = np.random.RandomState(case_seed(10))
    for d in (3, 4, 6):
        X = rng.uniform(size=(80, d)).astype(np.float32).astype(np.float64)
        y = X @ rng.normal(size=d) + rng.normal(scale=0.1, size=80)
        model = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
        x = X[rng.randint(80)]
        values = _game(d, lambda s, model=model, x=x: tree_expectation(model, x, s))
        games.append((values, d, f"the value function of a depth-2 tree on {d} features"))
    for d in (3, 5):
        values = _game(d, lambda s: 0.0)
        values.update({s: float(v) for s, v in zip(values, rng.normal(size=len(values)))})
        games.append((values, d, f"a random {d}-player game"))
    return tuple(games)


def _dummies(values, d):
    return [j for j in range(d) if all(values[tuple(sorted(s + (j,)))] == values[s]
                                       for s in values if j not in s)]  # fmt: skip


def _shapley_hint(args, got, expected):
    game, d = args
    values = game.values
    low = _low_precision(got)
    got = _as_vector(got, d, SHAPLEY_HINTS["shape"])
    total, want = got.sum(), values[tuple(range(d))] - values[()]
    efficiency = ""
    if not math.isclose(total, want, rel_tol=1e-9, abs_tol=1e-9):
        efficiency = SHAPLEY_HINTS["efficiency"].format(got=_fmt(total), want=_fmt(want))
    if low and _same(got, expected, 1e-5):
        return SHAPLEY_HINTS["float64"]
    if not got.any() and expected.any():
        return f"{SHAPLEY_HINTS['containing']} {efficiency}".strip()
    off_by_one = _shapley(values, d, lambda s, d: math.factorial(s) * math.factorial(d - s)
                          / math.factorial(d))  # fmt: skip
    if _same(got, off_by_one):
        return f"{SHAPLEY_HINTS['weights']} {efficiency}".strip()
    plain = _shapley(values, d, lambda s, d: 1.0)
    if _same(got, plain) or _same(got, plain / 2 ** (d - 1)):
        return f"{SHAPLEY_HINTS['average']} {efficiency}".strip()
    if efficiency:
        return f"{efficiency} {SHAPLEY_HINTS['count']}"
    one_order = [values[tuple(range(i + 1))] - values[tuple(range(i))] for i in range(d)]
    if _same(got, one_order):
        return SHAPLEY_HINTS["order"]
    for j in _dummies(values, d):
        if abs(got[j]) > 1e-9:
            return SHAPLEY_HINTS["dummy"].format(j=j, got=_fmt(got[j]))
    for i, j in combinations(range(d), 2):
        swap = {k: k for k in range(d)} | {i: j, j: i}
        same = all(values[tuple(sorted(swap[k] for k in s))] == v for s, v in values.items())
        if same and not math.isclose(got[i], got[j], rel_tol=1e-9, abs_tol=1e-9):
            return SHAPLEY_HINTS["symmetry"].format(i=i, j=j, a=_fmt(got[i]), b=_fmt(got[j]))
    return None


def check_shapley_values(fn):
    """Check ``shapley_values(value, d)``, an exercise of Chapter 10.

    ``value`` is the game: it takes a tuple of players (feature indices, sorted),
    a coalition ``S``, and returns the number ``v(S)``; ``d`` is the number of
    players. Return the exact Shapley values, a float64 array ``phi`` of length
    ``d``: ``phi_i = sum over S not containing i of |S|! (d-|S|-1)! / d! *
    (v(S + {i}) - v(S))``. Checked on games worked by hand (two players: v() = 0,
    v(0) = 1, v(1) = 2, v(0, 1) = 5 gives phi = (2, 3)), symmetric and dummy
    players, the expectations of depth-2 trees and random games, up to 6 players.

    Examples
    --------
    >>> from itertools import combinations
    >>> from math import factorial
    >>> import numpy as np
    >>> def my_shapley_values(value, d):
    ...     phi = np.zeros(d)
    ...     for i in range(d):
    ...         others = [j for j in range(d) if j != i]
    ...         for size in range(d):
    ...             weight = factorial(size) * factorial(d - size - 1) / factorial(d)
    ...             for S in combinations(others, size):
    ...                 phi[i] += weight * (value(tuple(sorted(S + (i,)))) - value(S))
    ...     return phi
    >>> check_shapley_values(my_shapley_values)
    check_shapley_values: all 10 cases passed. Well done!
    True
    """
    cases = []
    for values, d, what in _shapley_games():
        game = _Game(values, d)
        show = f"shapley_values(value, d={d}) for {what}"
        spelled = _describe_game(values, d)
        show += f" ({spelled})" if spelled else ""
        cases.append(
            _Case(
                (game, d),
                _shapley(values, d),
                call=lambda fn, args: fn(*args),
                show=show,
                error_hints=(("repeats a player", SHAPLEY_HINTS["repeat"]),),
            )
        )

    def compare(got, expected):
        return _same(_as_vector(got, len(expected), SHAPLEY_HINTS["shape"]), expected)

    return _run_cases("shapley_values", fn, cases, compare, _shapley_hint)


# --- Partial dependence by the recursion method ---


def _pd(tree, feature, grid, half=False, counts=False, node_value=False, strict=False,
        swapped=False):  # fmt: skip
    """Friedman's weighted traversal; the keyword arguments build the classic mistakes."""
    left, right = tree.children_left, tree.children_right
    cover = tree.n_node_samples if counts else tree.weighted_n_node_samples
    value = np.asarray(tree.value)[:, 0, 0]
    out = np.zeros(len(grid))
    for g, x in enumerate(grid):
        stack = [(0, 1.0)]
        while stack:
            node, weight = stack.pop()
            if left[node] == -1:
                out[g] += weight * value[node]
            elif tree.feature[node] == feature:
                goes = x < tree.threshold[node] if strict else x <= tree.threshold[node]
                stack.append(((left[node] if goes != swapped else right[node]), weight))
            elif node_value:
                out[g] += weight * value[node]
            else:
                for child in (left[node], right[node]):
                    share = 0.5 if half else cover[child] / cover[node]
                    stack.append((child, weight * share))
    return out


def _fit(kind, X, y, sample_weight=None, **params):
    if kind == "treelib":
        from ..tree import DecisionTreeRegressor
    else:
        from sklearn.tree import DecisionTreeRegressor
    return DecisionTreeRegressor(random_state=0, **params).fit(X, y, sample_weight=sample_weight)


def _regression_data(rng, n, d, lattice=False, weighted=False):
    """Seeded data for a regression tree (float32 values); integers on a lattice."""
    if lattice:
        X = rng.randint(0, 10, size=(n, d)).astype(np.float64)
    else:
        X = rng.uniform(-2, 2, size=(n, d)).astype(np.float32).astype(np.float64)
    y = np.sin(2 * X[:, 0]) + X[:, 1 % d] * X[:, -1] + rng.normal(scale=0.2, size=n)
    weights = rng.randint(1, 5, size=n).astype(np.float64) if weighted else None
    return X, y, weights


def _expected_pd(model, feature, grid):
    """The reference: scikit-learn's recursion (its tree's own), or treelib's."""
    if hasattr(model, "_compute_partial_dependence_recursion"):  # scikit-learn 1.6 to 1.9
        return model._compute_partial_dependence_recursion(
            grid[:, None].astype(np.float32), np.array([feature], dtype=np.intp)
        )
    from ..explain import _recursion

    return _recursion(model, grid[:, None], np.array([feature]))[0]


@functools.lru_cache(maxsize=1)
def _pd_cases():
    """(model, feature, grid, expected): tie-free and lattice data, weights, both libraries."""
    rng = np.random.RandomState(case_seed(10) + 1)
    settings = [  # library, depth, d, lattice, weighted, feature
        ("scikit-learn", 3, 3, False, False, 0),
        ("scikit-learn", 4, 3, True, False, 1),
        ("scikit-learn", 5, 4, False, True, 2),
        ("scikit-learn", 6, 4, True, False, 3),
        ("treelib", 4, 3, True, False, 1),
        ("treelib", 3, 2, False, False, 0),
        ("treelib", 5, 3, False, True, 2),
    ]
    cases = []
    for kind, depth, d, lattice, weighted, feature in settings:
        X, y, w = _regression_data(rng, 300, d, lattice, weighted)
        model = _fit(kind, X, y, w, max_depth=depth)
        tree = model.tree_
        column = X[:, feature]
        grid = np.linspace(column.min() - 0.5, column.max() + 0.5, 9)
        at = tree.threshold[(tree.feature == feature) & (tree.children_left != -1)]
        at = np.unique(at[at.astype(np.float32) == at])  # thresholds float32 holds exactly
        grid = np.concatenate([grid, at[:4]]).astype(np.float32).astype(np.float64)
        cases.append((model, feature, grid, _expected_pd(model, feature, grid)))
    return tuple(cases)


def _pd_hint(args, got, expected):
    tree, feature, grid = args
    low = _low_precision(got)
    got = _as_vector(got, len(grid), PD_HINTS["shape"])
    if low and _same(got, expected, 1e-5):
        return SHAPLEY_HINTS["float64"].replace("np.zeros(d)", "np.zeros(len(grid))")
    root = float(np.asarray(tree.value)[0, 0, 0])
    if np.ptp(expected) > 1e-9 and np.allclose(got, root, rtol=1e-9, atol=1e-9):
        return PD_HINTS["constant"]
    for mistake in ("half", "counts", "node_value", "strict", "swapped"):
        if _same(got, _pd(tree, feature, grid, **{mistake: True})):
            return PD_HINTS[mistake]
    return None


def _copy_tree_call(fn, args):
    """Call ``fn`` on a fresh copy of the tree and of the arrays: edits cannot leak."""
    return fn(*[copy.deepcopy(a) for a in args])


def check_pd_recursion(fn):
    """Check ``pd_recursion(tree, feature, grid)``, an exercise of Chapter 10.

    ``tree`` is a fitted regression tree's ``tree_`` (arrays ``children_left``,
    ``children_right``, ``feature``, ``threshold``, ``weighted_n_node_samples``
    and ``value`` of shape (node_count, 1, 1)), ``feature`` a feature index and
    ``grid`` a 1-D float64 array. Return the partial dependence of the tree's
    prediction on ``feature`` at each grid value (float64, length ``len(grid)``)
    by the recursion method: from the root, at a split on ``feature`` follow the
    grid value's side (``x <= threshold`` goes left); at a split on another
    feature take both children, weighted by their share of the node's
    ``weighted_n_node_samples``; add up leaf value times weight. Compared with
    scikit-learn's ``partial_dependence(method="recursion")`` on trees of depth 3
    to 6 of both libraries, some fitted with sample weights, at grid values that
    include thresholds.

    Examples
    --------
    >>> import numpy as np
    >>> def my_pd_recursion(tree, feature, grid):
    ...     out = np.zeros(len(grid))
    ...     n = tree.weighted_n_node_samples
    ...     for g, x in enumerate(grid):
    ...         stack = [(0, 1.0)]  # (node, weight)
    ...         while stack:
    ...             node, weight = stack.pop()
    ...             left, right = tree.children_left[node], tree.children_right[node]
    ...             if left == -1:
    ...                 out[g] += weight * tree.value[node, 0, 0]
    ...             elif tree.feature[node] == feature:
    ...                 stack.append((left if x <= tree.threshold[node] else right, weight))
    ...             else:
    ...                 stack.append((left, weight * n[left] / n[node]))
    ...                 stack.append((right, weight * n[right] / n[node]))
    ...     return out
    >>> check_pd_recursion(my_pd_recursion)
    check_pd_recursion: all 7 cases passed. Well done!
    True
    """
    cases = []
    for model, feature, grid, expected in _pd_cases():
        show = f"pd_recursion({_tree_name(model)}, feature={feature}, grid={_show_array(grid)})"
        args = (model.tree_, feature, grid)
        cases.append(_Case(args, expected, _copy_tree_call, show, error_hints=VALUE_ERRORS))

    def compare(got, expected):
        return _same(_as_vector(got, len(expected), PD_HINTS["shape"]), expected)

    return _run_cases("pd_recursion", fn, cases, compare, _pd_hint)


# --- The capstone: path-dependent TreeSHAP ---


def _path_shap(tree, x, strict=False, counts=False, repeated=False):
    """Exact path-dependent SHAP values, one leaf at a time (the keywords: the mistakes).

    A leaf of value ``v`` reached through the distinct features ``j`` of its path is the
    game ``v * prod_{j in S} o_j * prod_{j not in S} z_j``: ``o_j`` is 1 when ``x`` passes
    all the path's conditions on ``j``, ``z_j`` the product of their cover fractions. Its
    Shapley value for ``j`` is ``v (o_j - z_j) sum_s w(s) c_s``, with ``c_s`` the
    coefficient of ``t^s`` in ``prod_{k != j} (z_k + o_k t)``. With ``repeated``, every
    split is a player of its own (the mistake of skipping Algorithm 2's unwind).
    """
    left, right = tree.children_left, tree.children_right
    cover = tree.n_node_samples if counts else tree.weighted_n_node_samples
    value = np.asarray(tree.value)[:, 0, 0]
    phi = np.zeros(len(x))
    stack = [(0, {}, {}, {})]  # node, z, o, player -> feature
    while stack:
        node, z, o, owner = stack.pop()
        if left[node] == -1:
            players = list(z)
            n = len(players)
            weights = [_weight(s, n) for s in range(n)]
            for j in players:
                poly = np.array([1.0])
                for k in players:
                    if k != j:
                        poly = np.append(poly * z[k], 0.0) + np.append(0.0, poly * o[k])
                phi[owner[j]] += value[node] * (o[j] - z[j]) * np.dot(weights, poly)
            continue
        f = int(tree.feature[node])
        player = node if repeated else f
        passes = x[f] < tree.threshold[node] if strict else x[f] <= tree.threshold[node]
        for child, goes in ((left[node], passes), (right[node], not passes)):
            z2, o2 = dict(z), dict(o)
            z2[player] = z.get(player, 1.0) * cover[child] / cover[node]
            o2[player] = o.get(player, 1.0) * float(goes)
            stack.append((child, z2, o2, {**owner, player: f}))
    return phi


def _path_of(tree, x):
    """The nodes from the root to ``x``'s leaf."""
    nodes = [0]
    while tree.children_left[nodes[-1]] != -1:
        node = nodes[-1]
        left = x[tree.feature[node]] <= tree.threshold[node]
        nodes.append(tree.children_left[node] if left else tree.children_right[node])
    return nodes


def _saabas(tree, x):
    """Saabas's attribution: each split's change of the node value, to its feature."""
    value = np.asarray(tree.value)[:, 0, 0]
    phi, nodes = np.zeros(len(x)), _path_of(tree, x)
    for node, child in zip(nodes[:-1], nodes[1:]):
        phi[tree.feature[node]] += value[child] - value[node]
    return phi


def _at_thresholds(tree, rng, x):
    """``x`` moved, feature by feature, onto a threshold of that feature the tree holds."""
    x = x.copy()
    for f in range(len(x)):
        at = tree.threshold[(tree.feature == f) & (tree.children_left != -1)]
        at = at[at.astype(np.float32) == at]
        if len(at):
            x[f] = at[rng.randint(len(at))]
    return x


@functools.lru_cache(maxsize=1)
def _tree_shap_cases():
    """(model, x, expected): repeated features, samples at thresholds, a 24-feature tree."""
    from ..explain import TreeExplainer

    rng = np.random.RandomState(case_seed(10) + 2)
    settings = [  # library, depth, d, lattice, weighted, x at thresholds, n
        ("scikit-learn", 3, 4, False, False, False, 200),
        ("scikit-learn", 6, 2, False, False, False, 300),  # every path repeats a feature
        ("scikit-learn", 5, 3, True, False, True, 300),
        ("treelib", 4, 3, False, False, False, 200),
        ("treelib", 5, 2, True, False, True, 300),
        ("scikit-learn", 4, 3, False, True, False, 200),
        ("scikit-learn", 6, 3, True, True, True, 400),
        ("scikit-learn", 8, 24, False, False, False, 3000),  # too big for 2^24 coalitions
    ]
    cases = []
    for kind, depth, d, lattice, weighted, at, n in settings:
        X, y, w = _regression_data(rng, n, d, lattice, weighted)
        model = _fit(kind, X, y, w, max_depth=depth)
        x = X[rng.randint(n)].copy()
        if at:
            x = _at_thresholds(model.tree_, rng, x)
        expected = TreeExplainer(model).shap_values(x[None])[0]
        cases.append((model, x, expected))
    return tuple(cases)


def _tree_shap_hint(args, got, expected):
    tree, x = args
    low = _low_precision(got)
    got = _as_vector(got, len(x), TREE_SHAP_HINTS["shape"])
    if low and _same(got, expected, 1e-5):
        return SHAPLEY_HINTS["float64"].replace("np.zeros(d)", "np.zeros(len(x))")
    if _same(got, -expected):
        return TREE_SHAP_HINTS["sign"]
    if _same(got, _saabas(tree, x)):
        return TREE_SHAP_HINTS["saabas"]
    for mistake in ("repeated", "strict", "counts"):
        if _same(got, _path_shap(tree, x, **{mistake: True})):
            return TREE_SHAP_HINTS[mistake]
    value = np.asarray(tree.value)[:, 0, 0]
    want = value[_path_of(tree, x)[-1]] - value[0]
    if not math.isclose(got.sum(), want, rel_tol=1e-9, abs_tol=1e-9):
        return TREE_SHAP_HINTS["efficiency"].format(got=_fmt(got.sum()), want=_fmt(want))
    used = set(tree.feature[tree.children_left != -1].tolist())
    for j in range(len(x)):
        if j not in used and abs(got[j]) > 1e-9:
            return TREE_SHAP_HINTS["unused"].format(j=j, got=_fmt(got[j]))
    return None


def _timed_call(fn, args):
    """:func:`_copy_tree_call`, printing a note if it runs longer than ``SLOW_SECONDS``."""
    tree = args[0]
    note = SLOW_NOTE.format(
        seconds=SLOW_SECONDS, d=tree.n_features, depth=tree.max_depth,
        leaves=int((tree.children_left == -1).sum()),
    )  # fmt: skip
    timer = threading.Timer(SLOW_SECONDS, print, args=(note,))
    timer.daemon = True
    timer.start()
    try:
        return _copy_tree_call(fn, args)
    finally:
        timer.cancel()


def check_tree_shap(fn):
    """Check ``tree_shap(tree, x)``, the capstone exercise of Chapter 10.

    ``tree`` is a fitted regression tree's ``tree_`` (as in ``pd_recursion``),
    ``x`` a float64 array of length ``n_features``. Return the path-dependent
    SHAP values of the tree's prediction at ``x`` (float64, length
    ``n_features``): the Shapley values of the game ``v(S)`` = the tree's
    expectation with the features ``S`` known (an unknown feature's split sends
    ``x`` down both sides, weighted by ``weighted_n_node_samples``). Use an exact
    polynomial method (Lundberg et al.'s Algorithm 2, or each leaf's polynomial
    over its path's features): one case has 24 features. Compared with
    ``treelib.explain.TreeExplainer`` to 1e-9 on trees of both libraries,
    including trees that split on a feature twice along a path, samples exactly
    at thresholds (``x <= threshold`` goes left) and trees fitted with sample
    weights. A note is printed if one case takes longer than 20 s.

    Examples
    --------
    >>> from math import factorial
    >>> import numpy as np
    >>> def my_tree_shap(tree, x):
    ...     phi = np.zeros(len(x))
    ...     L, R, n = tree.children_left, tree.children_right, tree.weighted_n_node_samples
    ...     def leaf_share(v, z, o):  # each feature of the path: the leaf's Shapley value
    ...         m = len(z)
    ...         w = [factorial(s) * factorial(m - s - 1) / factorial(m) for s in range(m)]
    ...         for j in z:
    ...             poly = np.array([1.0])  # coefficients of prod_{k != j} (z_k + o_k t)
    ...             for k in z:
    ...                 if k != j:
    ...                     poly = np.append(poly * z[k], 0) + np.append(0, poly * o[k])
    ...             phi[j] += v * (o[j] - z[j]) * np.dot(w, poly)
    ...     def visit(node, z, o):  # z, o: {feature: zero fraction, one fraction}
    ...         if L[node] == -1:
    ...             return leaf_share(tree.value[node, 0, 0], z, o)
    ...         f = tree.feature[node]
    ...         goes_left = x[f] <= tree.threshold[node]
    ...         for child, goes in ((L[node], goes_left), (R[node], not goes_left)):
    ...             z2 = {**z, f: z.get(f, 1.0) * n[child] / n[node]}
    ...             visit(child, z2, {**o, f: o.get(f, 1.0) * goes})
    ...     visit(0, {}, {})
    ...     return phi
    >>> check_tree_shap(my_tree_shap)
    check_tree_shap: all 8 cases passed. Well done!
    True
    """
    cases = []
    for model, x, expected in _tree_shap_cases():
        show = f"tree_shap({_tree_name(model)}, x={_show_array(x)})"
        cases.append(_Case((model.tree_, x), expected, _timed_call, show, error_hints=VALUE_ERRORS))

    def compare(got, expected):
        return _same(_as_vector(got, len(expected), TREE_SHAP_HINTS["shape"]), expected)

    return _run_cases("tree_shap", fn, cases, compare, _tree_shap_hint)
