"""Generate the Colab edition: every chapter and student notebook in plain Markdown.

    notebooks/NN_topic.ipynb          ->  notebooks/colab/NN_topic.ipynb

(The student notebooks, notebooks/student/, are written in the same plain Markdown by
scripts/make_student_notebooks.py, which calls ``colab_notebook`` below.)

Colab renders CommonMark, not MyST. Each markdown cell is parsed with
markdown-it-py and the MyST plugins of mdit-py-plugins (the parser myst-parser
uses), and every MyST construct the parser finds is written out:

- ``{glue:text}`name:fmt``` (and ``{glue}``, ``{glue:md}``) becomes the value the
  chapter glued, read from its stored outputs and formatted as myst-nb does;
- ``{cite:p}`` / ``{cite}`` becomes "(Breiman 2001)", ``{cite:t}`` "Breiman (2001)",
  linked to the book's references page; ``{term}`` a link to the glossary entry;
  ``{ref}`` / ``{numref}`` / ``{doc}`` the target's name ("Exercise 6.2", a section
  title) linked to the book page; relative links to book pages become links to
  the published book;
- ``{exercise}`` becomes a heading "Exercise N.M"; a ``{solution}`` goes into an
  HTML ``<details>`` block (collapsed in Colab); a gated solution
  (``{solution-start}`` ... ``{solution-end}``, whose code cells a ``<details>``
  block cannot wrap) moves to a "Solutions" section at the end of the notebook,
  leaving a pointer and, for a coding exercise, the student's stub in its place;
- admonitions become blockquotes with a bold title; ``(label)=`` targets, ``%``
  comments and ``+++`` breaks are removed. Any other directive or role is an error;
- a figure's caption (``mystnb.figure.caption`` in its cell's metadata, which the
  book shows as a ``<figcaption>``) becomes a line "*Figure N.M: ...*" under it,
  and ``{numref}`` to the figure says "Figure N.M", numbered as the book numbers it.

Code cells, outputs and metadata are kept as they are, except that a cell whose code
the book folds (``hide-input``) becomes a Colab form cell (``# @title``, code hidden).
The published book's address is ``html.baseurl`` in _config.yml, the repository's
``repository.url``.
The output depends only on the notebooks, _toc.yml, _config.yml and
book/references.bib. Run ``make colab-notebooks`` after ``make student-notebooks``;
``--check`` exits with status 1 if the committed Colab edition is stale.

    python scripts/make_colab_notebooks.py [--check] [--output-dir DIR]
"""

import argparse
import copy
import dataclasses
import posixpath
import re
import sys
from functools import cache
from pathlib import Path

import nbformat
import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin
from myst_nb.core.variables import format_plain_text

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "notebooks"
STUDENT = CHAPTERS / "student"
COLAB = CHAPTERS / "colab"
COLAB_URL = "https://colab.research.google.com/github"
ADMONITIONS = ("attention", "caution", "danger", "error", "hint", "important", "note", "tip")
ADMONITIONS += ("warning", "seealso", "admonition")
DROPPED_BLOCKS = ("myst_target", "myst_line_comment", "myst_block_break")

MYST = (
    MarkdownIt("commonmark")
    .use(myst_role_plugin)
    .use(myst_block_plugin)
    .use(colon_fence_plugin)
    .use(dollarmath_plugin)
    .use(amsmath_plugin)
    .use(deflist_plugin)
)


# --- where things are --------------------------------------------------------------


@cache
def config():
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def book_url(docpath, anchor=""):
    """The published page of a document (``notebooks/06_adaboost_heart_disease``)."""
    base = config()["html"]["baseurl"].rstrip("/")
    return f"{base}/{docpath}.html" + (f"#{anchor}" if anchor else "")


def install_ref():
    """The version that the editions install and link (``repository.install_ref``)."""
    repo = config()["repository"]
    return str(repo.get("install_ref", repo.get("branch", "main")))


