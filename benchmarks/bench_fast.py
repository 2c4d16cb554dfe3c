"""Chapter 7's benchmark: how fast are the level-wise and histogram builders?

In one run, for ``make_classification(n, p, n_informative=min(p, 10),
n_redundant=0, random_state=0)`` (plus a held-out test set drawn with it) and
every ``n`` in ``--sizes`` and ``p`` in ``--features``, it fits full-depth
classification trees with

- ``sklearn``: scikit-learn's ``DecisionTreeClassifier`` (compiled Cython);
- ``recursive``, ``levelwise``, ``hist``: treelib's three builders
  (``tree_method=...``; ``hist`` with the default 255 bins);
- ``naive``: the O(n^2)-per-node "seed-style" tree of ``bench_tree.py``, only
  at ``--naive-sizes`` and only if it finishes within ``--naive-budget``.

Each (method, n, p) runs in a FRESH SUBPROCESS, which loads the data, warms
up with a tiny fit, records its resident memory (RSS), fits (timed), reads its
peak RSS (peak memory of the fit = peak RSS - RSS right before the fit), predicts
the test set (timed, accuracy) and repeats the fit for the best-of ``--repeats``
time. It also records the 1-minute load average. A child process inherits its
parent's ``ru_maxrss``, so where Linux allows, the peak mark is reset just
before the fit (``/proc/self/clear_refs``) and read as ``VmHWM``; elsewhere the
peak is ``ru_maxrss``.

Budgets: a fit that runs over ``--budget`` seconds is killed and recorded as
``over budget``. A method is skipped at a size when its time at the previous
size, scaled up linearly, exceeds 2.5 x budget (with 10x steps: when it took
more than budget / 4), or its peak memory, scaled likewise, exceeds
``--max-gb``. The previous size is taken from this run or, failing that, from
the latest row in ``--out``. Skips are recorded as rows with no time.

``--forest`` adds random forests of 100 trees at 100k x 10: treelib's
``RandomForestClassifier(tree_method=...)`` for levelwise and hist, against
scikit-learn's, each with ``n_jobs`` from ``--jobs`` (default: 1, one thread
each, and -1, every core each; the ``threads`` column records the threads
used: torch's intra-op threads for single trees, ``n_jobs`` for forests).

``--device cuda`` grows treelib's trees on a GPU (``device="cuda"``;
scikit-learn runs on the CPU, as it must). The rows then have three more
columns: ``device`` (the GPU's name for treelib, ``cpu`` for scikit-learn),
``device_peak_mb`` (the GPU memory the fit allocated at its peak, over what was
allocated before it) and ``trees_per_batch`` (``--trees-per-batch``: the
forests' batch size instead of ``treelib.batched.trees_per_batch``'s, to
measure what a GPU wants). Write them to their own ``--out`` file.

Ratios (``fit_s / sklearn's fit_s``) only compare fits of the same run: the
machine may be shared, so absolute times are noisy.

Usage (from the repository root)::

    .venv/bin/python benchmarks/bench_fast.py --sizes 10000 100000 --features 10 \
        --run quick --out benchmarks/results/fast_fit.csv
"""

import argparse
import csv
import gc
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime

import numpy as np
from bench_common import NaiveTree, append_csv, fmt, naive_input, node_count

HERE = os.path.dirname(os.path.abspath(__file__))
TREE_METHODS = ("sklearn", "recursive", "levelwise", "hist", "naive")
FOREST_METHODS = ("sklearn", "levelwise", "hist")
FIELDS = (
    "run",
    "model",
    "method",
    "n",
    "p",
    "fit_s",
    "predict_s",
    "ratio_to_sklearn",
    "test_acc",
    "peak_mb",
    "load",
    "nodes",
    "repeats",
    "threads",
    "status",
)
DEVICE_FIELDS = FIELDS + ("device", "device_peak_mb", "trees_per_batch")


# --- data -------------------------------------------------------------------------


