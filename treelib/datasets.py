"""The Cleveland heart-disease data, bundled and checked.

Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).

The package ships UCI's ``processed.cleveland.data`` (303 patients, 14
columns; Janosi, Steinbrunn, Pfisterer and Detrano, 1988; CC BY 4.0), rebuilt
offline by ``scripts/rebuild_heart_data.py``.  Every load checks its SHA-256,
so a notebook can never run on silently different numbers.  The data card in
``book/heart_disease_data.md`` says what the columns mean and what the data
can and cannot support.
"""

import hashlib
import importlib.resources
import io
import os
import tempfile
import urllib.request
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

URL = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/"
    "heart-disease/processed.cleveland.data"
)
"""Where UCI publishes the file; used only with ``download=True``.

Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).
"""

HEART_SHA256 = "a74b7efa387bc9d108d7d0115d831fe9b414b29ae7124f331b622b4efa0427c8"
"""SHA-256 of UCI's ``processed.cleveland.data`` (18,461 bytes, 303 lines).

Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).
"""

FILENAME = "processed.cleveland.data"

FEATURE_DESCRIPTIONS = {
    "age": "age in years",
    "sex": "sex (1 = male, 0 = female)",
    "cp": "chest pain type (1 = typical angina, 2 = atypical angina, "
    "3 = non-anginal pain, 4 = asymptomatic)",
    "trestbps": "resting blood pressure (mm Hg on admission to the hospital)",
    "chol": "serum cholesterol (mg/dl)",
    "fbs": "fasting blood sugar > 120 mg/dl (1 = true, 0 = false)",
    "restecg": "resting electrocardiographic results (0 = normal, "
    "1 = ST-T wave abnormality, 2 = probable or definite left ventricular "
    "hypertrophy by Estes' criteria)",
    "thalach": "maximum heart rate achieved (beats per minute)",
    "exang": "exercise induced angina (1 = yes, 0 = no)",
    "oldpeak": "ST depression induced by exercise relative to rest",
    "slope": "slope of the peak exercise ST segment (1 = upsloping, 2 = flat, 3 = downsloping)",
    "ca": "number of major vessels (0-3) coloured by fluoroscopy",
    "thal": "thallium stress test (3 = normal, 6 = fixed defect, 7 = reversable defect)",
    "num": "diagnosis of heart disease, angiographic disease status "
    "(0 = < 50% diameter narrowing; 1-4 = > 50% narrowing in a major vessel)",
    "disease": "binary target added by treelib: 1 if num > 0, else 0",
}
"""Column name -> meaning, with UCI's codes.

Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).
"""

CATEGORY_LABELS = {
    "sex": {0: "female", 1: "male"},
    "cp": {
        1: "typical angina",
        2: "atypical angina",
        3: "non-anginal pain",
        4: "asymptomatic",
    },
    "fbs": {0: "<= 120 mg/dl", 1: "> 120 mg/dl"},
    "restecg": {
        0: "normal",
        1: "ST-T wave abnormality",
        2: "left ventricular hypertrophy",
    },
    "exang": {0: "no", 1: "yes"},
    "slope": {1: "upsloping", 2: "flat", 3: "downsloping"},
    "thal": {3: "normal", 6: "fixed defect", 7: "reversable defect"},
    "num": {
        0: "< 50% narrowing",
        1: "> 50% narrowing (1)",
        2: "> 50% narrowing (2)",
        3: "> 50% narrowing (3)",
        4: "> 50% narrowing (4)",
    },
    "disease": {0: "no disease", 1: "disease"},
}
"""Categorical column -> {UCI code: label}, e.g. for ``frame.cp.map(...)``.

Codes are ints; they also look up the loaded float values (``1.0 == 1``).

Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).
"""

COLUMNS = list(FEATURE_DESCRIPTIONS)[:14]
FEATURE_NAMES = COLUMNS[:13]
TARGET_NAMES = np.array(["no disease", "disease"])

DESCR = f"""\
Cleveland heart disease (UCI Machine Learning Repository)
---------------------------------------------------------
303 patients of the Cleveland Clinic Foundation, 13 features, 14th column
``num`` (0-4) and the binary target ``disease`` = (num > 0): 164 / 139.
Missing values (``?`` in the file, NaN here): ca in 4 rows, thal in 2.

Janosi, A., Steinbrunn, W., Pfisterer, M. and Detrano, R. (1988).
Heart Disease. UCI Machine Learning Repository. doi:10.24432/C52P4X.
License: CC BY 4.0. SHA-256 of processed.cleveland.data:
{HEART_SHA256}

Columns:
""" + "\n".join(f"- {name}: {text}" for name, text in FEATURE_DESCRIPTIONS.items())


