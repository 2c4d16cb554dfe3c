"""One node table: every builder's nodes become a Tree through NodeTable.to_tree (Chapter 7)."""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification

from treelib import DecisionTreeClassifier, RandomForestClassifier
from treelib.tree_structure import TREE_LEAF, TREE_UNDEFINED, NodeTable, Tree


@pytest.mark.parametrize(
    "params",
    [
        dict(tree_method="recursive"),
        dict(tree_method="recursive", max_leaf_nodes=5),
        dict(tree_method="levelwise"),
        dict(tree_method="hist"),
    ],
)
def test_every_builder_makes_its_tree_through_the_node_table(monkeypatch, params):
    X, y = make_classification(n_samples=80, n_features=4, random_state=0)
    made = []
    to_tree = NodeTable.to_tree

    def spy(table, device=None):
        tree = to_tree(table, device)
        made.append(tree)
        return tree

    monkeypatch.setattr(NodeTable, "to_tree", spy)
    model = DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    assert made and made[-1] is model.tree_
    forest = RandomForestClassifier(n_estimators=3, random_state=0, **params).fit(X, y)
    assert all(any(tree is e.tree_ for tree in made) for e in forest.estimators_)


def test_rows_and_columns_make_the_same_tree():
    """A stump of three nodes, written row by row (the leaves' defaults left out) and
    column by column (no categorical or missing_go_to_left column)."""
    rows = NodeTable()
    rows.add(
        children_left=1, children_right=2, feature=0, threshold=0.5,
        value=torch.tensor([0.5, 0.5]), impurity=0.5, n_node_samples=4,
        weighted_n_node_samples=4.0,
    )  # fmt: skip
    for value in ([1.0, 0.0], [0.0, 1.0]):
        rows.add(
            value=torch.tensor(value), impurity=0.0, n_node_samples=2, weighted_n_node_samples=2.0
        )
    columns = NodeTable(
        children_left=torch.tensor([1, TREE_LEAF, TREE_LEAF]),
        children_right=torch.tensor([2, TREE_LEAF, TREE_LEAF]),
        feature=torch.tensor([0, TREE_UNDEFINED, TREE_UNDEFINED]),
        threshold=torch.tensor([0.5, TREE_UNDEFINED, TREE_UNDEFINED], dtype=torch.float64),
        value=torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]], dtype=torch.float64),
        impurity=torch.tensor([0.5, 0.0, 0.0], dtype=torch.float64),
        n_node_samples=torch.tensor([4, 2, 2]),
        weighted_n_node_samples=torch.tensor([4.0, 2.0, 2.0], dtype=torch.float64),
    )
    a, b = rows.to_tree(), columns.to_tree()
    for name in Tree.FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.value.shape == (3, 1, 2)  # one output
    np.testing.assert_array_equal(a.feature, [0, -2, -2])  # scikit-learn's TREE_UNDEFINED
    np.testing.assert_array_equal(a.missing_go_to_left, [0, 0, 0])  # equal counts: right


def test_a_column_that_is_not_a_tree_field_is_refused():
    with pytest.raises(ValueError, match="Not a field of Tree"):
        NodeTable(left=[1])
