"""Chapter 7's builders grow exactly Chapter 2's trees."""

import numpy as np
import pytest
import torch
from sklearn.datasets import make_classification, make_regression
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier
from test_builder_ties import exact_bins

import treelib.criteria
import treelib.hist
import treelib.levelwise
from treelib import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    RandomForestClassifier,
)

FIELDS = ("children_left", "children_right", "feature", "n_node_samples", "categorical")
FLOATS = ("threshold", "value", "impurity", "weighted_n_node_samples")


def assert_identical(a, b):
    assert a.tree_.node_count == b.tree_.node_count
    for field in FIELDS:
        np.testing.assert_array_equal(getattr(a.tree_, field), getattr(b.tree_, field), field)
    for field in FLOATS:
        np.testing.assert_allclose(getattr(a.tree_, field), getattr(b.tree_, field), atol=1e-12)


def random_setting(seed):
    """Data with many repeated values (ties everywhere) and varied hyper-parameters."""
    rng = np.random.default_rng(seed)
    criterion = ("gini", "entropy", "squared_error")[seed % 3]
    n, p = int(rng.integers(50, 600)), int(rng.integers(1, 8))
    if criterion == "squared_error":
        X, y = make_regression(n_samples=n, n_features=p, random_state=seed)
        y = np.round(y)  # integer targets: sums are exact, so exact ties stay ties
    else:
        X, y = make_classification(
            n_samples=n, n_features=max(p, 2), n_informative=2, n_redundant=0,
            n_classes=int(rng.integers(2, 4)), n_clusters_per_class=1, random_state=seed,
        )  # fmt: skip
    X = np.round(X, int(rng.integers(0, 3)))  # few distinct values: many ties
    weights = (None, rng.integers(0, 4, len(y)).astype(float), rng.integers(1, 9, len(y)) / 4)
    params = dict(
        criterion=criterion,
        max_depth=[None, 2, 5][seed % 3],
        min_samples_split=[2, 10, 0.05][seed % 4 % 3],
        min_samples_leaf=[1, 3, 0.02][seed % 5 % 3],
        min_impurity_decrease=[0.0, 0.0, 0.001][seed % 3],
        min_weight_fraction_leaf=[0.0, 0.0, 0.0, 0.02][seed % 4],
        max_features=[None, None, 1, "sqrt", 0.5][seed % 5],
        random_state=seed,
    )
    return X, y, weights[seed % 3], params


@pytest.mark.parametrize("seed", range(45))
@pytest.mark.parametrize("method", ["levelwise", "hist"])
def test_fast_builders_grow_the_recursive_tree(seed, method):
    X, y, w, params = random_setting(seed)
    cls = (
        DecisionTreeRegressor if params["criterion"] == "squared_error" else DecisionTreeClassifier
    )
    reference = cls(tree_method="recursive", **params).fit(X, y, sample_weight=w)
    # hist is exact when no feature has more distinct values than bins
    max_bins = exact_bins(X)
    fast = cls(tree_method=method, max_bins=max_bins, **params).fit(X, y, sample_weight=w)
    assert_identical(fast, reference)
    np.testing.assert_array_equal(fast.predict(X), reference.predict(X))


def test_hist_is_close_to_exact_on_continuous_data():
    X, y = make_classification(n_samples=4000, n_features=10, random_state=0)
    X_test, y_test = make_classification(
        n_samples=4000, n_features=10, random_state=0, shuffle=True
    )
    exact = DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y)
    hist = DecisionTreeClassifier(max_depth=8, random_state=0, tree_method="hist", max_bins=64)
    hist.fit(X, y)
    assert abs(exact.score(X_test, y_test) - hist.score(X_test, y_test)) < 0.03
    # thresholds are real feature values between two data values
    inner = hist.tree_.feature >= 0
    for f, t in zip(hist.tree_.feature[inner].tolist(), hist.tree_.threshold[inner].tolist()):
        assert X[:, f].min() <= t < X[:, f].max()


def test_forest_passes_the_builder_to_its_trees():
    X, y = make_classification(n_samples=300, n_features=6, random_state=1)
    a = RandomForestClassifier(n_estimators=4, tree_method="recursive", random_state=0).fit(X, y)
    b = RandomForestClassifier(n_estimators=4, tree_method="hist", random_state=0).fit(
        np.round(X, 1), y
    )
    assert all(t.tree_method == "hist" for t in b.estimators_)
    c = RandomForestClassifier(n_estimators=4, tree_method="levelwise", random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), c.predict_proba(X))


