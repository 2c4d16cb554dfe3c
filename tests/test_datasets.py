"""Tests for treelib.datasets: the bundled Cleveland heart-disease data.

The facts checked here are the ones in the data card
(book/heart_disease_data.md). Downloads go to a local http.server on
127.0.0.1 only; nothing here touches the internet.
"""

import functools
import hashlib
import http.server
import importlib.resources
import importlib.util
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treelib import datasets
from treelib.datasets import (
    CATEGORY_LABELS,
    FEATURE_DESCRIPTIONS,
    HEART_SHA256,
    load_heart_disease,
)

GUIDE_SHA256 = "a74b7efa387bc9d108d7d0115d831fe9b414b29ae7124f331b622b4efa0427c8"
ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "rebuild_heart_data.py"
FILENAME = "processed.cleveland.data"


@pytest.fixture(scope="module")
def raw():
    return (importlib.resources.files("treelib") / "data" / FILENAME).read_bytes()


@pytest.fixture(scope="module")
def bunch():
    return load_heart_disease()


@pytest.fixture
def no_proxy(monkeypatch):
    """Keep urllib from sending 127.0.0.1 requests to a configured proxy."""
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("no_proxy", "*")


@pytest.fixture
def serve(tmp_path, no_proxy):
    """Start http.server on a free 127.0.0.1 port; ``serve(data)`` gives a URL."""
    servers = []

    def start(data):
        root = tmp_path / f"www{len(servers)}"
        root.mkdir()
        (root / FILENAME).write_bytes(data)
        handler = functools.partial(_QuietHandler, directory=str(root))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/{FILENAME}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _closed_port_url():
    """A URL on 127.0.0.1 where nothing listens: fetching it would fail."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _QuietHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}/{FILENAME}"


# -- the bundled bytes ------------------------------------------------------


def test_bundled_file_is_ucis(raw):
    assert HEART_SHA256 == GUIDE_SHA256
    assert hashlib.sha256(raw).hexdigest() == GUIDE_SHA256
    assert len(raw) == 18_461
    assert raw.count(b"\n") == 303
    assert raw.startswith(b"63.0,1.0,1.0,145.0,233.0,1.0,2.0,150.0,0.0,2.3,3.0,0.0,6.0,0\n")


def test_rebuild_script_reproduces_bundled_bytes(tmp_path, raw):
    out = tmp_path / "sub" / FILENAME
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == raw


def test_rebuild_script_refuses_a_mismatch(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("rebuild_heart_data", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.check(b"63.0\n") != []
    monkeypatch.setattr(script, "rebuild", lambda: b"not the data\n")
    out = tmp_path / FILENAME
    assert script.main(["--out", str(out)]) == 1
    assert "SHA-256" in capsys.readouterr().err
    assert not out.exists()


# -- facts from the data card -----------------------------------------------


def test_shape_and_columns(bunch):
    assert bunch.frame.shape == (303, 15)
    assert list(bunch.frame.columns) == list(FEATURE_DESCRIPTIONS)
    assert bunch.feature_names == list(FEATURE_DESCRIPTIONS)[:13]
    assert list(bunch.target_names) == ["no disease", "disease"]
    assert Path(bunch.filename).name == FILENAME
    assert "Introduced in Chapter 6" in load_heart_disease.__doc__


def test_class_counts(bunch):
    num = bunch.frame["num"].value_counts().sort_index().to_dict()
    assert num == {0: 164, 1: 55, 2: 36, 3: 35, 4: 13}
    assert bunch.target.value_counts().to_dict() == {0: 164, 1: 139}
    assert (bunch.target == (bunch.frame["num"] > 0)).all()


def test_missing_values(bunch):
    frame = bunch.frame
    missing = {col: list(frame.index[frame[col].isna()] + 1) for col in frame}
    assert missing.pop("ca") == [167, 193, 288, 303]
    assert missing.pop("thal") == [88, 267]
    assert all(rows == [] for rows in missing.values())


def test_codes_are_ucis(bunch):
    frame = bunch.frame
    for column, labels in CATEGORY_LABELS.items():
        codes = set(frame[column].dropna().astype(int))
        assert codes == set(labels), column
    assert frame.loc[0, "thal"] == 6  # patient 1: fixed defect, not "normal"
    assert frame.loc[0, "cp"] == 1  # patient 1: typical angina
    assert frame["cp"].map(CATEGORY_LABELS["cp"]).value_counts()["asymptomatic"] == 144


def test_return_X_y_frames():
    X, y = load_heart_disease(return_X_y=True)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert X.shape == (303, 13) and y.shape == (303,)


def test_as_frame_false_gives_numpy():
    bunch = load_heart_disease(as_frame=False)
    assert isinstance(bunch.data, np.ndarray) and bunch.data.shape == (303, 13)
    assert isinstance(bunch.target, np.ndarray) and bunch.target.sum() == 139
    assert bunch.frame is None
    X, y = load_heart_disease(as_frame=False, return_X_y=True)
    assert isinstance(X, np.ndarray) and X.shape == (303, 13)
    assert np.isnan(X).sum() == 6


def test_corrupted_bundled_copy_is_rejected(tmp_path, monkeypatch, raw):
    bad = tmp_path / FILENAME
    bad.write_bytes(raw.replace(b"63.0,1.0", b"64.0,1.0", 1))
    monkeypatch.setattr(datasets, "_bundled_file", lambda: bad)
    with pytest.raises(ValueError) as info:
        load_heart_disease()
    message = str(info.value)
    assert hashlib.sha256(bad.read_bytes()).hexdigest() in message
    assert HEART_SHA256 in message


# -- download=True, against a local server ----------------------------------


def test_download_succeeds_and_caches(tmp_path, serve, raw):
    home = tmp_path / "cache"
    url = serve(raw)
    bunch = load_heart_disease(download=True, data_home=home, url=url)
    assert Path(bunch.filename) == home / FILENAME
    assert (home / FILENAME).read_bytes() == raw
    assert bunch.frame.shape == (303, 15)
    assert sorted(p.name for p in home.iterdir()) == [FILENAME]
    # The second call must read the cache: nothing listens on this URL.
    again = load_heart_disease(download=True, data_home=home, url=_closed_port_url())
    assert again.frame.equals(bunch.frame)


def test_download_honours_treelib_data(tmp_path, serve, raw, monkeypatch):
    monkeypatch.setenv("TREELIB_DATA", str(tmp_path / "env-home"))
    load_heart_disease(download=True, url=serve(raw))
    assert (tmp_path / "env-home" / FILENAME).read_bytes() == raw


def test_download_of_wrong_bytes_raises_and_caches_nothing(tmp_path, serve, raw):
    home = tmp_path / "cache"
    url = serve(raw[:-2] + b"1\n")
    with pytest.raises(ValueError, match=HEART_SHA256):
        load_heart_disease(download=True, data_home=home, url=url)
    assert list(home.iterdir()) == []


def test_corrupted_cache_is_rejected_and_removed(tmp_path, serve, raw):
    home = tmp_path / "cache"
    home.mkdir()
    (home / FILENAME).write_bytes(b"?,?,?\n")
    with pytest.raises(ValueError, match=HEART_SHA256):
        load_heart_disease(download=True, data_home=home, url=_closed_port_url())
    assert not (home / FILENAME).exists()
    bunch = load_heart_disease(download=True, data_home=home, url=serve(raw))
    assert (home / FILENAME).read_bytes() == raw
    assert bunch.target.sum() == 139


# -- Chapter 10's benchmark results ----------------------------------------------


@pytest.mark.parametrize("stem", ["explain_scaling", "explain_speed"])
def test_explain_benchmarks_are_bundled(stem):
    name = f"{stem}.csv"
    path = getattr(datasets, f"{stem}_benchmark_path")()
    source = ROOT / "benchmarks" / "results" / name
    assert path.read_bytes() == source.read_bytes(), (
        f"treelib/data/{name} differs from the benchmark's: cp benchmarks/results/{name} "
        "treelib/data/"
    )
    assert path == Path(str(importlib.resources.files("treelib") / "data" / name))


def _csv_rows(name):
    import csv

    with open(ROOT / "benchmarks" / "results" / name, newline="") as f:
        return list(csv.DictReader(f))


def test_explain_scaling_table_reads_the_results():
    rows = _csv_rows("explain_scaling.csv")
    seconds = {(int(r["d"]), r["method"]): float(r["seconds"]) for r in rows}
    table = datasets.explain_scaling_table().set_index("d")
    expected_columns = ["subsets", "brute_force_s", "treeshap_s", "brute_force_repeats",
                        "treeshap_repeats", "ratio", "max_abs_diff", "max_rel_diff",
                        "n_leaves", "load"]  # fmt: skip
    assert list(table.columns) == expected_columns
    assert sorted(table.index) == sorted({d for d, _ in seconds})
    for d, row in table.iterrows():
        assert row["subsets"] == 2**d
        assert row["treeshap_s"] == seconds[d, "treeshap"]
        if (d, "brute_force") in seconds:
            brute = seconds[d, "brute_force"]
            assert row["ratio"] == pytest.approx(brute / seconds[d, "treeshap"], rel=1e-12)
            assert row["max_rel_diff"] < 1e-9  # the two methods agree
        else:
            assert np.isnan(row["brute_force_s"]) and np.isnan(row["ratio"])
    # the benchmark's promise: brute force up to ~a minute, TreeSHAP well past it
    brute_d = table.index[table["brute_force_s"].notna()]
    assert table.loc[brute_d.max(), "brute_force_s"] > 10 and table.index.max() >= 24
    assert (table["load"] > 0).all()


def test_explain_scaling_table_takes_the_latest_run():
    def row(date, d, method, seconds):
        return {"date": date, "d": d, "method": method, "seconds": seconds, "repeats": 3,
                "n_leaves": 10, "max_abs_diff": 1e-14, "max_rel_diff": 1e-16,
                "load_before": 1.0, "load_after": 2.0}  # fmt: skip

    frame = pd.DataFrame(
        [
            row("2026-01-01", 2, "brute_force", 9.0),
            row("2026-02-01", 2, "brute_force", 4.0),
            row("2026-01-01", 2, "treeshap", 2.0),
            row("2026-02-01", 4, "treeshap", 1.0),
        ]
    )
    table = datasets.explain_scaling_table(frame).set_index("d")
    assert table.loc[2, "ratio"] == 2.0 and table.loc[2, "load"] == 2.0
    assert np.isnan(table.loc[4, "brute_force_s"]) and table.loc[4, "treeshap_s"] == 1.0


def test_explain_speed_table_ratio_is_the_csvs():
    rows = _csv_rows("explain_speed.csv")
    table = datasets.explain_speed_table()
    assert list(table.columns) == [
        "model", "explainer", "device", "rows", "threads", "setup_s", "best_s", "us_per_row",
        "ratio", "efficiency_error", "load",
    ]  # fmt: skip
    assert len(table) == len(rows)
    for row, csv_row in zip(table.itertuples(), rows):
        assert round(row.ratio, 3) == float(csv_row["ratio_to_shap"])
        assert row.us_per_row == pytest.approx(
            float(csv_row["best_s"]) / int(csv_row["rows"]) * 1e6
        )
        assert row.efficiency_error < 1e-9
    assert table.loc[table["explainer"] == "shap", "ratio"].tolist() == [1.0]


def test_explain_scaling_script_writes_what_the_table_reads(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import explain_scaling
    finally:
        sys.path.pop(0)
    bundled = datasets.explain_scaling_benchmark_path().read_bytes()
    out = tmp_path / "scaling.csv"
    explain_scaling.main(["--max-d", "4", "--limit-s", "0", "--repeats", "1", "--out", str(out)])
    frame = pd.read_csv(out)
    assert tuple(frame.columns) == explain_scaling.FIELDS
    # brute force ran at d=2 only: its first timing was over the 0 s limit
    assert sorted(zip(frame["d"], frame["method"])) == [
        (2, "brute_force"), (2, "treeshap"), (4, "treeshap")
    ]  # fmt: skip
    assert frame["max_rel_diff"].dropna().lt(1e-9).all()
    assert set(datasets.explain_scaling_table(out)["d"]) == {2, 4}
    assert datasets.explain_scaling_benchmark_path().read_bytes() == bundled  # not --out's copy
