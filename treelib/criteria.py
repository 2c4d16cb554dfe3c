"""Impurity functions: how mixed is a node?

Introduced in Chapter 1 (``notebooks/01_decision_stump``); entropy is the
subject of Chapter 4 and squared error of Chapter 3.

Every function takes a tensor of *node statistics* whose first axis describes
one node, so the same call scores one node, a row of candidate splits, or a
whole grid of them at once:

- classification: weighted class counts, shape ``(n_classes, ...)``;
- regression: the moments ``(sum w, sum w*y, sum w*y**2)``, shape ``(3, ...)``;
  Poisson's ``(sum w, sum w*y, sum w*y*log y)``.

With several outputs (multi-output ``y``, Chapter 3) the statistics stack the
outputs: one block of class counts per output (:class:`MultiOutputClassification`),
or ``(sum w, sum w*y_1, ..., sum w*y_k, sum_j sum w*y_j**2)`` for squared error
(:class:`MultiOutputSquaredError`), ``(sum w, sum w*y_1, ..., sum w*y_k,
sum w y_1 log y_1, ..., sum w y_k log y_k)`` for Poisson (:class:`MultiOutputPoisson`).

The absolute error (:class:`AbsoluteError`) is the exception: a median is not
a sum, so its node statistics ``(W, sum w|y - median|, median)`` are computed
from the node's samples, and only the exact (recursive and best-first)
builders grow with it; with several outputs, ``(W, E_1 + ... + E_k, median_1,
..., median_k)`` (:class:`MultiOutputAbsoluteError`).
"""

import math

import numpy as np
import torch


def gini(counts):
    """Gini impurity ``1 - sum_k p_k**2`` of weighted class counts.

    Introduced in Chapter 1. For two classes it equals ``2 p (1 - p)``.
    """
    return gini_of_weighted(counts, sum_classes(counts))


def gini_of_weighted(counts, weight):
    """Gini impurity of counts whose total ``weight`` is known.

    scikit-learn's arithmetic: ``1 - sum_k counts_k**2 / weight**2``.
    """
    return 1.0 - sum_classes(counts * counts) / (weight * weight)


def sum_classes(stats):
    """Sum over the first axis, one class after the other.

    For the few classes of a tree this is several times faster than
    ``stats.sum(0)`` on large grids (Chapter 7), and it adds in class order, as
    scikit-learn does.
    """
    if len(stats) == 1:
        return stats[0].clone()
    total = stats[0] + stats[1]
    for row in stats[2:]:
        total += row
    return total


def entropy(counts):
    """Shannon entropy in bits, ``-sum_k p_k log2 p_k``, with ``0 log 0 = 0``.

    Introduced in Chapter 4; scikit-learn also calls it ``"log_loss"``.
    """
    p = counts / sum_classes(counts)
    p = p.clamp(min=0.0)  # counts found by subtraction can be -1e-17: that is a zero
    return 0.0 - sum_classes(torch.special.xlogy(p, p)) / math.log(2.0)  # 0.0 - x: no "-0.0"


def squared_error(moments):
    """Weighted variance ``sum w y**2 / W - mean**2`` from ``(W, sum wy, sum wy**2)``.

    Introduced in Chapter 3; the leaf value that minimises it is the weighted mean.
    """
    w, wy, wyy = moments
    mean = wy / w
    return wyy / w - mean * mean


def multi_output_squared_error(moments):
    """Squared error of ``k`` outputs from ``(W, S_1, ..., S_k, sum_j sum w*y_j**2)``.

    Introduced with multi-output trees (Chapter 3), as scikit-learn's
    ``MSE.node_impurity``: ``sum w*y**2 / W`` minus each output's squared mean,
    divided by ``k`` (the mean of the outputs' squared errors).
    """
    w, n_outputs = moments[0], len(moments) - 2
    impurity = moments[-1] / w
    for s in moments[1:-1]:
        impurity = impurity - (s / w) ** 2
    return impurity / n_outputs


