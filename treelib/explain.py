"""Explaining tree models: Shapley values, TreeSHAP and partial dependence.

Introduced in Chapter 10. Numpy in and out, torch inside.

A tree ensemble's output is a sum over its leaves. Seen from one leaf, the
model is ``v * prod_j g_j`` over the *distinct* features ``j`` split on along
the path to the leaf, where ``g_j`` is 1 or 0 (the sample satisfies every
condition on ``j`` along the path or not) when ``j`` is known, and the
fraction of training weight that followed the path's conditions on ``j``
(``z_j``) when it is not. Shapley values are linear in the model, so each
leaf's share can be computed on its own, and only depends on which of the
path's conditions the sample satisfies: a pattern of ``L`` bits. This module
computes, once per model, every leaf's Shapley values for every pattern
(polynomial arithmetic, the heart of Lundberg et al.'s Algorithm 2), and then
explains a batch of samples by looking up each leaf's pattern: the work per
sample is a few tensor operations over all leaves of all trees at once, on any
torch device.

Supported models: treelib's and scikit-learn's decision trees, random forests,
extra trees, gradient boosting (the raw score: ``init + learning_rate * sum of
trees``), histogram gradient boosting (the raw score: ``_baseline_prediction +
sum of trees``, whose leaf values already carry the learning rate; each node's
training ``count`` is its cover, as in shap; categorical splits route by their
set of left categories) and AdaBoost (SAMME) classifiers (their decision
function, an additive sum of the trees' weighted votes; AdaBoost's
probabilities, a softmax of it, are not additive).
"""

import warnings
from itertools import combinations
from math import factorial

import numpy as np
import torch
from sklearn.base import is_classifier
from sklearn.ensemble import AdaBoostClassifier as _SkAdaBoostClassifier
from sklearn.ensemble import RandomForestRegressor as _SkRandomForestRegressor
from sklearn.ensemble._forest import BaseForest as _SkBaseForest
from sklearn.ensemble._gb import BaseGradientBoosting as _SkBaseGradientBoosting
from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import (
    BaseHistGradientBoosting as _SkBaseHistGradientBoosting,
)
from sklearn.exceptions import NotFittedError
from sklearn.tree import BaseDecisionTree as _SkBaseDecisionTree
from sklearn.utils import Bunch, get_tags
from sklearn.utils.validation import check_array, check_is_fitted

from .boosting import AdaBoostClassifier
from .forest import BaseForest
from .gradient_boosting import BaseGradientBoosting
from .hist_gradient_boosting import BaseHistGradientBoosting
from .hist_grower import bitset_to_mask
from .rules import goes_left
from .tree import BaseDecisionTree

__all__ = [
    "TreeExplainer",
    "partial_dependence",
    "shapley_values_brute_force",
    "tree_expectation",
]


# --------------------------------------------------------------------------
# The reference: Shapley values by enumerating every subset of features
# --------------------------------------------------------------------------


def shapley_weight(size, n_features):
    """``|S|! (d - |S| - 1)! / d!``: the share of coalition ``S`` in a Shapley value.

    Introduced in Chapter 10.
    """
    return factorial(size) * factorial(n_features - size - 1) / factorial(n_features)


