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
