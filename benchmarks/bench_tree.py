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
import math
import time

import numpy as np
import torch
from bench_common import (
    BudgetExceeded,
    NaiveTree,
    best_of,
    fmt,
    machine,
    naive_input,
    node_count,
    timed,
    versions,
    write_csv,
)
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


# --- timing ---------------------------------------------------------------------


# Each maker returns an unfitted model; only the naive tree uses the deadline.
# (bench_fast.py imports NaiveTree from this module: keep the name here.)
MAKERS = {
    "scikit-learn": lambda deadline: SklearnTree(random_state=0),
    "treelib": lambda deadline: treelib.DecisionTreeClassifier(random_state=0),
    "naive": lambda deadline: NaiveTree(deadline),
}


def as_input(name, X, y):
    """The naive tree works on tensors; the other two take the numpy arrays."""
    return naive_input(X, y) if name == "naive" else (X, y)


def train_accuracy(model, X, y):
    return float((np.asarray(model.predict(X)) == np.asarray(y)).mean())


def time_fit(name, X, y, repeats, budget):
    """Best-of-``repeats`` wall time of ``fit`` alone; the budget bounds the total time."""

    def fit_once(start):
        return MAKERS[name](start + budget).fit(X, y)

    return best_of(lambda: timed(fit_once, time.perf_counter()), repeats, budget)


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

    print(f"{versions(torch.get_num_threads())}, {machine()}", flush=True)
    rows = run(args.sizes, args.repeats, args.budget, args.features)
    write_csv(rows, args.out, FIELDS, CSV_FORMATS)
    print()
    print(markdown_table(rows))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
