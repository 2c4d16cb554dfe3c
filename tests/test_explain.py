"""treelib.explain (Chapter 10) against shap.TreeExplainer and scikit-learn.

The references: shap 0.51's TreeExplainer (its own C++ TreeSHAP) on
scikit-learn's models, and on treelib's trees handed to shap as its generic
dictionary model; scikit-learn's partial_dependence; the model's own
predictions (efficiency); the brute-force Shapley values (the definition).
"""

import numpy as np
import pytest
import torch
from sklearn import ensemble as sk_ensemble
from sklearn import tree as sk_tree
from sklearn.exceptions import NotFittedError
from sklearn.inspection import partial_dependence as sk_partial_dependence
from sklearn.linear_model import LinearRegression
from threadpoolctl import threadpool_limits

import treelib
from treelib.explain import (
    TreeExplainer,
    partial_dependence,
    shapley_values_brute_force,
    tree_expectation,
)

shap = pytest.importorskip("shap")

N_MODELS = 20
TOL = 1e-6


def data(seed, task, n=60, d=None, rounded=True):
    """Random data: y on a unit scale (TOL is absolute); task in reg, bin, multi.

    ``rounded``: one decimal, so that values repeat (ties, as in real data).
    shap's interventional code compares in float32 where the trees compare a
    float32 value with a float64 threshold: a value that rounds to a threshold
    goes the other way there (1.0 against 0.99999997, the midpoint of 0.9 and
    1.1 in float32), so it is compared with shap on unrounded data.
    """
    rng = np.random.default_rng(seed)
    d = d or int(rng.integers(3, 7))
    X = rng.normal(size=(n, d))
    if rounded:
        X = X.round(1)
    score = X[:, 0] + X[:, 1] * X[:, 2 % d] + 0.3 * rng.normal(size=n)
    if task == "reg":
        return X, score / score.std()
    if task == "bin":
        return X, (score > np.median(score)).astype(int)
    return X, np.digitize(score, np.quantile(score, [0.33, 0.66]))


SKLEARN_KINDS = {
    "tree-reg": ("reg", lambda s: sk_tree.DecisionTreeRegressor(max_depth=4, random_state=s)),
    "tree-bin": ("bin", lambda s: sk_tree.DecisionTreeClassifier(max_depth=4, random_state=s)),
    "tree-multi": ("multi", lambda s: sk_tree.DecisionTreeClassifier(max_depth=4, random_state=s)),
    "forest-reg": (
        "reg",
        lambda s: sk_ensemble.RandomForestRegressor(3, max_depth=4, random_state=s),
    ),
    "forest-multi": (
        "multi",
        lambda s: sk_ensemble.RandomForestClassifier(3, max_depth=4, random_state=s),
    ),
    "extra-bin": (
        "bin",
        lambda s: sk_ensemble.ExtraTreesClassifier(3, max_depth=4, random_state=s),
    ),
    "gb-reg": (
        "reg",
        lambda s: sk_ensemble.GradientBoostingRegressor(
            n_estimators=3, max_depth=3, random_state=s
        ),
    ),
    "gb-bin": (
        "bin",
        lambda s: sk_ensemble.GradientBoostingClassifier(
            n_estimators=3, max_depth=3, random_state=s
        ),
    ),
}


def assert_close(actual, expected, tol=TOL):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=0, atol=tol)


@pytest.mark.parametrize("kind", sorted(SKLEARN_KINDS))
def test_path_dependent_equals_shap_on_sklearn_models(kind):
    task, make = SKLEARN_KINDS[kind]
    for seed in range(N_MODELS):
        X, y = data(seed, task)
        model = make(seed).fit(X, y)
        ours, theirs = TreeExplainer(model), shap.TreeExplainer(model)
        values, expected = ours.shap_values(X[:8]), theirs.shap_values(X[:8])
        assert values.shape == np.shape(expected)
        assert_close(values, expected)
        assert_close(ours.expected_value, theirs.expected_value)  # shapes too
        if seed < 5:  # interaction values: fewer models (shap's are slow to compute)
            assert_close(ours.shap_interaction_values(X[:4]), theirs.shap_interaction_values(X[:4]))


