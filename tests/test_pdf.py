"""The whole book as one PDF (make pdf, scripts/make_pdf.py), checked as a reader sees it.

Needs the built book (``make test`` builds it before the tests; ``BOOK_HTML=DIR``
tests one built elsewhere), ``/usr/bin/chromium``, and ``pdftotext`` and ``pdfimages``
from Debian's poppler-utils (``make browser-deps`` installs them). The PDF is printed
afresh into a temporary folder (about two minutes). Its text must hold the title and contents page,
every chapter title (the first heading of each notebook in ``_toc.yml``), rendered
math and no raw LaTeX; its pages must hold every figure of the book and none of
the theme's navigation; folded code cells are printed whole and legible, without
their "Show code cell source" toggle.
"""

import collections
import html
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

# 238 pages when this test was written (13 pages of _toc.yml, 7 chapters), 418 with
# Chapter 10 (16 pages, 10 chapters); the range catches a PDF that lost pages or
# content that no longer wraps.
PAGES = range(150, 500)
# LaTeX that MathJax should have typeset; none of it occurs in the book's code.
RAW_LATEX = (
    r"\frac", r"\sum", "$$", r"\begin{", r"\end{", r"\mathrm", r"\left", r"\right",
    r"\sqrt", r"\cdot", r"\log", r"\text{", r"\le", r"\mathbb",
)  # fmt: skip
# Text of the theme's header, sidebars and page navigation, hidden in print.
CHROME = ("Skip to main content", "Search this book", "Ctrl+K", "Print to PDF", "By The trees")
# The toggles of folded cells (myst-nb's hide-input, hide-output, hide-cell), which
# cannot be clicked on paper: "Show code cell source", "Hide code cell output", ...
TOGGLES = re.compile(r"(Show|Hide) code cell (source|output|content)")
# A folded code cell in the built HTML, and the code it holds.
FOLDED_INPUT = re.compile(r'<details class="admonition hide above-input">.*?<pre>(.*?)</pre>', re.S)
# WCAG AA's contrast for text; code is printed at 8pt.
MIN_CONTRAST = 4.5
DPI = 200


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


def folded_code():
    """``(page, first line's words)`` of each folded code cell (hide-input) of the chapters."""
    cells = []
    for page in sorted((HTML / "notebooks").glob("*.html")):
        for match in FOLDED_INPUT.finditer(page.read_text()):
            code = html.unescape(re.sub(r"<[^>]+>", "", match[1]))
            cells.append((page.stem, next(line for line in code.splitlines() if line.strip())))
    return cells


def relative_luminance(rgb):
    def channel(value):
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(v) for v in rgb[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one, other):
    light, dark = sorted((relative_luminance(one), relative_luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def word_contrasts(pdf, page, words, tmp_path):
    """The contrast of each of ``words`` (consecutive, on PDF page ``page``) with its
    background, as printed: the page rendered at ``DPI``, each word's box (from
    ``pdftotext -bbox``) taken apart, its commonest colour the background and its
    colour of highest contrast with that the ink."""
    from PIL import Image

    boxes = re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>',
        pdftotext(pdf, "-bbox", "-f", str(page), "-l", str(page)),
    )
    found = [html.unescape(box[4]) for box in boxes]
    start = next(i for i in range(len(found)) if found[i : i + len(words)] == words)
    png = tmp_path / f"page-{page}"
    subprocess.run(
        ["pdftoppm", "-r", str(DPI), "-f", str(page), "-l", str(page), "-png", "-singlefile"]
        + [str(pdf), str(png)],
        check=True,
    )
    image, scale = Image.open(f"{png}.png").convert("RGB"), DPI / 72
    contrasts = {}
    for *box, word in boxes[start : start + len(words)]:
        left, top, right, bottom = (float(v) * scale for v in box)
        data = image.crop((int(left), int(top), int(right) + 1, int(bottom) + 1)).tobytes()
        pixels = [tuple(data[i : i + 3]) for i in range(0, len(data), 3)]
        background = collections.Counter(pixels).most_common(1)[0][0]
        contrasts[html.unescape(word)] = max(contrast(p, background) for p in pixels)
    return contrasts


def test_folded_cells_print_whole_and_legible(pdf, tmp_path):
    """Folded code cells are printed open, without their toggle, in legible ink.

    Their summary line ("Hide code cell source", once the cell is opened) was printed
    90 times, and myst-nb's fade-in of an opened cell was printed half-way: code at
    1.0:1 to 1.7:1 in three chapters (issue 36, item 14). The first line of every
    folded cell must be in the text; in each chapter, the first that occurs only once
    in the PDF is measured on the rendered page.
    """
    text = pdftotext(pdf)
    toggles = sorted(set(m[0] for m in TOGGLES.finditer(text)))
    assert not toggles, f"toggles of folded cells printed: {toggles}"
    cells = folded_code()
    assert len(cells) >= 40, f"only {len(cells)} folded code cells in the built book"
    pages = [squeeze(page) for page in text.split("\f")]
    measured = {}  # a chapter's first folded line found once in the PDF, and its page
    for chapter, line in cells:
        # long lines wrap in print, and pdftotext may set a comment's text apart
        words = (re.sub(r"\s+#.*", "", line) or line).split()[:6]
        hits = [
            number
            for number, page in enumerate(pages, 1)
            for _ in range(page.count(" ".join(words)))
        ]
        assert hits, f"{chapter}: folded code {line!r} is not in the PDF"
        if len(hits) == 1:
            measured.setdefault(chapter, (hits[0], words))
    assert len(measured) >= 4, measured
    faint = {}
    for chapter, (page, words) in measured.items():
        contrasts = word_contrasts(pdf, page, words, tmp_path)
        # thin glyphs (=, +, a comma) never reach their full colour once anti-aliased
        low = {w: round(c, 2) for w, c in contrasts.items() if len(re.sub(r"\W", "", w)) >= 3}
        low = {w: c for w, c in low.items() if c < MIN_CONTRAST}
        if low:
            faint[f"{chapter}, page {page}"] = low
    assert not faint, f"folded code printed below {MIN_CONTRAST}:1 contrast: {faint}"
