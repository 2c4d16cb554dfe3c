"""The decision stump: one question, two answers.

Introduced in Chapter 1 (``notebooks/01_decision_stump``).
"""

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin

from ._validation import (
    check_criterion,
    check_fit_input,
    check_min_samples_leaf,
    check_predict_input,
)
from .criteria import CLASSIFICATION_CRITERIA, criterion_of, leaf_value, target_stats
from .rules import StoppingRules, goes_left, is_leaf_before_search
from .split import best_split


class DecisionStump(ClassifierMixin, BaseEstimator):
    """A one-split classifier: ``x[feature_] <= threshold_`` goes left.

    Introduced in Chapter 1. It makes the same choice as scikit-learn's
    ``DecisionTreeClassifier(max_depth=1)``; ties between features go to the
    lowest feature index.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Impurity to minimise.
    min_samples_leaf : int or float, default=1
        Minimum number of samples on each side (a float is a fraction of n).

    Attributes
    ----------
    feature_ : int or None
        Index of the feature split on; None if the data allowed no split.
    threshold_ : float or None
        Samples with ``x[feature_] <= threshold_`` go left.
    impurity_decrease_ : float
        Weighted impurity decrease of the split (0 without a split).
    value_ : ndarray of shape (2, n_classes)
        Class fractions (weighted) on the left and right side.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Examples
    --------
    >>> from treelib import DecisionStump
    >>> stump = DecisionStump().fit([[1.0], [2.0], [3.0], [4.0]], [0, 0, 1, 1])
    >>> stump.feature_, stump.threshold_
    (0, 2.5)
    """

    def __init__(self, criterion="gini", min_samples_leaf=1):
        self.criterion = criterion
        self.min_samples_leaf = min_samples_leaf

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # one split is a weak learner by design
        tags.input_tags.sparse = True  # made dense at validation (_validation.densify)
        return tags

    def fit(self, X, y, sample_weight=None):
        """Find the single best split. Returns ``self``."""
        X, y, w = check_fit_input(self, X, y, sample_weight, classifier=True)
        criterion = check_criterion(self.criterion, CLASSIFICATION_CRITERIA)
        min_leaf = check_min_samples_leaf(self.min_samples_leaf, len(X))
        self.n_classes_ = len(self.classes_)
        stats = target_stats(y, w, criterion, self.n_classes_)
        X, stats = X[w > 0], stats[:, w > 0]  # zero-weight samples take no part
        total = stats.sum(1)

        split = None  # the trees' stopping rules (Chapter 2), for a tree of depth 1
        impurity, rules = (
            float(criterion_of(criterion).impurity(total)),
            StoppingRules(1, 2, min_leaf),
        )
        if not is_leaf_before_search(len(X), float(total.sum()), impurity, 0, rules):
            split = best_split(X, stats, criterion, min_samples_leaf=min_leaf)
        if split is None:  # pure or unsplittable: both sides predict the whole node
            self.feature_, self.threshold_, self.impurity_decrease_ = None, None, 0.0
            self.value_ = leaf_value(torch.stack([total, total], 1), criterion).T.numpy()
            return self
        self.feature_, self.threshold_ = split.feature, split.threshold
        self.impurity_decrease_ = split.improvement
        left = goes_left(X[:, split.feature], split.threshold)
        sides = torch.stack([stats[:, left].sum(1), stats[:, ~left].sum(1)], 1)
        self.value_ = leaf_value(sides, criterion).T.numpy()
        return self

    def predict_proba(self, X):
        """Class fractions of the side each sample falls on."""
        X = check_predict_input(self, X)
        if self.feature_ is None:
            return np.repeat(self.value_[:1], len(X), axis=0)
        goes_right = (~goes_left(X[:, self.feature_], self.threshold_)).numpy()
        return self.value_[goes_right.astype(np.int64)]

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (``-inf`` for a class absent from the side)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The most likely class (the lowest one on a tie)."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
