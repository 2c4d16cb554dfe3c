"""Gradient boosting: regression trees fitted one after another to negative gradients.

Introduced in Chapter 8 (``notebooks/08_gradient_boosting``).

What scikit-learn 1.9.1 does, read in ``sklearn/ensemble/_gb.py`` and
``sklearn/_loss``, and what treelib does the same way (the arithmetic in torch,
float64):

- **Trees.** Every tree is a ``DecisionTreeRegressor`` fitted to the negative
  gradient with ``criterion="squared_error"`` (``_fit_stage`` hard-codes it).
  The estimators' ``criterion`` parameter defaults to ``"deprecated"``; passing
  ``"friedman_mse"`` or ``"squared_error"`` only raises a ``FutureWarning`` ("It
  has no effect", removal in 1.11). treelib has no ``criterion`` parameter.
- **Initial prediction** (``init_raw_prediction_``): the weighted mean of ``y``
  (regressor); the log-odds of the weighted positive fraction (binary); the
  symmetric log prior ``log p_k - mean_j log p_j`` (K >= 3, scikit-learn's
  ``MultinomialLogit`` link). Probabilities are clipped to ``[eps, 1 - eps]``.
- **Negative gradients** of scikit-learn's half losses: ``y - F`` (squared
  error), ``y - sigmoid(F)`` (binary), ``1[y = k] - softmax_k(F)`` (K >= 3).
- **Leaf values.** Squared error keeps the tree's leaf means. Log-loss replaces
  each leaf's value by one Newton step, ``avg_w(g) / avg_w(p (1 - p))`` over
  the leaf's in-bag samples, times ``(K - 1) / K`` when K >= 3; a denominator
  below ``1e-150`` in absolute value gives 0 (``_safe_divide``). Each stage adds
  ``learning_rate * value`` of the leaf a sample falls in.
- **Subsampling.** ``subsample < 1`` draws ``max(1, int(subsample * n))`` rows
  without replacement per stage with ``_random_sample_mask`` (one
  ``uniform(size=n)`` call, then selection sampling); out-of-bag rows get weight
  0 for that stage's trees. The stream is one ``RandomState`` made from
  ``random_state`` and shared by the masks and the trees (each tree draws one
  integer from it). treelib consumes it the same way, so it draws the same rows
  as scikit-learn; but treelib's trees use the stream only for a seed of their
  own per-node hash (``treelib.node_random``), so with ``max_features <
  n_features`` the features searched differ from scikit-learn's.
- **Early stopping** (``n_iter_no_change``): scikit-learn's ``train_test_split``
  (stratified for the classifier) holds out ``validation_fraction`` of the rows;
  fitting stops when the validation loss has not beaten any of the last
  ``n_iter_no_change`` losses by ``tol``.
- **Scores.** ``train_score_`` (in-bag when subsampling), ``oob_scores_`` and
  ``oob_improvement_`` are twice the half loss for squared error and binary
  log-loss, the loss itself for K >= 3, as scikit-learn keeps them.
"""

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    _is_float,
    _is_int,
    check_fit_input,
    check_max_features,
    check_predict_input,
)
from .hist import bin_columns
from .tree import BINNED_BUILDERS, TREE_METHODS, DecisionTreeRegressor

EPS = float(np.finfo(np.float64).eps)
SAFE_DIVIDE_BELOW = 1e-150  # scikit-learn's _safe_divide: a smaller denominator gives 0


def random_sample_mask(n_samples, n_inbag, random_state):
    """Which rows a stage trains on, drawn as scikit-learn's ``_random_sample_mask``.

    Introduced in Chapter 8. Selection sampling: row ``i`` is taken with
    probability (rows still needed) / (rows left), from one ``uniform(size=n)``
    draw, so exactly ``n_inbag`` rows are taken.

    Parameters
    ----------
    n_samples, n_inbag : int
    random_state : numpy.random.RandomState
        Advanced by ``n_samples`` uniform draws.

    Returns
    -------
    ndarray of bool, shape (n_samples,)
    """
    uniform = random_state.uniform(size=n_samples)
    mask = np.zeros(n_samples, dtype=bool)
    taken = 0
    for i, u in enumerate(uniform.tolist()):
        if u * (n_samples - i) < n_inbag - taken:
            mask[i] = True
            taken += 1
    return mask


