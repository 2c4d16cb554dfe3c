"""Colab-like test: every chapter runs with nothing but the installed package.

Builds a wheel of treelib, installs it into a fresh virtual environment that
holds only what Colab brings (torch, numpy, pandas, scikit-learn, matplotlib,
seaborn, tqdm and a Jupyter kernel) and no checkout of this repository, then
copies each chapter notebook alone into an empty folder and executes it there.
The student notebooks (notebooks/student/, the chapters without solutions) run
the same way, from top to bottom, as a learner runs them in Colab. Every check
cell (tagged ``check``) must report success in a chapter and "not implemented"
in a student notebook. Run by ``make test-colab``; prints ``N passed, M failed``
and exits non-zero on any failure.
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STUDENT = ROOT / "notebooks" / "student"
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
        assert sys.argv[2] in text, f"a check cell printed {text!r}"
"""


def pinned(names):
    """The versions requirements.txt pins, so this run matches the book's toolchain."""
    pins = dict(re.findall(r"^([\w-]+)==(\S+)", (ROOT / "requirements.txt").read_text(), re.M))
    return [f"{name}=={pins[name]}" if name in pins else name for name in names]


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
        run(str(python), "-m", "pip", "install", "-q", *pinned(COLAB_PACKAGES + KERNEL_PACKAGES))
        run(str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel))
        run(str(python), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3")
        passed, failed = [], []
        runs = [(p, "Well done") for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))]
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
