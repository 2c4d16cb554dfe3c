"""scikit-learn's own estimator checks on every treelib estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from treelib import (
    AdaBoostClassifier,
    AdaBoostRegressor,
    DecisionStump,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    RandomTreesEmbedding,
)

ESTIMATORS = [
    DecisionStump(),
    DecisionTreeClassifier(),
    DecisionTreeRegressor(),
    RandomForestClassifier(n_estimators=10),
    RandomForestRegressor(n_estimators=10),
    AdaBoostClassifier(n_estimators=10),
    AdaBoostRegressor(n_estimators=5),
    RandomTreesEmbedding(n_estimators=5),
    HistGradientBoostingClassifier(max_iter=10),
    HistGradientBoostingRegressor(max_iter=10),
]
# Expected failures, each with its reason: {estimator class name: {check name: reason}}
RESAMPLING = (
    "bootstrap draws rows by index, so a row of weight 2 and two copies of a row are "
    "drawn differently; scikit-learn marks this check as failing for its forests too"
)
RESAMPLING_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": RESAMPLING,
    "check_sample_weight_equivalence_on_sparse_data": RESAMPLING,
}
EXPECTED_FAILURES = {
    "RandomForestClassifier": RESAMPLING_CHECKS,
    "RandomForestRegressor": RESAMPLING_CHECKS,
}


@parametrize_with_checks(
    ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILURES.get(type(est).__name__, {})
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
