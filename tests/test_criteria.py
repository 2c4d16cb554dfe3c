"""Impurity functions against numbers worked by hand (Chapters 1, 3, 4)."""

import math

import numpy as np
import pytest
import torch

from treelib.criteria import entropy, gini, leaf_value, node_weight, squared_error, target_stats


def t(values):
    return torch.tensor(values, dtype=torch.float64)


def test_gini_by_hand():
    assert gini(t([3.0, 1.0])).item() == pytest.approx(1 - (0.75**2 + 0.25**2))  # 0.375
    assert gini(t([5.0, 3.0, 2.0])).item() == pytest.approx(0.62)
    assert gini(t([4.0, 0.0])).item() == 0.0


def test_binary_gini_is_2p_1_minus_p():
    p = torch.linspace(0.01, 0.99, 99, dtype=torch.float64)
    counts = torch.stack([p, 1 - p])  # classes on the first axis, 99 nodes
    assert torch.allclose(gini(counts), 2 * p * (1 - p))


def test_entropy_in_bits():
    assert entropy(t([1.0, 1.0])).item() == pytest.approx(1.0)
    assert entropy(t([1.0, 1.0, 1.0, 1.0])).item() == pytest.approx(2.0)
    assert entropy(t([7.0, 0.0])).item() == 0.0  # 0 log 0 = 0
    # Quinlan's classic: 9 "yes", 5 "no"
    assert entropy(t([9.0, 5.0])).item() == pytest.approx(0.940286, abs=1e-6)


def test_entropy_ignores_rounding_negatives():
    # counts obtained as total - left can be -1e-17 instead of 0
    assert entropy(t([3.0, -1e-17])).item() == pytest.approx(0.0, abs=1e-12)


def test_impurity_scales_invariant():
    counts = t([2.0, 5.0, 1.0])
    assert gini(counts * 3.5).item() == pytest.approx(gini(counts).item())
    assert entropy(counts * 0.25).item() == pytest.approx(entropy(counts).item())


def test_squared_error_is_weighted_variance():
    y = np.array([1.0, 2.0, 3.0, 10.0])
    w = np.array([1.0, 2.0, 1.0, 0.5])
    stats = target_stats(torch.tensor(y), torch.tensor(w), "squared_error")
    moments = stats.sum(1)
    mean = np.average(y, weights=w)
    expected = np.average((y - mean) ** 2, weights=w)
    assert squared_error(moments).item() == pytest.approx(expected)
    assert leaf_value(moments, "squared_error").item() == pytest.approx(mean)
    assert node_weight(moments, "squared_error").item() == pytest.approx(w.sum())
    # by hand: y = 1, 2, 3 unweighted -> variance 2/3
    assert squared_error(t([3.0, 6.0, 14.0])).item() == pytest.approx(2 / 3)


def test_target_stats_classification():
    y = torch.tensor([0, 2, 2, 1])
    w = t([1.0, 0.5, 2.0, 3.0])
    stats = target_stats(y, w, "gini", 3)
    assert stats.shape == (3, 4)
    assert stats.sum(1).tolist() == [1.0, 3.0, 2.5]
    assert node_weight(stats.sum(1), "gini").item() == pytest.approx(6.5)
    assert leaf_value(stats.sum(1), "gini").tolist() == pytest.approx([1 / 6.5, 3 / 6.5, 2.5 / 6.5])


def test_batched_impurity_matches_loop():
    counts = torch.rand(3, 4, 5, dtype=torch.float64)
    batched = gini(counts)
    for i in range(4):
        for j in range(5):
            assert batched[i, j].item() == pytest.approx(gini(counts[:, i, j]).item())
    assert math.isclose(entropy(counts)[1, 2].item(), entropy(counts[:, 1, 2]).item())


def test_criterion_objects_decide_what_the_names_did():
    """Each criterion is an object the builders ask (no builder tests a name), checked by hand."""
    import treelib.criteria as c

    counts = torch.tensor([[3.0, 1.0], [1.0, 3.0]], dtype=torch.float64)  # two nodes, 2 classes
    gini_node = c.criterion_of("gini")
    assert gini_node is c.CRITERION_OBJECTS["gini"] and c.criterion_of(gini_node) is gini_node
    torch.testing.assert_close(gini_node.impurity(counts), torch.tensor([0.375, 0.375]).double())
    torch.testing.assert_close(gini_node.weight(counts), torch.tensor([4.0, 4.0]).double())
    # a split into (3, 1) and (1, 3): -(4 * 0.375 + 4 * 0.375) = -3
    left, right = counts[:, :1], counts[:, 1:]
    score = gini_node.split_scores(left, right, gini_node.weight(left), gini_node.weight(right))
    assert float(score) == -3.0
    moments = torch.tensor([[2.0], [6.0], [20.0]], dtype=torch.float64)  # y = 2, 4
    sq = c.criterion_of("squared_error")
    assert sq.is_regression and not gini_node.is_regression
    assert float(sq.impurity(moments)) == 1.0 and float(sq.value(moments)) == 3.0
    assert c.criterion_of("log_loss") is c.criterion_of("entropy")