@pytest.mark.parametrize("kind", sorted(SKLEARN_KINDS))
def test_interventional_equals_shap_on_sklearn_models(kind):
    task, make = SKLEARN_KINDS[kind]
    for seed in range(N_MODELS):
        X, y = data(seed, task, rounded=False)
        model = make(seed).fit(X, y)
        background = X[-10:]
        ours = TreeExplainer(model, background, feature_perturbation="interventional")
        theirs = shap.TreeExplainer(model, background, feature_perturbation="interventional")
        assert_close(ours.shap_values(X[:6]), theirs.shap_values(X[:6]))
        assert_close(ours.expected_value, theirs.expected_value)
        assert np.ndim(ours.expected_value) == np.ndim(theirs.expected_value)


def test_missing_values_follow_the_trees_routing():
    """A NaN goes where the split sends it (missing_go_to_left), as shap reads it."""
    for seed in range(N_MODELS):
        X, y = data(seed, "reg", n=80)
        X[np.random.default_rng(seed).random(X.shape) < 0.2] = np.nan
        model = sk_ensemble.RandomForestRegressor(3, max_depth=4, random_state=seed).fit(X, y)
        ours, theirs = TreeExplainer(model), shap.TreeExplainer(model)
        assert_close(ours.shap_values(X[:10]), theirs.shap_values(X[:10]))
        values = ours.shap_values(X[:10])
        assert_close(values.sum(1) + ours.expected_value[0], model.predict(X[:10]), 1e-9)


# treelib's models, handed to shap as its generic dictionary model


def shap_dict(model):
    """shap's dictionary model of a fitted treelib model (scaled leaf outputs, base)."""

    def entry(tree_, values):
        missing_left = tree_.missing_go_to_left.astype(bool)
        return {
            "children_left": tree_.children_left,
            "children_right": tree_.children_right,
            "children_default": np.where(missing_left, tree_.children_left, tree_.children_right),
            "features": tree_.feature,
            "thresholds": tree_.threshold,
            "values": values,
            "node_sample_weight": tree_.weighted_n_node_samples,
        }

    def fractions(tree_):
        value = tree_.value[:, 0, :]
        return value / value.sum(1, keepdims=True)

    if hasattr(model, "init_raw_prediction_"):  # gradient boosting
        K = model.estimators_.shape[1]
        trees = []
        for stage in model.estimators_:
            for k, est in enumerate(stage):
                values = np.zeros((est.tree_.node_count, K))
                values[:, k] = model.learning_rate * est.tree_.value[:, 0, 0]
                trees.append(entry(est.tree_, values))
        base = model.init_raw_prediction_
    else:
        estimators = getattr(model, "estimators_", [model])
        classifier = hasattr(model, "classes_")
        trees = [
            entry(
                e.tree_,
                (fractions(e.tree_) if classifier else e.tree_.value[:, 0, :]) / len(estimators),
            )
            for e in estimators
        ]
        base = np.zeros(trees[0]["values"].shape[1])
    return {
        "trees": trees,
        "base_offset": base if len(base) > 1 else float(base[0]),
        "input_dtype": np.float32,
        "internal_dtype": np.float64,
        "tree_output": "raw_value",
        "objective": "squared_error",
    }


def model_output(model, X):
    """What the explanation adds up to, from the model's own predictions."""
    if hasattr(model, "init_raw_prediction_") and hasattr(model, "decision_function"):
        return model.decision_function(X)  # gradient boosting classifier: raw scores
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    return model.predict(X)


TREELIB_KINDS = {
    "tree-reg": ("reg", lambda s: treelib.DecisionTreeRegressor(max_depth=4, random_state=s)),
    "tree-multi": ("multi", lambda s: treelib.DecisionTreeClassifier(max_depth=4, random_state=s)),
    "forest-reg": ("reg", lambda s: treelib.RandomForestRegressor(3, max_depth=4, random_state=s)),
    "forest-bin": (
        "bin",
        lambda s: treelib.RandomForestClassifier(3, max_depth=4, random_state=s),
    ),
    "extra-multi": (
        "multi",
        lambda s: treelib.ExtraTreesClassifier(3, max_depth=4, random_state=s),
    ),
    "gb-reg": (
        "reg",
        lambda s: treelib.GradientBoostingRegressor(n_estimators=3, max_depth=3, random_state=s),
    ),
    "gb-bin": (
        "bin",
        lambda s: treelib.GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=s),
    ),
    "gb-multi": (
        "multi",
        lambda s: treelib.GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=s),
    ),
}