def test_hist_forest_grows_the_exact_forest_when_bins_hold_every_value():
    X, y = make_classification(n_samples=400, n_features=6, random_state=2)
    X = np.round(X, 1)  # well under 255 distinct values per feature
    exact = RandomForestClassifier(n_estimators=5, tree_method="levelwise", random_state=0)
    hist = RandomForestClassifier(n_estimators=5, tree_method="hist", random_state=0)
    exact.fit(X, y), hist.fit(X, y)
    for a, b in zip(hist.estimators_, exact.estimators_):
        assert_identical(a, b)
    np.testing.assert_array_equal(hist.predict_proba(X), exact.predict_proba(X))


def test_device_parameter():
    X, y = make_classification(n_samples=100, n_features=4, random_state=0)
    tree = DecisionTreeClassifier(device="cpu").fit(X, y)
    assert str(tree.tree_.threshold.device) == "cpu"
    assert tree.score(X, y) == 1.0
    with pytest.raises(ValueError, match="device"):
        DecisionTreeClassifier(device="not-a-device").fit(X, y)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"tree_method": "fast"}, "tree_method"),
        ({"tree_method": "hist", "max_bins": 1}, "max_bins"),
    ],
)
def test_bad_builder_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        DecisionTreeClassifier(**params).fit([[0.0], [1.0]], [0, 1])


@pytest.mark.parametrize("seed", range(0, 45, 4))
def test_sparse_and_dense_histograms_grow_the_same_tree(monkeypatch, seed):
    # listing only the non-empty cells (small nodes) or counting every cell
    # (large nodes) is an implementation choice: it must not change the tree
    X, y, w, params = random_setting(seed)
    params = dict(params, tree_method="hist", max_bins=16)
    Tree = (
        DecisionTreeRegressor if params["criterion"] == "squared_error" else DecisionTreeClassifier
    )
    monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # always dense
    dense = Tree(**params).fit(X, y, sample_weight=w)
    monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 0)  # always sparse (listed)
    sparse = Tree(**params).fit(X, y, sample_weight=w)
    assert_identical(dense, sparse)


@pytest.mark.parametrize("seed", range(0, 84, 7))  # every residue mod 3, 4 and 5: all settings
def test_histograms_scanned_in_place_or_listed_grow_the_same_tree(monkeypatch, seed):
    # scanning every (node, feature, bin) cell of dense histograms in place, or
    # only the list of the non-empty ones, is an implementation choice too
    X, y, w, params = random_setting(seed)
    params = dict(params, tree_method="hist", max_bins=16)
    Tree = (
        DecisionTreeRegressor if params["criterion"] == "squared_error" else DecisionTreeClassifier
    )
    monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # dense histograms at every level
    monkeypatch.setattr(treelib.hist, "GRID_RATIO", 0)  # always listed
    listed = Tree(**params).fit(X, y, sample_weight=w)
    monkeypatch.setattr(treelib.hist, "GRID_RATIO", 10**9)  # always scanned in place
    in_place = Tree(**params).fit(X, y, sample_weight=w)
    assert_identical(listed, in_place)


@pytest.mark.parametrize("max_scan", [2**17, 50])
def test_forest_scanned_in_place_is_the_exact_forest(monkeypatch, max_scan):
    # forests drawing 3 of 9 features per node, grown side by side: every
    # level's histograms scanned in place (a few nodes at a time with
    # MAX_SCAN = 50 cells) give the exact builder's trees
    X, y = make_classification(n_samples=500, n_features=9, n_informative=4, random_state=3)
    X = np.round(X, 1)  # well under 255 distinct values per feature
    exact = RandomForestClassifier(n_estimators=4, tree_method="levelwise", random_state=0)
    exact.fit(X, y)
    monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # dense histograms at every level
    monkeypatch.setattr(treelib.hist, "GRID_RATIO", 10**9)  # scanned in place
    monkeypatch.setattr(treelib.hist, "MAX_SCAN", max_scan)
    hist = RandomForestClassifier(n_estimators=4, tree_method="hist", random_state=0).fit(X, y)
    for a, b in zip(hist.estimators_, exact.estimators_):
        assert_identical(a, b)


