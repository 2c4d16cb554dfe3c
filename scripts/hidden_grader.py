"""Grade one learner's function on hidden cases, in a fresh Python process.

Shipped in every autograder zip that ``make assignments`` writes, and run by its
hidden tests (never imported into the learner's kernel):

    TREELIB_CASE_SEED_OFFSET=1000 python hidden_grader.py gini < function.dill

reads the learner's function (pickled by value with ``dill``), runs the book's
checker for that exercise (``treelib.exercises.CHECKERS``) on random cases drawn
from seeds moved by the offset, which only the teacher's zip knows, and prints
one line ``OUTCOMES [[passed, what happened, hint], ...]``: one entry per case.

Being a fresh process, it sees none of what the learner's notebook changed
(``CHECKERS``, ``abs``, ``np.allclose``, the checkers themselves). While the
learner's function runs, treelib's own implementation of the exercise is
replaced by a function that raises, so a from-scratch exercise answered with
treelib's code fails every case.
"""

import contextlib
import functools
import importlib
import io
import json
import sys

import dill

USED_TREELIB = "treelib-reference-called"
FROM_SCRATCH_HINT = (
    "Your function calls treelib's own implementation; this exercise asks you to write it "
    "yourself (see the exercise's text for what you may use)."
)

# Per exercise, treelib's implementation of what the learner writes ("module:attribute.path").
FORBIDDEN = {
    "gini": ["treelib.criteria:gini", "treelib.criteria:gini_of_weighted"],
    "best_threshold": [
        "treelib.split:best_split",
        "treelib.split:best_ordinal_candidate",
        "treelib.stump:DecisionStump.fit",
        "treelib.tree:DecisionTreeClassifier.fit",
    ],
    "predict_one": [
        "treelib.tree_structure:Tree.apply",
        "treelib.tree_structure:Tree.predict",
        "treelib.tree:DecisionTreeClassifier.apply",
        "treelib.tree:DecisionTreeClassifier.predict",
    ],
    "grow_tree": ["treelib.tree:DecisionTreeClassifier.fit"],
    "squared_error": ["treelib.criteria:squared_error"],
    "entropy": ["treelib.criteria:entropy"],
    "information_gain": ["treelib.criteria:entropy"],
    "bootstrap_counts": ["treelib.forest:bootstrap_counts"],
    "random_forest": ["treelib.forest:RandomForestClassifier.fit"],
    "adaboost_round": ["treelib.boosting:samme_alpha", "treelib.boosting:reweight"],
    "adaboost": ["treelib.boosting:AdaBoostClassifier.fit"],
    "segmented_cumsum": ["treelib.levelwise:segment_starts"],
    "negative_gradient": [
        "treelib.gradient_boosting:BinomialLoss.negative_gradient",
        "treelib.gradient_boosting:SquaredError.negative_gradient",
        "treelib.gradient_boosting:MultinomialLoss.negative_gradient",
    ],
    "boosting_round": [
        "treelib.gradient_boosting:newton_leaf_values",
        "treelib.gradient_boosting:BinomialLoss.negative_gradient",
    ],
}


def _refuse(*args, **kwargs):
    raise RuntimeError("treelib-reference-called: write this exercise without treelib's own code")


def forbidden_functions(name):
    """The plain Python functions behind ``FORBIDDEN[name]`` (names that do not exist skipped)."""
    found = []
    for spec in FORBIDDEN.get(name, []):
        module, _, path = spec.partition(":")
        obj = importlib.import_module(module)
        for part in path.split("."):
            obj = getattr(obj, part, None)
        obj = getattr(obj, "__func__", obj)
        if callable(obj) and hasattr(obj, "__code__") and not obj.__code__.co_freevars:
            found.append(obj)
    return found


@contextlib.contextmanager
def refused(functions):
    """Within the block, calling any of ``functions`` (by any name) raises."""
    saved = [f.__code__ for f in functions]
    try:
        for f in functions:
            f.__code__ = _refuse.__code__
        yield
    finally:
        for f, code in zip(functions, saved):
            f.__code__ = code


def outcomes(name, fn):
    """``[(passed, what happened, hint)]`` for every case of the exercise's checker."""
    from treelib.exercises import CHECKERS
    from treelib.exercises._framework import record_outcomes

    functions = forbidden_functions(name)

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        with refused(functions):
            return fn(*args, **kwargs)

    with record_outcomes() as recorded, contextlib.redirect_stdout(io.StringIO()):
        CHECKERS[name](guarded)
    return [
        (passed, text, FROM_SCRATCH_HINT if USED_TREELIB in text else hint)
        for passed, text, hint in recorded
    ]


def main():
    name = sys.argv[1]
    fn = dill.loads(sys.stdin.buffer.read())
    print("OUTCOMES " + json.dumps(outcomes(name, fn)))


if __name__ == "__main__":
    main()
