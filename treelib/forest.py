"""Random forests: many decorrelated trees, averaged.

Introduced in Chapter 5 (``notebooks/05_random_forest``). Each tree is grown on
a bootstrap sample (drawn as integer sample weights) and searches only
``max_features`` random features per node; the forest averages the trees'
probabilities (soft voting) or predictions, as scikit-learn does.
"""

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from tqdm import tqdm  # plain text bar: tqdm.auto warns without ipywidgets

from ._validation import _is_float, _is_int, check_fit_input, check_predict_input
from .hist import bin_columns
from .tree import DecisionTreeClassifier, DecisionTreeRegressor

MAX_INT = np.iinfo(np.int32).max


def bootstrap_counts(seed, n_samples, n_draws):
    """How often each sample is drawn in ``n_draws`` draws with replacement.

    Introduced in Chapter 5. Uses scikit-learn's recipe, so for the same seed
    the same rows are drawn.
    """
    draws = check_random_state(seed).randint(0, n_samples, n_draws, dtype=np.int32)
    return np.bincount(draws, minlength=n_samples)


def n_bootstrap_draws(max_samples, n_samples):
    """``max_samples``: None (n draws), an int, or a fraction of n."""
    if max_samples is None:
        return n_samples
    if _is_int(max_samples) and 1 <= max_samples <= n_samples:
        return int(max_samples)
    if _is_float(max_samples) and 0.0 < max_samples <= 1.0:
        return max(round(n_samples * max_samples), 1)
    raise ValueError(
        f"max_samples must be None, an int in [1, {n_samples}] or a float in (0, 1]; "
        f"got {max_samples!r}."
    )


class BaseForest(BaseEstimator):
    """What the forest classifier and regressor share. Introduced in Chapter 5."""

    _tree_class = None

    def _tree_params(self):
        names = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf")
        names += ("min_weight_fraction_leaf", "max_features", "min_impurity_decrease")
        names += ("categorical_features", "tree_method", "max_bins", "device")
        return {name: getattr(self, name) for name in names}

    def fit(self, X, y, sample_weight=None):
        """Grow ``n_estimators`` trees on bootstrap samples. Returns ``self``."""
        classifier = self._tree_class is DecisionTreeClassifier
        X, y, w = check_fit_input(self, X, y, sample_weight, classifier=classifier)
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            raise ValueError(f"n_estimators must be an int >= 1; got {self.n_estimators!r}.")
        if self.oob_score and not self.bootstrap:
            raise ValueError("oob_score=True needs bootstrap=True (no sample is out of bag).")
        n = X.shape[0]
        n_draws = n_bootstrap_draws(self.max_samples, n) if self.bootstrap else n
        seeds = check_random_state(self.random_state).randint(MAX_INT, size=self.n_estimators)
        self.estimators_, in_bag = [], []
        bins = None  # the histogram builder bins the data once for all trees
        if self.tree_method == "hist" and _is_int(self.max_bins) and self.max_bins >= 2:
            bins = bin_columns(X, self.max_bins)
        for seed in tqdm(seeds, desc="trees", disable=not self.verbose):
            tree = self._tree_class(**self._tree_params(), random_state=seed)
            tree.n_features_in_ = self.n_features_in_
            if hasattr(self, "feature_names_in_"):
                tree.feature_names_in_ = self.feature_names_in_
            if classifier:
                tree.classes_ = self.classes_
            counts = bootstrap_counts(seed, n, n_draws) if self.bootstrap else np.ones(n)
            self.estimators_.append(tree._fit_tensors(X, y, w * torch.from_numpy(counts), bins))
            in_bag.append(counts > 0)
        if self.oob_score:
            self._set_oob_score(X, y.numpy(), np.array(in_bag))
        return self

    def _tree_outputs(self, X):
        """Leaf values of every tree for tensor X: shape (n_trees, n_samples, n_values)."""
        return np.stack([t._leaf_values_of_tensor(X) for t in self.estimators_])

    def _set_oob_score(self, X, y, in_bag):
        outputs = self._tree_outputs(X)  # (n_trees, n, n_values)
        out_of_bag = ~in_bag[:, :, None]
        n_oob = out_of_bag.sum(0)
        oob = (outputs * out_of_bag).sum(0) / np.maximum(n_oob, 1)
        self._store_oob(oob, y)

    @property
    def feature_importances_(self):
        """Mean of the trees' normalised MDI importances, renormalised to sum to one."""
        grown = [t.feature_importances_ for t in self.estimators_ if t.tree_.node_count > 1]
        if not grown:
            return np.zeros(self.n_features_in_)
        mean = np.mean(grown, axis=0)
        return mean / mean.sum()


