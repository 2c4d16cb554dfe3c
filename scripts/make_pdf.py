"""The whole book as one PDF, printed from the built HTML (make pdf).

    python scripts/make_pdf.py [HTML_DIR] [-o OUTPUT.pdf]

HTML_DIR is a built book (default ``_build/html``; ``make pdf`` builds it first);
the PDF goes to ``_build/pdf/trees-from-scratch.pdf`` unless ``-o`` says otherwise.

Each page of ``_toc.yml``, in order, is served from 127.0.0.1 and printed by
Debian's Chromium (``/usr/bin/chromium``, driven by Playwright's Python package;
no browser is ever downloaded) with ``page.pdf``:

- after MathJax has typeset the page (``MathJax.startup.promise``); a page with a
  MathJax error (``mjx-merror``) stops the build, and so does an image that does
  not load;
- with a print stylesheet that hides the theme's header, sidebars, navigation
  and footer, wraps long code lines instead of cutting them, and keeps figures
  whole on a page;
- with every solution and dropdown opened (a printed page cannot be clicked),
  folded code cells printed open, whole and without their "Show code cell source"
  line, and no animation caught half-way;
- with the book's internal links pointing at the published book
  (``html.baseurl`` in ``_config.yml``), so that they still work from the PDF.

A generated first page holds the title and the contents: the parts and chapter
titles of ``_toc.yml`` with the page each starts on (clickable). pypdf merges the
pages, adds bookmarks (each chapter with its sections) and stamps page numbers
into the footers (a Chromium-printed page of numbers laid over each page).
"""

import argparse
import datetime
import functools
import html
import http.server
import io
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urljoin

import yaml
from pypdf import PdfReader, PdfWriter
from pypdf.annotations import Link
from pypdf.generic import Fit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HTML = ROOT / "_build" / "html"
DEFAULT_OUTPUT = ROOT / "_build" / "pdf" / "trees-from-scratch.pdf"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

# A4, with room at the top for the running head and at the bottom for the page number.
PAPER = {"format": "A4"}
PAGE_WIDTH_PT, PAGE_HEIGHT_PT = 595.28, 841.89
MARGIN = {"top": "18mm", "bottom": "16mm", "left": "16mm", "right": "16mm"}
MM = 72 / 25.4  # points per millimetre
PX = 0.75  # points per CSS pixel
CONTENT_WIDTH_PX = round((210 - 32) / 25.4 * 96)  # A4 less the left and right margins

PRINT_CSS = """
@media print {
  /* The theme's chrome: header, sidebars, navigation, buttons, footers. */
  .bd-header, .bd-header-announcement, .bd-sidebar-primary, .bd-sidebar-secondary,
  .header-article, .prev-next-area, .prev-next-footer, .bd-footer, .bd-footer-article,
  .bd-footer-content, .skip-link, #pst-back-to-top, .headerlink, .toggle-button,
  button.copybtn, .search-button-field, .sidebar-toggle {
    display: none !important;
  }
  html, body { font-size: 10.5pt; }
  .bd-main .bd-content, .bd-main .bd-content .bd-article-container,
  .bd-container, .bd-container__inner, .bd-page-width {
    margin: 0 !important; padding: 0 !important; max-width: none !important;
    width: 100% !important; display: block !important;
  }
  .bd-article { padding: 0 !important; }
  /* Code and text outputs: wrap long lines rather than cut them off. */
  pre, div.highlight pre, .output pre {
    white-space: pre-wrap !important; overflow-wrap: anywhere; overflow: visible !important;
    max-height: none !important; font-size: 8pt !important;
  }
  div.highlight, .cell_output, .output, .table-wrapper, .pst-scrollable-table-container,
  [tabindex] {
    overflow: visible !important; max-height: none !important;
  }
  table { font-size: 8pt !important; }
  img, figure, svg { break-inside: avoid; max-width: 100% !important; height: auto; }
  /* A code cell or output starts on the page that shows its first line. */
  .cell_input, .cell_output, div.highlight { break-inside: avoid; }
  h1, h2, h3, h4 { break-after: avoid; }
  h1 { break-before: avoid; }
  /* Opened solutions and dropdowns. */
  .admonition.toggle-hidden .admonition-title ~ * {
    height: auto !important; opacity: 1 !important; visibility: visible !important;
  }
  /* Folded cells (hide-input, hide-output, hide-cell), opened by PREPARE_JS: their
     summary ("Hide code cell source") cannot be clicked on paper, and the fade-in
     that myst-nb plays as one opens was printed half-way (code in faint grey). */
  div.cell details.hide > summary { display: none !important; }
  div.cell details.hide > summary ~ * { opacity: 1 !important; }
  *, *::before, *::after { animation: none !important; transition: none !important; }
  a { color: inherit; }
  /* Chromium prints shadows as large bitmaps: none. */
  * { box-shadow: none !important; text-shadow: none !important; }
}
"""

