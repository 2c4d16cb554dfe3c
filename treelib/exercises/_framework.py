"""The checkers' shared machinery: run the cases, compare, diagnose, print one verdict.

Introduced in Chapter 1 and used by every chapter's checkers (:mod:`treelib.exercises`).
"""

import contextlib
import functools
import importlib
import math
import os
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import torch

from ..tree_structure import Tree

RTOL, ATOL = 1e-6, 1e-9  # a number is right when it matches to 1e-6 (relative)
LN2 = math.log(2.0)
ERROR_HINT = "Call your function on this input yourself to see the full traceback."
DEFAULT_HINT = "Work this case out by hand and compare with your code, step by step."

# A grader's hidden cases (scripts/hidden_grader.py): the same checks on random cases drawn
# from other seeds. Read once, when the package is imported: the checkers cache their data.
CASE_SEED_OFFSET = int(os.environ.get("TREELIB_CASE_SEED_OFFSET", "0"))
_recorders = []  # lists that record_outcomes() hands out, innermost last


def case_seed(seed):
    """The seed of a checker's random cases: ``seed``, moved by a grader's hidden offset."""
    return seed + CASE_SEED_OFFSET


@contextlib.contextmanager
def record_outcomes():
    """Within the block, each checked case appends ``(passed, what happened, hint)`` to a list.

    A grader reads partial credit from it: the checkers themselves print one verdict only.
    """
    outcomes = []
    _recorders.append(outcomes)
    try:
        yield outcomes
    finally:
        _recorders.remove(outcomes)


# --- From scratch: treelib's own implementation of each exercise, refused while it runs ---

# Per exercise, what the learner writes, as treelib implements it ("module:attribute.path").
# Building blocks that an exercise may use (the entropy in an information gain, the split
# search in a tree, the trees in a forest) are not listed.
REFERENCES = {
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
    "bootstrap_counts": ["treelib.forest:bootstrap_counts"],
    "random_forest": ["treelib.forest:RandomForestClassifier.fit"],
    "adaboost_round": ["treelib.boosting:samme_alpha", "treelib.boosting:reweight"],
    "adaboost": [
        "treelib.boosting:BaseWeightBoosting.fit",
        "treelib.boosting:AdaBoostClassifier._boost",
    ],
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
    "split_gain": ["treelib.hist_grower:split_gain", "treelib.hist_grower:compute_node_value"],
    "child_histograms": [
        "treelib.hist_grower:node_histograms",
        "treelib.hist_grower:feature_histograms",
    ],
    "leafwise_tree": [
        "treelib.hist_grower:TreeGrower.grow",
        "treelib.hist_grower:TreeGrower.split_next",
    ],
    "shapley_values": [
        "treelib.explain:shapley_values_brute_force",
        "treelib.explain:shapley_weight",
    ],
    "pd_recursion": [
        "treelib.explain:partial_dependence",
        "treelib.explain:_recursion",
        "treelib.explain:tree_expectation",
        "treelib.explain:_walk",
    ],
    "tree_shap": [
        "treelib.explain:TreeExplainer.__init__",
        "treelib.explain:TreeExplainer.shap_values",
        "treelib.explain:shapley_values_brute_force",
        "treelib.explain:tree_expectation",
        "treelib.explain:_walk",
    ],
}
USED_REFERENCE = "treelib-reference-called"
REFERENCE_HINT = (
    "Your function calls treelib's own implementation; this exercise asks you to write it "
    "yourself (see the exercise's text for what you may use)."
)


def _refuse(*args, **kwargs):
    raise RuntimeError("treelib-reference-called: write this exercise without treelib's own code")


def _references(name):
    """The plain Python functions behind ``REFERENCES[name]``."""
    found = []
    for spec in REFERENCES.get(name, []):
        module, _, path = spec.partition(":")
        obj = importlib.import_module(module)
        for part in path.split("."):
            obj = getattr(obj, part)
        found.append(getattr(obj, "__func__", obj))
    return found


def from_scratch(name, fn):
    """``fn``, with treelib's own implementation of exercise ``name`` refused while it runs.

    The code of each reference function is swapped for one that raises, so that the
    function fails under any name the learner reached it by (``treelib.gini``, an
    ``import ... as``), and is put back when ``fn`` returns.
    """
    references = _references(name)
    if not references:
        return fn

    @functools.wraps(fn)
    def guarded(*args, **kwargs):
        saved = [f.__code__ for f in references]
        try:
            for f in references:
                f.__code__ = _refuse.__code__
            return fn(*args, **kwargs)
        finally:
            for f, code in zip(references, saved):
                f.__code__ = code

    return guarded


# --- The framework: run the cases, compare, diagnose, print one verdict ---


class _Case(NamedTuple):
    """One test of a learner's function."""

    args: tuple
    expected: Any = None
    call: Callable | None = None  # how to call fn; default fn(*copies of args)
    show: str | None = None  # how the failure message names the call
    compare: Callable | None = None  # this case's own comparison, if any
    error_hints: tuple = ()  # (text, hint): an error whose message holds text gets that hint