class RandomForestClassifier(ClassifierMixin, BaseForest):
    """A random forest of CART classification trees. Introduced in Chapter 5.

    Parameters
    ----------
    n_estimators : int, default=100
    criterion, max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
min_impurity_decrease
        Passed to every :class:`~treelib.DecisionTreeClassifier`.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Features each node searches, drawn afresh at every node.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample (else on the whole data).
    oob_score : bool, default=False
        Score each sample with the trees that did not draw it (``oob_score_``).
    max_samples : int, float or None, default=None
        Draws per bootstrap sample (None: n).
    random_state : int, RandomState or None, default=None
    verbose : bool, default=False
        Show a progress bar over the trees (tqdm).
    categorical_features : indices, boolean mask, column names or None, default=None
        Features split one-vs-rest (``x == c``), passed to every tree (Chapter 6).
    tree_method, max_bins, device
        The builder and device of every tree (Chapter 7).

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
    classes_, n_features_in_, feature_importances_
    oob_score_ : float, oob_decision_function_ : ndarray (with ``oob_score=True``)
    """

    _tree_class = DecisionTreeClassifier

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
        min_impurity_decrease=0.0,
        bootstrap=True,
        oob_score=False,
        max_samples=None,
        random_state=None,
        verbose=False,
        categorical_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.max_samples = max_samples
        self.random_state = random_state
        self.verbose = verbose
        self.categorical_features = categorical_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device

    def _store_oob(self, oob, y):
        self.oob_decision_function_ = oob
        self.oob_score_ = accuracy_score(y, np.argmax(oob, axis=1))

    def predict_proba(self, X):
        """Soft vote: the mean of the trees' class probabilities."""
        X = check_predict_input(self, X)
        return self._tree_outputs(X).mean(0)

    def predict(self, X):
        """The class with the highest mean probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def predict_majority(self, X):
        """Hard vote, for comparison: the class most trees predict (lowest on a tie)."""
        X = check_predict_input(self, X)
        votes = self._tree_outputs(X).argmax(2)  # (n_trees, n_samples)
        counts = np.stack([(votes == k).sum(0) for k in range(len(self.classes_))], axis=1)
        return self.classes_[np.argmax(counts, axis=1)]


class RandomForestRegressor(RegressorMixin, BaseForest):
    """A random forest of CART regression trees. Introduced in Chapter 5.

    Parameters are those of :class:`RandomForestClassifier`, except
    ``criterion="squared_error"`` and ``max_features=1.0`` (all features, as in
    scikit-learn). With ``oob_score=True``, ``oob_score_`` is the out-of-bag R².
    """

    _tree_class = DecisionTreeRegressor

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
        min_impurity_decrease=0.0,
        bootstrap=True,
        oob_score=False,
        max_samples=None,
        random_state=None,
        verbose=False,
        categorical_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.max_samples = max_samples
        self.random_state = random_state
        self.verbose = verbose
        self.categorical_features = categorical_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device

    def _store_oob(self, oob, y):
        self.oob_prediction_ = oob[:, 0]
        self.oob_score_ = r2_score(y, self.oob_prediction_)

    def predict(self, X):
        """The mean of the trees' predictions."""
        X = check_predict_input(self, X)
        return self._tree_outputs(X).mean(0)[:, 0]