CRITERIA = {
    "gini": gini,
    "entropy": entropy,
    "log_loss": entropy,
    "squared_error": squared_error,
}
CLASSIFICATION_CRITERIA = ("gini", "entropy", "log_loss")
REGRESSION_CRITERIA = ("squared_error", "absolute_error", "poisson")
EPSILON = 10 * torch.finfo(torch.float64).eps  # scikit-learn's Poisson EPSILON (``_criterion.pyx``)
POISSON_RTOL = 1e-12  # a Poisson child whose sum is below this share of its node's has none


class Criterion:
    """A split criterion: everything the builders ask of one (Chapters 1, 3 and 4).

    The builders never test a criterion's name: they call these methods on the
    object :func:`criterion_of` returns. Statistics have the node on their first
    axis (see the module docstring); every method works on one node or a grid of
    them. A new criterion (for instance a Newton criterion on gradients and
    hessians) is a new subclass.
    """

    name = None
    is_regression = False
    summable = True  # a node's statistics are the sum of its samples' (not a median's)
    exact_builders_only = False  # True: only the recursive and best-first builders grow it

    def __repr__(self):
        return f"{type(self).__name__}()"

    def per_sample(self, y, w, n_classes=None):
        """Per-sample statistics ``(n_stats, n_samples)``: their sum describes a node."""
        stats = torch.zeros(n_classes, len(y), dtype=torch.float64, device=y.device)
        stats[y, torch.arange(len(y), device=y.device)] = w
        return stats

    def node_stats(self, stats):
        """The statistics of the node holding the samples ``stats`` (n_stats, n_samples).

        Sums added in sample order, as scikit-learn's criterion adds them (:func:`node_sums`).
        """
        return node_sums(stats)

    def ordered_children(self, sorted_stats):
        """Both children of every cut of samples laid out in order.

        ``sorted_stats`` (n_stats, f, n): per-sample statistics in each
        feature's order. Cut ``i`` puts the ``i + 1`` first samples left.
        Returns ``(left, right)``, each (n_stats, f, n - 1): a cumulative sum
        is every left child, and the right child is the total minus it.
        """
        left = sorted_stats.cumsum(2)
        total = left[:, :, -1:]
        left = left[:, :, :-1]
        return left, total - left

    def masked_children(self, stats, left_mask):
        """Both children of the splits ``left_mask`` (n_samples, f): (n_stats, f) each."""
        left = stats @ left_mask.to(stats.dtype)
        return left, stats.sum(1)[:, None] - left

    def impurity(self, stats):
        raise NotImplementedError

    def weight(self, stats):
        """Total sample weight of the node(s)."""
        return sum_classes(stats)

    def value(self, stats):
        """What a node predicts: class fractions."""
        return stats / stats.sum(0)

    def split_scores(self, left, right, w_left, w_right):
        """Score candidate splits from their children's statistics; higher is better.

        ``-(w_L imp_L + w_R imp_R)``: the smallest weighted impurity of the children.
        """
        return -(w_left * self.impurity(left) + w_right * self.impurity(right))

    def tie_scale(self, total):
        """A bound on the node's scores, which rounding errors are relative to (Chapter 7)."""
        return self.weight(total)

    def monotonic_value(self, stats, weight):
        """The value a monotonic constraint reads (Chapter 6): the fraction of class 0."""
        return stats[0] / weight


class Gini(Criterion):
    """Gini impurity (Chapter 1)."""

    name = "gini"

    def impurity(self, stats):
        return gini(stats)

    def split_scores(self, left, right, w_left, w_right):
        # the children's weights are known: no second sum (gini_of_weighted)
        return -(
            w_right * gini_of_weighted(right, w_right) + w_left * gini_of_weighted(left, w_left)
        )


class Entropy(Criterion):
    """Entropy in bits (Chapter 4); scikit-learn also calls it ``"log_loss"``."""

    name = "entropy"

    def impurity(self, stats):
        return entropy(stats)


