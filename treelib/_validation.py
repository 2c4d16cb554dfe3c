"""Input and hyper-parameter checks shared by every estimator (not a chapter topic)."""

import math
import numbers
import warnings

import numpy as np
import torch
from scipy import sparse
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import (
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_is_fitted,
    validate_data,
)

# Below this an impurity is zero up to rounding (scikit-learn's EPSILON).
EPSILON = float(np.finfo(np.float64).eps)


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def bins_wanted(tree_method, max_bins):
    """Does ``tree_method`` grow on histograms with a valid ``max_bins`` (an int >= 2)?

    The forests and gradient boosting then bin the data once; a tree's own fit
    reports an invalid ``max_bins``.
    """
    return tree_method == "hist" and _is_int(max_bins) and max_bins >= 2


def _is_float(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral))


def _as_numpy(a):
    """Torch tensors become numpy arrays; everything else passes through."""
    if isinstance(a, torch.Tensor):
        return a.detach().cpu().numpy()
    return a


def _as_tensor(a, dtype=None):
    """A numpy array as a torch tensor (read-only arrays are copied, not shared)."""
    a = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
    if not a.flags.writeable or not a.flags.c_contiguous:
        a = np.ascontiguousarray(a).copy()
    return torch.from_numpy(a)


def check_no_category_columns(X):
    """Refuse a pandas DataFrame with ``category`` columns, saying what to pass instead.

    Introduced in Chapter 6. Converting the categories' labels to floats would fail
    (or, for numeric labels, silently order unordered codes), so we ask for the codes
    and ``categorical_features``, which split such a feature one-vs-rest.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return
    columns = [name for name, dtype in dtypes.items() if str(dtype) == "category"]
    if columns:
        example = columns[0]
        raise ValueError(
            f"X has pandas 'category' columns {columns}; treelib needs numbers. Pass the "
            f"category codes instead (e.g. X[{example!r}] = X[{example!r}].cat.codes) and "
            f"name the columns in categorical_features (e.g. categorical_features={columns}) "
            "to split them one-vs-rest; use the same codes at predict time."
        )


def _finite_rule(X, allow_nan):
    """``ensure_all_finite`` for ``X``: NaN is a missing value only in dense X.

    As scikit-learn's trees, a sparse matrix may not hold NaN (its sparse
    splitter has no missing-value support), whatever the estimator.
    """
    return "allow-nan" if allow_nan and not sparse.issparse(X) else True


def densify(X):
    """A validated sparse ``X`` as a dense float32 C-ordered array; dense X as it is.

    Introduced in Chapter 2. treelib's engine is dense torch, so a
    ``scipy.sparse`` matrix or array is expanded here, once, at the validation
    of ``fit`` and of every prediction: it then costs ``n_samples *
    n_features * 4`` bytes, like a dense float32 copy. An implicit zero is the
    value 0, so the tree is the one the dense array gives (scikit-learn's sparse
    splitter grows its dense splitter's tree wherever no two splits tie; on a
    tie, its two splitters may pick differently). As scikit-learn, a sparse matrix
    with int64 indices is refused; NaN in a sparse X was refused before
    (:func:`_finite_rule`).
    """
    if not sparse.issparse(X):
        return X
    if X.indices.dtype != np.intc or X.indptr.dtype != np.intc:
        raise ValueError("No support for np.int64 index based sparse matrices")
    return X.toarray(order="C")


def check_fit_input(
    estimator, X, y, sample_weight, *, classifier, allow_nan=False, multi_output=False,
    warn_column_vector=False,
):  # fmt: skip
    """Validate ``X, y, sample_weight`` for ``fit`` and return them as tensors.

    X becomes float32 (as in scikit-learn); a classifier's labels are encoded as
    ``0..K-1`` with ``estimator.classes_`` set; weights are float64 and must be
    non-negative with a positive sum. ``allow_nan``: NaN in X is a missing value
    (trees and forests, Chapter 6); infinity is always an error. A
    ``scipy.sparse`` X (any format; scikit-learn converts it to CSC for
    ``fit``) is made dense here (:func:`densify`): n x d float32 in memory.

    ``multi_output`` (trees and forests, Chapter 3): ``y`` may have shape
    ``(n_samples, n_outputs)``; a classifier's ``classes_`` is then a list of
    arrays (one per output) and ``y`` is encoded column by column. A column
    vector ``(n_samples, 1)`` is one output, returned 1-d (with scikit-learn's
    ``DataConversionWarning`` if ``warn_column_vector``, as its forests warn).
    """
    check_no_category_columns(X)
    if sparse.issparse(y):  # scikit-learn's trees check y apart: its error for a sparse y
        check_array(y, ensure_2d=False, dtype=None, input_name="y")
    y = _as_numpy(y)
    X, y = validate_data(
        estimator, _as_numpy(X), y, dtype=np.float32, y_numeric=not classifier,
        accept_sparse="csc", ensure_all_finite=_finite_rule(X, allow_nan),
        multi_output=multi_output,
    )  # fmt: skip
    X = densify(X)
    if multi_output:
        y = np.atleast_1d(y)
        if y.ndim == 2 and y.shape[1] == 1:
            if warn_column_vector:
                warnings.warn(
                    "A column-vector y was passed when a 1d array was expected. Please "
                    "change the shape of y to (n_samples,), for example using ravel().",
                    DataConversionWarning,
                    stacklevel=3,
                )
            y = np.reshape(y, (-1,))
    if classifier:
        check_classification_targets(y)
        if y.ndim == 1:
            estimator.classes_, y = np.unique(y, return_inverse=True)
        else:  # one set of classes per output
            estimator.classes_, encoded = [], np.zeros(y.shape, dtype=np.int64)
            for k in range(y.shape[1]):
                classes_k, encoded[:, k] = np.unique(y[:, k], return_inverse=True)
                estimator.classes_.append(classes_k)
            y = encoded
    sample_weight = _check_sample_weight(_as_numpy(sample_weight), X, dtype=np.float64)
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight must be non-negative; got a negative weight.")
    if not sample_weight.sum() > 0:
        raise ValueError("sample_weight must have a positive sum; all weights are zero.")
    y_dtype = np.int64 if classifier else np.float64
    return _as_tensor(X), _as_tensor(y, y_dtype), _as_tensor(sample_weight)


def check_predict_input(estimator, X, allow_nan=False):
    """Check that ``estimator`` is fitted and ``X`` matches it; return X as float32 tensor.

    ``allow_nan``: NaN is a missing value (trees and forests, Chapter 6). A
    ``scipy.sparse`` X (any format; scikit-learn converts it to CSR to
    predict) is made dense here (:func:`densify`): n x d float32 in memory.
    """
    check_is_fitted(estimator)
    check_no_category_columns(X)
    X = validate_data(
        estimator, _as_numpy(X), dtype=np.float32, reset=False, accept_sparse="csr",
        ensure_all_finite=_finite_rule(X, allow_nan),
    )  # fmt: skip
    return _as_tensor(densify(X))


def check_criterion(criterion, allowed):
    if criterion not in allowed:
        raise ValueError(f"criterion must be one of {list(allowed)}; got {criterion!r}.")
    return criterion


FRIEDMAN_MSE_DEPRECATED = (
    'Value `"friedman_mse"` for `criterion` is deprecated and will be '
    'removed in 1.11. It maps to `"squared_error"` as both '
    'were always equivalent. Use `criterion="squared_error"` '
    "to remove this warning."
)  # scikit-learn 1.9's FutureWarning, word for word


def map_friedman_mse(criterion):
    """scikit-learn 1.9: ``"friedman_mse"`` becomes ``"squared_error"``, with a FutureWarning.

    As scikit-learn's regressors, in ``__init__`` (the one parameter they do
    not store untouched): both always grew the same trees (Chapter 3).
    """
    if isinstance(criterion, str) and criterion == "friedman_mse":
        warnings.warn(FRIEDMAN_MSE_DEPRECATED, FutureWarning, stacklevel=3)
        return "squared_error"
    return criterion


def check_poisson_target(y, strictly=""):
    """scikit-learn's checks of a Poisson target: no negative value, a positive sum.

    ``strictly="strictly "`` gives the forests' wording of the second error.
    Targets that are not numbers are left to the usual validation.
    """
    try:
        y = np.asarray(_as_numpy(y), dtype=np.float64)
    except (TypeError, ValueError):
        return
    if np.any(y < 0):
        raise ValueError(
            "Some value(s) of y are negative which is not allowed for Poisson regression."
        )
    if np.sum(y) <= 0:
        raise ValueError(
            f"Sum of y is not {strictly}positive which is necessary for Poisson regression."
        )


def check_min_samples_leaf(value, n_samples):
    """An int >= 1, or a float in (0, 1) meaning ``ceil(value * n_samples)``."""
    if _is_int(value) and value >= 1:
        return int(value)
    if _is_float(value) and 0.0 < value < 1.0:
        return int(math.ceil(value * n_samples))
    raise ValueError(f"min_samples_leaf must be an int >= 1 or a float in (0, 1); got {value!r}.")


def invalid_parameter(name, owner, allowed, value):
    """scikit-learn's error for a parameter outside its constraints, word for word.

    An ``InvalidParameterError`` (a ``ValueError`` and a ``TypeError``), as
    scikit-learn's parameter validation raises it: "The 'name' parameter of
    Owner must be allowed. Got value instead."
    """
    return InvalidParameterError(
        f"The {name!r} parameter of {owner} must be {allowed}. Got {value!r} instead."
    )


def check_min_samples_split(value, n_samples, owner="DecisionTreeClassifier"):
    """An int >= 2, or a float in (0, 1] meaning ``max(2, ceil(value * n_samples))``.

    Otherwise scikit-learn's error, naming the estimator class ``owner``.
    """
    if _is_int(value) and value >= 2:
        return int(value)
    if _is_float(value) and 0.0 < value <= 1.0:
        return max(2, int(math.ceil(value * n_samples)))
    allowed = "an int in the range [2, inf) or a float in the range (0.0, 1.0]"
    raise invalid_parameter("min_samples_split", owner, allowed, value)


def check_max_depth(value):
    """None (grow until pure) or an int >= 1."""
    if value is None:
        return 2**31 - 1
    if _is_int(value) and value >= 1:
        return int(value)
    raise ValueError(f"max_depth must be None or an int >= 1; got {value!r}.")


class TreeTooLargeError(MemoryError, ValueError):
    """A tree whose nodes no array on this platform can index (Chapter 2).

    A ``MemoryError``, as scikit-learn's, which fails to allocate such a tree's
    node arrays, and a ``ValueError``, as treelib's other invalid parameters.
    """


def check_max_leaf_nodes(value):
    """None (no limit, depth-first growth) or an int >= 2 (best-first growth).

    A tree of ``L`` leaves has ``2 L - 1`` nodes, and scikit-learn allocates
    arrays for that many before growing (a ``MemoryError``, or an
    ``OverflowError`` past the largest index). treelib allocates node by node,
    so a huge limit would only mean "no limit"; it is refused all the same
    when ``2 L - 1`` is beyond the largest index of this platform
    (``np.iinfo(np.intp).max``), as no tree can have that many nodes
    (:class:`TreeTooLargeError`).
    """
    if value is None or (_is_int(value) and value >= 2):
        if value is not None and 2 * int(value) - 1 > np.iinfo(np.intp).max:
            raise TreeTooLargeError(
                f"max_leaf_nodes={value} asks for a tree of 2 * max_leaf_nodes - 1 nodes, "
                f"more than this platform can index ({np.iinfo(np.intp).max}); "
                "use max_leaf_nodes=None for no limit."
            )
        return value
    raise ValueError(f"max_leaf_nodes must be None or an int >= 2; got {value!r}.")


def check_max_features(value, n_features):
    """How many features each node looks at: int, float fraction, "sqrt", "log2" or None."""
    if value is None:
        return n_features
    if value == "sqrt":
        return max(1, int(math.sqrt(n_features)))
    if value == "log2":
        return max(1, int(math.log2(n_features)))
    if _is_int(value) and 1 <= value <= n_features:
        return int(value)
    if _is_float(value) and 0.0 < value <= 1.0:
        return max(1, int(value * n_features))
    raise ValueError(
        f"max_features must be None, 'sqrt', 'log2', an int in [1, n_features={n_features}]"
        f" or a float in (0, 1]; got {value!r}."
    )


def check_real(name, value, low, high=math.inf):
    """A real number in ``[low, high]``."""
    if _is_int(value) or _is_float(value):
        if low <= value <= high:
            return float(value)
    raise ValueError(f"{name} must be a number in [{low}, {high}]; got {value!r}.")


def check_categorical_features(value, n_features, feature_names=None):
    """Indices of the categorical features: from None, indices, a boolean mask or names."""
    if value is None:
        return frozenset()
    values = list(np.asarray(value).ravel()) if not isinstance(value, str) else [value]
    if len(values) == n_features and all(isinstance(v, (bool, np.bool_)) for v in values):
        return frozenset(int(i) for i in np.flatnonzero(values))
    names = [] if feature_names is None else list(feature_names)
    indices = set()
    for v in values:
        if isinstance(v, str) and v in names:
            indices.add(names.index(v))
        elif _is_int(v) and 0 <= int(v) < n_features:
            indices.add(int(v))
        else:
            raise ValueError(
                "categorical_features must be None, a boolean mask of length n_features, "
                f"feature indices in [0, {n_features}) or column names; got {v!r}."
            )
    return frozenset(indices)


def check_monotonic_cst(value, n_features, n_classes=None):
    """``monotonic_cst`` as a float64 tensor of -1, 0, +1 per feature, or None (Chapter 6).

    scikit-learn's checks and messages. For a classifier (``n_classes`` given)
    only binary problems are allowed, and the signs are flipped: the tree
    constrains the fraction of class 0, the user the probability of class 1.
    """
    if value is None:
        return None
    cst = np.asarray(value)
    if cst.shape[0] != n_features:
        raise ValueError(
            f"monotonic_cst has shape {cst.shape[0]} but the input data X has "
            f"{n_features} features."
        )
    if not np.all(np.isin(cst, (-1, 0, 1))):
        raise ValueError(
            f"monotonic_cst must be None or an array-like of -1, 0 or 1, but got {np.unique(cst)}"
        )
    cst = np.asarray(cst, dtype=np.int8).astype(np.float64)
    if n_classes is not None:
        if n_classes > 2:
            raise ValueError(
                "Monotonicity constraints are not supported with multiclass classification"
            )
        cst = -cst
    return torch.from_numpy(cst)


def categorical_nan_error(feature):
    """The error for NaN in a categorical feature (Chapter 6): every builder refuses it."""
    return ValueError(
        f"Categorical feature {feature} has missing values (NaN); give them a category "
        "of their own (e.g. -1) or impute them."
    )


RANDOM_CATEGORICAL = (
    'splitter="random" (extra trees) does not split categorical_features; '
    'use splitter="best" or leave categorical_features=None.'
)


def check_splitter(value, estimator_name):
    """``"best"`` or ``"random"`` (Chapter 5), refused with scikit-learn's own error.

    scikit-learn's parameter validation raises its ``InvalidParameterError`` (a
    ``ValueError`` and a ``TypeError``) with the message scikit-learn's trees give.
    """
    validate_parameter_constraints(
        {"splitter": [StrOptions({"best", "random"})]},
        {"splitter": value},
        caller_name=estimator_name,
    )
    return value