def colab_link(path):
    """The Colab URL of a notebook of the repository (``notebooks/colab/01_x.ipynb``)."""
    slug = config()["repository"]["url"].rstrip("/").removeprefix("https://github.com/")
    return f"{COLAB_URL}/{slug}/blob/{install_ref()}/{path}"


# A pip requirement on this package from GitHub, as the chapters' setup cells write it.
INSTALL = re.compile(r"git\+https://github\.com/[\w.-]+/[\w-]+(?:\.git)?(?:@[\w./-]+)?")


def with_install(source):
    """A code cell's source installing the repository and version of _config.yml."""
    url = config()["repository"]["url"].rstrip("/")
    return INSTALL.sub(f"git+{url}@{install_ref()}", source)


def glue_values(nb):
    """``{name: mime bundle}`` of every value the notebook glued (myst-nb's scrapbook outputs)."""
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook")
            if output.get("output_type") == "display_data" and scrap:
                prefix = scrap.get("mime_prefix", "")
                values[scrap["name"]] = {k.removeprefix(prefix): v for k, v in output.data.items()}
    return values


@cache
def bibliography():
    """``{key: (authors as cited, year)}`` from book/references.bib."""
    from pybtex.database import parse_file

    def name(person):
        return decode_latex(" ".join(person.last_names))

    cited = {}
    for key, entry in parse_file(str(ROOT / "book" / "references.bib")).entries.items():
        people = [name(p) for p in entry.persons.get("author", [])]
        authors = {1: "{}", 2: "{} and {}"}.get(len(people), "{} et al.").format(*people)
        cited[key] = (authors, entry.fields["year"])
    return cited


def decode_latex(text):
    """``Varoquaux``, ``Duchesnay`` and ``Ga{\\"e}l`` as plain Unicode."""
    import codecs

    import latexcodec  # noqa: F401  (registers the codec)

    return codecs.decode(text, "ulatex").replace("{", "").replace("}", "")


@dataclasses.dataclass
class Target:
    docpath: str  # the book page
    text: str  # what a reference to it says
    anchor: str = ""


@cache
def targets():
    """Every label a chapter can refer to: exercises, ``(label)=`` sections, pages."""
    found = {}
    for path in chapters():
        docpath = f"notebooks/{path.stem}"
        number, exercises = chapter_number(path), 0
        cells = nbformat.read(path, as_version=4).cells
        texts = [c.source for c in cells if c.cell_type == "markdown"]  # each parsed alone
        found[docpath] = Target(docpath, first_heading("\n\n".join(texts)) or path.stem)
        figures = [c for c in cells if c.cell_type == "code" and figure_of(c).get("name")]
        for position, cell in enumerate(figures, start=1):  # as _ext/chapter_figures.py numbers
            name = figure_of(cell)["name"]
            found[name] = Target(docpath, f"Figure {number}.{position}", name)
        for label, kind in (found for text in texts for found in labels(text)):
            if kind == "exercise":
                exercises += 1
                found[label] = Target(docpath, f"Exercise {number}.{exercises}", label)
            else:
                found[label] = Target(docpath, kind, label)
    for page in sorted((ROOT / "book").glob("*.md")):
        text, docpath = page.read_text(encoding="utf-8"), f"book/{page.stem}"
        found[docpath] = Target(docpath, first_heading(text) or page.stem)
        found.update({lb: Target(docpath, k, lb) for lb, k in labels(text) if k != "exercise"})
    return found


def figure_of(cell):
    """A figure cell's ``mystnb.figure`` metadata (caption and name), or ``{}``."""
    return cell.metadata.get("mystnb", {}).get("figure", {})


def labels(text):
    """``(label, "exercise")`` for each exercise and ``(label, heading)`` for each target."""
    tokens = MYST.parse(text)
    for i, token in enumerate(tokens):
        if token.type == "myst_target" and i + 2 < len(tokens):
            following = tokens[i + 2].content if tokens[i + 1].type == "heading_open" else ""
            yield token.content.strip(), following
        elif token.type in ("fence", "colon_fence") and directive_name(token) == "exercise":
            yield directive_parts(token)[1].get("label", ""), "exercise"


