"""CART decision trees for classification and regression.

``DecisionTreeClassifier`` is introduced in Chapter 2
(``notebooks/02_cart_classification``), ``DecisionTreeRegressor`` in Chapter 3
(``notebooks/03_regression_tree``). Both follow scikit-learn's API and rules.
"""

from contextlib import contextmanager

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    RANDOM_CATEGORICAL,
    bins_wanted,
    categorical_nan_error,
    check_categorical_features,
    check_criterion,
    check_fit_input,
    check_max_depth,
    check_max_features,
    check_max_leaf_nodes,
    check_min_samples_leaf,
    check_min_samples_split,
    check_monotonic_cst,
    check_poisson_target,
    check_predict_input,
    check_real,
    check_splitter,
    map_friedman_mse,
)
from .criteria import (
    CLASSIFICATION_CRITERIA,
    CRITERION_OBJECTS,
    MULTI_OUTPUT_REGRESSION,
    REGRESSION_CRITERIA,
    MultiOutputClassification,
    target_stats,
)
from .grow import StoppingRules, grow_best_first_on, grow_tree, grow_tree_best_first
from .hist import HistogramSearch, bin_columns
from .levelwise import grow_tree_levelwise
from .pruning import prune, pruning_path

TREE_METHODS = ("recursive", "levelwise", "hist")
BINNED_BUILDERS = ("hist", "best-first-hist")  # the builders that grow on bins (Chapter 7)


def exact_builders_only(criterion):
    """Whether only the exact (recursive, best-first) builders grow with ``criterion``.

    An unknown criterion says no: fitting raises its error.
    """
    try:
        return getattr(CRITERION_OBJECTS.get(criterion), "exact_builders_only", False)
    except TypeError:  # (an unhashable value)
        return False


@contextmanager
def one_cpu_thread(device):
    """Grow on one CPU thread: tensor ops per node or level are too small to share
    between threads, oversubscribed cores slow them down many times, and sums come
    out in the same order on every machine."""
    if device.type != "cpu":
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def apply_class_weight(class_weight, classes, y, sample_weight):
    """``sample_weight`` times the weight of each sample's class. Introduced in Chapter 6.

    As scikit-learn's trees and forests: ``compute_sample_weight(class_weight, labels)``
    on the original labels (``classes[y]``), multiplied into the sample weights.

    With several outputs (Chapter 3) ``class_weight`` is ``"balanced"`` or a
    list of dicts, one per output, and a sample's weight is the product of its
    outputs' class weights (``compute_sample_weight``, with its errors).

    Parameters
    ----------
    class_weight : dict, list of dicts, "balanced" or None
    classes : ndarray of shape (n_classes,), or a list of them (one per output)
        The sorted labels; ``y`` holds their indices.
    y : int64 tensor of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : float64 tensor of shape (n_samples,)

    Returns
    -------
    float64 tensor of shape (n_samples,)
    """
    if class_weight is None:
        return sample_weight
    if y.dim() == 2:  # multi-output: scikit-learn's compute_sample_weight checks the rest
        codes = y.numpy()
        labels = np.stack([c[codes[:, k]] for k, c in enumerate(classes)], axis=1)
        expanded = torch.from_numpy(compute_sample_weight(class_weight, labels))
        return check_weighted(sample_weight * expanded)
    if isinstance(class_weight, (list, tuple)):
        raise ValueError(
            "class_weight as a list of dicts is for multi-output targets, and treelib's "
            "trees have one output: pass one dict {label: weight} or 'balanced'."
        )
    if not (isinstance(class_weight, dict) or class_weight == "balanced"):
        raise ValueError(
            "class_weight must be None, 'balanced' or a dict {label: weight}; "
            f"got {class_weight!r}."
        )
    labels = classes[y.numpy()]
    expanded = torch.from_numpy(compute_sample_weight(class_weight, labels))
    return check_weighted(sample_weight * expanded)