@pytest.mark.parametrize("kind", sorted(TREELIB_KINDS))
def test_treelib_models_equal_shap_and_add_up(kind):
    task, make = TREELIB_KINDS[kind]
    for seed in range(N_MODELS):
        X, y = data(seed, task, rounded=False)  # (for the interventional comparison)
        model = make(seed).fit(X, y)
        reference = shap_dict(model)
        ours = TreeExplainer(model)
        values = ours.shap_values(X[:6])
        theirs = shap.TreeExplainer(reference).shap_values(X[:6])
        assert_close(values.reshape(np.shape(theirs)), theirs)
        # efficiency against the model's own output
        output = model_output(model, X[:6])
        total = values.sum(1) + np.asarray(ours.expected_value)
        assert_close(total.reshape(np.shape(output)), output, 1e-9)
        background = X[-8:]
        ours = TreeExplainer(model, background, feature_perturbation="interventional")
        theirs = shap.TreeExplainer(reference, background, feature_perturbation="interventional")
        values = ours.shap_values(X[:6])
        assert_close(values.reshape(np.shape(v := theirs.shap_values(X[:6]))), v)
        if seed < 3:
            ours = TreeExplainer(model)
            theirs = shap.TreeExplainer(reference)
            inter = theirs.shap_interaction_values(X[:3])
            assert_close(ours.shap_interaction_values(X[:3]).reshape(np.shape(inter)), inter)


@pytest.mark.parametrize(
    "make",
    [
        lambda: treelib.AdaBoostClassifier(
            treelib.DecisionTreeClassifier(max_depth=2), n_estimators=4, random_state=0
        ),
        lambda: sk_ensemble.AdaBoostClassifier(
            sk_tree.DecisionTreeClassifier(max_depth=2), n_estimators=4, random_state=0
        ),
    ],
)
@pytest.mark.parametrize("task", ["bin", "multi"])
def test_adaboost_decision_function_is_explained(make, task):
    """SAMME's decision function is a sum over its trees: explained; brute force agrees."""
    for seed in range(5):
        X, y = data(seed, task, d=4)
        model = make().fit(X, y)
        explainer = TreeExplainer(model)
        values = explainer.shap_values(X[:5])
        total = values.sum(1) + np.asarray(explainer.expected_value)
        assert_close(total.reshape(-1), model.decision_function(X[:5]).reshape(-1), 1e-9)
        phi, base = shapley_values_brute_force(model.decision_function, X[0], X[-10:])
        inter = TreeExplainer(model, X[-10:], feature_perturbation="interventional")
        assert_close(inter.shap_values(X[:1])[0], phi)


@pytest.mark.parametrize("task", ["reg", "multi"])
def test_brute_force_equals_tree_shap(task):
    """The definition (2**d subsets) and the polynomial algorithm agree for d <= 5."""
    for seed in range(N_MODELS):
        X, y = data(seed, task, d=3 + seed % 3)
        model = sk_ensemble.RandomForestRegressor if task == "reg" else None
        if task == "reg":
            model = model(2, max_depth=4, random_state=seed).fit(X, y)
            predict = model.predict
        else:
            model = treelib.DecisionTreeClassifier(max_depth=4, random_state=seed).fit(X, y)
            predict = model.predict_proba
        x = X[seed % len(X)]
        phi, base = shapley_values_brute_force(model, x)  # path-dependent
        explainer = TreeExplainer(model)
        assert_close(explainer.shap_values(x[None])[0], phi, 1e-9)
        assert_close(np.ravel(explainer.expected_value), np.ravel(base), 1e-9)
        background = X[:7]
        phi, base = shapley_values_brute_force(predict, x, background)  # interventional
        explainer = TreeExplainer(model, background, feature_perturbation="interventional")
        assert_close(explainer.shap_values(x[None])[0], phi, 1e-9)
        assert_close(np.ravel(explainer.expected_value), np.ravel(base), 1e-9)