def first_heading(text):
    tokens = MYST.parse(text)
    return next((tokens[i + 1].content for i, t in enumerate(tokens) if t.tag == "h1"), None)


# --- directives and roles ------------------------------------------------------------------


def directive_name(token):
    match = re.fullmatch(r"\{([\w:-]+)\}(.*)", token.info.strip())
    return match[1] if match else None


def directive_parts(token):
    """``(argument, options, body)`` of a directive token."""
    argument = re.fullmatch(r"\{[\w:-]+\}\s*(.*)", token.info.strip())[1]
    lines = token.content.splitlines()
    options = {}
    if lines and lines[0].strip() == "---":  # YAML options block
        end = lines.index("---", 1)
        options, lines = yaml.safe_load("\n".join(lines[1:end])) or {}, lines[end + 1 :]
    while lines and (option := re.fullmatch(r":([\w-]+):\s*(.*)", lines[0].strip())):
        options[option[1]], lines = option[2], lines[1:]
    return argument, options, "\n".join(lines).strip("\n")


@dataclasses.dataclass
class Chapter:
    """What converting one notebook's markdown needs to know, and its running state."""

    docpath: str  # the chapter's book page, e.g. notebooks/06_adaboost_heart_disease
    number: int
    glued: dict
    student: bool
    exercises: int = 0
    heading_level: int = 1
    in_solution: bool = False  # inside a gated solution


def role(name, content, chapter):
    """The Markdown that replaces one MyST role."""
    if name in ("glue", "glue:any", "glue:text", "glue:md"):
        key, spec = content, "s"
        if name == "glue:text" and ":" in content:  # myst-nb: the last ":" starts a format spec
            key, spec = content.rsplit(":", 1)
        if key not in chapter.glued:
            raise ValueError(f"{chapter.docpath}: nothing glued as {key!r}")
        data = chapter.glued[key]
        if name == "glue:md":
            return data["text/markdown"]
        return (
            format_plain_text(data["text/plain"], spec)
            if name == "glue:text"
            else data["text/plain"]
        )
    if name in ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts"):
        refs = book_url("book/references")
        cited = [bibliography()[key.strip()] for key in content.split(",")]
        if name.startswith("cite:t"):
            return "; ".join(f"[{a} ({y})]({refs})" for a, y in cited)
        return "(" + "; ".join(f"[{a} {y}]({refs})" for a, y in cited) + ")"
    explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content, re.S)
    text, label = (explicit[1], explicit[2]) if explicit else (None, content)
    if name == "term":
        anchor = "term-" + re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
        return f"[{text or label}]({book_url('book/glossary', anchor)})"
    if name in ("ref", "numref", "doc"):
        if name == "doc":
            base = posixpath.dirname(chapter.docpath)
            label = posixpath.normpath(posixpath.join(base, label)).removesuffix(".md")
        target = targets().get(label)
        if target is None:
            raise ValueError(f"{chapter.docpath}: no target {label!r} for {{{name}}}")
        number = target.text.rpartition(" ")[2]
        if text and name == "numref":
            text = text.replace("%s", number).replace("{number}", number)
        if chapter.student and target.docpath.startswith("notebooks/"):
            return text or target.text  # the book's chapter pages hold the solutions
        return f"[{text or target.text}]({book_url(target.docpath, target.anchor)})"
    if name == "math":
        return f"${content}$"
    if name in ("sub", "sup"):
        return f"<{name}>{content}</{name}>"
    raise ValueError(f"{chapter.docpath}: no Colab form for the role {{{name}}}")