class SquaredError(Criterion):
    """Squared error on the moments ``(W, sum w*y, sum w*y**2)`` (Chapter 3)."""

    name = "squared_error"
    is_regression = True

    def per_sample(self, y, w, n_classes=None):
        y = y.to(torch.float64)
        return torch.stack([w, w * y, w * y * y])

    def impurity(self, stats):
        return squared_error(stats)

    def weight(self, stats):
        return stats[0]

    def value(self, stats):
        """The weighted mean target."""
        return stats[1:2] / stats[0]

    def split_scores(self, left, right, w_left, w_right):
        # scikit-learn's proxy S_L**2 / W_L + S_R**2 / W_R: the same order as
        # the children's impurity, rounded as scikit-learn rounds it (Chapter 3)
        return left[1] ** 2 / w_left + right[1] ** 2 / w_right

    def tie_scale(self, total):
        return total[-1]  # sum w*y**2: the proxy never exceeds it

    def monotonic_value(self, stats, weight):
        """The mean target."""
        return stats[1] / weight


class Poisson(SquaredError):
    """Half Poisson deviance (Chapter 3): what ``criterion="poisson"`` minimises.

    The impurity is scikit-learn's ``sum w y log(y / mean) / W``, which is
    ``(sum w y log y - S log(S / W)) / W`` with ``S = sum w*y``: the moments
    ``(W, S, sum w y log y)`` describe a node. The leaf value is the mean, as
    for squared error. A child whose ``S`` is not positive (``<= EPSILON``)
    could predict no positive rate: such a split is never allowed.
    """

    name = "poisson"
    # the level-wise and histogram sums of a child are exact only to the whole
    # level's size: a child whose targets sum to 0 could pass for one with a rate
    exact_builders_only = True

    def per_sample(self, y, w, n_classes=None):
        y = y.to(torch.float64)
        return torch.stack([w, w * y, w * torch.special.xlogy(y, y)])

    def impurity(self, stats):
        w, wy, wylogy = stats
        deviance = (wylogy - torch.special.xlogy(wy, wy / w)) / w
        return torch.where(wy <= EPSILON, torch.inf, deviance)

    def split_scores(self, left, right, w_left, w_right):
        # scikit-learn's proxy S_L log(mean_L) + S_R log(mean_R); -inf: a child without rate
        # (scikit-learn's bar is EPSILON; a child's sum found by subtraction, or from
        # histogram bins, can be 1e-13 where it is 0: the bar grows with the node's sum)
        s_left, s_right = left[1], right[1]
        scores = s_left * torch.log(s_left / w_left) + s_right * torch.log(s_right / w_right)
        bar = ((s_left + s_right) * POISSON_RTOL).clamp(min=EPSILON)
        return torch.where((s_left > bar) & (s_right > bar), scores, -torch.inf)

    def tie_scale(self, total):
        w, wy = total[0], total[1]
        return wy * (1.0 + torch.log(wy / w).abs())  # the proxy's size, about


def weighted_median_and_error(y, w, active):
    """scikit-learn 1.9's weighted median of each row's samples, and their absolute error.

    ``y`` (n,) sorted, ``w`` (n,) their weights, ``active`` (m, n) which samples
    each row holds. The median is the smallest ``y`` whose cumulative weight
    exceeds half the row's weight; when the cumulative weight of one ``y``
    equals the half exactly, the midpoint of it and the next ``y`` (so, with
    equal weights and an even count, the mean of the two middle values).
    Returns ``(W, sum w |y - median|, median)``, each (m,).
    """
    aw = active * w  # (m, n)
    cumulative = aw.cumsum(1)
    total = cumulative[:, -1]
    half = (0.5 * total)[:, None]
    last = len(y) - 1
    above = torch.searchsorted(cumulative, half, right=True).clamp(max=last)[:, 0]
    reach = torch.searchsorted(cumulative, half).clamp(max=last)[:, 0]
    median = torch.where(reach < above, (y[reach] + y[above]) / 2, y[above])
    error = (aw * (y - median[:, None]).abs()).sum(1)
    return torch.stack([total, error, median])


