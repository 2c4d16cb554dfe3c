"""Histogram gradient boosting: Newton trees grown leaf-wise on binned features.

Introduced in Chapter 9 (``notebooks/09_hist_gradient_boosting``). The engine
(bins, histograms, the split finder, the grower, the predictors) is
:mod:`treelib.hist_grower`; this module is the boosting loop around it, the
estimators :class:`HistGradientBoostingRegressor` and
:class:`HistGradientBoostingClassifier`.

What scikit-learn 1.9.1 does, read in
``sklearn/ensemble/_hist_gradient_boosting`` and ``sklearn/_loss``, and what
treelib does the same way (torch arithmetic; the random numbers drawn in
scikit-learn's order, so that a fit with the same ``random_state`` draws the
same ones):

- **Random numbers.** ``fit`` draws two integers from
  ``check_random_state(random_state)``: ``_random_seed`` (the validation split,
  the binning subsample, the small training set of the scorers) and the seed of
  a ``numpy.random.default_rng`` for feature subsampling (``max_features``).
  A warm start keeps both, so it splits and bins as the first fit did.
- **Validation set.** With early stopping and no ``X_val``, scikit-learn's
  ``train_test_split(..., test_size=validation_fraction,
  random_state=_random_seed)`` holds rows out, stratified by class for the
  classifier. ``early_stopping="auto"`` means "more than 10,000 rows".
- **Bins** (engine). Every feature is cut once per fit into at most
  ``max_bins`` quantile bins, computed on a subsample of 200,000 rows drawn with
  ``_random_seed`` (midpoints between distinct values when a feature has fewer
  distinct values than bins); one more bin, the last, holds the missing values.
  A categorical feature's bins are its categories, encoded ``0..c-1`` by an
  ``OrdinalEncoder`` that puts the categorical columns first; an unknown or
  negative category is a missing value.
- **Losses.** Half losses, as scikit-learn's: half squared error, absolute
  error, pinball (``quantile``), half Poisson and half Gamma deviance on a log
  link, half binomial and multinomial log-loss. The baseline, before the first
  tree, is the loss's ``fit_intercept_only``: the weighted mean on the link
  scale (clipped away from the link's bounds), the median or quantile for the
  absolute and pinball losses, the symmetric log prior ``log(p_k / gmean(p))``
  for K classes. Gradients and hessians are computed in float64 and **stored in
  float32** (``G_H_DTYPE``), sample weights multiplied in. Where the hessian is
  constant (squared, absolute and pinball losses without weights) it is the
  single number 1 (a tensor of shape (1,)), and the engine counts samples
  instead of summing hessians.
- **Trees** (engine). Each iteration grows one tree per raw score (K for K >= 3
  classes, else 1) on the gradients and hessians: leaf-wise (best-first, the
  leaf of largest gain splits next) up to ``max_leaf_nodes`` leaves, with
  gradient and hessian histograms per node, the smaller child's built and the
  larger's obtained by subtraction. The gain of a split is
  ``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)`` (``l2`` is
  ``l2_regularization``), the leaf value ``-G / (H + l2)`` times
  ``learning_rate`` (the shrinkage is inside the tree). Missing values go to
  the side that gives the larger gain (tried both ways; a feature without NaN
  in training sends them to the child with more samples). A categorical split
  sorts the categories by ``G/(H + smoothing)`` and scans that order, Fisher's
  trick. Monotonic constraints bound the children's values; interaction
  constraints restrict the features a branch may use.
- **Non-smooth losses.** For absolute error and the pinball loss the Newton
  value of a leaf is replaced after growing by the (weighted) median or quantile
  of its samples' residuals ``y - raw``, times ``learning_rate``
  (``_update_leaves_values``).
- **Raw predictions** (float64). The training set's are updated from the leaves
  the grower kept (no traversal); the validation set's from its binned rows
  (``predict_binned``); new data goes through the thresholds on raw values.
- **Early stopping.** The scores are the negative loss (``scoring="loss"``) on
  the training and validation sets, or a scorer's values on a stratified
  subsample of at most 10,000 training rows (``resample`` with
  ``_random_seed``) and on the validation set; ``train_score_[0]`` is the
  baseline's. Fitting stops when none of the last ``n_iter_no_change`` scores
  beats the one before them by more than ``tol``.
"""

import itertools
from contextlib import contextmanager, nullcontext, suppress
from functools import partial
from numbers import Integral, Real
from time import time

import numpy as np
import torch
from sklearn._loss import loss as sklearn_loss
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.compose import ColumnTransformer
from sklearn.metrics import check_scoring
from sklearn.metrics._scorer import _SCORERS
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import FunctionTransformer, LabelEncoder, OrdinalEncoder
from sklearn.utils import check_random_state, check_scalar, compute_sample_weight, resample
from sklearn.utils._missing import is_scalar_nan
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_monotonic_cst,
    _check_sample_weight,
    _check_y,
    check_array,
    check_consistent_length,
    check_is_fitted,
    validate_data,
)

from . import compiled, hist_grower
from ._validation import _as_tensor
from .kernels import elementwise_in_pieces