def weighted_mean(values, weight):
    """``sum(w * v) / sum(w)`` over the first axis (float64 tensors)."""
    return (weight * values).sum(0) / weight.sum()


def newton_leaf_values(leaves, neg_gradient, hessian, weight, n_nodes, scale=1.0):
    """One Newton step per leaf, as scikit-learn's log-loss line search.

    Introduced in Chapter 8. For every node id ``j``:
    ``scale * avg_w(g) / avg_w(h)`` over the samples with ``leaves == j``;
    0 where ``|avg_w(h)| < 1e-150`` (scikit-learn's zero-denominator rule).

    Parameters
    ----------
    leaves : int64 tensor (n_samples,)
        Leaf id of every sample.
    neg_gradient, hessian, weight : float64 tensors (n_samples,)
        Out-of-bag samples carry weight 0.
    n_nodes : int
    scale : float, default=1.0
        ``(K - 1) / K`` for K >= 3 classes, as scikit-learn.

    Returns
    -------
    float64 tensor (n_nodes,)
        Meaningful at the leaves that hold a sample of positive weight.
    """

    def node_sum(values):
        return torch.zeros(n_nodes, dtype=torch.float64, device=leaves.device).index_add_(
            0, leaves, values
        )

    total = node_sum(weight)
    numerator = node_sum(weight * neg_gradient) / total * scale
    denominator = node_sum(weight * hessian) / total
    small = denominator.abs() < SAFE_DIVIDE_BELOW
    return torch.where(small, 0.0, numerator / torch.where(small, 1.0, denominator))


class SquaredError:
    """Half squared error ``(y - F)^2 / 2``: the regressor's loss. Introduced in Chapter 8."""

    factor = 2.0  # train_score_ is the mean squared error, as scikit-learn keeps it

    def init_raw_prediction(self, y, weight):
        """The weighted mean of ``y``, shape (1,)."""
        return weighted_mean(y, weight).reshape(1)

    def negative_gradient(self, y, raw):
        """``y - F``, shape (n_samples, 1)."""
        return y[:, None] - raw

    def loss(self, y, raw, weight):
        """Weighted mean of the half squared error."""
        return float(weighted_mean(0.5 * (y - raw[:, 0]) ** 2, weight))

    def leaf_values(self, tree, leaves, y, k, neg_gradient, weight):
        """The tree's own leaf means are the optimal step: keep them."""
        return torch.from_numpy(tree.tree_.value[:, 0, 0]).to(leaves.device)


class BinomialLoss:
    """Binomial log-loss ``log(1 + e^F) - y F`` on the log-odds ``F``.

    Half the binomial deviance: scikit-learn's ``HalfBinomialLoss``. The
    boosting estimators' ``train_score_``, ``oob_scores_`` and early-stopping
    loss are ``factor`` times this loss, the deviance, as in scikit-learn.

    Introduced in Chapter 8.
    """

    factor = 2.0

    def init_raw_prediction(self, y, weight):
        """Log-odds of the weighted fraction of class 1, shape (1,)."""
        p = weighted_mean((y == 1).to(torch.float64), weight).clamp(EPS, 1 - EPS)
        return torch.log(p / (1 - p)).reshape(1)

    def negative_gradient(self, y, raw):
        """``y - sigmoid(F)``, shape (n_samples, 1)."""
        return y[:, None].to(torch.float64) - torch.sigmoid(raw)

    def loss(self, y, raw, weight):
        """Weighted mean of the log-loss (half the deviance)."""
        F = raw[:, 0]
        return float(weighted_mean(torch.logaddexp(torch.zeros_like(F), F) - y * F, weight))

    def leaf_values(self, tree, leaves, y, k, neg_gradient, weight):
        """Newton step ``avg(y - p) / avg(p (1 - p))`` per leaf."""
        prob = y.to(torch.float64) - neg_gradient
        hessian = prob * (1 - prob)
        n_nodes = tree.tree_.node_count
        return newton_leaf_values(leaves, neg_gradient, hessian, weight, n_nodes)

    def predict_proba(self, raw):
        """Columns ``1 - sigmoid(F)`` and ``sigmoid(F)``."""
        p = torch.sigmoid(raw[:, 0])
        return torch.stack([1 - p, p], dim=1)


