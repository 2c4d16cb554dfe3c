"""Helpers shared by the benchmark scripts: the naive tree, timing, formatting, CSV files.

The scripts run from the repository root as ``python benchmarks/bench_x.py``, so
Python puts ``benchmarks/`` on the path and they import this module as
``bench_common``.
"""

import csv
import math
import os
import platform
import time

import numpy as np
import sklearn
import torch

# --- the naive, seed-style tree -----------------------------------------------------


class BudgetExceeded(Exception):
    """The naive fit ran past its deadline."""


def naive_gini(y):
    """Gini impurity of the labels ``y``, counted from scratch."""
    if len(y) == 0:
        return 0.0
    p = torch.bincount(y).double() / len(y)
    return float(1.0 - (p * p).sum())


class NaiveTree:
    """A full-depth Gini tree grown the slow, obvious way.

    Every candidate threshold (midpoints between a feature's distinct values)
    splits the node with a boolean mask and recounts both children.
    """

    def __init__(self, deadline=math.inf):
        self.deadline = deadline

    def fit(self, X, y):
        self.n_classes_ = int(y.max()) + 1
        self.node_count = 0
        self.root_ = self._grow(X, y)
        return self

    def _leaf(self, y):
        return {"value": int(torch.bincount(y, minlength=self.n_classes_).argmax())}

    def _grow(self, X, y):
        self.node_count += 1
        best_score, best = naive_gini(y), None  # a split must lower the impurity
        if best_score == 0.0:
            return self._leaf(y)
        n = len(y)
        for feature in range(X.shape[1]):
            values = torch.unique(X[:, feature])  # sorted distinct values
            for threshold in ((values[:-1] + values[1:]) / 2).tolist():
                if time.perf_counter() > self.deadline:
                    raise BudgetExceeded
                left = X[:, feature] <= threshold
                n_left = int(left.sum())
                score = (n_left * naive_gini(y[left]) + (n - n_left) * naive_gini(y[~left])) / n
                if score < best_score:
                    best_score, best = score, (feature, threshold, left)
        if best is None:
            return self._leaf(y)
        feature, threshold, left = best
        return {
            "feature": feature,
            "threshold": threshold,
            "left": self._grow(X[left], y[left]),
            "right": self._grow(X[~left], y[~left]),
        }

    def predict(self, X):
        out = torch.empty(len(X), dtype=torch.int64)
        self._predict(self.root_, X, torch.arange(len(X)), out)
        return out

    def _predict(self, node, X, rows, out):
        if "value" in node:
            out[rows] = node["value"]
            return
        left = X[rows, node["feature"]] <= node["threshold"]
        self._predict(node["left"], X, rows[left], out)
        self._predict(node["right"], X, rows[~left], out)


def naive_input(X, y):
    """The naive tree works on tensors: float32 features, int64 labels."""
    return torch.from_numpy(X.astype(np.float32)), torch.from_numpy(y.astype(np.int64))


def node_count(model):
    """Nodes of a fitted tree (scikit-learn, treelib or naive), summed over a forest's trees."""
    if hasattr(model, "estimators_"):
        return sum(t.tree_.node_count for t in model.estimators_)
    return model.node_count if isinstance(model, NaiveTree) else model.tree_.node_count


# --- timing -------------------------------------------------------------------------


def timed(fn, *args):
    """``(seconds, fn(*args))``: the wall-clock time of one call and what it returned."""
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result


def best_of(run, repeats, budget=math.inf):
    """Best of ``repeats`` calls of ``run()``, which returns ``(seconds, result)``.

    The repeats stop early once their total time exceeds ``budget``. Returns
    ``(best seconds, number of runs, the last result)``.
    """
    best, runs, total, result = math.inf, 0, 0.0, None
    for _ in range(repeats):
        seconds, result = run()
        best, runs, total = min(best, seconds), runs + 1, total + seconds
        if total > budget:
            break
    return best, runs, result


def versions(threads):
    """``python X, torch Y (N threads), scikit-learn Z``: the first words of every run."""
    return (
        f"python {platform.python_version()}, torch {torch.__version__} "
        f"({threads} threads), scikit-learn {sklearn.__version__}"
    )


def machine():
    """``N CPUs, <architecture>``."""
    return f"{os.cpu_count()} CPUs, {platform.machine()}"


# --- output -------------------------------------------------------------------------


def is_missing(value):
    return isinstance(value, float) and math.isnan(value)


def fmt(value, spec, width=0):
    """``value`` formatted with ``spec`` (``-`` if missing), right-aligned in ``width``."""
    return ("-" if is_missing(value) else format(value, spec)).rjust(width)


def csv_cells(row, fields, formats):
    """One CSV line's cells: each field formatted with its spec, a missing number as ``nan``,
    a field the row does not have (a fit that did not finish) empty."""
    cells = {}
    for k in fields:
        if k not in row:
            cells[k] = ""
        else:
            cells[k] = "nan" if is_missing(row[k]) else format(row[k], formats.get(k, ""))
    return cells


def write_csv(rows, path, fields, formats):
    """Write ``rows`` (one line each) to ``path``, replacing the file."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(csv_cells(row, fields, formats))


def append_csv(rows, path, fields, formats):
    """Append ``rows`` to ``path``; a new file gets the header, an old one must have it."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    new = not os.path.exists(path)
    if not new:
        with open(path) as f:
            if next(csv.reader(f), None) != list(fields):
                raise SystemExit(f"{path} has other columns; use another --out.")
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow(csv_cells(row, fields, formats))