class _BadOutput(Exception):
    """The answer has the wrong type or shape or breaks a rule: what, and a hint."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.message, self.hint = message, hint


def _call_with_copies(fn, args):
    # a learner that edits its input in place must not spoil the next case
    return fn(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])


def _attempt(name, fn, case, compare, diagnose):
    """``None`` if ``fn`` passes ``case``, else ``(what happened, hint)``."""
    show = case.show or f"{name}({', '.join(_fmt(a) for a in case.args)})"
    try:
        got = (case.call or _call_with_copies)(fn, case.args)
    except NotImplementedError:
        raise
    except Exception as error:
        hint = ERROR_HINT
        if isinstance(error, IndexError):
            hint = "An IndexError often means a loop or slice goes one step too far. " + hint
        hint = next((h for text, h in case.error_hints if text in str(error)), hint)
        hint = REFERENCE_HINT if USED_REFERENCE in str(error) else hint
        return f"{show} raised {type(error).__name__}: {error}", hint
    returned = f"{show} returned {_fmt(got)}, expected {_fmt(case.expected)}"
    try:
        if (case.compare or compare)(got, case.expected):
            return None
    except _BadOutput as bad:
        return f"{show} {bad.message}", bad.hint or DEFAULT_HINT
    except Exception:  # an answer so odd that it cannot even be compared
        return returned, DEFAULT_HINT
    try:
        hint = diagnose(case.args, got, case.expected) if diagnose else None
    except Exception:  # a diagnosis is a bonus: it must never crash the check
        hint = None
    return returned, hint or DEFAULT_HINT


def _run_cases(name, fn, cases, compare, diagnose=None):
    """Run ``fn`` on every case, print the verdict and return whether all passed."""
    check = f"check_{name}"
    if not callable(fn):
        print(f"{check}: expected a function, got {_fmt(fn)}. Pass the function itself:")
        print(f"  {check}({name}), not {check}({name}(...)).")
        return False
    passed, failure, fn = 0, None, from_scratch(name, fn)
    with warnings.catch_warnings():  # the learner's warnings would land on stderr
        warnings.simplefilter("ignore")
        for case in cases:
            try:
                outcome = _attempt(name, fn, case, compare, diagnose)
            except NotImplementedError:
                print(f"{check}: not implemented yet. Replace `raise NotImplementedError`")
                print("  with your code, run that cell, then run this check again.")
                for outcomes in _recorders:
                    outcomes += [(False, "not implemented yet", ERROR_HINT)] * len(cases)
                return False
            passed += outcome is None
            failure = failure or outcome
            for outcomes in _recorders:
                outcomes.append((True, "", "") if outcome is None else (False, *outcome))
    if failure is None:
        print(f"{check}: all {len(cases)} cases passed. Well done!")
        return True
    print(f"{check}: {passed}/{len(cases)} cases passed.")
    print(f"  First failure: {failure[0]}.")
    print(f"  Hint: {failure[1]}")
    return False


# --- Reading and showing answers ---


def _fmt_num(v, digits=10):
    if isinstance(v, bool | int | np.integer):
        return str(v)
    s = f"{float(v):.{digits}g}"
    return s if any(c in s for c in ".eni") else s + ".0"  # 3 -> 3.0; keep nan, inf, 1e-07


def _fmt(v):
    """A short, readable form of an input or an answer."""
    if isinstance(v, torch.Tensor) and v.dim() == 0:
        return f"tensor({_fmt_num(v.item())})"
    if isinstance(v, torch.Tensor) and v.dim() == 1:
        items = [_fmt_num(x, 6) for x in v.tolist()]
        if len(items) > 10:
            return f"tensor([{', '.join(items[:3])}, ..., {items[-1]}]) (length {len(items)})"
        return f"tensor([{', '.join(items)}])"
    if isinstance(v, torch.Tensor):
        return f"a tensor of shape {tuple(v.shape)}"
    if isinstance(v, float | int | np.number):
        return _fmt_num(v)
    if isinstance(v, tuple):
        return f"({', '.join(_fmt(x) for x in v)})"
    if isinstance(v, Tree):
        return f"tree_ ({v.node_count} nodes)"
    if isinstance(v, np.ndarray):
        return f"a numpy array {np.array2string(v, threshold=10, precision=6)}"
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_float(got, what="returned"):
    """The answer as a Python float, or a ``_BadOutput`` saying what is wrong with it."""
    if got is None:
        raise _BadOutput(f"{what} None", "Did you forget the `return` statement?")
    if isinstance(got, torch.Tensor | np.ndarray):
        size = got.size if isinstance(got, np.ndarray) else got.numel()
        if size != 1:
            one = "Return one number: reduce over the values (e.g. with `.sum()`)."
            raise _BadOutput(f"{what} {_fmt(got)}, not a single number", one)
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, int | float | np.integer | np.floating):
        kind = type(got).__name__
        hint = "Return a number: a Python int or float, or a 0-d tensor."
        raise _BadOutput(f"{what} {_fmt(got)} (a {kind}), not a number", hint)
    return float(got)


def _close(a, b):
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=ATOL)


def _compare_float(got, expected):
    return _close(_as_float(got), expected)


def _first_match(value, variants):
    """The hint of the first ``(wrong answer, hint)`` pair that ``value`` matches."""
    return next((hint for wrong, hint in variants if _close(value, float(wrong))), None)


def _counts(values):
    return torch.tensor(values, dtype=torch.float64)


def _random_counts(rng, n_cases, max_classes=5, high=15):
    """Seeded random class counts (some zero), never all zero."""
    cases = []
    for _ in range(n_cases):
        k = int(torch.randint(2, max_classes + 1, (), generator=rng))
        c = torch.randint(0, high, (k,), generator=rng).double()
        cases.append(c if c.sum() > 0 else c + 1)
    return cases


# --- Class counts shared by Chapters 1 and 4 ---

FIXED_COUNTS = [[3, 1], [5, 5], [10, 0], [1, 1, 1], [2, 3, 5], [0, 4, 0], [7], [0.5, 1.5]]
FIXED_COUNTS += [[1, 2, 3, 4], [0, 3, 3]]
NORMALISE = "Turn the counts into proportions first: p = counts / counts.sum()."