class MultinomialLoss:
    """Multinomial log-loss ``logsumexp(F) - F_y``, one raw score per class.

    scikit-learn's ``HalfMultinomialLoss``; the boosting estimators report it
    as it is (``factor`` 1), as scikit-learn does.

    Introduced in Chapter 8.
    """

    factor = 1.0

    def __init__(self, n_classes):
        self.n_classes = n_classes

    def init_raw_prediction(self, y, weight):
        """Symmetric log prior ``log p_k - mean_j log p_j``, shape (K,)."""
        onehot = torch.nn.functional.one_hot(y, self.n_classes).to(torch.float64)
        log_p = torch.log(weighted_mean(onehot, weight[:, None]).clamp(EPS, 1 - EPS))
        return log_p - log_p.mean()

    def negative_gradient(self, y, raw):
        """``1[y = k] - softmax_k(F)``, shape (n_samples, K)."""
        onehot = torch.nn.functional.one_hot(y, self.n_classes).to(torch.float64)
        return onehot - torch.softmax(raw, dim=1)

    def loss(self, y, raw, weight):
        """Weighted mean of the multinomial log-loss."""
        per_sample = torch.logsumexp(raw, dim=1) - raw.gather(1, y[:, None])[:, 0]
        return float(weighted_mean(per_sample, weight))

    def leaf_values(self, tree, leaves, y, k, neg_gradient, weight):
        """Newton step times ``(K - 1) / K``, as scikit-learn."""
        prob = (y == k).to(torch.float64) - neg_gradient
        hessian = prob * (1 - prob)
        scale = (self.n_classes - 1) / self.n_classes
        n_nodes = tree.tree_.node_count
        return newton_leaf_values(leaves, neg_gradient, hessian, weight, n_nodes, scale)

    def predict_proba(self, raw):
        """Softmax of the raw scores."""
        return torch.softmax(raw, dim=1)


def set_leaf_values(tree, values):
    """Overwrite the leaf values of a fitted treelib regression tree (numpy ``tree_.value``).

    Introduced in Chapter 8. Inner nodes keep their means; the tensor copies that
    ``Tree.to_torch`` caches are dropped so that they are rebuilt from the new values.
    """
    tree.tree_.set_leaf_values(values)


def _check_open(name, value, low, high, closed_low=False, closed_high=False):
    ok = (_is_int(value) or _is_float(value)) and (
        (low <= value if closed_low else low < value)
        and (value <= high if closed_high else value < high)
    )
    if not ok:
        left, right = "[" if closed_low else "(", "]" if closed_high else ")"
        raise ValueError(f"{name} must be a number in {left}{low}, {high}{right}; got {value!r}.")