def fenwick_errors(ranks, y_sorted, w):
    """Median and absolute error of every prefix, as scikit-learn 1.9 computes them.

    scikit-learn's ``precompute_absolute_errors``: the samples are added one
    after the other (``ranks``: each one's rank in ``y_sorted``, ``w`` their
    weights, in that order) to a Fenwick tree of the weights and of ``w*y``
    by rank; after each, a search for half the weight gives the median and the
    sums left of it, and ``E = (S_R - m W_R) + (m W_L - S_L)``. Each node of
    the tree adds its samples in the order they come: a cumulative sum
    (sequential, as numpy's) of each node's samples is its value at each step
    (:class:`FenwickLevels`). Each argument is a (b, n) numpy array: ``b``
    such sequences at once. Returns ``(W, E, median)`` after each step,
    (3, b, n); ``O(n log n)`` per sequence.
    """
    b, n = ranks.shape
    wy = w * np.take_along_axis(y_sorted, ranks, 1)
    total_w, total_wy = w.cumsum(1), wy.cumsum(1)
    levels = FenwickLevels(ranks, w, wy)
    steps = np.tile(np.arange(n), b)
    half = (0.5 * total_w).reshape(-1)
    above, reach, w_left, wy_left = fenwick_search(levels, steps, n, half)
    rows = np.repeat(np.arange(b), n)
    y_above, y_reach = y_sorted[rows, np.minimum(above, n - 1)], y_sorted[rows, reach]
    median = np.where(above != reach, (y_reach + y_above) / 2, y_above)
    w_right = total_w.reshape(-1) - w_left
    wy_right = total_wy.reshape(-1) - wy_left
    error = (wy_right - median * w_right) + (median * w_left - wy_left)
    return np.stack([total_w.reshape(-1), error, median]).reshape(3, b, n)


class FenwickLevels:
    """The value of every Fenwick node at every step, level by level, in ``O(n log n)``.

    Node ``i`` of level ``k`` (``i = 2**k (2j + 1)``) holds the ranks whose bit
    ``k`` is 0 and whose ``rank >> (k + 1)`` is ``j``. Per level, the samples
    each node receives are laid out in a row, in the order they come, and
    summed cumulatively along it; the value of node ``i`` at step ``s`` is the
    sum up to its last sample added at or before ``s``.
    """

    def __init__(self, ranks, w, wy):
        b, n = ranks.shape
        self.n, self.tables = n, []
        seq = np.repeat(np.arange(b), n)
        step = np.tile(np.arange(n), b)
        rank, w, wy = ranks.reshape(-1), w.reshape(-1), wy.reshape(-1)
        k = 0
        while (1 << k) <= n:
            held = (rank >> k) & 1 == 0
            rows = n // (1 << (k + 1)) + 1
            node = seq[held] * rows + (rank[held] >> (k + 1))  # one row per (sequence, node)
            order = np.argsort(node, kind="stable")  # (steps stay in order)
            node, q = node[order], step[held][order]
            start = np.searchsorted(node, np.arange(b * rows))
            col = np.arange(len(node)) - start[node]
            table = np.zeros((2, b * rows, (1 << k) + 1))  # column 0: nothing added yet
            table[0, node, col + 1] = w[held][order]
            table[1, node, col + 1] = wy[held][order]
            self.tables.append((node * (n + 1) + q, start, table.cumsum(2), rows))
            k += 1

    def value(self, k, node, seq, step):
        """Weight and ``w*y`` of node ``node`` (level ``k``) of ``seq`` after ``step``."""
        keys, start, table, rows = self.tables[k]
        row = seq * rows + np.minimum(node >> (k + 1), rows - 1)
        count = np.searchsorted(keys, row * (self.n + 1) + step, side="right") - start[row]
        return table[0, row, count], table[1, row, count]