def test_tree_expectation_by_hand():
    """A depth-2 tree worked by hand: E[f | x_S] for every S."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    y = np.array([1.0, 2.0, 3.0, 4.0, 6.0])
    model = sk_tree.DecisionTreeRegressor(random_state=0).fit(X, y)
    x = np.array([1.0, 1.0])
    assert tree_expectation(model, x, []) == pytest.approx(16 / 5)  # the mean
    assert tree_expectation(model, x, [0, 1]) == pytest.approx(5.0)
    assert tree_expectation(model, x, [0]) == pytest.approx((3 + 4 + 6) / 3)
    # the root splits feature 0 (2 rows left, 3 right), each child feature 1:
    # x_1 = 1 known, x_0 unknown: leaf 2 with weight 2/5, leaf (4 + 6) / 2 with 3/5
    assert tree_expectation(model, x, [1]) == pytest.approx(2 / 5 * 2 + 3 / 5 * 5)


@pytest.mark.parametrize("seed", range(10))
def test_efficiency_property(seed):
    """For any model and sample: expected value + sum of SHAP values = the model's output."""
    rng = np.random.default_rng(100 + seed)
    task = ["reg", "bin", "multi"][seed % 3]
    X, y = data(seed, task, n=50)
    makers = [
        lambda: treelib.RandomForestRegressor(4, max_depth=5, random_state=seed),
        lambda: treelib.RandomForestClassifier(4, max_depth=5, random_state=seed),
        lambda: treelib.ExtraTreesClassifier(4, random_state=seed),
    ]
    model = makers[seed % 3]().fit(X, y)
    Z = rng.normal(size=(20, X.shape[1]))
    Z[rng.random(Z.shape) < 0.1] = np.nan  # the trees route NaN
    for perturbation in ("tree_path_dependent", "interventional"):
        explainer = TreeExplainer(model, X[:9], feature_perturbation=perturbation)
        values = explainer.shap_values(Z)
        total = values.sum(1) + np.asarray(explainer.expected_value)
        assert_close(total, model_output(model, Z), 1e-9)
    inter = TreeExplainer(model).shap_interaction_values(Z[:5])
    assert_close(inter.sum(2), TreeExplainer(model).shap_values(Z[:5]), 1e-9)


PD_MODELS = [
    ("reg", lambda s: sk_tree.DecisionTreeRegressor(max_depth=5, random_state=s)),
    ("reg", lambda s: sk_ensemble.RandomForestRegressor(4, max_depth=4, random_state=s)),
    ("reg", lambda s: sk_ensemble.GradientBoostingRegressor(n_estimators=4, random_state=s)),
    ("bin", lambda s: sk_ensemble.GradientBoostingClassifier(n_estimators=4, random_state=s)),
    ("multi", lambda s: sk_ensemble.GradientBoostingClassifier(n_estimators=3, random_state=s)),
    ("multi", lambda s: sk_tree.DecisionTreeClassifier(max_depth=4, random_state=s)),
    ("bin", lambda s: sk_ensemble.RandomForestClassifier(3, max_depth=4, random_state=s)),
]


@pytest.mark.parametrize("task, make", PD_MODELS)
@pytest.mark.parametrize("method, kind", [("auto", "average"), ("brute", "both")])
def test_partial_dependence_equals_sklearn(task, make, method, kind):
    for seed in range(2 if method == "brute" else 4):
        X, y = data(seed, task, n=50, d=4)
        X[:, 3] = np.random.default_rng(seed).normal(size=len(X))  # many values: a linspace grid
        model = make(seed).fit(X, y)
        for features in ([0], [3], [1, 3]):
            expected = sk_partial_dependence(
                model, X, features, method=method, kind=kind, grid_resolution=15
            )
            actual = partial_dependence(
                model, X, features, method=method, kind=kind, grid_resolution=15
            )
            assert sorted(actual) == sorted(expected)
            for a, b in zip(actual.grid_values, expected.grid_values):
                assert_close(a, b, 0)
            for key in ("average", "individual"):
                if key in expected:
                    assert_close(actual[key], expected[key])


