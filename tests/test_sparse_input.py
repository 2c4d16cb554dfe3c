"""scipy.sparse X, as scikit-learn's trees and ensembles accept it (Chapter 2).

treelib makes a sparse X dense at validation (``treelib._validation.densify``),
so a sparse fit must grow the trees of the dense fit, and (since scikit-learn's
sparse splitter grows the trees of its dense one) scikit-learn's trees too.
scikit-learn breaks ties between equally good splits with its random feature
order, so the comparisons with scikit-learn use tie-free data sets: those on
which scikit-learn grows the same trees for three random states.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import ensemble as ske
from sklearn import tree as skt
from sklearn.utils import get_tags

import treelib

CONTAINERS = (
    sp.csr_matrix, sp.csr_array, sp.csc_matrix, sp.csc_array, sp.coo_matrix, sp.coo_array,
)  # fmt: skip
FIELDS = ("children_left", "children_right", "feature", "n_node_samples", "threshold")
FIELDS += ("impurity", "weighted_n_node_samples", "value")
TREES = ("DecisionTreeClassifier", "DecisionTreeRegressor")
TREES += ("ExtraTreeClassifier", "ExtraTreeRegressor")
FORESTS = ("RandomForestClassifier", "RandomForestRegressor")
FORESTS += ("ExtraTreesClassifier", "ExtraTreesRegressor")
BOOSTING = ("AdaBoostClassifier", "GradientBoostingClassifier", "GradientBoostingRegressor")
SMALL = dict(min_samples_leaf=5)
PARAMS = {
    **{name: SMALL for name in TREES},
    **{name: dict(SMALL, n_estimators=4) for name in FORESTS},
    # (scikit-learn's random feature subsets are not treelib's: all features)
    "RandomForestClassifier": dict(SMALL, n_estimators=4, max_features=None),
    "AdaBoostClassifier": dict(n_estimators=8),
    "GradientBoostingClassifier": dict(SMALL, n_estimators=4, max_depth=3),
    "GradientBoostingRegressor": dict(SMALL, n_estimators=4, max_depth=3),
}
# The random-split trees (extra trees) draw their thresholds with treelib's own
# generator, not scikit-learn's: they are compared sparse against dense only.
SAME_AS_SKLEARN = ("DecisionTreeClassifier", "DecisionTreeRegressor")
SAME_AS_SKLEARN += ("RandomForestClassifier", "RandomForestRegressor") + BOOSTING


def ours(name, **params):
    """treelib's estimator for scikit-learn's ``name``.

    treelib has no ExtraTree* classes: its trees take ``splitter="random"``
    (scikit-learn's extra tree's defaults: ``max_features="sqrt"`` for the
    classifier, 1.0 for the regressor).
    """
    if name.startswith("ExtraTree") and not name.startswith("ExtraTrees"):
        classifier = is_classifier(name)
        cls = treelib.DecisionTreeClassifier if classifier else treelib.DecisionTreeRegressor
        return cls(splitter="random", max_features="sqrt" if classifier else 1.0, **params)
    return getattr(treelib, name)(**params)


def make_data(seed, classifier, n=120, p=5):
    """Continuous values with about 60% zeros (implicit zeros in a sparse matrix)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    X[rng.random((n, p)) < 0.6] = 0.0
    signal = X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.3 * rng.normal(size=n)
    return X, (np.digitize(signal, [-0.5, 0.5]) if classifier else signal)


def is_classifier(name):
    return name.endswith("Classifier")


def trees_of(model):
    """The fitted trees of a tree or an ensemble, in order."""
    if hasattr(model, "tree_"):
        return [model]
    return list(np.ravel(model.estimators_))


def assert_same_trees(ours, theirs, atol=0.0):
    a, b = trees_of(ours), trees_of(theirs)
    assert len(a) == len(b)
    for index, (ta, tb) in enumerate(zip(a, b, strict=True)):
        assert ta.tree_.node_count == tb.tree_.node_count, index
        for field in FIELDS:
            np.testing.assert_allclose(
                getattr(ta.tree_, field), getattr(tb.tree_, field), rtol=0, atol=atol,
                err_msg=f"tree {index}: {field}",
            )  # fmt: skip


def outputs(model, X, y):
    """Everything a fitted model says about X, as numpy (sparse paths made dense)."""
    out = {"predict": model.predict(X), "score": model.score(X, y)}
    for method in ("predict_proba", "predict_log_proba", "decision_function", "apply"):
        if hasattr(model, method):
            out[method] = getattr(model, method)(X)
    if hasattr(model, "decision_path"):
        path = model.decision_path(X)
        out["decision_path"] = (path if sp.issparse(path) else path[0]).toarray()
    if hasattr(model, "staged_predict"):
        out["staged_predict"] = np.stack(list(model.staged_predict(X)))
    return out


def assert_same_outputs(a, b, atol=0.0):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=0, atol=atol, err_msg=name)


@pytest.mark.parametrize("name", TREES + FORESTS + BOOSTING)
@pytest.mark.parametrize("container", CONTAINERS, ids=lambda c: c.__name__)
def test_a_sparse_fit_is_the_dense_fit(name, container):
    X, y = make_data(0, is_classifier(name))
    X_test, y_test = make_data(1, is_classifier(name))
    dense = ours(name, random_state=0, **PARAMS[name]).fit(X, y)
    sparse = ours(name, random_state=0, **PARAMS[name]).fit(container(X), y)
    assert_same_trees(sparse, dense)
    np.testing.assert_array_equal(sparse.feature_importances_, dense.feature_importances_)
    assert_same_outputs(outputs(sparse, container(X_test), y_test), outputs(dense, X_test, y_test))