def _check(data, source):
    """Raise ``ValueError`` unless ``data`` hashes to ``HEART_SHA256``."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != HEART_SHA256:
        raise ValueError(
            f"{source} is not UCI's {FILENAME}: its SHA-256 is {digest}, expected {HEART_SHA256}"
        )


def _shipped(filename):
    """A file shipped in ``treelib/data`` (a Traversable, not always a path)."""
    return importlib.resources.files("treelib") / "data" / filename


def _bundled_file():
    """The copy of the heart data shipped in ``treelib/data``."""
    return _shipped(FILENAME)


def _data_home(data_home=None):
    """Cache folder: ``data_home``, else ``$TREELIB_DATA``, else ~/.cache/treelib."""
    if data_home is None:
        data_home = os.environ.get("TREELIB_DATA", "~/.cache/treelib")
    return Path(data_home).expanduser()


def _download(url, path):
    """Fetch ``url`` to ``path`` atomically; nothing is left behind on a bad hash."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=FILENAME + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh, urllib.request.urlopen(url, timeout=60) as r:
            data = r.read()
            fh.write(data)
        _check(data, f"the file downloaded from {url}")
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a cache may be shared
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return data


def _read_bytes(download, data_home, url):
    """Return the verified bytes and the name of the file they came from."""
    if not download:
        source = _bundled_file()
        data = source.read_bytes()
        _check(data, f"the bundled {source}")
        return data, str(source)
    path = _data_home(data_home) / FILENAME
    if not path.exists():
        return _download(url, path), str(path)
    data = path.read_bytes()
    try:
        _check(data, f"the cached {path}")
    except ValueError as err:
        # A damaged cache must not stick: remove it so the next call refetches.
        path.unlink()
        raise ValueError(f"{err}; deleted it, call again to download afresh") from None
    return data, str(path)


def load_heart_disease(*, as_frame=True, return_X_y=False, download=False, data_home=None, url=URL):
    """Load the Cleveland heart-disease data (303 patients, 13 features).

    Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).

    Parameters
    ----------
    as_frame : bool, default=True
        Return pandas objects (``data`` a DataFrame, ``target`` a Series and
        ``frame`` the whole table); if False, numpy arrays and ``frame=None``.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.
    download : bool, default=False
        Read UCI's file from the cache folder, fetching it from ``url`` the
        first time, instead of the copy bundled with treelib.
    data_home : str or path-like, optional
        Cache folder; default ``$TREELIB_DATA``, else ``~/.cache/treelib``.
    url : str, default=URL
        Where to fetch from when ``download=True`` (tests point it at a local
        server).

    Returns
    -------
    data : sklearn.utils.Bunch
        ``data`` (303, 13) features with ``?`` read as NaN; ``target`` the
        binary ``disease`` = (num > 0); ``frame`` the 14 UCI columns plus
        ``disease``; ``feature_names``; ``target_names``; ``DESCR``;
        ``filename``.
    (X, y) : tuple
        If ``return_X_y`` is True.

    Raises
    ------
    ValueError
        If the file's SHA-256 is not ``HEART_SHA256`` (a bad download or a
        damaged cache is deleted).

    Examples
    --------
    >>> from treelib.datasets import load_heart_disease
    >>> X, y = load_heart_disease(return_X_y=True)
    >>> X.shape, int(y.sum())
    ((303, 13), 139)
    """
    import pandas as pd

    raw, filename = _read_bytes(download, data_home, url)
    frame = pd.read_csv(io.BytesIO(raw), header=None, names=COLUMNS, na_values="?")
    frame["disease"] = (frame["num"] > 0).astype(int)
    X, y = frame[FEATURE_NAMES], frame["disease"]
    if not as_frame:
        X, y, frame = X.to_numpy(dtype=float), y.to_numpy(), None
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        frame=frame,
        feature_names=list(FEATURE_NAMES),
        target_names=TARGET_NAMES.copy(),
        DESCR=DESCR,
        filename=filename,
    )


FAST_FIT_FILENAME = "fast_fit.csv"


