"""Chapter 9's benchmark: histogram gradient boosting in four libraries, scikit-learn's defaults.

For ``make_classification(n + n_test, p, n_informative=min(p, 10), n_redundant=0,
random_state=0)`` (the data of ``bench_fast.py`` and ``bench_boosting.py``; the last
``n_test`` rows are the held-out test set) and every ``n`` in ``--sizes`` it fits

- ``sklearn``: ``sklearn.ensemble.HistGradientBoostingClassifier(random_state=0)``,
  scikit-learn 1.9.1's defaults: ``max_iter=100``, ``learning_rate=0.1``,
  ``max_leaf_nodes=31``, ``max_depth=None``, ``min_samples_leaf=20``,
  ``l2_regularization=0``, ``max_bins=255``, ``early_stopping="auto"`` (on above
  10,000 samples: ``validation_fraction=0.1``, ``n_iter_no_change=10``,
  ``tol=1e-7``, ``scoring="loss"``);
- ``treelib``: ``treelib.HistGradientBoostingClassifier(random_state=0)``, the same
  defaults (``device=--device``); recorded as ``not available`` while treelib has no
  such class;
- ``lightgbm``: ``lightgbm.LGBMClassifier(n_estimators=100, learning_rate=0.1,
  num_leaves=31, max_depth=-1, min_child_samples=20, min_child_weight=1e-3,
  reg_lambda=0, max_bin=255)``: scikit-learn's rules one for one (its
  ``min_hessian_to_split=1e-3`` is LightGBM's ``min_sum_hessian_in_leaf``), and
  both bin at most 200,000 samples (``bin_construct_sample_cnt``, scikit-learn's
  ``subsample``);
- ``xgboost``: ``xgboost.XGBClassifier(tree_method="hist", grow_policy="lossguide",
  max_leaves=31, max_depth=0, n_estimators=100, learning_rate=0.1, max_bin=255,
  reg_lambda=0, min_child_weight=1e-3)``: leaf-wise growth as the others (XGBoost's
  default is depth-wise), no L2 penalty (XGBoost's default is 1). XGBoost has no
  minimum number of samples per leaf: only the hessian minimum, here scikit-learn's
  1e-3. Its bins come from a quantile sketch of all the samples.

**Early stopping: the same rule for all four.** scikit-learn's default stops early
above 10,000 samples, so the others do the same: the script holds out the same
validation set as scikit-learn (``train_test_split(test_size=0.1, stratify=y,
random_state=seed)``, with the seed scikit-learn draws from ``random_state=0``),
fits on the other 90% with the validation log-loss evaluated after every round, and
stops by scikit-learn's own rule (``_should_stop``: stop when none of the last 10
validation scores beats the one before them by more than ``tol=1e-7``; the first
score is the constant baseline's), through a callback (LightGBM's and XGBoost's
built-in early stopping compare with the best score so far, a slightly different
rule). Like scikit-learn, the model keeps every tree it grew (no roll-back to the
best round), and ``n_iter`` is the number of rounds grown. The split and the
validation are inside the timed fit, as they are inside scikit-learn's.
``--early-stopping off`` turns it off for all four (``early_stopping=False``, 100
rounds on all the training data).

**Threads.** ``--threads 1`` (default): each fit in a process with
``OMP_NUM_THREADS=1``, ``torch.set_num_threads(1)`` and ``n_jobs=1`` for LightGBM
and XGBoost. ``--threads all``: every core for scikit-learn, LightGBM and XGBoost
(OpenMP's default) and torch's default threads: the CPU side of the GPU comparison
(``--device cuda --threads all``: treelib on the GPU against scikit-learn on all of
that machine's cores).

**Each fit runs in a FRESH SUBPROCESS**, which loads the data (generated once per
size into ``--data-dir``), warms its library up with a tiny fit, resets the peak-RSS
mark (``/proc/self/clear_refs``, where Linux allows), records its RSS, fits (timed),
and records ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` after the fit: the peak
RSS of the process since the reset (``rss_before_mb``, ``peak_rss_mb``, and
``fit_peak_mb`` = peak - before, the memory the fit added at its peak). It records
the 1-minute load average before and after the fit, the test accuracy, ``n_iter``
and the mean number of leaves per tree. On a GPU, ``device_peak_mb`` is the GPU
memory the fit allocated at its peak.

**Runs alternate between the models** (round-robin, ``--repeats`` rounds, the order
rotated by one each round), so that load drifts hit all models alike;
``ratio_to_sklearn`` is a model's fit time over scikit-learn's in the SAME round.
A fit that runs over ``--budget`` seconds is killed and recorded as ``over budget``.
Rows are appended to ``--out`` after each round, with the run name (``--run``),
the environment (versions, commit, CPU count, platform) and the status.

``--summary`` prints the table Chapter 9 shows (model, median fit time, ratio,
accuracy, rounds, peak MB) from ``--out``, with
``treelib.datasets.hist_boosting_benchmark_table``.

Usage (from the repository root; LightGBM and XGBoost pinned for the benchmark only)::

    .venv/bin/pip install -r benchmarks/requirements-bench.txt
    .venv/bin/python benchmarks/bench_hist_boosting.py --sizes 100000 --repeats 3 \
        --run hgb-1 --out benchmarks/results/hist_boosting_fit.csv
    .venv/bin/python benchmarks/bench_hist_boosting.py --summary
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
from datetime import datetime, timezone
from importlib import metadata

from bench_common import append_csv
from bench_fast import make_data, reset_peak, rss_mb  # the data and the RSS helpers

FIELDS = (
    "date",
    "run",
    "round",
    "model",
    "device",
    "n",
    "p",
    "n_test",
    "threads",
    "early_stopping",
    "max_iter",
    "fit_s",
    "ratio_to_sklearn",
    "test_acc",
    "n_iter",
    "n_leaves_mean",
    "rss_before_mb",
    "peak_rss_mb",
    "fit_peak_mb",
    "device_peak_mb",
    "load_before",
    "load_after",
    "python",
    "torch",
    "sklearn",
    "lightgbm",
    "xgboost",
    "numba",
    "commit",
    "cpus",
    "platform",
    "status",
)
MODELS = ("sklearn", "treelib", "lightgbm", "xgboost")
DISTRIBUTIONS = {
    "torch": "torch",
    "sklearn": "scikit-learn",
    "lightgbm": "lightgbm",
    "xgboost": "xgboost-cpu",
    "numba": "numba",  # treelib's compiled CPU loops (treelib.compiled); "-": not used
}
# scikit-learn 1.9.1's HistGradientBoostingClassifier defaults, as used by all four.
MAX_ITER, LEARNING_RATE, MAX_LEAF_NODES, MIN_SAMPLES_LEAF, MAX_BINS = 100, 0.1, 31, 20, 255
MIN_HESSIAN = 1e-3  # scikit-learn's min_hessian_to_split (the grower's default)
VALIDATION_FRACTION, N_ITER_NO_CHANGE, TOL = 0.1, 10, 1e-7
RANDOM_STATE = 0


# --- data ----------------------------------------------------------------------------


def data_path(data_dir, n, p, n_test):
    return os.path.join(data_dir, f"hgb_n{n}_p{p}_test{n_test}.npz")


def write_data(path, n, p, n_test):
    """Draw the data once (in its own process) and save it for the workers."""
    import numpy as np

    X, y, X_test, y_test = make_data(n, p, n_test)
    np.savez(path + ".tmp.npz", X=X, y=y, X_test=X_test, y_test=y_test)
    os.replace(path + ".tmp.npz", path)


# --- early stopping: scikit-learn's rule for LightGBM and XGBoost -----------------------


class SklearnStoppingRule:
    """scikit-learn's ``_should_stop`` on a list of scores (higher is better).

    The scores are minus the validation log-loss, the first one the constant
    baseline's (scikit-learn scores the baseline before the first tree).
    """

    def __init__(self, baseline_loss, n_iter_no_change=N_ITER_NO_CHANGE, tol=TOL):
        self.scores = [-baseline_loss]
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol

    def add(self, loss):
        """Record a round's validation loss; True when training should stop."""
        self.scores.append(-loss)
        reference_position = self.n_iter_no_change + 1
        if len(self.scores) < reference_position:
            return False
        reference_score = self.scores[-reference_position] + self.tol
        return not any(s > reference_score for s in self.scores[-reference_position + 1 :])