def check_weighted(sample_weight):
    """Class-weighted sample weights must keep a positive sum."""
    if not sample_weight.sum() > 0:
        raise ValueError("class_weight times sample_weight must have a positive sum; it is 0.")
    return sample_weight


def check_categorical_columns(X, rules):
    """Categorical features take no NaN and no monotonic constraint (Chapter 6)."""
    for f in sorted(rules.categorical):
        if X is not None and bool(X[:, f].isnan().any()):
            raise categorical_nan_error(f)
        if rules.monotonic is not None and float(rules.monotonic[f]) != 0:
            raise ValueError(f"Categorical feature {f} cannot have a monotonic constraint.")


def multi_output_criterion(estimator, name):
    """The criterion object of a multi-output fit (Chapter 3), or scikit-learn's error.

    Classifiers average one criterion over their outputs
    (:class:`treelib.criteria.MultiOutputClassification`); a regression
    criterion has a multi-output version in
    :data:`treelib.criteria.MULTI_OUTPUT_REGRESSION`.
    """
    if estimator._is_classifier:
        return MultiOutputClassification(name, [len(c) for c in estimator.classes_])
    if name not in MULTI_OUTPUT_REGRESSION:
        raise ValueError(f"criterion={name!r} does not support multi-output y in treelib.")
    return MULTI_OUTPUT_REGRESSION[name]


def proba_per_output(estimator, proba):
    """Class probabilities as scikit-learn returns them (Chapter 5).

    ``proba``: (n_samples, n_classes), or (n_samples, n_outputs, max_n_classes)
    for several outputs, which become a list with one (n_samples,
    n_classes_[k]) array per output (the padding columns dropped).
    """
    if estimator.n_outputs_ == 1:
        return proba
    return [proba[:, k, :n] for k, n in enumerate(estimator.n_classes_)]


def classes_of(estimator, proba):
    """The most likely class of each sample from :func:`proba_per_output`'s result.

    With several outputs: shape (n_samples, n_outputs), of the first output's
    labels' dtype, as scikit-learn.
    """
    if estimator.n_outputs_ == 1:
        return estimator.classes_[np.argmax(proba, axis=1)]
    predictions = np.zeros((len(proba[0]), estimator.n_outputs_), dtype=estimator.classes_[0].dtype)
    for k, p in enumerate(proba):
        predictions[:, k] = estimator.classes_[k].take(np.argmax(p, axis=1), axis=0)
    return predictions


