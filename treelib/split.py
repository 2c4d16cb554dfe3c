"""The split search: the one core shared by the stump, the trees, the forest and boosting.

Introduced in Chapter 1 (``notebooks/01_decision_stump``).

For every feature we sort the node's samples once; a cumulative sum of the
per-sample statistics then gives the statistics of the left child for *every*
candidate threshold at once, and the right child is the total minus the left.
The rules are scikit-learn's (its Cython splitter and criterion modules; Chapter 1
states them and ``tests/test_split.py`` checks them by hand):

- a candidate sits between consecutive sorted values that differ by more than
  ``FEATURE_THRESHOLD`` (compared in float32, as scikit-learn does);
- the threshold is ``a/2 + b/2`` (or ``a`` if that rounds up to ``b``) and
  samples with ``x <= threshold`` go left;
- a candidate whose children have fewer than ``min_samples_leaf`` samples or
  less than ``min_weight_leaf`` weight is rejected;
- the winner is the best candidate; *ties* go to the feature searched first,
  then to the smallest threshold. (scikit-learn visits the features in a
  random order, so between *features* its tie-break depends on the seed; only the
  smallest-threshold rule within a feature is the same.)

What counts as a tie is defined here once, for every builder
(:func:`tie_tolerance`, :func:`is_tie_or_best`): scores that differ by less
than ``TIE_RTOL`` times the node's scale. Mathematically equal scores come out
of different summation orders (one sort per node, one cumulative sum per level,
histograms) a few ulps apart, and without a tolerance rounding would pick the
winner, differently in each builder. The tolerance is far above rounding on
ordinary data and far below the gaps between genuinely different scores, so on
tie-free data the strictly better candidate still wins, as in scikit-learn.
(On very large nodes with real-valued targets, rounding can in principle reach
the tolerance, or two different scores fall within it; then builders may still
disagree on that one near-tie.)
"""

from typing import NamedTuple

import torch

from .criteria import CRITERIA, REGRESSION_CRITERIA, gini_of_weighted, node_weight

FEATURE_THRESHOLD = 1e-7
TIE_RTOL = 1e-12  # scores closer than this, relative to the node's scale, are ties


class Split(NamedTuple):
    """The best split of a node. Introduced in Chapter 1."""

    feature: int
    threshold: float
    improvement: float  # weighted impurity decrease, scaled by the node's share of the root weight
    impurity: float
    impurity_left: float
    impurity_right: float
    categorical: bool = False  # True: ``x == threshold`` goes left (one-vs-rest)


class Candidate(NamedTuple):
    """The best split found on one feature (or one group of features)."""

    score: float
    rank: int  # position of the feature in the search order: the lower wins a tie
    feature: int
    threshold: float
    left: torch.Tensor  # statistics of the left child
    categorical: bool = False


def goes_left(x, threshold, categorical=False):
    """Which samples of feature column ``x`` a split sends left."""
    x = x.double()  # compare in float64, as scikit-learn does
    return x == threshold if categorical else x <= threshold


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
    if criterion == "gini":  # the children's weights are known: no second sum
        return -(
            w_right * gini_of_weighted(right, w_right) + w_left * gini_of_weighted(left, w_left)
        )
    impurity = CRITERIA[criterion]
    return -(w_left * impurity(left) + w_right * impurity(right))


def tie_tolerance(total, criterion):
    """How far below a node's best score a candidate still ties with it.

    Introduced in Chapter 7 (one tie rule in every builder).

    Parameters
    ----------
    total : float64 tensor of shape (n_stats,) or (n_stats, n_nodes)
        The node's (or each node's) summed statistics.
    criterion : str
        The split criterion.

    Returns
    -------
    tensor of shape () or (n_nodes,)
        ``TIE_RTOL`` times a bound on the node's scores: its weight for
        classification (``W * impurity``), ``sum w*y**2`` for squared error
        (the proxy ``S_L**2/W_L + S_R**2/W_R`` never exceeds it). Rounding
        errors are relative to that bound, not to the score itself.
    """
    scale = total[-1] if criterion in REGRESSION_CRITERIA else node_weight(total, criterion)
    return TIE_RTOL * scale.abs()


def is_tie_or_best(scores, best, tol):
    """Which ``scores`` are the best or tie with it (``best - tol`` or more).

    Introduced in Chapter 7. ``best`` is the largest score and ``tol`` comes
    from :func:`tie_tolerance` (both broadcast against ``scores``); ``-inf``
    (not a candidate) never qualifies. The caller then takes the first such
    candidate in search order: the lowest feature rank, then the smallest
    threshold.
    """
    return (scores >= best - tol) & (scores > float("-inf"))


def heavy_enough(w_left, w_right, min_weight_leaf):
    """Do both children weigh at least ``min_weight_leaf``, and more than zero?

    Introduced in Chapter 1. A child's weight is the node's minus the other
    child's, so it rounds to zero where tiny sample weights sit beside large
    ones (``1e-20`` beside ``1``). Such a split's score is ``0/0``, NaN, which
    scikit-learn's comparisons never pick; here it would win every maximum.
    """
    lightest = torch.minimum(w_left, w_right)
    if min_weight_leaf > 0:
        return lightest >= min_weight_leaf
    return lightest > 0


