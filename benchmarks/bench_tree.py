"""Time the fit of three full-depth classification trees in one run.

- scikit-learn's ``DecisionTreeClassifier`` (compiled Cython, the reference);
- treelib's ``DecisionTreeClassifier`` (the book's readable builder, Chapter 2);
- a naive "seed-style" tree written below: a recursive builder whose split
  search tries every threshold of every feature and recomputes the Gini
  impurity of both children from scratch, which costs O(n^2) per feature at
  a node of n samples. It is the kind of first implementation this book grew
  out of, and it shows what the cumulative-sum split search of Chapter 1 buys.

The data are ``make_classification(n, n_features=10, random_state=0)``. For
each size we record the best fit time over ``--repeats`` runs, the node count,
the training accuracy and the ratio of the fit time to scikit-learn's.

The naive tree gets a time budget (``--budget`` seconds). If one fit runs over
it, the fit is abandoned and recorded as "over budget" with no time (NaN);
larger sizes are then skipped. Nothing is extrapolated. Repeats of the naive
tree stop early once their total time exceeds the budget.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_tree.py --sizes 1000 10000 100000 \
        --repeats 3 --out benchmarks/results/tree_fit.csv
"""

import argparse
import csv
import math
import os
import platform
import time

import numpy as np
import sklearn
import torch
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier as SklearnTree

import treelib

MODELS = ("scikit-learn", "treelib", "naive")
FIELDS = (
    "n_samples",
    "model",
    "fit_seconds",
    "ratio_to_sklearn",
    "node_count",
    "train_accuracy",
    "runs",
    "torch_threads",
    "status",
)


# --- the naive, seed-style tree ---------------------------------------------------


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


# --- timing ---------------------------------------------------------------------


# Each maker returns an unfitted model; only the naive tree uses the deadline.
MAKERS = {
    "scikit-learn": lambda deadline: SklearnTree(random_state=0),
    "treelib": lambda deadline: treelib.DecisionTreeClassifier(random_state=0),
    "naive": lambda deadline: NaiveTree(deadline),
}


def as_input(name, X, y):
    """The naive tree works on tensors; the other two take the numpy arrays."""
    if name == "naive":
        return torch.from_numpy(X.astype(np.float32)), torch.from_numpy(y.astype(np.int64))
    return X, y


def node_count(model):
    return model.node_count if isinstance(model, NaiveTree) else model.tree_.node_count


def train_accuracy(model, X, y):
    return float((np.asarray(model.predict(X)) == np.asarray(y)).mean())


def time_fit(name, X, y, repeats, budget):
    """Best-of-``repeats`` wall time of ``fit`` alone; the budget bounds the total time."""
    best, runs, total, model = math.inf, 0, 0.0, None
    for _ in range(repeats):
        start = time.perf_counter()
        model = MAKERS[name](start + budget).fit(X, y)
        seconds = time.perf_counter() - start
        best, runs, total = min(best, seconds), runs + 1, total + seconds
        if total > budget:
            break
    return best, runs, model


def warm_up():
    """One tiny fit of each model, so that no timing pays for lazy initialisation."""
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    for name, make in MAKERS.items():
        make(math.inf).fit(*as_input(name, X, y))


def run(sizes, repeats, budget, n_features):
    warm_up()
    rows = []
    naive_gave_up_at = None
    for n in sizes:
        X, y = make_classification(n_samples=n, n_features=n_features, random_state=0)
        reference = None
        for name in MODELS:
            row = dict(n_samples=n, model=name, fit_seconds=math.nan, ratio_to_sklearn=math.nan)
            row.update(node_count=math.nan, train_accuracy=math.nan, runs=0, status="ok")
            row["torch_threads"] = torch.get_num_threads()
            if name == "naive" and naive_gave_up_at is not None:
                row["status"] = f"skipped: over budget at n={naive_gave_up_at}"
                rows.append(row)
                print_row(row)
                continue
            # only the naive tree is bounded: the other two always finish
            limit = budget if name == "naive" else math.inf
            X_in, y_in = as_input(name, X, y)
            try:
                seconds, runs, model = time_fit(name, X_in, y_in, repeats, limit)
            except BudgetExceeded:
                naive_gave_up_at = n
                row["status"] = f"over budget: > {budget:g} s"
            else:
                reference = seconds if name == "scikit-learn" else reference
                row.update(fit_seconds=seconds, ratio_to_sklearn=seconds / reference, runs=runs)
                row.update(
                    node_count=node_count(model), train_accuracy=train_accuracy(model, X_in, y_in)
                )
            rows.append(row)
            print_row(row)
    return rows


# --- output ---------------------------------------------------------------------


def is_missing(value):
    return isinstance(value, float) and math.isnan(value)


def fmt(value, spec, width=0):
    return ("-" if is_missing(value) else format(value, spec)).rjust(width)


def print_row(row):
    print(
        f"  n={row['n_samples']:>7}  {row['model']:<12}"
        f"  fit {fmt(row['fit_seconds'], '.3f', 9)} s"
        f"  x{fmt(row['ratio_to_sklearn'], '.1f', 7)}  nodes {fmt(row['node_count'], 'd', 6)}"
        f"  acc {fmt(row['train_accuracy'], '.4f', 6)}  {row['status']}",
        flush=True,
    )


def markdown_table(rows):
    lines = [
        "| n | model | fit time (s) | time / scikit-learn | nodes | train accuracy | status |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n_samples']:,} | {r['model']} | {fmt(r['fit_seconds'], '.3f')}"
            f" | {fmt(r['ratio_to_sklearn'], '.1f')} | {fmt(r['node_count'], ',')}"
            f" | {fmt(r['train_accuracy'], '.4f')} | {r['status']} |"
        )
    return "\n".join(lines)


CSV_FORMATS = {"fit_seconds": ".4f", "ratio_to_sklearn": ".2f", "train_accuracy": ".4f"}


def write_csv(rows, path):
    """One line per (size, model); a missing number is written as ``nan``."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for r in rows:
            writer.writerow(
                {
                    k: "nan" if is_missing(r[k]) else format(r[k], CSV_FORMATS.get(k, ""))
                    for k in FIELDS
                }
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=3, help="best of this many fits")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds for the naive tree")
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (scikit-learn's fit uses one)"
    )
    parser.add_argument("--out", default="benchmarks/results/tree_fit.csv")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    print(
        f"python {platform.python_version()}, torch {torch.__version__} "
        f"({torch.get_num_threads()} threads), scikit-learn {sklearn.__version__}, "
        f"{os.cpu_count()} CPUs, {platform.machine()}",
        flush=True,
    )
    rows = run(args.sizes, args.repeats, args.budget, args.features)
    write_csv(rows, args.out)
    print()
    print(markdown_table(rows))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