def baseline_log_loss(y_train, y_val):
    """Validation log-loss of the constant prediction mean(y_train) (the baseline)."""
    import numpy as np

    p = float(np.mean(y_train))
    return float(-np.mean(np.where(y_val == 1, math.log(p), math.log1p(-p))))


def sklearn_seed():
    """The seed of scikit-learn's validation split: its ``_random_seed`` for ``random_state=0``."""
    import numpy as np
    from sklearn.utils import check_random_state

    return check_random_state(RANDOM_STATE).randint(np.iinfo(np.uint32).max, dtype="u8")


def sklearn_split(X, y):
    """scikit-learn's training / validation split for early stopping (``random_state=0``)."""
    from sklearn.model_selection import train_test_split

    return train_test_split(
        X, y, test_size=VALIDATION_FRACTION, stratify=y, random_state=sklearn_seed()
    )  # fmt: skip


class LightGBMModel:
    """LightGBM with scikit-learn's settings and early-stopping rule."""

    def __init__(self, early_stopping, n_jobs, max_iter=MAX_ITER):
        self.early_stopping, self.n_jobs, self.max_iter = early_stopping, n_jobs, max_iter

    def fit(self, X, y):
        import lightgbm

        self.model_ = lightgbm.LGBMClassifier(
            n_estimators=self.max_iter, learning_rate=LEARNING_RATE, num_leaves=MAX_LEAF_NODES,
            max_depth=-1, min_child_samples=MIN_SAMPLES_LEAF, min_child_weight=MIN_HESSIAN,
            reg_lambda=0.0, reg_alpha=0.0, min_split_gain=0.0, max_bin=MAX_BINS,
            subsample=1.0, colsample_bytree=1.0, n_jobs=self.n_jobs, random_state=RANDOM_STATE,
            verbose=-1,
        )  # fmt: skip
        if not self.early_stopping:
            self.model_.fit(X, y)
            self.n_iter_ = self.model_.booster_.current_iteration()
            return self
        X_train, X_val, y_train, y_val = sklearn_split(X, y)
        rule = SklearnStoppingRule(baseline_log_loss(y_train, y_val))

        def stop(env):
            (_, _, loss, _) = env.evaluation_result_list[0]
            if rule.add(loss):  # keep every tree grown, as scikit-learn does
                raise lightgbm.callback.EarlyStopException(
                    env.iteration, env.evaluation_result_list
                )

        self.model_.fit(
            X_train, y_train, eval_X=X_val, eval_y=y_val, eval_metric="binary_logloss",
            callbacks=[stop],
        )  # fmt: skip
        self.n_iter_ = self.model_.booster_.current_iteration()
        return self

    def predict(self, X):
        return self.model_.predict(X, num_iteration=self.n_iter_)

    def n_leaves_mean(self):
        trees = self.model_.booster_.dump_model()["tree_info"]
        return sum(t["num_leaves"] for t in trees) / len(trees)