def shapley_values_brute_force(f, x, background=None):
    """Exact Shapley values of one sample by enumerating all ``2**d`` feature subsets.

    Introduced in Chapter 10: the definition, written for reading; its cost
    doubles with every feature, so use it for small ``d`` (up to about 12).

    ``phi_i = sum over S not containing i of |S|!(d-|S|-1)!/d! * (v(S + i) - v(S))``
    where the value ``v(S)`` of a coalition ``S`` of known features is

    - with ``background`` (interventional): the mean over the background rows
      ``r`` of ``f`` at the hybrid sample that takes ``x`` on ``S`` and ``r``
      elsewhere;
    - without it, ``f`` must be a fitted tree model: the tree's own
      expectation :func:`tree_expectation` (path-dependent; an unknown
      feature's split sends the sample down both sides, weighted by the
      training samples that went each way).

    Parameters
    ----------
    f : callable or fitted tree model
        With ``background``: a function from an (n, d) array to (n,) or (n, k)
        outputs (for example ``model.predict``). Without: a model that
        :class:`TreeExplainer` supports.
    x : array-like of shape (d,)
        The sample to explain.
    background : array-like of shape (m, d) or None, default=None

    Returns
    -------
    phi : ndarray of shape (d,) or (d, k)
    base_value : float or ndarray of shape (k,)
        ``v(empty set)``; ``base_value + phi.sum(0) == v(all features)``.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    d = x.shape[0]
    if background is None:
        model = _model_trees(f)

        def value(subset):
            return tree_expectation(model, x, subset)
    else:
        background = np.asarray(background, dtype=np.float64)

        def value(subset):
            hybrid = background.copy()
            hybrid[:, list(subset)] = x[list(subset)]
            return np.asarray(f(hybrid), dtype=np.float64).mean(axis=0)

    values = {}  # v(S) for every subset S (as a sorted tuple)
    for size in range(d + 1):
        for subset in combinations(range(d), size):
            values[subset] = value(subset)
    phi = np.zeros((d,) + np.shape(values[()]))
    for i in range(d):
        others = [j for j in range(d) if j != i]
        for size in range(d):
            for subset in combinations(others, size):
                with_i = tuple(sorted(subset + (i,)))
                phi[i] += shapley_weight(size, d) * (values[with_i] - values[subset])
    return phi, values[()]


def tree_expectation(model, x, known):
    """``E[f(X) | X_S = x_S]`` as a tree estimates it (Chapter 10).

    Follow ``x`` at a split on a known feature; at a split on an unknown one,
    take both children, weighted by the fraction of training weight
    (``weighted_n_node_samples``; a histogram tree's node ``count``) that went
    each way. ``model``: a fitted model or what ``_model_trees`` made of it.
    """
    if not isinstance(model, _Trees):
        model = _model_trees(model)
    known = set(int(j) for j in known)
    x = _as_seen(np.asarray(x, dtype=np.float64), model)  # what the trees compare
    total = model.base.copy()
    for tree in model.trees:
        total = total + _walk(tree, x, known, 0, 1.0)
    return total if model.n_outputs > 1 else float(total[0])


def _walk(tree, x, known, node, weight):
    """:func:`tree_expectation` below ``node``, reached with probability ``weight``."""
    if tree.left[node] == -1:
        return weight * tree.value[node]
    a, b, f = tree.left[node], tree.right[node], tree.feature[node]
    if f in known:
        if node in tree.sets:  # a histogram tree's categorical split
            lefts, cats = (torch.as_tensor(c)[None, None] for c in tree.sets[node])
            left = _in_left_set(torch.tensor([[x[f]]]), lefts, cats, bool(tree.missing_left[node]))
        else:
            left = goes_left(
                torch.tensor(x[f]),
                tree.threshold[node],
                bool(tree.categorical[node]),
                bool(tree.missing_left[node]),
            )
        return _walk(tree, x, known, a if bool(left) else b, weight)
    cover = tree.cover[node]
    return _walk(tree, x, known, a, weight * tree.cover[a] / cover) + _walk(
        tree, x, known, b, weight * tree.cover[b] / cover
    )


# --------------------------------------------------------------------------
# Reading a fitted model: its trees, as leaf outputs to add up
# --------------------------------------------------------------------------


def _in_left_set(x, lefts, categories, missing_left):
    """Where a histogram tree's categorical split sends ``x``: left when its category is
    one of ``lefts``, right when it is another known category (``categories``), and to
    the missing-value side when it is NaN or a category unseen in training.

    ``x`` (n, s) values of the splits' features; ``lefts`` and ``categories`` (1, s, c)
    padded with NaN (never equal); ``missing_left`` (s,) or a bool. As scikit-learn's
    predictor, once its ordinal encoder has mapped the raw categories to codes.
    """
    x = x.double()[..., None]
    in_left = (x == lefts).any(-1)
    known = (x == categories).any(-1)
    missing_left = torch.as_tensor(missing_left, device=x.device)
    return torch.where(in_left, True, torch.where(known, False, missing_left))


class _Tree:
    """One tree's arrays, with ``value`` (node_count, K): what its leaves add to the output.

    ``sets``: a histogram tree's categorical splits, node -> (left categories, known
    categories) as float64 arrays (:func:`_in_left_set` routes them).
    """

    def __init__(self, tree_, value, sets=None):
        self.left = np.asarray(tree_.children_left, dtype=np.int64)
        self.right = np.asarray(tree_.children_right, dtype=np.int64)
        self.feature = np.asarray(tree_.feature, dtype=np.int64)
        self.threshold = np.asarray(tree_.threshold, dtype=np.float64)
        self.cover = np.asarray(tree_.weighted_n_node_samples, dtype=np.float64)
        n = len(self.left)
        self.categorical = np.asarray(getattr(tree_, "categorical", np.zeros(n, bool)), bool)
        self.missing_left = np.asarray(tree_.missing_go_to_left, dtype=bool)
        self.value = np.asarray(value, dtype=np.float64)
        self.sets = sets or {}


class _Trees:
    """A model as ``base + sum of trees``; ``n_outputs`` columns; ``shap_kind`` for shapes.

    ``float32``: the trees compare float32 inputs (scikit-learn's trees and classic
    gradient boosting); histogram gradient boosting compares float64 ones.
    """

    def __init__(self, trees, base, n_features, multi, allow_nan, float32=True):
        self.float32 = float32
        self.trees = trees
        self.base = np.asarray(base, dtype=np.float64)
        self.n_outputs = len(self.base)
        self.n_features = n_features
        self.multi = multi  # shap returns (n, d, K) with a list of K expected values
        self.allow_nan = allow_nan


def _tree_of(estimator):
    """The ``tree_`` of a fitted tree, checking it has one output."""
    tree_ = estimator.tree_
    if tree_.n_outputs != 1:
        raise ValueError("Explaining a multi-output tree is not supported (one output only).")
    return tree_


def _probabilities(tree_):
    value = np.asarray(tree_.value, dtype=np.float64)[:, 0, :]
    total = value.sum(axis=1, keepdims=True)
    return np.divide(value, total, out=np.zeros_like(value), where=total > 0)


def _as_seen(X, model):
    """X (float64) as the model's trees compare it: through float32 unless a histogram model."""
    return X if not model.float32 else X.astype(np.float32).astype(np.float64)


