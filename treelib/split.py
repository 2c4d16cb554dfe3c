"""The split search: the one core shared by the stump, the trees, the forest and boosting.

Introduced in Chapter 1 (``notebooks/01_decision_stump``).

For every feature we sort the node's samples once; a cumulative sum of the
per-sample statistics then gives the statistics of the left child for *every*
candidate threshold at once, and the right child is the total minus the left.
Every rule it applies (which candidates are allowed, which one wins and how
ties break, where a sample goes) is written once, in :mod:`treelib.rules`
(the search only lays the candidates out);
Chapter 1 states them and ``tests/test_split.py`` checks them by hand. A node
with NaN also tries every threshold with its missing samples on either side
(Chapter 6), and a monotonic constraint rejects splits whose children's values
are out of order (Chapter 6). The tie rule: scores closer than ``TIE_RTOL``
times the node's scale are ties, and the candidate searched first wins - the
first feature in the node's order, then the smallest threshold (with NaN, first
the candidates with the NaN on the right, then the NaN alone, then the NaN on
the left).
"""

from functools import partial
from typing import NamedTuple

import torch

from .criteria import criterion_of, node_weight
from .rules import (  # noqa: F401  (the rules' names stay importable from here, as in Chapter 1)
    FEATURE_THRESHOLD,
    TIE_RTOL,
    big_enough,
    bigger_child_is_left,
    distinct,
    goes_left,
    heavy_enough,
    is_constant,
    is_tie_or_best,
    midpoint,
    midpoints,
    monotonic_allows,
    monotonic_ok,
    tie_tolerance,
    weighted_decrease,
)


class Split(NamedTuple):
    """The best split of a node. Introduced in Chapter 1."""

    feature: int
    threshold: float
    improvement: float  # weighted impurity decrease, scaled by the node's share of the root weight
    impurity: float
    impurity_left: float
    impurity_right: float
    categorical: bool = False  # True: ``x == threshold`` goes left (one-vs-rest)
    missing_left: bool = False  # True: a NaN goes left (Chapter 6)
    middle: float = float("nan")  # mean of the children's values: a monotonic tree's bound


class Candidate(NamedTuple):
    """The best split found on one feature (or one group of features)."""

    score: float
    rank: int  # position of the feature in the search order: the lower wins a tie
    feature: int
    threshold: float
    left: torch.Tensor  # statistics of the left child
    categorical: bool = False
    missing_left: bool = False
    right: torch.Tensor = None  # statistics of the right child (None: the total minus left)


def split_scores(left, right, w_left, w_right, criterion):
    """Score every candidate split; higher is better.

    The criterion object decides (:class:`treelib.criteria.Criterion`):
    classification minimises the children's weighted impurity
    ``w_L * imp_L + w_R * imp_R``; squared error ranks with scikit-learn's
    equivalent proxy ``S_L**2 / w_L + S_R**2 / w_R`` (``S`` = sum of ``w*y``),
    which orders the candidates the same way but rounds like scikit-learn does,
    so near-ties resolve to the same winner.
    """
    return criterion_of(criterion).split_scores(left, right, w_left, w_right)


def split_values(stats, weight, criterion):
    """The value a monotonic constraint reads from node statistics (Chapter 6).

    The mean target, or the fraction of class 0 (scikit-learn constrains a
    binary classifier through class 0, with the user's constraint flipped).
    """
    return criterion_of(criterion).monotonic_value(stats, weight)


def monotonic_mask(left, right, w_left, w_right, criterion, monotonic):
    """Which candidate splits the monotonic constraints allow (Chapter 6).

    ``left``/``right`` are the children's statistics and ``w_*`` their
    weights; ``monotonic`` is ``(constraint, lower, upper)``, broadcast
    against the candidates (:func:`treelib.rules.monotonic_allows` on the
    children's :func:`split_values`). Every builder's search calls this.
    """
    value_left = split_values(left, w_left, criterion)
    value_right = split_values(right, w_right, criterion)
    return monotonic_allows(value_left, value_right, *monotonic)


