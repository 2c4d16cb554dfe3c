"""Speed of path-dependent TreeSHAP: treelib.explain against shap.TreeExplainer (Chapter 10).

A 100-tree random forest of depth 8 on 10 features (make_regression, 10,000
rows), explaining the 10,000 rows, on one thread: torch.set_num_threads(1)
for treelib; shap's TreeExplainer runs its C++ TreeSHAP on one thread (it
does not start threads of its own) and threadpoolctl limits any BLAS/OpenMP
pool to one. Each library runs in a fresh process, best of ``--repeats``
timings of ``shap_values`` (the explainer's construction is timed apart).
The machine's load average is recorded beside each timing (2 shared cores:
read the ratio, not the seconds).

Writes benchmarks/results/explain_speed.csv and copies it to
treelib/data/explain_speed.csv, the copy the chapter reads
(:func:`treelib.datasets.explain_speed_table`).

    python benchmarks/explain_speed.py [--rows 10000] [--repeats 3] [--device cpu]
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "explain_speed.csv"
BUNDLED = ROOT / "treelib" / "data" / "explain_speed.csv"


def child(library, estimator, rows, repeats, device):
    import numpy as np
    import torch
    from sklearn.datasets import make_regression
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    X, y = make_regression(n_samples=10_000, n_features=10, noise=1.0, random_state=0)
    X = X.astype(np.float32)
    if estimator == "sklearn":
        from sklearn.ensemble import RandomForestRegressor
    else:
        from treelib import RandomForestRegressor
    model = RandomForestRegressor(n_estimators=100, max_depth=8, random_state=0).fit(X, y)
    X = X[:rows]
    times = []
    with threadpool_limits(limits=1):
        start = time.perf_counter()
        if library == "shap":
            import shap

            explainer = shap.TreeExplainer(model)
        else:
            from treelib.explain import TreeExplainer

            explainer = TreeExplainer(model, device=device)
        setup = time.perf_counter() - start
        for _ in range(repeats):
            start = time.perf_counter()
            values = explainer.shap_values(X)
            if device != "cpu":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
    check = float(
        np.abs(values.sum(1) + np.ravel(explainer.expected_value)[0] - model.predict(X)).max()
    )
    print(
        json.dumps(
            {
                "setup_s": setup,
                "best_s": min(times),
                "times": times,
                "efficiency_error": check,
                "load": os.getloadavg()[0],
            }
        )
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.rows, args.repeats, args.device)
        return
    rows = []
    for estimator in ("sklearn", "treelib"):
        for library in ("shap", "treelib"):
            if library == "shap" and estimator == "treelib":
                continue  # shap does not read treelib's models
            load_before = os.getloadavg()[0]
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    library,
                    estimator,
                    "--rows",
                    str(args.rows),
                    "--repeats",
                    str(args.repeats),
                    "--device",
                    args.device,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            row = {
                "model": f"{estimator} RandomForestRegressor(100, max_depth=8)",
                "explainer": library,
                "device": args.device if library == "treelib" else "cpu",
                "rows": args.rows,
                "threads": 1,
                "setup_s": round(result["setup_s"], 3),
                "best_s": round(result["best_s"], 3),
                "times_s": " ".join(f"{t:.3f}" for t in result["times"]),
                "efficiency_error": f"{result['efficiency_error']:.1e}",
                "load_before": round(load_before, 2),
                "load_after": round(result["load"], 2),
                "cpus": os.cpu_count(),
            }
            rows.append(row)
            print(row, flush=True)
    shap_s = next(r["best_s"] for r in rows if r["explainer"] == "shap")
    for r in rows:
        r["ratio_to_shap"] = round(r["best_s"] / shap_s, 3)
    RESULTS.parent.mkdir(exist_ok=True)
    with open(RESULTS, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    shutil.copyfile(RESULTS, BUNDLED)  # the copy the chapter reads from the package
    print(f"wrote {RESULTS} and {BUNDLED}")


if __name__ == "__main__":
    main()
