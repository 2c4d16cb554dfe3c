"""Gradient boosting passes scikit-learn's other tree parameters to its trees (Chapter 8).

``max_leaf_nodes`` (best-first trees), ``min_impurity_decrease``,
``min_weight_fraction_leaf`` and ``ccp_alpha``: on tie-free data sets every tree
and every prediction equals scikit-learn's ``GradientBoosting*``.
"""

import pytest
from test_gradient_boosting import KINDS, assert_same_outputs, assert_same_trees, tie_free_fits

SETTINGS = {
    "max_leaf_nodes": dict(max_leaf_nodes=5, max_depth=None, min_samples_leaf=3),
    "min_impurity_decrease": dict(min_impurity_decrease=0.02, max_depth=4),
    "min_weight_fraction_leaf": dict(min_weight_fraction_leaf=0.05, max_depth=3),
    "ccp_alpha": dict(ccp_alpha=0.01, max_depth=4),
}
COMMON = dict(n_estimators=6, learning_rate=0.3)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("setting", SETTINGS)
def test_tree_parameters_reach_the_trees_as_in_sklearn(kind, setting):
    params = {**COMMON, **SETTINGS[setting]}
    if kind == "multiclass" and "max_depth" in params and params["max_depth"] is not None:
        params["max_depth"] = 2  # as in test_gradient_boosting: fewer exact ties at stage one
    fits = tie_free_fits(kind, params, n_wanted=5)
    for X, _, _, ours, theirs in fits:
        assert_same_trees(ours, theirs)
        assert_same_outputs(ours, theirs, X)
    # the parameter changed something: compare with the same boosting without it
    base = {**COMMON, "max_depth": params.get("max_depth") or 3}
    X, y, _, ours, _ = fits[0]
    plain = type(ours)(random_state=0, **base).fit(X, y)
    leaves = sum(t.tree_.n_leaves for t in ours.estimators_.ravel())
    plain_leaves = sum(t.tree_.n_leaves for t in plain.estimators_.ravel())
    assert leaves != plain_leaves
