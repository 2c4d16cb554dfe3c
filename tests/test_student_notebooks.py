"""The student notebooks (notebooks/student/), the grading script and the no-solutions build.

The student notebooks are generated from the chapters by
scripts/make_student_notebooks.py. These tests check that

(a) the committed student notebooks are exactly what the script generates now,
    so a chapter changed without `make student-notebooks` fails here;
(b) every student notebook runs: its exercise stubs and check cells run in a
    fresh kernel, and every check cell prints "not implemented" and returns
    False; and no cell kept from the chapter uses a name that only a removed
    solution cell defined. Together with the chapters' own nbval run this
    covers a top-to-bottom run, which would take minutes per notebook;
    `make test-colab` does run every student notebook from top to bottom, from
    the installed wheel, as a learner does in Colab;
(c) no student notebook contains solution code: the exercise functions' bodies
    are stubs, no line of a reference body and no code cell of a gated
    solution is left, and no solution directive remains.

Also: book/teaching.md links every student notebook, and the Sphinx extension of
scripts/book_no_solutions.py removes gated solutions (tests/test_book_no_solutions.py
builds the whole book without solutions; tests/test_grading.py grades a class).
"""

import ast
import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbclient
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
STUDENT = ROOT / "notebooks" / "student"
SCRIPTS = ROOT / "scripts"
STUDENT_NOTEBOOKS = sorted(STUDENT.glob("[0-9][0-9]_*.ipynb"))
NAMES = [p.name for p in STUDENT_NOTEBOOKS]


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(path):
    return nbformat.read(path, as_version=4)


def tags(cell):
    return cell.metadata.get("tags", [])


def gated_solution_cells(chapter):
    """The chapter's code cells inside gated solutions that are not tagged `exercise`."""
    inside, cells = False, []
    for cell in chapter.cells:
        if cell.cell_type == "markdown":
            starts = [m.start() for m in re.finditer(r"\{solution-start\}", cell.source)]
            ends = [m.start() for m in re.finditer(r"\{solution-end\}", cell.source)]
            if starts or ends:
                inside = max(starts, default=-1) > max(ends, default=-1)
        elif inside and cell.cell_type == "code" and "exercise" not in tags(cell):
            cells.append(cell)
    return cells


def test_there_are_student_notebooks():
    assert NAMES, "no student notebooks: run `make student-notebooks`"


# --- (a) in sync with the chapters ---


