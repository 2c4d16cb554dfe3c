"""The rule book: every rule a tree builder obeys, written once.

Introduced in Chapter 1 (``notebooks/01_decision_stump``); missing values and
monotonic constraints join it in Chapter 6, and Chapter 7 applies it to whole levels.

The builders (the stump, the recursive and best-first trees of Chapter 2, the
level-wise and histogram builders of Chapter 7, the forests and boosting) differ
only in the order in which they visit nodes and in how fast they sum
statistics. What they decide is decided here, as scikit-learn decides it
(``sklearn/tree/_splitter.pyx``, ``_partitioner.pyx``, ``_criterion.pyx`` and
``_tree.pyx`` of scikit-learn 1.9):

- **routing** (:func:`goes_left`): ``x <= threshold`` goes left (``x == c``
  for a one-vs-rest categorical split); a NaN goes to the side the split learned
  (the bigger child, :func:`bigger_child_is_left`, where the split saw no NaN);
- **allowed candidates**: a threshold sits between sorted values that differ by
  more than :data:`FEATURE_THRESHOLD` (:func:`distinct`, :func:`midpoint`; a
  feature with no such pair is constant, :func:`is_constant`); both children need
  ``min_samples_leaf`` samples (:func:`big_enough`) and ``min_weight_leaf``
  weight (:func:`heavy_enough`), and, under a monotonic constraint, values in
  the node's bounds and in the right order (:func:`monotonic_ok`,
  :func:`monotonic_allows`);
- **the winner**: the best score, ties (:func:`tie_tolerance`,
  :func:`is_tie_or_best`) going to the candidate searched first (the
  tolerance is treelib's: scikit-learn compares exactly, which is why the
  comparisons with scikit-learn use data without ties);
- **stopping** (:func:`is_leaf_before_search`, and after the search
  :func:`too_small_a_decrease` of the split's :func:`weighted_decrease`);
- **bounds** of a constrained tree's children (:func:`child_bounds`) and the
  clipping of node values to them (:func:`clip_value`).
"""

from typing import NamedTuple

import torch

from .criteria import criterion_of

EPSILON = float(torch.finfo(torch.float64).eps)  # scikit-learn's "impurity is zero" tolerance
FEATURE_THRESHOLD = 1e-7
TIE_RTOL = 1e-12  # scores closer than this, relative to the node's scale, are ties


# --- routing ------------------------------------------------------------------------------


def goes_left(x, threshold, categorical=False, missing_left=False):
    """Which samples of feature column ``x`` a split sends left.

    Introduced in Chapter 1; NaN in Chapter 6. ``x <= threshold`` (or
    ``x == threshold`` for a one-vs-rest categorical split) goes left,
    compared in float64 as scikit-learn does; a NaN goes left exactly when
    ``missing_left``. ``threshold``, ``categorical`` and ``missing_left`` may be
    scalars or tensors shaped like ``x`` (one per sample's node).
    """
    x = x.double()
    if isinstance(categorical, torch.Tensor):
        left = torch.where(categorical, x == threshold, x <= threshold)
    else:
        left = x == threshold if categorical else x <= threshold
    if isinstance(missing_left, torch.Tensor) or missing_left:
        left = torch.where(x.isnan(), missing_left, left)
    return left


def bigger_child_is_left(n_left, n_right):
    """Where a split that saw no NaN sends one: left when the left child has more samples.

    Introduced in Chapter 6. scikit-learn 1.9's rule (``n_left > n_right``, in
    unweighted counts; equal counts go right).
    """
    return n_left > n_right


def more_samples_left(children_left, children_right, n_node_samples):
    """:func:`bigger_child_is_left` for every split of a tree: 1 where a NaN goes left.

    Introduced in Chapter 6; 0 for leaves. numpy arrays in, uint8 array out.
    """
    import numpy as np

    children_left, children_right = np.asarray(children_left), np.asarray(children_right)
    inner = children_left >= 0
    counts = np.asarray(n_node_samples)
    more = np.zeros(len(children_left), dtype=np.uint8)
    more[inner] = bigger_child_is_left(counts[children_left[inner]], counts[children_right[inner]])
    return more


