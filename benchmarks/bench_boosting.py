"""Chapter 8's benchmark: treelib's histogram gradient boosting against scikit-learn's.

For ``make_classification(n + n_test, p, n_informative=min(p, 10),
n_redundant=0, random_state=0)`` (the data of ``bench_fast.py``; the last
``n_test`` rows are the test set) and every ``n`` in ``--sizes`` it fits

- ``treelib``: ``treelib.GradientBoostingClassifier(tree_method="hist",
  max_bins=255, max_depth=6, n_estimators=100, learning_rate=0.1)``;
- ``sklearn-hist``: ``sklearn.ensemble.HistGradientBoostingClassifier(
  max_iter=100, max_depth=6, max_leaf_nodes=None, early_stopping=False,
  learning_rate=0.1, max_bins=255)``: trees limited by depth, as treelib's
  (HistGradientBoosting's default ``max_leaf_nodes=31`` would make smaller,
  leaf-wise trees; depth 6 allows up to 64 leaves).

The two are not the same algorithm: HistGradientBoosting grows leaf-wise with
Newton (gradient and hessian) split gains and ``min_samples_leaf=20`` and
``l2_regularization=0``; treelib grows scikit-learn's ``GradientBoosting``
trees (squared-error splits on the negative gradient, ``min_samples_leaf=1``,
one Newton step per leaf). Both use 255 bins and one thread.

Each fit runs in a FRESH SUBPROCESS with ``OMP_NUM_THREADS=1`` and
``torch.set_num_threads(1)``; it records the fit time, the test accuracy and
the 1-minute load average before and after. A fit that runs over ``--budget``
seconds is killed and recorded as ``over budget``. Rows are appended to the CSV
(``--out``) with the environment (versions, CPU count, platform).

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_boosting.py --sizes 100000 1000000 \
        --out benchmarks/results/boosting_fit.csv
"""

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone

FIELDS = (
    "date",
    "model",
    "n",
    "p",
    "n_test",
    "n_estimators",
    "max_depth",
    "fit_s",
    "ratio_to_sklearn_hist",
    "test_acc",
    "n_leaves_mean",
    "load_before",
    "load_after",
    "threads",
    "python",
    "torch",
    "sklearn",
    "cpus",
    "platform",
    "status",
)
MODELS = ("sklearn-hist", "treelib")


def make_data(n, p, n_test):
    """Training and test sets from one ``make_classification`` draw (as bench_fast.py)."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n + n_test, n_features=p, n_informative=min(p, 10), n_redundant=0,
        random_state=0,
    )  # fmt: skip
    return X[:n], y[:n], X[n:], y[n:]


def make_model(model, n_estimators, max_depth):
    if model == "treelib":
        from treelib import GradientBoostingClassifier

        return GradientBoostingClassifier(
            n_estimators=n_estimators, max_depth=max_depth, learning_rate=0.1,
            tree_method="hist", max_bins=255, random_state=0,
        )  # fmt: skip
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_iter=n_estimators, max_depth=max_depth, max_leaf_nodes=None, learning_rate=0.1,
        early_stopping=False, max_bins=255, random_state=0,
    )  # fmt: skip


def mean_leaves(model, fitted):
    """Mean number of leaves per tree."""
    if model == "treelib":
        return sum(t.tree_.n_leaves for t in fitted.estimators_.ravel()) / fitted.estimators_.size
    predictors = [p for stage in fitted._predictors for p in stage]
    return sum(int(p.nodes["is_leaf"].sum()) for p in predictors) / len(predictors)


def worker(args):
    """One fit in this (fresh) process; prints a JSON line."""
    import torch

    torch.set_num_threads(1)
    X, y, X_test, y_test = make_data(args.n, args.p, args.n_test)
    load_before = os.getloadavg()[0]
    model = make_model(args.model, args.n_estimators, args.max_depth)
    start = time.perf_counter()
    model.fit(X, y)
    fit_s = time.perf_counter() - start
    result = {
        "fit_s": fit_s,
        "test_acc": float((model.predict(X_test) == y_test).mean()),
        "n_leaves_mean": mean_leaves(args.model, model),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "threads": torch.get_num_threads(),
    }
    print(json.dumps(result))


def environment():
    import sklearn
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "sklearn": sklearn.__version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def run_one(args, model, n):
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--model", model]
    command += ["--n", str(n), "--p", str(args.p), "--n-test", str(args.n_test)]
    command += ["--n-estimators", str(args.n_estimators), "--max-depth", str(args.max_depth)]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    row = {"model": model, "n": n, "p": args.p, "n_test": args.n_test}
    row |= {"n_estimators": args.n_estimators, "max_depth": args.max_depth}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.budget, env=env)
    except subprocess.TimeoutExpired:
        return row | {"status": f"over budget: > {args.budget} s"}
    if done.returncode != 0:
        return row | {"status": "failed: " + done.stderr.strip().splitlines()[-1][:200]}
    return row | json.loads(done.stdout.strip().splitlines()[-1]) | {"status": "ok"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--n-estimators", type=int, default=100)
    parser.add_argument("--max-depth", type=int, default=6)
    parser.add_argument("--budget", type=float, default=900.0)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--out", default="benchmarks/results/boosting_fit.csv")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    env = environment()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows = []
    for n in args.sizes:
        reference = None
        for model in args.models:
            row = run_one(args, model, n) | env | {"date": date}
            if model == "sklearn-hist" and row["status"] == "ok":
                reference = row["fit_s"]
            if row.get("fit_s") is not None and reference:
                row["ratio_to_sklearn_hist"] = round(row["fit_s"] / reference, 2)
            print({k: row.get(k) for k in ("model", "n", "fit_s", "test_acc", "load_before",
                                           "load_after", "status")}, flush=True)  # fmt: skip
            rows.append(row)
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow({k: (round(v, 4) if isinstance(v, float) else v)
                             for k, v in row.items()})  # fmt: skip


if __name__ == "__main__":
    main()