def sklearn_tree(tree_):
    """scikit-learn's Cython Tree holding a treelib tree's arrays (its pickled state)."""
    from sklearn.tree._tree import NODE_DTYPE
    from sklearn.tree._tree import Tree as SkTree

    nodes = np.zeros(tree_.node_count, dtype=NODE_DTYPE)
    for field, name in [
        ("left_child", "children_left"),
        ("right_child", "children_right"),
        ("feature", "feature"),
        ("threshold", "threshold"),
        ("impurity", "impurity"),
        ("n_node_samples", "n_node_samples"),
        ("weighted_n_node_samples", "weighted_n_node_samples"),
        ("missing_go_to_left", "missing_go_to_left"),
    ]:
        nodes[field] = getattr(tree_, name)
    tree = SkTree(tree_.n_features, np.array([1], dtype=np.intp), 1)
    state = {"max_depth": tree_.max_depth, "node_count": tree_.node_count, "nodes": nodes}
    tree.__setstate__({**state, "values": np.ascontiguousarray(tree_.value[:, :, :1])})
    return tree


@pytest.mark.parametrize(
    "make",
    [
        lambda: treelib.DecisionTreeRegressor(max_depth=4, random_state=0),
        lambda: treelib.GradientBoostingRegressor(n_estimators=4, max_depth=3, random_state=0),
        lambda: treelib.GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=0),
    ],
)
def test_partial_dependence_recursion_on_treelib_models(make):
    """treelib's trees handed to scikit-learn's own recursion (Tree.compute_partial_dependence)."""
    for seed in range(4):
        task = "multi" if seed % 2 else "bin"
        X, y = data(seed, "reg" if "Regressor" in type(make()).__name__ else task, n=50, d=4)
        model = make().fit(X, y)
        stages = np.atleast_2d(np.asarray(getattr(model, "estimators_", [[model]]), dtype=object))
        scale = getattr(model, "learning_rate", 1.0)
        for features in ([1], [0, 2]):
            actual = partial_dependence(model, X, features, method="recursion", grid_resolution=8)
            grid = np.stack(np.meshgrid(*actual.grid_values, indexing="ij"), -1)
            grid = np.ascontiguousarray(grid.reshape(-1, len(features)), dtype=np.float32)
            expected = np.zeros((stages.shape[1], len(grid)))
            for stage in stages:
                for k, est in enumerate(stage):
                    sklearn_tree(est.tree_).compute_partial_dependence(
                        grid, np.asarray(features, dtype=np.intp), expected[k]
                    )
            assert_close(actual["average"].reshape(len(expected), -1), scale * expected)


# histogram gradient boosting (Chapter 9's models), treelib's and scikit-learn's


def hist_data(seed, task, n=80):
    """:func:`data` unrounded, with NaN in every column (the trees route it)."""
    X, y = data(seed, task, n=n, rounded=False)
    X[np.random.default_rng(seed).random(X.shape) < 0.1] = np.nan
    return X, y


@pytest.fixture
def one_thread():
    """One OpenMP thread: scikit-learn's histogram models crawl on a busy machine."""
    with threadpool_limits(1, user_api="openmp"):
        yield


def hist_kind(library, task):
    module = sk_ensemble if library == "sklearn" else treelib
    name = "Regressor" if task == "reg" else "Classifier"
    return getattr(module, "HistGradientBoosting" + name)


def raw_output(model, X):
    """The raw score: decision_function for a classifier, predict for a regressor."""
    return model.decision_function(X) if hasattr(model, "classes_") else model.predict(X)


def hist_dict(model):
    """shap's dictionary model of a fitted histogram gradient boosting model (numerical
    features): one tree per predictor, node counts as cover, as shap reads scikit-learn's."""
    K = model.n_trees_per_iteration_
    trees = []
    for iteration in model._predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            leaf = nodes["is_leaf"].astype(bool)
            left = np.where(leaf, -1, nodes["left"].astype(np.int64))
            right = np.where(leaf, -1, nodes["right"].astype(np.int64))
            values = np.zeros((len(nodes), K))
            values[:, k] = nodes["value"]
            trees.append(
                {
                    "children_left": left,
                    "children_right": right,
                    "children_default": np.where(nodes["missing_go_to_left"] == 1, left, right),
                    "features": np.where(leaf, -2, nodes["feature_idx"]),
                    "thresholds": nodes["num_threshold"],
                    "values": values,
                    "node_sample_weight": nodes["count"].astype(np.float64),
                }
            )
    base = np.asarray(model._baseline_prediction, dtype=np.float64).ravel()
    return {
        "trees": trees,
        "base_offset": base if K > 1 else float(base[0]),
        "input_dtype": np.float64,
        "internal_dtype": np.float64,
        "tree_output": "raw_value",
        "objective": "squared_error",
    }