# Run in each page before printing: open every dropdown and solution, load every
# image now (not lazily), and point the book's own links at the published book.
PREPARE_JS = """
([base, published]) => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  document.querySelectorAll('img[loading]').forEach(img => { img.loading = 'eager'; });
  for (const a of document.querySelectorAll('a[href]')) {
    const url = new URL(a.getAttribute('href'), document.baseURI);
    if (url.origin === new URL(base).origin) {
      a.href = new URL(url.pathname.replace(/^\\//, '') + url.search + url.hash, published).href;
    }
  }
}
"""

IMAGES_LOADED_JS = """
() => Array.from(document.images).every(img => img.complete)
"""

IMAGES_BROKEN_JS = """
() => Array.from(document.images)
  .filter(img => img.complete && img.naturalWidth === 0 && img.offsetParent !== null)
  .map(img => img.getAttribute('src'))
"""

# Where each contents entry is, in CSS pixels from the top left of the page's content.
ENTRY_BOXES_JS = """
() => Array.from(document.querySelectorAll('li.entry')).map(entry => {
  const r = entry.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom];
})
"""

TITLE_JS = """
() => {
  const h1 = document.querySelector('article h1, main h1, h1');
  if (!h1) return document.title;
  const copy = h1.cloneNode(true);
  copy.querySelectorAll('.headerlink').forEach(e => e.remove());
  return copy.textContent.replace(/\\s+/g, ' ').trim();
}
"""


