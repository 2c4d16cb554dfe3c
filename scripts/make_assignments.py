"""Generate graded assignments in otter-grader's format from the chapters' exercises.

    python scripts/make_assignments.py [--output-dir _build/assignments] [--seed-offset N]

For every chapter (notebooks/NN_topic.ipynb listed in _toc.yml) this writes an otter
"assign" source, ``OUT/source/NN_topic.ipynb``: the chapter's student notebook, whose
"Exercises" section is rebuilt from the chapter's exercises and from
``scripts/assignments/NN_topic.yml`` (how each exercise is graded); then it runs
``otter assign``, which writes

- ``OUT/NN_topic/student/NN_topic.ipynb``: the assignment to hand out (the chapter in
  plain Markdown, as the Colab edition renders it; no solution, no hidden test);
- ``OUT/NN_topic/autograder/NN_topic.ipynb``: the teachers' edition (solutions,
  rubrics of the manually graded questions);
- ``OUT/NN_topic/autograder/*.zip``: the autograder that ``make grade`` (and
  Gradescope) runs.

One question per exercise. A coding exercise (``kind: function``) is named after its
checker (``gini``, ``random_forest``, ...): the learner's check cell stays (the
package's checker, with its hints), and its points come from hidden tests that run
the same checker in a fresh process on cases drawn from other seeds
(``--seed-offset``, by default drawn once and kept in ``OUT/hidden-seed``; only the
autograder zip and ``OUT/source/`` hold it; a seed at which one of the book's own
solutions fails a hidden case is refused), with treelib's own
implementation refused and a time limit (scripts/hidden_grader.py). A numeric or
short answer (``numeric``, ``choice``) is an answer cell checked by a hidden test
with a tolerance and a hint; the rest (``manual``) are answer cells that the teacher
grades with the rubric of the teachers' edition.
"""

import argparse
import dataclasses
import json
import math
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_colab_notebooks import (  # noqa: E402
    MYST,
    Chapter,
    chapter_number,
    convert_text,
    directive,
    directive_name,
    directive_parts,
    glue_values,
)
from make_student_notebooks import chapters, stub, student_edition  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = Path(__file__).resolve().parent / "assignments"
GRADER = Path(__file__).resolve().parent / "hidden_grader.py"
HIDDEN_GROUPS = 4  # a function question's points come in quarters: its cases, split four ways
TIME_LIMIT = {"grow_tree": 300, "random_forest": 300, "adaboost": 300}  # seconds; others 120
DEFAULT_POINTS = {"function": 4, "numeric": 1, "choice": 1, "manual": 2}


@dataclasses.dataclass
class Exercise:
    label: str
    markdown: list = dataclasses.field(default_factory=list)  # the statement, plain Markdown
    code: list = dataclasses.field(default_factory=list)  # cells the statement needs (data)
    function: str = ""  # a coding exercise's reference solution (the cell tagged exercise)
    solution: list = dataclasses.field(default_factory=list)  # solution text and code


def blocks(text):
    """``(directive name or None, token, source)`` for each top-level block of a markdown cell."""
    lines, tokens, i = text.splitlines(), MYST.parse(text), 0
    while i < len(tokens):
        j = i + 1
        while j < len(tokens) and not (tokens[j].level == 0 and tokens[j].map):
            j += 1
        token = tokens[i]
        name = directive_name(token) if token.type in ("fence", "colon_fence") else None
        yield name, token, "\n".join(lines[token.map[0] : token.map[1]])
        i = j


def exercises(path):
    """The exercises of a chapter, in order."""
    nb = nbformat.read(path, as_version=4)
    chapter = Chapter(f"notebooks/{path.stem}", chapter_number(path), glue_values(nb), False)
    chapter.heading_level = 2  # inside the chapter's "Exercises" section
    start = next(
        i for i, c in enumerate(nb.cells) if c.source.startswith("## Exercises")
    )  # the section runs to the next level-2 heading
    found, current, gated = {}, None, None
    for cell in nb.cells[start:]:
        if cell.cell_type == "markdown" and cell is not nb.cells[start]:
            if cell.source.startswith("## "):
                break
        if cell.cell_type == "code":
            tags = cell.metadata.get("tags", [])
            if gated and "exercise" in tags:
                found[gated].function = cell.source
            elif gated:
                found[gated].solution.append(f"```python\n{cell.source}\n```")
            elif "check" not in tags and current:
                current.code.append(cell.source)
            continue
        for name, token, source in blocks(cell.source.removeprefix("## Exercises").strip("\n")):
            if name == "exercise":
                label = directive_parts(token)[1]["label"]
                current = found[label] = Exercise(label, [directive(token, chapter)])
            elif name == "solution":
                argument, _, body = directive_parts(token)
                found[argument].solution.append(convert_text(body, chapter))
            elif name == "solution-start":
                gated = directive_parts(token)[0]
            elif name == "solution-end":
                gated = None
            elif gated:
                found[gated].solution.append(convert_text(source, chapter))
            elif current:
                current.markdown.append(convert_text(source, chapter))
    return list(found.values())


