"""The partial listings of the book are pinned by their content (issue 36, item 15).

A chapter shows a few lines of a treelib function with
``show_source(obj, lines=(first, last))``: the numbers count lines of
``inspect.getsource(obj)``, so a line added or removed above the window (a comment,
a docstring line) silently moves it, and the book prints other code than its text
describes. ``WINDOWS`` holds, for every such call of every chapter, the text of the
window's first and last lines as the chapter means them; the tests check them
against the worktree's treelib, and that no call with ``lines=`` is missing from the
table (a new one must be pinned here). After an edit of treelib that moves a window,
change the numbers in the chapter (and re-run it), then here.

The student and Colab editions (notebooks/student/, notebooks/colab/) repeat the
chapters' calls; they are checked against the same table.
"""

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").rglob("[0-9][0-9]_*.ipynb"))

# (chapter, object as the call names it, (first, last)):
#     (where the object is defined, first line of the window, last line of the window)
WINDOWS = {
    ("02_cart_classification", "treelib.Tree.apply_tensor", (18, 24)): (
        "treelib.tree_structure.Tree.apply_tensor",
        "            x = torch.take(X, rows * p + torch.take(t.feature, node))",
        "            node = torch.where(left, left_child, torch.take(t.children_right, node))",
    ),
    ("02_cart_classification", "treelib.pruning.weakest_link_pruning", (36, 54)): (
        "treelib.pruning.weakest_link_pruning",
        "    while not is_leaf[0]:",
        "        impurities.append(r_branch[0])",
    ),
    ("05_random_forest", "treelib.node_random.search_ranks", (10, 15)): (
        "treelib.node_random.search_ranks",
        "    positions = torch.arange(p, device=keys.device)",
        "        chosen = (positions < max_features) & varies",
    ),
    ("05_random_forest", "treelib.extra_trees.random_split", (61, 73)): (
        "treelib.extra_trees.random_split",
        "    columns = X[:, features]  # (n, f)",
        "    left_mask = goes_left(columns, thresholds, missing_left=nan_left)"
        "  # (n, f), in float64",
    ),
    ("07_fast_trees", "treelib.levelwise.block_scores", (7, 10)): (
        "treelib.levelwise.block_scores",
        "    # segmented cumulative sum: the running sum minus the totals of the earlier nodes",
        '    right = shared["total"] - left',
    ),
    ("07_fast_trees", "treelib.hist.HistogramSearch.histograms", (24, 33)): (
        "treelib.hist.HistogramSearch.histograms",
        "            base = (local[part] * (p * B)).to(self.index_type)"
        "  # the node's block of cells",
        "                parts = [torch.bincount(cell, None, size * K)]",
    ),
    ("07_fast_trees", "treelib.hist.HistogramSearch.best_in_cells", (17, 31)): (
        "treelib.hist.HistogramSearch.best_in_cells",
        "        # a candidate after each cell whose next cell in the list is in the same row",
        "        left = left_of(values)",
    ),
    ("07_fast_trees", "treelib.batched.grow_trees_batched", (31, 50)): (
        "treelib.batched.grow_trees_batched",
        "    rows, stats, sizes = [], [], []",
        "    return assemble_trees(levels, device)",
    ),
    ("08_gradient_boosting", "newton_leaf_values", (29, 33)): (
        "treelib.gradient_boosting.newton_leaf_values",
        "    total = node_sum(weight)",
        "    return torch.where(small, 0.0, numerator / torch.where(small, 1.0, denominator))",
    ),
    ("08_gradient_boosting", "treelib.GradientBoostingClassifier.fit", (36, 40)): (
        "treelib.gradient_boosting.BaseGradientBoosting.fit",
        "        bins = None  # the histogram builder bins the data once for all trees",
        "        n_stages = self._fit_stages(loss, X, y, w, raw, bins, rng, val)",
    ),
}


def code_cells(path):
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            text = cell["source"]
            yield "".join(text) if isinstance(text, list) else text


def python(code):
    """A code cell as Python: IPython's magics and shell lines (``%pip``, ``!ls``) blanked."""
    return ast.parse(re.sub(r"(?m)^(\s*)[%!].*$", r"\1pass", code))