def _check_categorical_features_pandas(X, categorical_features):
    """scikit-learn 1.9.1's ``_check_categorical_features`` for pandas and arrays.

    scikit-learn 1.6 (Colab's) has no such function, and 1.9.1's reads the dtypes
    through narwhals; this one reads pandas' dtypes. ``categorical_features`` (a bool
    mask, indices, names or ``"from_dtype"``) -> a bool mask, or None.
    """
    dtypes = getattr(X, "dtypes", None)
    X_is_dataframe = dtypes is not None and hasattr(X, "columns")
    by_dtype = isinstance(categorical_features, str) and categorical_features == "from_dtype"
    if categorical_features is None or (by_dtype and not X_is_dataframe):
        return None
    if by_dtype:
        categorical_features = np.asarray([str(d) == "category" for d in dtypes])
    else:
        categorical_features = np.asarray(categorical_features)
    if categorical_features.size == 0:
        return None
    if categorical_features.dtype.kind not in ("i", "b", "U", "O"):
        raise ValueError(
            "categorical_features must be an array-like of bool, int or "
            f"str, got: {categorical_features.dtype.name}."
        )
    if categorical_features.dtype.kind == "O":
        types = set(type(f) for f in categorical_features)
        if types != {str}:
            raise ValueError(
                "categorical_features must be an array-like of bool, int or "
                f"str, got: {', '.join(sorted(t.__name__ for t in types))}."
            )
    n_features = X.shape[1]
    if categorical_features.dtype.kind in ("U", "O"):
        if not X_is_dataframe:
            raise ValueError(
                "categorical_features should be passed as an array of "
                "integers or as a boolean mask when the model is fitted "
                "on data without feature names."
            )
        is_categorical = np.zeros(n_features, dtype=bool)
        feature_names = list(X.columns)
        for feature_name in categorical_features:
            try:
                is_categorical[feature_names.index(feature_name)] = True
            except ValueError as e:
                raise ValueError(
                    f"categorical_features has an item value '{feature_name}' "
                    "which is not a valid feature name of the training "
                    f"data. Observed feature names: {feature_names}"
                ) from e
    elif categorical_features.dtype.kind == "i":
        if np.max(categorical_features) >= n_features or np.min(categorical_features) < 0:
            raise ValueError(
                "categorical_features set as integer indices must be in [0, n_features - 1]"
            )
        is_categorical = np.zeros(n_features, dtype=bool)
        is_categorical[categorical_features] = True
    else:
        if categorical_features.shape[0] != n_features:
            raise ValueError(
                "categorical_features set as a boolean mask "
                "must have shape (n_features,), got: "
                f"{categorical_features.shape}"
            )
        is_categorical = categorical_features
    if not np.any(is_categorical):
        return None
    return is_categorical


try:  # scikit-learn >= 1.7
    from sklearn.utils.validation import _check_categorical_features
except ImportError:  # scikit-learn 1.6
    _check_categorical_features = _check_categorical_features_pandas


X_DTYPE = np.float64  # scikit-learn's X_DTYPE: the raw features
G_H_DTYPE = torch.float32  # scikit-learn's G_H_DTYPE: gradients and hessians
EPS = float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------- losses


def _average(values, weight):
    """``np.average(values, weights=weight, axis=0)`` in torch."""
    if weight is None:
        return values.mean(0)
    w = weight if values.ndim == 1 else weight[:, None]
    return (values * w).sum(0) / weight.sum()


def _weighted_percentile(values, weight, rank):
    """scikit-learn's ``_weighted_percentile`` (``inverted_cdf``) of a 1-d tensor."""
    if bool((weight == 0).all()):
        return torch.tensor(float("nan"), dtype=torch.float64, device=values.device)
    order = torch.argsort(values)
    cdf = torch.cumsum(weight[order], 0)
    target = rank / 100 * cdf[-1]
    if float(target) == 0.0:
        target = torch.nextafter(target, target + 1)
    index = torch.searchsorted(cdf, target.reshape(1)).clamp(0, len(values) - 1)
    return values[order[index[0]]]


class _Loss:
    """What the boosting loop needs of a loss (scikit-learn's ``BaseLoss``)."""

    differentiable = True
    is_multiclass = False
    low = -np.inf  # the link's interval of y_pred, bounds excluded
    high = np.inf

    def __init__(self, sample_weight=None):
        self.constant_hessian = False

    def link(self, y_pred):
        return y_pred

    def inverse(self, raw):
        return raw

    def fit_intercept_only(self, y, weight=None):
        """The best constant raw prediction: the link of the weighted mean, clipped."""
        y_pred = _average(y, weight)
        eps = 10 * EPS
        lo = None if self.low == -np.inf else self.low + eps
        hi = None if self.high == np.inf else self.high - eps
        if lo is not None or hi is not None:
            y_pred = y_pred.clamp(lo, hi)
        return self.link(y_pred)

    def __call__(self, y, raw, weight=None):
        """The weighted mean loss (``raw`` of shape (n,) or (n, 1))."""
        raw = raw.reshape(-1)
        losses = torch.empty_like(raw)
        # (element by element, a piece of the samples at a time: less memory)
        elementwise_in_pieces(lambda y, raw: (self.pointwise(y, raw),), (y, raw), (losses,))
        return float(_average(losses, weight))

    def gradient_hessian(self, y, raw, weight, gradient, hessian):
        """Fill ``gradient`` (float32, (n, 1)) and ``hessian`` ((n, 1) or (1,))."""

        def weighted(y, raw, weight):
            g, h = self.grad_hess(y, raw)
            return (g, h) if weight is None else (g * weight, h * weight)

        outs = (gradient[:, 0],) if self.constant_hessian else (gradient[:, 0], hessian[:, 0])
        elementwise_in_pieces(weighted, (y, raw[:, 0], weight), outs)  # (as __call__)


class HalfSquaredError(_Loss):
    """``(raw - y)^2 / 2``; gradient ``raw - y``, hessian 1 (Chapter 9)."""

    def __init__(self, sample_weight=None):
        self.constant_hessian = sample_weight is None

    def pointwise(self, y, raw):
        return 0.5 * (raw - y) * (raw - y)

    def grad_hess(self, y, raw):
        return raw - y, torch.ones_like(raw)


class AbsoluteError(_Loss):
    """``|raw - y|``; gradient its sign, hessian 1, leaves set to medians (Chapter 9)."""

    differentiable = False

    def __init__(self, sample_weight=None):
        self.constant_hessian = sample_weight is None

    def fit_intercept_only(self, y, weight=None):
        if weight is None:
            return torch.quantile(y, 0.5)
        return _weighted_percentile(y, weight, 50)

    def pointwise(self, y, raw):
        return (raw - y).abs()

    def grad_hess(self, y, raw):
        return torch.where(raw > y, 1.0, -1.0).to(raw.dtype), torch.ones_like(raw)


class PinballLoss(_Loss):
    """Pinball loss of level ``quantile``; leaves set to quantiles (Chapter 9)."""

    differentiable = False

    def __init__(self, sample_weight=None, quantile=0.5):
        check_scalar(quantile, "quantile", target_type=Real, min_val=0, max_val=1,
                     include_boundaries="neither")  # fmt: skip
        self.quantile = float(quantile)
        self.constant_hessian = sample_weight is None

    def fit_intercept_only(self, y, weight=None):
        if weight is None:
            return torch.quantile(y, self.quantile)
        return _weighted_percentile(y, weight, 100 * self.quantile)

    def pointwise(self, y, raw):
        q = self.quantile
        return torch.where(y >= raw, q * (y - raw), (1.0 - q) * (raw - y))

    def grad_hess(self, y, raw):
        q = self.quantile
        return torch.where(y >= raw, -q, 1.0 - q).to(raw.dtype), torch.ones_like(raw)