class BaseGradientBoosting(BaseEstimator):
    """What the two gradient boosting estimators share. Introduced in Chapter 8."""

    _is_classifier = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # made dense at validation (_validation.densify)
        return tags

    def _check_params(self):
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1; got {self.n_estimators!r}.")
        _check_open("learning_rate", self.learning_rate, 0.0, np.inf, closed_low=True)
        _check_open("subsample", self.subsample, 0.0, 1.0, closed_high=True)
        _check_open("validation_fraction", self.validation_fraction, 0.0, 1.0)
        _check_open("tol", self.tol, 0.0, np.inf, closed_low=True)
        if not (self.n_iter_no_change is None or (_is_int(self.n_iter_no_change)
                                                  and self.n_iter_no_change >= 1)):  # fmt: skip
            raise ValueError(
                f"n_iter_no_change must be None or an int >= 1; got {self.n_iter_no_change!r}."
            )
        if self.tree_method not in TREE_METHODS:
            raise ValueError(
                f"tree_method must be one of {TREE_METHODS}; got {self.tree_method!r}."
            )
        if not (_is_int(self.verbose) and self.verbose >= 0):
            raise ValueError(f"verbose must be an int >= 0; got {self.verbose!r}.")

    def _make_tree(self, random_state):
        return DecisionTreeRegressor(
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            min_impurity_decrease=self.min_impurity_decrease,
            max_leaf_nodes=self.max_leaf_nodes,
            ccp_alpha=self.ccp_alpha,
            max_features=self.max_features,
            random_state=random_state,
            tree_method=self.tree_method,
            max_bins=self.max_bins,
            device=self.device,
        )

    def _device(self):
        try:
            return torch.device("cpu" if self.device is None else self.device)
        except (RuntimeError, TypeError) as error:
            raise ValueError(f"device must name a torch device; got {self.device!r}.") from error

    def fit(self, X, y, sample_weight=None):
        """Fit ``n_estimators`` stages (fewer if early stopping ends the fit).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None, default=None

        Returns
        -------
        self
        """
        X, y, w = check_fit_input(self, X, y, sample_weight, classifier=self._is_classifier)
        self._check_params()
        # scikit-learn's _set_max_features, before the early-stopping split
        self.max_features_ = check_max_features(self.max_features, self.n_features_in_)
        loss = self._make_loss(y, w)
        device = self._device()
        X, y, w = X.to(device), y.to(device), w.to(device)
        train, val = self._split(y)
        if val is not None:
            val = X[val.to(device)], y[val.to(device)], w[val.to(device)]
            train = train.to(device)
            X, y, w = X[train], y[train], w[train]
        rng = check_random_state(self.random_state)
        self.init_raw_prediction_ = loss.init_raw_prediction(y, w).cpu().numpy()
        self.estimators_ = np.empty((self.n_estimators, self.n_trees_per_iteration_), object)
        self.train_score_ = np.zeros(self.n_estimators)
        for name in ("oob_improvement_", "oob_scores_", "oob_score_"):
            self.__dict__.pop(name, None)  # a refit must not keep an earlier fit's
        if self.subsample < 1.0:
            self.oob_improvement_ = np.zeros(self.n_estimators)
            self.oob_scores_ = np.zeros(self.n_estimators)
            self.oob_score_ = np.nan
        bins = None  # the histogram builder bins the data once for all trees
        if self._make_tree(0)._builder() in BINNED_BUILDERS:  # (the trees' own choice)
            bins = bin_columns(X, self.max_bins)
        raw = self._init_raw(X.shape[0], device)
        n_stages = self._fit_stages(loss, X, y, w, raw, bins, rng, val)
        self.n_estimators_ = n_stages
        self.estimators_ = self.estimators_[:n_stages]
        self.train_score_ = self.train_score_[:n_stages]
        if self.subsample < 1.0:
            self.oob_improvement_ = self.oob_improvement_[:n_stages]
            self.oob_scores_ = self.oob_scores_[:n_stages]
            self.oob_score_ = float(self.oob_scores_[-1])
        return self

    def _split(self, y):
        """Row indices (train, validation) for early stopping, as scikit-learn draws them."""
        if self.n_iter_no_change is None:
            return None, None
        labels = y.cpu().numpy()
        train, val = train_test_split(
            np.arange(len(labels)),
            random_state=self.random_state,
            test_size=self.validation_fraction,
            stratify=labels if self._is_classifier else None,
        )
        if self._is_classifier and len(np.unique(labels[train])) != self.n_classes_:
            raise ValueError(
                "The training data after the early stopping split is missing some classes. "
                "Try using another random seed."
            )
        return torch.from_numpy(train), torch.from_numpy(val)

    def _init_raw(self, n_samples, device):
        init = torch.from_numpy(self.init_raw_prediction_).to(device)
        return init.expand(n_samples, -1).clone()

    def _fit_stages(self, loss, X, y, w, raw, bins, rng, val):
        """The boosting loop; returns the number of stages fitted.

        ``val``: None, or the validation ``(X, y, w)`` for early stopping.
        """
        n = X.shape[0]
        raw_val = None if val is None else self._init_raw(val[0].shape[0], X.device)
        do_oob = self.subsample < 1.0
        n_inbag = max(1, int(self.subsample * n))
        history = None if val is None else np.full(self.n_iter_no_change, np.inf)
        in_bag = torch.ones(n, dtype=torch.bool, device=X.device)
        for i in range(self.n_estimators):
            if do_oob:
                mask = random_sample_mask(n, n_inbag, rng)
                in_bag = torch.from_numpy(mask).to(X.device)
                out = ~in_bag
                if i == 0:
                    initial_loss = loss.factor * loss.loss(y[out], raw[out], w[out])
            w_fit = w * in_bag if do_oob else w
            raw = self._fit_stage(i, loss, X, y, w_fit, raw, bins, rng)
            if do_oob:
                self.train_score_[i] = loss.factor * loss.loss(y[in_bag], raw[in_bag], w[in_bag])
                self.oob_scores_[i] = loss.factor * loss.loss(y[out], raw[out], w[out])
                previous = initial_loss if i == 0 else self.oob_scores_[i - 1]
                self.oob_improvement_[i] = previous - self.oob_scores_[i]
            else:
                self.train_score_[i] = loss.factor * loss.loss(y, raw, w)
            if self.verbose:
                print(f"stage {i + 1:4d}  train loss {self.train_score_[i]:.6f}")
            if history is not None:
                X_val, y_val, w_val = val
                raw_val += self.learning_rate * self._stage_raw(i, X_val)
                val_loss = loss.factor * loss.loss(y_val, raw_val, w_val)
                if np.any(val_loss + self.tol < history):
                    history[i % len(history)] = val_loss
                else:
                    return i + 1
        return self.n_estimators

    def _fit_stage(self, i, loss, X, y, w, raw, bins, rng):
        """Fit stage ``i``: one tree per column of the negative gradient."""
        neg_gradient = loss.negative_gradient(y, raw)
        for k in range(self.n_trees_per_iteration_):
            tree = self._make_tree(rng)
            tree.n_features_in_ = self.n_features_in_
            if hasattr(self, "feature_names_in_"):
                tree.feature_names_in_ = self.feature_names_in_
            g = neg_gradient[:, k].contiguous()
            tree._fit_tensors(X, g, w, bins)
            leaves = tree._leaves_of_tensor(X)
            values = loss.leaf_values(tree, leaves, y, k, g, w)
            set_leaf_values(tree, values)
            raw[:, k] += self.learning_rate * values[leaves]
            self.estimators_[i, k] = tree
        return raw

    def _stage_raw(self, i, X):
        """Stage ``i``'s trees' leaf values for tensor ``X`` (before the learning rate)."""
        columns = []
        for tree in self.estimators_[i]:
            leaves = tree._leaves_of_tensor(X)
            columns.append(torch.from_numpy(tree.tree_.value[:, 0, 0]).to(X.device)[leaves])
        return torch.stack(columns, dim=1)

    def _staged_raw(self, X):
        """Raw predictions after each stage (float64 tensors, shape (n, K))."""
        X = check_predict_input(self, X).to(self._device())
        raw = self._init_raw(X.shape[0], X.device)
        for i in range(self.estimators_.shape[0]):
            raw += self.learning_rate * self._stage_raw(i, X)
            yield raw.clone()  # the caller may keep it; the loop goes on adding to raw

    def _raw_predict(self, X):
        """Raw predictions of all stages (float64 tensor, shape (n, K))."""
        X = check_predict_input(self, X).to(self._device())
        raw = self._init_raw(X.shape[0], X.device)
        for i in range(self.estimators_.shape[0]):
            raw += self.learning_rate * self._stage_raw(i, X)
        return raw

    def apply(self, X):
        """The leaf each sample reaches in every tree.

        Returns
        -------
        ndarray of float64, shape (n_samples, n_estimators, K)
            (the regressor drops the last axis), as scikit-learn.
        """
        X = check_predict_input(self, X).to(self._device())
        leaves = [[t._leaves_of_tensor(X).cpu().numpy() for t in stage] for stage in self]
        return np.asarray(leaves, dtype=np.float64).transpose(2, 0, 1)

    def __iter__(self):
        return iter(self.estimators_)

    def __len__(self):
        return len(self.estimators_)

    def __getitem__(self, index):
        return self.estimators_[index]

    @property
    def feature_importances_(self):
        """Mean decrease in impurity, averaged over the trees with a split, summing to one."""
        check_is_fitted(self)
        relevant = [t for stage in self.estimators_ for t in stage if t.tree_.node_count > 1]
        if not relevant:
            return np.zeros(self.n_features_in_)
        mean = np.mean([t.tree_.compute_feature_importances(normalize=False)
                        for t in relevant], axis=0)  # fmt: skip
        return mean / mean.sum()