def directive(token, chapter):
    """The Markdown that replaces one MyST directive (a fence or ``:::`` block)."""
    name = directive_name(token)
    argument, options, body = directive_parts(token)
    if name == "exercise":
        chapter.exercises += 1
        title = f" ({convert_text(argument, chapter)})" if argument else ""
        level = "#" * min(chapter.heading_level + 1, 6)
        return f"{level} Exercise {chapter.number}.{chapter.exercises}{title}\n\n" + convert_text(
            body, chapter
        )
    if name in ("solution", "solution-start"):
        if chapter.student:
            raise ValueError(f"{chapter.docpath}: a student notebook holds a solution")
        if argument not in targets():
            raise ValueError(f"{chapter.docpath}: a solution to an unknown exercise {argument!r}")
        exercise = targets()[argument].text
        if name == "solution-start":
            chapter.in_solution = True
            return f"**Solution to {exercise}**"
        return (
            f"<details>\n<summary>Solution to {exercise}</summary>\n\n"
            + convert_text(body, chapter)
            + "\n\n</details>"
        )
    if name == "solution-end":
        chapter.in_solution = False
        return ""
    if name in ADMONITIONS:
        title = argument if name == "admonition" else (argument or name.capitalize())
        title = {"Seealso": "See also"}.get(title, title)
        text = f"**{convert_text(title, chapter)}**\n\n" + convert_text(body, chapter)
        return "\n".join(("> " + line).rstrip() for line in text.splitlines())
    if name == "math":
        return f"$$\n{body}\n$$"
    raise ValueError(f"{chapter.docpath}: no Colab form for the directive {{{name}}}")


def book_link(href, chapter):
    """A relative link to a page of the book, as a link to the published page."""
    if re.match(r"[a-z]+:|#", href):
        return href
    path, _, anchor = href.partition("#")
    if not path.endswith((".md", ".ipynb")):
        return href
    base = posixpath.dirname(chapter.docpath)
    docpath = posixpath.splitext(posixpath.normpath(posixpath.join(base, path)))[0]
    if chapter.student and docpath.startswith("notebooks/"):  # not the page with solutions
        return colab_link(f"notebooks/student/{posixpath.basename(docpath)}.ipynb")
    return book_url(docpath, anchor)


def colab_edition_link(href):
    """A Colab link to a chapter, pointed at its Colab edition (student notebooks are one)."""
    match = re.fullmatch(re.escape(colab_link("notebooks/")) + r"([\w-]+\.ipynb)", href)
    return colab_link(f"notebooks/colab/{match[1]}") if match else href


def convert_inline(text, inline_tokens, chapter):
    """Replace, in order, the roles and the links the parser found in ``text``."""
    cursor, parts, href = 0, [], None
    for token in (child for inline in inline_tokens for child in inline.children or []):
        if token.type == "myst_role":
            name = token.meta["name"]
            pattern = re.escape("{" + name + "}") + r"(`+)" + re.escape(token.content) + r"\1"
            replacement = role(name, token.content, chapter)
        elif token.type == "link_open":
            href = token.attrs.get("href", "")
            continue
        elif token.type == "link_close":  # after the link text, which may hold roles
            new = colab_edition_link(book_link(href, chapter))
            if new == href:
                continue
            pattern, replacement = r"(\]\(\s*<?|<)" + re.escape(href), None
        else:
            continue
        match = re.compile(pattern).search(text, cursor)
        if match is None:
            raise ValueError(f"{chapter.docpath}: cannot find {pattern!r} in {text!r}")
        if replacement is None:
            replacement = match[1] + new
        parts += [text[cursor : match.start()], replacement]
        cursor = match.end()
    return "".join(parts) + text[cursor:]


