"""The split search: the one core shared by the stump, the trees, the forest and boosting.

Introduced in Chapter 1 (``notebooks/01_decision_stump``).

For every feature we sort the node's samples once; a cumulative sum of the
per-sample statistics then gives the statistics of the left child for *every*
candidate threshold at once, and the right child is the total minus the left.
The rules follow scikit-learn exactly (see ``../shared/GUIDE.md``):

- a candidate sits between consecutive sorted values that differ by more than
  ``FEATURE_THRESHOLD`` (compared in float32, as scikit-learn does);
- the threshold is ``a/2 + b/2`` (or ``a`` if that rounds up to ``b``) and
  samples with ``x <= threshold`` go left;
- a candidate whose children have fewer than ``min_samples_leaf`` samples or
  less than ``min_weight_leaf`` weight is rejected;
- the winner is the first best candidate, scanning features in the given order
  and thresholds from small to large.
"""

from typing import NamedTuple

import torch

from .criteria import CRITERIA, REGRESSION_CRITERIA, node_weight

FEATURE_THRESHOLD = 1e-7


class Split(NamedTuple):
    """The best split of a node. Introduced in Chapter 1."""

    feature: int
    threshold: float
    improvement: float  # weighted impurity decrease, scaled by the node's share of the root weight
    impurity: float
    impurity_left: float
    impurity_right: float


def split_scores(left, right, w_left, w_right, criterion):
    """Score every candidate split; higher is better.

    Classification minimises the children's weighted impurity
    ``w_L * imp_L + w_R * imp_R``. For squared error we rank with scikit-learn's
    equivalent proxy ``S_L**2 / w_L + S_R**2 / w_R`` (``S`` = sum of ``w*y``): it
    orders the candidates the same way but rounds like scikit-learn does, so
    near-ties resolve to the same winner.
    """
    if criterion in REGRESSION_CRITERIA:
        return left[1] ** 2 / w_left + right[1] ** 2 / w_right
    impurity = CRITERIA[criterion]
    return -(w_left * impurity(left) + w_right * impurity(right))


def candidate_mask(sorted_x, w_left, w_right, min_samples_leaf, min_weight_leaf):
    """Which positions between sorted samples are allowed split points.

    ``sorted_x`` has one row per feature; position ``i`` puts the ``i + 1``
    smallest samples on the left.
    """
    n = sorted_x.shape[1]
    distinct = sorted_x[:, 1:] > sorted_x[:, :-1] + FEATURE_THRESHOLD  # float32, as sklearn
    n_left = torch.arange(1, n, device=sorted_x.device)
    big_enough = (n_left >= min_samples_leaf) & (n - n_left >= min_samples_leaf)
    heavy_enough = (w_left >= min_weight_leaf) & (w_right >= min_weight_leaf)
    return distinct & big_enough & heavy_enough


def midpoint(a, b):
    """scikit-learn's threshold between two sorted values ``a < b``."""
    t = a / 2.0 + b / 2.0
    return a if t == b or abs(t) == float("inf") else t


def best_split(
    X,
    stats,
    criterion,
    *,
    features=None,
    min_samples_leaf=1,
    min_weight_leaf=0.0,
    root_weight=None,
):
    """Find the best split of one node, or ``None`` if no candidate is allowed.

    Parameters
    ----------
    X : float32 tensor of shape (n_samples, n_features)
        The node's samples.
    stats : float64 tensor of shape (n_stats, n_samples)
        Per-sample target statistics (see :func:`treelib.criteria.target_stats`).
    criterion : str
        ``"gini"``, ``"entropy"``/``"log_loss"`` or ``"squared_error"``.
    features : sequence of int, optional
        Features to search, in the order that breaks ties. Default: all, in order.
    min_samples_leaf : int
        Minimum (unweighted) number of samples in each child.
    min_weight_leaf : float
        Minimum total sample weight in each child.
    root_weight : float, optional
        Weight of the tree's root; the improvement is scaled by
        ``node_weight / root_weight`` as scikit-learn does. Default: this node's.

    Returns
    -------
    Split or None
    """
    n = X.shape[0]
    features = list(range(X.shape[1])) if features is None else list(features)
    if n < 2 or not features:
        return None
    sorted_x, order = torch.sort(X[:, features].T, dim=1)  # (f, n): one sort per feature
    left = stats[:, order].cumsum(2)[:, :, :-1]  # (n_stats, f, n-1): every left child
    total = stats.sum(1)
    right = total[:, None, None] - left
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)

    scores = split_scores(left, right, w_left, w_right, criterion)
    allowed = candidate_mask(sorted_x, w_left, w_right, min_samples_leaf, min_weight_leaf)
    scores = torch.where(allowed, scores, float("-inf"))
    # argmax returns the first maximum: the first feature in `features` order,
    # then the smallest threshold
    j, pos = divmod(int(torch.argmax(scores)), n - 1)
    if not bool(allowed[j, pos]):
        return None

    impurity = CRITERIA[criterion]
    imp = float(impurity(total))
    imp_l, imp_r = float(impurity(left[:, j, pos])), float(impurity(right[:, j, pos]))
    w = float(node_weight(total, criterion))
    wl, wr = float(w_left[j, pos]), float(w_right[j, pos])
    root_weight = w if root_weight is None else root_weight
    improvement = (w / root_weight) * (imp - wr / w * imp_r - wl / w * imp_l)
    threshold = midpoint(float(sorted_x[j, pos]), float(sorted_x[j, pos + 1]))
    return Split(features[j], threshold, improvement, imp, imp_l, imp_r)