def middle_value(left, right, w_left, w_right, criterion):
    """scikit-learn's ``Criterion.middle_value``: the children's values, halved, summed.

    The bound a monotonic constraint puts between a split's children
    (:func:`treelib.rules.child_bounds`; Chapter 6). For one split or many.
    """
    return split_values(left, 2 * w_left, criterion) + split_values(right, 2 * w_right, criterion)


def candidate_mask(sorted_x, w_left, w_right, min_samples_leaf, min_weight_leaf):
    """Which positions between sorted samples are allowed split points.

    ``sorted_x`` has one row per feature; position ``i`` puts the ``i + 1``
    smallest samples on the left.
    """
    n = sorted_x.shape[1]
    n_left = torch.arange(1, n, device=sorted_x.device)
    return (
        distinct(sorted_x[:, :-1], sorted_x[:, 1:])  # float32, as sklearn
        & big_enough(n_left, n - n_left, min_samples_leaf)
        & heavy_enough(w_left, w_right, min_weight_leaf)
    )


def missing_value_mask(sorted_x, limits):
    """Which candidates of :func:`missing_value_candidates` are allowed (Chapter 6).

    Without the weight and monotonic rules. Returns the mask (f, 2n-1), and
    the numbers of NaN and of known values per feature.
    """
    f, n = sorted_x.shape
    n_missing = sorted_x.isnan().sum(1)  # (f,)
    n_known = n - n_missing
    positions = torch.arange(1, n, device=sorted_x.device)  # samples left of a threshold
    between = distinct(sorted_x[:, :-1], sorted_x[:, 1:])  # (f, n-1): never next to a NaN
    has_missing = (n_missing > 0)[:, None]
    n_left = torch.cat(
        [positions.expand(f, -1), n_known[:, None], positions + n_missing[:, None]], 1
    )
    allowed = torch.cat([between, has_missing & (n_known > 0)[:, None], between & has_missing], 1)
    allowed &= big_enough(n_left, n - n_left, limits[0])
    return allowed, n_missing, n_known


def missing_value_candidates(sorted_x, cumulative, total, limits):
    """Every candidate of features with NaN: the missing samples on either side (Chapter 6).

    ``sorted_x`` (f, n) holds each feature's values sorted with NaN last and
    ``cumulative`` (n_stats, f, n) the cumulative sums of their statistics.
    As scikit-learn 1.9's splitter, the candidates come in three blocks, in
    the order that breaks ties: every threshold with the NaN on the right;
    all non-missing values left and the NaN alone on the right (threshold
    ``inf``); every threshold with the NaN on the left. Returns the left
    statistics (n_stats, f, 2n-1), the allowed mask (f, 2n-1) without the
    weight and monotonic rules, and the number of NaN per feature.
    """
    f = sorted_x.shape[0]
    allowed, n_missing, n_known = missing_value_mask(sorted_x, limits)
    left = cumulative[:, :, :-1]
    known = torch.cat([torch.zeros_like(cumulative[:, :, :1]), cumulative], 2)
    known = known.gather(2, n_known.view(1, f, 1).expand(len(left), f, 1))  # (n_stats, f, 1)
    missing = total[:, None, None] - known  # the NaN samples' statistics
    return torch.cat([left, known, left + missing], 2), allowed, n_missing


def missing_value_children(sorted_x, order, stats, criterion, limits):
    """:func:`missing_value_candidates` for a criterion that is not a sum (a median).

    The same three blocks, each child computed from its samples: the cuts of
    each feature's order with NaN last (the first two blocks), then those of
    the order with NaN first (the third). Returns the left and right
    statistics (n_stats, f, 2n-1), the allowed mask and the number of NaN.
    """
    f, n = sorted_x.shape
    allowed, n_missing, n_known = missing_value_mask(sorted_x, limits)
    children = criterion_of(criterion).ordered_children
    nan_last = children(stats[:, order])
    rotate = (torch.arange(n, device=order.device)[None, :] + n_known[:, None]) % n
    nan_first = children(stats[:, order.gather(1, rotate)])
    alone = (n_known - 1).clamp(0, n - 2)[:, None]  # the cut after every known value
    with_nan = (torch.arange(n - 1, device=order.device) + n_missing[:, None]).clamp(max=n - 2)

    def blocks(last, first):
        take = partial(torch.Tensor.gather, dim=2)
        k = len(last)
        return torch.cat(
            [last, take(last, index=alone.expand(k, f, 1)),
             take(first, index=with_nan.expand(k, f, n - 1))], 2,
        )  # fmt: skip

    return blocks(nan_last[0], nan_first[0]), blocks(nan_last[1], nan_first[1]), allowed, n_missing


