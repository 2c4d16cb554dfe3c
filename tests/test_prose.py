"""The text is tested too: conventions that keep the prose as right as the code.

Each convention is documented in README.md ("Adding a chapter") and checked here on
every chapter notebook. Each checker is a plain function that returns the problems
it finds, and is itself tested on a small made-up case, so these tests can fail.

- ``measured`` cells: a markdown cell that reports results of a run carries the
  tag ``measured``; in it every number comes from ``{glue:text}`` (digits may only
  sit in math, code, roles, links and references such as "Figure 5.2").
- ``show_source``: a cell shows every listing it asks for (one output per call).
- builders: a chapter declares in its metadata which tree builder its text
  explains; if it fits with another one, it must say so by linking the note
  ``which-builder``.
- section numbers: ``## N.M Title`` in chapter N, numbered from 1.
- ``treelib`` never points at a path outside the repository.
"""

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

# --- helpers --------------------------------------------------------------------


def load(path):
    return json.loads(Path(path).read_text())


def source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def tags(cell):
    return cell.get("metadata", {}).get("tags", [])


# --- measured numbers are glued -----------------------------------------------------

# What may hold digits in a measured cell, removed before looking for numbers.
ALLOWED = [
    r"\$\$.*?\$\$",  # display math
    r"\$[^$]+\$",  # inline math (may wrap lines)
    r"```.*?```",  # fenced blocks (directives and code)
    r"`[^`\n]*`",  # code spans and the argument of a role
    r"\{[\w:-]+\}",  # the role name before it, e.g. {glue:text}
    r"\]\([^)]*\)",  # link targets
    r"^\s*\(\w[\w-]*\)=\s*$",  # labels
    r"^#+ [\d.]*",  # a heading's section number
    r"<[^>]+>",  # HTML tags and attributes
    r"\b(?:Chapters?|Figures?|Sections?|Exercises?|Tables?|Equations?|cells?|Appendix)"
    r"\s+\d+(?:\.\d+)*(?:\s*(?:-|–|and|to|,)\s*\d+(?:\.\d+)*)*",
]
MARKED_AS_MEASURED = re.compile(r"when we ran|we measured|on this machine", re.I)


def unglued_numbers(text):
    """The literal numbers left in a measured markdown cell once allowed places are removed."""
    for pattern in ALLOWED:
        text = re.sub(pattern, " ", text, flags=re.S | re.M)
    return re.findall(r"\d[\d,.]*", text)


def measured_problems(nb):
    problems = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = source(cell)
        if "measured" in tags(cell):
            numbers = unglued_numbers(text)
            if numbers:
                problems.append(f"cell {index}: measured cell with literal numbers {numbers}")
        elif MARKED_AS_MEASURED.search(text):
            problems.append(f"cell {index}: reports a run but is not tagged 'measured'")
    return problems


def test_unglued_numbers_finds_literals_and_spares_glue_math_and_references():
    text = (
        "## 5.4 Averaging\nThe forest scores {glue:text}`acc:.1%` with $B = 100$ trees "
        "(`max_depth=3`), see Figure 5.2 and Chapter 3 {cite:p}`breiman2001`; "
        "it took 13 s and 91.2% of the rows."
    )
    assert unglued_numbers(text) == ["13", "91.2"]
    assert unglued_numbers("Sections 5.3 and 5.4, cells 25-31, [a](notebooks/05_x.ipynb)") == []


def test_measured_problems_flags_untagged_reports():
    measured = {"tags": ["measured"]}
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": "When we ran it, 3 s."},
            {"cell_type": "markdown", "metadata": measured, "source": "It took 3 s."},
            {"cell_type": "markdown", "metadata": measured, "source": "Took {glue:text}`t`."},
        ]
    }
    assert len(measured_problems(nb)) == 2


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_measured_cells_glue_every_number(path):
    assert measured_problems(load(path)) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_reports_some_measured_results(path):
    nb = load(path)
    assert any("measured" in tags(c) for c in nb["cells"] if c["cell_type"] == "markdown")


# --- every show_source listing is shown -----------------------------------------------


