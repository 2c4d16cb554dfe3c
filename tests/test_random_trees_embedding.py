"""RandomTreesEmbedding against scikit-learn's (Chapter 5).

The random target and the trees' seeds are drawn as scikit-learn draws them, but
treelib's extra trees take their random features and thresholds from their own
counter-based random numbers (:mod:`treelib.node_random`), not from scikit-learn's
generator: the trees, hence the columns, differ from scikit-learn's. So the
embedding is checked by structure (it is the one-hot code of the trees' leaves,
the trees are treelib's extra trees grown on scikit-learn's random target with
scikit-learn's seeds) and by its statistics (leaves per tree, how often two
samples share a leaf), which match scikit-learn's.
"""

import numpy as np
import pytest
from scipy import sparse
from sklearn import ensemble
from sklearn.base import is_regressor
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import OneHotEncoder

from treelib import ExtraTreesRegressor, RandomTreesEmbedding


def make_X(seed, n=150, p=3):
    return np.random.RandomState(seed).normal(size=(n, p))


def test_output_is_the_one_hot_code_of_the_leaves():
    X = make_X(0)
    rte = RandomTreesEmbedding(n_estimators=10, random_state=0)
    code = rte.fit_transform(X)
    theirs = ensemble.RandomTreesEmbedding(n_estimators=10, random_state=0).fit_transform(X)
    assert type(code) is type(theirs) and code.format == "csr" and code.dtype == theirs.dtype
    expected = OneHotEncoder().fit_transform(rte.apply(X))
    assert (code != expected).nnz == 0
    np.testing.assert_array_equal(code.sum(axis=1), 10)  # one leaf per tree
    assert (rte.transform(X) != code).nnz == 0
    X_new = make_X(1, n=20)
    assert (
        rte.transform(X_new) != OneHotEncoder().fit(rte.apply(X)).transform(rte.apply(X_new))
    ).nnz == 0
    dense = RandomTreesEmbedding(n_estimators=10, sparse_output=False, random_state=0)
    dense_code = dense.fit_transform(X)
    assert isinstance(dense_code, np.ndarray)
    np.testing.assert_array_equal(dense_code, code.toarray())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trees_are_extra_trees_on_sklearns_random_target(seed):
    X = make_X(seed)
    params = {"max_depth": 3, "min_samples_leaf": 2}
    rte = RandomTreesEmbedding(n_estimators=8, random_state=seed, **params).fit(X)
    theirs = ensemble.RandomTreesEmbedding(n_estimators=8, random_state=seed, **params).fit(X)
    assert [t.random_state for t in rte] == [t.random_state for t in theirs]
    # scikit-learn's target: uniform numbers drawn afresh from the same seed
    target = np.random.RandomState(seed).uniform(size=len(X))
    forest = ExtraTreesRegressor(8, max_features=1, random_state=seed, **params).fit(X, target)
    np.testing.assert_array_equal(rte.apply(X), forest.apply(X))
    for tree in rte:
        assert tree.get_depth() <= 3 and tree.splitter == "random" and tree.max_features == 1


def test_random_state_instance_draws_target_then_seeds():
    X = make_X(3)
    ours = RandomTreesEmbedding(n_estimators=5, random_state=np.random.RandomState(42)).fit(X)
    theirs = ensemble.RandomTreesEmbedding(n_estimators=5, random_state=np.random.RandomState(42))
    theirs.fit(X)
    assert [t.random_state for t in ours] == [t.random_state for t in theirs]


def test_statistics_match_sklearn():
    X = make_X(7, n=200)
    stats = {}
    for name, cls in [("ours", RandomTreesEmbedding), ("theirs", ensemble.RandomTreesEmbedding)]:
        leaves, shared = [], []
        for seed in range(6):
            code = cls(n_estimators=30, random_state=seed).fit_transform(X)
            leaves.append(code.shape[1] / 30)
            together = (code @ code.T).toarray() / 30  # fraction of trees two samples share
            shared.append(together[np.triu_indices(len(X), 1)].mean())
        stats[name] = np.mean(leaves), np.mean(shared)
    assert stats["ours"][0] == pytest.approx(stats["theirs"][0], rel=0.05)
    assert stats["ours"][1] == pytest.approx(stats["theirs"][1], abs=0.03)


def test_feature_names_out_as_sklearn():
    X = np.abs(np.random.RandomState(0).randn(100, 4))
    params = {"n_estimators": 2, "max_depth": 2, "sparse_output": False, "random_state": 0}
    ours = RandomTreesEmbedding(**params).fit(X)
    theirs = ensemble.RandomTreesEmbedding(**params).fit(X)
    # full depth-2 trees: leaves 2, 3, 5, 6 in both
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    names = ours.get_feature_names_out()
    assert names.dtype == object and len(names) == ours.transform(X).shape[1]


def test_warm_start_grows_the_same_trees():
    X = make_X(4)
    one = RandomTreesEmbedding(n_estimators=6, random_state=0).fit(X)
    warm = RandomTreesEmbedding(n_estimators=3, random_state=0, warm_start=True).fit(X)
    warm.set_params(n_estimators=6).fit(X)
    np.testing.assert_array_equal(one.apply(X), warm.apply(X))
    assert (one.transform(X) != warm.transform(X)).nnz == 0


def test_api_and_errors_as_sklearn():
    X = make_X(5, n=30)
    rte = RandomTreesEmbedding()
    assert not is_regressor(rte) and not hasattr(rte, "predict")
    assert rte.get_params()["max_depth"] == 5 and rte.get_params()["n_estimators"] == 100
    with pytest.raises(TypeError, match="got an unexpected keyword argument"):
        RandomTreesEmbedding(oob_score=True)
    with pytest.raises(NotImplementedError, match="OOB score not supported"):
        rte._set_oob_score_and_attributes(X, None)
    with pytest.raises(NotFittedError):
        rte.transform(X)
    with pytest.raises(ValueError) as theirs:
        ensemble.RandomTreesEmbedding(sparse_output="yes").fit(X)
    with pytest.raises(type(theirs.value), match="sparse_output") as ours:
        RandomTreesEmbedding(sparse_output="yes").fit(X)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError):
        RandomTreesEmbedding(n_estimators=2).fit(X[:, 0])  # 1-d X
    fitted = RandomTreesEmbedding(n_estimators=2).fit(X)
    assert sparse.issparse(fitted.transform(X))
    with pytest.raises(ValueError, match="X has 2 features"):
        fitted.transform(X[:, :2])