def toc_entries(root=ROOT):
    """(part caption or None, page path without suffix) for each page of _toc.yml, in order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    entries = [(None, toc["root"])]

    def walk(items, caption):
        for item in items or []:
            if "file" in item:
                entries.append((caption, item["file"]))
            walk(item.get("sections"), caption)

    for part in toc.get("parts", []):
        walk(part.get("chapters"), part.get("caption"))
    walk(toc.get("chapters"), None)
    return entries


def book_config(root=ROOT):
    config = yaml.safe_load((root / "_config.yml").read_text())
    baseurl = config.get("html", {}).get("baseurl") or "https://example.invalid/"
    return config, baseurl.rstrip("/") + "/"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(directory):
    handler = functools.partial(QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def running_head(text):
    return (
        '<div style="font-size:7.5pt; width:100%; margin:0 16mm; color:#666; '
        "font-family:sans-serif; text-align:right; border-bottom:0.4pt solid #bbb; "
        f'padding-bottom:1mm">{html.escape(text)}</div>'
    )


def print_page(page, url, base, published, head):
    """Print one book page to PDF bytes; returns (title, pdf)."""
    page.goto(url, wait_until="load")
    if page.query_selector('script[src*="mathjax"], script[id*="MathJax"]'):
        page.wait_for_function(
            "window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000
        )
        page.evaluate("MathJax.startup.promise.then(() => true)")
    errors = page.query_selector_all("mjx-merror")
    if errors:
        raise SystemExit(f"{url}: {len(errors)} MathJax error(s), e.g. {errors[0].inner_text()!r}")
    page.add_style_tag(content=PRINT_CSS)
    page.evaluate(PREPARE_JS, [base, published])
    page.wait_for_function(IMAGES_LOADED_JS, timeout=30_000)
    broken = page.evaluate(IMAGES_BROKEN_JS)
    if broken:
        raise SystemExit(f"{url}: images did not load: {broken}")
    title = page.evaluate(TITLE_JS)
    pdf = page.pdf(
        **PAPER,
        margin=MARGIN,
        print_background=True,
        display_header_footer=True,
        header_template=running_head(f"{head} · {title}" if head and head != title else title),
        footer_template="<span></span>",
        outline=True,
        tagged=True,  # Chromium writes the outline (the headings) only into a tagged PDF
    )
    return title, pdf


def contents_html(config, published, chapters, first_pages):
    """The title and contents page; chapters: [(caption, title)], first_pages: 1-based."""
    rows, caption_seen = [], object()
    for (caption, title), number in zip(chapters, first_pages, strict=True):
        if caption != caption_seen and caption:
            rows.append(f'<li class="part">{html.escape(caption)}</li>')
        caption_seen = caption
        rows.append(
            f'<li class="entry"><span class="title">{html.escape(title)}</span>'
            f'<span class="dots"></span><span class="page">{number}</span></li>'
        )
    today = datetime.date.today().isoformat()
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>{html.escape(config.get("title", ""))}</title><style>
body {{ font-family: sans-serif; color: #222; margin: 0; }}
h1 {{ font-size: 26pt; margin: 18mm 0 4mm; line-height: 1.15; }}
.author {{ font-size: 13pt; margin: 0 0 2mm; }}
.meta {{ font-size: 9pt; color: #555; margin: 0 0 10mm; }}
h2 {{ font-size: 15pt; border-bottom: 0.6pt solid #999; padding-bottom: 2mm; }}
ol {{ list-style: none; padding: 0; margin: 0; font-size: 11pt; }}
li.part {{ font-weight: bold; margin: 5mm 0 1.5mm; }}
li.entry {{ display: flex; align-items: baseline; margin: 1.2mm 0 1.2mm 6mm; }}
.dots {{ flex: 1; border-bottom: 1pt dotted #999; margin: 0 2mm; }}
.licence {{ font-size: 8.5pt; color: #555; margin-top: 12mm; }}
a {{ color: inherit; }}
</style></head><body>
<h1>{html.escape(config.get("title", ""))}</h1>
<p class="author">{html.escape(config.get("author", ""))}</p>
<p class="meta">Printed from the online book, <a href="{published}">{html.escape(published)}</a>,
on {today}. Links in this PDF lead to the online book.</p>
<h2>Contents</h2>
<ol>{"".join(rows)}</ol>
<p class="licence">Text and figures: CC BY 4.0; code: MIT (files LICENSE-text and LICENSE in
the repository). {html.escape(config.get("copyright", ""))}.</p>
</body></html>"""


def numbers_pdf(browser, count):
    """A PDF of ``count`` blank pages whose footers hold their page numbers."""
    page = browser.new_page()
    blank = '<div style="height:1px; break-after:page"></div>' * (count - 1) + "<div></div>"
    page.set_content(f"<html><body style='margin:0'>{blank}</body></html>")
    pdf = page.pdf(
        **PAPER,
        margin=MARGIN,
        display_header_footer=True,
        header_template="<span></span>",
        footer_template=(
            '<div style="font-size:8pt; width:100%; text-align:center; color:#444; '
            'font-family:sans-serif"><span class="pageNumber"></span></div>'
        ),
    )
    page.close()
    return pdf


