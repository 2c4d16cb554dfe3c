"""scikit-learn's own estimator checks on every treelib estimator."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from treelib import DecisionStump, DecisionTreeClassifier, DecisionTreeRegressor

ESTIMATORS = [DecisionStump(), DecisionTreeClassifier(), DecisionTreeRegressor()]
# Expected failures, each with its reason: {estimator class name: {check name: reason}}
EXPECTED_FAILURES = {}


@parametrize_with_checks(
    ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILURES.get(type(est).__name__, {})
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
