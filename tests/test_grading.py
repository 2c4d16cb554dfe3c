"""The teachers' workflow: `make assignments`, then `make grade` on a class of submissions.

A fixture class of eleven submissions of Chapter 1's assignment (correct, typical
mistakes, treelib's own code, a submission that replaces the checkers and builtins,
a function that never returns, a misnamed function, an answer below the stub, a
module imported in another cell, two students with the same file name, answers as
tensors) is graded by otter-grader, and the whole gradebook is compared with points
worked out by hand.
"""

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NAME = "01_decision_stump"
EXAMPLE = ROOT / "book" / "grading-example"

# The points of Chapter 1's auto-graded questions (scripts/assignments/01_decision_stump.yml).
POINTS = {
    "gini_by_hand": 1,
    "gini_max": 1,
    "entropy_stump": 2,
    "strict_inequality": 2,
    "sort_once": 2,
    "scaled_weights": 1,
    "gini": 4,
    "best_threshold": 4,
}
FULL = sum(POINTS.values())

# Each student's points, worked out by hand; a question not named gets full points.
EXPECTED = {
    "alice": {},
    # gini truncates the counts: only the fractional case [0.5, 1.5] fails, and it lies
    # in one of the four groups of hidden cases (index 7 of FIXED_COUNTS, group 7 % 4 = 3)
    "bob": {"gini": 3, "gini_by_hand": 0},
    "carol": {"gini": 0},  # calls treelib.gini
    # sum(p**2): wrong in every group (each group holds a case where it is not 1 - sum(p**2))
    "dave": {"gini": 0, "gini_by_hand": 0},
    "erin": {"best_threshold": 0},  # never returns
    "frank": {"gini": 0},  # my_gini2
    "grace": {},  # the answer in a new cell below the untouched stub
    "heidi": {},  # torch.nn.functional imported in another cell
    "ivan": {},  # ivan/01_decision_stump.ipynb
    "judy": dict.fromkeys(POINTS, 0),  # judy/01_decision_stump.ipynb, untouched
    "kim": {},  # answers as tensors and numpy numbers, "No " for "no"
}


def run(*args):
    subprocess.run([sys.executable, *map(str, args)], check=True, cwd=ROOT)


def solution_key(teacher):
    """The teachers' edition's answers ``{variable: source}`` and functions ``{name: source}``."""
    answers, functions = {}, {}
    for cell in teacher.cells:
        if cell.cell_type != "code":
            continue
        for line in cell.source.splitlines():
            found = re.fullmatch(r"(\w+) = (.*)  # SOLUTION", line)
            if found:
                answers[found[1]] = found[2]
        if "exercise" in cell.metadata.get("tags", []):
            code = "\n".join(x for x in cell.source.splitlines() if "SOLUTION" not in x)
            functions[re.search(r"def my_(\w+)\(", code)[1]] = code
    return answers, functions