def best_ordinal_candidate(X, stats, total, features, criterion, limits, monotonic=None):
    """The best ``x <= t`` split over ``features``, all searched at once.

    Sort each feature once; a cumulative sum of the sorted statistics is the
    left child of every candidate threshold, and the right child is the total
    minus the left. With NaN in the node, each threshold is tried with the
    missing samples on either side (:func:`missing_value_candidates`).
    ``monotonic``: ``(constraints, lower, upper)``, a constraint per feature.
    """
    n = X.shape[0]
    summable = criterion_of(criterion).summable
    if not summable:  # (a median costs more than a sum: search no constant feature)
        columns = X[:, features]
        missing = columns.isnan()
        low = torch.where(missing, torch.inf, columns).amin(0)
        high = torch.where(missing, -torch.inf, columns).amax(0)
        constant = is_constant(low, high, missing.any(0), missing.all(0)).tolist()
        features = [f for f, c in zip(features, constant) if not c]
        if not features:
            return None
    sorted_x, order = torch.sort(X[:, features].T, dim=1)  # (f, n): one sort per feature
    with_nan = bool(sorted_x[:, -1].isnan().any())  # NaN sorts last
    if with_nan and summable:
        cumulative = stats[:, order].cumsum(2)
        left, allowed, n_missing = missing_value_candidates(sorted_x, cumulative, total, limits)
        right = total[:, None, None] - left
    elif with_nan:  # (a median: each child from its samples)
        left, right, allowed, n_missing = missing_value_children(
            sorted_x, order, stats, criterion, limits
        )
    else:  # (n_stats, f, n-1): every left child (a cumulative sum), every right child
        left, right = criterion_of(criterion).ordered_children(stats[:, order])
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)
    if with_nan:
        allowed &= heavy_enough(w_left, w_right, limits[1])
    else:
        allowed = candidate_mask(sorted_x, w_left, w_right, *limits)
    if monotonic is not None:
        constraint, lower, upper = monotonic
        monotonic = (constraint[features][:, None], lower, upper)
        allowed &= monotonic_mask(left, right, w_left, w_right, criterion, monotonic)
    scores = torch.where(allowed, scores, float("-inf"))
    best = scores.max()
    if best == float("-inf"):
        return None
    # argmax returns the first True: the first feature in `features` order that
    # ties with the best, then its first candidate in search order
    tied = is_tie_or_best(scores, best, tie_tolerance(total, criterion))
    j, col = divmod(int(torch.argmax(tied.reshape(-1).to(torch.uint8))), scores.shape[1])
    if col == n - 1:  # (only with NaN) every known value left, the NaN alone on the right
        threshold, missing_left = float("inf"), False
    else:
        pos = col - n if col >= n else col  # the threshold follows the pos+1 smallest values
        threshold = midpoint(float(sorted_x[j, pos]), float(sorted_x[j, pos + 1]))
        if with_nan and int(n_missing[j]) > 0:
            missing_left = col >= n
        else:  # no NaN seen here: a NaN will follow the child with more samples
            missing_left = bigger_child_is_left(pos + 1, n - pos - 1)
    return Candidate(
        float(scores[j, col]), j, features[j], threshold, left[:, j, col],
        missing_left=missing_left, right=None if summable else right[:, j, col],
    )  # fmt: skip


