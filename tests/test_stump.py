"""DecisionStump against scikit-learn's depth-1 tree, and its input checks (Chapter 1)."""

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier as SkTree
from sklearn_reference import tie_free_sklearn_fit

from treelib import DecisionStump


def random_problem(seed):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(30, 300)), int(rng.integers(1, 8))
    X = rng.normal(size=(n, p)) * rng.uniform(0.1, 100, size=p)
    y = rng.integers(0, int(rng.integers(2, 5)), size=n)
    weights = {
        "none": None,
        "int": rng.integers(0, 5, size=n).astype(float),
        "float": rng.uniform(0.01, 3.0, size=n),
    }[("none", "int", "float")[seed % 3]]
    return X, y, weights


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_stump_matches_sklearn_depth_one(criterion):
    checked = 0
    for seed in range(60):
        X, y, w = random_problem(seed)
        params = dict(max_depth=1, criterion=criterion)
        sk = tie_free_sklearn_fit("classifier", X, y, w, params)
        if sk is None:  # a tie between features: scikit-learn's choice is random
            continue
        ours = DecisionStump(criterion=criterion).fit(X, y, sample_weight=w)
        if sk.tree_.node_count == 1:
            assert ours.feature_ is None
        else:
            assert ours.feature_ == sk.tree_.feature[0]
            assert ours.threshold_ == pytest.approx(sk.tree_.threshold[0], abs=1e-6)
        np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-12)
        checked += 1
    assert checked >= 20, f"only {checked} tie-free datasets"


def test_stump_matches_sklearn_min_samples_leaf():
    X, y = make_classification(n_samples=200, n_features=5, random_state=3)
    ours = DecisionStump(min_samples_leaf=40).fit(X, y)
    sk = SkTree(max_depth=1, min_samples_leaf=40, random_state=0).fit(X, y)
    assert ours.threshold_ == pytest.approx(sk.tree_.threshold[0], abs=1e-6)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def test_integer_weights_equal_repeated_rows():
    X, y = make_classification(n_samples=80, n_features=4, random_state=1)
    w = np.random.default_rng(1).integers(0, 4, size=80)
    weighted = DecisionStump().fit(X, y, sample_weight=w)
    repeated = DecisionStump().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert weighted.feature_ == repeated.feature_
    assert weighted.threshold_ == repeated.threshold_
    np.testing.assert_allclose(weighted.value_, repeated.value_)


def test_single_class_predicts_that_class():
    X = np.arange(10.0).reshape(-1, 1)
    stump = DecisionStump().fit(X, ["b"] * 10)
    assert stump.feature_ is None
    assert stump.predict([[100.0]]).tolist() == ["b"]
    sk = SkTree(max_depth=1).fit(X, ["b"] * 10)
    np.testing.assert_array_equal(stump.predict_proba(X), sk.predict_proba(X))


def test_string_labels_and_input_types():
    X, y = make_classification(
        n_samples=60, n_features=3, n_informative=2, n_redundant=0, random_state=0
    )
    labels = np.array(["no", "yes"])[y]
    ref = DecisionStump().fit(X, labels)
    assert list(ref.classes_) == ["no", "yes"]
    for X_in in (pd.DataFrame(X, columns=["a", "b", "c"]), torch.tensor(X), X.tolist()):
        other = DecisionStump().fit(X_in, labels)
        assert (other.feature_, other.threshold_) == (ref.feature_, ref.threshold_)
        np.testing.assert_array_equal(other.predict(X_in), ref.predict(X))
    assert ref.score(X, labels) > 0.5


def test_X_is_cast_to_float32_like_sklearn():
    # two values equal in float32 are not a candidate split
    x = np.array([1.0, 1.0 + 1e-9, 2.0, 2.0 + 1e-9]).reshape(-1, 1)
    stump = DecisionStump().fit(x, [0, 1, 1, 1])
    sk = SkTree(max_depth=1).fit(x, [0, 1, 1, 1])
    assert stump.threshold_ == pytest.approx(sk.tree_.threshold[0])


BAD_INPUTS = [
    ("nan", np.array([[np.nan], [1.0]]), [0, 1], None, "NaN"),
    ("inf", np.array([[np.inf], [1.0]]), [0, 1], None, "infinity"),
    ("1-D X", np.array([1.0, 2.0]), [0, 1], None, "2D array"),
    ("length mismatch", np.ones((3, 1)), [0, 1], None, "inconsistent numbers of samples"),
    ("negative weight", np.ones((2, 1)), [0, 1], [1.0, -1.0], "non-negative"),
    ("zero weights", np.ones((2, 1)), [0, 1], [0.0, 0.0], "non-zero"),
    ("empty", np.ones((0, 2)), [], None, "0 sample"),
    ("weight shape", np.ones((2, 1)), [0, 1], [1.0, 1.0, 1.0], "sample_weight"),
]


@pytest.mark.parametrize("name,X,y,w,message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_fit_input_raises_clearly(name, X, y, w, message):
    with pytest.raises(ValueError, match=message):
        DecisionStump().fit(X, y, sample_weight=w)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"criterion": "gain"}, "criterion"),
        ({"min_samples_leaf": 0}, "min_samples_leaf"),
        ({"min_samples_leaf": 1.5}, "min_samples_leaf"),
        ({"min_samples_leaf": "1"}, "min_samples_leaf"),
    ],
)
def test_bad_hyper_parameters_raise(params, message):
    with pytest.raises(ValueError, match=message):
        DecisionStump(**params).fit([[0.0], [1.0]], [0, 1])


def test_predict_checks():
    with pytest.raises(NotFittedError):
        DecisionStump().predict([[1.0]])
    stump = DecisionStump().fit([[0.0, 1.0], [1.0, 0.0]], [0, 1])
    with pytest.raises(ValueError, match="features"):
        stump.predict([[1.0]])
    with pytest.raises(ValueError, match="NaN"):
        stump.predict([[np.nan, 1.0]])
