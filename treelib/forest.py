"""Random forests: many decorrelated trees, averaged.

Introduced in Chapter 5 (``notebooks/05_random_forest``). Each tree is grown on
a bootstrap sample (its draw counts are its sample weights; with
``sample_weight`` or ``class_weight`` the rows are drawn with probabilities
proportional to the weights, as in scikit-learn 1.9) and searches only
``max_features`` random features per node; the forest averages the trees'
probabilities (soft voting) or predictions, as scikit-learn does.
"""

import warnings

import numpy as np
import torch
from joblib import Parallel, delayed
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted
from tqdm import tqdm  # plain text bar: tqdm.auto warns without ipywidgets

from ._validation import (
    _is_float,
    _is_int,
    check_categorical_features,
    check_fit_input,
    check_min_samples_split,
    check_poisson_target,
    check_predict_input,
    invalid_parameter,
    map_friedman_mse,
)
from .batched import AS_DONE, fit_trees_batched
from .hist import bin_columns
from .rules import StoppingRules
from .tree import (
    BINNED_BUILDERS,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    apply_class_weight,
    check_categorical_columns,
    classes_of,
    one_cpu_thread,
    proba_per_output,
)

MAX_INT = np.iinfo(np.int32).max
NO_OOB_WARNING = (
    "Some inputs do not have OOB scores. This probably means too few trees were used "
    "to compute any reliable OOB estimates."
)


def balanced_weights(y, sample_weight=None):
    """Class weights ``W / (K W_k)`` of the classes coded ``0..K-1`` in ``y``.

    Introduced in Chapter 6. scikit-learn 1.9's ``compute_class_weight("balanced",
    ..., sample_weight=w)`` with the class weights ``W_k`` summed from the sample
    weights (every class is present); written here because scikit-learn before 1.7
    (Colab's 1.6) has no ``sample_weight`` argument there.
    """
    codes = y.numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
    if isinstance(sample_weight, torch.Tensor):
        sample_weight = sample_weight.numpy()
    counts = np.bincount(codes, weights=sample_weight).astype(np.float64)
    return counts.sum() / (len(counts) * counts)


def bootstrap_counts(seed, n_samples, n_draws):
    """How often each sample is drawn in ``n_draws`` draws with replacement.

    Introduced in Chapter 5. Uses scikit-learn's recipe, so for the same seed
    the same rows are drawn.
    """
    draws = check_random_state(seed).randint(0, n_samples, n_draws, dtype=np.int32)
    return np.bincount(draws, minlength=n_samples)


def bootstrap_indices(seed, n_samples, n_draws, p=None):
    """The rows drawn by :func:`bootstrap_counts`, in drawing order.

    Introduced in Chapter 5 (``estimators_samples_``).

    Parameters
    ----------
    seed : int
        The tree's ``random_state``.
    n_samples, n_draws : int
        Rows to draw from, and how many draws (with replacement).
    p : array-like of shape (n_samples,) or None, default=None
        Draw row ``i`` with probability proportional to ``p[i]`` (scikit-learn's
        ``RandomState.choice`` recipe); None: uniformly (``randint``). The forests
        use it with sample weights and class weights, as scikit-learn 1.9.

    Returns
    -------
    ndarray of int32, shape (n_draws,)
    """
    if p is None:
        return check_random_state(seed).randint(0, n_samples, n_draws, dtype=np.int32)
    p = np.asarray(p, dtype=np.float64)
    draws = check_random_state(seed).choice(n_samples, n_draws, replace=True, p=p / p.sum())
    return draws.astype(np.int32)