def specs(path, found):
    """How each exercise is graded: scripts/assignments/NN_topic.yml, else a default."""
    file = SPECS / f"{path.stem}.yml"
    given = yaml.safe_load(file.read_text(encoding="utf-8")) if file.exists() else {}
    result = {}
    for ex in found:
        spec = given.get(ex.label)
        if spec is None and ex.function:
            name = ex.function.split("def my_", 1)[1].split("(", 1)[0]
            spec = {"kind": "function", "name": name}
        elif spec is None:
            spec = {"kind": "manual", "name": ex.label.replace("-", "_")}
        spec.setdefault("points", DEFAULT_POINTS[spec["kind"]])
        result[ex.label] = spec
    if unknown := set(given) - set(result):
        raise ValueError(f"{file.name}: no exercise labelled {sorted(unknown)}")
    return result


def raw(text):
    return nbformat.v4.new_raw_cell(text)


def md(text):
    return nbformat.v4.new_markdown_cell(text)


def code(text, tags=()):
    cell = nbformat.v4.new_code_cell(text)
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def test_cell(body, points):
    config = f'""" # BEGIN TEST CONFIG\nhidden: true\npoints: {points}\n""" # END TEST CONFIG\n'
    return code(config + body)


def function_tests(name, points, offset, time_limit=None):
    """The hidden tests of a coding exercise: its checker's cases, split into groups."""
    limit = time_limit or TIME_LIMIT.get(name, 120)
    each = points / HIDDEN_GROUPS
    cells = []
    for group in range(HIDDEN_GROUPS):
        cells.append(
            test_cell(
                HIDDEN_FUNCTION_TEST.format(
                    name=name, group=group, groups=HIDDEN_GROUPS, offset=offset, limit=limit
                ),
                int(each) if each == int(each) else each,
            )
        )
    return cells


HIDDEN_FUNCTION_TEST = """\
def test_{name}_hidden_{group}(my_{name}):
    import json
    import os
    import subprocess
    import sys

    import dill

    question, group, groups, offset, limit = "{name}", {group}, {groups}, {offset}, {limit}
    assert callable(my_{name}), (
        "No function my_{name}: define it with exactly this name, as the exercise asks."
    )
    cache = globals().setdefault("hidden_outcomes", {{}})
    if question not in cache:
        try:
            payload = dill.dumps(my_{name}, recurse=True)
        except Exception as error:
            cache[question] = (
                f"my_{name} could not be sent to the grader ({{type(error).__name__}}): "
                "it should use only functions, modules and numbers."
            )
        else:
            env = dict(os.environ, TREELIB_CASE_SEED_OFFSET=str(offset))
            grader = [sys.executable, os.path.abspath("hidden_grader.py"), question]
            try:
                run = subprocess.run(
                    grader, input=payload, capture_output=True, timeout=limit, env=env
                )
            except subprocess.TimeoutExpired:
                cache[question] = f"my_{name} did not finish within {{limit}} seconds."
            else:
                lines = [x for x in run.stdout.decode().splitlines() if x.startswith("OUTCOMES ")]
                cache[question] = (
                    json.loads(lines[-1][len("OUTCOMES ") :])
                    if lines
                    else "The grader could not run my_{name}: " + run.stderr.decode()[-300:]
                )
    outcomes = cache[question]
    assert outcomes and not isinstance(outcomes, str), outcomes or "No case was run."
    mine = outcomes[group::groups] or outcomes[group % len(outcomes) :][:1]  # fewer cases
    failed = [o for o in mine if not o[0]]
    assert not failed, (
        f"{{len(failed)}} of {{len(mine)}} hidden cases failed. "
        f"First failure: {{failed[0][1]}}. Hint: {{failed[0][2]}}"
    )
"""

HIDDEN_ANSWER_TEST = """\
def test_{name}({name}):
    # No builtin is called by name: a notebook that rewrites builtins (len, all, float)
    # changes nothing here. The types come from literals, the loops count by hand.
    value, FLOAT, STR = {name}, (0.0).__class__, "".__class__
    expected, kind, tolerance = {expected!r}, {kind!r}, {tolerance!r}
    assert value is not None and value is not ..., "No answer yet: set {name} to your answer."
    if kind == "choice":
        ok = STR.lower(STR.strip(STR(value))) == STR.lower(STR.strip(STR(expected)))
    else:
        want = expected if expected.__class__ is [].__class__ else [expected]
        try:
            got = [FLOAT(value)]
        except Exception:
            try:
                got = [FLOAT(v) for v in value]
            except Exception:
                got = None
        assert got is not None, "{name} should be a number or a list of numbers."
        ok, count = True, 0
        for g in got:
            if count >= want.__len__() or not -tolerance <= g - want[count] <= tolerance:
                ok = False
            count += 1
        ok = ok and count == want.__len__()
    assert ok, {hint!r}
"""