class XGBoostModel:
    """XGBoost (hist, leaf-wise) with scikit-learn's settings and early-stopping rule."""

    def __init__(self, early_stopping, n_jobs, max_iter=MAX_ITER):
        self.early_stopping, self.n_jobs, self.max_iter = early_stopping, n_jobs, max_iter

    def fit(self, X, y):
        import xgboost

        callbacks = []
        if self.early_stopping:
            X, X_val, y, y_val = sklearn_split(X, y)
            rule = SklearnStoppingRule(baseline_log_loss(y, y_val))

            class Stop(xgboost.callback.TrainingCallback):
                def after_iteration(self, model, epoch, evals_log):
                    return rule.add(evals_log["validation_0"]["logloss"][-1])

            callbacks = [Stop()]
        self.model_ = xgboost.XGBClassifier(
            tree_method="hist", grow_policy="lossguide", max_leaves=MAX_LEAF_NODES, max_depth=0,
            n_estimators=self.max_iter, learning_rate=LEARNING_RATE, max_bin=MAX_BINS,
            reg_lambda=0.0, reg_alpha=0.0, gamma=0.0, min_child_weight=MIN_HESSIAN,
            subsample=1.0, colsample_bytree=1.0, n_jobs=self.n_jobs,
            random_state=RANDOM_STATE, eval_metric="logloss", callbacks=callbacks,
        )  # fmt: skip
        if self.early_stopping:
            self.model_.fit(X, y, eval_set=[(X_val, y_val)], verbose=False)
        else:
            self.model_.fit(X, y)
        self.n_iter_ = self.model_.get_booster().num_boosted_rounds()
        return self

    def predict(self, X):
        return self.model_.predict(X, iteration_range=(0, self.n_iter_))

    def n_leaves_mean(self):
        frame = self.model_.get_booster().trees_to_dataframe()
        return float((frame["Feature"] == "Leaf").sum()) / self.n_iter_