@pytest.mark.parametrize("grid_ratio", [0, 10**9])
def test_both_scans_skip_bins_closer_than_the_feature_threshold(monkeypatch, grid_ratio):
    # 0.001 and 0.001 + 5e-8 are distinct float32 values less than FEATURE_THRESHOLD
    # apart: no split between them, in scikit-learn, in the exact builder and in
    # both scans of the histogram builder (each value has its own bin)
    rng = np.random.default_rng(0)
    x = np.choose(rng.integers(0, 3, 120), [0.0, 1e-3, 1e-3 + 5e-8])
    X = np.c_[x, rng.integers(0, 3, 120)]
    y = ((x > 1.00001e-3) ^ (rng.random(120) < 0.1)).astype(int)
    assert len(np.unique(X[:, 0].astype(np.float32))) == 3
    monkeypatch.setattr(treelib.hist, "SPARSE_RATIO", 10**9)  # dense histograms at every level
    monkeypatch.setattr(treelib.hist, "GRID_RATIO", grid_ratio)  # listed, or scanned in place
    hist = DecisionTreeClassifier(tree_method="hist", random_state=0).fit(X, y)
    exact = DecisionTreeClassifier(tree_method="levelwise", random_state=0).fit(X, y)
    assert_identical(hist, exact)
    sklearn_tree = SkDecisionTreeClassifier(random_state=0).fit(X, y)
    assert hist.tree_.node_count == sklearn_tree.tree_.node_count


def test_bins_from_a_subsample_keep_the_exact_case(monkeypatch):
    # 30 distinct values per column, one of them on a single row: a subsample
    # of 40 rows misses values, so the column is binned from every row and the
    # histogram tree is still the exact tree
    monkeypatch.setattr(treelib.hist, "SUBSAMPLE", 40)
    rng = np.random.default_rng(0)
    X = rng.integers(0, 29, size=(600, 3)).astype(float)
    X[17, :] = 99.0
    y = (X[:, 0] + X[:, 1] > 28).astype(int) ^ (rng.random(600) < 0.1)
    for column in torch.from_numpy(X).float().T:
        codes, low, high = treelib.hist.bin_feature(column, 255, torch.arange(40))
        assert torch.equal(low, high) and len(low) == len(torch.unique(column))
    hist = DecisionTreeClassifier(tree_method="hist", random_state=0).fit(X, y)
    exact = DecisionTreeClassifier(tree_method="levelwise", random_state=0).fit(X, y)
    assert_identical(hist, exact)


def test_bins_from_a_subsample_on_continuous_data(monkeypatch):
    monkeypatch.setattr(treelib.hist, "SUBSAMPLE", 500)
    x = torch.from_numpy(np.random.default_rng(1).normal(size=5000)).float()
    codes, low, high = treelib.hist.bin_feature(x, 32, torch.arange(500))
    assert len(low) <= 32 and int(codes.max()) < len(low)
    order = torch.argsort(x)
    assert bool((torch.diff(codes[order]) >= 0).all())  # bins are intervals, in order
    assert bool((low[codes] <= x).all() and (x <= high[codes]).all())
    # every bin holds about 5000 / 32 samples: the cuts follow the data's quantiles
    counts = torch.bincount(codes, minlength=len(low))
    assert int(counts.min()) > 50 and int(counts.max()) < 400
    Xb = torch.stack([x, -x], 1)
    bins = treelib.hist.bin_columns(Xb, 32)  # 5000 > SUBSAMPLE rows: cuts from a subsample
    assert bins.codes.dtype == torch.uint8 and bins.low.shape == (2, 32)