_PARAMS_DOC = """
    Parameters
    ----------
    learning_rate : float >= 0, default=0.1
        Shrinks each tree's contribution.
    n_estimators : int, default=100
        Boosting stages.
    subsample : float in (0, 1], default=1.0
        Fraction of rows each stage trains on, drawn without replacement as
        scikit-learn draws them (stochastic gradient boosting).
    min_samples_split, min_samples_leaf, min_weight_fraction_leaf, max_depth, \
    min_impurity_decrease, max_leaf_nodes, ccp_alpha, max_features
        Passed to every ``DecisionTreeRegressor`` (``max_depth`` defaults to 3;
        ``max_leaf_nodes`` grows each tree best-first, Chapter 2).
    random_state : int, RandomState or None, default=None
        Seeds the subsampling, the trees and the early-stopping split.
    tree_method : {"levelwise", "hist", "recursive"}, default="levelwise"
        The trees' builder (Chapter 7).
    max_bins : int, default=255
        Bins per feature for ``tree_method="hist"``.
    device : str, torch.device or None, default=None
        Where the tensors live (None: CPU).
    validation_fraction : float in (0, 1), default=0.1
        Rows held out for early stopping.
    n_iter_no_change : int or None, default=None
        Stop when the validation loss has not improved by ``tol`` on any of the
        last ``n_iter_no_change`` stages (None: no early stopping).
    tol : float >= 0, default=1e-4
    verbose : int, default=0
        Print the training loss after each stage.

    Attributes
    ----------
    estimators_ : ndarray of DecisionTreeRegressor, shape (n_estimators_, K)
    init_raw_prediction_ : ndarray of shape (K,)
        The raw prediction before the first tree (scikit-learn's ``init_``).
    train_score_ : ndarray of shape (n_estimators_,)
    oob_improvement_, oob_scores_ : ndarray of shape (n_estimators_,)
        Only when ``subsample < 1``.
    oob_score_ : float
        Only when ``subsample < 1``.
    n_estimators_ : int
    n_trees_per_iteration_ : int
    max_features_ : int
        The features each node of each tree looks at, from ``max_features`` and
        ``n_features_in_`` as scikit-learn computes it (None: all of them;
        ``"sqrt"``, ``"log2"``, a fraction: at least one).
    feature_importances_ : ndarray of shape (n_features,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only if X had column names)
"""