def make_model(model, early_stopping, threads, device="cpu", max_iter=MAX_ITER):
    """The model named ``model`` with scikit-learn's defaults (see the module docstring)."""
    n_jobs = 1 if threads == "1" else None  # None: OpenMP's default, every core
    early = "auto" if early_stopping == "auto" else False
    if model == "sklearn":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(
            max_iter=max_iter, early_stopping=early, random_state=RANDOM_STATE
        )
    if model == "treelib":
        from treelib import HistGradientBoostingClassifier  # ImportError: not available

        extra = {} if device == "cpu" else {"device": device}
        return HistGradientBoostingClassifier(
            max_iter=max_iter, early_stopping=early, random_state=RANDOM_STATE, **extra
        )
    # LightGBM and XGBoost stop early where scikit-learn's "auto" would: above 10,000.
    cls = LightGBMModel if model == "lightgbm" else XGBoostModel
    return cls(early_stopping=early_stopping, n_jobs=n_jobs, max_iter=max_iter)


def fit_model(model, name, early_stopping, X, y):
    """Fit; LightGBM and XGBoost apply "auto" as scikit-learn does (on above 10,000)."""
    if name in ("lightgbm", "xgboost"):
        model.early_stopping = early_stopping == "auto" and len(y) > 10_000
    return model.fit(X, y)


def n_iter_of(model):
    return int(model.n_iter_)


def n_leaves_mean(name, model):
    """Mean number of leaves per tree (NaN where the model does not tell)."""
    try:
        if name in ("lightgbm", "xgboost"):
            return model.n_leaves_mean()
        predictors = [p for stage in model._predictors for p in stage]
        return sum(int(p.nodes["is_leaf"].sum()) for p in predictors) / len(predictors)
    except Exception:
        return math.nan


# --- the worker: one fit in a fresh process ---------------------------------------------


