"""Impurity functions: how mixed is a node?

Introduced in Chapter 1 (``notebooks/01_decision_stump``); entropy is the
subject of Chapter 4 and squared error of Chapter 3.

Every function takes a tensor of *node statistics* whose first axis describes
one node, so the same call scores one node, a row of candidate splits, or a
whole grid of them at once:

- classification: weighted class counts, shape ``(n_classes, ...)``;
- regression: the moments ``(sum w, sum w*y, sum w*y**2)``, shape ``(3, ...)``.
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


CRITERIA = {
    "gini": gini,
    "entropy": entropy,
    "log_loss": entropy,
    "squared_error": squared_error,
}
CLASSIFICATION_CRITERIA = ("gini", "entropy", "log_loss")
REGRESSION_CRITERIA = ("squared_error",)


def node_weight(stats, criterion):
    """Total sample weight of the node(s) described by ``stats``."""
    if criterion in REGRESSION_CRITERIA:
        return stats[0]
    return sum_classes(stats)


def target_stats(y, sample_weight, criterion, n_classes=None):
    """Per-sample statistics whose sums over a node feed the impurity functions.

    ``y`` holds encoded classes ``0..n_classes-1`` (classification) or real
    targets (regression); the result is float64 of shape ``(n_stats, n_samples)``:
    one column per sample, so ``stats.sum(1)`` describes the node.
    """
    w = sample_weight.to(torch.float64)
    if criterion in REGRESSION_CRITERIA:
        y = y.to(torch.float64)
        return torch.stack([w, w * y, w * y * y])
    stats = torch.zeros(n_classes, len(y), dtype=torch.float64, device=y.device)
    stats[y, torch.arange(len(y), device=y.device)] = w
    return stats


def leaf_value(stats, criterion):
    """What a node predicts: class fractions, or the weighted mean target."""
    if criterion in REGRESSION_CRITERIA:
        return stats[1:2] / stats[0]
    return stats / stats.sum(0)
