"""AdaBoost (SAMME): weak learners that focus on the previous ones' mistakes.

Introduced in Chapter 6 (``notebooks/06_adaboost_heart_disease``). Each round
fits a weak learner (by default a depth-1 tree: a stump) to weighted samples,
measures its weighted error, gives it a say ``alpha`` and up-weights the
samples it got wrong. The formulas are scikit-learn's (Zhu et al., 2009):

    err   = sum_i w_i [h(x_i) != y_i]
    alpha = learning_rate * (log((1 - err) / err) + log(K - 1))
    w_i  <- w_i * exp(alpha * [h(x_i) != y_i]),  then renormalise.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state

from ._validation import _is_int, check_fit_input, check_predict_input, check_real
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


class AdaBoostClassifier(ClassifierMixin, BaseEstimator):
    """Multi-class AdaBoost (SAMME). Introduced in Chapter 6.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The weak learner; None means ``treelib.DecisionTreeClassifier(max_depth=1)``.
        It must accept ``sample_weight`` in ``fit``.
    n_estimators : int, default=50
        Maximum number of boosting rounds (fewer if a learner is perfect).
    learning_rate : float, default=1.0
        Shrinks every learner's weight ``alpha``.
    random_state : int, RandomState or None, default=None
        Seeds each learner's ``random_state``.

    Attributes
    ----------
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

    def _make_learner(self, rng):
        learner = clone(self.estimator or DecisionTreeClassifier(max_depth=1))
        if "random_state" in learner.get_params():
            learner.set_params(random_state=rng.randint(np.iinfo(np.int32).max))
        return learner

    def fit(self, X, y, sample_weight=None):
        """Boost for up to ``n_estimators`` rounds. Returns ``self``."""
        X, y_enc, w = check_fit_input(self, X, y, sample_weight, classifier=True)
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1; got {self.n_estimators!r}.")
        lr = check_real("learning_rate", self.learning_rate, 0.0)
        if lr == 0.0:
            raise ValueError("learning_rate must be > 0; got 0.")
        X, y, w = X.numpy(), y_enc.numpy(), w.numpy() / w.sum().item()
        self.n_classes_ = len(self.classes_)
        rng = check_random_state(self.random_state)
        self.estimators_, weights = [], []
        self.estimator_weights_ = np.zeros(self.n_estimators)
        self.estimator_errors_ = np.ones(self.n_estimators)
        originally_zero, eps = w == 0, np.finfo(np.float64).eps
        for round_ in range(self.n_estimators):
            w = np.where(originally_zero, 0.0, np.clip(w, eps, None))  # avoid underflow to 0
            learner = self._make_learner(rng).fit(X, y, sample_weight=w)
            incorrect = learner.predict(X) != y
            error = float(np.average(incorrect, weights=w))
            if error >= 1.0 - 1.0 / self.n_classes_ and error > 0:
                if not self.estimators_:
                    raise ValueError("The first weak learner is no better than guessing.")
                break  # a learner worse than guessing is dropped, boosting stops
            self.estimators_.append(learner)
            weights.append(w)
            if error <= 0:  # perfect learner: it gets weight 1 and boosting stops
                self.estimator_weights_[round_], self.estimator_errors_[round_] = 1.0, 0.0
                break
            alpha = samme_alpha(error, self.n_classes_, lr)
            self.estimator_weights_[round_], self.estimator_errors_[round_] = alpha, error
            if round_ < self.n_estimators - 1:
                w = reweight(w, incorrect, alpha)
                w = w / w.sum()
        self.sample_weights_ = np.array(weights)
        return self

    @property
    def feature_importances_(self):
        """The learners' importances averaged with weights ``alpha`` (as scikit-learn)."""
        weights = self.estimator_weights_[: len(self.estimators_)]
        importances = [learner.feature_importances_ for learner in self.estimators_]
        return np.average(importances, axis=0, weights=weights) if weights.sum() else importances[0]

    def staged_decision_function(self, X):
        """The decision function after each round (for learning curves)."""
        X = check_predict_input(self, X).numpy()
        K, score, total = self.n_classes_, 0.0, 0.0
        for learner, alpha in zip(self.estimators_, self.estimator_weights_):
            votes = learner.predict(X)[:, None] == np.arange(K)  # one-hot of h(x)
            score = score + np.where(votes, alpha, -alpha / max(K - 1, 1))
            total += alpha
            f = score / total
            yield f[:, 1] - f[:, 0] if K == 2 else f

    def decision_function(self, X):
        """``f_k(x) = sum_t alpha_t (1 if h_t(x) = k else -1/(K-1))``, normalised.

        For two classes, ``f_1 - f_0`` (positive means ``classes_[1]``).
        """
        *_, last = self.staged_decision_function(X)
        return last

    def _to_labels(self, decision):
        if self.n_classes_ == 2:
            return self.classes_[(decision > 0).astype(int)]
        return self.classes_[np.argmax(decision, axis=1)]

    def staged_predict(self, X):
        """Predicted classes after each boosting round."""
        for decision in self.staged_decision_function(X):
            yield self._to_labels(decision)

    def predict(self, X):
        """The class with the largest weighted vote."""
        return self._to_labels(self.decision_function(X))

    def predict_proba(self, X):
        """``softmax(f(x) / (K - 1))``, scikit-learn's probabilities for SAMME."""
        decision = self.decision_function(X)
        if self.n_classes_ == 2:
            decision = np.stack([-decision, decision], axis=1) / 2
        else:
            decision = decision / (self.n_classes_ - 1)
        exp = np.exp(decision - decision.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)
