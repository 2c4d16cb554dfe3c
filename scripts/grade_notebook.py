"""Grade learners' notebooks with the book's exercise checkers.

Runs each notebook in a fresh Jupyter kernel, then, in that same kernel, calls
every checker of ``treelib.exercises.CHECKERS`` whose function the learner
defined (``my_gini`` for ``"gini"``, ``my_entropy`` for ``"entropy"``, ...).
Prints one CSV row per notebook and exercise: passed (True/False) and the
checker's verdict, e.g.

    notebook,exercise,passed,verdict
    alice.ipynb,entropy,True,check_entropy: all 18 cases passed. Well done!

    python scripts/grade_notebook.py alice.ipynb bob.ipynb > grades.csv
    python scripts/grade_notebook.py --exercises-only submissions/*.ipynb

``--exercises-only`` runs just the cells tagged ``exercise`` (after importing
math, numpy and torch), which takes seconds instead of minutes. This runs the
learners' code on your machine: grade in a container or a throwaway account.
"""

import argparse
import csv
import json
import sys
from pathlib import Path

import nbclient
import nbformat

PREAMBLE = "import math\n\nimport numpy as np\nimport torch"
GRADER = """
import contextlib, io, json
from treelib.exercises import CHECKERS
_grades = {}
for _name, _check in CHECKERS.items():
    if callable(globals().get("my_" + _name)):
        with contextlib.redirect_stdout(io.StringIO()) as _out:
            _passed = bool(_check(globals()["my_" + _name]))
        _verdict = [v for v in _out.getvalue().splitlines() if v.startswith("check_")]
        _grades[_name] = [_passed, (_verdict or [""])[0]]
print("GRADES", json.dumps(_grades))
"""


def grade(path, exercises_only=False, timeout=600):
    """{exercise: (passed, verdict)} for each function the notebook defines."""
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    if exercises_only:
        tagged = [c for c in nb.cells if "exercise" in c.metadata.get("tags", [])]
        nb.cells = [nbformat.v4.new_code_cell(PREAMBLE)] + tagged
    nb.cells.append(nbformat.v4.new_code_cell(GRADER))
    client = nbclient.NotebookClient(
        nb, timeout=timeout, allow_errors=True, kernel_name="python3", resources={}
    )
    client.execute(cwd=str(path.parent.resolve()))
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
    line = next(line for line in text.splitlines() if line.startswith("GRADES "))
    return {name: tuple(result) for name, result in json.loads(line[7:]).items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--exercises-only", action="store_true")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["notebook", "exercise", "passed", "verdict"])
    for path in args.notebooks:
        try:
            grades = grade(path, args.exercises_only, args.timeout)
        except Exception as error:  # a hanging or broken notebook: report it, go on
            out.writerow([path.name, "", False, f"could not run: {type(error).__name__}"])
            continue
        for name, (passed, verdict) in grades.items():
            out.writerow([path.name, name, passed, verdict])
        if not grades:
            out.writerow([path.name, "", False, "defines none of the exercise functions"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
