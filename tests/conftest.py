"""Shared pytest setup for the unit tests (kept tiny on purpose)."""

import matplotlib

# Draw off-screen. Set in-process, not through MPLBACKEND, so that notebook
# kernels started by nbval keep their inline backend.
matplotlib.use("Agg")

# The browser tests' module fixtures (a server of the built book, Debian's Chromium),
# for tests/test_browser.py and tests/test_accessibility.py.
from browser_common import browser, server  # noqa: E402, F401

# `make test` runs these tests and the notebooks in one pytest run on two workers, a
# file (or notebook) at a time, in this order (xdist's --no-loadscope-reorder): the
# longest units (measured, roughly in order) start first, so that short test files
# fill the end of the run and neither worker waits long for the other's last file.
# Their total --durations in one run (before the accessibility test loaded each page
# once): 320, 114, 95, 137, 88, 63, 57, 78, 63, 57 and 42 s.
LONGEST_FIRST = (
    "tests/test_accessibility.py",
    "tests/test_grading.py",  # grades a class of eleven notebooks (added later, not measured)
    "notebooks/06_",
    "notebooks/05_",
    "tests/test_browser.py",
    "tests/test_pdf.py",
    "notebooks/08_",
    "notebooks/07_",
    "tests/test_gradient_boosting.py",
    "tests/test_class_weight.py",
    "tests/test_pruning.py",
    "notebooks/04_",
    "tests/test_book_no_solutions.py",
)


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid
        return next((i for i, start in enumerate(LONGEST_FIRST) if path.startswith(start)), 99)

    items.sort(key=rank)  # stable: collection order within each rank