@pytest.mark.parametrize("seed", range(6))
def test_bucket_codes_count_the_cuts_below_each_value_as_bucketize_does(seed):
    # the lookup grid against torch.bucketize's binary search: values on the cuts
    # (ties go left), outside them, skewed data (many cuts in one cell of the grid:
    # bucketize is called) and one cut, with values as float32 as bin_feature gets them
    rng = np.random.default_rng(seed)
    n = 20_000
    columns = [
        rng.normal(size=n),
        rng.lognormal(sigma=3.0, size=n),  # a few huge values stretch the grid
        rng.integers(-5, 5, size=n),
        rng.normal(size=n) * 1e-30,
        np.r_[rng.normal(size=n - 2), 3e38, -3e38],
    ]
    for column in columns:
        x = torch.from_numpy(np.asarray(column)).float()
        for k in (1, 2, 31, 254):
            cuts = torch.unique(x[torch.from_numpy(rng.integers(0, n, size=k))])
            expected = torch.bucketize(x, cuts)
            assert torch.equal(treelib.hist.bucket_codes(x, cuts), expected)
            between = torch.lerp(cuts[:-1], cuts[1:], 0.5)  # values between two cuts
            assert torch.equal(
                treelib.hist.bucket_codes(between, cuts), torch.bucketize(between, cuts)
            )


def test_bucket_codes_falls_back_to_bucketize_where_the_grid_is_uneven(monkeypatch):
    calls = []
    monkeypatch.setattr(torch, "bucketize", lambda x, cuts: calls.append(len(cuts)) or 0)
    even = torch.linspace(0, 1, 100)
    treelib.hist.bucket_codes(torch.rand(1000), even)
    assert calls == []  # one cut per few cells: the lookup grid
    uneven = torch.cat([torch.linspace(0, 1e-3, 50), torch.tensor([1e6])])
    treelib.hist.bucket_codes(torch.rand(1000), uneven)
    assert calls == [51]  # 50 cuts in the first cell of the grid


@pytest.mark.parametrize(
    "x, cuts",
    [
        # float64 values against float32 cuts: the two would get their cells by different
        # arithmetic (this one lands a cell too low by it)
        (
            torch.tensor([3.303223848343134, 1.0], dtype=torch.float64),
            torch.tensor([0.0, 3.3032238, 39.638687]),
        ),
        (torch.tensor([float("nan"), 1.0, 0.5]), torch.tensor([0.0, 1.0, 2.0])),
        (torch.tensor([-5.0, 0.5, 2.0]), torch.tensor([float("-inf"), 0.0, 1.0])),
        (torch.tensor([-5.0, 0.5, 2.0, float("inf")]), torch.tensor([0.0, 1.0, float("inf")])),
    ],
)
def test_bucket_codes_on_inputs_the_grid_cannot_take(x, cuts):
    # mixed dtypes, NaN or infinite values: the same codes as torch.bucketize, no error
    cuts = cuts.float()
    assert torch.equal(treelib.hist.bucket_codes(x, cuts), torch.bucketize(x, cuts))


@pytest.mark.parametrize("seed", range(10))
def test_hist_calls_a_feature_constant_as_the_exact_builders_do(seed):
    # two features whose values lie within FEATURE_THRESHOLD (1e-7) of each other: the
    # exact builders call them constant (the draw then moves on when every drawn
    # feature is constant); so must the histograms, although each value has its own bin
    rng = np.random.default_rng(seed)
    n = 80
    tiny = [1e-3 + rng.integers(0, 3, n) * 3e-8 for _ in range(2)]
    X = np.column_stack([rng.integers(0, 4, n), tiny[0], rng.integers(0, 4, n), tiny[1]])
    y = (X[:, 0] + X[:, 2] + rng.integers(0, 2, n) > 3).astype(int)
    params = dict(max_features=1, random_state=seed)
    exact = DecisionTreeClassifier(tree_method="levelwise", **params).fit(X, y)
    hist = DecisionTreeClassifier(tree_method="hist", **params).fit(X, y)
    assert_identical(hist, exact)


def test_children_reuse_the_split_sums_only_where_every_sum_is_exact():
    counts = torch.tensor([[1.0, 0.0, 3.0], [0.0, 2.0, 0.0]])  # unit weights, bootstrap counts
    assert treelib.levelwise.whole_sums(counts)
    assert not treelib.levelwise.whole_sums(counts * 0.1)  # fractional weights: order matters
    assert not treelib.levelwise.whole_sums(counts * 2.0**52)  # sums above 2**53 round
    assert not treelib.levelwise.whole_sums(torch.tensor([[0.5, 0.5]]))