def fast_fit_benchmark_path():
    """The bundled copy of ``benchmarks/results/fast_fit.csv``, as a path.

    Introduced in Chapter 7 (notebooks/07_fast_trees): the benchmark of the tree
    builders against scikit-learn, which the chapter plots. The copy ships inside the
    package so that the chapter finds it when it runs alone (in Colab); a test checks
    that it equals the benchmark's file byte for byte.
    """
    return Path(str(_shipped(FAST_FIT_FILENAME)))


def load_fast_fit_benchmark():
    """Load the tree-builder benchmark of Chapter 7 as a DataFrame (one row per fit).

    Introduced in Chapter 7 (notebooks/07_fast_trees). Columns as written by
    ``benchmarks/bench_fast.py``: ``run, model, method, n, p, fit_s, predict_s,
    ratio_to_sklearn, test_acc, peak_mb, load, nodes, repeats, threads, status``.
    """
    import pandas as pd

    return pd.read_csv(fast_fit_benchmark_path())


FAST_FIT_CUDA_FILENAME = "fast_fit_cuda.csv"


def fast_fit_cuda_benchmark_path():
    """The bundled copy of ``benchmarks/results/fast_fit_cuda.csv``, as a path.

    Introduced in Chapter 7 (notebooks/07_fast_trees): the same benchmark with
    treelib's trees grown on a GPU (``device="cuda"``) and scikit-learn on that
    machine's CPU (``benchmarks/run_cuda.sh``). Shipped, as the CPU results
    are, so that the chapter finds it in Colab; a test checks that it equals
    the benchmark's file.
    """
    return Path(str(_shipped(FAST_FIT_CUDA_FILENAME)))


def load_fast_fit_cuda_benchmark():
    """Load the GPU runs of Chapter 7's benchmark as a DataFrame (one row per fit).

    Introduced in Chapter 7 (notebooks/07_fast_trees). The columns of
    :func:`load_fast_fit_benchmark`, plus ``device`` (the GPU's name, or
    ``cpu`` for scikit-learn), ``device_peak_mb`` (GPU memory at the fit's
    peak) and ``trees_per_batch`` (a forest's batch size, where the run fixed it).
    """
    import pandas as pd

    return pd.read_csv(fast_fit_cuda_benchmark_path())


BOOSTING_FIT_FILENAME = "boosting_fit.csv"


def boosting_benchmark_path():
    """The bundled copy of ``benchmarks/results/boosting_fit.csv``, as a path.

    Introduced in Chapter 8 (notebooks/08_gradient_boosting): treelib's histogram
    gradient boosting against scikit-learn's ``HistGradientBoostingClassifier``.
    Shipped inside the package, as Chapter 7's benchmark is, so that the chapter
    finds it in Colab; a test checks that it equals the benchmark's file.
    """
    return Path(str(_shipped(BOOSTING_FIT_FILENAME)))


def load_boosting_benchmark():
    """Load the gradient boosting benchmark of Chapter 8 as a DataFrame (one row per fit).

    Introduced in Chapter 8 (notebooks/08_gradient_boosting). Columns as written by
    ``benchmarks/bench_boosting.py``: ``date, model, n, p, n_test, n_estimators,
    max_depth, fit_s, ratio_to_sklearn_hist, test_acc, n_leaves_mean, load_before,
    load_after, threads, python, torch, sklearn, cpus, platform, status``.
    """
    import pandas as pd

    return pd.read_csv(boosting_benchmark_path())


HIST_BOOSTING_FIT_FILENAME = "hist_boosting_fit.csv"
HIST_BOOSTING_MODELS = ("sklearn", "treelib", "lightgbm", "xgboost")


def hist_boosting_benchmark_path():
    """The bundled copy of ``benchmarks/results/hist_boosting_fit.csv``, as a path.

    Introduced in Chapter 9 (notebooks/09_hist_gradient_boosting): histogram gradient
    boosting with scikit-learn's defaults in scikit-learn, treelib, LightGBM and
    XGBoost (``benchmarks/bench_hist_boosting.py``). Shipped inside the package, as
    Chapter 7's benchmark is, so that the chapter finds it in Colab; a test checks
    that it equals the benchmark's file.
    """
    return Path(str(_shipped(HIST_BOOSTING_FIT_FILENAME)))