@pytest.mark.parametrize("library", ["sklearn", "treelib"])
@pytest.mark.parametrize("task", ["reg", "bin", "multi"])
@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_equals_shap_and_adds_up(library, task):
    """Raw scores explained as shap explains them (scikit-learn's models directly,
    treelib's as a dictionary model), NaN routed by missing_go_to_left."""
    for seed in range(N_MODELS):
        X, y = hist_data(seed, task)
        make = hist_kind(library, task)
        model = make(max_iter=4 + seed % 4, max_leaf_nodes=8, min_samples_leaf=5).fit(X, y)
        reference = model if library == "sklearn" else hist_dict(model)
        ours, theirs = TreeExplainer(model), shap.TreeExplainer(reference)
        values, expected = ours.shap_values(X[:8]), theirs.shap_values(X[:8])
        assert_close(values.reshape(np.shape(expected)), expected)
        if library == "sklearn":  # (the dictionary model's base is a float)
            assert_close(ours.expected_value, theirs.expected_value)  # shapes too
        assert_close(np.ravel(ours.expected_value), np.ravel(theirs.expected_value))
        total = values.sum(1) + np.asarray(ours.expected_value)
        output = raw_output(model, X[:8])
        assert_close(total.reshape(np.shape(output)), output, 1e-9)
        background = X[-10:]
        ours = TreeExplainer(model, background, feature_perturbation="interventional")
        theirs = shap.TreeExplainer(reference, background, feature_perturbation="interventional")
        expected = theirs.shap_values(X[:6])
        assert_close(ours.shap_values(X[:6]).reshape(np.shape(expected)), expected)
        assert_close(np.ravel(ours.expected_value), np.ravel(theirs.expected_value))
        if seed < 3:  # (a fresh dictionary: shap's interventional one rewrote its covers)
            reference = model if library == "sklearn" else hist_dict(model)
            ours, theirs = TreeExplainer(model), shap.TreeExplainer(reference)
            inter = theirs.shap_interaction_values(X[:3])
            assert_close(ours.shap_interaction_values(X[:3]).reshape(np.shape(inter)), inter)