def test_student_notebooks_are_up_to_date(tmp_path):
    """Regenerating gives byte-identical files; else run `make student-notebooks`."""
    subprocess.run(
        [sys.executable, str(SCRIPTS / "make_student_notebooks.py"), "--output-dir", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    fresh = {p.name: p.read_bytes() for p in tmp_path.glob("*.ipynb")}
    committed = {p.name: p.read_bytes() for p in STUDENT_NOTEBOOKS}
    stale = sorted(n for n in fresh.keys() | committed.keys() if fresh.get(n) != committed.get(n))
    assert not stale, f"stale student notebooks {stale}: run `make student-notebooks`"


def test_check_mode_agrees():
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "make_student_notebooks.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout


# --- (b) they run ---


def test_exercise_and_check_cells_run_and_report_not_implemented():
    """All student notebooks' stubs and checks, in order, in one fresh kernel."""
    cells, origin = [], []
    for path in STUDENT_NOTEBOOKS:
        for cell in read(path).cells:
            if {"exercise", "check"} & set(tags(cell)):
                cells.append(cell)
                origin.append(path.name)
    assert any("check" in tags(c) for c in cells), "no check cells at all"
    nb = nbformat.v4.new_notebook(cells=cells)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute(cwd=str(ROOT))
    for cell, name in zip(nb.cells, origin):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{name}: {cell.source!r} raised {errors}"
        if "check" in tags(cell):
            text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
            results = [
                o.data["text/plain"] for o in cell.outputs if o.output_type == "execute_result"
            ]
            assert "not implemented" in text, f"{name}: {cell.source!r} printed {text!r}"
            assert results == ["False"], f"{name}: {cell.source!r} returned {results}"


def bound_and_used(source):
    """Names a cell binds and names it reads (IPython magics made Python first)."""
    from IPython.core.inputtransformer2 import TransformerManager

    tree = ast.parse(TransformerManager().transform_cell(source))
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound, used


@pytest.mark.parametrize("name", NAMES)
def test_kept_cells_do_not_need_removed_solutions(name):
    """No cell of the student notebook reads a name that only a removed cell defined."""
    chapter, student = read(ROOT / "notebooks" / name), read(STUDENT / name)
    code = lambda nb: [c.source for c in nb.cells if c.cell_type == "code"]  # noqa: E731
    defined_by_chapter = set().union(*(bound_and_used(s)[0] for s in code(chapter)))
    defined_by_student = set().union(*(bound_and_used(s)[0] for s in code(student)))
    removed_only = defined_by_chapter - defined_by_student
    for source in code(student):
        missing = bound_and_used(source)[1] & removed_only
        assert not missing, f"{name}: this cell needs {missing} from a removed cell:\n{source}"


# --- (c) no solutions ---


def function_bodies(source):
    """{function name: its body statements' source lines, docstring excluded}."""
    bodies = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            body = node.body
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            lines = "\n".join(ast.get_source_segment(source, s) for s in body).splitlines()
            bodies[node.name] = [line.strip() for line in lines if line.strip()]
    return bodies


def trivial(line):
    """A line that gives nothing away (``else:``, ``return``, a closing bracket)."""
    keyword = r"else|try|finally|pass|return|break|continue|raise NotImplementedError"
    return re.fullmatch(rf"\s*(?:{keyword}|[)\]}}]+):?\s*", line) is not None


def test_trivial_lines_are_not_leaks():
    assert trivial("    else:") and trivial(")") and trivial("raise NotImplementedError")
    assert not trivial("return total / len(y)")


@pytest.mark.parametrize("name", NAMES)
def test_no_solution_code(name):
    chapter, student = read(ROOT / "notebooks" / name), read(STUDENT / name)
    text = "\n".join(c.source for c in student.cells)
    by_id = {c.id: c for c in student.cells}
    for cell in chapter.cells:
        if "exercise" not in tags(cell):
            continue
        stub = by_id[cell.id]  # the stub keeps the cell's id
        for function, body in function_bodies(stub.source).items():
            assert body == ["raise NotImplementedError"], f"{name}: {function} is not a stub"
        reference = function_bodies(cell.source)
        assert reference.keys() == function_bodies(stub.source).keys()
        for function, body in reference.items():
            leaked = [line for line in body if not trivial(line) and line in text]
            assert not leaked, f"{name}: {function}'s solution lines {leaked} are in the notebook"
    for cell in gated_solution_cells(chapter):
        assert cell.id not in by_id and cell.source not in text, f"{name}: solution cell kept"
    for directive in ("{solution}", "{solution-start}", "{solution-end}"):
        assert directive not in text, f"{name} contains {directive}"
    assert all(c.get("outputs", []) == [] for c in student.cells), f"{name} has outputs"


def test_stubs_keep_signature_and_docstring():
    make = load_script("make_student_notebooks")
    source = textwrap.dedent('''\
        def f(
            x, y=1
        ):
            """Doc
            string."""
            return x + y


        def g(z):
            return z
        ''')
    assert make.stub(source) == textwrap.dedent('''\
        def f(
            x, y=1
        ):
            """Doc
            string."""
            # Your code here
            raise NotImplementedError


        def g(z):
            # Your code here
            raise NotImplementedError''')


def test_markdown_solutions_are_dropped():
    make = load_script("make_student_notebooks")
    text = textwrap.dedent("""\
        :::{exercise}
        :label: e1
        Task one.
        :::

        :::{solution} e1
        :class: dropdown
        Secret one.
        ```python
        secret()
        ```
        :::

        ```{solution-start} e2
        :class: dropdown
        ```
        Secret two.""")
    kept, inside = make.strip_markdown(text, False)
    assert kept == ":::{exercise}\n:label: e1\nTask one.\n:::" and inside
    kept, inside = make.strip_markdown("Secret.\n\n```{solution-end}\n```\n\nNext task.", True)
    assert kept == "Next task." and not inside


# --- the teachers' page and tools ---


def test_teaching_page_links_every_student_notebook():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = config["repository"]["url"].rstrip("/").removeprefix("https://github.com/")
    # the Colab edition of each student notebook (scripts/make_colab_notebooks.py)
    prefix = f"https://colab.research.google.com/github/{repo}/blob/main/notebooks/student/"
    page = (ROOT / "book" / "teaching.md").read_text()
    linked = set(re.findall(re.escape(prefix) + r"([\w.-]+\.ipynb)", page))
    assert linked == set(NAMES), "book/teaching.md must link exactly the student notebooks"


def test_no_solutions_extension_removes_gated_solutions(tmp_path):
    """A tiny Sphinx project: hide_solutions plus the extension drop both kinds of solution."""
    (tmp_path / "index.md").write_text(
        textwrap.dedent("""\
            # Exercises

            ```{exercise}
            :label: ex-one
            TASK_TEXT
            ```

            ```{solution} ex-one
            :class: dropdown
            PLAIN_SECRET
            ```

            ```{solution-start} ex-one
            :class: dropdown
            ```
            GATED_SECRET

            ```python
            gated_code = 1
            ```

            ```{solution-end}
            ```

            AFTER_TEXT
            """)
    )
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(SCRIPTS)!r})\n"
        "extensions = ['myst_parser', 'sphinx_exercise', 'book_no_solutions']\n"
        "exclude_patterns = ['_build']\n"
    )

    def build(*options):
        out = tmp_path / "_build" / f"html{len(options)}"
        command = [sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", *options]
        subprocess.run(command + [str(tmp_path), str(out)], check=True)
        return (out / "index.html").read_text(), (out / "_sources").exists()

    shown, sources = build()
    assert all(s in shown for s in ("PLAIN_SECRET", "GATED_SECRET", "gated_code", "AFTER_TEXT"))
    assert sources
    hidden, sources = build("-D", "hide_solutions=1")
    assert "TASK_TEXT" in hidden and "AFTER_TEXT" in hidden
    for secret in ("PLAIN_SECRET", "GATED_SECRET", "gated_code"):
        assert secret not in hidden
    assert not sources, "the sources hold the solutions: they must not be published"


@pytest.mark.parametrize("name", NAMES)
def test_student_notebooks_link_no_edition_with_solutions(name):
    """No link to a chapter page of the book, a chapter notebook or its Colab edition."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    base = config["html"]["baseurl"].rstrip("/")
    text = (STUDENT / name).read_text(encoding="utf-8")
    assert f"{base}/notebooks/" not in text
    for link in re.findall(r"colab\.research\.google\.com/github/[^)\"\s]+", text):
        assert "/notebooks/student/" in link, link
    assert "github.com/" not in text.replace("git+https://github.com/", "")