# --- allowed candidates -------------------------------------------------------------------


def midpoint(a, b):
    """scikit-learn's threshold between two sorted values ``a < b``."""
    t = a / 2.0 + b / 2.0
    return a if t == b or abs(t) == float("inf") else t


def midpoints(a, b):
    """:func:`midpoint` of float64 tensors, element by element (the level-wise builders)."""
    t = a / 2 + b / 2
    return torch.where((t == b) | t.isinf(), a, t)


def distinct(lower, upper):
    """Can a threshold sit between sorted values ``lower`` and ``upper`` (float32)?

    ``upper > lower + FEATURE_THRESHOLD``, computed in float32 as scikit-learn
    does (its ``FEATURE_THRESHOLD`` is a float32), so neighbouring float32
    values near 1 do not count as distinct; a NaN never qualifies (every
    comparison with it is false).
    """
    return upper > lower + FEATURE_THRESHOLD


def is_constant(low, high, has_missing=None, all_missing=None):
    """A feature a node cannot split: its values (``low`` to ``high``) are not distinct.

    Introduced in Chapter 5 (the feature draw skips constant features). With
    NaN (Chapter 6), as scikit-learn 1.9: a feature whose values are all NaN is
    constant, and one with some NaN is not, even if its known values are all
    equal (it can still split the NaN from the rest).
    """
    constant = ~distinct(low, high)
    if has_missing is None:  # (no NaN)
        return constant
    return all_missing | (~has_missing & constant)


def big_enough(n_left, n_right, min_samples_leaf):
    """Do both children hold at least ``min_samples_leaf`` samples (unweighted)?"""
    return (n_left >= min_samples_leaf) & (n_right >= min_samples_leaf)


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


def monotonic_ok(value_left, value_right, constraint, lower, upper):
    """Does a split respect a monotonic constraint (Chapter 6)?

    ``value_*`` are the children's values (the mean target, or a binary
    classifier's fraction of class 0, whose constraint is the user's flipped);
    ``constraint`` is +1 (the left value may not exceed the right) or -1;
    ``lower``/``upper`` the node's bounds. scikit-learn's
    ``Criterion._check_monotonicity``.
    """
    in_bounds = (value_left >= lower) & (value_right >= lower)
    in_bounds &= (value_left <= upper) & (value_right <= upper)
    return in_bounds & ((value_left - value_right) * constraint <= 0)


def monotonic_allows(value_left, value_right, constraint, lower, upper):
    """Which candidates the monotonic constraints allow (Chapter 6; whole levels: Chapter 7).

    A candidate on an unconstrained feature (``constraint`` 0) is always
    allowed; on a constrained one it must pass :func:`monotonic_ok`. All
    arguments broadcast against each other (a level's candidates: one
    constraint per feature row, one pair of bounds per node).
    """
    return (constraint == 0) | monotonic_ok(value_left, value_right, constraint, lower, upper)


# --- the winner ---------------------------------------------------------------------------


def tie_tolerance(total, criterion):
    """How far below a node's best score a candidate still ties with it.

    Introduced in Chapter 1 (one tie rule in every builder: Chapter 7). The
    tolerance is treelib's: scikit-learn keeps a candidate only when it is
    strictly better, in its own random feature order, which is why
    comparisons with scikit-learn use data without ties.

    Parameters
    ----------
    total : float64 tensor of shape (n_stats,) or (n_stats, n_nodes)
        The node's (or each node's) summed statistics.
    criterion : str
        The split criterion.

    Returns
    -------
    tensor of shape () or (n_nodes,)
        ``TIE_RTOL`` times the scale of the node's scores
        (:meth:`treelib.criteria.Criterion.tie_scale`): its weight ``W`` for
        classification (the scores are at most ``W`` times the largest
        impurity), ``sum w*y**2`` for squared error (a bound: the proxy
        ``S_L**2/W_L + S_R**2/W_R`` never exceeds it). Rounding errors are
        relative to that scale, not to the score itself.
    """
    return TIE_RTOL * criterion_of(criterion).tie_scale(total).abs()