def convert_text(text, chapter):
    """One markdown text (a cell, or a directive's body) without MyST."""
    lines, blocks = text.splitlines(), []
    tokens = MYST.parse(text)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        j = i + 1  # the tokens of this top-level block: up to the next level-0 token with a map
        while j < len(tokens) and not (tokens[j].level == 0 and tokens[j].map):
            j += 1
        start, end = token.map
        source = "\n".join(lines[start:end])
        if token.type in DROPPED_BLOCKS:
            pass
        elif token.type in ("fence", "colon_fence") and directive_name(token):
            blocks.append(directive(token, chapter))
        elif token.type in ("math_block_label", "amsmath"):  # no labels, always in $$
            blocks.append(f"$$\n{token.content.strip()}\n$$")
        elif token.type in ("fence", "code_block", "math_block", "html_block"):
            blocks.append(source)
        else:
            inner = tokens[i + 1 : j]
            if any(t.type in DROPPED_BLOCKS or directive_name(t) for t in inner if t.info or t.map):
                raise ValueError(f"{chapter.docpath}: MyST inside a list or quote:\n{source}")
            if token.type == "heading_open":
                chapter.heading_level = int(token.tag[1])
            blocks.append(convert_inline(source, [t for t in tokens[i:j] if t.children], chapter))
        i = j
    return "\n\n".join(block.strip("\n") for block in blocks if block.strip())


# --- notebooks ------------------------------------------------------------------------------


def chapter_number(path):
    return int(path.name[:2])