def answer_value(expected_code):
    """Run an answer's ``expected`` snippet (as the spec's rules say) and return ``answer``."""
    import numpy as np
    import sklearn
    import torch

    import treelib

    namespace = {"math": math, "np": np, "torch": torch, "treelib": treelib, "sklearn": sklearn}
    exec(expected_code, namespace)  # the book's own spec files, not learners' input
    answer = namespace["answer"]
    if isinstance(answer, list | tuple):
        return [float(v) for v in answer]
    return float(answer) if isinstance(answer, float | np.floating) else answer


def answer_block(prompt, solution):
    """Otter's prompt (what the learner gets) and solution (the teachers' edition) blocks."""
    blocks = [raw("# BEGIN PROMPT"), prompt, raw("# END PROMPT"), raw("# BEGIN SOLUTION")]
    return blocks + [solution, raw("# END SOLUTION")]


def question_cells(ex, spec, offset, time_limit=None):
    """The cells of one exercise in the assign source: statement, question, tests."""
    kind, name, points = spec["kind"], spec["name"], spec["points"]
    cells = [md("\n\n".join(ex.markdown))] + [code(source) for source in ex.code]
    config = {"name": name, "points": points}
    if kind == "manual":
        config["manual"] = True
    cells.append(raw("# BEGIN QUESTION\n" + yaml.safe_dump(config, sort_keys=False)))
    if kind == "function":
        whole = f"# BEGIN SOLUTION NO PROMPT\n{ex.function}\n# END SOLUTION"
        cells += [raw("# BEGIN SOLUTION"), code(whole, ["exercise"]), raw("# END SOLUTION")]
        cells += [raw("# BEGIN TESTS")] + function_tests(name, points, offset, time_limit)
        cells += [raw("# END TESTS"), raw("# END QUESTION")]
        checker = f"from treelib.exercises import check_{name}\n\ncheck_{name}(my_{name})"
        return cells + [code(checker, ["check"])]
    if kind == "manual":
        rubric = spec.get("rubric", "").strip() or "Full points for the solution's content."
        text = "\n\n".join(ex.solution) or "(see the book)"
        solution = md(f"**Solution.**\n\n{text}\n\n**Rubric** ({points} points)\n\n{rubric}")
        cells.append(md("Your answer, in the text cell below (graded by your teacher):"))
        cells += answer_block(md("_Type your answer here, replacing this text._"), solution)
        return cells + [raw("# END QUESTION")]
    asks, solution, tests = [], [], []
    for answer in spec["answers"]:
        value, variable = answer_value(answer["expected"]), answer["name"]
        asks.append(f"- `{variable}`: {answer['ask']}")
        solution.append(f"{variable} = {value!r}  # SOLUTION")
        body = HIDDEN_ANSWER_TEST.format(
            name=variable,
            expected=value,
            kind=kind,
            tolerance=float(answer.get("tolerance", 0.0)),
            hint=f"Not yet right. Hint: {answer.get('hint', 'work it out again step by step.')}",
        )
        tests.append(test_cell(body, answer.get("points", 1)))
    cells.append(md("Your answer, in the cell below:\n\n" + "\n".join(asks)))
    cells += [raw("# BEGIN SOLUTION"), code("\n".join(solution)), raw("# END SOLUTION")]
    return cells + [raw("# BEGIN TESTS")] + tests + [raw("# END TESTS"), raw("# END QUESTION")]


def stub_functions(student_path, found):
    """Otter leaves a coding exercise's cell empty for the learner: give it the stub."""
    nb = nbformat.read(student_path, as_version=4)
    functions = iter([ex.function for ex in found if ex.function])
    for cell in nb.cells:
        if "exercise" in cell.metadata.get("tags", []):
            cell.source = stub(next(functions))
    nbformat.write(nb, student_path)