def load_hist_boosting_benchmark():
    """Load the histogram gradient boosting benchmark of Chapter 9 (one row per fit).

    Introduced in Chapter 9 (notebooks/09_hist_gradient_boosting). Columns as
    written by ``benchmarks/bench_hist_boosting.py``: ``date, run, round, model,
    device, n, p, n_test, threads, early_stopping, max_iter, fit_s,
    ratio_to_sklearn, test_acc, n_iter, n_leaves_mean, rss_before_mb, peak_rss_mb,
    fit_peak_mb, device_peak_mb, load_before, load_after``, the versions, ``commit``,
    ``cpus``, ``platform`` and ``status``.
    """
    import pandas as pd

    return pd.read_csv(hist_boosting_benchmark_path())


def hist_boosting_benchmark_table(source=None, run=None):
    """Chapter 9's benchmark table: one row per setting and model, medians over rounds.

    Introduced in Chapter 9 (notebooks/09_hist_gradient_boosting).

    Parameters
    ----------
    source : path or DataFrame, default=None
        The rows of ``benchmarks/bench_hist_boosting.py`` (default: the bundled copy).
    run : str or list of str, default=None
        The runs to read. By default, for each setting (``n``, ``threads``,
        ``early_stopping``), model and device, the rows of its latest run.

    Returns
    -------
    DataFrame with columns ``n, threads, early_stopping, model, device, run, fits``
    (fits that finished), ``fit_s`` (median fit time), ``ratio`` (median of the fit
    time over scikit-learn's in the same round), ``test_acc``, ``n_iter``,
    ``peak_mb`` (median memory the fit added at its peak), ``memory_ratio``
    (``peak_mb`` over scikit-learn's in the same setting), ``load`` (median 1-minute
    load average before the fits) and ``status`` (``ok``, else why no fit finished,
    e.g. ``not available``).
    """
    import pandas as pd

    if source is None:
        source = hist_boosting_benchmark_path()
    frame = source.copy() if isinstance(source, pd.DataFrame) else pd.read_csv(source)
    setting = ["n", "threads", "early_stopping"]
    frame["threads"] = frame["threads"].astype(str)
    frame["device"] = frame["device"].fillna("cpu")
    if run is not None:
        frame = frame[frame["run"].isin([run] if isinstance(run, str) else list(run))]
    else:  # each (setting, model, device): the rows of its latest run
        key = setting + ["model", "device"]
        latest = frame.groupby(key)["date"].transform("max")
        frame = frame[frame["date"] == latest]
    ok = frame["status"].astype(str).str.startswith("ok")
    rows = []
    for (n, threads, early, model, device), group in frame.groupby(
        setting + ["model", "device"], sort=False
    ):
        done = group[ok[group.index]]
        rows.append(
            {
                "n": n,
                "threads": threads,
                "early_stopping": early,
                "model": model,
                "device": device,
                "run": ", ".join(sorted(set(group["run"].astype(str)))),
                "fits": len(done),
                "fit_s": done["fit_s"].median(),
                "ratio": done["ratio_to_sklearn"].median(),
                "test_acc": done["test_acc"].median(),
                "n_iter": done["n_iter"].median(),
                "peak_mb": done["fit_peak_mb"].median(),
                "load": done["load_before"].median(),
                "status": "ok" if len(done) else str(group["status"].iloc[0]),
            }
        )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    reference = table[(table["model"] == "sklearn") & (table["fits"] > 0)]
    reference = reference.set_index(setting)["peak_mb"]
    sklearn_peak = [reference.get(tuple(key), float("nan")) for key in table[setting].values]
    table.insert(len(table.columns) - 2, "memory_ratio", table["peak_mb"] / sklearn_peak)
    order = {model: i for i, model in enumerate(HIST_BOOSTING_MODELS)}
    table["_order"] = table["model"].map(order).fillna(len(order))
    table = table.sort_values(setting + ["_order", "device"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)


EXPLAIN_SCALING_FILENAME = "explain_scaling.csv"
EXPLAIN_SPEED_FILENAME = "explain_speed.csv"


def explain_scaling_benchmark_path():
    """The bundled copy of ``benchmarks/results/explain_scaling.csv``, as a path.

    Introduced in Chapter 10 (notebooks/10_explaining_trees): Shapley values of one
    sample by brute force against TreeSHAP as the number of features grows
    (``benchmarks/explain_scaling.py``). Shipped inside the package so that the
    chapter finds it in Colab; a test checks that it equals the benchmark's file.
    """
    return Path(str(_shipped(EXPLAIN_SCALING_FILENAME)))


def explain_speed_benchmark_path():
    """The bundled copy of ``benchmarks/results/explain_speed.csv``, as a path.

    Introduced in Chapter 10 (notebooks/10_explaining_trees): treelib's TreeSHAP
    against ``shap.TreeExplainer`` on 10,000 rows (``benchmarks/explain_speed.py``).
    Shipped, as the scaling benchmark is, so that the chapter finds it in Colab.
    """
    return Path(str(_shipped(EXPLAIN_SPEED_FILENAME)))


def _read(source, default):
    import pandas as pd

    if source is None:
        source = default()
    return source.copy() if isinstance(source, pd.DataFrame) else pd.read_csv(source)


def explain_scaling_table(source=None):
    """Chapter 10's scaling table: one row per number of features ``d``.

    Introduced in Chapter 10 (notebooks/10_explaining_trees).

    Parameters
    ----------
    source : path or DataFrame, default=None
        The rows of ``benchmarks/explain_scaling.py`` (default: the bundled copy).
        Where a ``d`` and method were timed in several runs, the latest counts.

    Returns
    -------
    DataFrame with columns ``d``, ``subsets`` (``2**d``, the coalitions brute force
    evaluates), ``brute_force_s`` and ``treeshap_s`` (best time to explain one
    sample; NaN where brute force was not run, past ``--limit-s``),
    ``brute_force_repeats`` and ``treeshap_repeats`` (the timings the best is
    taken from), ``ratio`` (``brute_force_s / treeshap_s``), ``max_abs_diff`` and
    ``max_rel_diff`` (between the two methods' values), ``n_leaves`` (the forest's
    leaves) and ``load`` (the highest 1-minute load average around the timings).
    """
    import pandas as pd

    frame = _read(source, explain_scaling_benchmark_path)
    latest = frame.groupby(["d", "method"])["date"].transform("max")
    frame = frame[frame["date"] == latest]
    frame = frame.assign(load=frame[["load_before", "load_after"]].max(axis=1))
    wide = frame.pivot(index="d", columns="method")
    table = pd.DataFrame(index=wide.index)
    table["subsets"] = 2 ** table.index.to_numpy()
    for method in ("brute_force", "treeshap"):
        present = method in wide["seconds"].columns
        table[f"{method}_s"] = wide["seconds"][method] if present else float("nan")
    for method in ("brute_force", "treeshap"):
        present = method in wide["repeats"].columns
        table[f"{method}_repeats"] = wide["repeats"][method].astype("Int64") if present else pd.NA
    table["ratio"] = table["brute_force_s"] / table["treeshap_s"]
    diffs = frame.groupby("d")[["max_abs_diff", "max_rel_diff"]].max()
    table = table.join(diffs)
    table["n_leaves"] = frame.groupby("d")["n_leaves"].first()
    table["load"] = frame.groupby("d")["load"].max()
    return table.reset_index()


def explain_speed_table(source=None):
    """Chapter 10's speed table: treelib's TreeSHAP against shap's, one row per run.

    Introduced in Chapter 10 (notebooks/10_explaining_trees).

    Parameters
    ----------
    source : path or DataFrame, default=None
        The rows of ``benchmarks/explain_speed.py`` (default: the bundled copy).

    Returns
    -------
    DataFrame with columns ``model``, ``explainer``, ``device``, ``rows``,
    ``threads``, ``setup_s`` (building the explainer), ``best_s`` (best time of
    ``shap_values`` on the rows), ``us_per_row`` (``best_s`` per row, in
    microseconds), ``ratio`` (``best_s`` over shap's in the same file: below one is
    faster than shap), ``efficiency_error`` (``|base + sum of values - prediction|``)
    and ``load`` (the higher of the 1-minute load averages before and after).
    """
    frame = _read(source, explain_speed_benchmark_path)
    shap = frame.loc[frame["explainer"] == "shap", "best_s"]
    reference = float(shap.iloc[0]) if len(shap) else float("nan")
    return frame.assign(
        us_per_row=frame["best_s"] / frame["rows"] * 1e6,
        ratio=frame["best_s"] / reference,
        load=frame[["load_before", "load_after"]].max(axis=1),
    )[
        ["model", "explainer", "device", "rows", "threads", "setup_s", "best_s", "us_per_row",
         "ratio", "efficiency_error", "load"]
    ].reset_index(drop=True)  # fmt: skip
