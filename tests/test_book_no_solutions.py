"""`make book-no-solutions`: the whole book, built as a teacher would publish it during a course.

Built for real (scripts/book_no_solutions.py, the strict build of `make book`), then read
page by page: no solution, no reference output under a check cell, no link to the full PDF,
to the chapters' sources or solution notebooks, no edit button.
"""

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("no-solutions") / "html"
    command = [sys.executable, "scripts/book_no_solutions.py", str(out)]
    build = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    return out


def solution_lines(path):
    """Distinctive lines of a chapter's solution code (the functions the learner writes)."""
    nb = nbformat.read(path, as_version=4)
    lines = []
    for cell in nb.cells:
        if "exercise" in cell.metadata.get("tags", []):
            body = [x.strip() for x in cell.source.splitlines()[2:]]
            code = [x for x in body if not x.startswith(("#", '"""', "def ", "return "))]
            lines += [x for x in code if len(x) > 25][:2]
    return lines


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_on_the_page(site, chapter):
    html = (site / "notebooks" / f"{chapter.stem}.html").read_text(encoding="utf-8")
    text = re.sub(r"<[^>]+>", "", html).replace("&quot;", '"').replace("&#39;", "'")
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert "Exercise" in text
    assert 'class="solution' not in html and "Solution to Exercise" not in text
    for line in solution_lines(chapter):
        assert line not in text, line
    assert "Well done!" not in text  # a check cell's output: the hidden solution's verdict
    # the book's PDF holds the solutions (the theme's "print this page" button stays)
    assert "trees-from-scratch.pdf" not in html and not re.search(r"href=[^>]*\.pdf", html)
    assert "_sources/" not in html and "/edit/" not in html
    colab = re.findall(r"colab\.research\.google\.com/github/[^\"']+\.ipynb", html)
    assert colab and all("/student/" in link for link in colab), colab
