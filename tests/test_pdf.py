"""The whole book as one PDF (make pdf, scripts/make_pdf.py), checked as a reader sees it.

Needs the built book (``make test`` builds it before the tests; ``BOOK_HTML=DIR``
tests one built elsewhere), ``/usr/bin/chromium``, and ``pdftotext`` and ``pdfimages``
from Debian's poppler-utils (``make browser-deps`` installs them). The PDF is printed
afresh into a temporary folder (about two minutes). Its text must hold the title and contents page,
every chapter title (the first heading of each notebook in ``_toc.yml``), rendered
math and no raw LaTeX; its pages must hold every figure of the book and none of
the theme's navigation.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from pypdf import PdfReader

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
SCRIPT = ROOT / "scripts" / "make_pdf.py"

# 238 pages when this test was written (13 pages of _toc.yml, 7 chapters); the
# range catches a PDF that lost pages or content that no longer wraps.
PAGES = range(150, 400)
# LaTeX that MathJax should have typeset; none of it occurs in the book's code.
RAW_LATEX = (
    r"\frac", r"\sum", "$$", r"\begin{", r"\end{", r"\mathrm", r"\left", r"\right",
    r"\sqrt", r"\cdot", r"\log", r"\text{", r"\le", r"\mathbb",
)  # fmt: skip
# Text of the theme's header, sidebars and page navigation, hidden in print.
CHROME = ("Skip to main content", "Search this book", "Ctrl+K", "Print to PDF", "By The trees")


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(items):
        for item in items or []:
            if "file" in item:
                files.append(item["file"])
            walk(item.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def first_heading(notebook):
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError(f"{notebook} has no first heading")


def chapter_titles():
    return [
        first_heading(ROOT / f"{path}.ipynb")
        for path in toc_files()
        if (ROOT / f"{path}.ipynb").exists()
    ]


def squeeze(text):
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `make book` first", pytrace=False)
    for tool in ("/usr/bin/chromium", "pdftotext", "pdfimages"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is missing: make browser-deps", pytrace=False)
    output = tmp_path_factory.mktemp("pdf") / "book.pdf"
    run = subprocess.run(
        [sys.executable, str(SCRIPT), str(HTML), "-o", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return output


def pdftotext(path, *options):
    return subprocess.run(
        ["pdftotext", *options, str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_page_count(pdf):
    pages = len(PdfReader(pdf).pages)
    assert pages in PAGES, f"{pages} pages, expected {PAGES.start} to {PAGES.stop - 1}"


def test_every_chapter_title_in_the_text(pdf):
    titles = chapter_titles()
    assert len(titles) >= 7
    text = squeeze(pdftotext(pdf))
    missing = [title for title in titles if title not in text]
    assert not missing, f"chapter titles missing from the PDF: {missing}"


def test_contents_page_lists_the_chapters_in_order(pdf):
    contents = pdftotext(pdf, "-layout", "-f", "1", "-l", "1")
    assert "Contents" in contents
    # "Chapter 1: The decision stump ........ 10": each entry with its first page.
    entries = dict(re.findall(r"^\s*(\S.*?)\s{2,}(\d+)\s*$", contents, re.MULTILINE))
    titles = chapter_titles()
    assert set(titles) <= set(entries), contents
    listed = [title for title in entries if title in titles]
    assert listed == titles, f"contents out of order: {listed}"
    pages = [int(entries[title]) for title in titles]
    assert pages == sorted(pages) and pages[0] > 1, pages


def test_math_is_typeset_and_no_raw_latex(pdf):
    text = pdftotext(pdf)
    assert "∑" in text, "no typeset sum sign: is MathJax rendered?"
    found = [latex for latex in RAW_LATEX if latex in text]
    assert not found, f"raw LaTeX in the PDF: {found}"


def colour_images(pdf):
    """``(width, height)`` of each colour image in the PDF, from ``pdfimages -list``.

    poppler's listing reads the image headers only (pypdf decoded every image: about
    a minute per test). Colour: three or more components (RGB; an alpha channel is
    a separate soft mask, listed as ``smask``). The figures are in colour; the PDF
    also holds grey 300-ppi images the size of boxes on the page (584 when this
    was written), which pypdf did not list either.
    """
    lines = subprocess.run(
        ["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert lines[0].split()[:7] == ["page", "num", "type", "width", "height", "color", "comp"]
    rows = [line.split() for line in lines[2:]]
    return [(int(r[3]), int(r[4])) for r in rows if r[2] == "image" and int(r[6]) >= 3]


def test_every_figure_and_no_theme_chrome(pdf):
    figures = {p.name for p in (HTML / "_images").glob("*.png")}
    images = len(colour_images(pdf))
    assert images >= len(figures), f"{images} colour images in the PDF, {len(figures)} figures"
    text = pdftotext(pdf)
    assert not [chrome for chrome in CHROME if chrome in text]


def interactive_stills():
    """Pixel sizes of the stills of the interactive figures (treelib/interactive.py).

    They sit inline in the pages (``img.tl-still``, a data URI), not in ``_images``;
    print CSS shows them instead of the live figure.
    """
    import base64
    import io

    from PIL import Image

    sizes = []
    for page in sorted((HTML / "notebooks").glob("*.html")):
        for data in re.findall(
            r'class="tl-still"[^>]*src="data:image/png;base64,([^"]+)"', page.read_text()
        ):
            sizes.append(Image.open(io.BytesIO(base64.b64decode(data))).size)
    return sizes


def test_stills_of_the_interactive_figures(pdf):
    stills = interactive_stills()
    assert stills, "no interactive figure in the built book"
    sizes = colour_images(pdf)
    missing = [size for size in stills if size not in sizes]
    assert not missing, f"stills of interactive figures not in the PDF: {missing}"


def test_bookmarks_name_every_chapter(pdf):
    def titles(items):
        for item in items:
            if isinstance(item, list):
                yield from titles(item)
            else:
                yield item.title

    bookmarks = set(titles(PdfReader(pdf).outline))
    missing = [title for title in chapter_titles() if title not in bookmarks]
    assert not missing, f"no bookmark for {missing}"
