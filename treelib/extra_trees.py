"""Extremely randomized trees: one random threshold per feature, no bootstrap.

Introduced in Chapter 5 (``notebooks/05_random_forest``), beside bagging and the
random forest. The extra trees of Geurts, Ernst and Wehenkel (2006) differ from a random forest in
two ways, as in scikit-learn 1.9.1 (``ExtraTreesClassifier``/``Regressor``):

- a node does not search every threshold of its ``max_features`` drawn
  features: for each drawn feature it draws **one** threshold uniformly
  between the feature's smallest and largest value among the node's samples,
  and keeps the best of these few random splits (:func:`random_split`,
  ``splitter="random"`` on a tree);
- each tree is grown on all the rows (``bootstrap=False`` by default).

scikit-learn's ``RandomSplitter`` (``node_split_random`` in
``sklearn/tree/_splitter.pyx``) draws its thresholds from its own generator;
``treelib`` draws each one from the node's key (:mod:`treelib.node_random`),
so a tree depends only on ``random_state``, not on the device. The features,
the stopping rules, the improvement and the tie rule are the best splitter's
(:mod:`treelib.split`, :func:`treelib.grow.draw_features`). Random splits are
grown by the recursive builder only (``tree_method`` then has no effect, and
forests of extra trees are not grown batched).
"""

import numpy as np
import torch
from sklearn.base import TransformerMixin
from sklearn.preprocessing import OneHotEncoder
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_feature_names_in, _num_samples, check_is_fitted

from ._validation import RANDOM_CATEGORICAL, invalid_parameter, map_friedman_mse
from .criteria import criterion_of, node_weight
from .forest import BaseForest, RandomForestClassifier, RandomForestRegressor
from .node_random import GOLDEN, mix32
from .rules import (
    big_enough,
    bigger_child_is_left,
    goes_left,
    heavy_enough,
    is_constant,
    is_tie_or_best,
    tie_tolerance,
)
from .split import Candidate, make_split, monotonic_mask, split_scores
from .tree import DecisionTreeRegressor

THRESHOLD_SALT = 0x51ED270B  # separates the threshold draws from the feature order's hashes
MISSING_SIDE = 2**24  # feature f's NaN side is drawn as "feature" f + MISSING_SIDE


def threshold_draws(key, features):
    """One uniform number in ``[0, 1)`` per feature, from a node's key. Introduced in Chapter 5.

    Counter-based, as the feature order of :func:`treelib.node_random.search_ranks`:
    two 32-bit hashes (:func:`treelib.node_random.mix32`) of the key and the
    feature's index give the 53 bits of a float64. The same node and feature
    always get the same number, on any device. (A node draws a handful of
    numbers: the hashes are computed on Python integers, the same bits as on
    tensors and many times faster than a dozen tensor operations.)

    Parameters
    ----------
    key : int64 tensor of shape (1,)
        The node's key.
    features : sequence of int
        Feature indices.

    Returns
    -------
    float64 tensor of shape (len(features),), on ``key``'s device
    """
    base = mix32(int(key[0]) * GOLDEN + THRESHOLD_SALT) * GOLDEN
    draws = []
    for f in features:
        high = mix32(base + 2 * int(f)) >> 5  # 27 high bits
        low = mix32(base + 2 * int(f) + 1) >> 6  # 26 low bits
        draws.append((high * 2**26 + low) / 2.0**53)
    return torch.tensor(draws, dtype=torch.float64, device=key.device)