def n_bootstrap_draws(max_samples, n_samples, sample_weight=None):
    """Draws per bootstrap sample, as scikit-learn 1.9 counts them. Introduced in Chapter 5.

    Parameters
    ----------
    max_samples : None, int >= 1 or float > 0
        None: ``n_samples`` draws; an int: that many; a float: ``max(1,
        int(max_samples * n))`` with ``n`` the number of rows, or the sum of
        ``sample_weight`` when the rows are drawn by weight (then a row of
        integer weight ``k`` counts as ``k`` rows). Values above ``n_samples``
        (or 1.0) are allowed: draws are with replacement.
    n_samples : int
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        The weights the rows are drawn by (see :class:`RandomForestClassifier`).

    Returns
    -------
    int
    """
    if max_samples is None:
        return n_samples
    if _is_int(max_samples) and max_samples >= 1:
        return int(max_samples)
    if not (_is_float(max_samples) and max_samples > 0.0):
        raise ValueError(
            f"max_samples must be None, an int >= 1 or a float > 0; got {max_samples!r}."
        )
    if sample_weight is None:
        n_weighted = n_samples
        of_what = f"the number of samples is {n_weighted}"
    else:
        n_weighted = sample_weight.sum()
        of_what = f"the total sum of sample weights is {n_weighted}"
    n_draws = max(int(max_samples * n_weighted), 1)
    if n_draws < max(10, n_samples ** (1 / 3)):
        warnings.warn(
            f"Using the fractional value {max_samples=} when {of_what} results in a low "
            f"number ({n_draws}) of bootstrap samples. We recommend passing `max_samples` "
            "as an integer instead.",
            UserWarning,
            stacklevel=3,
        )
    return n_draws


def _fit_tree(tree, X, y, w, bins):
    """One job of a forest's fit: grow ``tree`` on validated tensors and return it."""
    return tree._fit_tensors(X, y, w, bins)


class EnsembleSequence:
    """A fitted ensemble as a sequence of its members, as in scikit-learn (Chapter 5).

    ``len(model)``, ``model[i]`` and ``for member in model`` read ``estimators_``;
    the forests and both AdaBoost ensembles share it.
    """

    def __len__(self):
        """Number of fitted members (``len(model.estimators_)``)."""
        return len(self.estimators_)

    def __getitem__(self, index):
        """The ``index``-th member."""
        return self.estimators_[index]

    def __iter__(self):
        """Iterate over the members."""
        return iter(self.estimators_)


