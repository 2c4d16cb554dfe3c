"""treelib.show_versions(): what an error report needs (see CONTRIBUTING.md)."""

import platform

import numpy
import torch

import treelib
from treelib import _show_versions
from treelib.notebook import reproducibility

NAMES = ["python", "platform", "torch", "numpy", "scipy", "pandas", "scikit-learn",
         "matplotlib", "seaborn", "treelib"]  # fmt: skip


def test_show_versions_prints_every_package(capsys):
    treelib.show_versions()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "System:" and "Packages:" in lines
    named = [line.split(":", 1)[0].strip() for line in lines if not line.endswith(":")]
    assert named == NAMES
    text = "\n".join(lines)
    assert platform.python_version() in text
    assert f"torch: {torch.__version__} (CUDA available: {torch.cuda.is_available()})" in text
    assert f"numpy: {numpy.__version__}" in text
    assert f"treelib: {treelib.__version__}" in text


def test_a_missing_package_reads_not_installed(capsys, monkeypatch):
    monkeypatch.setattr(_show_versions, "PACKAGES", (*_show_versions.PACKAGES, "no-such-dist"))
    assert _show_versions.versions()["no-such-dist"] is None
    treelib.show_versions()
    assert "no-such-dist: not installed" in capsys.readouterr().out


def test_the_reproducibility_cell_prints_the_seed_and_the_versions(capsys):
    reproducibility(seed=7)
    out = capsys.readouterr().out
    assert out.startswith("Reproducibility: random seed 7.\n")
    assert "scikit-learn:" in out and "CUDA available" in out


def test_show_versions_is_public_and_says_where_the_book_introduces_it():
    assert "show_versions" in treelib.__all__
    assert "Chapter 1" in treelib.show_versions.__doc__
