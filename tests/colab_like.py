"""Colab-like test: every chapter runs with nothing but the installed package.

Builds a wheel of treelib, installs it into a fresh virtual environment that
holds only what Colab brings, at Colab's own versions (tests/colab_versions.txt:
torch, numpy, pandas, scikit-learn, scipy, matplotlib, seaborn, tqdm and a
Jupyter kernel; the wheel goes in with --no-deps, as in Colab the setup cell
upgrades nothing) and no checkout of this repository, then copies each chapter
notebook alone into an empty folder and executes it there: the Colab edition
(notebooks/colab/), which is what the Colab links open. The student notebooks
(notebooks/student/, the chapters without solutions) run the same way, from top
to bottom, as a learner runs them in Colab. Every check cell (tagged ``check``)
must report "not implemented" where the exercise is (the Colab edition leaves the
stub there) and success where the Colab edition repeats it after the solution, at
the end (cell ids ending in ``-folded``). Run by ``make test-colab``; prints the
versions it ran with and ``N passed, M failed``, and exits non-zero on any failure.
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What Colab links open: the Colab edition (scripts/make_colab_notebooks.py).
COLAB = ROOT / "notebooks" / "colab"
STUDENT = ROOT / "notebooks" / "student"
VERSIONS = ROOT / "tests" / "colab_versions.txt"
# What the environment must hold (tests/test_colab_versions.py checks that the file lists them):
# the packages the notebooks import and the kernel that runs them.
COLAB_PACKAGES = ("torch", "numpy", "pandas", "scikit-learn", "matplotlib", "seaborn", "tqdm")
KERNEL_PACKAGES = ("ipykernel", "nbclient", "nbformat")
RUN_NOTEBOOK = """
import sys, nbformat, nbclient
nb = nbformat.read(sys.argv[1], as_version=4)
nbclient.NotebookClient(nb, timeout=900, kernel_name="python3").execute()
import treelib
assert "site-packages" in treelib.__file__, treelib.__file__
for cell in nb.cells:
    if "check" in cell.metadata.get("tags", []):
        text = "".join(output.get("text", "") for output in cell.outputs)
        says = "Well done" if cell.get("id", "").endswith("-folded") else sys.argv[2]
        assert says in text, f"a check cell printed {text!r}"
"""
RAN_WITH = """
import importlib.metadata, platform, sys
found = [f"{name}=={importlib.metadata.version(name)}" for name in sys.argv[1:]]
print(f"colab-like: ran with Python {platform.python_version()}", *found, sep=", ")
"""


def canonical(name):
    """A package name as pip compares them: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def colab_versions(text):
    """Read colab_versions.txt: ``{name: (installed, colab)}``, in the file's order.

    ``installed`` is the version ``make test-colab`` installs; ``colab`` is Colab's own,
    the same unless the line says otherwise in a ``# colab: VERSION, reason`` comment.
    """
    versions = {}
    for line in text.splitlines():
        requirement, _, comment = line.partition("#")
        if not requirement.strip():
            continue
        pin = re.fullmatch(r"\s*([A-Za-z0-9][\w.-]*)==([\w.+!-]+)\s*", requirement)
        if pin is None:
            raise ValueError(f"not a `name==version` line: {line!r}")
        override = re.match(r"\s*colab:\s*([\w.+!-]+)", comment)
        name, installed = pin.groups()
        versions[canonical(name)] = (installed, override.group(1) if override else installed)
    return versions


def run(*command, cwd=None):
    subprocess.run(command, cwd=cwd, check=True)


def main():
    work = Path(tempfile.mkdtemp(prefix="colab-like-"))
    try:
        run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
            "-w", str(work / "wheel"), str(ROOT))  # fmt: skip
        wheel = next((work / "wheel").glob("*.whl"))
        python = work / "env" / "bin" / "python"
        run(shutil.which("python3") or sys.executable, "-m", "venv", str(work / "env"))
        versions = colab_versions(VERSIONS.read_text())
        pins = [f"{name}=={installed}" for name, (installed, _) in versions.items()]
        run(str(python), "-m", "pip", "install", "-q", *pins)
        run(str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel))
        run(str(python), "-c", RAN_WITH, *versions)
        run(str(python), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3")
        passed, failed = [], []
        runs = [(p, "not implemented") for p in sorted(COLAB.glob("[0-9][0-9]_*.ipynb"))]
        runs += [(p, "not implemented") for p in sorted(STUDENT.glob("[0-9][0-9]_*.ipynb"))]
        for notebook, check_says in runs:
            name = notebook.relative_to(ROOT / "notebooks").as_posix()
            folder = work / name.replace("/", "-").removesuffix(".ipynb")
            folder.mkdir()
            shutil.copy(notebook, folder)
            result = subprocess.run(
                [str(python), "-c", RUN_NOTEBOOK, notebook.name, check_says], cwd=folder,
                capture_output=True, text=True,
            )  # fmt: skip
            (passed if result.returncode == 0 else failed).append(name)
            status = "ok" if result.returncode == 0 else "FAILED\n" + result.stderr[-3000:]
            print(f"{name}: {status}", flush=True)
        print(f"colab-like: {len(passed)} passed, {len(failed)} failed")
        return 1 if failed or not passed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