def is_tie_or_best(scores, best, tol):
    """Which ``scores`` are the best or tie with it (``best - tol`` or more).

    Introduced in Chapter 1 (on whole levels in Chapter 7). ``best`` is the
    largest score and ``tol`` comes from :func:`tie_tolerance` (both broadcast
    against ``scores``); ``-inf`` (not a candidate) never qualifies. The
    caller then takes the first such candidate in search order: the lowest
    feature rank, then the smallest threshold (with NaN: first the candidates
    with the NaN on the right).
    """
    return (scores >= best - tol) & (scores > float("-inf"))


# --- stopping -----------------------------------------------------------------------------


class StoppingRules(NamedTuple):
    """Resolved hyper-parameters that decide when a node becomes a leaf (Chapter 2).

    The defaults grow until the leaves are pure; the stump of Chapter 1 is
    ``StoppingRules(max_depth=1, min_samples_leaf=...)``.
    """

    max_depth: int = 2**31 - 1
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_weight_leaf: float = 0.0
    min_impurity_decrease: float = 0.0
    max_features: int = 2**31 - 1  # (all of them)
    categorical: frozenset = frozenset()  # features split one-vs-rest (Chapter 6)
    monotonic: object = None  # float64 tensor: -1, 0 or +1 per feature, or None (Chapter 6)
    splitter: str = "best"  # "random": one random threshold per feature (Chapter 5)


def is_leaf_before_search(n, weight, impurity, depth, rules):
    """scikit-learn's stopping rules that need no split search (Chapter 2).

    For one node (numbers) or a whole level (tensors, Chapter 7): ``|`` works
    on both.
    """
    return (
        (depth >= rules.max_depth)
        | (n < rules.min_samples_split)
        | (n < 2 * rules.min_samples_leaf)
        | (weight < 2 * rules.min_weight_leaf)
        | (impurity <= EPSILON)
    )


def weighted_decrease(
    weight, root_weight, impurity, w_left, impurity_left, w_right, impurity_right
):
    """scikit-learn's improvement of a split (Chapter 2), its weighted impurity decrease.

    ``(W_t / W) * (i_t - W_R/W_t i_R - W_L/W_t i_L)``: the node's share of the
    root weight times its impurity decrease. For one split (numbers) or many
    (tensors).
    """
    share = weight / root_weight
    return share * (impurity - w_right / weight * impurity_right - w_left / weight * impurity_left)


def too_small_a_decrease(improvement, min_impurity_decrease):
    """The stopping rule after the search: the best split decreases impurity too little."""
    return improvement + EPSILON < min_impurity_decrease


# --- bounds of a monotonic tree -----------------------------------------------------------


def child_bounds(constraint, lower, upper, middle):
    """The ``(lower, upper)`` bounds of a split node's left and right child (Chapter 6).

    Without a constraint on the split's feature both inherit the node's; with
    +1 the left child's values stay at or below ``middle`` (the mean of the two
    children's values) and the right child's at or above it; -1 the reverse.
    scikit-learn's tree builders. Numbers for one node, or tensors for the
    split nodes of a whole level (Chapter 7).
    """
    increasing, decreasing = constraint > 0, constraint < 0
    left = (_pick(decreasing, middle, lower), _pick(increasing, middle, upper))
    right = (_pick(increasing, middle, lower), _pick(decreasing, middle, upper))
    return left, right


def _pick(condition, a, b):
    """``a`` where ``condition``, else ``b``: for numbers or tensors."""
    if isinstance(condition, torch.Tensor):
        return torch.where(condition, a, b)
    return a if condition else b


def clip_value(value, lower, upper, classifier):
    """A node's value clipped to its bounds (a tensor; the first entry is constrained).

    For a binary classifier the fraction of class 0 is clipped and class 1
    gets the rest, as scikit-learn's ``clip_node_value``. ``value`` may hold
    many nodes, one per column (``(n_values, m)``), with ``lower`` and
    ``upper`` tensors of shape ``(m,)`` (a whole level, Chapter 7).
    """
    value = value.clone()
    value[0] = value[0].clamp(lower, upper)
    if classifier:
        value[1] = 1 - value[0]
    return value