def random_split(
    X,
    stats,
    criterion,
    *,
    features,
    key,
    categorical=(),
    min_samples_leaf=1,
    min_weight_leaf=0.0,
    root_weight=None,
    monotonic=None,
):
    """The best of one random split per feature, or ``None`` if none is allowed.

    Introduced in Chapter 5: scikit-learn's ``RandomSplitter``. For each feature
    of ``features`` (in the order that breaks ties), take its smallest and
    largest value ``lo``, ``hi`` among the node's samples; skip it if it is
    constant (``hi <= lo + FEATURE_THRESHOLD``, in float32); draw a threshold
    ``t = lo + (hi - lo) u`` with ``u`` uniform in ``[0, 1)`` from the node's
    ``key`` (``t = lo`` should it round to ``hi``), so that ``x <= t`` sends
    at least one sample each way; reject the split if a child has fewer than
    ``min_samples_leaf`` samples or less than ``min_weight_leaf`` weight, or
    (``monotonic``, as :func:`treelib.split.best_split`) children out of order.
    With NaN (Chapter 6), as scikit-learn 1.9: ``lo`` and ``hi`` are those of
    the known values, a feature with NaN is constant only when all its values
    are NaN, and the missing samples go to a side drawn from the key too. The
    best remaining split wins (scores as :func:`treelib.split.split_scores`,
    ties as :func:`treelib.rules.is_tie_or_best`: the first feature in order).

    Parameters
    ----------
    X : float32 tensor of shape (n_samples, n_features)
        The node's samples.
    stats : float64 tensor of shape (n_stats, n_samples)
        Per-sample target statistics (see :func:`treelib.criteria.target_stats`).
    criterion : str
    features : sequence of int
        Features to try, in the order that breaks ties (the node's draw,
        :func:`treelib.grow.draw_features`).
    key : int64 tensor of shape (1,)
        The node's key (:mod:`treelib.node_random`); it fixes the thresholds.
    categorical : collection of int, default=()
        Must not hold any of ``features``: random one-vs-rest splits are not
        implemented (``ValueError``).
    min_samples_leaf : int
    min_weight_leaf : float
    root_weight : float, optional
        As in :func:`treelib.split.best_split`.

    Returns
    -------
    treelib.split.Split or None
    """
    features = [int(f) for f in features]
    if set(features) & set(categorical):
        raise ValueError(RANDOM_CATEGORICAL)
    n = X.shape[0]
    if n < 2 or not features:
        return None
    columns = X[:, features]  # (n, f)
    missing = columns.isnan()
    has_missing = missing.any(0)
    low = torch.where(missing, torch.inf, columns).amin(0)  # of the known values
    high = torch.where(missing, -torch.inf, columns).amax(0)
    varies = ~is_constant(low, high, has_missing, missing.all(0))  # float32, as scikit-learn
    u = threshold_draws(key, features).to(X.device)
    nan_left = threshold_draws(key, [f + MISSING_SIDE for f in features]).to(X.device) < 0.5
    nan_left &= has_missing  # (a feature without NaN: scikit-learn's "right" while searching)
    low, high = low.double(), high.double()
    thresholds = (high - low) * u + low  # scikit-learn's rand_uniform(low, high)
    thresholds = torch.where(thresholds == high, low, thresholds)
    left_mask = goes_left(columns, thresholds, missing_left=nan_left)  # (n, f), in float64
    # (n_stats, f): each feature's children (a matrix product, for sums)
    left, right = criterion_of(criterion).masked_children(stats, left_mask)
    total = criterion_of(criterion).node_stats(stats)
    n_left = left_mask.sum(0)
    w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
    allowed = varies & big_enough(n_left, n - n_left, min_samples_leaf)
    allowed &= heavy_enough(w_left, w_right, min_weight_leaf)
    if monotonic is not None:
        constraint, bound_low, bound_high = monotonic
        monotonic = (constraint[features], bound_low, bound_high)
        allowed &= monotonic_mask(left, right, w_left, w_right, criterion, monotonic)
    scores = torch.where(allowed, split_scores(left, right, w_left, w_right, criterion), -torch.inf)
    best = scores.max()
    if best == float("-inf"):
        return None
    tied = is_tie_or_best(scores, best, tie_tolerance(total, criterion))
    j = int(torch.argmax(tied.to(torch.uint8)))  # the first feature in order that ties
    # where a NaN goes: the drawn side if the feature had NaN here, else the bigger child
    missing_left = (
        bool(nan_left[j])
        if bool(has_missing[j])
        else bigger_child_is_left(int(n_left[j]), n - int(n_left[j]))
    )
    winner = Candidate(
        float(scores[j]),
        j,
        features[j],
        float(thresholds[j]),
        left[:, j],
        missing_left=missing_left,
        right=None if criterion_of(criterion).summable else right[:, j],
    )
    return make_split(winner, total, criterion, root_weight)


class ExtraTreesMixin:
    """What both extra-trees ensembles change in a random forest. Introduced in Chapter 5.

    Every tree gets ``splitter="random"``; the trees are grown by the
    recursive builder (``tree_method`` and ``max_bins`` are fixed here, not
    parameters), without categorical features (random one-vs-rest splits are
    not implemented).
    """

    tree_method = "recursive"
    max_bins = 255
    categorical_features = None

    _template_params = {"splitter": "random"}

    def _tree_params(self):
        return {**super()._tree_params(), **self._template_params}