def fenwick_search(levels, steps, size, target):
    """scikit-learn's ``WeightedFenwickTree.search`` for each ``target``.

    ``levels``: :class:`FenwickLevels` of ``b`` sequences; search ``t`` reads
    sequence ``t // size`` after step ``steps[t]``. Returns the rank where
    the cumulative weight first exceeds the target, the rank where it reaches
    it (the same one unless a cumulative weight equals the target exactly),
    and the weight and ``w*y`` summed before the first.
    """
    m = target.shape[0]
    seq = np.arange(m) // size
    top = size.bit_length() - 1
    current = np.zeros(m, dtype=np.int64)
    cw, cwy, rest = np.zeros(m), np.zeros(m), target.copy()
    found, equal_level, equal_rest = np.zeros(m, bool), np.full(m, -1), np.zeros(m)
    for k in range(top, -1, -1):  # phase 1: descend, stop at an exact match
        step = current + (1 << k)
        ok = (step <= size) & ~found
        weight, weight_y = levels.value(k, step, seq, steps)
        equal = ok & (rest == weight)
        equal_level[equal], equal_rest[equal] = k, rest[equal]
        found |= equal
        go = ok & ~equal & (rest > weight)
        rest[go] -= weight[go]
        current[go] = step[go]
        cw[go] += weight[go]
        cwy[go] += weight_y[go]
    if not found.any():
        return current, current, cw, cwy
    prev, rest2, rest3 = current.copy(), equal_rest.copy(), equal_rest.copy()
    for k in range(top, -1, -1):  # phases 2 and 3, from the matching bit down
        active = found & (k <= equal_level)
        step = prev + (1 << k)
        weight, _ = levels.value(k, step, seq, steps)
        go = active & (step <= size) & (rest2 > weight)
        rest2[go] -= weight[go]
        prev[go] = step[go]
        step = current + (1 << k)
        weight, weight_y = levels.value(k, step, seq, steps)
        go = active & (step <= size) & (rest3 >= weight)
        rest3[go] -= weight[go]
        current[go] = step[go]
        cw[go] += weight[go]
        cwy[go] += weight_y[go]
    return current, prev, cw, cwy


