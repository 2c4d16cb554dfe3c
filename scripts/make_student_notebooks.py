"""Generate the student notebooks: every chapter without its solutions.

    notebooks/NN_topic.ipynb  ->  notebooks/student/NN_topic.ipynb

for every chapter listed in _toc.yml. The student version

- drops every gated solution, from ```{solution-start}``` to ```{solution-end}```:
  the prose (also when it shares a markdown cell with the exercise) and the code
  cells in between, except the cells tagged ``exercise``;
- turns each ``exercise`` cell into a stub: the ``def`` line(s) and docstring of
  each function stay, the body becomes ``# Your code here`` and
  ``raise NotImplementedError`` (the check cell below it then says "not
  implemented yet");
- drops ``{solution}`` directive blocks (``:::`` or backtick fences) from markdown;
- clears all outputs, execution counts and execution timings;
- starts with a markdown cell saying that this is the student version (it links
  no edition with solutions);
- writes the MyST markup out as plain Markdown, as the Colab edition does
  (scripts/make_colab_notebooks.py), so it reads the same in Colab and Jupyter.

The output depends only on the chapters, _toc.yml and ``repository`` in _config.yml, so
it is deterministic. Run ``make student-notebooks`` after changing a chapter;
``--check`` exits with status 1 if the committed student notebooks are stale.

    python scripts/make_student_notebooks.py [--check] [--output-dir DIR]
"""

import argparse
import ast
import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "notebooks"
STUDENT = CHAPTERS / "student"
STUB_BODY = ["# Your code here", "raise NotImplementedError"]

# The opening line of a MyST directive: a fence of 3+ backticks or colons, then {name}.
DIRECTIVE = re.compile(r"^\s*(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}")