class BaseForest(EnsembleSequence, BaseEstimator):
    """What the forest classifier and regressor share. Introduced in Chapter 5.

    A fitted forest is a sequence of trees, as in scikit-learn: ``len(forest)``,
    ``forest[i]`` and ``for tree in forest`` read ``estimators_``.
    """

    _tree_class = None
    _template_params = {}  # the parameters that make _tree_class this forest's kind of tree

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # NaN is a missing value (Chapter 6)
        tags.target_tags.multi_output = True  # y of shape (n_samples, n_outputs) (Chapter 3)
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_label = True
        tags.input_tags.sparse = True  # made dense at validation (_validation.densify)
        return tags

    @property
    def estimator(self):
        """The unfitted tree the forest's trees are made from (Chapter 5).

        As scikit-learn's ``estimator`` of a forest: fixed by the class, not a
        parameter; a default tree (``splitter="random"`` for extra trees).
        ``estimator_`` is that tree with the forest's tree parameters, after ``fit``.
        """
        return self._tree_class(**self._template_params)

    def _tree_params(self):
        names = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf")
        names += ("min_weight_fraction_leaf", "max_features", "min_impurity_decrease")
        names += ("max_leaf_nodes", "ccp_alpha", "monotonic_cst")
        names += ("categorical_features", "tree_method", "max_bins", "device")
        return {name: getattr(self, name) for name in names}

    def _check_params(self):
        """scikit-learn's checks of the forest's own parameters, with its errors."""
        owner = type(self).__name__
        if not (_is_int(self.n_estimators) and self.n_estimators >= 1):
            allowed = "an int in the range [1, inf)"
            raise invalid_parameter("n_estimators", owner, allowed, self.n_estimators)
        if not (self.n_jobs is None or _is_int(self.n_jobs)):
            raise invalid_parameter("n_jobs", owner, "an instance of 'int' or None", self.n_jobs)
        max_samples = self.max_samples
        if not (
            max_samples is None
            or (_is_int(max_samples) and max_samples >= 1)
            or (_is_float(max_samples) and max_samples > 0.0)
        ):
            allowed = "None, a float in the range (0.0, inf) or an int in the range [1, inf)"
            raise invalid_parameter("max_samples", owner, allowed, max_samples)
        check_min_samples_split(self.min_samples_split, 1, owner)  # named after the forest
        if not self.bootstrap and self.max_samples is not None:
            raise ValueError(
                "`max_sample` cannot be set if `bootstrap=False`. Either switch to "
                "`bootstrap=True` or set `max_sample=None`."
            )
        if self.oob_score and not self.bootstrap:
            raise ValueError("Out of bag estimation only available if bootstrap=True")

    def fit(self, X, y, sample_weight=None):
        """Grow ``n_estimators`` trees on bootstrap samples.

        With ``warm_start=True`` a fitted forest keeps its trees and grows only
        the missing ones, with the seeds a single fit would have given them.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is made dense, float32, once (n x d in memory), and the
            trees grown from it are those of the dense X, as in scikit-learn.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Several outputs (Chapter 3): every tree predicts them all; a
            column vector is one output (with scikit-learn's ``DataConversionWarning``).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            As scikit-learn 1.9: with ``bootstrap``, each tree draws its rows
            with probabilities proportional to the weights (times the class
            weights, if any) and is grown on its draw counts alone, so an
            integer weight ``k`` acts like ``k`` copies of the row in the
            draws; without ``bootstrap`` every tree is grown on the weights.

        Returns
        -------
        self
        """
        self._check_params()  # first, as scikit-learn validates its parameters
        if sparse.issparse(y):  # (scikit-learn's message: the forest's one check on y)
            raise ValueError("sparse multilabel-indicator for y is not supported.")
        classifier = self._tree_class is DecisionTreeClassifier
        X, y, w = check_fit_input(
            self, X, y, sample_weight, classifier=classifier, allow_nan=True,
            multi_output=True, warn_column_vector=True,
        )  # fmt: skip
        self.n_outputs_ = 1 if y.dim() == 1 else y.shape[1]
        if not classifier and isinstance(self.criterion, str) and self.criterion == "poisson":
            check_poisson_target(y, strictly="strictly ")  # (the forests' wording)
        weighted = sample_weight is not None
        if classifier:
            w, weighted = self._class_weighted(y, w, weighted)
        n = X.shape[0]
        self._n_samples = n
        # scikit-learn 1.9: with bootstrap, rows are drawn with probabilities
        # proportional to the weights (sample_weight times the class weights)
        # and each tree gets its draw counts alone; without, the trees get the weights
        # (scikit-learn's name and meaning: the weights times the class weights, or None)
        self._sample_weight = w.numpy() if weighted else None
        self._n_samples_bootstrap = n
        if self.bootstrap:
            self._n_samples_bootstrap = n_bootstrap_draws(self.max_samples, n, self._sample_weight)
            w = torch.ones_like(w)
        self.estimator_ = self._tree_class(**self._tree_params())
        if classifier and self.n_outputs_ > 1:
            self.n_classes_ = np.array([len(c) for c in self.classes_], dtype=np.intp)
        elif classifier:
            self.n_classes_ = len(self.classes_)
        seeds = self._new_seeds()
        if len(seeds):
            self.estimators_ += self._grow_trees(X, y, w, seeds)
        if self.oob_score and (len(seeds) or not hasattr(self, "oob_score_")):
            self._set_oob_score_and_attributes(X, y.numpy())
        self._subsample_classes = None  # only needed while growing
        return self

    def _class_weighted(self, y, w, weighted):
        """The sample weights times scikit-learn 1.9's class weights.

        As scikit-learn's forests: a dict or ``"balanced"`` (class frequencies
        counted with the sample weights) gives each row the weight
        ``sample_weight * class_weight``. ``"balanced_subsample"`` (with
        ``bootstrap``) leaves the sample weights as they are, and
        :meth:`_in_bag_counts` multiplies each tree's counts by the balanced
        weights of its own draws; without ``bootstrap`` it is ``"balanced"``.
        The class weights are :meth:`_class_weights`' (as in
        :meth:`_validate_y_class_weight`).

        Returns
        -------
        w : float64 tensor of shape (n_samples,)
        weighted : bool
            Whether any weights were given (sample or class weights): then
            :meth:`fit` draws the bootstrap rows by weight.
        """
        self._subsample_classes = None
        codes = y.numpy().reshape(len(y), -1)
        classes = self.classes_ if y.dim() == 2 else [self.classes_]
        class_weight = self._class_weights(codes, classes, w if weighted else None, stacklevel=4)
        if class_weight is None:
            if self.class_weight == "balanced_subsample":
                self._subsample_classes = y.numpy()
            return w, weighted
        return apply_class_weight(class_weight, self.classes_, y, w), True

    def _class_weights(self, codes, classes, sample_weight, stacklevel=3):
        """``class_weight`` resolved as scikit-learn 1.9's forests resolve it (Chapter 6).

        ``codes`` (n_samples, n_outputs): each output's class indices into its
        sorted labels ``classes[k]``. None
        when no class weight applies to the rows as a whole (none given, or
        ``"balanced_subsample"`` with ``bootstrap``: each tree weighs its own
        draws); ``"balanced"`` (and ``"balanced_subsample"`` without
        ``bootstrap``) becomes a dict ``{label: W / (K W_k)}`` per output
        (a list of them with several outputs, :func:`balanced_weights`); a
        dict or a list of dicts is returned as it is.
        """
        class_weight = self.class_weight
        if class_weight is None or isinstance(class_weight, (dict, list, tuple)):
            return class_weight
        if class_weight in ("balanced", "balanced_subsample") and self.warm_start:
            warnings.warn(
                'class_weight presets "balanced" or "balanced_subsample" are not recommended '
                "for warm_start if the fitted data differs from the full dataset. In order to "
                'use "balanced" weights, use compute_class_weight ("balanced", classes, y). '
                "In place of y you can use a large enough sample of the full training set "
                "target to properly estimate the class frequency distributions. Pass the "
                "resulting weights as the class_weight parameter.",
                UserWarning,
                stacklevel=stacklevel,
            )
        if class_weight == "balanced_subsample" and self.bootstrap:
            return None
        if class_weight not in ("balanced", "balanced_subsample"):
            return class_weight  # (the caller raises its error)
        per_output = [dict(zip(c, balanced_weights(col, sample_weight)))
                      for c, col in zip(classes, codes.T)]  # fmt: skip
        return per_output if codes.shape[1] > 1 else per_output[0]

    def _validate_y_class_weight(self, y, sample_weight):
        """scikit-learn's ``ForestClassifier._validate_y_class_weight`` (Chapter 6).

        The private method scikit-learn's forests call in ``fit`` (its own
        tests call it directly): ``y`` of shape (n_samples, n_outputs) holds
        the labels (``n_outputs_`` set). Sets ``classes_`` and ``n_classes_``
        (lists, one entry per output, as scikit-learn before its ``fit``
        unwraps them) and returns ``y`` coded ``0..K-1`` per output and the
        class weight of every row (None where none applies), from
        :meth:`_class_weights`, the rules treelib's ``fit`` uses.
        """
        check_classification_targets(y)
        y = np.asarray(y)
        self.classes_, self.n_classes_ = [], []
        codes = np.zeros(y.shape, dtype=int)
        for k in range(self.n_outputs_):
            classes_k, codes[:, k] = np.unique(y[:, k], return_inverse=True)
            self.classes_.append(classes_k)
            self.n_classes_.append(classes_k.shape[0])
        class_weight = self._class_weights(codes, self.classes_, sample_weight)
        if class_weight is None:
            return codes, None
        return codes, compute_sample_weight(class_weight, y)

    def _new_seeds(self):
        """Seeds of the trees to grow; a warm start skips those of the trees it keeps.

        As in scikit-learn, tree ``i`` always gets the ``i``-th number drawn from
        ``random_state``, so growing 5 then 10 trees gives the 10 trees of one fit.
        """
        if not self.warm_start or not hasattr(self, "estimators_"):
            self.estimators_ = []
        n_kept = len(self.estimators_)
        if self.n_estimators < n_kept:
            raise ValueError(
                f"n_estimators={self.n_estimators} must be larger or equal to "
                f"len(estimators_)={n_kept} when warm_start==True"
            )
        if self.n_estimators == n_kept:
            warnings.warn(
                "Warm-start fitting without increasing n_estimators does not fit new trees.",
                UserWarning,
                stacklevel=3,
            )
        seeds = check_random_state(self.random_state).randint(MAX_INT, size=self.n_estimators)
        return [int(seed) for seed in seeds[n_kept:]]

    def _grow_trees(self, X, y, w, seeds):
        """One tree per seed, each on its bootstrap sample (or on all rows).

        The level-wise and histogram builders grow the trees side by side, a
        batch at a time (:mod:`treelib.batched`, Chapter 7): the same trees as
        one by one, with far fewer Python steps. Other settings grow one tree
        per job of ``joblib.Parallel(n_jobs, prefer="threads")``, as
        scikit-learn's forests: threads, or the active joblib backend.
        """
        n = X.shape[0]
        bins = None  # the histogram builder bins the data once for all trees
        missing = bool(X.isnan().any())  # (NaN: binned apart, Chapter 7)
        multi_output = y.dim() == 2  # several outputs: the recursive builder (Chapter 3)
        names = getattr(self, "feature_names_in_", None)  # (no NaN in a categorical feature)
        categorical = check_categorical_features(self.categorical_features, X.shape[1], names)
        check_categorical_columns(X, StoppingRules(categorical=categorical))
        if self.estimator_._builder(missing, multi_output=multi_output) in BINNED_BUILDERS:
            bins = bin_columns(X, self.max_bins, categorical)  # (one bin per category)
        trees = []
        for seed in seeds:
            tree = self._tree_class(**self._tree_params(), random_state=seed)
            tree.n_features_in_ = self.n_features_in_
            if hasattr(self, "feature_names_in_"):
                tree.feature_names_in_ = self.feature_names_in_
            if hasattr(self, "classes_"):
                tree.classes_ = self.classes_
            trees.append(tree)

        def weight_of(i):  # tree i's weights: its bootstrap counts (w is then ones), or w
            return w * torch.from_numpy(self._in_bag_counts(seeds[i], n))

        per_tree = getattr(self, "class_weight", None) == "balanced_subsample"
        with tqdm(total=len(trees), desc="trees", disable=not self.verbose) as bar:
            n_jobs = self.n_jobs  # through joblib: None is the active backend's count
            batched = not (per_tree or multi_output)  # (batched refuses what it cannot grow)
            if batched and fit_trees_batched(trees, X, y, weight_of, bins, bar.update, n_jobs):
                return trees
            # one tree per job, through joblib as scikit-learn's forests (threads, or
            # the active backend); a tree depends only on its seed and weights
            device = self.estimator_._device()
            jobs = (
                delayed(_fit_tree)(tree, X, y, weight_of(i), bins) for i, tree in enumerate(trees)
            )
            parallel = Parallel(
                n_jobs=n_jobs if device.type == "cpu" else 1, prefer="threads", **AS_DONE
            )
            grown = []
            with one_cpu_thread(device):  # (set once here: the jobs' own settings are no-ops)
                for tree in parallel(jobs):
                    grown.append(tree)  # (another process's copy, with a process backend)
                    bar.update(1)
        return grown

    def _in_bag_counts(self, seed, n_samples):
        """How much each row counts in the tree grown from ``seed``: 0 exactly when out of bag.

        The bootstrap counts (ones without ``bootstrap``); with
        ``class_weight="balanced_subsample"``, while the forest grows, times the
        balanced class weights of this bootstrap sample (scikit-learn's
        ``compute_sample_weight("balanced", y, indices=draws)``).
        """
        if not self.bootstrap:
            return np.ones(n_samples)
        p = getattr(self, "_sample_weight", None)
        draws = bootstrap_indices(seed, n_samples, self._n_samples_bootstrap, p)
        counts = np.bincount(draws, minlength=n_samples)
        classes = getattr(self, "_subsample_classes", None)
        if classes is None:
            return counts
        return counts * compute_sample_weight("balanced", classes, indices=draws)

    def _tree_outputs(self, X):
        """Leaf values of every tree for tensor X: shape (n_trees, n_samples, n_values).

        With several outputs (Chapter 3): (n_trees, n_samples, n_outputs, n_values).
        """
        return np.stack([t._leaf_values_of_tensor(X) for t in self.estimators_])

    def _set_oob_score_and_attributes(self, X, y):
        """Score every sample with the trees that did not draw it (warns if none).

        Sets ``oob_score_`` and ``oob_decision_function_`` / ``oob_prediction_``;
        ``fit`` calls it once per fit that grows trees (scikit-learn's name for
        this step, which its tests watch: a warm start that grows no tree does
        not score again).
        """
        n = X.shape[0]
        self._check_oob_target(y)
        in_bag = np.array([self._in_bag_counts(t.random_state, n) > 0 for t in self])
        out_of_bag = ~in_bag.reshape(in_bag.shape + (1,) * y.ndim)  # (n_trees, n, 1[, 1])
        n_oob = out_of_bag.sum(0)
        if (n_oob == 0).any():
            warnings.warn(NO_OOB_WARNING, UserWarning, stacklevel=3)
        oob = (self._tree_outputs(X) * out_of_bag).sum(0) / np.maximum(n_oob, 1)
        score = self.oob_score if callable(self.oob_score) else None
        self._store_oob(oob, y, score)

    def apply(self, X):
        """The leaf each sample reaches in every tree.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int64, shape (n_samples, n_estimators)
        """
        X = check_predict_input(self, X, allow_nan=True)
        return np.stack([self._leaves(tree, X) for tree in self], axis=1)

    @staticmethod
    def _leaves(tree, X):
        """Leaf ids of one tree for an already validated float32 tensor ``X``."""
        return tree._leaves_of_tensor(X).cpu().numpy()

    def decision_path(self, X):
        """The nodes each sample passes through, in every tree.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            Ones where a sample passes through a node; the trees' nodes side by side.
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)
            Columns ``n_nodes_ptr[i]:n_nodes_ptr[i + 1]`` belong to tree ``i``.
        """
        X = check_predict_input(self, X, allow_nan=True)
        paths = [tree.tree_.path_matrix(self._leaves(tree, X)) for tree in self]
        n_nodes_ptr = np.cumsum([0] + [path.shape[1] for path in paths])
        return sparse.hstack(paths).tocsr(), n_nodes_ptr

    @property
    def estimators_samples_(self):
        """The rows each tree was grown on (drawn again from its seed), as scikit-learn.

        Returns
        -------
        list of ndarray of int32
            Bootstrap draws in drawing order (repeats included), or all rows
            when ``bootstrap=False``.
        """
        check_is_fitted(self)
        if not self.bootstrap:
            return [np.arange(self._n_samples, dtype=np.int32) for _ in self]
        n, n_draws = self._n_samples, self._n_samples_bootstrap
        p = getattr(self, "_sample_weight", None)
        return [bootstrap_indices(tree.random_state, n, n_draws, p) for tree in self]

    @property
    def feature_importances_(self):
        """Mean of the trees' normalised MDI importances, renormalised to sum to one."""
        check_is_fitted(self)
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
min_impurity_decrease, max_leaf_nodes, ccp_alpha
        Passed to every :class:`~treelib.DecisionTreeClassifier` (each tree is
        grown best-first with ``max_leaf_nodes``, pruned with ``ccp_alpha``).
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        As scikit-learn 1.9 (Chapter 6). A dict or ``"balanced"`` (``n_w /
        (n_classes * w_k)`` with ``w_k`` the class's total sample weight) gives
        each row the weight ``sample_weight * class weight``, used as
        ``sample_weight`` alone is (see ``fit``): a class weight and the same
        weights given as ``sample_weight`` grow the same forest.
        ``"balanced_subsample"`` draws by ``sample_weight`` alone (uniformly
        without it) and multiplies each tree's counts by the balanced weights
        of its own draws (repeats counted); without ``bootstrap`` it is
        ``"balanced"``. The trees themselves get no ``class_weight``.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Features each node searches, drawn afresh at every node.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample (else on the whole data).
    oob_score : bool or callable, default=False
        Score each sample with the trees that did not draw it (``oob_score_``):
        accuracy, or ``oob_score(y, y_pred)`` if a callable (as scikit-learn,
        ``y`` holds class indices ``0..K-1``).
    n_jobs : int or None, default=None
        Parallel jobs that grow the trees, through joblib as in scikit-learn
        (None: one, unless a ``joblib.parallel_config`` or
        ``parallel_backend`` context says otherwise; -1: one per core). Threads
        by default; an active joblib backend (``"loky"`` processes, a Dask
        cluster's ``"dask"``) is used instead. It acts where the trees are
        grown in batches (Chapter 7: the level-wise and histogram builders,
        categorical features included, without ``class_weight="balanced_subsample"``);
        each job grows its own batches on one CPU core. Elsewhere, and on a
        GPU (``device``), the trees grow one after another. Results never
        depend on ``n_jobs`` or the backend.
    max_samples : int, float or None, default=None
        Draws per bootstrap sample: None: n; an int: that many; a float:
        ``max(1, int(max_samples * n))``. More than n is allowed (draws are with
        replacement). Needs ``bootstrap=True``.
    monotonic_cst : array-like of int of shape (n_features,) or None, default=None
        Monotonic constraints passed to every tree (Chapter 6): 1 increasing,
        -1 decreasing, 0 none; a binary classifier constrains the probability
        of its second class; not for multiclass problems.
    random_state : int, RandomState or None, default=None
        Tree ``i`` gets the ``i``-th integer drawn from it as its seed.
    verbose : bool, default=False
        Show a progress bar over the trees (tqdm).
    warm_start : bool, default=False
        Keep the fitted trees on the next ``fit`` and grow only the
        ``n_estimators - len(estimators_)`` new ones; with a fixed
        ``random_state`` the forest equals one grown in a single fit.
    categorical_features : indices, boolean mask, column names or None, default=None
        Features split one-vs-rest (``x == c``), passed to every tree (Chapter 6).
    tree_method, max_bins, device
        The builder and device of every tree (Chapter 7).

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
        Also reached as ``forest[i]``, ``len(forest)`` and ``for tree in forest``.
    estimator_ : DecisionTreeClassifier
        Unfitted template of the trees (the forest's tree parameters).
    estimators_samples_ : list of ndarray
        Rows drawn for each tree (repeats included).
    classes_, n_classes_, n_features_in_, feature_importances_
    oob_score_ : float, oob_decision_function_ : ndarray (with ``oob_score``)
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
        max_leaf_nodes=None,
        class_weight=None,
        ccp_alpha=0.0,
        bootstrap=True,
        oob_score=False,
        n_jobs=None,
        max_samples=None,
        monotonic_cst=None,
        random_state=None,
        verbose=False,
        warm_start=False,
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
        self.max_leaf_nodes = max_leaf_nodes
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.max_samples = max_samples
        self.monotonic_cst = monotonic_cst
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.categorical_features = categorical_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device

    def _check_oob_target(self, y):
        """scikit-learn's error: no OOB estimate for multiclass-multioutput targets."""
        y_type = type_of_target(y)
        if y_type == "unknown" or y_type == "multiclass-multioutput":
            raise ValueError(
                "The type of target cannot be used to compute OOB estimates. Got "
                f"{y_type} while only the following are supported: continuous, "
                "continuous-multioutput, binary, multiclass, multilabel-indicator."
            )

    def _store_oob(self, oob, y, score=None):
        if oob.ndim == 3:  # several outputs: scikit-learn's (n_samples, n_classes, n_outputs)
            oob = oob.transpose(0, 2, 1)
        self.oob_decision_function_ = oob
        self.oob_score_ = (score or accuracy_score)(y, np.argmax(oob, axis=1))

    def predict_proba(self, X):
        """Soft vote: the mean of the trees' class probabilities.

        With several outputs (Chapter 3): a list, one (n_samples, n_classes_[k])
        array per output, as scikit-learn.
        """
        X = check_predict_input(self, X, allow_nan=True)
        return proba_per_output(self, self._tree_outputs(X).mean(0))

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (``-inf`` where no tree gives a class any weight)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in proba] if self.n_outputs_ > 1 else np.log(proba)

    def predict(self, X):
        """The class with the highest mean probability (per output: (n_samples, n_outputs))."""
        return classes_of(self, self.predict_proba(X))

    def predict_majority(self, X):
        """Hard vote, for comparison: the class most trees predict (lowest on a tie)."""
        X = check_predict_input(self, X, allow_nan=True)
        votes = self._tree_outputs(X).argmax(2)  # (n_trees, n_samples)
        counts = np.stack([(votes == k).sum(0) for k in range(len(self.classes_))], axis=1)
        return self.classes_[np.argmax(counts, axis=1)]


class RandomForestRegressor(RegressorMixin, BaseForest):
    """A random forest of CART regression trees. Introduced in Chapter 5.

    Parameters are those of :class:`RandomForestClassifier`, except
    ``criterion`` (``"squared_error"`` by default, ``"absolute_error"`` or
    ``"poisson"``, as :class:`DecisionTreeRegressor`) and ``max_features=1.0``
    (all features, as in scikit-learn). With ``oob_score=True``, ``oob_score_`` is the out-of-bag R²
    (or ``oob_score(y, oob_prediction_)`` if ``oob_score`` is a callable).
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
        max_leaf_nodes=None,
        ccp_alpha=0.0,
        bootstrap=True,
        oob_score=False,
        n_jobs=None,
        max_samples=None,
        monotonic_cst=None,
        random_state=None,
        verbose=False,
        warm_start=False,
        categorical_features=None,
        tree_method="levelwise",
        max_bins=255,
        device=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = map_friedman_mse(criterion)  # (as scikit-learn 1.9)
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.min_impurity_decrease = min_impurity_decrease
        self.max_leaf_nodes = max_leaf_nodes
        self.ccp_alpha = ccp_alpha
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.max_samples = max_samples
        self.monotonic_cst = monotonic_cst
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.categorical_features = categorical_features
        self.tree_method = tree_method
        self.max_bins = max_bins
        self.device = device

    def _check_oob_target(self, y):
        """Every regression target has OOB estimates."""

    def _store_oob(self, oob, y, score=None):
        self.oob_prediction_ = oob[..., 0]  # (n_samples,) or (n_samples, n_outputs)
        self.oob_score_ = (score or r2_score)(y, self.oob_prediction_)

    def predict(self, X):
        """The mean of the trees' predictions (per output: (n_samples, n_outputs))."""
        X = check_predict_input(self, X, allow_nan=True)
        return self._tree_outputs(X).mean(0)[..., 0]