def make_data(n, p, n_test):
    """Training and held-out test sets from one ``make_classification`` draw."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n + n_test,
        n_features=p,
        n_informative=min(p, 10),
        n_redundant=0,
        random_state=0,
    )
    return X[:n], y[:n], X[n:], y[n:]


def test_size(n):
    return min(max(n // 4, 1000), 100_000)


# --- the worker: one fit in a fresh process ---------------------------------------------


def rss_mb():
    """Current resident set size of this process (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def reset_peak():
    """Reset the peak-RSS mark to the current RSS (Linux >= 4.0); False if not allowed.

    A child process inherits its parent's peak in ``ru_maxrss``, so without a
    reset a small fit could hide under the driver's own peak.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb(was_reset):
    """Peak RSS since the reset (``VmHWM``), else ``ru_maxrss``."""
    if was_reset:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def make_model(model, method, deadline, n_trees, jobs=1, device="cpu"):
    import sklearn.ensemble
    import sklearn.tree

    import treelib

    if model == "forest":
        if method == "sklearn":
            return sklearn.ensemble.RandomForestClassifier(n_trees, n_jobs=jobs, random_state=0)
        return treelib.RandomForestClassifier(
            n_trees, tree_method=method, n_jobs=jobs, random_state=0, device=device
        )
    if method == "sklearn":
        return sklearn.tree.DecisionTreeClassifier(random_state=0)
    if method == "naive":
        sys.path.insert(0, HERE)
        return NaiveTree(deadline)
    return treelib.DecisionTreeClassifier(tree_method=method, random_state=0, device=device)


def device_memory(on_cuda):
    """(allocated bytes, peak allocated bytes) on the GPU; None where the fit is not on one."""
    import torch

    if not on_cuda:
        return None
    torch.cuda.synchronize()
    return torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated()


def worker(args):
    """Fit one (model, method) on the saved data; print one JSON line."""
    import torch

    torch.set_num_threads(args.threads)
    if isinstance(args.jobs, list):  # (one value in a worker)
        args.jobs = args.jobs[0]
    data = np.load(args.worker_data)
    X, y, X_test, y_test = data["X"], data["y"], data["X_test"], data["y_test"]
    if args.method == "naive":  # it works on tensors
        X, y = naive_input(X, y)
        X_test, y_test = naive_input(X_test, y_test)
    device = "cpu" if args.method in ("sklearn", "naive") else args.device
    if args.trees_per_batch:  # the forests' batch size, fixed
        import treelib.batched

        treelib.batched.trees_per_batch = lambda *_, **__: args.trees_per_batch
    tiny = slice(0, 300)
    make_model(args.model, args.method, math.inf, 2, device=device).fit(X[tiny], y[tiny])  # warm-up
    deadline = time.perf_counter() + args.naive_budget
    threads = torch.get_num_threads()
    if args.model == "forest":  # the forest's own threads (n_jobs), each on one core
        from joblib import effective_n_jobs

        threads = effective_n_jobs(args.jobs) if device == "cpu" else 1  # a GPU: one thread
    out = dict(load=os.getloadavg()[0], status="ok", threads=threads)
    on_cuda = torch.device(device).type == "cuda"
    if args.device != "cpu":
        name = torch.cuda.get_device_name() if on_cuda else device
        batch = args.trees_per_batch if args.model == "forest" and device != "cpu" else 0
        out.update(device=name, trees_per_batch=batch or math.nan)
        if on_cuda:
            torch.cuda.reset_peak_memory_stats()
    gc.collect()
    was_reset = reset_peak()
    before, device_before = rss_mb(), device_memory(on_cuda)
    try:
        start = time.perf_counter()
        model = make_model(args.model, args.method, deadline, args.trees, args.jobs, device)
        model.fit(X, y)  # returns numpy arrays: the GPU's work is done when it returns
        fit_s = time.perf_counter() - start
    except Exception as error:  # the naive tree's BudgetExceeded
        if args.method != "naive":
            raise
        out.update(status=f"skipped: naive over {args.naive_budget:g} s ({type(error).__name__})")
        print(json.dumps(out))
        return
    out["peak_mb"] = peak_rss_mb(was_reset) - before
    if device_before is not None:
        out["device_peak_mb"] = (device_memory(on_cuda)[1] - device_before[0]) / 2**20
    start = time.perf_counter()
    predicted = np.asarray(model.predict(X_test))
    out["predict_s"] = time.perf_counter() - start
    out["test_acc"] = float((predicted == np.asarray(y_test)).mean())
    out["nodes"] = node_count(model)
    runs = 1
    del model
    for _ in range(args.repeats - 1):  # more fits for a best-of time
        gc.collect()
        start = time.perf_counter()
        make_model(args.model, args.method, math.inf, args.trees, args.jobs, device).fit(X, y)
        fit_s, runs = min(fit_s, time.perf_counter() - start), runs + 1
    out.update(fit_s=fit_s, repeats=runs)
    print(json.dumps(out))


# --- the driver -------------------------------------------------------------------------


def run_worker(args, model, method, data_path, budget):
    """Run one fit in a fresh process; kill it once its fits pass the budget."""
    timeout = budget * args.repeats_for + 120  # slack: start-up, loading, predicting
    command = [sys.executable, os.path.abspath(__file__), "--worker-data", data_path]
    command += ["--model", model, "--method", method, "--threads", str(args.threads)]
    command += ["--repeats", str(args.repeats_for), "--naive-budget", str(args.naive_budget)]
    jobs = args.jobs if isinstance(args.jobs, int) else 1  # (a list until the forests)
    command += ["--trees", str(args.trees), "--jobs", str(jobs), "--device", args.device]
    command += ["--trees-per-batch", str(args.trees_per_batch or 0)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(status=f"over budget: > {budget:g} s", load=os.getloadavg()[0])
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["?"]
        return dict(status=f"error: {tail[0][:80]}", load=os.getloadavg()[0])
    return json.loads(done.stdout.strip().splitlines()[-1])


def blank_row(run, model, method, n, p):
    row = {k: math.nan for k in DEVICE_FIELDS}
    row.update(run=run, model=model, method=method, n=n, p=p, status="ok")
    return row


def should_skip(history, n, args):
    """Skip a fit predicted to run over the time budget or the memory limit.

    The prediction scales the previous size's time and peak memory linearly in n:
    skip when the time would exceed 2.5 x budget, or the memory ``--max-gb``.
    """
    if not history:
        return None
    n_prev, t_prev, peak_prev, status = history[-1]
    if status.startswith("skipped"):
        return status
    if status != "ok":
        return f"skipped: {status} at n={n_prev}"
    if t_prev * n / n_prev > 2.5 * args.budget:
        return f"skipped: {t_prev:.0f} s at n={n_prev}"
    if peak_prev * n / n_prev > 1024 * args.max_gb:
        return f"skipped: memory ~{peak_prev * n / n_prev / 1024:.0f} GB > {args.max_gb:g} GB"
    return None


def earlier_history(path, model, methods, p, n_min):
    """Each method's latest results at sizes below ``n_min`` in an earlier run's CSV."""
    history = {m: {} for m in methods}
    if os.path.exists(path):
        with open(path) as f:
            for r in csv.DictReader(f):
                n = int(r["n"])
                if r["model"] == model and r["method"] in history and int(r["p"]) == p:
                    if n < n_min:  # later rows replace earlier ones
                        fit, peak = float(r["fit_s"]), float(r["peak_mb"])
                        history[r["method"]][n] = (n, fit, peak, r["status"])
    return {m: [h[n] for n in sorted(h)] for m, h in history.items()}


def bench(args, model, methods, sizes, p, tmp):
    """Every method at every size for one p; returns the rows."""
    rows, history = [], earlier_history(args.out, model, methods, p, min(sizes))
    for n in sizes:
        X, y, X_test, y_test = make_data(n, p, test_size(n))
        data_path = os.path.join(tmp, f"data_{n}_{p}.npz")
        np.savez(data_path, X=X, y=y, X_test=X_test, y_test=y_test)
        del X, y, X_test, y_test
        args.repeats_for = args.repeats or (3 if n <= 10_000 else 1)
        size_rows = []
        for method in methods:
            row = blank_row(args.run, model, method, n, p)
            if method == "naive" and n not in args.naive_sizes:
                continue
            skip = should_skip(history[method], n, args)
            if skip:
                row.update(status=skip, load=os.getloadavg()[0])
            else:
                budget = args.forest_budget if model == "forest" else args.budget
                row.update(run_worker(args, model, method, data_path, budget))
            history[method].append((n, row["fit_s"], row["peak_mb"], row["status"]))
            size_rows.append(row)
        reference = [r["fit_s"] for r in size_rows if r["method"] == "sklearn"] or [math.nan]
        for r in size_rows:
            r["ratio_to_sklearn"] = r["fit_s"] / reference[0]
            print_row(r)
        rows += size_rows
        os.remove(data_path)
    return rows


# --- output -------------------------------------------------------------------------


def device_row(r):
    """Does the row come from a ``--device`` run (a device named, not NaN)?"""
    return isinstance(r.get("device"), str)


def print_row(r):
    print(
        f"  {r['model']:<6} {r['method']:<10} n={r['n']:>8} p={r['p']:>3}"
        f"  fit {fmt(r['fit_s'], '.3f'):>9} s  x{fmt(r['ratio_to_sklearn'], '.2f'):>6}"
        f"  predict {fmt(r['predict_s'], '.3f'):>7} s  acc {fmt(r['test_acc'], '.4f'):>6}"
        f"  peak {fmt(r['peak_mb'], '.0f'):>5} MB  load {fmt(r['load'], '.1f')}  {r['status']}"
        + (f"  {r['device']}: {fmt(r['device_peak_mb'], '.0f')} MB" if device_row(r) else ""),
        flush=True,
    )


def markdown_table(rows):
    lines = [
        "| model | method | n | p | fit (s) | x sklearn | predict (s) | test acc | peak MB "
        "| load | status |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['method']} | {r['n']:,} | {r['p']} | {fmt(r['fit_s'], '.3f')}"
            f" | {fmt(r['ratio_to_sklearn'], '.2f')} | {fmt(r['predict_s'], '.3f')}"
            f" | {fmt(r['test_acc'], '.4f')} | {fmt(r['peak_mb'], '.0f')}"
            f" | {fmt(r['load'], '.1f')} | {r['status']} |"
        )
    return "\n".join(lines)


CSV_FORMATS = {
    "fit_s": ".4f",
    "predict_s": ".4f",
    "ratio_to_sklearn": ".3f",
    "test_acc": ".4f",
    "peak_mb": ".1f",
    "load": ".2f",
    "nodes": ".0f",
    "repeats": ".0f",
    "threads": ".0f",
    "device_peak_mb": ".1f",
    "trees_per_batch": ".0f",
}


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--features", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--methods", nargs="+", default=list(TREE_METHODS), choices=TREE_METHODS)
    parser.add_argument(
        "--repeats", type=int, default=None, help="best of; default 3 up to n=10k, else 1"
    )
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per fit")
    parser.add_argument("--max-gb", type=float, default=8.0, help="predicted peak memory limit")
    parser.add_argument("--naive-sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--naive-budget", type=float, default=60.0)
    parser.add_argument("--forest", action="store_true", help="also time 100-tree forests")
    parser.add_argument("--forest-only", action="store_true", help="only the forests")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--forest-budget", type=float, default=3600.0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument(
        "--jobs", type=int, nargs="+", default=[1, -1], help="n_jobs of the forests"
    )
    parser.add_argument("--device", default="cpu", help="treelib's device (e.g. cuda)")
    parser.add_argument(
        "--forest-methods", nargs="+", default=list(FOREST_METHODS), choices=FOREST_METHODS
    )
    parser.add_argument("--trees-per-batch", type=int, default=0, help="0: treelib's choice")
    parser.add_argument("--run", default=datetime.now().strftime("%Y-%m-%dT%H:%M"))
    parser.add_argument("--out", default="benchmarks/results/fast_fit.csv")
    # internal: run one fit in this (fresh) process
    parser.add_argument("--worker-data", help=argparse.SUPPRESS)
    parser.add_argument("--model", default="tree", help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    if args.worker_data:
        return worker(args)
    import sklearn
    import torch

    gpu = f", {torch.cuda.get_device_name()}" if args.device.startswith("cuda") else ""
    print(
        f"run {args.run}: python {platform.python_version()}, torch {torch.__version__}"
        f" ({args.threads} threads), scikit-learn {sklearn.__version__},"
        f" {os.cpu_count()} CPUs{gpu}, load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if not args.forest_only:
            sizes = sorted(set(args.sizes) | set(args.naive_sizes) if "naive" in args.methods
                           else set(args.sizes))  # fmt: skip
            for p in args.features:
                rows += bench(args, "tree", args.methods, sizes, p, tmp)
        if args.forest or args.forest_only:
            args.repeats = 1
            for jobs in list(args.jobs):  # one thread each, then every core each
                args.jobs = jobs
                rows += bench(args, "forest", args.forest_methods, [100_000], 10, tmp)
    fields = FIELDS if args.device == "cpu" else DEVICE_FIELDS
    append_csv(rows, args.out, fields, CSV_FORMATS)
    print()
    print(markdown_table(rows))
    print(f"\nappended {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