def show_source_problems(nb):
    problems = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        calls = len(re.findall(r"\bshow_source\(", source(cell)))
        shown = [
            o
            for o in cell.get("outputs", [])
            if o.get("output_type") == "display_data"
            and "".join(o.get("data", {}).get("text/plain", "")).strip()
        ]
        if calls > len(shown):
            problems.append(f"cell {index}: {calls} show_source calls, {len(shown)} listings shown")
    return problems


def test_show_source_problems_counts_listings():
    cell = {"cell_type": "code", "metadata": {}, "source": "show_source(a)\nshow_source(b)"}
    one = {"output_type": "display_data", "data": {"text/plain": ["<Code>"]}}
    assert show_source_problems({"cells": [{**cell, "outputs": [one]}]})
    assert not show_source_problems({"cells": [{**cell, "outputs": [one, one]}]})


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_show_source_call_is_displayed(path):
    assert show_source_problems(load(path)) == []


def test_show_source_displays_each_listing_and_a_slice(monkeypatch):
    import treelib.notebook as notebook

    shown = []
    monkeypatch.setattr(notebook, "display", shown.append)
    assert notebook.show_source(notebook.glue) is None
    notebook.show_source(notebook.glue, lines=(1, 1))
    assert len(shown) == 2
    with pytest.raises(ValueError, match="hold no code"):
        notebook.show_source(notebook.glue, lines=(500, 501))
    assert shown[1].data.strip() == "def glue(name, value, display_value=True):"


# --- the builder a chapter explains is the one it runs, or it says so -----------------

ESTIMATORS = (
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "AdaBoostClassifier",
)
DEFAULT_BUILDER = "levelwise"


def builders_used(code):
    """The tree_method of every treelib estimator built in ``code`` (default if not given)."""
    imported = set()
    for names in re.findall(r"^from treelib import \(?([^)\n]*)", code, re.M):
        imported |= {n.strip().split(" as ")[-1] for n in names.split(",")}
    names = "|".join(ESTIMATORS)
    pattern = rf"(?<![\w.])(treelib\.)?({names})\("
    used = []
    for match in re.finditer(pattern, code):
        if not match[1] and match[2] not in imported:
            continue  # scikit-learn's class of the same name
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(code)):  # the call's closing parenthesis
            depth += {"(": 1, ")": -1}.get(code[end], 0)
            if depth == 0:
                break
        given = re.search(r"tree_method\s*=\s*[\"'](\w+)[\"']", code[match.end() : end])
        used.append(given[1] if given else DEFAULT_BUILDER)
    return used


def builder_problems(nb):
    declared = nb["metadata"].get("treelib", {}).get("builder")
    if declared is None:
        return ["the notebook metadata does not declare treelib.builder"]
    if declared in ("none", "all"):
        return []
    code = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "code")
    others = sorted(set(builders_used(code)) - {declared})
    says_so = any(
        re.search(r"\{ref\}`[^`]*which-builder>?`", source(c))
        for c in nb["cells"]
        if c["cell_type"] == "markdown"
    )
    if others and not says_so:
        return [f"explains {declared!r} but fits with {others} without linking which-builder"]
    return []


def test_builders_used_reads_defaults_explicit_methods_and_imports():
    code = (
        "from treelib import DecisionTreeClassifier, export_text\n"
        "a = treelib.RandomForestClassifier(n_estimators=3)\n"
        "b = DecisionTreeClassifier(max_depth=f(2), tree_method='recursive')\n"
        "c = sk_tree.DecisionTreeClassifier(max_depth=2)\n"
    )
    assert builders_used(code) == ["levelwise", "recursive"]
    nb = {
        "metadata": {"treelib": {"builder": "recursive"}},
        "cells": [{"cell_type": "code", "metadata": {}, "source": code}],
    }
    assert builder_problems(nb)
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "{ref}`which-builder`"})
    assert builder_problems(nb) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_runs_the_builder_it_explains_or_says_so(path):
    assert builder_problems(load(path)) == []


def test_which_builder_note_exists():
    labels = [
        p.stem
        for p in CHAPTERS
        for c in load(p)["cells"]
        if c["cell_type"] == "markdown" and re.search(r"^\(which-builder\)=", source(c), re.M)
    ]
    assert len(labels) == 1


