"""Checkers for the book's exercises: instant feedback for learners, True/False for graders.

Introduced in Chapter 1 and used in every chapter.

Each ``check_*`` function takes the learner's function, runs it on hand-picked
cases and on seeded random cases, compares the answers with treelib's own
implementation and prints a short verdict: how many cases passed and, for the
first failure, the input, what came back, what was expected and a hint aimed at
the likely mistake. It never shows the reference code, never lets the learner's
exception escape, and returns ``True`` or ``False`` so that a grader can use it::

    from treelib.exercises import check_gini
    check_gini(my_gini)  # prints the verdict, returns True or False

``CHECKERS`` maps each exercise's name (``"gini"``, ...) to its checker; the
capstones (``CAPSTONES``: the learner builds a chapter's whole model) are in it
too. One module per chapter (``ch01`` ... ``ch10``) holds that chapter's
checkers; ``_framework`` the machinery they share.
"""

from ._framework import (
    ATOL,
    DEFAULT_HINT,
    ERROR_HINT,
    FIXED_COUNTS,
    LN2,
    NORMALISE,
    RTOL,
)
from .ch01 import (
    FIXED_SPLITS,
    GINI_HINTS,
    THRESHOLD_HINTS,
    check_best_threshold,
    check_gini,
)
from .ch02 import check_grow_tree, check_predict_one
from .ch03 import FIXED_TARGETS, SQUARED_ERROR_HINTS, check_squared_error
from .ch04 import (
    ENTROPY_HINTS,
    FIXED_GAINS,
    GAIN_HINTS,
    check_entropy,
    check_information_gain,
)
from .ch05 import (
    EXCLUSIVE_HIGH,
    PERMUTATION,
    USE_GENERATOR,
    check_bootstrap_counts,
    check_random_forest,
)
from .ch06 import FIXED_ROUNDS, ROUND_HINTS, check_adaboost, check_adaboost_round
from .ch07 import check_segmented_cumsum
from .ch08 import check_boosting_round, check_negative_gradient
from .ch09 import (
    HISTOGRAM_HINTS,
    SECOND_ORDER_HINTS,
    TREE_HINTS,
    check_child_histograms,
    check_leafwise_tree,
    check_split_gain,
)
from .ch10 import (
    PD_HINTS,
    SHAPLEY_HINTS,
    TREE_SHAP_HINTS,
    check_pd_recursion,
    check_shapley_values,
    check_tree_shap,
)

CHECKERS = {
    "gini": check_gini,
    "best_threshold": check_best_threshold,
    "predict_one": check_predict_one,
    "squared_error": check_squared_error,
    "entropy": check_entropy,
    "information_gain": check_information_gain,
    "bootstrap_counts": check_bootstrap_counts,
    "adaboost_round": check_adaboost_round,
    "negative_gradient": check_negative_gradient,
    "boosting_round": check_boosting_round,
    "split_gain": check_split_gain,
    "child_histograms": check_child_histograms,
    "shapley_values": check_shapley_values,
    "pd_recursion": check_pd_recursion,
    # the capstones: the learner builds the chapter's model (my_grow_tree, ...)
    "grow_tree": check_grow_tree,
    "random_forest": check_random_forest,
    "adaboost": check_adaboost,
    "segmented_cumsum": check_segmented_cumsum,
    "leafwise_tree": check_leafwise_tree,
    "tree_shap": check_tree_shap,
}
CAPSTONES = (
    "grow_tree",
    "random_forest",
    "adaboost",
    "segmented_cumsum",
    "leafwise_tree",
    "tree_shap",
)

__all__ = [
    "CHECKERS",
    "check_gini",
    "check_best_threshold",
    "check_predict_one",
    "check_squared_error",
    "check_entropy",
    "check_information_gain",
    "check_bootstrap_counts",
    "check_adaboost_round",
    "check_negative_gradient",
    "check_split_gain",
    "check_child_histograms",
    "check_leafwise_tree",
    "SECOND_ORDER_HINTS",
    "HISTOGRAM_HINTS",
    "TREE_HINTS",
    "check_boosting_round",
    "check_shapley_values",
    "check_pd_recursion",
    "check_tree_shap",
    "SHAPLEY_HINTS",
    "PD_HINTS",
    "TREE_SHAP_HINTS",
    "CAPSTONES",
    "check_grow_tree",
    "check_random_forest",
    "check_adaboost",
    "check_segmented_cumsum",
    # the hints and fixed cases, public in the single module this package replaced
    "ATOL",
    "DEFAULT_HINT",
    "ENTROPY_HINTS",
    "ERROR_HINT",
    "EXCLUSIVE_HIGH",
    "FIXED_COUNTS",
    "FIXED_GAINS",
    "FIXED_ROUNDS",
    "FIXED_SPLITS",
    "FIXED_TARGETS",
    "GAIN_HINTS",
    "GINI_HINTS",
    "LN2",
    "NORMALISE",
    "PERMUTATION",
    "ROUND_HINTS",
    "RTOL",
    "SQUARED_ERROR_HINTS",
    "THRESHOLD_HINTS",
    "USE_GENERATOR",
]
