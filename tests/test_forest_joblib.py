"""A forest's ``n_jobs`` goes through joblib, as scikit-learn's (issue 5).

An active joblib backend (``parallel_config`` / ``parallel_backend``: threads,
``loky`` processes, a Dask cluster) grows the batches of trees, and the forest
does not depend on which one does.
"""

import threading

import joblib
import numpy as np
import pytest
from joblib._parallel_backends import LokyBackend, ThreadingBackend
from sklearn.datasets import make_classification, make_regression

import treelib
from treelib import RandomForestClassifier, RandomForestRegressor


class CountingBackend(ThreadingBackend):
    """joblib's threads, counting the jobs it is given (in this process)."""

    submitted = 0
    lock = threading.Lock()

    def submit(self, func, callback=None):
        with CountingBackend.lock:
            CountingBackend.submitted += 1
        return super().submit(func, callback)


class CountingLokyBackend(LokyBackend):
    """joblib's loky processes, counting the jobs this process sends them."""

    submitted = 0

    def submit(self, func, callback=None):
        CountingLokyBackend.submitted += 1
        return super().submit(func, callback)


joblib.register_parallel_backend("treelib-counting", CountingBackend)
joblib.register_parallel_backend("treelib-counting-loky", CountingLokyBackend)


def small_batches(monkeypatch):
    """Two trees per batch of 200 rows and 5 features: several batches, several jobs."""
    monkeypatch.setattr(treelib.batched, "BATCH_ELEMENTS", 2 * 200 * 5)
    monkeypatch.setattr(treelib.batched, "HIST_BATCH_SAMPLES", 2 * 200)


def assert_same_forest(a, b, X):
    assert len(a) == len(b)
    for s, t in zip(a, b):
        for field in ("feature", "threshold", "children_left", "value", "n_node_samples"):
            np.testing.assert_array_equal(getattr(s.tree_, field), getattr(t.tree_, field))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("n_jobs", [2, None])
def test_the_active_joblib_backend_grows_the_trees(monkeypatch, n_jobs):
    small_batches(monkeypatch)
    X, y = make_classification(200, 5, random_state=0)
    params = dict(n_estimators=8, max_features=2, random_state=0)
    one = RandomForestClassifier(**params, n_jobs=1).fit(X, y)
    CountingBackend.submitted = 0
    # n_jobs=None: the context's two jobs, as scikit-learn's forests
    with joblib.parallel_config(backend="treelib-counting", n_jobs=2):
        forest = RandomForestClassifier(**params, n_jobs=n_jobs).fit(X, y)
    assert CountingBackend.submitted >= 2  # four batches of two trees, two jobs
    assert_same_forest(forest, one, X)
    CountingBackend.submitted = 0
    RandomForestClassifier(**params, n_jobs=2).fit(X, y)  # no context: joblib's threads
    assert CountingBackend.submitted == 0


@pytest.mark.parametrize("tree_method", ["levelwise", "hist"])
def test_processes_grow_the_forest_of_one_job(monkeypatch, tree_method):
    """loky sends the batches' tensors (and bins) to other processes and back."""
    small_batches(monkeypatch)  # (decided here: the workers get these batches)
    X, y = make_classification(200, 5, n_classes=3, n_informative=3, random_state=1)
    params = dict(n_estimators=6, tree_method=tree_method, random_state=2)
    one = RandomForestClassifier(**params, n_jobs=1).fit(X, y)
    CountingLokyBackend.submitted = 0
    with joblib.parallel_config(backend="treelib-counting-loky", n_jobs=2):
        forest = RandomForestClassifier(**params).fit(X, y)
    assert CountingLokyBackend.submitted == 3  # three batches of two trees, sent to loky
    assert_same_forest(forest, one, X)
    np.testing.assert_array_equal(forest.predict_proba(X), one.predict_proba(X))
    Xr, yr = make_regression(200, 5, noise=1.0, random_state=3)
    one = RandomForestRegressor(**params, n_jobs=1, max_depth=4).fit(Xr, yr)
    with joblib.parallel_config(backend="loky", n_jobs=2):
        forest = RandomForestRegressor(**params, max_depth=4).fit(Xr, yr)
    assert_same_forest(forest, one, Xr)


def test_dask_cluster_grows_the_forest_of_one_job():
    distributed = pytest.importorskip("distributed")
    X, y = make_classification(200, 5, random_state=4)
    params = dict(n_estimators=6, random_state=5)
    one = RandomForestClassifier(**params, n_jobs=1).fit(X, y)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
        distributed.get_task_stream(client) as tasks,
        joblib.parallel_config(backend="dask"),
    ):
        forest = RandomForestClassifier(**params).fit(X, y)
    assert len(tasks.data) >= 2  # the cluster ran the batches (two workers: two)
    assert_same_forest(forest, one, X)


@pytest.mark.parametrize("params", [dict(tree_method="recursive"), dict(splitter="random")])
def test_trees_grown_one_by_one_go_through_the_active_backend_too(params):
    """Trees that are not batched (recursive builder, extra trees): one joblib job each."""
    X, y = make_classification(200, 5, random_state=6)
    cls = treelib.ExtraTreesClassifier if "splitter" in params else RandomForestClassifier
    params = {k: v for k, v in params.items() if k != "splitter"}
    one = cls(n_estimators=6, random_state=7, **params).fit(X, y)
    CountingBackend.submitted = 0
    with joblib.parallel_config(backend="treelib-counting", n_jobs=2):
        forest = cls(n_estimators=6, random_state=7, n_jobs=2, **params).fit(X, y)
    assert CountingBackend.submitted == 6  # as scikit-learn's forests: a job per tree
    assert_same_forest(forest, one, X)