# --- section numbers ------------------------------------------------------------------

UNNUMBERED = {"Setup", "Exercises", "Summary", "Reproducibility"}


def section_problems(nb, chapter):
    problems, expected = [], 1
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for title in re.findall(r"^## (.+)$", source(cell), re.M):
            if title.strip() in UNNUMBERED:
                continue
            number = re.match(r"(\d+)\.(\d+) ", title)
            if not number or (int(number[1]), int(number[2])) != (chapter, expected):
                problems.append(f"'## {title}' should be numbered {chapter}.{expected}")
            expected += 1
    return problems


def test_section_problems_checks_order():
    cells = [{"cell_type": "markdown", "source": "## Setup\n## 2.1 A\n## 2.3 B\n## Missing"}]
    assert len(section_problems({"cells": cells}, 2)) == 2


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_sections_are_numbered(path):
    assert section_problems(load(path), int(path.name[:2])) == []


# --- treelib's references stay inside the repository ----------------------------------

TOP_LEVEL = {p.name for p in ROOT.iterdir()} | {"shared"}


def outside_references(text):
    """Paths named in ``text`` that do not resolve inside the repository."""
    bad = []
    for token in re.findall(r"(?<![\w:/.])((?:\.\./)*[A-Za-z_][\w.-]*(?:/[\w.*-]+)+)", text):
        token = token.rstrip(".")
        if token.startswith("../"):
            bad.append(token)
        elif token.split("/")[0] in TOP_LEVEL:
            if not any((ROOT / (token + ext)).exists() for ext in ("", ".ipynb")):
                bad.append(token)
    return bad


def test_outside_references_catches_paths_outside_the_repo():
    assert outside_references("see ``../shared/GUIDE.md`` and notebooks/99_none") == [
        "../shared/GUIDE.md",
        "notebooks/99_none",
    ]
    assert outside_references("``tests/test_split.py``, notebooks/01_decision_stump, n_L/n") == []


def test_treelib_references_resolve_inside_the_repository():
    bad = {
        p.name: outside_references(p.read_text())
        for p in sorted((ROOT / "treelib").glob("*.py"))
        if outside_references(p.read_text())
    }
    assert bad == {}


# --- every figure is a real figure: alt text, caption, name -----------------------------


def figure_problems(nb, chapter):
    """Figures without alt text, caption or name; hand-numbered captions and references."""
    problems, names = [], set()
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            text = source(cell)
            if re.search(r"^\*Figure \d+\.\d+[:.]", text, re.M):
                problems.append(f"cell {index}: a hand-written caption (use mystnb.figure)")
            if re.search(r"(?<![`{])\bFig(?:ure|\.)s? \d+\.\d+", text):
                problems.append(f"cell {index}: a hand-typed figure number (use {{numref}})")
            continue
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if not images:
            continue
        meta = cell["metadata"].get("mystnb", {})
        alt = meta.get("image", {}).get("alt", "")
        figure = meta.get("figure", {})
        if len(alt.split()) < 8 or re.search(r"\.(png|jpe?g|svg)\b|_images/", alt):
            problems.append(f"cell {index}: alt text missing, too short or a file name")
        if len(figure.get("caption", "").split()) < 5:
            problems.append(f"cell {index}: no caption in mystnb.figure.caption")
        name = figure.get("name", "")
        if not re.fullmatch(rf"fig-{chapter}-[a-z0-9-]+", name) or name in names:
            problems.append(f"cell {index}: figure name {name!r} is not a unique fig-{chapter}-...")
        names.add(name)
        if unglued_numbers(figure.get("caption", "")):
            problems.append(f"cell {index}: caption numbers {unglued_numbers(figure['caption'])}")
        if len(images) > 1:
            problems.append(f"cell {index}: {len(images)} images in one figure cell")
    return problems