def _hist_columns(model):
    """A histogram model's input column for each of its trees' features, and each
    feature's known categories (float64, None for a numerical one).

    As scikit-learn's, a model with categorical features sees them encoded
    (``OrdinalEncoder``: category ``categories_[i]`` becomes ``i``) and moved first.
    """
    d = model.n_features_in_
    preprocessor = getattr(model, "_preprocessor", None)
    if preprocessor is None:
        return np.arange(d), [None] * d
    is_categorical = np.asarray(model.is_categorical_, dtype=bool)
    columns = np.concatenate([np.flatnonzero(is_categorical), np.flatnonzero(~is_categorical)])
    categories = [None] * d
    for i, known in enumerate(preprocessor.named_transformers_["encoder"].categories_):
        try:
            known = np.asarray(known, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise TypeError(
                "Explaining a histogram gradient boosting model whose categories are not"
                " numbers is not supported: encode them as numbers before fitting."
            ) from error
        categories[i] = known[~np.isnan(known)]  # (a NaN category is the missing value)
    return columns, categories


def _hist_trees(model):
    """A histogram gradient boosting model (treelib's or scikit-learn's) as a :class:`_Trees`.

    Each predictor is a tree of one class's raw score; its node ``count`` (training
    samples) is the cover, as shap reads these models; its leaf values already
    include the learning rate.
    """
    columns, categories = _hist_columns(model)
    K = model.n_trees_per_iteration_
    trees = []
    for iteration in model._predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            leaf = nodes["is_leaf"].astype(bool)
            feature_idx = nodes["feature_idx"].astype(np.int64)
            sets = {}
            for node in np.flatnonzero(~leaf & nodes["is_categorical"].astype(bool)):
                known = categories[feature_idx[node]]
                bitset = predictor.raw_left_cat_bitsets[nodes["bitset_idx"][node]]
                sets[int(node)] = (known[bitset_to_mask(bitset)[: len(known)]], known)
            value = np.zeros((len(nodes), K))
            value[:, k] = nodes["value"]
            tree_ = Bunch(
                children_left=np.where(leaf, -1, nodes["left"].astype(np.int64)),
                children_right=np.where(leaf, -1, nodes["right"].astype(np.int64)),
                feature=np.where(leaf, -2, columns[np.where(leaf, 0, feature_idx)]),
                threshold=np.where(leaf, -2.0, nodes["num_threshold"]),
                weighted_n_node_samples=nodes["count"].astype(np.float64),
                missing_go_to_left=nodes["missing_go_to_left"],
            )
            trees.append(_Tree(tree_, value, sets))
    base = np.asarray(model._baseline_prediction, dtype=np.float64).ravel()
    return _Trees(trees, base, model.n_features_in_, K > 1, True, float32=False)


def _model_trees(model):
    """What TreeExplainer explains of ``model``: a :class:`_Trees`."""
    if isinstance(model, _Trees):
        return model
    kinds = (
        BaseDecisionTree,
        _SkBaseDecisionTree,
        BaseForest,
        _SkBaseForest,
        BaseGradientBoosting,
        _SkBaseGradientBoosting,
        BaseHistGradientBoosting,
        _SkBaseHistGradientBoosting,
        AdaBoostClassifier,
        _SkAdaBoostClassifier,
    )
    if not isinstance(model, kinds):
        raise TypeError(
            f"Model type not supported by treelib.explain: {type(model).__name__}. Supported:"
            " decision trees, random forests, extra trees, gradient boosting, histogram"
            " gradient boosting and AdaBoost classifiers of treelib or scikit-learn."
        )
    try:
        check_is_fitted(model)
    except NotFittedError as error:
        raise NotFittedError(
            f"This {type(model).__name__} instance is not fitted yet: fit it before explaining it."
        ) from error
    if isinstance(model, (BaseHistGradientBoosting, _SkBaseHistGradientBoosting)):
        return _hist_trees(model)
    d = model.n_features_in_
    allow_nan = bool(get_tags(model).input_tags.allow_nan)
    classifier = is_classifier(model)
    if isinstance(model, (BaseDecisionTree, _SkBaseDecisionTree)):
        tree_ = _tree_of(model)
        if classifier:
            value = _probabilities(tree_)
            return _Trees([_Tree(tree_, value)], np.zeros(value.shape[1]), d, True, allow_nan)
        return _Trees([_Tree(tree_, tree_.value[:, 0, :1])], [0.0], d, False, allow_nan)
    if isinstance(model, (BaseForest, _SkBaseForest)):
        if not hasattr(model, "predict"):
            raise TypeError(f"{type(model).__name__} makes no prediction to explain.")
        trees, scale = [], 1.0 / len(model.estimators_)
        for est in model.estimators_:
            tree_ = _tree_of(est)
            value = _probabilities(tree_) if classifier else tree_.value[:, 0, :1]
            trees.append(_Tree(tree_, scale * value))
        K = trees[0].value.shape[1]
        return _Trees(trees, np.zeros(K), d, classifier, allow_nan)
    if isinstance(model, (BaseGradientBoosting, _SkBaseGradientBoosting)):
        if isinstance(model, BaseGradientBoosting):
            base = np.asarray(model.init_raw_prediction_, dtype=np.float64).ravel()
        elif model.init_ == "zero":
            base = np.zeros(model.estimators_.shape[1])
        else:
            # scikit-learn's constant initial raw prediction (a Dummy estimator's)
            base = model._raw_predict_init(np.zeros((1, d), np.float32))[0].astype(np.float64)
        lr = model.learning_rate
        K = model.estimators_.shape[1]
        trees = []
        for stage in model.estimators_:
            for k, est in enumerate(stage):
                tree_ = _tree_of(est)
                value = np.zeros((len(tree_.value), K))
                value[:, k] = lr * np.asarray(tree_.value, dtype=np.float64)[:, 0, 0]
                trees.append(_Tree(tree_, value))
        return _Trees(trees, base, d, K > 1, allow_nan)
    # AdaBoost (SAMME): f_k(x) = sum_t alpha_t (1 if h_t(x) = k else -1/(K-1)) / sum_t alpha_t,
    # and f_1 - f_0 for two classes: a sum of per-tree leaf outputs.
    K = len(model.classes_)
    weights = np.asarray(model.estimator_weights_[: len(model.estimators_)], dtype=np.float64)
    if K < 2:
        raise ValueError("AdaBoost with one class has nothing to explain.")
    trees = []
    for est, alpha in zip(model.estimators_, weights):
        if not hasattr(est, "tree_"):
            raise TypeError("AdaBoost is explained only when its learners are decision trees.")
        tree_ = _tree_of(est)
        vote = np.argmax(np.asarray(tree_.value)[:, 0, :], axis=1)  # h_t at each node
        scores = np.where(np.arange(K) == vote[:, None], 1.0, -1.0 / (K - 1)) * alpha
        scores /= weights.sum()
        value = scores[:, 1:] - scores[:, :1] if K == 2 else scores
        trees.append(_Tree(tree_, value))
    return _Trees(trees, np.zeros(1 if K == 2 else K), d, K > 2, allow_nan)


# --------------------------------------------------------------------------
# Every leaf as a path: its distinct features, their cover fractions, its value
# --------------------------------------------------------------------------


class _Paths:
    """All root-to-leaf paths of a model's trees, padded into tensors.

    For path ``p`` (a leaf): ``node[p, r]`` the r-th split on the way (global
    split id), ``went_left[p, r]`` the side taken, ``elem[p, r]`` which of the
    path's distinct features (``0 .. L[p]-1``) it splits on, ``feature[p, j]``
    and ``zero[p, j]`` that feature and its cover fraction (the product of the
    path's ``cover(child) / cover(parent)`` at its splits), ``value[p]`` the
    leaf's output (K,). Padding: ``node_mask`` false, ``feature == d``.
    """

    def __init__(self, model, device="cpu"):
        d = model.n_features
        split_feature, split_threshold, split_cat, split_missing = [], [], [], []
        set_splits = []  # (global split id, left categories, known categories)
        paths = []  # (nodes, lefts, ratios, value)
        leaf_nodes, edges, roots = [], [], []
        offset = node_offset = 0
        for tree in model.trees:
            internal = np.flatnonzero(tree.left != -1)
            gid = np.full(len(tree.left), -1)
            gid[internal] = offset + np.arange(len(internal))
            offset += len(internal)
            split_feature.append(tree.feature[internal])
            split_threshold.append(tree.threshold[internal])
            split_cat.append(tree.categorical[internal])
            split_missing.append(tree.missing_left[internal])
            set_splits += [(gid[node], *tree.sets[node]) for node in sorted(tree.sets)]
            # edges (child node, parent node, parent's split, went left, bit of the
            # parent's feature among the path's distinct features, depth): the
            # walk that :meth:`fail_bits` does one depth at a time
            roots.append(node_offset)
            stack = [(0, [], [], [], {})]
            while stack:
                node, nodes, lefts, ratios, order = stack.pop()
                a = tree.left[node]
                if a == -1:
                    paths.append((nodes, lefts, ratios, tree.value[node]))
                    leaf_nodes.append(node_offset + node)
                    continue
                b = tree.right[node]
                c = tree.cover[node]
                f = int(tree.feature[node])
                step = (int(gid[node]), f)
                if f not in order:
                    order = {**order, f: len(order)}
                for child, left in ((b, False), (a, True)):
                    ratio = tree.cover[child] / c if c > 0 else 0.0
                    edges.append(
                        (
                            node_offset + child,
                            node_offset + node,
                            gid[node],
                            left,
                            order[f],
                            len(nodes),
                        )
                    )
                    stack.append((child, nodes + [step], lefts + [left], ratios + [ratio], order))
            node_offset += len(tree.left)
        P = len(paths)
        D = max(1, max(len(p[0]) for p in paths))
        node = np.zeros((P, D), np.int64)
        went_left = np.zeros((P, D), bool)
        node_mask = np.zeros((P, D), bool)
        elem = np.zeros((P, D), np.int64)
        L = np.zeros(P, np.int64)
        features, zeros = [], []
        for p, (nodes, lefts, ratios, _) in enumerate(paths):
            order = {}
            z = []
            for r, ((g, f), left, ratio) in enumerate(zip(nodes, lefts, ratios)):
                if f not in order:
                    order[f] = len(order)
                    z.append(1.0)
                z[order[f]] *= ratio
                node[p, r], went_left[p, r], node_mask[p, r], elem[p, r] = g, left, True, order[f]
            L[p] = len(order)
            features.append(list(order))
            zeros.append(z)
        Lmax = max(1, int(L.max()))
        feature = np.full((P, Lmax), d, np.int64)
        zero = np.ones((P, Lmax))
        for p in range(P):
            feature[p, : L[p]] = features[p]
            zero[p, : L[p]] = zeros[p]
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), device=device)  # noqa: E731
        self.device = torch.device(device)
        self.d, self.P, self.D, self.Lmax = d, P, D, Lmax
        self.L = t(L)
        self.node, self.went_left, self.node_mask, self.elem = (
            t(node),
            t(went_left),
            t(node_mask),
            t(elem),
        )
        self.feature, self.zero = t(feature), t(zero)
        self.value = t(np.stack([p[3] for p in paths]))  # (P, K)
        self.split_feature = t(np.concatenate(split_feature).astype(np.int64))
        self.split_threshold = t(np.concatenate(split_threshold))
        self.split_cat = t(np.concatenate(split_cat))
        self.split_missing = t(np.concatenate(split_missing))
        # categorical splits of histogram trees: their categories, padded with NaN
        width = max([len(c) for _, _, c in set_splits], default=0)
        lefts = np.full((len(set_splits), width), np.nan)
        known = np.full((len(set_splits), width), np.nan)
        for i, (_, left, cats) in enumerate(set_splits):
            lefts[i, : len(left)], known[i, : len(cats)] = left, cats
        self.set_split = t(np.asarray([g for g, _, _ in set_splits], dtype=np.int64))
        self.set_lefts, self.set_known = t(lefts[None]), t(known[None])
        self.elem_mask = torch.arange(Lmax, device=self.device) < self.L[:, None]
        self.base = t(model.base)
        self.n_nodes = node_offset
        self.leaf_node = t(np.asarray(leaf_nodes, np.int64))
        edges = np.asarray(edges, dtype=np.int64).reshape(-1, 6)
        self.bit_dtype = torch.int32 if Lmax < 31 else torch.int64
        self.roots = t(np.asarray(roots, np.int64))
        self.levels = []
        for depth in range(D):
            e = edges[edges[:, 5] == depth]
            if len(e):
                self.levels.append(
                    (
                        t(e[:, 0]),
                        t(e[:, 1]),
                        t(e[:, 2]),
                        t(e[:, 3].astype(bool)),
                        t(1 << e[:, 4]).to(self.bit_dtype),
                    )
                )

    def goes_left(self, X):
        """Which way every split sends every row of float64 tensor X: (n, n_splits) bools.

        As the trees route (:func:`treelib.rules.goes_left`, NaN included), and a
        histogram tree's categorical split by its set of left categories
        (:func:`_in_left_set`).
        """
        x = X[:, self.split_feature]
        left = goes_left(x, self.split_threshold, self.split_cat, self.split_missing)
        if len(self.set_split):
            left[:, self.set_split] = _in_left_set(
                x[:, self.set_split],
                self.set_lefts,
                self.set_known,
                self.split_missing[self.set_split],
            )
        return left

    def ones(self, X):
        """``o[n, p, j]``: does sample n satisfy every split of path p on its j-th feature?

        X: float64 tensor (n, d). Each split routes as the tree does (:meth:`goes_left`).
        """
        if not len(self.split_feature):  # every tree a single leaf: no path feature
            return self.elem_mask.expand(X.shape[0], -1, -1).clone()
        left = self.goes_left(X)  # (n, n_splits)
        fail = (left[:, self.node] != self.went_left) & self.node_mask  # (n, P, D)
        fails = torch.zeros(X.shape[0], self.P, self.Lmax, dtype=torch.uint8, device=X.device)
        fails.scatter_add_(2, self.elem.expand(X.shape[0], -1, -1), fail.to(torch.uint8))
        return (fails == 0) & self.elem_mask

    def fail_bits(self, X):
        """For every leaf p, the bit pattern of the path features that X does *not* pass: (n, P).

        One depth at a time, a node's pattern is its parent's OR the bit of the
        parent's feature when X went the other way at the parent's split (OR, not a
        sum: a feature split on twice on a path may fail twice). Equivalent to
        :meth:`ones` (bit j clear where ``ones[..., j]``), with far less work.
        """
        left = self.goes_left(X)  # (n, n_splits)
        acc = torch.empty(X.shape[0], self.n_nodes, dtype=self.bit_dtype, device=X.device)
        acc[:, self.roots] = 0
        for child, parent, split, went_left, bit in self.levels:
            failed = left[:, split] != went_left
            acc[:, child] = acc[:, parent] | (failed * bit)
        return acc[:, self.leaf_node]

    def predict(self, X):
        """The model's output (n, K): the leaf each tree sends X to, summed."""
        reached = self.ones(X).sum(2) == self.L  # (n, P)
        return self.base + reached.to(self.value.dtype) @ self.value


