"""Chapter 9's benchmark (benchmarks/bench_hist_boosting.py) and the table the chapter shows."""

import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from treelib import datasets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_hist_boosting as bench  # noqa: E402

sys.path.pop(0)


def write_rows(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=bench.FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow(row)


def fit_row(date, run, r, model, fit_s, ratio, peak, acc=0.9, n_iter=100, load=1.0):
    return {
        "date": date, "run": run, "round": r, "model": model, "device": "cpu", "n": 1000,
        "p": 10, "n_test": 100, "threads": 1, "early_stopping": "auto", "max_iter": 100,
        "fit_s": fit_s, "ratio_to_sklearn": ratio, "test_acc": acc, "n_iter": n_iter,
        "fit_peak_mb": peak, "load_before": load, "status": "ok",
    }  # fmt: skip


@pytest.fixture
def results(tmp_path):
    old, new = "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"
    rows = [fit_row(old, "old", 0, "sklearn", 9.0, 1.0, 50.0)]
    rows += [fit_row(old, "old", 0, "lightgbm", 4.5, 0.5, 25.0)]
    for r, (s, s_peak, lgb, lgb_peak, load) in enumerate(
        [(1.0, 10.0, 0.5, 5.0, 1.0), (2.0, 12.0, 1.0, 6.0, 2.0), (3.0, 14.0, 6.0, 100.0, 4.0)]
    ):
        rows.append(fit_row(new, "new", r, "sklearn", s, 1.0, s_peak, load=load))
        rows.append(fit_row(new, "new", r, "lightgbm", lgb, lgb / s, lgb_peak, acc=0.8))
    rows.append({"date": new, "run": "new", "round": 0, "model": "treelib", "device": "cpu",
                 "n": 1000, "threads": 1, "early_stopping": "auto",
                 "status": "not available: no class"})  # fmt: skip
    path = tmp_path / "hgb.csv"
    write_rows(path, rows)
    return path


def test_table_takes_medians_of_the_latest_run(results):
    table = datasets.hist_boosting_benchmark_table(results)
    assert list(table["model"]) == ["sklearn", "treelib", "lightgbm"]
    sk, tl, lgb = (table.iloc[i] for i in range(3))
    assert (sk["run"], sk["fits"], sk["fit_s"], sk["ratio"], sk["peak_mb"]) == (
        "new",
        3,
        2.0,
        1.0,
        12.0,
    )
    assert sk["load"] == 2.0 and sk["memory_ratio"] == 1.0
    # LightGBM: fit times 0.5, 1.0, 6.0 against 1.0, 2.0, 3.0 in the same rounds:
    # ratios 0.5, 0.5, 2.0 (median 0.5, not 1.0 / 2.0); peaks 5, 6, 100 (median 6).
    assert (lgb["fits"], lgb["fit_s"], lgb["ratio"], lgb["test_acc"]) == (3, 1.0, 0.5, 0.8)
    assert (lgb["peak_mb"], lgb["memory_ratio"]) == (6.0, 0.5)
    assert tl["fits"] == 0 and tl["status"] == "not available: no class"
    assert np.isnan(tl["fit_s"]) and np.isnan(tl["ratio"])


def test_table_of_a_named_run(results):
    table = datasets.hist_boosting_benchmark_table(results, run="old")
    assert list(table["model"]) == ["sklearn", "lightgbm"]
    assert list(table["fit_s"]) == [9.0, 4.5] and list(table["memory_ratio"]) == [1.0, 0.5]


def test_summary_prints_a_markdown_table(results, capsys):
    bench.main(["--summary", "--out", str(results)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| n | threads |") and len(lines) == 2 + 3
    assert "| lightgbm | cpu | new | 3 | 1 | 0.5 |" in lines[4]


def test_the_bundled_copy_equals_the_results_file():
    source = ROOT / "benchmarks" / "results" / datasets.HIST_BOOSTING_FIT_FILENAME
    assert datasets.hist_boosting_benchmark_path().read_bytes() == source.read_bytes(), (
        "cp benchmarks/results/hist_boosting_fit.csv treelib/data/"
    )
    frame = datasets.load_hist_boosting_benchmark()
    assert tuple(frame.columns) == bench.FIELDS
    assert set(datasets.hist_boosting_benchmark_table()["model"]) >= {"sklearn"}


def test_stopping_rule_is_sklearns():
    sklearn_model = HistGradientBoostingClassifier(n_iter_no_change=10, tol=1e-7)
    rng = np.random.default_rng(0)
    for _ in range(20):  # losses that fall, then wander (steps around tol)
        losses = np.concatenate([np.linspace(0.7, 0.3, 15), 0.3 + rng.normal(0, 2e-7, 30)])
        rule = bench.SklearnStoppingRule(losses[0])
        for k in range(1, len(losses)):
            scores = list(-losses[: k + 1])
            assert rule.add(losses[k]) == sklearn_model._should_stop(scores)


def test_validation_split_seed_is_sklearns():
    X = np.random.default_rng(0).normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    fitted = HistGradientBoostingClassifier(max_iter=1, early_stopping=True, random_state=0)
    assert bench.sklearn_seed() == fitted.fit(X, y)._random_seed


def test_a_small_run_writes_its_rows(tmp_path):
    out = tmp_path / "out.csv"
    argv = ["--sizes", "3000", "--n-test", "500", "--repeats", "2", "--models", "sklearn"]
    bench.main(argv + ["--run", "t", "--out", str(out), "--data-dir", str(tmp_path)])
    frame = pd.read_csv(out)
    assert tuple(frame.columns) == bench.FIELDS
    assert list(frame["round"]) == [0, 1] and set(frame["status"]) == {"ok"}
    assert (frame["ratio_to_sklearn"] == 1.0).all() and (frame["n_iter"] == 100).all()
    # a fit in a fresh process: its peak is at least its RSS before the fit
    assert (frame["peak_rss_mb"] >= frame["rss_before_mb"]).all()
    assert np.allclose(
        frame["fit_peak_mb"], frame["peak_rss_mb"] - frame["rss_before_mb"], atol=1e-3
    )
