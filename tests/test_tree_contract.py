"""The fitted structure a user touches follows scikit-learn (issue 17, item 2).

``tree_`` holds numpy arrays with scikit-learn's dtypes and shapes, its methods
take numpy, and the estimators have ``decision_path``. Each test compares with
what ``sklearn.tree`` gives on the same data.
"""

import pickle

import numpy as np
import pytest
import torch
from scipy import sparse
from sklearn import tree as sktree
from sklearn.datasets import load_iris, make_regression

from treelib import DecisionTreeClassifier, DecisionTreeRegressor

METHODS = ("recursive", "levelwise", "hist")
ARRAYS = ("children_left", "children_right", "feature", "threshold", "impurity",
          "n_node_samples", "weighted_n_node_samples", "value")  # fmt: skip
SCALARS = ("node_count", "capacity", "max_depth", "n_features", "n_outputs", "max_n_classes")


def iris_pair(method, **params):
    X, y = load_iris(return_X_y=True)
    X = X[:, :3]  # petal width ties petal length at the root: leave it out
    ours = DecisionTreeClassifier(tree_method=method, random_state=0, **params).fit(X, y)
    theirs = sktree.DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    return X, ours, theirs


def regression_pair(method):
    X, y = make_regression(n_samples=80, n_features=3, random_state=0)
    ours = DecisionTreeRegressor(tree_method=method, max_depth=3, random_state=0).fit(X, y)
    theirs = sktree.DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    return X, ours, theirs


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("pair", [iris_pair, regression_pair])
def test_fields_are_numpy_with_sklearn_dtypes_and_shapes(pair, method):
    _, ours, theirs = pair(method)
    for name in ARRAYS:
        mine, reference = getattr(ours.tree_, name), getattr(theirs.tree_, name)
        assert type(mine) is np.ndarray, name
        assert mine.dtype == reference.dtype, name
        assert mine.ndim == reference.ndim and mine.shape[1:] == reference.shape[1:], name
    for name in SCALARS:
        mine = getattr(ours.tree_, name)
        assert isinstance(mine, int), name
        if name != "node_count" and name != "capacity" and name != "max_depth":
            assert mine == getattr(theirs.tree_, name), name
    assert ours.tree_.capacity == ours.tree_.node_count
    assert ours.tree_.max_depth == ours.get_depth()
    np.testing.assert_array_equal(ours.tree_.n_classes, theirs.tree_.n_classes)
    assert ours.tree_.n_classes.dtype == theirs.tree_.n_classes.dtype


def test_numpy_code_written_for_sklearn_works():
    """The issue's examples: ``~np.isfinite`` and ``np.min`` on the fields."""
    _, ours, theirs = iris_pair("levelwise", max_depth=2)
    for t in (ours.tree_, theirs.tree_):
        assert not (~np.isfinite(t.threshold)).any()
        assert np.min(t.feature) == -2
        assert (t.threshold[t.children_left == -1] == -2).all()


@pytest.mark.parametrize("method", METHODS)
def test_same_tree_as_sklearn_on_tie_free_data(method):
    """Tie-free iris (depth 2, seed 0): every array equal to scikit-learn's."""
    _, ours, theirs = iris_pair(method, max_depth=2)
    for name in ARRAYS:
        np.testing.assert_allclose(getattr(ours.tree_, name), getattr(theirs.tree_, name))


@pytest.mark.parametrize("pair", [iris_pair, regression_pair])
def test_tree_methods_take_numpy_as_sklearn(pair):
    X, ours, theirs = pair("levelwise")
    X32 = X.astype(np.float32)
    leaves = ours.tree_.apply(X32)
    assert leaves.dtype == theirs.tree_.apply(X32).dtype
    np.testing.assert_array_equal(leaves, ours.apply(X))
    predicted = ours.tree_.predict(X32)
    assert predicted.shape == theirs.tree_.predict(X32).shape
    np.testing.assert_array_equal(predicted, ours.tree_.value[leaves, 0])
    path = ours.tree_.decision_path(X32)
    reference = theirs.tree_.decision_path(X32)
    assert type(path) is type(reference) and path.dtype == reference.dtype
    assert path.shape == (len(X), ours.tree_.node_count)


def test_compute_feature_importances_as_sklearn():
    _, ours, theirs = iris_pair("levelwise", max_depth=2)
    for normalize in (True, False):
        np.testing.assert_allclose(
            ours.tree_.compute_feature_importances(normalize=normalize),
            theirs.tree_.compute_feature_importances(normalize=normalize),
        )
    np.testing.assert_allclose(ours.tree_.compute_feature_importances(), ours.feature_importances_)
    np.testing.assert_array_equal(
        ours.tree_.compute_node_depths(), theirs.tree_.compute_node_depths()
    )


@pytest.mark.parametrize("method", METHODS)
def test_decision_path_on_the_estimator_matches_sklearn(method):
    X, ours, theirs = iris_pair(method, max_depth=2)
    path, reference = ours.decision_path(X), theirs.decision_path(X)
    assert sparse.issparse(path) and path.format == "csr"
    assert type(path) is type(reference) and path.dtype == reference.dtype
    np.testing.assert_array_equal(path.toarray(), reference.toarray())
    # the last node on each row is the sample's leaf
    np.testing.assert_array_equal(path.indices[path.indptr[1:] - 1], ours.apply(X))


def test_decision_path_of_a_lone_root():
    ours = DecisionTreeClassifier().fit([[0.0], [1.0]], [1, 1])
    theirs = sktree.DecisionTreeClassifier().fit([[0.0], [1.0]], [1, 1])
    np.testing.assert_array_equal(
        ours.decision_path([[5.0]]).toarray(), theirs.decision_path([[5.0]]).toarray()
    )


def test_to_torch_gives_the_fields_as_tensors():
    _, ours, _ = iris_pair("levelwise", max_depth=2)
    tensors = ours.tree_.to_torch()
    for name in ARRAYS:
        tensor = getattr(tensors, name)
        assert isinstance(tensor, torch.Tensor), name
        np.testing.assert_array_equal(tensor.numpy(), getattr(ours.tree_, name))
    assert tensors.feature.dtype == torch.int64 and tensors.threshold.dtype == torch.float64
    assert str(ours.tree_.to_torch("cpu").feature.device) == "cpu"


def test_pickles_are_byte_identical_for_identical_fits():
    """Item 8: scikit-learn's pickles of two identical fits are identical bytes."""
    X, y = load_iris(return_X_y=True)
    fits = [DecisionTreeClassifier(random_state=0).fit(X, y) for _ in range(2)]
    fits[0].predict(X)  # predicting builds the tensor cache, which is not pickled
    first, second = (pickle.dumps(f) for f in fits)
    assert first == second
    restored = pickle.loads(first)
    np.testing.assert_array_equal(restored.predict(X), fits[1].predict(X))
    assert restored.tree_.node_count == fits[1].tree_.node_count


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_prediction_runs_on_the_estimators_device():
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(device="cuda", random_state=0).fit(X, y)
    assert type(tree.tree_.feature) is np.ndarray
    assert tree.tree_.to_torch().feature.device.type == "cuda"
    np.testing.assert_array_equal(tree.predict(X), y)
