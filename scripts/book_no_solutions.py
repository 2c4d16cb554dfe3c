"""Build the book without solutions into _build/html-no-solutions (make book-no-solutions).

For teachers who publish the book while their course is running. The build
uses the book's _config.yml with two additions, written to a temporary file
and passed with ``jupyter-book build --config``:

- ``sphinx: config: hide_solutions: true``, sphinx-exercise's own switch. It
  removes every ``{solution}`` directive, but not the *gated* solutions
  (``{solution-start}`` ... ``{solution-end}``), whose code cells sit between
  the two markers: sphinx-exercise 1.2.1 drops the start marker and leaves the
  content in place.
- this module as a local Sphinx extension, which removes the gated solutions
  too: with ``hide_solutions`` on, ``{solution-start}`` leaves a marker node, and
  a transform deletes the marker and everything after it up to and including
  the matching ``{solution-end}``. It also keeps the chapters' sources, which
  hold the solutions, out of the build (no ``_sources``, no download buttons
  for them), and points each chapter's Colab button to its student notebook
  (notebooks/student/).

    python scripts/book_no_solutions.py [OUTPUT_DIR]
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from docutils import nodes
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = ROOT / "_build" / "html-no-solutions"
STUDENT = ROOT / "notebooks" / "student"
logger = logging.getLogger(__name__)


# --- The Sphinx extension ---


class hidden_solution_start(nodes.Element):
    """Where a gated solution began; removed, with the solution, before writing."""


class RemoveGatedSolutions(SphinxTransform):
    """Delete each hidden gated solution: its marker, its content and its end node."""

    default_priority = 5  # after sphinx-exercise's structure check (1), before its merge (10)

    def apply(self):
        from sphinx_exercise.nodes import solution_end_node

        for start in list(self.document.findall(hidden_solution_start)):
            parent = start.parent
            siblings = parent.children
            first = siblings.index(start)
            ends = [i for i, n in enumerate(siblings) if isinstance(n, solution_end_node)]
            last = next((i for i in ends if i > first), None)
            if last is None:
                logger.warning("a gated solution has no solution-end", location=start)
                last = first
            for child in siblings[first : last + 1]:
                parent.remove(child)


class RemoveCheckOutputs(SphinxTransform):
    """Delete the outputs of the check cells: the success line of a solution not shown."""

    default_priority = 6

    def apply(self):
        if not self.config.hide_solutions:
            return
        for cell in list(self.document.findall(nodes.container)):
            if "tag_check" in cell.get("classes", []):
                for child in list(cell.children):
                    if "cell_output" in child.get("classes", []):
                        cell.remove(child)


def no_sources(app, config):
    """Without solutions, do not publish the sources: they hold the solutions."""
    if config.hide_solutions:
        config.html_copy_source = False


def student_buttons(buttons):
    """The header buttons without source downloads, Colab opening student notebooks."""
    kept = []
    for button in buttons:
        if "buttons" in button:  # a drop-down group
            button["buttons"] = student_buttons(button["buttons"])
            if not button["buttons"]:
                continue
        url = button.get("url", "")
        if "_sources" in url or url.endswith(".pdf"):  # the sources and the PDF hold solutions
            continue
        # notebooks/NN.ipynb, or its Colab edition notebooks/colab/NN.ipynb (_ext/colab_edition.py)
        chapter = re.search(r"/notebooks/(colab/)?([0-9][0-9]_[\w-]+\.ipynb)$", url)
        if "colab.research.google.com" in url and chapter and (STUDENT / chapter[2]).exists():
            button["url"] = url.replace(chapter[0], f"/notebooks/student/{chapter[2]}")
        kept.append(button)
    return kept


def update_buttons(app, pagename, templatename, context, doctree):
    if app.config.hide_solutions and "header_buttons" in context:
        context["header_buttons"] = student_buttons(context["header_buttons"])


def setup(app):
    from sphinx_exercise.directive import SolutionStartDirective

    class SolutionStart(SolutionStartDirective):
        def run(self):
            result = super().run()  # registers the gate; returns [] if hide_solutions
            if self.env.app.config.hide_solutions:
                marker = hidden_solution_start()
                self.set_source_info(marker)
                return [marker]
            return result

    app.setup_extension("sphinx_exercise")
    app.add_directive("solution-start", SolutionStart, override=True)
    app.add_node(hidden_solution_start)
    app.add_transform(RemoveGatedSolutions)
    app.add_transform(RemoveCheckOutputs)
    app.connect("config-inited", no_sources)
    app.connect("html-page-context", update_buttons, priority=900)  # after the theme's (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --- The build ---


def no_solutions_config():
    """The book's configuration, with solutions hidden and this extension loaded.

    The configuration is read from a temporary folder, so the book's own local
    extensions (``_ext``) are given by absolute paths. The edit and repository
    buttons are off: both lead to the chapters with their solutions.
    """
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config.setdefault("sphinx", {})
    sphinx.setdefault("config", {})["hide_solutions"] = True
    local = sphinx.setdefault("local_extensions", {})
    for name, folder in local.items():
        local[name] = str((ROOT / folder).resolve())
    local[Path(__file__).stem] = str(Path(__file__).parent)
    html = config.setdefault("html", {})
    html["use_edit_page_button"] = html["use_repository_button"] = False
    return config


def main(argv):
    output = Path(argv[0]).resolve() if argv else DEFAULT_OUTPUT
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    with tempfile.TemporaryDirectory(prefix="book-no-solutions-") as work:
        config = Path(work) / "_config.yml"
        config.write_text(yaml.safe_dump(no_solutions_config(), sort_keys=False), encoding="utf-8")
        # The same strict build as `make book`: every warning is an error.
        command = [str(jupyter_book), "build", str(ROOT), "--config", str(config)]
        command += ["--path-output", work, "--all", "-W", "-n", "--keep-going"]
        status = subprocess.run(command).returncode
        html = Path(work) / "_build" / "html"
        if status == 0 and html.is_dir():
            shutil.rmtree(output, ignore_errors=True)
            output.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(html), str(output))
            print(f"Book without solutions: {output / 'index.html'}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