def submission(student, answers, functions, extra=()):
    """The student notebook with answer cells and function cells filled in."""
    nb = nbformat.read(student, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        if lines and all(re.fullmatch(r"\w+ = \.\.\.", x) for x in lines):
            cell.source = "\n".join(f"{x.split()[0]} = {answers[x.split()[0]]}" for x in lines)
        found = re.search(r"def my_(\w+)\(", cell.source)
        if found and "exercise" in cell.metadata.get("tags", []) and found[1] in functions:
            cell.source = functions[found[1]]
    for after, source in extra:  # (the cell after which it goes, its source)
        index = next(i for i, c in enumerate(nb.cells) if after in c.source) + 1
        nb.cells.insert(index, nbformat.v4.new_code_cell(source))
    return nb


CHEATS = """\
import builtins
import math

import numpy as np
import torch

import treelib.exercises

treelib.exercises.CHECKERS["gini"] = lambda f: True
treelib.exercises.check_gini = lambda f: True
abs = lambda x: 0  # noqa: E731
builtins.abs = lambda x: 0
np.allclose = lambda *a, **k: True
np.isclose = lambda *a, **k: True
torch.allclose = lambda *a, **k: True
math.isclose = lambda *a, **k: True
"""


def fixture_class(folder, student, teacher):
    answers, functions = solution_key(nbformat.read(teacher, as_version=4))
    right = functions
    gini, best = right["gini"], right["best_threshold"]
    variants = {
        "alice/01_decision_stump": (answers, right, ()),
        "bob": (
            {**answers, "gini_by_hand": "0.38"},
            {**right, "gini": gini.replace("p = counts", "p = counts.long().double()\n    p = p")},
            (),
        ),
        "carol": (answers, {**right, "gini": gini.split('"""\n')[0] + '"""\n' + GINI_TREELIB}, ()),
        "dave": (
            {**answers, "gini_by_hand": "0.38"},
            {**right, "gini": gini.replace("return 1 - (p**2).sum()", "return (p**2).sum()")},
            [("def my_gini", CHEATS)],
        ),
        "erin": (answers, {**right, "best_threshold": NEVER_RETURNS}, ()),
        "frank": (answers, {**right, "gini": gini.replace("def my_gini(", "def my_gini2(")}, ()),
        "grace": (answers, {"best_threshold": best}, [("check_gini(my_gini)", gini)]),
        "heidi": (
            answers,
            {**right, "best_threshold": best.replace("torch.nn.functional.one_hot", "F.one_hot")},
            [("check_best_threshold(", "import torch.nn.functional as F")],
        ),
        "ivan/01_decision_stump": (answers, right, ()),
        "judy/01_decision_stump": ({}, {}, ()),
        "kim": (
            {
                **answers,
                "gini_by_hand": f"torch.tensor({answers['gini_by_hand']})",
                "entropy_stump_threshold": f"np.float32({answers['entropy_stump_threshold']})",
                "strict_changes_training": "'No '",
            },
            right,
            (),
        ),
    }
    for path, (values, written, extra) in variants.items():
        if not values:  # untouched
            nb = nbformat.read(student, as_version=4)
        else:
            nb = submission(student, values, written, extra)
        target = folder / f"{path}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)


GINI_TREELIB = "    import treelib\n\n    return treelib.gini(counts)"
NEVER_RETURNS = '''def my_best_threshold(x, y):
    """Loops for ever."""
    while True:
        pass'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("assignments")
    run("scripts/make_assignments.py", "--output-dir", out, "--time-limit", "30", NAME)
    folder = tmp_path_factory.mktemp("submissions")
    student = out / NAME / "student" / f"{NAME}.ipynb"
    fixture_class(folder, student, out / NAME / "autograder" / f"{NAME}.ipynb")
    run("scripts/grade.py", NAME, folder, "--assignments", out, "--jobs", "2")
    return out, folder


def test_assignment_files(graded):
    out, _ = graded
    student = (out / NAME / "student" / f"{NAME}.ipynb").read_text(encoding="utf-8")
    assert list((out / NAME / "autograder").glob("*.zip"))
    # no solution, no hidden test, no MyST in what learners get
    for leak in (
        "SOLUTION",
        "p = counts / counts.sum()",
        "hidden_grader",
        "gini_by_hand = 0.62",
        ":::",
        "{numref}",
    ):
        assert leak not in student, leak
    assert "raise NotImplementedError" in student and "gini_by_hand = ..." in student
    nb = nbformat.read(out / NAME / "student" / f"{NAME}.ipynb", as_version=4)
    assert any(c.source.startswith("## 1.1 ") for c in nb.cells)  # the whole chapter
    answers = [c for c in nb.cells if "_Type your answer here" in c.source]
    assert all(c.metadata.get("editable", True) for c in answers)  # not locked by otter


def test_gradebook(graded):
    _, folder = graded
    rows = list(csv.reader((folder / "grades.csv").open(encoding="utf-8")))
    assert rows[0] == ["student", *POINTS, "total", "review"]
    expected = []
    for student, lost in EXPECTED.items():
        points = [lost.get(q, full) for q, full in POINTS.items()]
        review = "builtins" if student == "dave" else ""  # his cell rewrites builtins.abs
        expected.append([student, *map(str, points), str(sum(points)), review])
    assert rows[1:] == expected
    assert sum(int(r[-2]) for r in rows[1:]) == 11 * FULL - (1 + 1) - 4 - 5 - 4 - 4 - FULL


def test_feedback(graded):
    _, folder = graded
    bob = (folder / "feedback" / "bob.txt").read_text(encoding="utf-8")
    assert "gini: 3 / 4" in bob and "gini_by_hand: 0 / 1" in bob
    assert "[0.5, 1.5]" in bob and "Hint:" in bob  # the first failing case and its hint
    carol = (folder / "feedback" / "carol.txt").read_text(encoding="utf-8")
    assert "treelib's own implementation" in carol
    erin = (folder / "feedback" / "erin.txt").read_text(encoding="utf-8")
    assert "did not finish within 30 seconds" in erin and "gini: 4 / 4" in erin


def test_committed_example_is_this_run(graded):
    """book/teaching.md shows a gradebook and a feedback file: the ones this test produced."""
    _, folder = graded
    if os.environ.get("UPDATE_GRADING_EXAMPLE"):
        EXAMPLE.mkdir(exist_ok=True)
        for name in ("grades.csv", "feedback/bob.txt"):
            (EXAMPLE / Path(name).name).write_text((folder / name).read_text(encoding="utf-8"))
    assert (EXAMPLE / "grades.csv").read_text() == (folder / "grades.csv").read_text()
    assert (EXAMPLE / "bob.txt").read_text() == (folder / "feedback" / "bob.txt").read_text()


def reference_functions():
    """``(checker name, the chapter's exercise cells)`` for every coding exercise of the book."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        sources = [c.source for c in cells if "exercise" in c.metadata.get("tags", [])]
        for source in sources:  # a later exercise may call an earlier one (my_entropy)
            found.append((re.search(r"def my_(\w+)\(", source)[1], "\n\n".join(sources)))
    return found


@pytest.mark.parametrize("name, source", reference_functions(), ids=lambda x: x[:20])
def test_reference_solutions_pass_their_hidden_cases(name, source):
    """The hidden cases (other seeds) keep the checkers' tolerances: the book's answers pass."""
    import dill

    namespace = {}
    setup = "import math\nimport numpy as np\nimport torch\nimport treelib\n"
    exec(compile(setup + source, f"<{name}>", "exec"), namespace)  # the book's own solution
    payload = dill.dumps(namespace[f"my_{name}"], recurse=True)
    env = {**os.environ, "TREELIB_CASE_SEED_OFFSET": "1000"}
    command = [sys.executable, "scripts/hidden_grader.py", name]
    run = subprocess.run(command, input=payload, capture_output=True, env=env, cwd=ROOT)
    line = [x for x in run.stdout.decode().splitlines() if x.startswith("OUTCOMES ")]
    assert line, run.stderr.decode()[-2000:]
    outcomes = json.loads(line[0][len("OUTCOMES ") :])
    assert outcomes and all(passed for passed, _, _ in outcomes), outcomes


def test_hidden_cases_differ_from_the_public_ones():
    """The offset moves the random cases: the public checker's inputs are not the hidden ones."""
    code = (
        "from treelib.exercises import check_gini\n"
        "seen = []\n"
        "check_gini(lambda c: seen.append(c.tolist()) or 0.0)\n"
        "print(seen)\n"
    )
    inputs = []
    for offset in ("0", "1000"):
        env = {**os.environ, "TREELIB_CASE_SEED_OFFSET": offset}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, text=True)
        inputs.append(out.stdout.strip().splitlines()[-1])
    public, hidden = (json.loads(x) for x in inputs)
    assert public[:10] == hidden[:10]  # the hand-picked cases, in the package
    assert public[10:] and all(case not in public for case in hidden[10:])


def test_a_course_seed_where_a_reference_fails_is_refused(tmp_path):
    """At seed offset 4242 one of Chapter 2's data sets makes the book's own grow_tree one
    level deeper than treelib's tree (a near-tie): make assignments refuses that seed."""
    command = [sys.executable, "scripts/make_assignments.py", "--output-dir", str(tmp_path)]
    run = subprocess.run(
        [*command, "--seed-offset", "4242", "02_cart_classification"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode != 0 and "['grow_tree'] fails" in run.stderr
    assert not (tmp_path / "02_cart_classification").exists()