def test_histograms_count_in_float32_only_where_every_sum_is_exact():
    counts = torch.tensor([0.0, 1.0, 3.0, 2.0], dtype=torch.float64)  # bootstrap counts
    assert treelib.hist.float32_is_exact(counts)
    assert not treelib.hist.float32_is_exact(counts * 0.5)  # fractional weights
    assert not treelib.hist.float32_is_exact(torch.full((3,), 2.0**23))  # 3 * 2**23 > 2**24
    # a forest's bootstrap counts reach the histograms as float32, sample weights do not
    X, y = make_classification(300, 4, random_state=0)
    Xt = torch.from_numpy(X).float()
    stats = torch.zeros(2, 300, dtype=torch.float64)
    stats[torch.from_numpy(y), torch.arange(300)] = counts.repeat(75)
    assert treelib.hist.HistogramSearch(Xt, stats).weight.dtype == torch.float32
    stats[stats > 0] = 0.25
    assert treelib.hist.HistogramSearch(Xt, stats).weight.dtype == torch.float64


def test_next_level_nodes_groups_the_samples_by_child_by_hand():
    # three nodes of 3, 2 and 4 samples; node 1 is a leaf (its samples leave), nodes 0
    # and 2 split (children 0, 1 and 2, 3); a sample goes right when its value is above
    # its node's threshold. Grouped by child, each child's samples keep their order.
    samples = torch.tensor([7, 2, 5, 0, 9, 4, 1, 8, 3])
    node = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2])
    value = {7: 0.9, 2: 0.5, 5: 0.7, 0: 0.0, 9: 0.0, 4: 0.2, 1: 0.8, 8: 0.3, 3: 0.9}
    level = dict(
        child=torch.tensor([0, -1, 2]),
        feature=torch.tensor([1, -2, 0]),
        threshold=torch.tensor([0.5, -2.0, 0.35], dtype=torch.float64),
    )

    def split_values(s, features):
        assert bool((features >= 0).all())  # a leaf's feature (-2) is never read
        return torch.tensor([value[int(i)] for i in s], dtype=torch.float32)

    kept, child = treelib.levelwise.next_level_nodes(split_values, samples, node, level)
    # node 0: 2 (at the threshold) goes left, 7 and 5 right; node 2: 4 and 8 left, 1 and 3
    # right
    assert kept.tolist() == [2, 7, 5, 4, 8, 1, 3]
    assert child.tolist() == [0, 1, 1, 2, 2, 3, 3]
    # for a search that regroups by sample id the order does not matter: kept as it was
    kept, child = treelib.levelwise.next_level_nodes(split_values, samples, node, level, False)
    assert kept.tolist() == [7, 2, 5, 4, 1, 8, 3]
    assert child.tolist() == [1, 0, 1, 2, 3, 2, 3]


@pytest.mark.parametrize("max_bins", [5, 16, 255])
def test_sorted_cells_list_the_non_empty_cells_of_the_histograms(max_bins):
    # the non-empty cells of a batch, listed from the histograms (nonzero over every
    # cell) or from the (slot, sample) pairs' cell ids (a sort): the same list
    X, y = make_classification(400, 5, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=1)  # fmt: skip
    stats = torch.zeros(3, 400, dtype=torch.float64)
    weights = torch.arange(400.0, dtype=torch.float64) % 4 + 1  # all above zero
    stats[torch.from_numpy(y), torch.arange(400)] = weights
    search = treelib.hist.HistogramSearch(torch.from_numpy(X).float(), stats, max_bins)
    B = search.n_bins  # padded with empty bins to a power of two
    assert B & (B - 1) == 0 and B >= search.n_used == min(max_bins, 400)
    assert bool((search.low[:, search.n_used :] == float("inf")).all())
    assert bool((search.high[:, search.n_used :] == float("-inf")).all())
    rows = torch.randperm(400, generator=torch.Generator().manual_seed(0))[:300]
    local = torch.arange(300) // 25  # 12 nodes of 25 samples
    features = torch.randint(0, 5, (12, 2), generator=torch.Generator().manual_seed(1))
    hist, counts, pairs = search.histograms(rows, local, 12, True, features, listing=True)
    sorted_list = search.sorted_cells(hist, counts, pairs)
    present = treelib.criteria.node_weight(hist, "gini") > 0  # (classes, nodes, slots, B)
    listed = search.listed_cells(hist, counts, present)
    for a, b in zip(sorted_list, listed):
        assert torch.equal(a, b)
    assert len(listed[0]) <= 300 * 2  # at most one cell per (sample, slot)