def assign_source(path, found, offset, time_limit=None):
    """The otter-assign source notebook of one chapter.

    The whole chapter as its student notebook gives it (text, code without outputs,
    no solution), so that the exercises find the objects the chapter built, with its
    "Exercises" section replaced by one otter question per exercise.
    """
    graded = specs(path, found)
    student = student_edition(path).cells[1:]  # without its "Student version" note
    for cell in student:
        cell.metadata.pop("mystnb", None)  # the book's figure metadata (MyST captions)
    first = next(i for i, c in enumerate(student) if c.source.startswith("## Exercises"))
    last = next(
        (i for i, c in enumerate(student) if i > first and c.source.startswith("## ")),
        len(student),
    )
    config = {
        "name": path.stem,
        "init_cell": False,
        "check_all_cell": False,
        "export_cell": False,
        "run_tests": False,
        "generate": True,
        "tests": {"ok_format": False},
        "autograder_files": [GRADER.name],
    }
    cells = [raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False))]
    cells.append(md(INSTRUCTIONS))
    cells += student[:first] + [md("## Exercises")]
    for ex in found:
        cells += question_cells(ex, graded[ex.label], offset, time_limit)
    cells += student[last:]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


INSTRUCTIONS = (
    "**Assignment.** This is the chapter without its solutions; your work is in its "
    "Exercises section. Run the notebook from the top first (in Colab: *Runtime → Run "
    "all*): the exercises use what the chapter builds. Each coding exercise gives a "
    "function's signature and docstring with the body `raise NotImplementedError`: replace "
    "that line with your code, run the cell, then run the check cell below it, which tests "
    "your function and gives a hint when an answer is wrong. Other exercises have an answer "
    "cell: replace `...` with your number or short answer, or type your answer in the text "
    "cell. Keep the names of the functions and variables as they are: the grader looks them "
    "up by name. Hand in this notebook."
)


def reference_failures(offset, paths):
    """The coding exercises whose reference solution fails a hidden case at ``offset``.

    Some seeded data sets admit two right answers that the checker tells apart (a
    near-tie in a tree); a course's seed must not be one of them.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    import dill

    jobs = []
    for path in paths:
        sources = [ex.function for ex in exercises(path) if ex.function]
        namespace = {}
        exec("import math\nimport numpy as np\nimport torch\nimport treelib\n", namespace)
        exec("\n\n".join(sources), namespace)  # the book's own reference solutions
        for source in sources:
            name = source.split("def my_", 1)[1].split("(", 1)[0]
            jobs.append((name, dill.dumps(namespace[f"my_{name}"], recurse=True)))
    env = {**os.environ, "TREELIB_CASE_SEED_OFFSET": str(offset)}

    def fails(job):
        name, payload = job
        command = [sys.executable, str(GRADER), name]
        run = subprocess.run(command, input=payload, capture_output=True, env=env)
        lines = [x for x in run.stdout.decode().splitlines() if x.startswith("OUTCOMES ")]
        return not lines or not all(passed for passed, _, _ in json.loads(lines[-1][9:]))

    with ThreadPoolExecutor(2) as pool:
        return [name for (name, _), bad in zip(jobs, pool.map(fails, jobs)) if bad]


def hidden_seed(out, given, paths):
    """The course's seed offset: given, or drawn (and kept) where every reference passes."""
    kept = out / "hidden-seed"
    if given is None and kept.exists():
        return int(kept.read_text(encoding="utf-8"))
    offset = given if given is not None else secrets.randbelow(10**9) + 1000
    while failing := reference_failures(offset, paths):
        if given is not None:
            sys.exit(f"at HIDDEN_SEED={given} the book's solution of {failing} fails: take another")
        print(f"hidden seed {offset}: the book's solution of {failing} fails; drawing another")
        offset = secrets.randbelow(10**9) + 1000
    if given is None:
        kept.write_text(f"{offset}\n", encoding="utf-8")
    return offset


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "_build" / "assignments")
    parser.add_argument(
        "--seed-offset",
        type=int,
        help="moves the hidden cases' seeds (default: drawn once, kept in OUT/hidden-seed)",
    )
    parser.add_argument("--time-limit", type=int, help="seconds per function question (all)")
    parser.add_argument("chapters", nargs="*", help="notebook stems (default: every chapter)")
    args = parser.parse_args(argv)
    out, source_dir = args.output_dir.resolve(), args.output_dir.resolve() / "source"
    source_dir.mkdir(parents=True, exist_ok=True)
    # a course's own secret, drawn once and kept with the build
    selected = [p for p in chapters() if not args.chapters or p.stem in args.chapters]
    checked = selected if args.seed_offset is not None else chapters()  # a drawn seed: all
    args.seed_offset = hidden_seed(out, args.seed_offset, checked)
    shutil.copy(GRADER, source_dir / GRADER.name)
    otter = Path(sys.executable).with_name("otter")
    for path in selected:
        source = source_dir / path.name
        found = exercises(path)
        nbformat.write(assign_source(path, found, args.seed_offset, args.time_limit), source)
        shutil.rmtree(out / path.stem, ignore_errors=True)
        subprocess.run([str(otter), "assign", str(source), str(out / path.stem)], check=True)
        stub_functions(out / path.stem / "student" / path.name, found)
        print(f"wrote {out / path.stem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