def sklearn_class(name):
    return getattr(skt if "Tree" in name and "Trees" not in name else ske, name)


def tie_free_data(name, max_tries=40):
    """The first data set on which ties cannot decide the comparison with scikit-learn.

    Trees and boosting: scikit-learn's sparse fit is the same for three random
    states and treelib's dense fit for two (as tests/test_gradient_boosting.py).
    A forest's random state also draws its bootstraps, so there: the data set on
    which the two dense forests are the same (then the sparse ones must be too).
    """
    sk_class, params = sklearn_class(name), PARAMS[name]
    for seed in range(max_tries):
        X, y = make_data(seed, is_classifier(name))
        if name in FORESTS:
            references = [sk_class(random_state=0, **params).fit(X, y)]
            references.append(ours(name, random_state=0, **params).fit(X, y))
        else:
            references = [
                sk_class(random_state=s, **params).fit(sp.csc_matrix(X), y) for s in range(3)
            ]
            references += [ours(name, random_state=s, **params).fit(X, y) for s in range(2)]
        try:
            for other in references[1:]:
                assert_same_trees(other, references[0], atol=1e-9)
        except AssertionError:
            continue
        return X, y, sk_class(random_state=0, **params).fit(sp.csc_matrix(X), y)
    raise AssertionError(f"no tie-free data set for {name} in {max_tries} tries")


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # log of p = 0
@pytest.mark.parametrize("name", SAME_AS_SKLEARN)
@pytest.mark.parametrize("container", (sp.csr_matrix, sp.csc_array), ids=lambda c: c.__name__)
def test_sparse_fits_equal_scikit_learns_sparse_fits(name, container):
    X, y, theirs = tie_free_data(name)
    mine = ours(name, random_state=0, **PARAMS[name]).fit(container(X), y)
    assert_same_trees(mine, theirs, atol=1e-9)
    np.testing.assert_allclose(mine.feature_importances_, theirs.feature_importances_, atol=1e-12)
    X_test, y_test = make_data(100, is_classifier(name))
    assert_same_outputs(
        outputs(mine, container(X_test), y_test),
        outputs(theirs, container(X_test), y_test),
        atol=1e-9,
    )


@pytest.mark.parametrize("name", TREES + FORESTS + BOOSTING)
def test_the_estimators_say_they_accept_sparse_input_as_scikit_learns_do(name):
    sk_class = sklearn_class(name)
    assert get_tags(ours(name)).input_tags.sparse
    assert get_tags(sk_class()).input_tags.sparse


@pytest.mark.parametrize("name", TREES)
@pytest.mark.parametrize("container", (sp.csr_matrix, sp.csr_array), ids=lambda c: c.__name__)
def test_tree_structure_apply_and_decision_path_take_csr(name, container):
    X, y = make_data(2, is_classifier(name))
    tree = ours(name, random_state=0).fit(X, y).tree_
    np.testing.assert_array_equal(tree.apply(container(X)), tree.apply(X))
    np.testing.assert_array_equal(
        tree.decision_path(container(X)).toarray(), tree.decision_path(X).toarray()
    )


def same_error(ours, theirs):
    """Both calls raise the same exception type with the same message."""
    errors = []
    for call in (ours, theirs):
        with pytest.raises(Exception) as info:
            call()
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("container", (sp.csc_matrix, sp.coo_array), ids=lambda c: c.__name__)
def test_tree_structure_refuses_other_formats_as_scikit_learns_tree(container):
    X, y = make_data(2, False)
    ours = treelib.DecisionTreeRegressor().fit(X, y).tree_
    theirs = skt.DecisionTreeRegressor().fit(X, y).tree_
    same_error(lambda: ours.apply(container(X)), lambda: theirs.apply(container(X)))
    same_error(lambda: ours.decision_path(container(X)), lambda: theirs.decision_path(container(X)))


@pytest.mark.parametrize("name", ("DecisionTreeClassifier", "RandomForestClassifier"))
def test_sparse_y_is_refused_as_scikit_learn_refuses_it(name):
    X, y = make_data(3, True)
    y_sparse = sp.csr_matrix(y.reshape(-1, 1))
    sk_class = sklearn_class(name)
    same_error(lambda: ours(name).fit(X, y_sparse), lambda: sk_class().fit(X, y_sparse))


@pytest.mark.parametrize("name", ("DecisionTreeRegressor", "RandomForestRegressor"))
def test_nan_in_a_sparse_matrix_is_refused_as_scikit_learn_refuses_it(name):
    # NaN in dense X is a missing value (Chapter 6); scikit-learn's sparse
    # splitter has no missing values, so NaN in sparse X is an error at fit and predict
    X, y = make_data(4, False)
    with_nan = sp.csr_matrix(X)
    with_nan.data[0] = np.nan
    mine, theirs = ours(name), getattr(ske if "Forest" in name else skt, name)()
    same_error(lambda: mine.fit(with_nan, y), lambda: theirs.fit(with_nan, y))
    mine.fit(X, y)
    theirs.fit(X, y)
    same_error(lambda: mine.predict(with_nan), lambda: theirs.predict(with_nan))
    assert np.isfinite(mine.predict(with_nan.toarray())).all()  # dense NaN: a missing value


def test_int64_indices_are_refused_at_predict_as_scikit_learn_refuses_them():
    X, y = make_data(5, True)
    wide = sp.csr_matrix(X)
    wide.indices, wide.indptr = wide.indices.astype(np.int64), wide.indptr.astype(np.int64)
    mine = treelib.DecisionTreeClassifier().fit(X, y)
    theirs = skt.DecisionTreeClassifier().fit(X, y)
    same_error(lambda: mine.predict(wide), lambda: theirs.predict(wide))