def test_figure_problems_flags_bare_figures_and_hand_numbers():
    png = {"output_type": "display_data", "data": {"image/png": "iVBOR"}}
    bare = {"cell_type": "code", "metadata": {}, "source": "plt.plot()", "outputs": [png]}
    good = {
        **bare,
        "metadata": {
            "mystnb": {
                "image": {"alt": "A curve of Gini impurity against p, zero at both ends."},
                "figure": {
                    "caption": "Gini impurity of a node, $p$ from $0$ to $1$.",
                    "name": "fig-1-gini",
                },
            }
        },
    }
    prose = {
        "cell_type": "markdown",
        "metadata": {},
        "source": "*Figure 1.2: Gini.* See Figure 1.2.",
    }
    assert len(figure_problems({"cells": [bare]}, 1)) == 3  # alt, caption, name
    assert figure_problems({"cells": [good]}, 1) == []
    assert len(figure_problems({"cells": [good, good]}, 1)) == 1  # the name twice
    assert len(figure_problems({"cells": [prose]}, 1)) == 2


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_has_alt_text_caption_and_name(path):
    assert figure_problems(load(path), int(path.name[:2])) == []


# --- every results table has a caption ---------------------------------------------------


def table_problems(nb):
    problems = []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            page = output.get("data", {}).get("text/html", "")
            page = "".join(page) if isinstance(page, list) else page
            if "<table" in page and page.count("<caption") < page.count("<table"):
                problems.append(f"cell {index}: a table without a caption")
    return problems


def test_table_shows_a_caption_in_html_and_the_frame_in_text():
    import pandas as pd

    from treelib.notebook import table

    frame = pd.DataFrame({"accuracy": [0.9, 0.95]}, index=["tree", "forest"])
    shown = table(frame, "Test accuracy <by model>")
    page = shown._repr_html_()
    assert "<caption>Test accuracy &lt;by model&gt;</caption>" in page
    assert page.index("<table") < page.index("<caption>") < page.index("<thead>")
    assert repr(shown) == "Test accuracy <by model>\n" + repr(frame)
    cell = {"cell_type": "code", "outputs": [{"data": {"text/html": frame.to_html()}}]}
    assert table_problems({"cells": [cell]})
    cell["outputs"][0]["data"]["text/html"] = page
    assert table_problems({"cells": [cell]}) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_table_has_a_caption(path):
    assert table_problems(load(path)) == []


# --- every exercise says how hard it is -------------------------------------------------

EXERCISE = re.compile(r"^(:{3,}|`{3,})\{exercise\}(.*)$", re.M)
DIFFICULTY = re.compile(r"\S.* (★|★★|★★★)")


def difficulty_problems(nb):
    """Exercise directives whose title does not end with one to three stars."""
    problems = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for _, title in EXERCISE.findall(source(cell)):
            if not DIFFICULTY.fullmatch(title.strip()):
                problems.append(
                    f"exercise title {title.strip()!r} needs a difficulty, e.g. 'Title ★★'"
                )
    return problems


def test_difficulty_problems_reads_titles():
    text = ":::{exercise}\n:::\n:::{exercise} Gini by hand ★\n:::\n```{exercise} Big ★★★★\n```"
    cells = [{"cell_type": "markdown", "source": text}]
    assert len(difficulty_problems({"cells": cells})) == 2
    ok = [{"cell_type": "markdown", "source": ":::{exercise} Grow a tree ★★★\n:::"}]
    assert difficulty_problems({"cells": ok}) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_has_a_difficulty(path):
    assert difficulty_problems(load(path)) == []


# --- library constants named in the prose have the library's values --------------------

CONSTANT = re.compile(r"`([A-Z][A-Z0-9_]*)`\s+\$=\s*([0-9][0-9{},]*)(?:\^\{([0-9]+)\})?\$")


def library_constants():
    import importlib
    import pkgutil

    import treelib

    found = {}
    for module in pkgutil.iter_modules(treelib.__path__):
        values = vars(importlib.import_module(f"treelib.{module.name}"))
        found.update({k: v for k, v in values.items() if k.isupper() and isinstance(v, int)})
    return found