def build(html_dir, output, log=print):
    html_dir = Path(html_dir).resolve()
    if not (html_dir / "index.html").exists():
        raise SystemExit(f"no built book in {html_dir}: run `make book` first")
    if not CHROMIUM.exists():
        raise SystemExit("Chromium is missing: `apt-get install chromium` (make browser-deps)")
    from playwright.sync_api import sync_playwright

    config, published = book_config()
    book_title = config.get("title", "")
    entries = toc_entries()
    start = time.perf_counter()
    httpd, base = serve(html_dir)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1000, "height": 1400})
            page = context.new_page()
            chapters, pdfs = [], []
            for caption, path in entries:
                source = html_dir / f"{path}.html"
                if not source.exists():
                    raise SystemExit(f"{source} is missing: is the book built from this _toc.yml?")
                title, pdf = print_page(
                    page, urljoin(base, f"{path}.html"), base, published, book_title
                )
                if title == book_title:  # the landing page
                    title = "Introduction"
                pages = len(PdfReader(io.BytesIO(pdf)).pages)
                log(f"  {path}: {pages} pages ({title})")
                chapters.append((caption, title))
                pdfs.append(pdf)

            # The contents page(s): print until the page numbers they state hold.
            counts = [len(PdfReader(io.BytesIO(pdf)).pages) for pdf in pdfs]
            front_pages, front = 1, None
            # Lay the contents out as printed, to find where its entries are.
            page.emulate_media(media="print")
            page.set_viewport_size({"width": CONTENT_WIDTH_PX, "height": 1400})
            for _ in range(3):
                first_pages, number = [], front_pages + 1
                for count in counts:
                    first_pages.append(number)
                    number += count
                page.set_content(contents_html(config, published, chapters, first_pages))
                rects = page.evaluate(ENTRY_BOXES_JS)
                front = page.pdf(**PAPER, margin=MARGIN, print_background=True)
                if len(PdfReader(io.BytesIO(front)).pages) == front_pages:
                    break
                front_pages = len(PdfReader(io.BytesIO(front)).pages)
            total = front_pages + sum(counts)
            numbers = PdfReader(io.BytesIO(numbers_pdf(browser, total)))
            browser.close()
    finally:
        httpd.shutdown()

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(front)), import_outline=False)
    parents = {}
    for (caption, title), pdf, first in zip(chapters, pdfs, first_pages, strict=True):
        reader = PdfReader(io.BytesIO(pdf))
        offset = len(writer.pages)
        assert offset == first - 1, (title, offset, first)
        writer.append(reader, import_outline=False)
        parent = None
        if caption:
            if caption not in parents:
                parents[caption] = writer.add_outline_item(title=caption, page_number=offset)
            parent = parents[caption]
        # The chapter's bookmark, with the chapter's own headings under it.
        item = writer.add_outline_item(title=title, page_number=offset, parent=parent)
        add_outline(writer, reader, reader.outline, item, offset)
    # Page numbers in the footers of every page but the first.
    for index, page in enumerate(writer.pages):
        if index:
            page.merge_page(numbers.pages[index])
            page.compress_content_streams()  # merging leaves them uncompressed
    # The contents entries link to their chapters. Only the first page's entries
    # are linked if the contents ever run to two pages.
    usable_height_px = (PAGE_HEIGHT_PT - 34 * MM) / PX
    for rect, first in zip(rects, first_pages, strict=True):
        left, top, right, bottom = rect
        if bottom > usable_height_px:
            break
        box = (
            16 * MM + left * PX,
            PAGE_HEIGHT_PT - 18 * MM - bottom * PX,
            16 * MM + right * PX,
            PAGE_HEIGHT_PT - 18 * MM - top * PX,
        )
        writer.add_annotation(0, Link(rect=box, target_page_index=first - 1, fit=Fit.fit()))
    writer.compress_identical_objects(remove_duplicates=True, remove_unreferenced=True)
    writer.add_metadata({"/Title": book_title, "/Author": config.get("author", "")})
    writer.page_mode = "/UseOutlines"
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("wb") as handle:
        writer.write(handle)
    seconds = time.perf_counter() - start
    size = output.stat().st_size / 1e6
    log(f"{output}: {len(writer.pages)} pages, {size:.1f} MB, {seconds:.0f} s")
    return output


def add_outline(writer, reader, items, parent, offset):
    """Copy a chapter's outline (its headings) under ``parent``, pages shifted by ``offset``.

    The chapter's own title (its h1, the top of Chromium's outline) is ``parent``
    already, so its sections go straight under it; the theme's printed "Contents"
    list is left out.
    """
    if len(items) == 2 and not isinstance(items[0], list) and isinstance(items[1], list):
        items = items[1]  # [h1, [its sections]]
    last = None
    for item in items:
        if isinstance(item, list):
            add_outline(writer, reader, item, last if last is not None else parent, offset)
            continue
        title = " ".join(item.title.split())
        half = len(title) // 2
        if title[:half] == title[half:]:  # Chromium names a heading split by a page twice
            title = title[:half]
        if title == "Contents":
            last = None
            continue
        page = offset + reader.get_destination_page_number(item)
        last = writer.add_outline_item(title=title, page_number=page, parent=parent)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", nargs="?", default=DEFAULT_HTML, help="the built book")
    parser.add_argument("-o", "--output", default=DEFAULT_OUTPUT, help="the PDF to write")
    args = parser.parse_args(argv)
    build(args.html_dir, args.output)


if __name__ == "__main__":
    sys.exit(main())