class HalfPoissonLoss(_Loss):
    """``exp(raw) - y raw`` on the log link (Chapter 9)."""

    low, high = 0.0, np.inf

    def link(self, y_pred):
        return torch.log(y_pred)

    def inverse(self, raw):
        return torch.exp(raw)

    def pointwise(self, y, raw):
        return torch.exp(raw) - y * raw

    def grad_hess(self, y, raw):
        h = torch.exp(raw)
        return h - y, h


class HalfGammaLoss(HalfPoissonLoss):
    """``raw + y exp(-raw)`` on the log link (Chapter 9)."""

    def pointwise(self, y, raw):
        return raw + y * torch.exp(-raw)

    def grad_hess(self, y, raw):
        h = y * torch.exp(-raw)
        return 1.0 - h, h


def _compiled_loss(*tensors):
    """Whether a loss runs as :mod:`treelib.compiled`'s loop: float64 tensors on the CPU."""
    tensors = [t for t in tensors if t is not None]
    return (
        all(t.device.type == "cpu" and t.dtype == torch.float64 for t in tensors)
        and compiled.available()
    )


def _log1pexp(x):
    """scikit-learn's piecewise ``log(1 + exp(x))``, each sample by its own piece.

    ``exp(x)`` for ``x <= -37``, ``log1p(exp(x))`` up to ``-2``, ``log(1 + exp(x))``
    up to ``18``, ``x + exp(-x)`` up to ``33.3``, then ``x``; ``exp(x)`` is computed
    once, and the two large-``x`` pieces only on the (few) samples they hold.
    """
    e = torch.exp(x)
    out = torch.where(x <= -2, torch.log1p(e), torch.log(1.0 + e))
    out = torch.where(x <= -37, e, out)
    big = (x > 18).nonzero().squeeze(1)
    if len(big):
        v = x[big]
        out[big] = torch.where(v <= 33.3, v + torch.exp(-v), v)
    return out


class HalfBinomialLoss(_Loss):
    """``log(1 + exp(raw)) - y raw`` on the logit link (Chapter 9)."""

    low, high = 0.0, 1.0

    def link(self, y_pred):
        return torch.log(y_pred / (1 - y_pred))

    def inverse(self, raw):
        return torch.sigmoid(raw)

    def pointwise(self, y, raw):
        return _log1pexp(raw) - y * raw

    def __call__(self, y, raw, weight=None):
        if not _compiled_loss(y, raw, weight):
            return super().__call__(y, raw, weight)
        losses = compiled.binomial_loss(y.numpy(), raw.reshape(-1).numpy())
        return float(_average(torch.from_numpy(losses), weight))

    def gradient_hessian(self, y, raw, weight, gradient, hessian):
        if not _compiled_loss(y, raw, weight):
            return super().gradient_hessian(y, raw, weight, gradient, hessian)
        # (one compiled loop on the CPU, as scikit-learn's: treelib.compiled)
        compiled.binomial_gradients(
            y.numpy(), raw[:, 0].numpy(), None if weight is None else weight.numpy(),
            gradient[:, 0].numpy(), hessian[:, 0].numpy(),
        )  # fmt: skip

    def grad_hess(self, y, raw):
        t = torch.exp(-raw)
        one_t = 1 + t
        g = ((1 - y) - y * t) / one_t
        h = t / one_t**2
        small = (raw <= -37).nonzero().squeeze(1)  # scikit-learn's first-order Taylor branch
        if len(small):
            e = torch.exp(raw[small])
            g[small] = e - y[small]
            h[small] = e
        return g, h

    def predict_proba(self, raw):
        p = self.inverse(raw.reshape(-1))
        return torch.stack([1 - p, p], dim=1)


class HalfMultinomialLoss(_Loss):
    """``logsumexp(raw) - raw_y``, one raw score per class (Chapter 9)."""

    is_multiclass = True

    def __init__(self, sample_weight=None, n_classes=3):
        self.constant_hessian = False
        self.n_classes = n_classes

    def fit_intercept_only(self, y, weight=None):
        onehot = torch.nn.functional.one_hot(y.long(), self.n_classes).to(torch.float64)
        p = _average(onehot, weight).clamp(EPS, 1 - EPS)
        gmean = torch.exp(torch.log(p).mean())
        return torch.log(p / gmean)

    def inverse(self, raw):
        return self.predict_proba(raw)

    def __call__(self, y, raw, weight=None):
        top = raw.max(1).values
        per_sample = torch.log(torch.exp(raw - top[:, None]).sum(1)) + top
        per_sample = per_sample - raw.gather(1, y.long()[:, None])[:, 0]
        return float(_average(per_sample, weight))

    def gradient_hessian(self, y, raw, weight, gradient, hessian):
        p = self.predict_proba(raw)
        onehot = torch.nn.functional.one_hot(y.long(), self.n_classes).to(torch.float64)
        g, h = p - onehot, p * (1.0 - p)
        if weight is not None:
            g, h = g * weight[:, None], h * weight[:, None]
        gradient.copy_(g)
        hessian.copy_(h)

    def predict_proba(self, raw):
        e = torch.exp(raw - raw.max(1).values[:, None])
        return e / e.sum(1, keepdim=True)


_LOSS_CLASSES = {
    cls.__name__: cls
    for cls in (HalfSquaredError, AbsoluteError, HalfPoissonLoss, HalfGammaLoss, HalfBinomialLoss)
}
_LOSSES = {
    "squared_error": HalfSquaredError,
    "absolute_error": AbsoluteError,
    "poisson": HalfPoissonLoss,
    "gamma": HalfGammaLoss,
    "quantile": PinballLoss,
}


def _loss_from_sklearn(loss):
    """treelib's loss for a scikit-learn loss object passed as ``loss``."""
    name = type(loss).__name__
    if name == "PinballLoss":
        ours = PinballLoss(quantile=loss.closs.quantile)
    elif name == "HalfMultinomialLoss":
        ours = HalfMultinomialLoss(n_classes=loss.n_classes)
    elif name in _LOSS_CLASSES:
        ours = _LOSS_CLASSES[name]()
    else:
        raise ValueError(f"loss={name}() has no treelib counterpart.")
    ours.constant_hessian = loss.constant_hessian
    return ours


