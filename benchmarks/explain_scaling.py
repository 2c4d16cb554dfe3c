"""Shapley values of one sample: brute force (2**d subsets) against TreeSHAP (Chapter 10).

For d = 2, 4, 6, ... features, a random forest
``treelib.RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0)``
is fitted on ``make_regression(n_samples=2000, n_features=d, random_state=0)``
and the first sample is explained twice:

- ``brute_force``: :func:`treelib.explain.shapley_values_brute_force`, the
  definition (every subset of the features, the tree's own expectation for each);
- ``treeshap``: path-dependent TreeSHAP, ``TreeExplainer(model).shap_values(x[None])``.
  Its time includes building the explainer (its tables of every leaf's
  patterns), which is most of the work for one sample.

One torch thread (``torch.set_num_threads(1)``, threadpoolctl limits any BLAS
pool to one). Best of ``--repeats`` timings; a method whose first timing takes
over ``--slow-s`` seconds is timed once. Brute force stops for the larger ``d``
once one of its timings exceeds ``--limit-s``; TreeSHAP goes on to ``--max-d``.
The two methods' values must agree: ``max_abs_diff`` (over the features) is
recorded, and the run stops if it exceeds ``1e-9`` times the largest value.
``efficiency_error`` is ``|base + sum(values) - model.predict(x)|`` (TreeSHAP
rows) or ``|base + sum(phi) - v(all features)|`` (brute force rows).
The 1-minute load average is recorded before and after each timing: the
machine has 2 shared cores, so read the ratio, not the seconds.

Writes benchmarks/results/explain_scaling.csv and copies it to
treelib/data/explain_scaling.csv, the copy the chapter reads
(:func:`treelib.datasets.explain_scaling_table`).

    python benchmarks/explain_scaling.py [--max-d 30] [--limit-s 60] [--repeats 3]
"""

import argparse
import csv
import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import make_regression
from threadpoolctl import threadpool_limits

from treelib import RandomForestRegressor
from treelib.explain import TreeExplainer, shapley_values_brute_force

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "explain_scaling.csv"
BUNDLED = ROOT / "treelib" / "data" / "explain_scaling.csv"
FIELDS = (
    "date", "d", "method", "seconds", "repeats", "times_s", "subsets", "n_leaves",
    "max_abs_diff", "max_rel_diff", "efficiency_error", "load_before", "load_after",
    "threads", "cpus",
)  # fmt: skip
TOLERANCE = 1e-9  # relative to the largest |value|


def fit(d):
    X, y = make_regression(n_samples=2000, n_features=d, random_state=0)
    model = RandomForestRegressor(n_estimators=10, max_depth=6, random_state=0).fit(X, y)
    return model, X[0]


def brute_force(model, x):
    phi, base = shapley_values_brute_force(model, x)
    return np.asarray(phi, dtype=np.float64), float(np.ravel(base)[0])


def treeshap(model, x):
    explainer = TreeExplainer(model)
    values = explainer.shap_values(x[None])[0]
    return values, float(np.ravel(explainer.expected_value)[0])


def timed(method, model, x, repeats, slow_s):
    """Best of ``repeats`` timings (one if the first is slower than ``slow_s``)."""
    times, load_before = [], os.getloadavg()[0]
    for _ in range(repeats):
        start = time.perf_counter()
        values, base = method(model, x)
        times.append(time.perf_counter() - start)
        if times[0] > slow_s:
            break
    return values, base, times, load_before, os.getloadavg()[0]


def run(max_d=30, step=2, limit_s=60.0, repeats=3, slow_s=10.0, out=RESULTS):
    torch.set_num_threads(1)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    rows, brute = [], True
    treeshap(*fit(2))  # warm torch up: the first call pays for its start
    with threadpool_limits(limits=1):
        for d in range(2, max_d + 1, step):
            model, x = fit(d)
            n_leaves = sum(int((t.tree_.children_left == -1).sum()) for t in model.estimators_)
            prediction = float(model.predict(x[None])[0])
            shap, base, times, before, after = timed(treeshap, model, x, repeats, slow_s)
            found = {"treeshap": (times, before, after, abs(base + shap.sum() - prediction))}
            diff = rel = None
            if brute:
                phi, v0, times, before, after = timed(brute_force, model, x, repeats, slow_s)
                # v(all features) is the model's prediction: the tree is fully known
                found["brute_force"] = (times, before, after, abs(v0 + phi.sum() - prediction))
                diff = float(np.abs(phi - shap).max())
                rel = diff / max(float(np.abs(phi).max()), 1e-300)
                if rel > TOLERANCE:
                    raise SystemExit(f"d={d}: TreeSHAP and brute force differ by {diff:.3g}")
                brute = max(times) <= limit_s
            for method, (times, before, after, efficiency) in found.items():
                row = {
                    "date": date,
                    "d": d,
                    "method": method,
                    "seconds": round(min(times), 6),
                    "repeats": len(times),
                    "times_s": " ".join(f"{t:.6f}" for t in times),
                    "subsets": 2**d if method == "brute_force" else "",
                    "n_leaves": n_leaves,
                    "max_abs_diff": "" if diff is None else f"{diff:.1e}",
                    "max_rel_diff": "" if rel is None else f"{rel:.1e}",
                    "efficiency_error": f"{efficiency:.1e}",
                    "load_before": round(before, 2),
                    "load_after": round(after, 2),
                    "threads": 1,
                    "cpus": os.cpu_count(),
                }
                rows.append(row)
                print({k: row[k] for k in ("d", "method", "seconds", "repeats", "max_abs_diff",
                       "load_before")}, flush=True)  # fmt: skip
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    if out.resolve() == RESULTS:
        shutil.copyfile(RESULTS, BUNDLED)  # the copy the chapter reads from the package
        print(f"wrote {RESULTS} and {BUNDLED}")
    else:
        print(f"wrote {out}")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-d", type=int, default=30)
    parser.add_argument("--step", type=int, default=2)
    parser.add_argument("--limit-s", type=float, default=60.0, help="brute force stops after")
    parser.add_argument("--slow-s", type=float, default=10.0, help="time once above this")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS))
    args = parser.parse_args(argv)
    run(args.max_d, args.step, args.limit_s, args.repeats, args.slow_s, args.out)


if __name__ == "__main__":
    main()
