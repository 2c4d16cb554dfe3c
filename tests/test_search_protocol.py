"""The split-search protocol (treelib.search, Chapter 7): three searches, one answer.

The exact level search, the histogram search (bins holding every value) and
the per-node search of the recursive builder are handed the same levels of
real level-wise growth; each must return the same splits.
"""

import numpy as np
import pytest
import torch

from treelib.criteria import target_stats
from treelib.grow import grow_best_first_on, grow_tree_best_first
from treelib.hist import HistogramSearch
from treelib.levelwise import ExactSearch, grow_tree_levelwise
from treelib.rules import StoppingRules
from treelib.search import NodeSearch, SplitSearch

N_SETS = 6
FIELDS = (
    "children_left", "children_right", "feature", "threshold", "impurity", "value",
    "n_node_samples", "weighted_n_node_samples", "missing_go_to_left",
)  # fmt: skip


def dataset(kind, seed, nan):
    """Continuous features (no ties between values), a few hundred rows."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(80, 240)), int(rng.integers(3, 7))
    X = rng.normal(size=(n, p)).astype(np.float32)
    signal = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.3, size=n)
    if nan:
        X[rng.random((n, p)) < 0.1] = np.nan
    if kind == "classifier":
        y = np.digitize(signal, np.quantile(signal, [0.35, 0.7]))
        criterion, stats_y, n_classes = "gini", torch.as_tensor(y), 3
    else:
        criterion, stats_y, n_classes = "squared_error", torch.as_tensor(signal), None
    w = torch.ones(n, dtype=torch.float64)
    stats = target_stats(stats_y, w, criterion, n_classes)
    return torch.as_tensor(X), stats, criterion


def by_group(found):
    """A search's answer, its groups in increasing order (searches may list them in any)."""
    order = torch.argsort(found[0])
    return tuple(values[..., order] for values in found)


class AllThree:
    """A search that asks the three searches and checks that they agree."""

    takes_grouped = True  # (the histogram and per-node searches read grouped samples)

    def __init__(self, X, stats, criterion):
        self.searches = [
            ExactSearch(X, stats),
            HistogramSearch(X, stats, max_bins=1024, criterion=criterion),
            NodeSearch(X, stats),
        ]
        self.levels = self.splits = 0

    def regroup_level(self, samples, node, group_of_node, sizes):
        for search in self.searches:
            search.regroup_level(samples, node, group_of_node, sizes)

    def best_splits(self, total, keys, rules, criterion, trees=None, bounds=None):
        found = [
            by_group(s.best_splits(total, keys, rules, criterion, bounds=bounds))
            for s in self.searches
        ]
        exact = found[0]
        for other in found[1:]:
            assert len(other) == len(exact)  # (a fifth array, missing_left, with NaN)
            for name, a, b in zip(("group", "feature", "threshold"), exact, other):
                np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=name)
            np.testing.assert_allclose(other[3].numpy(), exact[3].numpy(), rtol=1e-12, atol=1e-9)
            if len(exact) == 5:
                np.testing.assert_array_equal(other[4].numpy(), exact[4].numpy(), "missing_left")
        self.levels += 1
        self.splits += len(exact[0])
        return exact

    def split_values(self, samples, features):
        return self.searches[0].split_values(samples, features)


def test_the_searches_obey_the_protocol():
    X, stats, criterion = dataset("regressor", 0, nan=False)
    for search in AllThree(X, stats, criterion).searches:
        assert isinstance(search, SplitSearch)
    assert not isinstance(object(), SplitSearch)


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
@pytest.mark.parametrize("max_features", [None, 2])
def test_three_searches_find_the_same_splits(kind, nan, max_features):
    for seed in range(N_SETS):
        X, stats, criterion = dataset(kind, seed, nan)
        p = X.shape[1]
        rules = StoppingRules(
            max_depth=5, min_samples_leaf=1 + seed % 3, max_features=max_features or p
        )
        search = AllThree(X, stats, criterion)
        grow_tree_levelwise(X, stats, criterion, rules, seed, search)
        assert search.levels >= 4 and search.splits >= 8


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_levelwise_grows_the_same_tree_with_the_node_search(kind, nan):
    for seed in range(N_SETS):
        X, stats, criterion = dataset(kind, seed, nan)
        rules = StoppingRules(min_samples_leaf=2, max_features=X.shape[1] - seed % 2)
        exact = grow_tree_levelwise(X, stats, criterion, rules, seed)
        per_node = grow_tree_levelwise(X, stats, criterion, rules, seed, NodeSearch(X, stats))
        assert exact.node_count > 15
        for name in FIELDS:
            a, b = np.asarray(getattr(per_node, name)), np.asarray(getattr(exact, name))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_best_first_on_the_node_search_is_the_exact_best_first_tree(kind, nan):
    for seed in range(N_SETS):
        X, stats, criterion = dataset(kind, seed, nan)
        rules = StoppingRules(min_samples_leaf=3, max_features=X.shape[1] - seed % 2)
        leaves = 4 + 5 * seed
        exact = grow_tree_best_first(X, stats, criterion, rules, seed, leaves)
        on_search = grow_best_first_on(NodeSearch(X, stats), stats, criterion, rules, seed, leaves)
        assert 7 <= exact.node_count <= 2 * leaves - 1
        for name in FIELDS:
            a, b = np.asarray(getattr(on_search, name)), np.asarray(getattr(exact, name))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("nan", [False, True])
def test_three_searches_agree_under_monotonic_constraints(nan):
    """Each node's bounds (Chapter 6) reach every search through the protocol."""
    for seed in range(N_SETS):
        X, stats, criterion = dataset("regressor", seed, nan)
        p = X.shape[1]
        monotonic = torch.zeros(p, dtype=torch.float64)
        monotonic[0], monotonic[1] = 1, -1  # (y rises with x0; x1 enters as a square)
        rules = StoppingRules(max_depth=5, max_features=p - seed % 2, monotonic=monotonic)
        search = AllThree(X, stats, criterion)
        tree = grow_tree_levelwise(X, stats, criterion, rules, seed, search)
        assert search.levels >= 4 and search.splits >= 8
        per_node = grow_tree_levelwise(X, stats, criterion, rules, seed, NodeSearch(X, stats))
        for name in FIELDS:
            a, b = np.asarray(getattr(per_node, name)), np.asarray(getattr(tree, name))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=name)