def split_at_gates(nb):
    """The notebook with every ``{solution-start}`` and ``{solution-end}`` in a cell of its own."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "markdown" or "{solution-" not in cell.source:
            cells.append(cell)
            continue
        lines, pieces, cursor = cell.source.splitlines(), [], 0
        for token in MYST.parse(cell.source):
            if token.level == 0 and token.map and directive_name(token) in GATES:
                start, end = token.map
                pieces += ["\n".join(lines[cursor:start]), "\n".join(lines[start:end])]
                cursor = end
        pieces.append("\n".join(lines[cursor:]))
        for i, piece in enumerate(p for p in pieces if p.strip()):
            part = nbformat.v4.new_markdown_cell(piece.strip("\n"))
            part.id = cell.id if i == 0 else f"{cell.id}-{i}"
            cells.append(part)
    nb.cells = cells
    return nb


GATES = ("solution-start", "solution-end")


def as_form(cell):
    """A cell whose code the book folds (``hide-input``: figures, plumbing) as a Colab form.

    Colab shows a form cell's title and hides its code until double-clicked.
    """
    if "hide-input" not in cell.metadata.get("tags", []) or cell.source.startswith("# @title"):
        return cell
    figure = any(
        "image/png" in out.get("data", {}) or "text/html" in out.get("data", {})
        for out in cell.get("outputs", [])
    )
    title = "Figure code" if figure else "Code folded in the book"
    cell.source = f"# @title {title} (double-click to show)\n" + cell.source
    cell.metadata["cellView"] = "form"
    return cell


def fold_solutions(cells, chapter):
    """The chapter with its gated solutions moved to a "Solutions" section at the end.

    In place of each, a line pointing there and, for a coding exercise, the
    student's stub, so that the check cell below says "not implemented yet" until
    the reader writes the function; at the end, the solution and its check cell
    again (cell ids ending in ``-folded``).
    """
    from make_student_notebooks import stub

    kept, folded, gate, just_closed = [], [], None, False
    for cell in cells:
        source = cell.source.strip()
        if just_closed and "check" in cell.metadata.get("tags", []):
            check = copy.deepcopy(cell)  # the check again, after the solution
            check.id = f"{cell.id}-folded"
            folded.append(check)
            cell.outputs, cell.execution_count = [], None  # in place it says "not implemented"
        just_closed = False
        if cell.cell_type == "markdown" and source.startswith("**Solution to Exercise"):
            gate = [nbformat.v4.new_markdown_cell("### " + source.strip("*"))]
            gate[0].id = f"{cell.id}-folded"
            note = f"*{source.strip('*')}: in the section Solutions, at the end of the notebook.*"
            cell.source = note
            kept.append(cell)
            continue
        if gate is not None and cell.cell_type == "markdown" and not source:
            folded += gate  # the solution-end marker, converted to nothing
            gate, just_closed = None, True
            continue
        if gate is None:
            kept.append(cell)
            continue
        if "exercise" in cell.metadata.get("tags", []):  # the solution at the end, a stub here
            moved = copy.deepcopy(cell)
            moved.id = f"{cell.id}-folded"
            gate.append(moved)
            cell.source, cell.outputs, cell.execution_count = stub(cell.source), [], None
            kept.append(cell)
        else:
            gate.append(cell)
    if gate is not None:
        raise ValueError(f"{chapter.docpath}: a solution-start has no solution-end")
    if not folded:
        return kept
    heading = nbformat.v4.new_markdown_cell(
        "## Solutions\n\nThe solutions of the exercises whose answers are code, each "
        "followed by its check cell."
    )
    heading.id = "solutions"
    return kept + [heading] + folded


def colab_notebook(path, student=False, nb=None):
    """The Colab edition of a chapter (or of its student version), as a notebook node."""
    full = CHAPTERS / path.name
    nb = split_at_gates(nb if nb is not None else nbformat.read(path, as_version=4))
    chapter = Chapter(
        f"notebooks/{path.stem}", chapter_number(path), glue_values(nbformat.read(full, 4)), student
    )
    cells, figures = [], 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = convert_text(cell.source, chapter)
        elif cell.cell_type == "code":
            cell = as_form(cell)
            cell.source = with_install(cell.source)
        cells.append(cell)
        caption = figure_of(cell).get("caption") if cell.cell_type == "code" else None
        if caption:  # the book's <figcaption>, as a line under the figure
            figures += 1
            text = convert_text(caption, chapter)
            caption_cell = nbformat.v4.new_markdown_cell(
                f"*Figure {chapter.number}.{figures}: {text}*"
            )
            caption_cell.id = f"{figure_of(cell)['name']}-caption"
            cells.append(caption_cell)
    if chapter.in_solution:
        raise ValueError(f"{path.name}: a solution-start has no solution-end")
    if not student:
        cells = fold_solutions(cells, chapter)
    header = [] if student else [header_cell(path)]  # a student notebook has its own
    nb.cells = header + [c for c in cells if c.source.strip()]
    for key in ("mystnb", "myst", "jupytext"):
        nb.metadata.pop(key, None)
    return nb


def header_cell(path):
    """A note on top: what this edition is, and where the book page is."""
    docpath = f"notebooks/{path.stem}"
    title = config()["title"]
    text = (
        f"*Colab edition of a chapter of [{title}]({book_url('book/index')}), generated "
        f"from the book's notebook. The [book page]({book_url(docpath)}) has the same text, "
        "numbers and figures. The solutions of the coding exercises are gathered at the "
        f"end; the [student edition]({colab_link(f'notebooks/student/{path.name}')}) has "
        "none.*"
    )
    cell = nbformat.v4.new_markdown_cell(text)
    cell.id = "colab-edition"
    return cell


def render(nb):
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def chapters():
    """The chapters that the book lists (as scripts/make_student_notebooks.py decides)."""
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from make_student_notebooks import chapters as listed
    finally:
        sys.path.pop(0)
    return listed()


def wanted():
    """``{relative path: text}`` of every Colab-edition notebook."""
    return {path.name: render(colab_notebook(path)) for path in chapters()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files are stale")
    parser.add_argument("--output-dir", type=Path, default=COLAB)
    args = parser.parse_args(argv)
    files, out = wanted(), args.output_dir
    existing = {p.relative_to(out).as_posix() for p in out.rglob("*.ipynb")}
    if args.check:
        stale = sorted(
            name
            for name in files.keys() | existing
            if name not in files
            or name not in existing
            or (out / name).read_text(encoding="utf-8") != files[name]
        )
        for name in stale:
            print(f"stale: {out / name}")
        if stale:
            print("Run `make colab-notebooks` and commit the result.")
            return 1
        print(f"{len(files)} Colab notebooks are up to date.")
        return 0
    for name in existing - files.keys():
        (out / name).unlink()  # the chapter is gone
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} Colab notebooks to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
