"""AdaBoost: weak learners that focus on the previous ones' mistakes.

Introduced in Chapter 6 (``notebooks/06_adaboost_heart_disease``). Each round
fits a weak learner (by default a depth-1 tree: a stump) to weighted samples,
measures its weighted error, gives it a say ``alpha`` and up-weights the
samples it got wrong. The classifier's formulas are scikit-learn's SAMME (Zhu
et al., 2009):

    err   = sum_i w_i [h(x_i) != y_i]
    alpha = learning_rate * (log((1 - err) / err) + log(K - 1))
    w_i  <- w_i * exp(alpha * [h(x_i) != y_i]),  then renormalise.

The regressor is AdaBoost.R2 (Drucker, 1997), as scikit-learn: each learner
(by default a depth-3 tree) is fitted to a bootstrap sample drawn with the
weights; with ``e_i = |h(x_i) - y_i| / max_j |h(x_j) - y_j|`` (squared, or
``1 - exp(-e_i)``, by ``loss``)

    err   = sum_i w_i e_i,   beta = err / (1 - err)
    alpha = learning_rate * log(1 / beta)
    w_i  <- w_i * beta ** ((1 - e_i) * learning_rate),  then renormalise,

and the ensemble predicts the alpha-weighted median of its learners.

Both share the boosting loop (:class:`BaseWeightBoosting`): validation, the
seeds, the clipping of tiny weights, early stops and the overflow warning.

X reaches the weak learners as scikit-learn passes it: validated but not cast
(a treelib tree casts it to float32 itself; another learner sees float64, ints
or n-dimensional X untouched). A ``scipy.sparse`` X stays sparse, as CSC or CSR
(other formats become CSR); a treelib tree makes it dense when it validates it.
"""

import warnings

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    _num_samples,
    check_is_fitted,
    has_fit_parameter,
    validate_data,
)

from ._validation import (
    _as_numpy,
    _is_float,
    _is_int,
    check_no_category_columns,
    invalid_parameter,
)
from .forest import EnsembleSequence, bootstrap_indices
from .tree import DecisionTreeClassifier, DecisionTreeRegressor

LOSSES = ("linear", "square", "exponential")
SPARSE = ["csr", "csc"]  # the sparse formats passed to the learners, as scikit-learn


def samme_alpha(error, n_classes, learning_rate=1.0):
    """A learner's say in the vote: ``lr * (log((1 - err) / err) + log(K - 1))``.

    Introduced in Chapter 6. Positive exactly when the learner beats guessing
    (``err < 1 - 1/K``).
    """
    return learning_rate * (np.log((1.0 - error) / error) + np.log(n_classes - 1.0))


def reweight(sample_weight, incorrect, alpha):
    """Up-weight the misclassified samples by ``exp(alpha)`` (zero weights stay zero)."""
    return sample_weight * np.exp(alpha * incorrect * (sample_weight > 0))


def _seed_learner(learner, rng):
    """Give every ``random_state`` of ``learner`` (nested ones too) a seed drawn from ``rng``.

    The same draws, in the same (sorted) order, as scikit-learn's ensembles.
    """
    keys = sorted(learner.get_params(deep=True))
    keys = [k for k in keys if k == "random_state" or k.endswith("__random_state")]
    seeds = {key: rng.randint(np.iinfo(np.int32).max) for key in keys}
    return learner.set_params(**seeds) if seeds else learner