_REGRESSOR_DOC = """
    Examples
    --------
    Start from the mean 3; each stump halves what is left of the residuals +-2:

    >>> from treelib import GradientBoostingRegressor
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [1.0, 1.0, 5.0, 5.0]
    >>> reg = GradientBoostingRegressor(n_estimators=2, learning_rate=0.5, max_depth=1)
    >>> reg.fit(X, y).predict([[0.5], [2.5]]).tolist()
    [1.5, 4.5]
"""
_CLASSIFIER_DOC = """    classes_ : ndarray of shape (K,)
    n_classes_ : int

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from treelib import GradientBoostingClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = GradientBoostingClassifier(n_estimators=10).fit(X, y)
    >>> clf.estimators_.shape  # 10 stages, one tree per class
    (10, 3)
"""


class GradientBoostingRegressor(RegressorMixin, BaseGradientBoosting):
    """Gradient boosting for regression with squared error. Introduced in Chapter 8.

    Each stage fits a regression tree to the residuals ``y - F`` and adds
    ``learning_rate`` times its leaf means. Same trees and numbers as
    ``sklearn.ensemble.GradientBoostingRegressor`` (see the module docstring).
    """

    __doc__ += _PARAMS_DOC + _REGRESSOR_DOC

    def __init__(
        self,
        *,
        learning_rate=0.1,
        n_estimators=100,
        subsample=1.0,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_depth=3,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        ccp_alpha=0.0,
        random_state=None,
        max_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
        validation_fraction=0.1,
        n_iter_no_change=None,
        tol=1e-4,
        verbose=0,
    ):
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state
        self.max_features = max_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose

    def _make_loss(self, y, w):
        self.n_trees_per_iteration_ = 1
        return SquaredError()

    def predict(self, X):
        """Initial prediction plus ``learning_rate`` times every tree's leaf value."""
        return self._raw_predict(X)[:, 0].cpu().numpy()

    def staged_predict(self, X):
        """Predictions after each stage (a generator of arrays of shape (n_samples,))."""
        for raw in self._staged_raw(X):
            yield raw[:, 0].cpu().numpy()

    def apply(self, X):
        """The leaf each sample reaches in every tree, shape (n_samples, n_estimators_)."""
        return super().apply(X)[:, :, 0]


class GradientBoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    """Gradient boosting for classification with log-loss. Introduced in Chapter 8.

    Two classes: one tree per stage on the log-odds. K >= 3 classes: one tree per
    class per stage on the softmax scores. Leaves take one Newton step. Same
    trees and numbers as ``sklearn.ensemble.GradientBoostingClassifier`` (see the
    module docstring).
    """

    __doc__ += _PARAMS_DOC + _CLASSIFIER_DOC

    _is_classifier = True

    def __init__(
        self,
        *,
        learning_rate=0.1,
        n_estimators=100,
        subsample=1.0,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_depth=3,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        ccp_alpha=0.0,
        random_state=None,
        max_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
        validation_fraction=0.1,
        n_iter_no_change=None,
        tol=1e-4,
        verbose=0,
    ):
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.ccp_alpha = ccp_alpha
        self.random_state = random_state
        self.max_features = max_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose

    def _make_loss(self, y, w):
        self.n_classes_ = len(self.classes_)
        n_weighted = int((torch.bincount(y, w, minlength=self.n_classes_) > 0).sum())
        if n_weighted < 2:
            raise ValueError(
                f"y contains {n_weighted} class after sample_weight trimmed classes with "
                "zero weights, while a minimum of 2 classes are required."
            )
        self.n_trees_per_iteration_ = 1 if self.n_classes_ == 2 else self.n_classes_
        return self._loss_object()

    def _loss_object(self):
        return BinomialLoss() if self.n_classes_ == 2 else MultinomialLoss(self.n_classes_)

    def decision_function(self, X):
        """Raw scores: log-odds, shape (n_samples,), or per-class scores (n_samples, K)."""
        raw = self._raw_predict(X).cpu().numpy()
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def staged_decision_function(self, X):
        """Raw scores after each stage (a generator of arrays of shape (n_samples, K'))."""
        for raw in self._staged_raw(X):
            yield raw.cpu().numpy()

    def _classes_of(self, raw):
        if raw.shape[1] == 1:
            return self.classes_[(raw[:, 0] >= 0).cpu().numpy().astype(int)]
        return self.classes_[raw.argmax(1).cpu().numpy()]

    def predict(self, X):
        """The class with the largest score (class 1 when the log-odds are >= 0)."""
        return self._classes_of(self._raw_predict(X))

    def staged_predict(self, X):
        """Predicted classes after each stage."""
        for raw in self._staged_raw(X):
            yield self._classes_of(raw)

    def predict_proba(self, X):
        """Class probabilities: sigmoid of the log-odds, or softmax of the scores."""
        raw = self._raw_predict(X)  # checks that the model is fitted
        return self._loss_object().predict_proba(raw).cpu().numpy()

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))

    def staged_predict_proba(self, X):
        """Class probabilities after each stage."""
        for raw in self._staged_raw(X):  # checks that the model is fitted
            yield self._loss_object().predict_proba(raw).cpu().numpy()
