"""pytest plugin: scikit-learn's own tree and ensemble tests run on treelib's estimators.

Loaded by ``run.py`` with ``pytest -p substitute``, so that it runs before any test
module is imported. ``TREELIB_SUITE`` names the suite (``trees``, the default, or
``hgb``); only that suite's estimators are substituted. It

1. puts treelib's estimators in place of scikit-learn's, in ``sklearn.tree``,
   ``sklearn.ensemble`` (where ``from sklearn.tree import X``, ``from sklearn import
   tree`` and ``from sklearn.ensemble import X`` find them) and their private
   modules ``sklearn.tree._classes``, ``sklearn.ensemble._forest`` and
   ``sklearn.ensemble._weight_boosting`` (suite ``trees``), or
   ``sklearn.ensemble._hist_gradient_boosting.gradient_boosting`` (suite ``hgb``:
   ``HistGradientBoostingRegressor`` and ``HistGradientBoostingClassifier``, whose
   test module also imports that module as ``hgb_module``). Each is a subclass of
   treelib's class with the scikit-learn name, whose ``tree_method`` default (where
   it has one) is the builder under test (``TREELIB_SUITE_BUILDER``); its
   ``__init__`` signature is otherwise treelib's, so that ``get_params`` and
   ``clone`` keep working;
2. replaces each estimator the suite's files use that treelib does not provide
   (looked up again on every run, so that it is substituted once it exists) by a
   subclass of scikit-learn's own class that records its use: a test that
   creates one is reported as failed, "not provided by treelib";
3. records which estimators each test created (``user_properties``
   ``"estimators"`` in the JUnit XML): run.py uses it to check the list of
   out-of-scope tests (exclusions.txt);
4. fails a test that runs longer than ``TREELIB_SUITE_TIMEOUT`` seconds (SIGALRM).
"""

import inspect
import os
import signal
import sys
import types

import pytest
import sklearn.ensemble
import sklearn.ensemble._forest
import sklearn.ensemble._hist_gradient_boosting.gradient_boosting
import sklearn.ensemble._weight_boosting
import sklearn.tree
import sklearn.tree._classes
from sklearn.base import clone

import treelib

SUITE = os.environ.get("TREELIB_SUITE", "trees")
BUILDER = os.environ.get("TREELIB_SUITE_BUILDER", "levelwise")
TIMEOUT = int(os.environ.get("TREELIB_SUITE_TIMEOUT", "300"))

TREE_NAMES = [
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
]
ENSEMBLE_NAMES = [
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "RandomTreesEmbedding",
    "AdaBoostClassifier",
    "AdaBoostRegressor",
]
HGB_NAMES = ["HistGradientBoostingRegressor", "HistGradientBoostingClassifier"]
# the modules where each suite's test files (and scikit-learn's own code) find the names
MODULES = {
    **dict.fromkeys(TREE_NAMES, [sklearn.tree, sklearn.tree._classes]),
    **dict.fromkeys(
        ENSEMBLE_NAMES,
        [sklearn.ensemble, sklearn.ensemble._forest, sklearn.ensemble._weight_boosting],
    ),
    **dict.fromkeys(
        HGB_NAMES,
        [sklearn.ensemble, sklearn.ensemble._hist_gradient_boosting.gradient_boosting],
    ),
}
SUITE_NAMES = {"trees": TREE_NAMES + ENSEMBLE_NAMES, "hgb": HGB_NAMES}[SUITE]
# scikit-learn's single extra tree is its decision tree with these defaults; treelib's
# decision tree stands in for it once it takes `splitter` (and no ExtraTree* exists).
EXTRA_TREE_DEFAULTS = {
    "ExtraTreeClassifier": (
        "DecisionTreeClassifier",
        {"splitter": "random", "max_features": "sqrt"},
    ),
    "ExtraTreeRegressor": ("DecisionTreeRegressor", {"splitter": "random", "max_features": 1.0}),
}

_module = sys.modules[__name__]
_created = set()  # names of the substituted / not-provided estimators the current test made
SUBSTITUTED = {}  # name -> treelib-based class
NOT_PROVIDED = {}  # name -> recording subclass of scikit-learn's class