def _update_leaves_values(loss, grower, y, raw, weight):
    """Leaf values of a non-smooth loss: the median/quantile of the leaf's residuals.

    As scikit-learn's ``_update_leaves_values``: ``shrinkage *
    loss.fit_intercept_only(y - raw)`` over each leaf's samples (weighted);
    ``l2_regularization`` is ignored there.
    """
    for leaf in grower.finalized_leaves:
        indices = torch.as_tensor(leaf.sample_indices, device=y.device).long()
        w = None if weight is None else weight[indices]
        update = loss.fit_intercept_only(y[indices] - raw[indices], w)
        leaf.value = grower.shrinkage * float(update)


@contextmanager
def _patch_raw_predict(estimator, raw_predictions):
    """Make ``_raw_predict`` return ``raw_predictions`` (scikit-learn's trick for scorers)."""
    orig_raw_predict = estimator._raw_predict
    estimator._raw_predict = lambda *args, **kwargs: raw_predictions
    try:
        yield estimator
    finally:
        estimator._raw_predict = orig_raw_predict


# ------------------------------------------------------------------------ estimators


class BaseHistGradientBoosting(BaseEstimator):
    """What the two histogram gradient boosting estimators share. Introduced in Chapter 9."""

    _parameter_constraints: dict = {
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "max_features": [Interval(RealNotInt, 0, 1, closed="right")],
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [list, tuple, StrOptions({"pairwise", "no_interactions"}), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
        "warm_start": ["boolean"],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "scoring": [str, callable, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "device": [str, torch.device, None],
    }

    def _device(self):
        try:
            return torch.device("cpu" if self.device is None else self.device)
        except (RuntimeError, TypeError) as error:
            raise ValueError(f"device must name a torch device; got {self.device!r}.") from error

    def _validate_parameters(self):
        if self.monotonic_cst is not None and self.n_trees_per_iteration_ != 1:
            raise ValueError(
                "monotonic constraints are not supported for multiclass classification."
            )

    def _finalize_sample_weight(self, sample_weight, y):
        return sample_weight

    def _preprocess_X(self, X, *, reset):
        """Validate X (float64, NaN allowed); at fit, encode the categorical features.

        As scikit-learn: an ``OrdinalEncoder`` in a ``ColumnTransformer`` encodes
        the categorical columns ``0..c-1`` and puts them first.
        """
        if isinstance(X, torch.Tensor):
            X = X.detach().cpu().numpy()
        check_X_kwargs = dict(dtype=[X_DTYPE], ensure_all_finite=False)
        if not reset:
            if self._preprocessor is None:
                return validate_data(self, X, reset=False, **check_X_kwargs)
            return self._preprocessor.transform(X)

        self.is_categorical_ = _check_categorical_features(X, self.categorical_features)
        if self.is_categorical_ is None:
            self._preprocessor = None
            self._is_categorical_remapped = None
            X = validate_data(self, X, **check_X_kwargs)
            return X, None

        n_features = X.shape[1]
        ordinal_encoder = OrdinalEncoder(
            categories="auto",
            handle_unknown="use_encoded_value",
            unknown_value=np.nan,
            encoded_missing_value=np.nan,
            dtype=X_DTYPE,
        )
        check_X = partial(check_array, **check_X_kwargs)
        self._preprocessor = ColumnTransformer(
            [
                ("encoder", ordinal_encoder, self.is_categorical_),
                ("numerical", FunctionTransformer(check_X), ~self.is_categorical_),
            ]
        )
        self._preprocessor.set_output(transform="default")
        X = self._preprocessor.fit_transform(X)
        known_categories = self._check_categories()
        self.n_features_in_ = self._preprocessor.n_features_in_
        with suppress(AttributeError):
            self.feature_names_in_ = self._preprocessor.feature_names_in_
        categorical_remapped = np.zeros(n_features, dtype=bool)
        categorical_remapped[self._preprocessor.output_indices_["encoder"]] = True
        self._is_categorical_remapped = categorical_remapped
        return X, known_categories

    def _check_categories(self):
        """The encoded categories of every categorical feature (None elsewhere)."""
        encoder = self._preprocessor.named_transformers_["encoder"]
        known_categories = [None] * self._preprocessor.n_features_in_
        categorical_column_indices = np.arange(self._preprocessor.n_features_in_)[
            self._preprocessor.output_indices_["encoder"]
        ]
        for feature_idx, categories in zip(categorical_column_indices, encoder.categories_):
            if len(categories) and is_scalar_nan(categories[-1]):
                categories = categories[:-1]
            if categories.size > self.max_bins:
                try:
                    feature_name = repr(encoder.feature_names_in_[feature_idx])
                except AttributeError:
                    feature_name = f"at index {feature_idx}"
                raise ValueError(
                    f"Categorical feature {feature_name} is expected to "
                    f"have a cardinality <= {self.max_bins} but actually "
                    f"has a cardinality of {categories.size}."
                )
            known_categories[feature_idx] = np.arange(len(categories), dtype=X_DTYPE)
        return known_categories

    def _check_interaction_cst(self, n_features):
        """Interaction constraints as a list of sets of feature indices (or None)."""
        if self.interaction_cst is None:
            return None
        if self.interaction_cst == "no_interactions":
            interaction_cst = [[i] for i in range(n_features)]
        elif self.interaction_cst == "pairwise":
            interaction_cst = itertools.combinations(range(n_features), 2)
        else:
            interaction_cst = self.interaction_cst
        try:
            constraints = [set(group) for group in interaction_cst]
        except TypeError:
            raise ValueError(
                "Interaction constraints must be a sequence of tuples or lists, got:"
                f" {self.interaction_cst!r}."
            ) from None
        for group in constraints:
            for x in group:
                if not (isinstance(x, Integral) and 0 <= x < n_features):
                    raise ValueError(
                        "Interaction constraints must consist of integer indices in"
                        f" [0, n_features - 1] = [0, {n_features - 1}], specifying the"
                        " position of features, got invalid indices:"
                        f" {group!r}"
                    )
        rest = set(range(n_features)) - set().union(*constraints)
        if len(rest) > 0:
            constraints.append(rest)
        return constraints

    def _rows(self, indices):
        """Row indices (a slice, or a numpy array made a tensor on the device)."""
        if isinstance(indices, slice):
            return indices
        return torch.as_tensor(indices, device=self._device_)

    def _tensor(self, a, dtype=torch.float64):
        if a is None:
            return None
        return _as_tensor(a).to(dtype=dtype, device=self._device_)  # copies read-only arrays

    def fit(self, X, y, sample_weight=None, *, X_val=None, y_val=None, sample_weight_val=None):
        """Fit up to ``max_iter`` iterations (fewer if early stopping ends the fit).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            NaN is a missing value.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None
        X_val, y_val, sample_weight_val : optional validation data for early stopping.

        Returns
        -------
        self
        """
        self._validate_params()
        fit_start_time = time()
        self._device_ = self._device()
        X, known_categories = self._preprocess_X(X, reset=True)
        y = _check_y(y, estimator=self)
        y = self._encode_y(y)
        check_consistent_length(X, y)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
            # as scikit-learn: partial dependence's recursion reads the node counts,
            # which ignore the weights, so it refuses a model fitted with them
            self._fitted_with_sw = True
        sample_weight = self._finalize_sample_weight(sample_weight, y)

        validation_data_provided = X_val is not None or y_val is not None
        if validation_data_provided:
            if y_val is None:
                raise ValueError("X_val is provided, but y_val was not provided.")
            if X_val is None:
                raise ValueError("y_val is provided, but X_val was not provided.")
            X_val = self._preprocess_X(X_val, reset=False)
            y_val = _check_y(y_val, estimator=self)
            y_val = self._encode_y_val(y_val)
            check_consistent_length(X_val, y_val)
            if sample_weight_val is not None:
                sample_weight_val = _check_sample_weight(sample_weight_val, X_val,
                                                         dtype=np.float64)  # fmt: skip
            if self.early_stopping is False:
                raise ValueError(
                    "X_val and y_val are passed to fit while at the same time "
                    "early_stopping is False. When passing X_val and y_val to fit,"
                    "early_stopping should be set to either 'auto' or True."
                )

        # The random numbers, in scikit-learn's order: a warm start keeps them.
        rng = check_random_state(self.random_state)
        if not self.warm_start or not self._is_fitted():
            self._random_seed = rng.randint(np.iinfo(np.uint32).max, dtype="u8")
            feature_subsample_seed = rng.randint(np.iinfo(np.uint32).max, dtype="u8")
            self._feature_subsample_rng = np.random.default_rng(feature_subsample_seed)

        self._validate_parameters()
        monotonic_cst = _check_monotonic_cst(self, self.monotonic_cst)
        if self.is_categorical_ is not None:  # categorical features come first
            monotonic_cst = np.concatenate(
                (monotonic_cst[self.is_categorical_], monotonic_cst[~self.is_categorical_])
            )
        n_samples, self._n_features = X.shape
        interaction_cst = self._check_interaction_cst(self._n_features)
        self._in_fit = True
        if isinstance(self.loss, str):
            self._loss = self._get_loss(sample_weight=sample_weight)
        else:
            self._loss = _loss_from_sklearn(self.loss)
        if self.early_stopping == "auto":
            self.do_early_stopping_ = n_samples > 10_000
        else:
            self.do_early_stopping_ = self.early_stopping

        self._use_validation_data = self.validation_fraction is not None or validation_data_provided
        if self.do_early_stopping_ and self._use_validation_data and not validation_data_provided:
            stratify = y if is_classifier(self) else None
            if sample_weight is None:
                X_train, X_val, y_train, y_val = train_test_split(
                    X, y, test_size=self.validation_fraction, stratify=stratify,
                    random_state=self._random_seed,
                )  # fmt: skip
                sample_weight_train = sample_weight_val = None
            else:
                X_train, X_val, y_train, y_val, sample_weight_train, sample_weight_val = (
                    train_test_split(
                        X, y, sample_weight, test_size=self.validation_fraction,
                        stratify=stratify, random_state=self._random_seed,
                    )
                )  # fmt: skip
        else:
            X_train, y_train, sample_weight_train = X, y, sample_weight
            if not validation_data_provided:
                X_val = y_val = sample_weight_val = None

        # Bins: max_bins for the values, one more for the missing values.
        n_bins = self.max_bins + 1
        self._bin_mapper = hist_grower.BinMapper(
            n_bins=n_bins,
            is_categorical=self._is_categorical_remapped,
            known_categories=known_categories,
            random_state=self._random_seed,
        )
        tic = time()
        self._bin_mapper.fit(X_train, sample_weight=sample_weight_train)
        X_binned_train = self._bin_mapper.transform(self._tensor(X_train), device=self._device_)
        X_binned_val = None
        if X_val is not None:
            X_binned_val = self._bin_mapper.transform(self._tensor(X_val), device=self._device_)
        if self.verbose:
            print(f"Binning {X_train.nbytes / 1e9:.3f} GB of training data: "
                  f"{time() - tic:.3f} s")  # fmt: skip
        missing_bin = self._bin_mapper.missing_values_bin_idx_
        has_missing_values = (X_binned_train == missing_bin).any(0).to(torch.uint8).cpu().numpy()

        y_train_np, y_val_np = y_train, y_val  # numpy, for the scorers
        y_train, w_train = self._tensor(y_train), self._tensor(sample_weight_train)
        if y_val is not None:
            y_val, w_val = self._tensor(y_val), self._tensor(sample_weight_val)
        else:
            w_val = None
        n_samples = X_binned_train.shape[0]
        K = self.n_trees_per_iteration_
        scoring_is_predefined_string = self.scoring in _SCORERS
        need_raw_predictions_val = X_binned_val is not None and (
            scoring_is_predefined_string or self.scoring == "loss"
        )
        raw_predictions_val = None

        if not (self._is_fitted() and self.warm_start):
            for var in ("train_score_", "validation_score_"):
                self.__dict__.pop(var, None)
            baseline = self._loss.fit_intercept_only(y_train, w_train).reshape(1, -1)
            self._baseline_prediction = baseline.cpu().numpy()
            # (K, n): each tree's raw scores are a contiguous row
            raw_T = baseline.T.expand(K, n_samples).contiguous()
            self._predictors = predictors = []
            self._scorer = None
            self.train_score_ = []
            self.validation_score_ = []
            if self.do_early_stopping_:
                if need_raw_predictions_val:
                    raw_predictions_val = baseline.expand(X_binned_val.shape[0], K).clone()
                if self.scoring == "loss":
                    self._check_early_stopping_loss(
                        raw_T.T, y_train, w_train, raw_predictions_val, y_val, w_val
                    )
                else:
                    self._scorer = check_scoring(self, self.scoring)
                    small = self._get_small_trainset(
                        X_binned_train, y_train_np, sample_weight_train, self._random_seed
                    )
                    X_small, y_small, w_small, indices_small = small
                    indices_small = self._rows(indices_small)
                    self._check_early_stopping_scorer(
                        X_small,
                        y_small,
                        w_small,
                        X_binned_val,
                        y_val_np,
                        sample_weight_val,
                        raw_T.T[indices_small] if scoring_is_predefined_string else None,
                        raw_predictions_val,
                    )
            begin_at_stage = 0
        else:
            if self.max_iter < self.n_iter_:
                raise ValueError(
                    f"max_iter={self.max_iter} must be larger than or equal to "
                    f"n_iter_={self.n_iter_} when warm_start==True"
                )
            self.train_score_ = self.train_score_.tolist()
            self.validation_score_ = self.validation_score_.tolist()
            raw_T = self._raw_predict(X_binned_train).T.contiguous()
            if self.do_early_stopping_ and need_raw_predictions_val:
                raw_predictions_val = self._raw_predict(X_binned_val)
            if self.do_early_stopping_ and self.scoring != "loss":
                small = self._get_small_trainset(
                    X_binned_train, y_train_np, sample_weight_train, self._random_seed
                )
                X_small, y_small, w_small, indices_small = small
                indices_small = self._rows(indices_small)
            predictors = self._predictors
            begin_at_stage = self.n_iter_

        gradient = torch.empty((n_samples, K), dtype=G_H_DTYPE, device=self._device_)
        if self._loss.constant_hessian:
            hessian = torch.ones((1, 1), dtype=G_H_DTYPE, device=self._device_)
        else:
            hessian = torch.empty((n_samples, K), dtype=G_H_DTYPE, device=self._device_)

        for iteration in range(begin_at_stage, self.max_iter):
            if self.verbose >= 2:
                iteration_start_time = time()
                print(f"[{iteration + 1}/{self.max_iter}] ", end="", flush=True)
            self._loss.gradient_hessian(y_train, raw_T.T, w_train, gradient, hessian)
            predictors.append([])
            for k in range(K):
                grower = hist_grower.TreeGrower(
                    X_binned=X_binned_train,
                    gradients=gradient[:, k].contiguous(),
                    hessians=hessian[:, k].contiguous(),
                    n_bins=n_bins,
                    n_bins_non_missing=self._bin_mapper.n_bins_non_missing_,
                    has_missing_values=has_missing_values,
                    is_categorical=self._is_categorical_remapped,
                    monotonic_cst=monotonic_cst,
                    interaction_cst=interaction_cst,
                    max_leaf_nodes=self.max_leaf_nodes,
                    max_depth=self.max_depth,
                    min_samples_leaf=self.min_samples_leaf,
                    l2_regularization=self.l2_regularization,
                    feature_fraction_per_split=self.max_features,
                    rng=self._feature_subsample_rng,
                    shrinkage=self.learning_rate,
                )
                grower.grow()
                if not self._loss.differentiable:
                    _update_leaves_values(self._loss, grower, y_train, raw_T[k], w_train)
                predictor = grower.make_predictor(
                    binning_thresholds=self._bin_mapper.bin_thresholds_
                )
                predictors[-1].append(predictor)
                grower.add_to_raw_predictions(raw_T[k])
                grower = None  # (its samples and buffers freed before the next tree's)

            should_early_stop = False
            if self.do_early_stopping_:
                if need_raw_predictions_val:
                    for k, pred in enumerate(predictors[-1]):
                        raw_predictions_val[:, k] += pred.predict_binned(X_binned_val, missing_bin)
                if self.scoring == "loss":
                    should_early_stop = self._check_early_stopping_loss(
                        raw_T.T, y_train, w_train, raw_predictions_val, y_val, w_val
                    )
                else:
                    should_early_stop = self._check_early_stopping_scorer(
                        X_small,
                        y_small,
                        w_small,
                        X_binned_val,
                        y_val_np,
                        sample_weight_val,
                        raw_T.T[indices_small] if scoring_is_predefined_string else None,
                        raw_predictions_val,
                    )
            if self.verbose >= 2:
                self._print_iteration_stats(iteration_start_time)
            if should_early_stop:
                break

        if self.verbose:
            n_leaves = sum(p.get_n_leaf_nodes() for it in self._predictors for p in it)
            n_trees = sum(len(it) for it in self._predictors)
            print(f"Fit {n_trees} trees in {time() - fit_start_time:.3f} s, "
                  f"({n_leaves} total leaves)")  # fmt: skip
        self.train_score_ = np.asarray(self.train_score_)
        self.validation_score_ = np.asarray(self.validation_score_)
        del self._in_fit
        return self

    def _is_fitted(self):
        return len(getattr(self, "_predictors", [])) > 0

    def _get_small_trainset(self, X_binned_train, y_train, sample_weight_train, seed):
        """At most 10,000 training rows for the scorers, drawn as scikit-learn draws them."""
        subsample_size = 10000
        if X_binned_train.shape[0] > subsample_size:
            indices = np.arange(X_binned_train.shape[0])
            stratify = y_train if is_classifier(self) else None
            indices = resample(
                indices, n_samples=subsample_size, replace=False, random_state=seed,
                stratify=stratify,
            )  # fmt: skip
            w = None if sample_weight_train is None else sample_weight_train[indices]
            if isinstance(X_binned_train, torch.Tensor):
                X_small = X_binned_train[torch.as_tensor(indices, device=X_binned_train.device)]
            else:
                X_small = X_binned_train[indices]
            return X_small, y_train[indices], w, indices
        return X_binned_train, y_train, sample_weight_train, slice(None)

    def _check_early_stopping_scorer(self, X_small, y_small, w_small, X_binned_val, y_val,
                                     w_val, raw_small=None, raw_val=None):  # fmt: skip
        """Append the scorer's train (and validation) score; should fitting stop?"""
        if is_classifier(self):
            y_small = self.classes_[y_small.astype(int)]
        self.train_score_.append(self._score_with_raw_predictions(X_small, y_small, w_small,
                                                                  raw_small))  # fmt: skip
        if self._use_validation_data:
            if is_classifier(self):
                y_val = self.classes_[y_val.astype(int)]
            self.validation_score_.append(
                self._score_with_raw_predictions(X_binned_val, y_val, w_val, raw_val)
            )
            return self._should_stop(self.validation_score_)
        return self._should_stop(self.train_score_)

    def _score_with_raw_predictions(self, X, y, sample_weight, raw_predictions=None):
        patcher = nullcontext() if raw_predictions is None else _patch_raw_predict(
            self, raw_predictions)  # fmt: skip
        with patcher:
            if sample_weight is None:
                return self._scorer(self, X, y)
            return self._scorer(self, X, y, sample_weight=sample_weight)

    def _check_early_stopping_loss(self, raw, y_train, w_train, raw_val, y_val, w_val):
        """Append minus the train (and validation) loss; should fitting stop?"""
        self.train_score_.append(-self._loss(y_train, raw, w_train))
        if self._use_validation_data:
            self.validation_score_.append(-self._loss(y_val, raw_val, w_val))
            return self._should_stop(self.validation_score_)
        return self._should_stop(self.train_score_)

    def _should_stop(self, scores):
        """Stop if none of the last n scores beats the (n+1)-th to last by more than tol."""
        reference_position = self.n_iter_no_change + 1
        if len(scores) < reference_position:
            return False
        reference_score = scores[-reference_position] + self.tol
        recent_scores = scores[-reference_position + 1 :]
        return not any(score > reference_score for score in recent_scores)

    def _print_iteration_stats(self, iteration_start_time):
        predictors = self._predictors[-1]
        n_trees = len(predictors)
        max_depth = max(p.get_max_depth() for p in predictors)
        n_leaves = sum(p.get_n_leaf_nodes() for p in predictors)
        if n_trees == 1:
            msg = f"{n_trees} tree, {n_leaves} leaves, "
        else:
            msg = f"{n_trees} trees, {n_leaves} leaves ({int(n_leaves / n_trees)} on avg), "
        msg += f"max depth = {max_depth}, "
        if self.do_early_stopping_:
            factor, name = (-1, "loss") if self.scoring == "loss" else (1, "score")
            msg += f"train {name}: {factor * self.train_score_[-1]:.5f}, "
            if self._use_validation_data:
                msg += f"val {name}: {factor * self.validation_score_[-1]:.5f}, "
        print(msg + f"in {time() - iteration_start_time:0.3f}s")

    def _raw_predict(self, X):
        """Baseline plus every tree's values: float64 tensor (n_samples, K).

        Inside ``fit``, X is already binned (a uint8 tensor).
        """
        check_is_fitted(self)
        is_binned = getattr(self, "_in_fit", False)
        if not is_binned:
            X = self._preprocess_X(X, reset=False)
        return self._predict_iterations(X, self._predictors, is_binned)

    def _predict_iterations(self, X, predictors, is_binned, raw=None):
        """Add the predictors' values to ``raw`` (the baseline when None) and return it."""
        device = self._device()
        if not is_binned:
            X = _as_tensor(X, dtype=X_DTYPE).to(device)
            known_cat_bitsets, f_idx_map = self._bin_mapper.make_known_categories_bitsets()
        if raw is None:
            baseline = torch.as_tensor(self._baseline_prediction, device=device)
            raw = baseline.expand(X.shape[0], -1).clone()
        missing_bin = self._bin_mapper.missing_values_bin_idx_
        for predictors_of_ith_iteration in predictors:
            for k, predictor in enumerate(predictors_of_ith_iteration):
                if is_binned:
                    raw[:, k] += predictor.predict_binned(X, missing_bin)
                else:
                    raw[:, k] += predictor.predict(X, known_cat_bitsets, f_idx_map)
        return raw

    def _staged_raw_predict(self, X):
        """Raw predictions after each iteration (float64 tensors (n_samples, K))."""
        check_is_fitted(self)
        X = self._preprocess_X(X, reset=False)
        if X.shape[1] != self._n_features:
            raise ValueError(
                f"X has {X.shape[1]} features but this estimator was trained with "
                f"{self._n_features} features."
            )
        raw = None
        for iteration in range(len(self._predictors)):
            raw = self._predict_iterations(
                X, self._predictors[iteration : iteration + 1], False, raw
            )
            yield raw.clone()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @property
    def n_iter_(self):
        """Number of iterations of the boosting process."""
        check_is_fitted(self)
        return len(self._predictors)


_PARAMS_DOC = """
    Parameters
    ----------
    learning_rate : float > 0, default=0.1
        The shrinkage: multiplies every leaf value.
    max_iter : int >= 1, default=100
        Iterations (each grows one tree per raw score).
    max_leaf_nodes : int >= 2 or None, default=31
    max_depth : int >= 1 or None, default=None
    min_samples_leaf : int >= 1, default=20
    l2_regularization : float >= 0, default=0
        ``lambda`` in the gain and in the leaf value ``-G / (H + lambda)``.
    max_features : float in (0, 1], default=1.0
        Fraction of the (allowed) features searched at each split.
    max_bins : int in [2, 255], default=255
        Bins for the non-missing values; one more bin holds the missing values.
    categorical_features : array-like of bool, int or str, "from_dtype" or None, \
default="from_dtype"
        Indices, mask or names of the categorical features; "from_dtype": the
        pandas ``category`` columns of a DataFrame.
    monotonic_cst : array-like of {-1, 0, 1} or dict (feature name -> int), default=None
    interaction_cst : {"pairwise", "no_interactions"} or sequence of sets of int, default=None
    warm_start : bool, default=False
        Keep the fitted trees and add iterations up to ``max_iter``.
    early_stopping : "auto" or bool, default="auto"
        "auto": on when there are more than 10,000 rows.
    scoring : str, callable or None, default="loss"
        What early stopping watches ("loss": minus the loss).
    validation_fraction : int, float or None, default=0.1
        Held out for early stopping (None: the training data's scores).
    n_iter_no_change : int, default=10
    tol : float, default=1e-7
    verbose : int, default=0
    random_state : int, RandomState or None, default=None
        Seeds the validation split, the binning subsample and feature subsampling,
        drawn as scikit-learn draws them.
    device : str, torch.device or None, default=None
        Where the tensors live (None: CPU).

    Attributes
    ----------
    do_early_stopping_ : bool
    n_iter_ : int
    n_trees_per_iteration_ : int
    train_score_, validation_score_ : ndarray of shape (n_iter_ + 1,)
        Empty without early stopping.
    is_categorical_ : ndarray of bool or None
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only if X had column names)
"""


class HistGradientBoostingRegressor(RegressorMixin, BaseHistGradientBoosting):
    """Histogram gradient boosting for regression. Introduced in Chapter 9.

    scikit-learn's ``HistGradientBoostingRegressor`` on treelib's engine: the
    same trees and predictions on data without ties (see the module docstring).

    loss : {"squared_error", "absolute_error", "poisson", "gamma", "quantile"}
    quantile : float in (0, 1) or None, default=None
        The level of the "quantile" loss.

    Examples
    --------
    >>> import numpy as np
    >>> from treelib import HistGradientBoostingRegressor
    >>> X = np.arange(100.0).reshape(-1, 1)
    >>> reg = HistGradientBoostingRegressor(max_iter=20).fit(X, X[:, 0] > 50)
    >>> reg.n_iter_, bool(reg.predict([[10.0]])[0] < 0.5 < reg.predict([[90.0]])[0])
    (20, True)
    """

    __doc__ += _PARAMS_DOC

    _parameter_constraints: dict = {
        **BaseHistGradientBoosting._parameter_constraints,
        "loss": [
            StrOptions({"squared_error", "absolute_error", "poisson", "gamma", "quantile"}),
            sklearn_loss.BaseLoss,
        ],  # fmt: skip
        "quantile": [Interval(Real, 0, 1, closed="both"), None],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        quantile=None,
        learning_rate=0.1,
        max_iter=100,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_features=1.0,
        max_bins=255,
        categorical_features="from_dtype",
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
        device=None,
    ):
        self.loss = loss
        self.quantile = quantile
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.device = device

    def predict(self, X):
        """The inverse link of the raw predictions, shape (n_samples,)."""
        check_is_fitted(self)
        return self._loss.inverse(self._raw_predict(X).reshape(-1)).cpu().numpy()

    def staged_predict(self, X):
        """Predictions after each iteration (a generator of arrays (n_samples,))."""
        for raw in self._staged_raw_predict(X):
            yield self._loss.inverse(raw.reshape(-1)).cpu().numpy()

    def _encode_y(self, y):
        self.n_trees_per_iteration_ = 1
        y = y.astype(np.float64, copy=False)
        if self.loss == "gamma":
            if not np.all(y > 0):
                raise ValueError("loss='gamma' requires strictly positive y.")
        elif self.loss == "poisson":
            if not (np.all(y >= 0) and np.sum(y) > 0):
                raise ValueError("loss='poisson' requires non-negative y and sum(y) > 0.")
        return y

    def _encode_y_val(self, y=None):
        return self._encode_y(y)

    def _get_loss(self, sample_weight):
        if self.loss == "quantile":
            return PinballLoss(sample_weight=sample_weight, quantile=self.quantile)
        return _LOSSES[self.loss](sample_weight=sample_weight)


class HistGradientBoostingClassifier(ClassifierMixin, BaseHistGradientBoosting):
    """Histogram gradient boosting for classification. Introduced in Chapter 9.

    Log-loss: one tree per iteration on the log-odds (two classes), or one per
    class on the softmax scores (K >= 3). scikit-learn's
    ``HistGradientBoostingClassifier`` on treelib's engine (see the module
    docstring).

    loss : {"log_loss"}
    class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights, as scikit-learn.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from treelib import HistGradientBoostingClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = HistGradientBoostingClassifier(max_iter=10).fit(X, y)
    >>> clf.n_trees_per_iteration_, len(clf._predictors)
    (3, 10)
    """

    __doc__ += (
        _PARAMS_DOC
        + """    classes_ : ndarray of shape (K,)
"""
    )

    _parameter_constraints: dict = {
        **BaseHistGradientBoosting._parameter_constraints,
        "loss": [StrOptions({"log_loss"}), sklearn_loss.BaseLoss],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        loss="log_loss",
        *,
        learning_rate=0.1,
        max_iter=100,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_features=1.0,
        max_bins=255,
        categorical_features="from_dtype",
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
        class_weight=None,
        device=None,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.max_bins = max_bins
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.class_weight = class_weight
        self.device = device

    def _finalize_sample_weight(self, sample_weight, y):
        if self.class_weight is None:
            return sample_weight
        expanded_class_weight = compute_sample_weight(self.class_weight, y)
        if sample_weight is not None:
            return sample_weight * expanded_class_weight
        return expanded_class_weight

    def _classes_of(self, raw):
        if raw.shape[1] == 1:  # "> 0": a tie goes to class 0, as argmax
            encoded = (raw.reshape(-1) > 0).long()
        else:
            encoded = torch.argmax(raw, dim=1)
        return self.classes_.take(encoded.cpu().numpy(), axis=0)

    def predict(self, X):
        """The class of largest raw score (class 1 when the log-odds are > 0)."""
        return self._classes_of(self._raw_predict(X))

    def staged_predict(self, X):
        """Predicted classes after each iteration."""
        for raw in self._staged_raw_predict(X):
            yield self._classes_of(raw)

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, K)."""
        raw = self._raw_predict(X)  # checks that the model is fitted
        return self._loss.predict_proba(raw).cpu().numpy()

    def staged_predict_proba(self, X):
        """Class probabilities after each iteration."""
        for raw in self._staged_raw_predict(X):
            yield self._loss.predict_proba(raw).cpu().numpy()

    def decision_function(self, X):
        """Raw scores: shape (n_samples,) for two classes, else (n_samples, K)."""
        raw = self._raw_predict(X).cpu().numpy()
        return raw.ravel() if raw.shape[1] == 1 else raw

    def staged_decision_function(self, X):
        """Raw scores after each iteration."""
        for raw in self._staged_raw_predict(X):
            raw = raw.cpu().numpy()
            yield raw.ravel() if raw.shape[1] == 1 else raw

    def _encode_y(self, y):
        check_classification_targets(y)
        self._label_encoder = LabelEncoder()
        encoded_y = self._label_encoder.fit_transform(y)
        self.classes_ = self._label_encoder.classes_
        n_classes = self.classes_.shape[0]
        self.n_trees_per_iteration_ = 1 if n_classes <= 2 else n_classes
        return encoded_y.astype(np.float64, copy=False)

    def _encode_y_val(self, y):
        return self._label_encoder.transform(y).astype(np.float64, copy=False)

    def _get_loss(self, sample_weight):
        if self.n_trees_per_iteration_ == 1:
            return HalfBinomialLoss(sample_weight=sample_weight)
        return HalfMultinomialLoss(sample_weight=sample_weight,
                                   n_classes=self.n_trees_per_iteration_)  # fmt: skip