class ExtraTreesClassifier(ExtraTreesMixin, RandomForestClassifier):
    """An extra-trees classifier (Geurts et al., 2006). Introduced in Chapter 5.

    scikit-learn 1.9.1's ``ExtraTreesClassifier``: a forest of
    ``DecisionTreeClassifier(splitter="random")`` trees (one random threshold
    per drawn feature at each node, :func:`random_split`), grown on all rows
    unless ``bootstrap=True``. Its trees differ from scikit-learn's (other
    random numbers); its accuracy matches on average.

    Parameters
    ----------
    n_estimators : int, default=100
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
max_leaf_nodes, min_impurity_decrease, ccp_alpha
        Passed to every tree, as in :class:`~treelib.RandomForestClassifier`.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Features each node draws; each gets one random threshold.
    bootstrap : bool, default=False
        Grow each tree on a bootstrap sample (default: on all rows).
    oob_score : bool or callable, default=False
        Needs ``bootstrap=True``.
    n_jobs : int or None, default=None
        Accepted for scikit-learn's API; the trees grow one after another
        (random splits are not grown batched).
    random_state : int, RandomState or None, default=None
        Tree ``i`` gets the ``i``-th integer drawn from it as its seed; that
        seed fixes the tree's features and thresholds.
    verbose : int, default=0
        A progress bar over the trees when nonzero.
    warm_start : bool, default=False
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        As :class:`~treelib.RandomForestClassifier`.
    max_samples : int, float or None, default=None
        Needs ``bootstrap=True``.
    monotonic_cst : array-like of int of shape (n_features,) or None, default=None
        Monotonic constraints passed to every tree (Chapter 6).
    device : str, torch.device or None, default=None

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
        Trees with ``splitter="random"``.
    estimator_, classes_, n_classes_, n_features_in_, feature_importances_
    oob_score_, oob_decision_function_ (with ``oob_score``)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from treelib import ExtraTreesClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, y).score(X, y)
    1.0
    """

    def __init__(
        self,
        n_estimators=100,
        *,
        criterion="gini",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features="sqrt",
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        bootstrap=False,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        class_weight=None,
        ccp_alpha=0.0,
        max_samples=None,
        monotonic_cst=None,
        device=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha
        self.max_samples = max_samples
        self.monotonic_cst = monotonic_cst
        self.device = device


class ExtraTreesRegressor(ExtraTreesMixin, RandomForestRegressor):
    """An extra-trees regressor (Geurts et al., 2006). Introduced in Chapter 5.

    scikit-learn 1.9.1's ``ExtraTreesRegressor``: parameters are those of
    :class:`ExtraTreesClassifier`, except ``criterion`` (``"squared_error"``
    by default, ``"absolute_error"`` or ``"poisson"``), ``max_features=1.0``
    (every feature gets one random threshold at each node) and no
    ``class_weight``. With ``oob_score`` (and ``bootstrap``),
    ``oob_score_`` is the out-of-bag R².

    Examples
    --------
    >>> from treelib import ExtraTreesRegressor
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [1.0, 1.0, 5.0, 5.0]
    >>> ExtraTreesRegressor(n_estimators=5, random_state=0).fit(X, y).predict(X).tolist()
    [1.0, 1.0, 5.0, 5.0]
    """

    def __init__(
        self,
        n_estimators=100,
        *,
        criterion="squared_error",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=1.0,
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        bootstrap=False,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
        ccp_alpha=0.0,
        max_samples=None,
        monotonic_cst=None,
        device=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = map_friedman_mse(criterion)  # (as scikit-learn 1.9)
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.ccp_alpha = ccp_alpha
        self.max_samples = max_samples
        self.monotonic_cst = monotonic_cst
        self.device = device


class RandomTreesEmbedding(TransformerMixin, ExtraTreesMixin, BaseForest):
    """Totally random trees whose leaves one-hot encode the samples. Introduced in Chapter 5.

    scikit-learn 1.9.1's ``RandomTreesEmbedding`` (Moosmann et al., 2008):
    ``fit`` draws a meaningless target ``y ~ U[0, 1)`` from ``random_state``
    and grows a forest of extra trees on it (``max_features=1``: each node
    splits one random feature at one random threshold, so the target hardly
    matters); ``transform`` turns the leaf each sample reaches in each tree
    (:meth:`apply`) into one-hot columns (a ``OneHotEncoder``, ``one_hot_encoder_``).
    Nearby samples share leaves: a sparse, high-dimensional code in which simple
    linear models find non-linear structure.

    Every row of the output has exactly ``n_estimators`` ones. The target and
    the trees' seeds are drawn as scikit-learn draws them; the trees themselves
    differ from scikit-learn's (their thresholds come from treelib's own random
    numbers, see :func:`random_split`), so the code matches scikit-learn's in
    distribution, not column for column.

    Parameters
    ----------
    n_estimators : int, default=100
    max_depth : int or None, default=5
    min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_leaf_nodes, \
min_impurity_decrease
        Passed to every tree, as in :class:`ExtraTreesRegressor`.
    sparse_output : bool, default=True
        Return a ``scipy.sparse.csr_matrix`` (else a dense ndarray).
    n_jobs : int or None, default=None
        Accepted for scikit-learn's API (the trees grow one after another).
    random_state : int, RandomState or None, default=None
        Draws the target, then the trees' seeds (an int seeds both draws afresh).
    verbose : int, default=0
    warm_start : bool, default=False
        Keep the fitted trees and grow only the new ones; the encoder is refitted.

    Attributes
    ----------
    estimators_ : list of DecisionTreeRegressor
    estimator_, n_features_in_, feature_names_in_, feature_importances_
    one_hot_encoder_ : sklearn.preprocessing.OneHotEncoder
        Fitted on the training leaves (one feature per tree).

    Examples
    --------
    >>> from treelib import RandomTreesEmbedding
    >>> X = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> code = RandomTreesEmbedding(n_estimators=3, random_state=0).fit_transform(X)
    >>> code.sum(axis=1).ravel().tolist()
    [[3.0, 3.0, 3.0, 3.0]]
    """

    _tree_class = DecisionTreeRegressor
    # scikit-learn's fixed settings of the trees and the forest (not parameters)
    criterion = "squared_error"
    max_features = 1
    bootstrap = False
    oob_score = False
    max_samples = None
    ccp_alpha = 0.0
    monotonic_cst = None
    device = None

    def __init__(
        self,
        n_estimators=100,
        *,
        max_depth=5,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_leaf_nodes=None,
        min_impurity_decrease=0.0,
        sparse_output=True,
        n_jobs=None,
        random_state=None,
        verbose=0,
        warm_start=False,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.sparse_output = sparse_output
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def _set_oob_score_and_attributes(self, X, y, scoring_function=None):
        raise NotImplementedError("OOB score not supported by tree embedding")

    def fit(self, X, y=None, sample_weight=None):
        """Grow the trees on a random target and fit the encoder of their leaves.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Passed to every tree.

        Returns
        -------
        self
        """
        self.fit_transform(X, y, sample_weight=sample_weight)
        return self

    def fit_transform(self, X, y=None, sample_weight=None):
        """:meth:`fit`, then the embedding of X (as :meth:`transform`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,) or None, default=None

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_leaves)
            ``n_leaves`` is the number of leaves reached, summed over the trees.
        """
        if not isinstance(self.sparse_output, (bool, np.bool_)):
            allowed = "an instance of 'bool' or an instance of 'numpy.bool'"
            raise invalid_parameter(
                "sparse_output", type(self).__name__, allowed, self.sparse_output
            )
        target = check_random_state(self.random_state).uniform(size=_num_samples(X))
        BaseForest.fit(self, X, target, sample_weight=sample_weight)
        self.one_hot_encoder_ = OneHotEncoder(sparse_output=self.sparse_output)
        output = self.one_hot_encoder_.fit_transform(self.apply(X))
        self._n_features_out = output.shape[1]
        return output

    def transform(self, X):
        """One-hot code of the leaf each sample reaches in every tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_leaves)
        """
        check_is_fitted(self)
        return self.one_hot_encoder_.transform(self.apply(X))

    def get_feature_names_out(self, input_features=None):
        """``randomtreesembedding_{tree}_{leaf}`` for every output column, as scikit-learn.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Only checked against ``feature_names_in_``.

        Returns
        -------
        ndarray of object
        """
        check_is_fitted(self, "_n_features_out")
        _check_feature_names_in(self, input_features=input_features, generate_names=False)
        names = [
            f"randomtreesembedding_{tree}_{leaf}"
            for tree in range(self.n_estimators)
            for leaf in self.one_hot_encoder_.categories_[tree]
        ]
        return np.asarray(names, dtype=object)
