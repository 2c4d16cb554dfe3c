"""One-vs-rest splits of categorical features (Chapter 6)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier as SkTree

from treelib import (
    AdaBoostClassifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
)


def test_one_vs_rest_separates_a_middle_category():
    # codes 1, 2, 3 with class 1 only at code 2: no single x <= t split separates it
    X = np.array([[1.0], [1.0], [2.0], [2.0], [3.0], [3.0]])
    y = [0, 0, 1, 1, 0, 0]
    ordinal = DecisionTreeClassifier(max_depth=1).fit(X, y)
    assert ordinal.score(X, y) < 1.0
    tree = DecisionTreeClassifier(max_depth=1, categorical_features=[0]).fit(X, y)
    assert tree.tree_.categorical.tolist() == [True, False, False]
    assert tree.tree_.threshold[0].item() == 2.0
    assert tree.score(X, y) == 1.0
    assert tree.predict([[2.0], [1.0], [7.0]]).tolist() == [1, 0, 0]  # unseen code: "not 2"


def test_improvement_equals_sklearn_on_one_hot_columns():
    # "x == c" vs "x != c" is the split a tree makes on the one-hot column of c
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 5, size=(300, 1)).astype(float)
    y = (rng.random(300) < np.array([0.1, 0.8, 0.3, 0.5, 0.9])[codes[:, 0].astype(int)]).astype(int)
    ours = DecisionTreeClassifier(max_depth=1, categorical_features=[0]).fit(codes, y)
    one_hot = OneHotEncoder(sparse_output=False).fit_transform(codes)
    sk = SkTree(max_depth=1, random_state=0).fit(one_hot, y)
    assert ours.tree_.threshold[0].item() == sk.tree_.feature[0]  # category c = column c
    np.testing.assert_allclose(np.asarray(ours.tree_.impurity), sk.tree_.impurity[[0, 2, 1]])
    np.testing.assert_array_equal(ours.predict(codes), sk.predict(one_hot))


def test_ties_with_ordinal_feature_go_to_the_earlier_feature():
    X = np.array([[0.0, 5.0], [0.0, 5.0], [1.0, 6.0], [1.0, 6.0]])
    y = [0, 0, 1, 1]
    tree = DecisionTreeClassifier(max_depth=1, categorical_features=[1]).fit(X, y)
    assert tree.tree_.feature[0].item() in (0, 1)
    assert tree.score(X, y) == 1.0


def test_regressor_and_forest_accept_categorical_features_by_name():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"colour": rng.integers(0, 4, 200), "size": rng.normal(size=200)})
    y = np.where(frame["colour"] == 2, 10.0, 0.0) + frame["size"]
    reg = DecisionTreeRegressor(max_depth=1, categorical_features=["colour"]).fit(frame, y)
    assert reg.tree_.categorical[0] and reg.tree_.threshold[0].item() == 2.0
    labels = (frame["colour"] == 2).astype(int)
    # every feature at every node (no random draw of one of the two) and a seed: each
    # tree's root is the categorical split {2} vs the rest, whatever rows it draws
    # (with the default max_features a tree may start on "size" and an unseeded forest
    # then missed a training row in about one run in ten)
    forest = RandomForestClassifier(
        n_estimators=5, categorical_features=[True, False], max_features=None, random_state=0
    )
    forest.fit(frame, labels)
    assert all(tree.tree_.categorical[0] and tree.tree_.feature[0] == 0
               for tree in forest.estimators_)  # fmt: skip
    assert forest.score(frame, labels) == 1.0


@pytest.mark.parametrize("value", [[5], ["nope"], [0.5]])
def test_bad_categorical_features_raise(value):
    with pytest.raises(ValueError, match="categorical_features"):
        DecisionTreeClassifier(categorical_features=value).fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])


def category_frame():
    rng = np.random.default_rng(2)
    colour = pd.Categorical(rng.choice(["red", "green", "blue"], 120))
    frame = pd.DataFrame({"colour": colour, "size": rng.normal(size=120)})
    return frame, (frame["colour"] == "green").to_numpy().astype(int)


@pytest.mark.parametrize(
    "cls", [DecisionTreeClassifier, RandomForestClassifier, AdaBoostClassifier]
)
def test_category_dtype_column_raises_and_says_what_to_do(cls):
    frame, y = category_frame()
    with pytest.raises(
        ValueError, match=r"'category' columns \['colour'\].*cat\.codes.*categorical_features"
    ):
        cls().fit(frame, y)


def test_the_advice_of_the_category_error_works():
    frame, y = category_frame()
    coded = frame.assign(colour=frame["colour"].cat.codes)
    tree = DecisionTreeClassifier(max_depth=1, categorical_features=["colour"]).fit(coded, y)
    green = list(frame["colour"].cat.categories).index("green")
    assert tree.tree_.categorical[0] and tree.tree_.threshold[0] == green
    assert tree.score(coded, y) == 1.0
    with pytest.raises(ValueError, match="category"):  # the raw frame at predict time, too
        tree.predict(frame)
