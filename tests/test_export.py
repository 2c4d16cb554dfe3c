"""export_text writes what scikit-learn writes; plot_tree draws one box per node."""

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn import tree as sk_tree
from sklearn.datasets import load_breast_cancer, load_iris, make_regression
from sklearn.exceptions import NotFittedError

from treelib import DecisionTreeClassifier, DecisionTreeRegressor, export_text, plot_tree

IRIS = load_iris()
CANCER = load_breast_cancer()


def fit_pair(ours, theirs, X, y):
    """Fit both trees and check they are the same tree before comparing their exports.

    Exact equality needs tie-free data: at iris's root petal length and petal width
    separate setosa equally well, so the tie-breaking seeds are chosen to agree.
    """
    ours.fit(X, y)
    theirs.fit(X, y)
    assert ours.tree_.node_count == theirs.tree_.node_count
    np.testing.assert_array_equal(ours.tree_.feature, theirs.tree_.feature)
    np.testing.assert_array_equal(ours.tree_.threshold, theirs.tree_.threshold)
    np.testing.assert_allclose(ours.tree_.value, theirs.tree_.value, rtol=1e-12)
    return ours, theirs


def iris_pair(max_depth):
    return fit_pair(
        DecisionTreeClassifier(max_depth=max_depth, random_state=1),
        sk_tree.DecisionTreeClassifier(max_depth=max_depth, random_state=0),
        IRIS.data,
        IRIS.target,
    )


def cancer_pair():
    return fit_pair(
        DecisionTreeClassifier(max_depth=2, random_state=0),
        sk_tree.DecisionTreeClassifier(max_depth=2, random_state=0),
        CANCER.data,
        CANCER.target,
    )


def regression_pair():
    X, y = make_regression(n_samples=200, n_features=5, noise=10.0, random_state=0)
    return fit_pair(
        DecisionTreeRegressor(max_depth=3, min_samples_leaf=5),
        sk_tree.DecisionTreeRegressor(max_depth=3, min_samples_leaf=5, random_state=0),
        X,
        y,
    )


CLASSIFIER_OPTIONS = [
    {},
    {"feature_names": IRIS.feature_names},
    {"class_names": list(IRIS.target_names)},
    {"feature_names": IRIS.feature_names, "class_names": IRIS.target_names},
    {"show_weights": True},
    {"show_weights": True, "decimals": 0, "spacing": 5},
    {"max_depth": 0},
    {"max_depth": 1, "feature_names": IRIS.feature_names, "show_weights": True},
]


@pytest.mark.parametrize("max_depth", [2, 3])
@pytest.mark.parametrize("options", CLASSIFIER_OPTIONS)
def test_export_text_matches_sklearn_on_iris(max_depth, options):
    ours, theirs = iris_pair(max_depth)
    assert export_text(ours, **options) == sk_tree.export_text(theirs, **options)


@pytest.mark.parametrize(
    "options",
    [{}, {"feature_names": list(CANCER.feature_names), "show_weights": True}, {"max_depth": 0}],
)
def test_export_text_matches_sklearn_on_breast_cancer(options):
    ours, theirs = cancer_pair()
    options = {"class_names": ["malignant", "benign"], **options}
    assert export_text(ours, **options) == sk_tree.export_text(theirs, **options)


@pytest.mark.parametrize(
    "options",
    [{}, {"feature_names": ["a", "b", "c", "d", "e"]}, {"decimals": 4}, {"max_depth": 1}],
)
def test_export_text_matches_sklearn_on_regression(options):
    ours, theirs = regression_pair()
    assert export_text(ours, **options) == sk_tree.export_text(theirs, **options)


def test_export_text_truncates_like_sklearn():
    ours, _ = iris_pair(3)
    text = export_text(ours, max_depth=0)
    assert "truncated branch of depth 3" in text
    assert text.splitlines()[0] == "|--- feature_3 <= 0.80"


def test_plot_tree_draws_one_box_per_node_with_the_tree_values():
    ours, _ = iris_pair(3)
    t = ours.tree_
    fig, ax = plt.subplots()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boxes = plot_tree(ours, feature_names=IRIS.feature_names, ax=ax)
    assert len(boxes) == t.node_count
    root = boxes[0].get_text().splitlines()
    name = IRIS.feature_names[int(t.feature[0])]
    assert root[0] == f"{name} <= {round(float(t.threshold[0]), 3)}"
    assert root[1] == f"gini = {round(float(t.impurity[0]), 3)}"
    assert root[2] == f"samples = {int(t.n_node_samples[0])}"
    assert root[3] == "value = [50, 50, 50]"
    leaf = int(np.flatnonzero(t.children_left == -1)[0])
    leaf_lines = boxes[leaf].get_text().splitlines()
    assert not any("<=" in line for line in leaf_lines)
    assert leaf_lines[-1] == f"class = {int(np.argmax(t.value[leaf, 0]))}"
    labels = [text.get_text().strip() for text in ax.texts if text not in boxes]
    assert sorted(labels) == ["False", "True"]
    plt.close(fig)


def test_plot_tree_options_and_regression(capsys):
    ours, _ = iris_pair(3)
    fig, ax = plt.subplots()
    boxes = plot_tree(ours, class_names=IRIS.target_names, max_depth=1, impurity=False, ax=ax)
    texts = [box.get_text() for box in boxes]
    assert texts.count("(...)") == 2 and len(texts) == 5
    assert texts[1].endswith("class = setosa") and "gini" not in texts[0]
    reg, _ = regression_pair()
    boxes = plot_tree(reg, fontsize=8, filled=False, ax=ax)
    assert len(boxes) == reg.tree_.node_count
    assert boxes[0].get_fontsize() == 8
    assert boxes[0].get_text().splitlines()[1].startswith("squared_error = ")
    assert (
        boxes[0].get_text().splitlines()[-1]
        == f"value = {round(float(reg.tree_.value[0, 0, 0]), 3)}"
    )
    plt.close(fig)
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("export", [export_text, plot_tree])
def test_unfitted_tree_raises(export):
    with pytest.raises(NotFittedError):
        export(DecisionTreeClassifier())


@pytest.mark.parametrize("export", [export_text, plot_tree])
def test_wrong_names_raise(export):
    ours, _ = iris_pair(2)
    with pytest.raises(ValueError, match="feature_names must contain 4 elements, got 2"):
        export(ours, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="class_names must contain 3 elements, got 1"):
        export(ours, class_names=["a"])
    plt.close("all")


def test_other_bad_arguments_raise():
    ours, theirs = iris_pair(2)
    with pytest.raises(TypeError, match="treelib DecisionTreeClassifier"):
        export_text(theirs)
    with pytest.raises(ValueError, match="max_depth must be an int >= 0"):
        export_text(ours, max_depth=-1)
    with pytest.raises(ValueError, match="precision must be an int >= 0"):
        plot_tree(ours, precision=1.5)
    plt.close("all")


def test_categorical_splits_read_one_vs_rest():
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 4, 200), rng.normal(size=200)]
    y = (X[:, 0] == 2) | (X[:, 1] > 1)
    model = DecisionTreeClassifier(max_depth=2, categorical_features=[0], random_state=0)
    model.fit(X, y)
    assert bool(model.tree_.categorical[0])
    lines = export_text(model, feature_names=["code", "size"]).splitlines()
    assert lines[0] == "|--- code == 2.00" and "|--- code != 2.00" in lines
    fig, ax = plt.subplots()
    assert plot_tree(model, ax=ax)[0].get_text().startswith("x[0] == 2.0\n")
    plt.close(fig)