# --------------------------------------------------------------------------
# Path-dependent TreeSHAP: every leaf's Shapley values for every bit pattern
# --------------------------------------------------------------------------


def _weights(L, device):
    """``w[s] = s! (L-1-s)! / L!`` for s = 0 .. L-1."""
    return torch.tensor(
        [shapley_weight(s, L) for s in range(L)], dtype=torch.float64, device=device
    )


def _products(z, o):
    """Coefficients of ``prod_j (z_j + o_j t)``: shape (..., L + 1)."""
    *batch, L = z.shape
    C = torch.zeros(*batch, L + 1, dtype=torch.float64, device=z.device)
    C[..., 0] = 1.0
    for j in range(L):
        shifted = torch.zeros_like(C)
        shifted[..., 1:] = C[..., :-1]
        C = z[..., j : j + 1] * C + o[..., j : j + 1] * shifted
    return C


def _divide(C, z, o):
    """``C / (z + o t)`` where ``o`` is 0 or 1: drops one factor of :func:`_products`.

    o = 1: synthetic division from the top (stable: ``z <= 1``); o = 0: divide by
    ``z`` (0 where ``z == 0``: that feature's term is then multiplied by 0).
    """
    n = C.shape[-1] - 1
    q_one = torch.zeros_like(C[..., :n])
    q_one[..., n - 1] = C[..., n]
    for s in range(n - 1, 0, -1):
        q_one[..., s - 1] = C[..., s] - z * q_one[..., s]
    safe = torch.where(z > 0, z, torch.ones_like(z))
    q_zero = torch.where(z[..., None] > 0, C[..., :n] / safe[..., None], torch.zeros_like(q_one))
    return torch.where(o[..., None] > 0, q_one, q_zero)


