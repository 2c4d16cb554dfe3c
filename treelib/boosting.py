"""AdaBoost (SAMME): weak learners that focus on the previous ones' mistakes.

Introduced in Chapter 6 (``notebooks/06_adaboost_heart_disease``). Each round
fits a weak learner (by default a depth-1 tree: a stump) to weighted samples,
measures its weighted error, gives it a say ``alpha`` and up-weights the
samples it got wrong. The formulas are scikit-learn's (Zhu et al., 2009):

    err   = sum_i w_i [h(x_i) != y_i]
    alpha = learning_rate * (log((1 - err) / err) + log(K - 1))
    w_i  <- w_i * exp(alpha * [h(x_i) != y_i]),  then renormalise.

X reaches the weak learners as scikit-learn passes it: validated but not cast
(a treelib tree casts it to float32 itself; another learner sees float64, ints
or n-dimensional X untouched). A ``scipy.sparse`` X stays sparse, as CSC or CSR
(other formats become CSR); a treelib tree makes it dense when it validates it.
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics import accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    has_fit_parameter,
    validate_data,
)

from ._validation import _as_numpy, _is_int, check_no_category_columns, check_real
from .tree import DecisionTreeClassifier


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


class AdaBoostClassifier(ClassifierMixin, BaseEstimator):
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # passed on to the learners as CSC/CSR, as scikit-learn
        return tags

    def _validate_estimator(self):
        """Set ``estimator_`` (as scikit-learn: the object itself, not a copy)."""
        default = DecisionTreeClassifier(max_depth=1)
        self.estimator_ = default if self.estimator is None else self.estimator
        if not has_fit_parameter(self.estimator_, "sample_weight"):
            raise ValueError(f"{type(self.estimator_).__name__} doesn't support sample_weight.")

    def _check_params(self):
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1; got {self.n_estimators!r}.")
        lr = check_real("learning_rate", self.learning_rate, 0.0)
        if lr == 0.0:
            raise ValueError("learning_rate must be > 0; got 0.")
        return lr

    def _check_fit_input(self, X, y, sample_weight):
        """Validate without casting X; set ``classes_``; return weights summing to 1."""
        check_no_category_columns(X)  # converted to an ndarray they would lose their dtype
        X, y = validate_data(
            self, _as_numpy(X), _as_numpy(y), ensure_2d=True, allow_nd=True, dtype=None,
            accept_sparse=["csr", "csc"],
        )  # fmt: skip
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        self.n_classes_ = len(self.classes_)
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
            self, _as_numpy(X), ensure_2d=True, allow_nd=True, dtype=None, reset=False,
            accept_sparse=["csr", "csc"],
        )  # fmt: skip

    def _fit_learner(self, X, y, w, rng):
        learner = _seed_learner(clone(self.estimator_), rng).fit(X, y, sample_weight=w)
        incorrect = learner.predict(X) != y
        return learner, incorrect, float(np.average(incorrect, weights=w))

    def _no_better_than_guessing(self, error):
        """A learner with ``err >= 1 - 1/K`` is dropped; if it is the first, fitting fails."""
        if error <= 0 or error < 1.0 - 1.0 / self.n_classes_:
            return False
        if not self.estimators_:
            raise ValueError(
                f"The first weak learner's weighted error {error:.3g} is at least 1 - 1/K:"
                " it is worse than random guessing, so the ensemble cannot be fit."
            )
        return True

    @staticmethod
    def _next_weights(w, incorrect, alpha, round_):
        """Reweight and renormalise; None (stop boosting) if the weights overflowed."""
        with np.errstate(over="ignore"):  # overflow is reported below, as scikit-learn does
            w = reweight(w, incorrect, alpha)
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
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            (n-d if the learner accepts it; a sparse X is passed on as CSC or CSR)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : AdaBoostClassifier
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
            learner, incorrect, error = self._fit_learner(X, y, w, rng)
            if self._no_better_than_guessing(error):
                break  # a learner worse than guessing is dropped, boosting stops
            self.estimators_.append(learner)
            weights.append(w)
            alpha = 1.0 if error <= 0 else samme_alpha(error, self.n_classes_, lr)
            self.estimator_weights_[round_], self.estimator_errors_[round_] = alpha, error
            if error <= 0 or round_ == self.n_estimators - 1:
                break  # a perfect learner gets weight 1 and boosting stops
            w = self._next_weights(w, incorrect, alpha, round_)
            if w is None:
                break
        self.sample_weights_ = np.array(weights)
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

    def staged_score(self, X, y, sample_weight=None):
        """Accuracy after each boosting round (a test-set learning curve).

        Introduced in Chapter 6.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Yields
        ------
        float
        """
        for labels in self.staged_predict(X):
            yield accuracy_score(y, labels, sample_weight=sample_weight)

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