def show_source_windows(code):
    """``(object, (first, last))`` of each ``show_source(obj, lines=...)`` call in ``code``."""
    windows = []
    for node in ast.walk(python(code)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        lines = [k.value for k in node.keywords if k.arg == "lines"]
        if name != "show_source" or not lines:
            continue
        # a window given as anything but two literal numbers cannot be pinned here
        first, last = ast.literal_eval(lines[0])
        windows.append((ast.unparse(node.args[0]), (first, last)))
    return windows


def imported_names(path):
    """``{name: module}`` for each ``from treelib... import name`` in the notebook."""
    names = {}
    for code in code_cells(path):
        for node in ast.walk(python(code)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("treelib"):
                for alias in node.names:
                    names[alias.asname or alias.name] = node.module
    return names


def calls():
    """``(notebook, chapter, object, window)`` of every call with ``lines=`` in every notebook."""
    found = []
    for path in NOTEBOOKS:
        for code in code_cells(path):
            if "show_source" in code:
                for expression, window in show_source_windows(code):
                    found.append((path, path.stem, expression, window))
    return found


def resolve(expression, path):
    """The object ``expression`` names in the notebook ``path`` (run with ``import treelib``)."""
    head, *rest = expression.split(".")
    if head == "treelib":
        obj = importlib.import_module("treelib")
    else:
        module = imported_names(path).get(head)
        assert module, f"{path.name}: {head} is not imported from treelib"
        obj = getattr(importlib.import_module(module), head)
    for attribute in rest:
        obj = getattr(obj, attribute)
    return obj


def window(obj, first, last):
    lines = inspect.getsource(obj).splitlines()
    return lines[first - 1 : last]


def test_finds_calls_with_lines():
    code = "show_source(a.b, lines=(3, 4))\nshow_source(c)\n%pip install x\n"
    code += "if True:\n    show_source(d, lines=(1, 2))"
    assert show_source_windows(code) == [("a.b", (3, 4)), ("d", (1, 2))]


def test_the_table_holds_exactly_the_chapters_windows():
    chapters = {(c, e, w) for path, c, e, w in calls() if path.parent == ROOT / "notebooks"}
    assert len(chapters) >= 10
    assert not chapters - set(WINDOWS), "windows of the chapters missing from WINDOWS"
    assert not set(WINDOWS) - chapters, "WINDOWS holds windows that no chapter shows"


@pytest.mark.parametrize("call", calls(), ids=lambda c: f"{c[0].relative_to(ROOT)}:{c[2]}{c[3]}")
def test_every_window_is_pinned(call):
    path, chapter, expression, lines = call
    key = (chapter, expression, lines)
    assert key in WINDOWS, (
        f"{path.relative_to(ROOT)}: show_source({expression}, lines={lines}) is not pinned: "
        "add it to WINDOWS in tests/test_listings.py"
    )


@pytest.mark.parametrize("key", WINDOWS, ids=lambda k: f"{k[0]}:{k[1]}{k[2]}")
def test_window_shows_the_pinned_lines(key):
    chapter, expression, (first, last) = key
    defined, first_line, last_line = WINDOWS[key]
    obj = resolve(expression, ROOT / "notebooks" / f"{chapter}.ipynb")
    assert f"{obj.__module__}.{obj.__qualname__}" == defined
    shown = window(obj, first, last)
    assert len(shown) == last - first + 1, f"{expression} has {len(shown)} lines from {first}"
    where = f"Chapter {chapter}: show_source({expression}, lines=({first}, {last}))"
    if shown[0] != first_line or shown[-1] != last_line:
        source = inspect.getsource(obj).splitlines()
        moved = [str(n + 1) for n, line in enumerate(source) if line == first_line]
        hint = f"; the pinned first line is now line {', '.join(moved)}" if moved else ""
        raise AssertionError(
            f"{where} now starts {shown[0]!r} and ends {shown[-1]!r}, "
            f"pinned {first_line!r} ... {last_line!r}{hint}"
        )