class AbsoluteError(Criterion):
    """Absolute error about the weighted median (Chapter 3): ``criterion="absolute_error"``.

    A node's statistics are ``(W, E, median)`` with ``E = sum w |y - median|``:
    its value is the median (:func:`weighted_median_and_error`), its impurity
    ``E / W``, and a split minimises the children's ``E_L + E_R``, the true
    absolute error. A median is not a sum: the statistics come from the
    samples (``summable = False``), every cut's children are computed afresh
    (``O(n log n)`` per feature, :func:`fenwick_errors`), and only the exact builders use it.

    The statistics hold one row of targets per output (``(w, y_1, ..., y_k)``
    per sample, ``(W, E, median_1, ..., median_k)`` per node, ``E`` summed over
    the outputs in their order), so the same methods serve
    :class:`MultiOutputAbsoluteError`; with one output they are the above.
    """

    name = "absolute_error"
    is_regression = True
    summable = False
    exact_builders_only = True

    def per_sample(self, y, w, n_classes=None):
        """``(w, y)``, or ``(w, y_1, ..., y_k)`` for ``y`` of shape (n_samples, k)."""
        y = y.to(torch.float64)
        return torch.cat([w[None], y.reshape(len(y), -1).T])

    @staticmethod
    def combine(per_output):
        """One ``(W, E, median)`` per output -> ``(W, E_1 + ... + E_k, median_1, ..., median_k)``.

        The errors are added in output order, as scikit-learn's ``MAE`` adds them.
        """
        error = per_output[0][1]
        for stats in per_output[1:]:
            error = error + stats[1]
        return torch.stack([per_output[0][0], error] + [stats[2] for stats in per_output])

    def node_stats(self, stats):
        every = torch.ones_like(stats[:1])  # (1, n): one row holding every sample
        per_output = []
        for y in stats[1:]:
            by_y = torch.argsort(y, stable=True)
            per_output.append(weighted_median_and_error(y[by_y], stats[0, by_y], every)[:, 0])
        return self.combine(per_output)

    def masked_children(self, stats, left_mask):
        left, right = [], []
        for y in stats[1:]:
            by_y = torch.argsort(y, stable=True)
            w, y, mask = stats[0, by_y], y[by_y], left_mask[by_y].T.to(torch.float64)
            left.append(weighted_median_and_error(y, w, mask))
            right.append(weighted_median_and_error(y, w, 1.0 - mask))
        return self.combine(left), self.combine(right)

    def ordered_children(self, sorted_stats):
        """Both children of every cut, as scikit-learn 1.9's ``MAE`` criterion rounds them.

        scikit-learn adds the samples one at a time to a Fenwick tree, in
        each feature's order (the left children) and in reverse order (the
        right ones), and reads each median and error off it
        (:func:`fenwick_errors`). Exactly tied cuts are common with the
        absolute error (unweighted, the cuts that move a pair of samples
        across both medians give the same error); scikit-learn then keeps the
        first cut whose score, as it rounds it, is largest: so do we.
        """
        _, f, n = sorted_stats.shape
        device = sorted_stats.device  # (numpy: its cumulative sums are sequential)
        w = sorted_stats[0].cpu().numpy()  # (f, n)
        lefts, rights = [], []
        for y in sorted_stats[1:].cpu().numpy():  # one output after the other
            by_y = np.argsort(y, axis=1, kind="stable")
            y_sorted = np.take_along_axis(y, by_y, 1)
            ranks = np.empty_like(by_y)
            np.put_along_axis(ranks, by_y, np.broadcast_to(np.arange(n), (f, n)), 1)
            both = fenwick_errors(  # the left children, then the right ones (in reverse order)
                np.concatenate([ranks, ranks[:, ::-1]]), np.concatenate([y_sorted, y_sorted]),
                np.concatenate([w, w[:, ::-1]]),
            )  # fmt: skip
            left = both[:, :f, :-1]  # prefixes of 1..n-1 samples
            right = both[:, f:, :-1][:, :, ::-1].copy()  # suffixes of n-1..1 samples
            right[0] = w.cumsum(1)[:, -1:] - left[0]  # scikit-learn: the node's weight minus left
            lefts.append(torch.from_numpy(left.copy()))
            rights.append(torch.from_numpy(right))
        return self.combine(lefts).to(device), self.combine(rights).to(device)

    def tie_scale(self, total):
        return torch.zeros_like(total[1])  # only exact ties: scikit-learn's rounding decides

    def impurity(self, stats):
        return stats[1] / (stats[0] * (len(stats) - 2))  # E / (W k): k outputs (W * 1 = W)

    def weight(self, stats):
        return stats[0]

    def value(self, stats):
        """The weighted median."""
        return stats[2:3].clone()

    def split_scores(self, left, right, w_left, w_right):
        # scikit-learn's proxy -W_R (E_R / (W_R k)) - W_L (E_L / (W_L k)), rounded as it rounds it
        return -(w_right * self.impurity(right)) - w_left * self.impurity(left)

    def monotonic_value(self, stats, weight):
        """The median (``weight``: the node's, or twice it for half the median)."""
        return stats[2] * (stats[0] / weight)


_ENTROPY = Entropy()
CRITERION_OBJECTS = {
    "gini": Gini(),
    "entropy": _ENTROPY,
    "log_loss": _ENTROPY,  # scikit-learn's other name for entropy
    "squared_error": SquaredError(),
    "absolute_error": AbsoluteError(),
    "poisson": Poisson(),
}


def criterion_of(criterion):
    """The :class:`Criterion` object of a name (an object is returned as it is)."""
    return criterion if isinstance(criterion, Criterion) else CRITERION_OBJECTS[criterion]