class BaseDecisionTree(BaseEstimator):
    """What the classifier and the regressor share. Introduced in Chapter 2."""

    _criteria = ()
    _is_classifier = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing value (Chapter 6)
        tags.target_tags.multi_output = True  # y of shape (n_samples, n_outputs) (Chapter 3)
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = True  # made dense at validation (_validation.densify)
        return tags

    def _stopping_rules(self, n_samples, n_features, total_weight):
        min_samples_leaf = check_min_samples_leaf(self.min_samples_leaf, n_samples)
        min_samples_split = check_min_samples_split(
            self.min_samples_split, n_samples, type(self).__name__
        )
        fraction = check_real("min_weight_fraction_leaf", self.min_weight_fraction_leaf, 0.0, 0.5)
        if self.monotonic_cst is not None and getattr(self, "n_outputs_", 1) > 1:
            raise ValueError("Monotonicity constraints are not supported with multiple outputs.")
        rules = StoppingRules(
            max_depth=check_max_depth(self.max_depth),
            min_samples_split=max(min_samples_split, 2 * min_samples_leaf),
            min_samples_leaf=min_samples_leaf,
            min_weight_leaf=fraction * total_weight,
            min_impurity_decrease=check_real(
                "min_impurity_decrease", self.min_impurity_decrease, 0.0
            ),
            max_features=check_max_features(self.max_features, n_features),
            categorical=check_categorical_features(
                self.categorical_features, n_features, getattr(self, "feature_names_in_", None)
            ),
            monotonic=check_monotonic_cst(
                self.monotonic_cst, n_features,
                len(self.classes_) if self._is_classifier and self.monotonic_cst is not None
                else None,
            ),
            splitter=check_splitter(self.splitter, type(self).__name__),
        )  # fmt: skip
        if rules.splitter == "random" and rules.categorical:
            raise ValueError(RANDOM_CATEGORICAL)
        return rules

    def fit(self, X, y, sample_weight=None):
        """Grow the tree from the training set ``(X, y)``. Returns ``self``.

        ``y`` has shape (n_samples,) or, for several outputs (Chapter 3),
        (n_samples, n_outputs); a column vector is one output.
        ``X`` may be a ``scipy.sparse`` matrix or array (Chapter 2): it is made
        dense, float32, once (n x d in memory); scikit-learn's sparse splitter
        grows the same tree as its dense one, so the tree is the same.
        """
        if not self._is_classifier and isinstance(self.criterion, str):
            if self.criterion == "poisson":  # (first, as scikit-learn)
                check_poisson_target(y)
        X, y, w = check_fit_input(
            self, X, y, sample_weight, classifier=self._is_classifier, allow_nan=True,
            multi_output=True,
        )  # fmt: skip
        if self._is_classifier:
            w = apply_class_weight(self.class_weight, self.classes_, y, w)
        multi_output = y.dim() == 2
        builder = self._builder(missing=bool(X.isnan().any()), multi_output=multi_output)
        if builder not in BINNED_BUILDERS:
            return self._fit_tensors(X, y, w)
        # The histogram builder reads X only to bin it: bin the rows that count, free X.
        keep, device = w > 0, self._device()
        categorical = self._categorical(X.shape[1])  # (one bin per category)
        with one_cpu_thread(device):
            kept = (X if bool(keep.all()) else X[keep]).to(device)
            bins = bin_columns(kept, self.max_bins, categorical)
        del kept  # (no reference to X may outlive the binning)
        X = None  # (memory: the float32 copy of the data is not kept while growing)
        return self._fit_tensors(X, y, w, bins)

    def _categorical(self, n_features):
        """The categorical features' indices (Chapter 6), for the histogram builder's bins."""
        names = getattr(self, "feature_names_in_", None)
        return check_categorical_features(self.categorical_features, n_features, names)

    def _builder(self, missing=False, rules=None, multi_output=False):
        """Which builder grows this tree: the one place that decides it (Chapter 7).

        With ``max_leaf_nodes``: ``"best-first-hist"`` (best-first growth on
        histograms, :func:`treelib.grow.grow_best_first_on`) for
        ``tree_method="hist"``, unless the tree needs what only the recursive
        builder handles (below) or has monotonic constraints; else
        ``"best-first"`` (exact search, any ``tree_method``). Without it:
        ``"recursive"`` for ``tree_method="recursive"`` and for what only it
        handles: categorical features together with monotonic constraints,
        random splits, several outputs (``multi_output``: y of
        shape (n_samples, n_outputs)), and the criteria ``"absolute_error"`` (a
        median is not a sum: the level-wise and histogram searches only add
        statistics up) and ``"poisson"`` (their sums are exact only to the size
        of a whole level, and a child whose targets sum to 0, which Poisson
        forbids, could pass for one with a small rate; Chapter 3); otherwise
        ``"levelwise"``, or ``"hist"`` (which grows from the bins alone);
        monotonic constraints (Chapter 6) too, since Chapter 7. Every
        builder splits missing values (``missing``: NaN in X; the level-wise ones
        too since Chapter 7), so ``missing`` no longer changes the choice.
        Categorical features (Chapter 6) are split one-vs-rest by every
        builder (``"hist"``: one bin per category; Chapter 7). The
        forests and gradient boosting ask their trees here. ``rules``: the
        resolved rules, if known (else read from the parameters).
        """
        if rules is not None:
            monotonic = rules.monotonic is not None
            special = (monotonic and bool(rules.categorical)) or rules.splitter != "best"
        else:
            monotonic = self.monotonic_cst is not None
            special = monotonic and self.categorical_features is not None
            special = special or self.splitter != "best"
        special = special or exact_builders_only(self.criterion)
        binned = bins_wanted(self.tree_method, self.max_bins)  # (hist, with a valid max_bins)
        if self.max_leaf_nodes is not None:
            on_bins = binned and not (special or monotonic or multi_output)
            return "best-first-hist" if on_bins else "best-first"
        if self.tree_method == "recursive" or special or multi_output:
            return "recursive"
        if self.tree_method == "hist" and not binned:
            return "levelwise"  # (an invalid max_bins: _grow raises its error)
        return self.tree_method

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """The cost-complexity pruning path of the tree grown on ``(X, y)``.

        Introduced in Chapter 2. As scikit-learn: a copy with ``ccp_alpha=0``
        is fitted (every other parameter kept) and weakest-link pruning is run
        on it down to the root (:mod:`treelib.pruning`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,) or None, default=None

        Returns
        -------
        sklearn.utils.Bunch
            ``ccp_alphas``: effective alphas of the subtrees along the path,
            increasing, the first 0; ``impurities``: the sum over the
            subtree's leaves of ``W_t i_t / W`` for each of them.
        """
        tree = clone(self).set_params(ccp_alpha=0.0).fit(X, y, sample_weight=sample_weight)
        return Bunch(**pruning_path(tree.tree_))

    def _fit_tensors(self, X, y, w, bins=None):
        """Fit on validated tensors (the forest calls this to skip re-validation).

        ``bins``: the histogram builder's bins of ``X``, if already computed.
        ``X`` may be None when the histogram builder grows the tree: ``bins``
        are then those of the rows of positive weight only (``fit`` bins them
        and frees ``X``).
        """
        criterion = check_criterion(self.criterion, self._criteria)
        ccp_alpha = check_real("ccp_alpha", self.ccp_alpha, 0.0)
        n_features = bins.codes.shape[1] if X is None else X.shape[1]
        self.n_outputs_ = 1 if y.dim() == 1 else y.shape[1]
        rules = self._stopping_rules(len(w), n_features, float(w.sum()))
        n_classes = len(self.classes_) if self._is_classifier else None
        if self.n_outputs_ > 1:
            criterion, n_classes = multi_output_criterion(self, criterion), None
        stats = target_stats(y, w, criterion, n_classes)
        check_categorical_columns(X, rules)
        keep = w > 0  # zero-weight samples take no part, as in scikit-learn
        seed = check_random_state(self.random_state).randint(2**31)
        device = self._device()
        if not bool(keep.all()):  # (no copies when every sample counts)
            stats = stats[:, keep]
            if X is not None:  # (else the bins hold only these rows)
                X, bins = X[keep], None if bins is None else bins.select(keep)
        X, stats = None if X is None else X.to(device), stats.to(device)
        if rules.monotonic is not None:  # (the constraints live where the tree grows)
            rules = rules._replace(monotonic=rules.monotonic.to(device))
        bins = None if bins is None else bins.to(device)
        # (a tree that saw NaN shows where NaN goes in export_text and plot_tree)
        self._missing_in_fit = (
            bool(X.isnan().any()) if X is not None else bool(bins.high.isnan().any())
        )
        tree = self._grow(X, stats, criterion, rules, seed, bins)
        tree.n_features = n_features
        self.tree_ = prune(tree, ccp_alpha)  # pruning post-processes any builder's tree
        self.max_features_ = rules.max_features
        if self._is_classifier and self.n_outputs_ > 1:
            self.n_classes_ = np.array([len(c) for c in self.classes_], dtype=np.intp)
            self.tree_.set_n_classes(self.n_classes_)
        elif self._is_classifier:
            self.n_classes_ = len(self.classes_)
        return self

    def _device(self):
        try:
            return torch.device("cpu" if self.device is None else self.device)
        except (RuntimeError, TypeError) as error:
            raise ValueError(f"device must name a torch device; got {self.device!r}.") from error

    def _grow(self, X, stats, criterion, rules, seed, bins=None):
        """Run the chosen builder; all three grow the same tree (Chapter 7).

        ``hist`` grows it only when its bins hold every distinct value.
        Random splits (``splitter="random"``, Chapter 5), and categorical
        features together with monotonic constraints, are only handled by the
        recursive builder (Chapter 6); categorical features, monotonic
        constraints and missing values (NaN) by all three. With
        ``max_leaf_nodes`` the trees grow best-first: on histograms for
        ``tree_method="hist"`` (:func:`treelib.grow.grow_best_first_on`; not
        with monotonic constraints), else with the exact split search
        (:func:`treelib.grow.grow_tree_best_first`).
        """
        if self.tree_method not in TREE_METHODS:
            raise ValueError(
                f"tree_method must be one of {TREE_METHODS}; got {self.tree_method!r}."
            )
        if self.tree_method == "hist" and not bins_wanted(self.tree_method, self.max_bins):
            raise ValueError(f"max_bins must be an int >= 2; got {self.max_bins!r}.")
        max_leaf_nodes = check_max_leaf_nodes(self.max_leaf_nodes)
        builder = self._builder(self._missing_in_fit, rules, self.n_outputs_ > 1)
        with one_cpu_thread(stats.device):
            if builder == "best-first-hist":
                search = HistogramSearch(X, stats, self.max_bins, criterion, bins)
                return grow_best_first_on(search, stats, criterion, rules, seed, max_leaf_nodes)
            if builder == "best-first":
                return grow_tree_best_first(X, stats, criterion, rules, seed, max_leaf_nodes)
            if builder == "recursive":
                return grow_tree(X, stats, criterion, rules, seed)
            search = None  # exact
            if builder == "hist":
                search = HistogramSearch(
                    X, stats, self.max_bins, criterion, bins, rules.categorical
                )
            return grow_tree_levelwise(X, stats, criterion, rules, seed, search)

    def apply(self, X):
        """Index of the leaf each sample ends up in (int64, as scikit-learn)."""
        return self._leaves_of_tensor(check_predict_input(self, X, allow_nan=True)).cpu().numpy()

    def decision_path(self, X):
        """The nodes each sample passes through, as scikit-learn's ``decision_path``.

        Introduced with ``tree_`` in Chapter 2.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scipy.sparse CSR matrix of shape (n_samples, node_count)
            Entry ``(i, j)`` is 1 when sample ``i`` visits node ``j``.
        """
        return self.tree_.path_matrix(self.apply(X))

    def _leaves_of_tensor(self, X):
        """Leaf ids, computed on the estimator's ``device``, of a validated tensor."""
        return self.tree_.apply_tensor(X.to(self._device()))

    def _leaf_values(self, X):
        return self._leaf_values_of_tensor(check_predict_input(self, X, allow_nan=True))

    def _leaf_values_of_tensor(self, X):
        """Leaf values for an already validated float32 tensor (used by forests).

        Shape (n_samples, n_values); with several outputs (n_samples,
        n_outputs, n_values), as scikit-learn's ``tree_.predict``.
        """
        leaves = self._leaves_of_tensor(X).cpu().numpy()
        if self.n_outputs_ > 1:
            return self.tree_.value[leaves]
        return self.tree_.value[leaves, 0]

    def get_depth(self):
        """Depth of the tree (a lone root has depth 0)."""
        return self.tree_.max_depth

    def get_n_leaves(self):
        """Number of leaves."""
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Mean decrease in impurity (MDI) per feature, summing to one.

        Raises ``NotFittedError`` before ``fit``, as scikit-learn.
        """
        check_is_fitted(self)
        return self.tree_.compute_feature_importances()


class DecisionTreeClassifier(ClassifierMixin, BaseDecisionTree):
    """A CART classification tree. Introduced in Chapter 2.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Impurity to minimise; entropy is in bits (Chapter 4).
    splitter : {"best", "random"}, default="best"
        ``"best"``: the best threshold of every searched feature. ``"random"``:
        one random threshold per searched feature, uniform between its smallest
        and largest value in the node, and the best of those (scikit-learn's
        random splitter, the trees of extra trees, Chapter 5). Random splits
        are grown by the recursive builder whatever ``tree_method`` says, and
        not with ``categorical_features``.
    max_depth : int or None, default=None
        Grow at most this deep; None grows until leaves are pure.
    min_samples_split : int or float, default=2
        A node with fewer samples is a leaf (float: fraction of n).
    min_samples_leaf : int or float, default=1
        Each child must keep at least this many samples (float: fraction of n).
    min_weight_fraction_leaf : float, default=0.0
        Each child must keep this fraction of the total sample weight.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features searched at each node, drawn at random (Chapter 5).
    random_state : int, RandomState or None, default=None
        Seeds the feature order, which breaks ties between equally good splits.
    min_impurity_decrease : float, default=0.0
        Split only if the weighted impurity decrease reaches this value.
    max_leaf_nodes : int >= 2 or None, default=None
        Grow best-first (Chapter 2): always split the open node whose split
        decreases the weighted impurity most, until the tree has this many
        leaves (or no node can be split). None: grow depth-first, unlimited.
        ``tree_method="hist"`` grows it on histograms (Chapter 7: the tree of
        the exact search when the bins hold every distinct value); the other
        methods grow it with the exact split search.
    class_weight : dict, list of dicts, "balanced" or None, default=None
        Weights of the classes, multiplying ``sample_weight`` (Chapter 6):
        ``{label: weight}``, or ``"balanced"``: ``n_samples / (n_classes *
        count of the class)``, as scikit-learn's ``compute_sample_weight``.
        With several outputs (Chapter 3): one dict per output, or
        ``"balanced"``; a sample's weight is the product over its outputs.
    ccp_alpha : float >= 0, default=0.0
        Cost-complexity pruning (Chapter 2): after growing, keep the subtree
        with the largest effective alpha at most ``ccp_alpha``
        (:mod:`treelib.pruning`). 0: no pruning.
    monotonic_cst : array-like of int of shape (n_features,) or None, default=None
        Monotonic constraints (Chapter 6): 1 where the prediction (the
        probability of the second class, for a binary classifier) may never
        fall as the feature grows, -1 where it may never rise, 0 for no
        constraint. As scikit-learn: a split on a constrained feature must keep
        its children's values in order and within the bounds its ancestors
        set; not for multiclass problems, nor for categorical features.
    categorical_features : indices, boolean mask, column names or None, default=None
        Features whose values are unordered codes: they are split one-vs-rest,
        ``x == c`` left and ``x != c`` right (Chapter 6).
    tree_method : {"recursive", "levelwise", "hist"}, default="levelwise"
        The builder (Chapter 7): ``"recursive"`` is Chapter 2's readable one,
        ``"levelwise"`` grows the identical tree one level at a time,
        ``"hist"`` searches splits on at most ``max_bins`` bins per feature
        (identical to the exact builders when every feature has at most
        ``max_bins`` distinct float32 values; otherwise only bin edges are tried
        and the tree is close to, not equal to, the exact one). All builders
        break ties by one rule, ``treelib.rules.is_tie_or_best``.
    max_bins : int, default=255
        Bins per feature for ``tree_method="hist"``.
    device : str, torch.device or None, default=None
        Where the tensors live while growing and predicting (None: CPU).

    Attributes
    ----------
    tree_ : treelib.tree_structure.Tree
        The fitted tree as flat numpy arrays (scikit-learn's field names, dtypes
        and shapes); ``tree_.to_torch()`` gives them as tensors.
    classes_ : ndarray of shape (n_classes,), or a list of them (one per output)
    n_classes_ : int, or ndarray of shape (n_outputs,) with several outputs
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only if X had column names)
    max_features_ : int
    n_outputs_ : int
        Columns of ``y`` (Chapter 5): a 2-d ``y`` of shape (n_samples,
        n_outputs) grows one tree for all outputs, whose impurity is the mean
        of theirs; ``predict`` then returns (n_samples, n_outputs) and
        ``predict_proba`` a list, one array per output.
    feature_importances_ : ndarray of shape (n_features,)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from treelib import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> DecisionTreeClassifier(max_depth=2).fit(X, y).get_n_leaves()
    3
    """

    _criteria = CLASSIFICATION_CRITERIA
    _is_classifier = True

    def __init__(
        self,
        *,
        criterion="gini",
        splitter="best",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=None,
        random_state=None,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        class_weight=None,
        ccp_alpha=0.0,
        monotonic_cst=None,
        categorical_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha
        self.monotonic_cst = monotonic_cst
        self.categorical_features = categorical_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device

    def predict_proba(self, X):
        """Class fractions (weighted) of the leaf each sample falls in.

        With several outputs (Chapter 3): a list, one array of shape
        (n_samples, n_classes_[k]) per output, as scikit-learn.
        """
        return proba_per_output(self, self._leaf_values(X))

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (``-inf`` for a class absent from the leaf).

        Introduced in Chapter 2, as scikit-learn's method (a list with several outputs).
        """
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in proba] if self.n_outputs_ > 1 else np.log(proba)

    def predict(self, X):
        """The most likely class of each sample (the lowest class on a tie).

        Shape (n_samples,), or (n_samples, n_outputs) with several outputs.
        """
        return classes_of(self, self.predict_proba(X))