def categorical_data(seed, n=150):
    """Two categorical columns (codes that are not 0..k-1, NaN among them) and two numbers."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 0] = rng.choice([-3.0, 2.0, 5.0, 7.0, 11.0], size=n)
    X[:, 2] = rng.choice([0.0, 1.0, 4.0], size=n)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.1, 1] = np.nan
    y = np.nan_to_num(X[:, 1]) + 2 * np.isin(X[:, 0], [5, 11]) + (X[:, 2] == 1) * X[:, 3]
    return X, y


@pytest.mark.parametrize("library", ["sklearn", "treelib"])
@pytest.mark.parametrize("task", ["reg", "multi"])
@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_categorical_splits(library, task):
    """Categorical splits route by their set of left categories (unknown ones and NaN to
    the missing side): the values add up to the model's raw score, and equal the
    brute-force definition (interventional: the model's own predictions)."""
    for seed in range(6):
        X, y = categorical_data(seed)
        if task == "multi":
            y = np.digitize(y, np.quantile(y, [0.33, 0.66]))
        make = hist_kind(library, task)
        model = make(max_iter=4, max_leaf_nodes=8, min_samples_leaf=5, categorical_features=[0, 2])
        model.fit(X, y)
        assert sum(int(p.nodes["is_categorical"].sum()) for it in model._predictors for p in it)
        Z = X[:12].copy()
        Z[:4, 0] = [4.0, 100.0, -1.0, np.nan]  # unseen categories and a missing value
        Z[4:6, 2] = [2.0, 7.0]
        explainer = TreeExplainer(model)
        values = explainer.shap_values(Z)
        total = values.sum(1) + np.asarray(explainer.expected_value)
        output = raw_output(model, Z)
        assert_close(total.reshape(np.shape(output)), output, 1e-9)
        phi, base = shapley_values_brute_force(model, Z[seed])  # path-dependent
        assert_close(values[seed], phi.reshape(values[seed].shape), 1e-9)
        background = X[-8:]
        explainer = TreeExplainer(model, background, feature_perturbation="interventional")
        respond = model.decision_function if task == "multi" else model.predict
        phi, base = shapley_values_brute_force(respond, Z[seed], background)
        assert_close(explainer.shap_values(Z[seed : seed + 1])[0], phi.reshape(values[0].shape))
        assert_close(np.ravel(explainer.expected_value), np.ravel(base))


@pytest.mark.parametrize("task", ["reg", "bin", "multi"])
@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_partial_dependence_equals_sklearn(task):
    """scikit-learn's recursion on its model (target features without NaN: scikit-learn's
    recursion sends a NaN grid value right, where treelib follows missing_go_to_left)."""
    for seed in range(4):
        X, y = hist_data(seed, task, n=60)
        X[:, :2] = np.random.default_rng(seed).normal(size=(len(X), 2))
        model = hist_kind("sklearn", task)(max_iter=5, max_leaf_nodes=8, min_samples_leaf=5)
        model.fit(X, y)
        for features in ([0], [1], [0, 1]):
            for method in ("auto", "recursion"):
                expected = sk_partial_dependence(
                    model, X, features, method=method, grid_resolution=12
                )
                actual = partial_dependence(model, X, features, method=method, grid_resolution=12)
                assert_close(actual["average"], expected["average"])


def sklearn_recursion(model, grid, features):
    """scikit-learn's HGB tree walker on a model's predictors (float64 grid), summed."""
    from sklearn.ensemble._hist_gradient_boosting._predictor import (
        _compute_partial_dependence,
    )
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

    out = np.zeros((model.n_trees_per_iteration_, len(grid)))
    for iteration in model._predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes.astype(PREDICTOR_RECORD_DTYPE)
            grid = np.ascontiguousarray(grid, dtype=np.float64)
            _compute_partial_dependence(nodes, grid, np.asarray(features, np.intp), out[k])
    return out


@pytest.mark.parametrize("task", ["reg", "bin", "multi"])
@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_partial_dependence_on_treelib_models(task):
    """treelib's predictors through scikit-learn's own HGB recursion walker."""
    for seed in range(4):
        X, y = hist_data(seed, task, n=60)
        X[:, :2] = np.random.default_rng(seed).normal(size=(len(X), 2))
        model = hist_kind("treelib", task)(max_iter=5, max_leaf_nodes=8, min_samples_leaf=5)
        model.fit(X, y)
        for features in ([0], [1, 0]):
            actual = partial_dependence(model, X, features, method="recursion", grid_resolution=9)
            grid = np.stack(np.meshgrid(*actual.grid_values, indexing="ij"), -1)
            expected = sklearn_recursion(model, grid.reshape(-1, len(features)), features)
            assert_close(actual["average"].reshape(expected.shape), expected)
        assert partial_dependence(model, X, [0], grid_resolution=9)["average"].shape[-1] == 9


@pytest.mark.parametrize("library", ["sklearn", "treelib"])
@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_partial_dependence_categorical(library):
    """A categorical model: a numerical target through scikit-learn's walker (on the
    encoded columns, categorical first); a categorical target as the tree expectation
    of the grid point (its raw categories, routed by the left sets)."""
    for seed in range(3):
        X, y = categorical_data(seed)
        model = hist_kind(library, "reg")(max_iter=4, max_leaf_nodes=8, categorical_features=[0, 2])
        model.fit(X, y)
        actual = partial_dependence(model, X, [3], method="recursion", grid_resolution=9)
        grid = actual.grid_values[0][:, None]
        assert_close(actual["average"], sklearn_recursion(model, grid, [3]))  # column 3 stays 3
        actual = partial_dependence(model, X, [0, 3], method="recursion", grid_resolution=5)
        base = float(np.ravel(model._baseline_prediction)[0])
        for i, category in enumerate(actual.grid_values[0]):
            for j, value in enumerate(actual.grid_values[1]):
                x = np.array([category, 0.0, 0.0, value])
                expected = tree_expectation(model, x, [0, 3]) - base
                assert actual["average"][0, i, j] == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("library", ["sklearn", "treelib"])
@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_compares_float64(library):
    """Unlike scikit-learn's trees, histogram models compare float64 inputs: values just
    above a threshold (equal to it in float32) go right, and are explained so."""
    X, y = hist_data(1, "bin")
    model = hist_kind(library, "bin")(max_iter=3, max_leaf_nodes=8, min_samples_leaf=5).fit(X, y)
    nodes = model._predictors[0][0].nodes
    inner = np.flatnonzero(nodes["is_leaf"] == 0)
    threshold = nodes["num_threshold"][inner]
    above = np.nextafter(threshold, np.inf)
    assert np.any(above.astype(np.float32) <= threshold)  # float32 would send some left
    Z = np.repeat(np.nan_to_num(X[:1]), len(inner), axis=0)
    Z[np.arange(len(inner)), nodes["feature_idx"][inner]] = above
    explainer = TreeExplainer(model)
    total = explainer.shap_values(Z).sum(1) + explainer.expected_value
    assert_close(total, model.decision_function(Z), 1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda: sk_tree.DecisionTreeRegressor(),
        lambda: sk_ensemble.HistGradientBoostingRegressor(max_iter=3),
        lambda: treelib.HistGradientBoostingRegressor(max_iter=3),
    ],
)
@pytest.mark.usefixtures("one_thread")
def test_single_leaf_trees(make):
    """Constant y: every tree is one leaf; no feature matters, every value is 0."""
    X = data(0, "reg")[0]
    model = make().fit(X, np.full(len(X), 2.5))
    Z = X[:4].copy()
    Z[0, 0] = np.nan
    for explainer in (TreeExplainer(model), TreeExplainer(model, X[:5])):
        assert_close(explainer.shap_values(Z), np.zeros(Z.shape), 0)
        assert_close(np.ravel(explainer.expected_value), [2.5], 1e-12)
    d = X.shape[1]
    assert_close(TreeExplainer(model).shap_interaction_values(Z), np.zeros((4, d, d)), 0)


