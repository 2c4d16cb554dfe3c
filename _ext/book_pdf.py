"""Sphinx extension: the download menu of every page offers the whole book as one PDF.

sphinx-book-theme's download menu (the arrow icon) offers the page's source and a
print of the page. This extension adds "Book (.pdf)", a link to the PDF of the
whole book that ``make pdf`` (scripts/make_pdf.py) prints and copies into
``_build/html/``, at its address on the published book (``html.baseurl`` in
_config.yml), so that the link works from any copy of the pages.
Registered in _config.yml under ``sphinx: local_extensions``.
"""

PDF_NAME = "trees-from-scratch.pdf"  # as in the Makefile's PDF := _build/pdf/...


def book_pdf_url(app):
    base = app.config.html_baseurl or ""
    return (base.rstrip("/") + "/" if base else "../") + PDF_NAME


def add_button(app, pagename, templatename, context, doctree):
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append(
                {
                    "type": "link",
                    "url": book_pdf_url(app),
                    "text": "Book (.pdf)",
                    "icon": "fas fa-book",
                    "tooltip": "Download the whole book as one PDF",
                    "label": "download-book-pdf-button",
                }
            )


def setup(app):
    # After the theme adds its buttons (priority 501).
    app.connect("html-page-context", add_button, priority=610)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
