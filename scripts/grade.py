"""Grade a class's submissions of one assignment with otter-grader: a gradebook and feedback.

    python scripts/grade.py 05_random_forest submissions/ [--jobs 2] [--timeout 1200]

``submissions/`` holds one notebook per student, either as a file (the student is
the file's stem: ``alice.ipynb``) or in a folder of its own (the student is the
folder's name: ``alice/05_random_forest.ipynb``, so that ten downloads with the
same name do not collide). Each notebook is graded alone by ``otter run`` with the
autograder zip of ``make assignments`` (``_build/assignments/NAME/autograder/``), in
a fresh kernel of this Python. Writes

- ``submissions/grades.csv``: one row per student, a column per auto-graded
  question with its points, ``total``, and ``review``: what the learner wrote that
  reaches into Python or the grader (``builtins``, ``importlib``, ``__code__``, ...),
  whose points are then not to be trusted; a question whose function or answer is
  missing or misnamed scores 0;
- ``submissions/feedback/STUDENT.txt``: per question, the points and, where some
  were lost, the first failing case and its hint; the questions the teacher grades
  by hand are listed too.

The learners' check cells (which call their functions in the notebook's kernel,
without a time limit) are skipped; every question is graded at the end of the
notebook, so an answer written in a new cell below the exercise counts. This runs
the learners' code on your machine: grade in a container or a throwaway account.
"""

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHECK_CELL = re.compile(r"(from treelib\.exercises import check_\w+\s*)?\s*check_\w+\(\w+\)\s*")
FAILURE = re.compile(r"(?:AssertionError|Error): (.*)")
# Code that reaches into Python or the grader rather than answering: the grade of such a
# notebook is not to be trusted (it runs in the kernel that otter grades in), so it is
# named in the gradebook's last column for the teacher to read.
REVIEW = re.compile(
    r"\bbuiltins\b|__builtins__|\bimportlib\b|__code__|sys\.modules|\botter\b|\bgc\b|\bctypes\b"
)


def to_review(notebook, handed_out):
    """What in the cells the learner wrote or changed matches ``REVIEW`` (sorted, unique)."""
    given = {c.source for c in nbformat.read(handed_out, as_version=4).cells}
    cells = nbformat.read(notebook, as_version=4).cells if notebook else []
    found = {m[0] for c in cells if c.source not in given for m in REVIEW.finditer(c.source)}
    return " ".join(sorted(found))


def questions(assignments, name):
    """``[(question, points, manual)]`` in the assignment's order (from its assign source)."""
    source = nbformat.read(assignments / "source" / f"{name}.ipynb", as_version=4)
    found = []
    for cell in source.cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(cell.source.split("\n", 1)[1])
            found.append((config["name"], config["points"], bool(config.get("manual"))))
    return found


def submissions(folder):
    """``[(student, notebook or None)]``: a file per student, or a folder per student."""
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.is_file() and entry.suffix == ".ipynb":
            found.append((entry.stem, entry))
        elif entry.is_dir() and entry.name != "feedback" and not entry.name.startswith("."):
            notebooks = sorted(
                p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints" not in str(p)
            )
            found.append((entry.name, notebooks[0] if notebooks else None))
    return found


def prepared(path, name, workdir):
    """A copy of the submission that otter grades: check cells skipped, the book's kernel."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        # otter checks a question right after its last cell; grade every one at the end
        cell.metadata.get("otter", {}).pop("tests", None)
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and ("check" in tags or CHECK_CELL.fullmatch(cell.source)):
            cell.metadata["tags"] = tags + ["otter_ignore"]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata.setdefault("otter", {})["assignment_name"] = name
    target = workdir / f"{name}.ipynb"
    nbformat.write(nb, target)
    return target


def kernel_path(workdir):
    """A Jupyter data folder whose ``python3`` kernel is this Python, whatever else is installed."""
    spec = workdir / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    return str(workdir / "jupyter")


def grade_one(zip_path, name, notebook, timeout):
    """``({question: points}, {question: first failure}, note)`` for one submission."""
    if notebook is None:
        return {}, {}, "no notebook found"
    workdir = Path(tempfile.mkdtemp(prefix="grade-"))
    try:
        target = prepared(notebook, name, workdir)
        out = workdir / "out"
        out.mkdir()
        env = {**os.environ, "JUPYTER_PATH": kernel_path(workdir)}
        otter = Path(sys.executable).with_name("otter")
        command = [str(otter), "run", "-a", str(zip_path), "-o", str(out), str(target)]
        try:
            subprocess.run(command, capture_output=True, timeout=timeout, env=env, cwd=workdir)
        except subprocess.TimeoutExpired:
            return {}, {}, f"not graded: the notebook ran longer than {timeout} s"
        if not (out / "results.json").exists():
            return {}, {}, "not graded: the notebook could not be run"
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    points, failures = {}, {}
    for test in results["tests"]:
        if "score" not in test:
            continue
        points[test["name"]] = test["score"]
        if test["score"] < test["max_score"]:
            found = FAILURE.search(test.get("output", ""))
            failures[test["name"]] = found[1] if found else test.get("output", "").strip()
    return points, failures, ""


def number(x):
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}"


def feedback(student, graded, failures, note, listed):
    lines = [f"Feedback for {student}", ""]
    if note:
        lines += [f"Note: {note}.", ""]
    for question, points, manual in listed:
        if manual:
            lines.append(f"{question}: graded by your teacher (out of {number(points)})")
            continue
        got = graded.get(question, 0)
        lines.append(f"{question}: {number(got)} / {number(points)}")
        if question in failures:  # wrapped, to read in a terminal or on the teachers' page
            lines += textwrap.wrap(
                failures[question], 84, initial_indent="  ", subsequent_indent="  "
            )
    auto = [(q, p) for q, p, manual in listed if not manual]
    total = sum(graded.get(q, 0) for q, _ in auto)
    lines += ["", f"Total (auto-graded): {number(total)} / {number(sum(p for _, p in auto))}"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("assignment", help="e.g. 05_random_forest")
    parser.add_argument("submissions", type=Path)
    parser.add_argument("--assignments", type=Path, default=ROOT / "_build" / "assignments")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks graded at once")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per notebook")
    args = parser.parse_args(argv)
    name, folder = args.assignment, args.submissions
    zips = sorted((args.assignments / name / "autograder").glob("*.zip"))
    if not zips:
        sys.exit(f"no autograder for {name}: run `make assignments` first")
    listed = questions(args.assignments, name)
    auto = [q for q, _, manual in listed if not manual]
    students = submissions(folder)
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        graded = list(pool.map(lambda s: grade_one(zips[-1], name, s[1], args.timeout), students))
    (folder / "feedback").mkdir(exist_ok=True)
    with open(folder / "grades.csv", "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["student", *auto, "total", "review"])
        handed_out = args.assignments / name / "student" / f"{name}.ipynb"
        for (student, notebook), (points, failures, note) in zip(students, graded):
            row = [points.get(q, 0) for q in auto]
            review = to_review(notebook, handed_out)
            out.writerow([student, *map(number, row), number(sum(row)), review])
            text = feedback(student, points, failures, note, listed)
            (folder / "feedback" / f"{student}.txt").write_text(text, encoding="utf-8")
    print(f"graded {len(students)} submissions: {folder / 'grades.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