def _patterns(L, device):
    """All ``2**L`` bit patterns as a float (2**L, L) tensor: bit j of row b."""
    b = torch.arange(2**L, device=device)
    return ((b[:, None] >> torch.arange(L, device=device)) & 1).to(torch.float64)


def _shap_table(zero):
    """Path-dependent Shapley values of paths of length L for every pattern.

    ``zero``: (P_L, L) cover fractions. Returns (P_L, 2**L, L): for pattern b
    (o_j = bit j of b), ``(o_j - z_j) * sum_S w(|S|, L) prod_{S} o prod_{rest} z``
    over the subsets S of the path's other features (before the leaf value).
    """
    P, L = zero.shape
    o = _patterns(L, zero.device).expand(P, -1, -1)  # (P, B, L)
    z = zero[:, None, :].expand_as(o)
    C = _products(z, o)  # (P, B, L+1)
    w = _weights(L, zero.device)
    out = torch.empty_like(o)
    for j in range(L):
        q = _divide(C, z[..., j], o[..., j])  # (P, B, L)
        out[..., j] = (o[..., j] - z[..., j]) * (q @ w)
    return out


def _interaction_table(zero):
    """Path-dependent SHAP interaction values of paths of length L for every pattern.

    Returns (P_L, 2**L, L, L): off the diagonal, ``Phi_ij = (o_i - z_i)(o_j - z_j) / 2 *
    sum_S w(|S|, L-1) prod_S o prod_rest z`` over the subsets of the other
    ``L - 2`` features (half the change in ``phi_i`` when ``j`` is known
    rather than unknown); on it, ``phi_i - sum_{j != i} Phi_ij``.
    """
    P, L = zero.shape
    o = _patterns(L, zero.device).expand(P, -1, -1)
    z = zero[:, None, :].expand_as(o)
    C = _products(z, o)
    phi = _shap_table(zero)
    out = torch.zeros(P, 2**L, L, L, dtype=torch.float64, device=zero.device)
    if L >= 2:
        w = _weights(L - 1, zero.device)
        for i in range(L):
            qi = _divide(C, z[..., i], o[..., i])  # degree <= L-1
            for j in range(L):
                if j == i:
                    continue
                qij = _divide(qi, z[..., j], o[..., j])  # (P, B, L-1)
                out[..., i, j] = 0.5 * (o[..., i] - z[..., i]) * (o[..., j] - z[..., j]) * (qij @ w)
    diag = phi - out.sum(-1)
    out[..., torch.arange(L), torch.arange(L)] = diag
    return out


class _PathTables:
    """Per-path pattern tables laid out flat; ``base[p] + pattern * L[p] + j`` finds a value."""

    def __init__(self, paths, interactions=False):
        self.paths = paths
        dev = paths.device
        P, Lmax = paths.P, paths.Lmax
        L = paths.L
        width = L * L if interactions else L
        sizes = (2**L) * width
        start = torch.zeros(P, dtype=torch.int64, device=dev)
        start[1:] = torch.cumsum(sizes, 0)[:-1]
        total = int(sizes.sum())
        pad = Lmax * Lmax if interactions else Lmax
        flat = torch.zeros(total + pad, dtype=torch.float64, device=dev)
        for length in torch.unique(L).tolist():
            idx = torch.nonzero(L == length).ravel()
            if length == 0:
                continue
            maker = _interaction_table if interactions else _shap_table
            table = maker(paths.zero[idx, :length])  # (P_L, B, L[, L])
            positions = start[idx, None] + torch.arange(table[0].numel(), device=dev)
            flat[positions.ravel()] = table.reshape(-1)
        self.flat, self.start, self.width = flat, start, width

    def lookup(self, o):
        """Table values for patterns ``o`` (n, P, Lmax) bools: (n, P, Lmax[, Lmax])."""
        paths = self.paths
        bits = 1 << torch.arange(paths.Lmax, device=o.device)
        pattern = (o.to(torch.int64) * bits).sum(2)  # (n, P)
        row = self.start + pattern * self.width  # (n, P)
        Lmax = paths.Lmax
        j = torch.arange(Lmax, device=o.device)
        if self.width is paths.L:  # shap values: element j
            index = row[..., None] + j
        else:  # interactions: element (i, j) at i * L + j
            index = row[..., None, None] + j[:, None] * paths.L[:, None, None] + j
            inside = (j[:, None] < paths.L[:, None, None]) & (j < paths.L[:, None, None])
            index = torch.where(inside, index, torch.full_like(index, self.flat.numel() - 1))
            return self.flat[index]
        inside = j < paths.L[:, None]
        index = torch.where(inside, index, torch.full_like(index, self.flat.numel() - 1))
        return self.flat[index]


