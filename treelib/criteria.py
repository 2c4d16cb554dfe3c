"""Impurity functions: how mixed is a node?

Introduced in Chapter 1 (``notebooks/01_decision_stump``); entropy is the
subject of Chapter 4 and squared error of Chapter 3.

Every function takes a tensor of *node statistics* whose first axis describes
one node, so the same call scores one node, a row of candidate splits, or a
whole grid of them at once:

- classification: weighted class counts, shape ``(n_classes, ...)``;
- regression: the moments ``(sum w, sum w*y, sum w*y**2)``, shape ``(3, ...)``.

With several outputs (multi-output ``y``, Chapter 5) the statistics stack the
outputs: one block of class counts per output (:class:`MultiOutputClassification`),
or ``(sum w, sum w*y_1, ..., sum w*y_k, sum_j sum w*y_j**2)`` for squared error.
"""

import math

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

    Introduced with multi-output trees (Chapter 5), as scikit-learn's
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
REGRESSION_CRITERIA = ("squared_error",)


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

    def __repr__(self):
        return f"{type(self).__name__}()"

    def per_sample(self, y, w, n_classes=None):
        """Per-sample statistics ``(n_stats, n_samples)``: their sum describes a node."""
        stats = torch.zeros(n_classes, len(y), dtype=torch.float64, device=y.device)
        stats[y, torch.arange(len(y), device=y.device)] = w
        return stats

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


_ENTROPY = Entropy()
CRITERION_OBJECTS = {
    "gini": Gini(),
    "entropy": _ENTROPY,
    "log_loss": _ENTROPY,  # scikit-learn's other name for entropy
    "squared_error": SquaredError(),
}


def criterion_of(criterion):
    """The :class:`Criterion` object of a name (an object is returned as it is)."""
    return criterion if isinstance(criterion, Criterion) else CRITERION_OBJECTS[criterion]


class MultiOutputClassification(Criterion):
    """One classification criterion on ``k`` outputs at once (Chapter 5).

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
    """Squared error of ``k`` outputs at once (Chapter 5), as scikit-learn's ``MSE``.

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


# Regression criteria that take y of shape (n_samples, n_outputs) (Chapter 5), by name;
# the classification criteria take it through MultiOutputClassification.
MULTI_OUTPUT_REGRESSION = {"squared_error": MultiOutputSquaredError()}


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