class MultiOutputClassification(Criterion):
    """One classification criterion on ``k`` outputs at once (Chapter 3).

    As scikit-learn's ``ClassificationCriterion`` with ``n_outputs > 1``: the
    statistics stack each output's block of weighted class counts (output
    ``j`` has ``n_classes[j]`` rows), a node's impurity is the mean of the
    outputs' impurities, the split score ``-(W_L imp_L + W_R imp_R)`` uses
    those means, and a node's value holds each output's class fractions,
    zero-padded to the largest number of classes: shape (n_outputs, max_n_classes).
    """

    is_regression = False

    def __init__(self, base, n_classes):
        self.base = criterion_of(base)
        self.name = self.base.name
        self.n_classes = tuple(int(c) for c in n_classes)
        ends = [sum(self.n_classes[: j + 1]) for j in range(len(self.n_classes))]
        self._bounds = list(zip([0] + ends[:-1], ends))

    def __repr__(self):
        return f"{type(self).__name__}({self.base!r}, n_classes={list(self.n_classes)})"

    def blocks(self, stats):
        """Each output's rows of ``stats``."""
        return [stats[a:b] for a, b in self._bounds]

    def per_sample(self, y, w, n_classes=None):
        """One block of class indicators per output; ``y`` has shape (n, n_outputs)."""
        columns = zip(y.T, self.n_classes)
        return torch.cat([self.base.per_sample(col, w, n) for col, n in columns])

    def impurity(self, stats):
        blocks = self.blocks(stats)
        total = self.base.impurity(blocks[0])
        for block in blocks[1:]:  # summed in output order, then divided, as scikit-learn
            total = total + self.base.impurity(block)
        return total / len(blocks)

    def weight(self, stats):
        return self.base.weight(self.blocks(stats)[0])

    def value(self, stats):
        blocks = self.blocks(stats)
        value = stats.new_zeros((len(blocks), max(self.n_classes)) + stats.shape[1:])
        for j, block in enumerate(blocks):
            value[j, : len(block)] = self.base.value(block)
        return value

    def split_scores(self, left, right, w_left, w_right):
        return -(w_left * self.impurity(left) + w_right * self.impurity(right))


class MultiOutputSquaredError(SquaredError):
    """Squared error of ``k`` outputs at once (Chapter 3), as scikit-learn's ``MSE``.

    The statistics are ``(W, S_1, ..., S_k, Q)`` with ``S_j = sum w*y_j`` and
    ``Q = sum_j sum w*y_j**2``; the impurity is the mean of the outputs'
    squared errors (:func:`multi_output_squared_error`), the split score
    scikit-learn's proxy ``sum_j S_jL**2 / W_L + sum_j S_jR**2 / W_R``, and a
    node's value has one mean per output: shape (n_outputs, 1).
    """

    def per_sample(self, y, w, n_classes=None):
        """``y`` of shape (n_samples, n_outputs)."""
        y = y.to(torch.float64)
        wy = w[:, None] * y
        return torch.cat([w[None], wy.T, sum_classes((wy * y).T)[None]])

    def impurity(self, stats):
        return multi_output_squared_error(stats)

    def value(self, stats):
        return (stats[1:-1] / stats[0]).unsqueeze(1)

    def split_scores(self, left, right, w_left, w_right):
        # the squares summed over outputs first, then divided, as scikit-learn
        return sum_classes(left[1:-1] ** 2) / w_left + sum_classes(right[1:-1] ** 2) / w_right


class MultiOutputAbsoluteError(AbsoluteError):
    """Absolute error of ``k`` outputs at once (Chapter 3), as scikit-learn's ``MAE``.

    :class:`AbsoluteError` already works output by output: a node's statistics
    are ``(W, E, median_1, ..., median_k)`` with ``E`` the outputs' absolute
    errors about their own weighted medians, summed; the impurity is the mean
    absolute deviation averaged over the outputs, ``E / (W k)``, a split
    minimises ``E_L + E_R`` (scikit-learn's proxy, rounded as it rounds it),
    and a node's value has one median per output: shape (n_outputs, 1).
    """

    def value(self, stats):
        return stats[2:].unsqueeze(1).clone()