def _with_defaults(init, defaults):
    """A copy of the function ``init`` with some keyword defaults changed."""
    new = types.FunctionType(
        init.__code__, init.__globals__, init.__name__, init.__defaults__, init.__closure__
    )
    new.__kwdefaults__ = {**(init.__kwdefaults__ or {}), **defaults}
    new.__qualname__ = init.__qualname__
    new.__doc__ = init.__doc__
    return new


def _record_new(cls, *args, **kwargs):
    _created.add(cls.__name__)
    return super(cls._suite_base_for_new, cls).__new__(cls)


def _make_class(name, base, defaults, kind):
    """A subclass of ``base`` named ``name``, picklable from this module, recording use."""
    namespace = {
        "__module__": __name__,
        "__qualname__": name,
        "_suite_kind": kind,
        "__new__": staticmethod(_record_new),
    }
    params = inspect.signature(base.__init__).parameters
    defaults = {k: v for k, v in defaults.items() if k in params}
    if defaults:
        namespace["__init__"] = _with_defaults(base.__init__, defaults)
    cls = type(name, (base,), namespace)
    cls._suite_base_for_new = cls
    setattr(_module, name, cls)
    return cls


def _treelib_class(name):
    """treelib's class for scikit-learn's ``name``, its extra defaults; or None."""
    cls = getattr(treelib, name, None)
    if cls is not None:
        return cls, {}
    if name in EXTRA_TREE_DEFAULTS:
        base_name, defaults = EXTRA_TREE_DEFAULTS[name]
        base = getattr(treelib, base_name)
        if "splitter" in inspect.signature(base.__init__).parameters:
            return base, defaults
    return None


def install():
    builder = {"tree_method": BUILDER}
    for name in SUITE_NAMES:
        found = _treelib_class(name)
        if found is not None:
            base, defaults = found
            cls = _make_class(name, base, {**defaults, **builder}, "treelib")
            SUBSTITUTED[name] = cls
        else:
            base = getattr(MODULES[name][0], name)
            cls = _make_class(name, base, {}, "not provided")
            NOT_PROVIDED[name] = cls
        for mod in MODULES[name]:
            if hasattr(mod, name):
                setattr(mod, name, cls)
    if SUITE == "trees":
        # treelib's AdaBoost makes its default stump (classifier) and depth-3 tree
        # (regressor) from treelib.boosting's trees: the builder under test grows them.
        import treelib.boosting

        treelib.boosting.DecisionTreeClassifier = SUBSTITUTED["DecisionTreeClassifier"]
        treelib.boosting.DecisionTreeRegressor = SUBSTITUTED["DecisionTreeRegressor"]


install()

# The changed default must survive get_params / clone (sklearn re-creates estimators
# from get_params(); a default that clone lost would test the wrong builder).
for _cls in SUBSTITUTED.values():
    if "tree_method" in inspect.signature(_cls.__init__).parameters:
        assert clone(_cls()).get_params()["tree_method"] == BUILDER, _cls
_created.clear()


def _used_in_params(item):
    """Names of recorded classes (or their instances) among a test's parameters."""
    names = set()
    callspec = getattr(item, "callspec", None)
    for value in callspec.params.values() if callspec else ():
        for cls in list(SUBSTITUTED.values()) + list(NOT_PROVIDED.values()):
            if value is cls or isinstance(value, cls):
                names.add(cls.__name__)
    return names


def _on_alarm(signum, frame):
    raise TimeoutError(f"test ran longer than {TIMEOUT} s (TREELIB_SUITE_TIMEOUT)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _created.clear()
    _created.update(_used_in_params(item))
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" or (call.when == "setup" and report.outcome != "passed"):
        missing = sorted(n for n in _created if n in NOT_PROVIDED)
        item.user_properties.append(("estimators", ",".join(sorted(_created))))
        if missing and report.outcome != "skipped":
            report.outcome = "failed"
            report.longrepr = "NotProvided: not provided by treelib: " + ", ".join(missing)