@pytest.mark.usefixtures("one_thread")
def test_hist_gradient_boosting_errors():
    X, y = hist_data(0, "reg")
    model = sk_ensemble.HistGradientBoostingRegressor(max_iter=3).fit(X, y, np.ones(len(X)))
    with pytest.raises(NotImplementedError, match="sample weights"):
        partial_dependence(model, X, [0], method="recursion")
    ours = treelib.HistGradientBoostingRegressor(max_iter=3).fit(X, y, np.ones(len(X)))
    with pytest.raises(NotImplementedError, match="sample weights"):  # as scikit-learn's
        partial_dependence(ours, X, [0], method="recursion")
    with pytest.raises(NotFittedError):
        TreeExplainer(treelib.HistGradientBoostingRegressor())
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": pd.Categorical(["x", "y", "z"] * 20), "b": X[:60, 0]})
    model = sk_ensemble.HistGradientBoostingRegressor(max_iter=2).fit(frame, y[:60])
    with pytest.raises(TypeError, match="categories are not numbers"):
        TreeExplainer(model)


def test_errors():
    X, y = data(0, "reg")
    with pytest.raises(NotFittedError):
        TreeExplainer(treelib.DecisionTreeRegressor())
    with pytest.raises(TypeError, match="not supported"):
        TreeExplainer(LinearRegression().fit(X, y))
    model = sk_ensemble.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    explainer = TreeExplainer(model)
    with pytest.raises(ValueError, match="features, but TreeExplainer is expecting"):
        explainer.shap_values(X[:, :-1])
    bad = X[:3].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):  # scikit-learn's gradient boosting refuses NaN
        explainer.shap_values(bad)
    with pytest.raises(ValueError, match="feature_perturbation"):
        TreeExplainer(model, feature_perturbation="exact")
    with pytest.raises(ValueError, match="background"):
        TreeExplainer(model, feature_perturbation="interventional")
    with pytest.raises(ValueError, match="tree_path_dependent"):
        TreeExplainer(model, X[:5]).shap_interaction_values(X[:2])
    with pytest.raises(ValueError, match="recursion"):
        partial_dependence(
            sk_tree.DecisionTreeClassifier().fit(X, y > 0), X, [0], method="recursion"
        )
    with pytest.raises(ValueError, match="features must be"):
        partial_dependence(model, X, [X.shape[1]])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_equals_cpu():
    X, y = data(0, "multi", n=200)
    model = sk_ensemble.RandomForestClassifier(10, max_depth=6, random_state=0).fit(X, y)
    cpu = TreeExplainer(model).shap_values(X)
    gpu = TreeExplainer(model, device="cuda").shap_values(X)
    assert_close(gpu, cpu, 1e-10)