def worker(args):
    """One fit in this (fresh) process; prints a JSON line."""
    import numpy as np
    import torch

    if args.threads == "1":
        torch.set_num_threads(1)
    data = np.load(args.data)
    X, y, X_test, y_test = data["X"], data["y"], data["X_test"], data["y_test"]
    device = args.device
    out = {"device": "cpu", "status": "ok"}
    if args.model == "treelib" and device != "cpu":
        if not torch.cuda.is_available() and device.startswith("cuda"):
            print(json.dumps(out | {"device": device, "status": "skipped: no CUDA device"}))
            return
        out["device"] = torch.cuda.get_device_name() if device.startswith("cuda") else device
    else:
        device = "cpu"
    try:
        model = make_model(args.model, args.early_stopping, args.threads, device)
    except ImportError as error:
        reason = str(error).split(" (")[0]  # without the module's path
        print(json.dumps(out | {"status": f"not available: {reason}"[:200]}))
        return
    tiny = slice(0, 2000)  # warm-up: lazy imports, first-call set-up, kernels
    fit_model(make_model(args.model, "off", args.threads, device, max_iter=2), args.model, "off",
              X[tiny], y[tiny])  # fmt: skip
    on_cuda = device.startswith("cuda")
    if on_cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        device_before = torch.cuda.memory_allocated()
    gc.collect()
    was_reset = reset_peak()
    before = rss_mb()
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    fit_model(model, args.model, args.early_stopping, X, y)
    if on_cuda:
        torch.cuda.synchronize()
    fit_s = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    load_after = os.getloadavg()[0]
    if on_cuda:
        out["device_peak_mb"] = (torch.cuda.max_memory_allocated() - device_before) / 2**20
    threads = torch.get_num_threads() if args.model == "treelib" else 1
    if args.threads != "1" and args.model != "treelib":
        threads = len(os.sched_getaffinity(0))
    out.update(
        fit_s=fit_s,
        test_acc=float((np.asarray(model.predict(X_test)) == y_test).mean()),
        n_iter=n_iter_of(model),
        n_leaves_mean=n_leaves_mean(args.model, model),
        rss_before_mb=before,
        peak_rss_mb=peak,
        fit_peak_mb=peak - before,
        load_before=load_before,
        load_after=load_after,
        threads=threads,
    )
    if not was_reset:
        out["status"] = "ok (peak not reset: ru_maxrss of the whole process)"
    print(json.dumps(out))


# --- the driver: rounds of fresh processes ---------------------------------------------


