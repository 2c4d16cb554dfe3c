"""Time the fit of a random forest and of AdaBoost on the heart data, treelib vs scikit-learn.

The data are the 303 Cleveland patients of Chapter 6
(``treelib.datasets.load_heart_disease``), with the 6 missing codes filled by
the most frequent value of their column. In one run we time, for each
ensemble, the best of ``--repeats`` fits:

- a random forest of ``--trees`` trees: ``treelib.RandomForestClassifier``
  against ``sklearn.ensemble.RandomForestClassifier(n_jobs=1)`` (one core for
  both; treelib's torch is set to ``--threads`` threads);
- AdaBoost with ``--stumps`` stumps: ``treelib.AdaBoostClassifier`` against
  ``sklearn.ensemble.AdaBoostClassifier(DecisionTreeClassifier(max_depth=1))``.

For each fit we record the time, its ratio to scikit-learn's, the number of
learners actually fitted and the training accuracy. The table is printed and
written as CSV.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_ensembles.py --repeats 3 \
        --out benchmarks/results/ensembles_fit.csv
"""

import argparse
import os

import numpy as np
import torch
from bench_common import best_of, machine, timed, versions, write_csv
from sklearn import ensemble
from sklearn.impute import SimpleImputer
from sklearn.tree import DecisionTreeClassifier as SklearnTree

import treelib
from treelib.datasets import load_heart_disease

FIELDS = (
    "ensemble",
    "library",
    "n_estimators",
    "fit_seconds",
    "ratio_to_sklearn",
    "learners_fitted",
    "train_accuracy",
    "runs",
)


def heart_data():
    """The 303 patients, missing codes filled with each column's most frequent value."""
    X, y = load_heart_disease(return_X_y=True, as_frame=False)
    return SimpleImputer(strategy="most_frequent").fit_transform(X), y


def make_models(n_trees, n_stumps, seed=0):
    """(ensemble, library) -> an unfitted model; scikit-learn's first, as the reference."""
    forest = f"random forest, {n_trees} trees"
    boost = f"AdaBoost, {n_stumps} stumps"
    return {
        (forest, "scikit-learn"): lambda: ensemble.RandomForestClassifier(
            n_estimators=n_trees, n_jobs=1, random_state=seed
        ),
        (forest, "treelib"): lambda: treelib.RandomForestClassifier(
            n_estimators=n_trees, random_state=seed
        ),
        (boost, "scikit-learn"): lambda: ensemble.AdaBoostClassifier(
            SklearnTree(max_depth=1), n_estimators=n_stumps, random_state=seed
        ),
        (boost, "treelib"): lambda: treelib.AdaBoostClassifier(
            n_estimators=n_stumps, random_state=seed
        ),
    }


def best_fit_time(make, X, y, repeats):
    """Best-of-``repeats`` wall time of ``make().fit(X, y)``, and the last fitted model."""
    best, _, model = best_of(lambda: timed(make().fit, X, y), repeats)
    return best, model


def warm_up(models, X, y):
    """One small fit of each kind, so that no timing pays for lazy initialisation."""
    for make in models.values():
        model = make().set_params(n_estimators=2)
        model.fit(X[:50], y[:50])


def run(n_trees, n_stumps, repeats):
    X, y = heart_data()
    models = make_models(n_trees, n_stumps)
    warm_up(models, X, y)
    rows, reference = [], {}
    for (name, library), make in models.items():
        seconds, model = best_fit_time(make, X, y, repeats)
        if library == "scikit-learn":
            reference[name] = seconds
        row = {
            "ensemble": name,
            "library": library,
            "n_estimators": model.n_estimators,
            "fit_seconds": seconds,
            "ratio_to_sklearn": seconds / reference[name],
            "learners_fitted": len(model.estimators_),
            "train_accuracy": float(np.mean(model.predict(X) == y)),
            "runs": repeats,
        }
        rows.append(row)
        print(
            f"  {name:<26} {library:<12} fit {seconds:8.3f} s"
            f"  x{row['ratio_to_sklearn']:6.1f}  acc {row['train_accuracy']:.4f}",
            flush=True,
        )
    return rows


def markdown_table(rows):
    lines = [
        "| ensemble | library | fit time (s) | time / scikit-learn | learners | train accuracy |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['ensemble']} | {r['library']} | {r['fit_seconds']:.3f}"
            f" | {r['ratio_to_sklearn']:.1f} | {r['learners_fitted']} | {r['train_accuracy']:.4f} |"
        )
    return "\n".join(lines)


CSV_FORMATS = {"fit_seconds": ".4f", "ratio_to_sklearn": ".2f", "train_accuracy": ".4f"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=100, help="trees per forest")
    parser.add_argument("--stumps", type=int, default=100, help="AdaBoost rounds")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many fits")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads (scikit-learn uses one core here)"
    )
    parser.add_argument("--out", default="benchmarks/results/ensembles_fit.csv")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    print(
        f"{versions(torch.get_num_threads())}, {machine()}, load average "
        f"{os.getloadavg()[0]:.1f}; heart data 303 x 13, best of {args.repeats}",
        flush=True,
    )
    rows = run(args.trees, args.stumps, args.repeats)
    write_csv(rows, args.out, FIELDS, CSV_FORMATS)
    print()
    print(markdown_table(rows))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