class MultiOutputPoisson(Poisson):
    """Half Poisson deviance of ``k`` outputs at once (Chapter 3), as scikit-learn's ``Poisson``.

    The statistics are ``(W, S_1, ..., S_k, L_1, ..., L_k)`` with
    ``S_j = sum w*y_j`` and ``L_j = sum w y_j log y_j``; the impurity is the
    mean of the outputs' deviances, ``sum_j (L_j - S_j log(S_j / W)) / (W k)``
    (infinite when an output's ``S_j`` is not positive), the split score
    scikit-learn's proxy ``sum_j S_jL log(S_jL / W_L) + sum_j S_jR log(S_jR / W_R)``,
    ``-inf`` when any output of either child has no rate, and a node's value
    has one mean per output: shape (n_outputs, 1).
    """

    def per_sample(self, y, w, n_classes=None):
        """``y`` of shape (n_samples, n_outputs)."""
        y = y.to(torch.float64)
        w = w[:, None]
        return torch.cat([w.T, (w * y).T, (w * torch.special.xlogy(y, y)).T])

    @staticmethod
    def n_outputs(stats):
        return (len(stats) - 1) // 2

    def impurity(self, stats):
        k = self.n_outputs(stats)
        w, sums, logs = stats[0], stats[1 : k + 1], stats[k + 1 :]
        deviance = sum_classes(logs - torch.special.xlogy(sums, sums / w))
        no_rate = (sums <= EPSILON).any(0)
        return torch.where(no_rate, torch.inf, deviance / (w * k))

    def value(self, stats):
        k = self.n_outputs(stats)
        return (stats[1 : k + 1] / stats[0]).unsqueeze(1)

    def split_scores(self, left, right, w_left, w_right):
        # scikit-learn's proxy, summed over the outputs (left, then right); -inf: an
        # output of a child without rate (the bar of Poisson.split_scores, per output)
        k = self.n_outputs(left)
        s_left, s_right = left[1 : k + 1], right[1 : k + 1]
        scores = sum_classes(s_left * torch.log(s_left / w_left)) + sum_classes(
            s_right * torch.log(s_right / w_right)
        )
        bar = ((s_left + s_right) * POISSON_RTOL).clamp(min=EPSILON)
        rate = ((s_left > bar) & (s_right > bar)).all(0)
        return torch.where(rate, scores, -torch.inf)

    def tie_scale(self, total):
        k = self.n_outputs(total)
        w, wy = total[0], total[1 : k + 1]
        return sum_classes(wy * (1.0 + torch.log(wy / w).abs()))


# Regression criteria that take y of shape (n_samples, n_outputs) (Chapter 3), by name;
# the classification criteria take it through MultiOutputClassification.
MULTI_OUTPUT_REGRESSION = {
    "squared_error": MultiOutputSquaredError(),
    "absolute_error": MultiOutputAbsoluteError(),
    "poisson": MultiOutputPoisson(),
}


def node_weight(stats, criterion):
    """Total sample weight of the node(s) described by ``stats``."""
    return criterion_of(criterion).weight(stats)


def node_sums(stats):
    """The sums of a node's per-sample statistics, added one sample after another.

    Introduced in Chapter 3. scikit-learn's criterion adds its samples in a
    loop, in their order; a pairwise sum (``stats.sum(1)``) can round
    differently. For ``y = np.linspace(-2, 2, 10)`` the loop gives exactly 0
    (so a root that cannot split predicts 0.0), the pairwise sum -8.9e-16.
    On the CPU ``cumsum`` adds in order; its last column is the loop's sum.
    """
    return stats.cumsum(1)[:, -1]


def target_stats(y, sample_weight, criterion, n_classes=None):
    """Per-sample statistics whose sums over a node feed the impurity functions.

    ``y`` holds encoded classes ``0..n_classes-1`` (classification) or real
    targets (regression); the result is float64 of shape ``(n_stats, n_samples)``:
    one column per sample, so ``stats.sum(1)`` describes the node.
    """
    return criterion_of(criterion).per_sample(y, sample_weight.to(torch.float64), n_classes)


def leaf_value(stats, criterion):
    """What a node predicts: class fractions, or the weighted mean target."""
    return criterion_of(criterion).value(stats)
