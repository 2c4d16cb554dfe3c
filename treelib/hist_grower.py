"""The engine of histogram gradient boosting: bins, histograms, splits, leaf-wise trees.

Introduced in Chapter 9 (``notebooks/09_hist_gradient_boosting``). The estimators
that use it are in :mod:`treelib.hist_gradient_boosting`.

The API mirrors scikit-learn 1.9.1's private engine
(``sklearn/ensemble/_hist_gradient_boosting``: ``binning._BinMapper``,
``grower.TreeGrower``, ``predictor.TreePredictor``), with torch tensors where
scikit-learn passes numpy arrays.
"""

import numpy as np

# scikit-learn's node record (common.pyx PREDICTOR_RECORD_DTYPE), kept as is so that
# a fitted predictor's ``nodes`` read the same.
PREDICTOR_RECORD_DTYPE = np.dtype(
    [
        ("value", np.float64),
        ("count", np.uint32),
        ("feature_idx", np.intp),
        ("num_threshold", np.float64),
        ("missing_go_to_left", np.uint8),
        ("left", np.uint32),
        ("right", np.uint32),
        ("gain", np.float64),
        ("depth", np.uint32),
        ("is_leaf", np.uint8),
        ("bin_threshold", np.uint8),
        ("is_categorical", np.uint8),
        ("bitset_idx", np.uint32),
    ]
)
ALMOST_INF = 1e300  # scikit-learn's (LightGBM's AvoidInf): no +inf bin threshold


class BinMapper:
    """Quantile bins of every feature, computed once per fit (Chapter 9).

    As scikit-learn's ``_BinMapper``: ``n_bins`` counts the missing-values bin,
    which is always the last one (index ``n_bins - 1``).

    Parameters
    ----------
    n_bins : int, default=256
    subsample : int or None, default=200_000
    is_categorical : array of bool (n_features,) or None
    known_categories : list of (float64 ndarray or None), one per feature
    random_state : int, RandomState or None

    Attributes after ``fit(X, sample_weight=None)`` (X a float64 numpy array)
    ----------------------------------------------------------------------
    bin_thresholds_ : list of float64 ndarrays (the known categories for a
        categorical feature)
    n_bins_non_missing_ : uint32 ndarray (n_features,)
    missing_values_bin_idx_ : int (``n_bins - 1``)
    is_categorical_ : uint8 ndarray (n_features,)

    ``transform(X, device=None)`` takes a float64 numpy array or tensor and
    returns a ``torch.uint8`` tensor (n_samples, n_features) on ``device``.
    ``make_known_categories_bitsets()`` returns what scikit-learn's does.
    """

    def __init__(
        self,
        n_bins=256,
        subsample=200_000,
        is_categorical=None,
        known_categories=None,
        random_state=None,
    ):
        self.n_bins = n_bins
        self.subsample = subsample
        self.is_categorical = is_categorical
        self.known_categories = known_categories
        self.random_state = random_state

    def fit(self, X, sample_weight=None):
        raise NotImplementedError

    def transform(self, X, device=None):
        raise NotImplementedError


class TreePredictor:
    """A grown tree, as scikit-learn's ``TreePredictor`` (Chapter 9).

    Attributes
    ----------
    nodes : structured ndarray of :data:`PREDICTOR_RECORD_DTYPE`, depth-first
        (root, left subtree, right subtree), leaf values already shrunk.
    binned_left_cat_bitsets, raw_left_cat_bitsets : uint32 ndarray (n_cat_splits, 8)

    Methods
    -------
    predict(X, known_cat_bitsets=None, f_idx_map=None) : float64 tensor (n,)
        X a float64 tensor on the predictor's device (NaN allowed).
    predict_binned(X_binned, missing_values_bin_idx) : float64 tensor (n,)
    get_n_leaf_nodes(), get_max_depth()
    """


class TreeGrower:
    """Grows one tree leaf-wise on gradient and hessian histograms (Chapter 9).

    The parameters are scikit-learn's ``TreeGrower``'s, with tensors:

    Parameters
    ----------
    X_binned : torch.uint8 tensor (n_samples, n_features)
    gradients : torch.float32 tensor (n_samples,)
    hessians : torch.float32 tensor (n_samples,), or (1,) when constant
    max_leaf_nodes=None, max_depth=None, min_samples_leaf=20,
    min_gain_to_split=0.0, min_hessian_to_split=1e-3, n_bins=256,
    n_bins_non_missing=None, has_missing_values=False, is_categorical=None,
    monotonic_cst=None, interaction_cst=None, l2_regularization=0.0,
    feature_fraction_per_split=1.0, rng=None (a numpy Generator),
    shrinkage=1.0

    Methods
    -------
    grow() : grows the tree (leaves shrunk at the end, as scikit-learn).
    make_predictor(binning_thresholds) : :class:`TreePredictor`
    add_to_raw_predictions(raw) : adds every training sample's (shrunk) leaf
        value to the float64 tensor ``raw`` (n_samples,) in place, from the
        leaves the grower kept (no tree traversal).
    n_nodes : int
    """