def candidate_mask(sorted_x, w_left, w_right, min_samples_leaf, min_weight_leaf):
    """Which positions between sorted samples are allowed split points.

    ``sorted_x`` has one row per feature; position ``i`` puts the ``i + 1``
    smallest samples on the left.
    """
    n = sorted_x.shape[1]
    distinct = sorted_x[:, 1:] > sorted_x[:, :-1] + FEATURE_THRESHOLD  # float32, as sklearn
    n_left = torch.arange(1, n, device=sorted_x.device)
    big_enough = (n_left >= min_samples_leaf) & (n - n_left >= min_samples_leaf)
    return distinct & big_enough & heavy_enough(w_left, w_right, min_weight_leaf)


def midpoint(a, b):
    """scikit-learn's threshold between two sorted values ``a < b``."""
    t = a / 2.0 + b / 2.0
    return a if t == b or abs(t) == float("inf") else t


def midpoints(a, b):
    """:func:`midpoint` of float64 tensors, element by element (the level-wise builders)."""
    t = a / 2 + b / 2
    return torch.where((t == b) | t.isinf(), a, t)


def best_ordinal_candidate(X, stats, total, features, criterion, limits):
    """The best ``x <= t`` split over ``features``, all searched at once.

    Sort each feature once; a cumulative sum of the sorted statistics is the
    left child of every candidate threshold, and the right child is the total
    minus the left.
    """
    n = X.shape[0]
    sorted_x, order = torch.sort(X[:, features].T, dim=1)  # (f, n): one sort per feature
    left = stats[:, order].cumsum(2)[:, :, :-1]  # (n_stats, f, n-1): every left child
    right = total[:, None, None] - left
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)
    allowed = candidate_mask(sorted_x, w_left, w_right, *limits)
    scores = torch.where(allowed, scores, float("-inf"))
    best = scores.max()
    if best == float("-inf"):
        return None
    # argmax returns the first True: the first feature in `features` order that
    # ties with the best, then its smallest threshold
    tied = is_tie_or_best(scores, best, tie_tolerance(total, criterion))
    j, pos = divmod(int(torch.argmax(tied.reshape(-1).to(torch.uint8))), n - 1)
    threshold = midpoint(float(sorted_x[j, pos]), float(sorted_x[j, pos + 1]))
    return Candidate(float(scores[j, pos]), j, features[j], threshold, left[:, j, pos])


def best_categorical_candidate(x, stats, total, criterion, limits):
    """The best one-vs-rest split ``x == c`` of a categorical feature column ``x``.

    Introduced in Chapter 6. Each category's statistics are one ``index_add_``
    away; the right child is everything else.
    """
    min_samples_leaf, min_weight_leaf = limits
    categories, codes = torch.unique(x, return_inverse=True)
    left = torch.zeros(stats.shape[0], len(categories), dtype=stats.dtype, device=stats.device)
    left.index_add_(1, codes, stats)
    right = total[:, None] - left
    n_left = torch.bincount(codes, minlength=len(categories))
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    scores = split_scores(left, right, w_left, w_right, criterion)
    allowed = (n_left >= min_samples_leaf) & (len(x) - n_left >= min_samples_leaf)
    allowed &= heavy_enough(w_left, w_right, min_weight_leaf)
    scores = torch.where(allowed, scores, float("-inf"))
    best = scores.max()
    if best == float("-inf"):
        return None
    tied = is_tie_or_best(scores, best, tie_tolerance(total, criterion))
    c = int(torch.argmax(tied.to(torch.uint8)))  # ties: the smallest category
    return float(scores[c]), float(categories[c]), left[:, c]


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

    Returns
    -------
    Split or None
    """
    features = list(range(X.shape[1])) if features is None else [int(f) for f in features]
    if X.shape[0] < 2 or not features:
        return None
    total = stats.sum(1)
    limits = (min_samples_leaf, min_weight_leaf)
    ordinal = [f for f in features if f not in categorical]
    candidates = []
    if ordinal:
        best = best_ordinal_candidate(X, stats, total, ordinal, criterion, limits)
        candidates += [best._replace(rank=features.index(best.feature))] if best else []
    for rank, f in enumerate(features):
        found = f in categorical and best_categorical_candidate(
            X[:, f], stats, total, criterion, limits
        )
        if found:
            candidates.append(Candidate(found[0], rank, f, found[1], found[2], categorical=True))
    if not candidates:
        return None
    scores = torch.tensor([c.score for c in candidates], dtype=torch.float64)
    tied = is_tie_or_best(scores, scores.max(), tie_tolerance(total.cpu(), criterion))
    best = min((c for c, t in zip(candidates, tied.tolist()) if t), key=lambda c: c.rank)
    return make_split(best, total, criterion, root_weight)


def make_split(best, total, criterion, root_weight=None):
    """Turn the winning candidate into a :class:`Split` with scikit-learn's improvement."""
    impurity = CRITERIA[criterion]
    right = total - best.left
    imp, imp_l, imp_r = float(impurity(total)), float(impurity(best.left)), float(impurity(right))
    w = float(node_weight(total, criterion))
    wl, wr = float(node_weight(best.left, criterion)), float(node_weight(right, criterion))
    root_weight = w if root_weight is None else root_weight
    improvement = (w / root_weight) * (imp - wr / w * imp_r - wl / w * imp_l)
    return Split(best.feature, best.threshold, improvement, imp, imp_l, imp_r, best.categorical)