def integer_value(node):
    """The value of an int literal or of ``a**b`` with int literals; else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, power = integer_value(node.left), integer_value(node.right)
        return None if base is None or power is None else base**power
    return None


def notebook_constants(nb):
    """Integer constants a chapter's code defines (``NAME = 100``, ``A, B = 2**20, 3``)."""
    found = {}
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = source(cell).splitlines()  # IPython magics become `pass`
        code = "\n".join(re.sub(r"^(\s*)[%!].*", r"\1pass", line) for line in lines)
        for statement in ast.parse(code).body:
            if not isinstance(statement, ast.Assign):
                continue
            for target in statement.targets:
                names, values = [target], [statement.value]
                if isinstance(target, ast.Tuple) and isinstance(statement.value, ast.Tuple):
                    names, values = target.elts, statement.value.elts
                for name, value in zip(names, values):
                    number = integer_value(value)
                    if isinstance(name, ast.Name) and name.id.isupper() and number is not None:
                        found[name.id] = number
    return found


def constant_problems(nb, constants):
    """Each "`NAME` $= value$" in the prose: NAME must be a constant of that value, of
    treelib (``constants``) or of the chapter's own code."""
    constants = {**constants, **notebook_constants(nb)}
    problems, seen = [], 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        for name, base, power in CONSTANT.findall(source(cell)):
            seen += 1
            base = int(base.replace("{,}", "").replace(",", ""))  # 200{,}000
            value = base ** int(power) if power else base
            if constants.get(name) != value:
                problems.append(f"{name} = {value} in the text, {constants.get(name)} in treelib")
    return problems, seen


def test_constant_problems_reads_powers_and_plain_values():
    text = "`MAX_CELLS` $= 2^{20}$ cells, `SPARSE_RATIO` $= 16$, `NOPE` $= 3$, `A_B` $= 2^{3}$"
    text += ", `N_SETS` $= 100$ sets, `N_RUNS` $= 2^{5}$, `ROWS`\n$= 200{,}000$ rows"
    code = "%matplotlib inline\nN_SETS, WIDTH = 100, 0.3  # sets\nN_RUNS = 2**4\nx = 3"
    nb = {"cells": [{"cell_type": "markdown", "source": text},
                    {"cell_type": "code", "source": code}]}  # fmt: skip
    library = {"MAX_CELLS": 2**20, "SPARSE_RATIO": 16, "A_B": 9, "ROWS": 200_000}
    problems, seen = constant_problems(nb, library)
    assert seen == 7
    assert problems == [
        "NOPE = 3 in the text, None in treelib",
        "A_B = 8 in the text, 9 in treelib",
        "N_RUNS = 32 in the text, 16 in treelib",
    ]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_constants_in_the_text_are_the_library_values(path):
    problems, seen = constant_problems(load(path), library_constants())
    assert problems == []
    if path.stem == "07_fast_trees":  # the chapter that names its batch sizes
        assert seen >= 6


# --- glued numbers are numbers ----------------------------------------------------------


def glued_values(nb):
    """``(name, text)`` of every value a chapter glues (myst-nb's scrapbook outputs)."""
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook", {})
            if "name" in scrapbook:
                key = scrapbook.get("mime_prefix", "") + "text/plain"
                text = output.get("data", {}).get(key, "")
                yield scrapbook["name"], "".join(text) if isinstance(text, list) else text


MISSING = re.compile(r"\bnan\b|\binf\b|\bNone\b|<NA>", re.I)


def not_a_number_problems(nb):
    return [f"{name} is glued as {text}" for name, text in glued_values(nb) if MISSING.search(text)]


def test_not_a_number_problems_reads_scrapbook_outputs():
    def glued(name, text):
        prefix = "application/papermill.record/"
        scrapbook = {"name": name, "mime_prefix": prefix}
        return {"metadata": {"scrapbook": scrapbook}, "data": {prefix + "text/plain": text}}

    outputs = [glued("a", "0.5"), glued("b", "nan"), glued("c", "np.float64(nan)"),
               glued("d", "'infinite'"), glued("e", "-inf"), {"data": {}}]  # fmt: skip
    problems = not_a_number_problems({"cells": [{"cell_type": "code", "outputs": outputs}]})
    assert problems == ["b is glued as nan", "c is glued as np.float64(nan)", "e is glued as -inf"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_glued_value_is_missing(path):
    assert not_a_number_problems(load(path)) == []