class _RowTable:
    """Every leaf's Shapley values for every pattern, as rows of width ``d * K``.

    Row ``start[p] + b`` holds the values leaf ``p`` gives the d features (K
    outputs each) when the sample passes the path features of bit pattern
    ``b``: a sample's SHAP values are the sum of one row per leaf, a product
    of a sparse matrix of ones (one per sample and leaf) with the table.
    """

    def __init__(self, paths, max_bytes=2**31):
        dev, d, K = paths.device, paths.d, paths.value.shape[1]
        L = paths.L
        sizes = 2**L
        n_rows = int(sizes.sum())
        if n_rows * d * K * 8 > max_bytes:
            raise ValueError(
                f"The trees' paths split on up to {int(L.max())} distinct features: the table of"
                f" their {n_rows} patterns would take {n_rows * d * K * 8 / 2**30:.1f} GiB."
                " Limit the trees' depth (max_depth) to explain them."
            )
        self.start = torch.zeros(paths.P, dtype=torch.int64, device=dev)
        self.start[1:] = torch.cumsum(sizes, 0)[:-1]
        self.full = sizes - 1
        rows = torch.zeros(n_rows, d * K, dtype=torch.float64, device=dev)
        for length in torch.unique(L).tolist():
            if length == 0:
                continue
            idx = torch.nonzero(L == length).ravel()
            table = _shap_table(paths.zero[idx, :length])  # (P_L, B, L)
            B = 2**length
            row = (self.start[idx, None] + torch.arange(B, device=dev))[:, :, None]  # (P_L, B, 1)
            for k in range(K):
                col = (paths.feature[idx, None, :length] * K + k).expand(-1, B, -1)
                vals = table * paths.value[idx, k, None, None]
                rows.index_put_((row.expand(-1, -1, length), col), vals, accumulate=True)
        self.rows = rows

    def _ones(self, size, device):
        if getattr(self, "_ones_cache", None) is None or self._ones_cache.numel() < size:
            self._ones_cache = torch.ones(size, dtype=torch.float64, device=device)
        return self._ones_cache[:size]

    def shap_values(self, paths, X):
        """phi (n, d, K) of float64 tensor X."""
        n, d, K = X.shape[0], paths.d, paths.value.shape[1]
        out = torch.empty(n, d * K, dtype=torch.float64, device=X.device)
        step = max(1, 2**24 // max(1, paths.n_nodes))
        for a in range(0, n, step):
            row = self.start + (self.full ^ paths.fail_bits(X[a : a + step]))  # (b, P)
            b, P = row.shape
            # one row of the table per (sample, leaf), summed: a sparse (b, n_rows)
            # matrix of ones times the table (columns sorted: leaves' rows are in order)
            with warnings.catch_warnings():  # (torch: sparse CSR tensors are in beta)
                warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
                pick = torch.sparse_csr_tensor(
                    torch.arange(0, b * P + 1, P, device=X.device),
                    row.reshape(-1),
                    self._ones(b * P, X.device),
                    size=(b, self.rows.shape[0]),
                    check_invariants=False,
                )
            out[a : a + step] = torch.sparse.mm(pick, self.rows)
        return out.reshape(n, d, K)


def _chunk_rows(n_paths, n_lmax, budget=2**24):
    """Rows per batch so that one (rows, P, Lmax) tensor holds about ``budget`` entries."""
    return max(1, budget // max(1, n_paths * n_lmax))


def _path_dependent_interactions(paths, tables, X):
    """Phi (n, d, d, K) for float64 tensor X."""
    n, d, K = X.shape[0], paths.d, paths.value.shape[1]
    out = torch.zeros(n, (d + 1) * (d + 1), K, dtype=torch.float64, device=X.device)
    pair = (paths.feature[:, :, None] * (d + 1) + paths.feature[:, None, :]).reshape(-1)
    step = _chunk_rows(paths.P, paths.Lmax * paths.Lmax)
    for a in range(0, n, step):
        vals = tables.lookup(paths.ones(X[a : a + step]))  # (b, P, Lmax, Lmax)
        for k in range(K):
            contrib = (vals * paths.value[:, k, None, None]).reshape(vals.shape[0], -1)
            out[a : a + step, :, k].index_add_(1, pair, contrib)
    return out.reshape(n, d + 1, d + 1, K)[:, :d, :d]


def _interventional_shap(paths, X, background):
    """phi (n, d, K) averaged over the background rows (interventional TreeSHAP).

    For one sample x and one background row r, a leaf is reached by the hybrid
    sample (x on S, r elsewhere) exactly when every path feature in S passes for
    x and every other passes for r. With A the path features that pass for x
    only (a of them) and B those for r only (b), the leaf gives
    ``v (a-1)! b! / (a+b)!`` to each of A and ``-v a! (b-1)! / (a+b)!`` to each
    of B, and nothing when some feature passes for neither.
    """
    n, d, K = X.shape[0], paths.d, paths.value.shape[1]
    m = background.shape[0]
    o_r = paths.ones(background)  # (m, P, Lmax)
    fact = torch.tensor(
        [float(factorial(i)) for i in range(2 * paths.Lmax + 2)],
        dtype=torch.float64,
        device=X.device,
    )
    out = torch.zeros(n, d + 1, K, dtype=torch.float64, device=X.device)
    cols = paths.feature.reshape(-1)
    step = _chunk_rows(paths.P * m, paths.Lmax, budget=2**23)
    for a in range(0, n, step):
        o_x = paths.ones(X[a : a + step])[:, None]  # (b, 1, P, Lmax)
        A = o_x & ~o_r
        B = ~o_x & o_r
        valid = ((o_x | o_r) | ~paths.elem_mask).all(3, keepdim=True)  # (b, m, P, 1)
        na, nb = A.sum(3, keepdim=True), B.sum(3, keepdim=True)
        wa = torch.where(na > 0, fact[(na - 1).clamp(min=0)] * fact[nb] / fact[na + nb], 0.0)
        wb = torch.where(nb > 0, fact[na] * fact[(nb - 1).clamp(min=0)] / fact[na + nb], 0.0)
        share = (A * wa - B * wb) * valid  # (b, m, P, Lmax)
        share = share.mean(1)  # (b, P, Lmax)
        for k in range(K):
            contrib = (share * paths.value[:, k, None]).reshape(share.shape[0], -1)
            out[a : a + step, :, k].index_add_(1, cols, contrib)
    return out[:, :d]


# --------------------------------------------------------------------------
# The explainer, shaped as shap's
# --------------------------------------------------------------------------


def _check_X(X, model, allow_nan, name="TreeExplainer"):
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan" if allow_nan else True)
    if X.shape[1] != model.n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but {name} is expecting {model.n_features} features"
            " as input."
        )
    # explain what the trees see (float32 inputs for scikit-learn's trees)
    return _as_seen(X, model)


class TreeExplainer:
    """SHAP values of a tree model, as ``shap.TreeExplainer`` computes them (Chapter 10).

    Parameters
    ----------
    model : fitted tree, forest, gradient boosting (classic or histogram) or AdaBoost classifier
        treelib's or scikit-learn's. Classifier trees and forests are explained
        in probabilities, gradient boosting of both kinds in raw scores
        (log-odds; ``decision_function``), AdaBoost in its decision function.
    data : array-like of shape (m, d) or None, default=None
        Background data, required by ``feature_perturbation="interventional"``.
    feature_perturbation : {"tree_path_dependent", "interventional"}, default=None
        None: "interventional" when ``data`` is given, else "tree_path_dependent".
    device : str or torch.device, default="cpu"
        Where the computation runs.

    Attributes
    ----------
    expected_value : ndarray of shape (1,) or (K,), or float
        The mean output the values start from, as shap's when it is built:
        path-dependent, one output: an array of shape (1,); interventional,
        one output: a float; K outputs (classes): an array of shape (K,).
    """

    def __init__(self, model, data=None, feature_perturbation=None, device="cpu"):
        if feature_perturbation is None:
            feature_perturbation = "tree_path_dependent" if data is None else "interventional"
        if feature_perturbation not in ("tree_path_dependent", "interventional"):
            raise ValueError(
                "feature_perturbation must be 'tree_path_dependent' or 'interventional',"
                f" got {feature_perturbation!r}."
            )
        if feature_perturbation == "interventional" and data is None:
            raise ValueError("feature_perturbation='interventional' needs background data.")
        self.model = model
        self.feature_perturbation = feature_perturbation
        self.device = torch.device(device)
        self._trees = _model_trees(model)
        self._paths = _Paths(self._trees, self.device)
        self._tables = None
        self.data = None
        if data is not None:
            self.data = _check_X(data, self._trees, self._trees.allow_nan)
        if feature_perturbation == "interventional":
            ev = self._paths.predict(self._tensor(self.data)).mean(0).cpu().numpy()
            self.expected_value = self._shape_expected(ev, scalar=True)
        else:
            full = torch.ones(1, self._paths.P, dtype=torch.float64, device=self.device)
            z = torch.where(self._paths.elem_mask, self._paths.zero, 1.0).prod(1)
            ev = (self._paths.base + (full * z) @ self._paths.value)[0].cpu().numpy()
            self.expected_value = self._shape_expected(ev, scalar=False)

    def _shape_expected(self, ev, scalar):
        if self._trees.multi:
            return np.asarray(ev)
        return np.float64(ev[0]) if scalar else np.asarray(ev)

    def _tensor(self, X):
        return torch.as_tensor(X, dtype=torch.float64, device=self.device)

    def _shape(self, values):
        values = values.cpu().numpy()
        return values if self._trees.multi else values[..., 0]

    def shap_values(self, X):
        """SHAP values: (n, d) for one output, (n, d, K) for K classes (as shap 0.51).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        X = self._tensor(_check_X(X, self._trees, self._trees.allow_nan))
        if self.feature_perturbation == "interventional":
            return self._shape(_interventional_shap(self._paths, X, self._tensor(self.data)))
        if self._tables is None:
            self._tables = _RowTable(self._paths)
        return self._shape(self._tables.shap_values(self._paths, X))

    def shap_interaction_values(self, X):
        """SHAP interaction values (path-dependent): (n, d, d) or (n, d, d, K).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray
        """
        if self.feature_perturbation != "tree_path_dependent":
            raise ValueError(
                "Interaction values are computed with feature_perturbation='tree_path_dependent'"
                " only (as shap's)."
            )
        X = self._tensor(_check_X(X, self._trees, self._trees.allow_nan))
        tables = _PathTables(self._paths, interactions=True)
        return self._shape(_path_dependent_interactions(self._paths, tables, X))

    def model_output(self, X):
        """What the values explain, for X: (n,) or (n, K) (probabilities, raw scores...)."""
        X = self._tensor(_check_X(X, self._trees, self._trees.allow_nan))
        return self._shape(self._paths.predict(X))


# --------------------------------------------------------------------------
# Partial dependence and ICE
# --------------------------------------------------------------------------


def _grid(X, features, percentiles, grid_resolution):
    """scikit-learn's grid: each feature's unique values if fewer than ``grid_resolution``,
    else ``grid_resolution`` points evenly spaced between its ``percentiles``."""
    from scipy.stats.mstats import mquantiles

    if len(percentiles) != 2 or not 0 <= percentiles[0] < percentiles[1] <= 1:
        raise ValueError("'percentiles' must be an increasing pair of values in [0, 1].")
    if grid_resolution <= 1:
        raise ValueError("'grid_resolution' must be strictly greater than 1.")
    values = []
    for f in features:
        column = X[:, f]
        uniques = np.unique(column)
        if uniques.shape[0] < grid_resolution:
            values.append(uniques)
            continue
        low, high = mquantiles(column, prob=percentiles, axis=0)
        if np.allclose(low, high):
            raise ValueError(
                "percentiles are too close to each other, unable to build the grid."
                " Please choose percentiles that are further apart."
            )
        values.append(np.linspace(low, high, num=grid_resolution, endpoint=True))
    mesh = np.meshgrid(*values, indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1), values


_RECURSION = (
    "DecisionTreeRegressor, RandomForestRegressor, ExtraTreesRegressor (treelib's),"
    " GradientBoostingClassifier, GradientBoostingRegressor, HistGradientBoostingClassifier,"
    " HistGradientBoostingRegressor"
)
_BOOSTING = (
    BaseGradientBoosting,
    _SkBaseGradientBoosting,
    BaseHistGradientBoosting,
    _SkBaseHistGradientBoosting,
)


def _supports_recursion(model):
    """Gradient boosting (both kinds), and the regression trees and forests (as
    scikit-learn's list)."""
    if isinstance(model, _BOOSTING):
        return True
    if is_classifier(model) or not hasattr(model, "predict"):
        return False
    return isinstance(
        model, (BaseDecisionTree, _SkBaseDecisionTree, BaseForest, _SkRandomForestRegressor)
    )


def _recursion(model, grid, features, device="cpu"):
    """The tree average of every grid point, Friedman's weighted traversal: (K, n_points).

    At a split on a target feature, follow the grid point; at any other split,
    take both sides weighted by the training weight that went each way. Each
    leaf's weight is a product along its path: its target features' pass bits
    times the other features' cover fractions ``z``. As scikit-learn's
    ``method="recursion"``, gradient boosting's initial prediction (histogram
    gradient boosting's baseline) is left out.
    """
    if getattr(model, "_fitted_with_sw", False):  # (its node counts ignore the weights)
        raise NotImplementedError(
            f"{type(model).__name__} does not support partial dependence plots with the"
            " 'recursion' method when sample weights were given during fit time."
        )
    trees = _model_trees(model)
    paths = _Paths(trees, device)
    X = np.zeros((grid.shape[0], trees.n_features))
    X[:, features] = grid
    X = torch.as_tensor(_as_seen(X, trees), device=paths.device)
    target = torch.zeros(trees.n_features + 1, dtype=torch.bool, device=paths.device)
    target[torch.as_tensor(features, device=paths.device)] = True
    ones = paths.ones(X)  # (G, P, Lmax)
    factor = torch.where(target[paths.feature], ones.to(torch.float64), paths.zero)
    factor = torch.where(paths.elem_mask, factor, 1.0)
    return (factor.prod(2) @ paths.value).T.cpu().numpy()


def _brute(model, X, grid, features, response_method, sample_weight):
    """Predictions with the target features set to each grid point: (n, n_points, K)."""
    if not is_classifier(model):
        respond = model.predict
    elif response_method == "predict_proba" or (
        response_method == "auto" and hasattr(model, "predict_proba")
    ):
        respond = model.predict_proba
    else:
        respond = model.decision_function
    out = []
    X_eval = X.copy()
    for point in grid:
        X_eval[:, features] = point
        pred = np.asarray(respond(X_eval), dtype=np.float64)
        if pred.ndim == 1:
            pred = pred[:, None]
        elif is_classifier(model) and pred.shape[1] == 2:
            pred = pred[:, 1:]  # two classes: the positive class only (as scikit-learn)
        out.append(pred)
    return np.stack(out, axis=1)


def partial_dependence(
    model,
    X,
    features,
    *,
    sample_weight=None,
    response_method="auto",
    percentiles=(0.05, 0.95),
    grid_resolution=100,
    method="auto",
    kind="average",
):
    """Partial dependence and ICE, as ``sklearn.inspection.partial_dependence``. Chapter 10.

    ``average`` is the mean prediction with the target features set to each
    grid value (over the rows of ``X``); ``individual`` (ICE) keeps each row.
    ``method="recursion"`` computes the average from the trees alone (no
    prediction), see :func:`_recursion`; ``"brute"`` predicts every row at
    every grid point, for any model; ``"auto"`` takes recursion where it
    applies (kind "average", no sample weights, a tree regressor, forest
    regressor or gradient boosting of either kind).

    Parameters
    ----------
    model : fitted estimator
    X : array-like of shape (n_samples, n_features)
    features : int or sequence of int
        One feature, or several whose joint grid is evaluated.
    sample_weight : array-like of shape (n_samples,) or None (brute only)
    response_method : {"auto", "predict_proba", "decision_function"}, default="auto"
    percentiles : tuple of two floats, default=(0.05, 0.95)
    grid_resolution : int, default=100
    method : {"auto", "recursion", "brute"}, default="auto"
    kind : {"average", "individual", "both"}, default="average"

    Returns
    -------
    Bunch
        ``grid_values`` (one array per feature), ``average`` of shape
        (n_outputs, n_values_0, ...) and/or ``individual`` of shape
        (n_outputs, n_samples, n_values_0, ...).
    """
    if method not in ("auto", "recursion", "brute"):
        raise ValueError(f"method must be 'auto', 'recursion' or 'brute', got {method!r}.")
    if kind not in ("average", "individual", "both"):
        raise ValueError(f"kind must be 'average', 'individual' or 'both', got {kind!r}.")
    if response_method not in ("auto", "predict_proba", "decision_function"):
        raise ValueError(f"Invalid response_method {response_method!r}.")
    check_is_fitted(model)
    X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
    features = np.atleast_1d(np.asarray(features))
    if features.dtype.kind not in "iu" or np.any(features < 0) or np.any(features >= X.shape[1]):
        raise ValueError(f"all features must be integers in [0, {X.shape[1] - 1}]")
    features = features.astype(np.int64)
    if not is_classifier(model) and response_method != "auto":
        raise ValueError(
            "The response_method parameter is ignored for regressors and must be 'auto'."
        )
    if kind != "average":
        if method == "recursion":
            raise ValueError("The 'recursion' method only applies when 'kind' is set to 'average'")
        method = "brute"
    if method == "recursion" and sample_weight is not None:
        raise ValueError("The 'recursion' method can only be applied when sample_weight is None.")
    if method == "auto":
        method = "recursion" if sample_weight is None and _supports_recursion(model) else "brute"
    if method == "recursion":
        if not _supports_recursion(model):
            raise ValueError(
                f"Only the following estimators support the 'recursion' method: {_RECURSION}."
                " Try using method='brute'."
            )
        if response_method not in ("auto", "decision_function"):
            raise ValueError(
                "With the 'recursion' method, the response_method must be 'decision_function'."
                f" Got {response_method}."
            )
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (X.shape[0],):
            raise ValueError("sample_weight must have shape (n_samples,).")
    grid, values = _grid(X, features, percentiles, grid_resolution)
    shape = [len(v) for v in values]
    result = Bunch(grid_values=values)
    if method == "recursion":
        result["average"] = _recursion(model, grid, features).reshape(-1, *shape)
        return result
    predictions = _brute(model, X, grid, features, response_method, sample_weight)  # (n, G, K)
    average = np.average(predictions, axis=0, weights=sample_weight)  # (G, K)
    if kind in ("average", "both"):
        result["average"] = average.T.reshape(-1, *shape)
    if kind in ("individual", "both"):
        result["individual"] = predictions.transpose(2, 0, 1).reshape(-1, X.shape[0], *shape)
    return result