def repository():
    """The repository URL (without a trailing slash) and branch from _config.yml."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def closes(line, fence):
    """True if ``line`` closes a directive opened with ``fence`` (same char, as long or longer)."""
    bare = line.strip()
    return len(bare) >= len(fence) and bare == fence[0] * len(bare)


def strip_markdown(text, in_solution):
    """Remove solutions from one markdown cell.

    ``in_solution`` says whether the cell starts inside a gated solution. Returns
    the text that remains and whether the cell ends inside a gated solution.
    """
    segments, current = [], []
    skip_to = None  # the fence that ends the directive being skipped
    after = None  # the gating state once that directive is closed
    for line in text.splitlines():
        if skip_to is not None:
            if closes(line, skip_to):
                skip_to, in_solution = None, after
            continue
        match = DIRECTIVE.match(line)
        name = match["name"] if match else None
        if in_solution:
            if name == "solution-end":
                skip_to, after = match["fence"], False
            continue
        if name in ("solution", "solution-start"):
            segments.append(current)
            current = []
            skip_to, after = match["fence"], name == "solution-start"
            continue
        current.append(line)
    if skip_to is not None:
        raise ValueError(f"unclosed directive in markdown cell:\n{text}")
    segments.append(current)
    kept = ["\n".join(lines).strip("\n") for lines in segments]
    return "\n\n".join(part for part in kept if part.strip()), in_solution


def stub(source):
    """The functions of an exercise cell with their bodies replaced by a stub."""
    lines = source.splitlines()
    stubs = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue  # anything else in the cell belongs to the solution
        first = node.body[0]
        if first.lineno == node.lineno:
            raise ValueError(f"write the body of {node.name}() on its own lines")
        start = (node.decorator_list[0] if node.decorator_list else node).lineno - 1
        is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        if is_doc and isinstance(first.value.value, str):
            head = lines[start : first.end_lineno]
        else:
            head = lines[start : first.lineno - 1]
        indent = " " * first.col_offset
        stubs.append("\n".join(head + [indent + line for line in STUB_BODY]))
    if not stubs:
        raise ValueError(f"an exercise cell defines no function:\n{source}")
    return "\n\n\n".join(stubs)


def header_cell(chapter_path, title, n_stubs):
    """The first cell of a student notebook: what it is (and no link to the solutions)."""
    text = f"**Student version.** This notebook is *{title}* without the solutions.\n"
    if n_stubs:
        text += (
            "Each coding exercise at the end gives you a function's signature and\n"
            "docstring, with the body `raise NotImplementedError`. Replace that line with\n"
            "your code, run the cell, then run the check cell below it: it tests your\n"
            "function and gives a hint when an answer is wrong. Run the notebook from the\n"
            "top first (in Colab: *Runtime → Run all*); until you fill in a function, its\n"
            'check cell prints "not implemented yet".\n'
        )
    cell = nbformat.v4.new_markdown_cell(text.rstrip("\n"))
    cell.id = "student-version"
    return cell


def student_notebook(chapter_path):
    """The student version of one chapter, as a notebook node."""
    nb = nbformat.read(chapter_path, as_version=4)
    cells, in_solution, n_stubs = [], False, 0
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # timings change on every run
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if "exercise" in cell.metadata.get("tags", []):
                cell.source = stub(cell.source)
                n_stubs += 1
            elif in_solution:
                continue  # solution code
        elif cell.cell_type == "markdown":
            cell.source, in_solution = strip_markdown(cell.source, in_solution)
            if not cell.source.strip():
                continue
        elif in_solution:
            continue
        cells.append(cell)
    if in_solution:
        raise ValueError(f"{chapter_path.name}: a solution-start has no solution-end")
    headings = [c.source.splitlines()[0] for c in nb.cells if c.source.startswith("# ")]
    title = headings[0].lstrip("# ").strip() if headings else chapter_path.stem
    nb.cells = [header_cell(chapter_path, title, n_stubs)] + cells
    return nb


def student_edition(chapter_path):
    """The student notebook as learners get it: no solution and no MyST markup.

    The markup is written out as plain Markdown by the Colab edition's converter
    (scripts/make_colab_notebooks.py), so that the notebook reads the same in
    Colab, Jupyter and on GitHub.
    """
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from make_colab_notebooks import colab_notebook
    finally:
        sys.path.pop(0)
    return colab_notebook(chapter_path, student=True, nb=student_notebook(chapter_path))


def render(nb):
    """The notebook file's text, exactly as nbformat.write would save it."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def toc_files(entry):
    """Every ``file:`` of _toc.yml, depth first."""
    if isinstance(entry, dict):
        yield from [entry["file"]] if "file" in entry else []
        for value in entry.values():
            yield from toc_files(value)
    elif isinstance(entry, list):
        for item in entry:
            yield from toc_files(item)


def chapters():
    """The chapter notebooks notebooks/NN_*.ipynb that the book lists in _toc.yml.

    A notebook that is not in the table of contents yet is a draft: no student version.
    """
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    listed = {Path(f).with_suffix("").as_posix() for f in toc_files(toc)}
    notebooks = CHAPTERS.glob("[0-9][0-9]_*.ipynb")
    return sorted(p for p in notebooks if f"notebooks/{p.stem}" in listed)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files are stale")
    parser.add_argument("--output-dir", type=Path, default=STUDENT)
    args = parser.parse_args(argv)
    wanted = {path.name: render(student_edition(path)) for path in chapters()}
    out = args.output_dir
    if args.check:
        existing = {p.name for p in out.glob("*.ipynb")} if out.is_dir() else set()
        stale = sorted(
            name
            for name in wanted.keys() | existing
            if name not in existing
            or name not in wanted
            or (out / name).read_text(encoding="utf-8") != wanted[name]
        )
        for name in stale:
            print(f"stale: {out / name}")
        if stale:
            print("Run `make student-notebooks` and commit the result.")
            return 1
        print(f"{len(wanted)} student notebooks are up to date.")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name in {p.name for p in out.glob("*.ipynb")} - wanted.keys():
        (out / name).unlink()  # the chapter is gone
    for name, text in wanted.items():
        (out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(wanted)} student notebooks to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