def best_categorical_candidate(x, stats, total, criterion, limits):
    """The best one-vs-rest split ``x == c`` of a categorical feature column ``x``.

    Introduced in Chapter 6. Each category's statistics are one ``index_add_``
    away; the right child is everything else. (A median is no sum: the
    absolute error computes both children from their samples.)
    """
    min_samples_leaf, min_weight_leaf = limits
    categories, codes = torch.unique(x, return_inverse=True)
    right = None
    if criterion_of(criterion).summable:
        left = torch.zeros(stats.shape[0], len(categories), dtype=stats.dtype, device=stats.device)
        left.index_add_(1, codes, stats)
        right = total[:, None] - left
    else:
        one_hot = codes[:, None] == torch.arange(len(categories), device=codes.device)
        left, right = criterion_of(criterion).masked_children(stats, one_hot)
    n_left = torch.bincount(codes, minlength=len(categories))
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)
    allowed = big_enough(n_left, len(x) - n_left, min_samples_leaf)
    allowed &= heavy_enough(w_left, w_right, min_weight_leaf)
    scores = torch.where(allowed, scores, float("-inf"))
    best = scores.max()
    if best == float("-inf"):
        return None
    tied = is_tie_or_best(scores, best, tie_tolerance(total, criterion))
    c = int(torch.argmax(tied.to(torch.uint8)))  # ties: the smallest category
    return float(scores[c]), float(categories[c]), left[:, c], right[:, c]


def best_split(
    X,
    stats,
    criterion,
    *,
    features=None,
    categorical=(),
    min_samples_leaf=1,
    min_weight_leaf=0.0,
    root_weight=None,
    monotonic=None,
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
    categorical : collection of int, default=()
        Features split one-vs-rest (``x == c`` goes left) instead of ``x <= t``.
    min_samples_leaf : int
        Minimum (unweighted) number of samples in each child.
    min_weight_leaf : float
        Minimum total sample weight in each child.
    root_weight : float, optional
        Weight of the tree's root; the improvement is scaled by
        ``node_weight / root_weight`` as scikit-learn does. Default: this node's.
    monotonic : tuple, optional
        ``(constraints, lower, upper)``: a float64 tensor with -1, 0 or +1 per
        feature (of the value :func:`split_values` reads) and the node's bounds;
        a split on a constrained feature must keep both children's values in
        the bounds and in order (Chapter 6).

    Returns
    -------
    Split or None
    """
    features = list(range(X.shape[1])) if features is None else [int(f) for f in features]
    if X.shape[0] < 2 or not features:
        return None
    total = criterion_of(criterion).node_stats(stats)
    limits = (min_samples_leaf, min_weight_leaf)
    ordinal = [f for f in features if f not in categorical]
    candidates = []
    if ordinal:
        best = best_ordinal_candidate(X, stats, total, ordinal, criterion, limits, monotonic)
        candidates += [best._replace(rank=features.index(best.feature))] if best else []
    for rank, f in enumerate(features):
        found = f in categorical and best_categorical_candidate(
            X[:, f], stats, total, criterion, limits
        )
        if found:
            right = None if criterion_of(criterion).summable else found[3]
            candidates.append(
                Candidate(found[0], rank, f, found[1], found[2], categorical=True, right=right)
            )
    if not candidates:
        return None
    scores = torch.tensor([c.score for c in candidates], dtype=torch.float64)
    tied = is_tie_or_best(scores, scores.max(), tie_tolerance(total.cpu(), criterion))
    best = min((c for c, t in zip(candidates, tied.tolist()) if t), key=lambda c: c.rank)
    return make_split(best, total, criterion, root_weight)


def make_split(best, total, criterion, root_weight=None):
    """Turn the winning candidate into a :class:`Split` with scikit-learn's improvement."""
    impurity = criterion_of(criterion).impurity
    right = total - best.left if best.right is None else best.right
    imp, imp_l, imp_r = float(impurity(total)), float(impurity(best.left)), float(impurity(right))
    w = float(node_weight(total, criterion))
    wl, wr = float(node_weight(best.left, criterion)), float(node_weight(right, criterion))
    root_weight = w if root_weight is None else root_weight
    improvement = weighted_decrease(w, root_weight, imp, wl, imp_l, wr, imp_r)
    # scikit-learn's Criterion.middle_value: the children's values, halved, summed
    middle = float(middle_value(best.left, right, wl, wr, criterion))
    return Split(
        best.feature, best.threshold, improvement, imp, imp_l, imp_r, best.categorical,
        best.missing_left, middle,
    )  # fmt: skip