def environment():
    """Versions (read from the installed distributions: the driver imports no library)."""
    env = {"python": platform.python_version(), "cpus": os.cpu_count()}
    env["platform"] = platform.platform()
    for column, distribution in DISTRIBUTIONS.items():
        try:
            env[column] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            env[column] = "-"
    if env["xgboost"] == "-":
        try:
            env["xgboost"] = metadata.version("xgboost")
        except metadata.PackageNotFoundError:
            pass
    if os.environ.get("TREELIB_COMPILED", "1") == "0":
        env["numba"] = "-"  # (treelib runs its array versions)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        git = ["git", "-C", root]
        commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(git + ["status", "--porcelain", "--", "treelib"],
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
        env["commit"] = commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        env["commit"] = "-"
    return env


def run_one(args, model, n, data):
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--model", model]
    command += ["--data", data, "--threads", args.threads, "--device", args.device]
    command += ["--early-stopping", args.early_stopping]
    env = dict(os.environ)
    if args.threads == "1":
        env |= {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    row = {"model": model, "n": n, "p": args.p, "n_test": args.n_test, "max_iter": MAX_ITER}
    row |= {"threads": args.threads, "early_stopping": args.early_stopping}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.budget, env=env)
    except subprocess.TimeoutExpired:
        return row | {"status": f"over budget: > {args.budget:g} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        error = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return row | {"status": "failed: " + error[:200]}
    return row | json.loads(lines[-1])


def check_header(path):
    """The CSV at ``path`` must have this script's columns (or not exist yet)."""
    if not os.path.exists(path):
        return True
    with open(path, newline="") as f:
        header = next(csv.reader(f), None)
    if header is not None and tuple(header) != FIELDS:
        raise SystemExit(f"{path} has other columns than this script writes; use another --out")
    return header is None


def append_rows(path, rows):
    """Append the rows to the CSV, floats rounded to four decimals."""
    rounded = [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
    append_csv(rounded, path, list(FIELDS), {})


def rotate(models, r):
    """Round ``r``'s order: the models rotated by ``r`` places."""
    k = r % len(models)
    return list(models[k:]) + list(models[:k])


def check_stopping(name):
    """LightGBM or XGBoost (installed from requirements-txt) stops where scikit-learn's
    rule says, on recomputed validation losses (``--check-stopping``)."""
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y = make_classification(n_samples=12_000, n_features=5, flip_y=0.3, random_state=0)
    model = make_model(name, "auto", "1", max_iter=300)
    fit_model(model, name, "auto", X, y)
    assert model.early_stopping and 11 <= model.n_iter_ < 300
    # the validation losses of the rounds grown, recomputed: sklearn's rule stops at n_iter_
    X_train, X_val, y_train, y_val = sklearn_split(X, y)
    losses = [baseline_log_loss(y_train, y_val)]
    for k in range(1, model.n_iter_ + 1):
        if name == "lightgbm":
            proba = model.model_.predict_proba(X_val, num_iteration=k)[:, 1]
        else:
            proba = model.model_.predict_proba(X_val, iteration_range=(0, k))[:, 1]
        losses.append(-np.mean(y_val * np.log(proba) + (1 - y_val) * np.log1p(-proba)))
    sklearn_model = HistGradientBoostingClassifier(n_iter_no_change=10, tol=1e-7)
    stops = [
        sklearn_model._should_stop(list(-np.array(losses[: k + 1]))) for k in range(len(losses))
    ]
    assert stops.index(True) == model.n_iter_
    print(f"{name}: stops at iteration {model.n_iter_}, as scikit-learn's rule says")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--p", type=int, default=10)
    parser.add_argument("--n-test", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="rounds over the models")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--threads", choices=("1", "all"), default="1")
    parser.add_argument("--device", default="cpu", help="treelib's device (e.g. cuda)")
    parser.add_argument("--early-stopping", choices=("auto", "off"), default="auto")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds per fit")
    parser.add_argument("--run", default=None, help="run name (default: the date)")
    parser.add_argument("--out", default="benchmarks/results/hist_boosting_fit.csv")
    parser.add_argument("--data-dir", default=os.path.join(tempfile.gettempdir(), "treelib_hgb"))
    parser.add_argument("--summary", action="store_true", help="print the table of --out")
    parser.add_argument(
        "--check-stopping",
        action="store_true",
        help="check that LightGBM and XGBoost stop by scikit-learn's rule",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--make-data", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.make_data:
        return write_data(args.data, args.n, args.p, args.n_test)
    if args.check_stopping:
        for name in ("lightgbm", "xgboost"):
            check_stopping(name)
        return
    if args.summary:
        return print_summary(args.out)
    check_header(args.out)
    env = environment()
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    run = args.run or date
    os.makedirs(args.data_dir, exist_ok=True)
    for n in args.sizes:
        data = data_path(args.data_dir, n, args.p, args.n_test)
        if not os.path.exists(data):  # drawn in its own process: the driver stays small
            subprocess.run([sys.executable, os.path.abspath(__file__), "--make-data", "--data",
                            data, "--n", str(n), "--p", str(args.p), "--n-test",
                            str(args.n_test)], check=True)  # fmt: skip
        unavailable = set()
        for r in range(args.repeats):
            rows = []
            for model in rotate(args.models, r):
                if model in unavailable:
                    continue
                row = run_one(args, model, n, data) | env | {"date": date, "run": run, "round": r}
                if row["status"].startswith(("not available", "skipped")):
                    unavailable.add(model)  # recorded once per size
                rows.append(row)
                print({k: row.get(k) for k in ("model", "n", "round", "fit_s", "test_acc", "n_iter",
                       "fit_peak_mb", "load_before", "status")}, flush=True)  # fmt: skip
            reference = [
                row["fit_s"] for row in rows if row["model"] == "sklearn" and "fit_s" in row
            ]
            for row in rows:
                if reference and row.get("fit_s") is not None:
                    row["ratio_to_sklearn"] = round(row["fit_s"] / reference[0], 3)
            append_rows(args.out, sorted(rows, key=lambda row: MODELS.index(row["model"])))
    print_summary(args.out)


def cell(value):
    """A table cell: floats to 4 significant digits, NaN as a dash."""
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def markdown(frame):
    """A DataFrame as a Markdown table (no extra dependency)."""
    cells = [[str(c) for c in frame.columns]]
    for values in frame.itertuples(index=False):
        cells.append([cell(v) for v in values])
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    lines.insert(1, "|" + "---|" * len(cells[0]))
    return "\n".join(lines)


def print_summary(path):
    from treelib.datasets import hist_boosting_benchmark_table

    table = hist_boosting_benchmark_table(path)
    print(markdown(table))
    return table


if __name__ == "__main__":
    main()