class DecisionTreeRegressor(RegressorMixin, BaseDecisionTree):
    """A CART regression tree. Introduced in Chapter 3.

    Parameters are those of :class:`DecisionTreeClassifier`, except
    ``criterion`` and ``class_weight``, which it does not have. ``criterion``
    is one of ``"squared_error"`` (default: a leaf predicts the weighted mean
    of its targets), ``"absolute_error"`` (the weighted median) and
    ``"poisson"`` (the mean, splits reducing the half Poisson deviance; ``y``
    must be non-negative with a positive sum); these two are grown by the
    exact builders only (see :meth:`_builder`). ``"friedman_mse"`` is mapped
    to ``"squared_error"`` with scikit-learn 1.9's FutureWarning.

    Examples
    --------
    >>> from treelib import DecisionTreeRegressor
    >>> reg = DecisionTreeRegressor(max_depth=1).fit([[0.0], [1.0], [2.0], [3.0]], [1, 1, 5, 5])
    >>> reg.predict([[0.5], [2.5]]).tolist()
    [1.0, 5.0]
    """

    _criteria = REGRESSION_CRITERIA

    def __init__(
        self,
        *,
        criterion="squared_error",
        splitter="best",
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        max_features=None,
        random_state=None,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        ccp_alpha=0.0,
        monotonic_cst=None,
        categorical_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
    ):
        self.criterion = map_friedman_mse(criterion)  # (scikit-learn 1.9 does it here)
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.ccp_alpha = ccp_alpha
        self.monotonic_cst = monotonic_cst
        self.categorical_features = categorical_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device

    def predict(self, X):
        """The value (mean or median target) of the leaf each sample falls in.

        Shape (n_samples,), or (n_samples, n_outputs) with several outputs (Chapter 3).
        """
        values = self._leaf_values(X)
        return values[:, :, 0] if self.n_outputs_ > 1 else values[:, 0]