class BaseWeightBoosting(EnsembleSequence, BaseEstimator):
    """What both AdaBoost ensembles share: the boosting loop. Introduced in Chapter 6.

    As scikit-learn's ``BaseWeightBoosting``: the weights start at
    ``sample_weight / sum(sample_weight)``; every round clips them below at
    machine epsilon (weights that were zero stay zero), lets the subclass's
    :meth:`_boost` fit one learner and reweight, and stops early when a
    learner is perfect (error 0, weight 1), when :meth:`_boost` says so (a
    learner no better than guessing), or when the weights overflow (a
    warning) or vanish. A fitted ensemble is a sequence of learners, as in
    scikit-learn: ``len(boost)``, ``boost[i]``, ``for learner in boost``.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # passed on to the learners as CSC/CSR, as scikit-learn
        return tags

    def _default_learner(self):
        raise NotImplementedError

    def _validate_estimator(self):
        """Set ``estimator_`` (as scikit-learn: the object itself, not a copy)."""
        self.estimator_ = self._default_learner() if self.estimator is None else self.estimator

    def _check_params(self):
        """scikit-learn's checks of the shared parameters, with its errors; the learning rate."""
        owner = type(self).__name__
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            allowed = "an int in the range [1, inf)"
            raise invalid_parameter("n_estimators", owner, allowed, self.n_estimators)
        lr = self.learning_rate
        if not ((_is_int(lr) or _is_float(lr)) and lr > 0):
            raise invalid_parameter("learning_rate", owner, "a float in the range (0.0, inf)", lr)
        return float(lr)

    def _check_fit_input(self, X, y, sample_weight):
        """Validate without casting X (n-d allowed); return weights summing to 1.

        As scikit-learn, sparse X (CSR or CSC; other formats become CSR) passes
        through to the learners, which may or may not accept it.
        """
        check_no_category_columns(X)  # converted to an ndarray they would lose their dtype
        X, y = validate_data(
            self, _as_numpy(X), _as_numpy(y), accept_sparse=SPARSE, ensure_2d=True,
            allow_nd=True, dtype=None, y_numeric=is_regressor(self),
        )  # fmt: skip
        w = _check_sample_weight(
            _as_numpy(sample_weight), X, dtype=np.float64, copy=True, ensure_non_negative=True
        )
        if not w.sum() > 0:
            raise ValueError("sample_weight must have a positive sum; all weights are zero.")
        return X, y, w / w.sum()

    def _check_X(self, X):
        """Validate X for prediction: fitted, same number of features, not cast."""
        check_is_fitted(self)
        check_no_category_columns(X)
        return validate_data(
            self, _as_numpy(X), accept_sparse=SPARSE, ensure_2d=True, allow_nd=True, dtype=None,
            reset=False,
        )  # fmt: skip

    def _new_learner(self, rng):
        """A clone of ``estimator_`` seeded from ``rng``, appended to ``estimators_``."""
        learner = _seed_learner(clone(self.estimator_), rng)
        self.estimators_.append(learner)
        return learner

    def _boost(self, round_, X, y, w, rng, learning_rate):
        """One round: ``(new weights, alpha, error)``, or ``(None, None, None)`` to stop.

        Fits one learner (:meth:`_new_learner`) and drops it from
        ``estimators_`` if it must not vote. On the last round the weights
        need not be updated.
        """
        raise NotImplementedError

    @staticmethod
    def _renormalised(w, round_):
        """``w / sum(w)``; None (stop boosting) if the weights overflowed or vanished."""
        total = w.sum()
        if not np.isfinite(total):
            warnings.warn(
                f"Sample weights have reached infinite values, at iteration {round_}, causing"
                " overflow. Iterations stopped. Try lowering the learning rate.",
                UserWarning,
                stacklevel=3,
            )
            return None
        return w / total if total > 0 else None

    def fit(self, X, y, sample_weight=None):
        """Boost for up to ``n_estimators`` rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) (n-d if the learner accepts it)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        lr = self._check_params()
        X, y, w = self._check_fit_input(X, y, sample_weight)
        self._validate_estimator()
        rng = check_random_state(self.random_state)
        self.estimators_, weights = [], []
        self.estimator_weights_ = np.zeros(self.n_estimators)
        self.estimator_errors_ = np.ones(self.n_estimators)
        originally_zero, eps = w == 0, np.finfo(np.float64).eps
        for round_ in range(self.n_estimators):
            w = np.where(originally_zero, 0.0, np.clip(w, eps, None))  # avoid underflow to 0
            weights.append(w)
            with np.errstate(over="ignore"):  # overflow is reported below, as scikit-learn does
                new_w, alpha, error = self._boost(round_, X, y, w, rng, lr)
            if new_w is None:
                break
            self.estimator_weights_[round_], self.estimator_errors_[round_] = alpha, error
            if error == 0 or round_ == self.n_estimators - 1:
                break  # a perfect learner gets weight 1 and boosting stops
            w = self._renormalised(new_w, round_)
            if w is None:
                break
        self.sample_weights_ = np.array(weights[: len(self.estimators_)])
        return self

    @property
    def feature_importances_(self):
        """The learners' importances averaged with weights ``alpha`` (as scikit-learn).

        Introduced in Chapter 6. Raises ``NotFittedError`` before ``fit``.
        """
        check_is_fitted(self)
        weights = self.estimator_weights_[: len(self.estimators_)]
        importances = [learner.feature_importances_ for learner in self.estimators_]
        return np.average(importances, axis=0, weights=weights) if weights.sum() else importances[0]

    def staged_score(self, X, y, sample_weight=None):
        """The score after each boosting round (a test-set learning curve).

        Introduced in Chapter 6: accuracy for the classifier, R² for the regressor.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Yields
        ------
        float
        """
        score = accuracy_score if is_classifier(self) else r2_score
        for y_pred in self.staged_predict(X):
            yield score(y, y_pred, sample_weight=sample_weight)


class AdaBoostClassifier(ClassifierMixin, BaseWeightBoosting):
    """Multi-class AdaBoost (SAMME). Introduced in Chapter 6.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The weak learner; None means ``treelib.DecisionTreeClassifier(max_depth=1)``.
        It must accept ``sample_weight`` in ``fit``. Any scikit-learn classifier
        works, ensembles included; it receives X as given (not cast to float32).
    n_estimators : int, default=50
        Maximum number of boosting rounds (fewer if a learner is perfect, or if
        the sample weights overflow).
    learning_rate : float, default=1.0
        Shrinks every learner's weight ``alpha``.
    random_state : int, RandomState or None, default=None
        Seeds each learner's ``random_state`` (and nested ``*__random_state``).

    Attributes
    ----------
    estimator_ : estimator
        The base learner the ensemble is grown from (``estimator``, or the default stump).
    estimators_ : list of fitted learners
    estimator_weights_ : ndarray of shape (n_estimators,)
        Each learner's ``alpha`` (0 for rounds never run).
    estimator_errors_ : ndarray of shape (n_estimators,)
        Each learner's weighted training error (1 for rounds never run).
    sample_weights_ : ndarray of shape (n_rounds, n_samples)
        The normalised sample weights each learner was fitted to (for plots).
    feature_importances_ : ndarray of shape (n_features,)
    classes_, n_classes_, n_features_in_
    """

    def __init__(self, estimator=None, *, n_estimators=50, learning_rate=1.0, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state

    def _default_learner(self):
        return DecisionTreeClassifier(max_depth=1)

    def _validate_estimator(self):
        """Set ``estimator_``; it must take ``sample_weight`` (SAMME fits with the weights)."""
        super()._validate_estimator()
        if not has_fit_parameter(self.estimator_, "sample_weight"):
            raise ValueError(f"{type(self.estimator_).__name__} doesn't support sample_weight.")

    def _check_fit_input(self, X, y, sample_weight):
        """Validate without casting X; set ``classes_``; return weights summing to 1."""
        X, y, w = super()._check_fit_input(X, y, sample_weight)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        self.n_classes_ = len(self.classes_)
        return X, y, w

    def _boost(self, round_, X, y, w, rng, learning_rate):
        """One SAMME round: fit to the weights, measure ``err``, up-weight the mistakes.

        A learner with ``err >= 1 - 1/K`` is dropped and boosting stops; if it
        is the first, fitting fails.
        """
        learner = self._new_learner(rng).fit(X, y, sample_weight=w)
        incorrect = learner.predict(X) != y
        error = float(np.average(incorrect, weights=w))
        if error <= 0:
            return w, 1.0, 0.0
        if error >= 1.0 - 1.0 / self.n_classes_:
            self.estimators_.pop()
            if not self.estimators_:
                raise ValueError(
                    f"The first weak learner's weighted error {error:.3g} is at least 1 - 1/K:"
                    " it is worse than random guessing, so the ensemble cannot be fit."
                )
            return None, None, None
        alpha = samme_alpha(error, self.n_classes_, learning_rate)
        if round_ < self.n_estimators - 1:
            w = reweight(w, incorrect, alpha)
        return w, alpha, error

    def _staged_decision(self, X):
        """``f(x)`` after each round, for an X already validated."""
        K, score, total = self.n_classes_, 0.0, 0.0
        for learner, alpha in zip(self.estimators_, self.estimator_weights_):
            if K == 1:  # nothing to decide between (scikit-learn's decision_function)
                yield np.zeros((len(X), 1))
                continue
            votes = learner.predict(X)[:, None] == self.classes_  # one-hot of h(x)
            score = score + np.where(votes, alpha, -alpha / (K - 1))
            total += alpha
            f = score / total
            yield f[:, 1] - f[:, 0] if K == 2 else f

    def staged_decision_function(self, X):
        """The decision function after each round (for learning curves).

        Introduced in Chapter 6.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
            One class gives zeros of shape (n_samples, 1).
        """
        yield from self._staged_decision(self._check_X(X))

    def decision_function(self, X):
        """``f_k(x) = sum_t alpha_t (1 if h_t(x) = k else -1/(K-1))``, normalised.

        Introduced in Chapter 6. For two classes, ``f_1 - f_0`` (positive means
        ``classes_[1]``); for one class, zeros of shape (n_samples, 1).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        *_, last = self._staged_decision(self._check_X(X))
        return last

    def _to_labels(self, decision):
        if self.n_classes_ == 2:
            return self.classes_[(decision > 0).astype(int)]
        return self.classes_[np.argmax(decision, axis=1)]

    def _to_proba(self, decision):
        """``softmax(f(x) / (K - 1))``; ones of shape (n, 1) for one class."""
        if self.n_classes_ == 1:
            return np.ones((len(decision), 1))
        if self.n_classes_ == 2:
            decision = np.stack([-decision, decision], axis=1) / 2
        else:
            decision = decision / (self.n_classes_ - 1)
        exp = np.exp(decision - decision.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)

    def staged_predict(self, X):
        """Predicted classes after each boosting round. Introduced in Chapter 6.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples,)
        """
        for decision in self.staged_decision_function(X):
            yield self._to_labels(decision)

    def staged_predict_proba(self, X):
        """Class probabilities after each boosting round. Introduced in Chapter 6.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples, n_classes)
        """
        for decision in self.staged_decision_function(X):
            yield self._to_proba(decision)

    def predict(self, X):
        """The class with the largest weighted vote. Introduced in Chapter 6.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._to_labels(self.decision_function(X))

    def predict_proba(self, X):
        """``softmax(f(x) / (K - 1))``, scikit-learn's probabilities for SAMME.

        Introduced in Chapter 6. One class gives ones of shape (n_samples, 1).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return self._to_proba(self.decision_function(X))

    def predict_log_proba(self, X):
        """The log of ``predict_proba`` (as scikit-learn). Introduced in Chapter 6.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return np.log(self.predict_proba(X))


def r2_errors(y_pred, y, loss="linear"):
    """AdaBoost.R2's per-sample losses in ``[0, 1]``. Introduced in Chapter 6.

    ``e_i = |y_pred_i - y_i| / max_j |y_pred_j - y_j|`` (left as they are if
    the largest is 0), then squared (``loss="square"``) or ``1 - exp(-e_i)``
    (``"exponential"``), in scikit-learn's order of operations.
    """
    error = np.abs(y_pred - y)
    error_max = error.max()
    if error_max != 0:
        error /= error_max
    if loss == "square":
        error **= 2
    elif loss == "exponential":
        error = 1.0 - np.exp(-error)
    return error


def weighted_median(predictions, weights):
    """Each row's weighted median: the smallest prediction whose cumulative weight is at
    least half the total. Introduced in Chapter 6.

    scikit-learn's rule (``AdaBoostRegressor._get_median_predict``): sort each
    row's predictions (``np.argsort``, ties in its order), accumulate the
    learners' weights in that order and take the first position where the sum
    reaches half of the total (the first learner's when all weights are zero).

    Parameters
    ----------
    predictions : ndarray of shape (n_samples, n_learners)
    weights : ndarray of shape (n_learners,)

    Returns
    -------
    ndarray of shape (n_samples,)
    """
    order = np.argsort(predictions, axis=1)
    cdf = np.cumsum(weights[order], axis=1)
    median_at = (cdf >= 0.5 * cdf[:, -1][:, np.newaxis]).argmax(axis=1)
    rows = np.arange(len(predictions))
    return predictions[rows, order[rows, median_at]]


class AdaBoostRegressor(RegressorMixin, BaseWeightBoosting):
    """AdaBoost.R2 (Drucker, 1997), as scikit-learn 1.9.1's. Introduced in Chapter 6.

    Each round draws a bootstrap sample with the current weights as
    probabilities (the weighted draw of the forests, Chapter 5), fits a clone
    of the learner to it, and measures every sample's loss ``e_i`` in
    ``[0, 1]`` (:func:`r2_errors`). With ``err = sum_i w_i e_i`` and ``beta =
    err / (1 - err)`` the learner's say is ``learning_rate * log(1 / beta)``
    and the weights become ``w_i * beta ** ((1 - e_i) * learning_rate)``: the
    samples it predicted well lose weight. A perfect learner (``err = 0``) gets
    weight 1 and stops boosting; a learner with ``err >= 0.5`` stops it too,
    and is dropped unless it is the only one. The prediction is the
    alpha-weighted median of the learners' predictions (:func:`weighted_median`).

    With the same ``random_state`` and learner the rounds are scikit-learn's:
    each round first seeds the learner, then draws the sample, from the same
    generator.

    Parameters
    ----------
    estimator : regressor or None, default=None
        The weak learner; None means ``treelib.DecisionTreeRegressor(max_depth=3)``.
        Any scikit-learn regressor works (it is fitted without weights, on the
        bootstrap sample); it receives X as given (not cast to float32).
    n_estimators : int, default=50
        Maximum number of boosting rounds.
    learning_rate : float, default=1.0
        Shrinks every learner's weight and the reweighting.
    loss : {"linear", "square", "exponential"}, default="linear"
        How a sample's error is turned into a loss in ``[0, 1]``.
    random_state : int, RandomState or None, default=None
        Seeds each learner's ``random_state`` and draws the bootstrap samples.

    Attributes
    ----------
    estimator_ : estimator
        The base learner the ensemble is grown from.
    estimators_ : list of fitted learners
    estimator_weights_ : ndarray of shape (n_estimators,)
        Each learner's weight (0 for rounds never run).
    estimator_errors_ : ndarray of shape (n_estimators,)
        Each learner's average loss ``err`` (1 for rounds never run).
    sample_weights_ : ndarray of shape (n_rounds, n_samples)
        The normalised weights each bootstrap sample was drawn with (for plots).
    feature_importances_ : ndarray of shape (n_features,)
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from treelib import AdaBoostRegressor
    >>> X, y = make_regression(n_features=4, n_informative=2, random_state=0, shuffle=False)
    >>> boost = AdaBoostRegressor(random_state=0, n_estimators=100).fit(X, y)
    >>> round(boost.score(X, y), 2)
    0.98
    """

    def __init__(
        self, estimator=None, *, n_estimators=50, learning_rate=1.0, loss="linear",
        random_state=None,
    ):  # fmt: skip
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.loss = loss
        self.random_state = random_state

    def _default_learner(self):
        return DecisionTreeRegressor(max_depth=3)

    def _check_params(self):
        if self.loss not in LOSSES:
            allowed = "a str among {'square', 'linear', 'exponential'}"
            raise invalid_parameter("loss", type(self).__name__, allowed, self.loss)
        return super()._check_params()

    def _boost(self, round_, X, y, w, rng, learning_rate):
        """One AdaBoost.R2 round, in scikit-learn's order of random draws."""
        learner = self._new_learner(rng)  # its seed is drawn before the sample
        n = _num_samples(X)
        rows = bootstrap_indices(rng, n, n, p=w)
        learner.fit(_safe_indexing(X, rows), _safe_indexing(y, rows))
        counted = w > 0  # zero-weight samples neither count nor set the largest error
        masked_w = w[counted]
        losses = r2_errors(learner.predict(X)[counted], y[counted], self.loss)
        error = (masked_w * losses).sum()
        if error <= 0:
            return w, 1.0, 0.0
        if error >= 0.5:
            if len(self.estimators_) > 1:
                self.estimators_.pop()
            return None, None, None
        beta = error / (1.0 - error)
        alpha = learning_rate * np.log(1.0 / beta)
        if round_ < self.n_estimators - 1:
            w = w.copy()
            w[counted] *= np.power(beta, (1.0 - losses) * learning_rate)
        return w, alpha, error

    def _staged_predictions(self, X):
        predictions = np.array([learner.predict(X) for learner in self.estimators_]).T
        for n_learners in range(1, len(self.estimators_) + 1):
            weights = self.estimator_weights_[:n_learners]
            yield weighted_median(predictions[:, :n_learners], weights)

    def predict(self, X):
        """The weighted median of the learners' predictions. Introduced in Chapter 6.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        *_, last = self._staged_predictions(self._check_X(X))
        return last

    def staged_predict(self, X):
        """The prediction after each boosting round (for learning curves).

        Introduced in Chapter 6.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        ndarray of shape (n_samples,)
        """
        yield from self._staged_predictions(self._check_X(X))
