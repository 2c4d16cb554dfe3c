"""Sphinx extension: three accessibility fixes to the HTML of every page.

1. The bibliography. docutils writes each citation as ``<div role="doc-biblioentry">``
   inside ``<div role="list">``; ARIA 1.3 deprecates ``doc-biblioentry`` and axe-core
   reports the list as having no allowed children (a critical violation on the
   References page). Each entry becomes ``role="listitem"``, which a list may hold.
2. Tables that notebooks print (pandas DataFrames and Styler tables, e.g. Chapter 7's
   benchmarks) are wrapped in ``div.table-scroll``, which _static/readable.css lets
   scroll sideways instead of cutting columns off; ``tabindex="0"`` and a label let
   keyboard users scroll it too (axe-core's scrollable-region-focusable rule).
3. Folded notebook cells. myst-nb writes each toggle as
   ``<summary aria-label="Toggle hidden content">`` around the text it shows, "Show
   code cell source" (or "Hide code cell source" once open): a speech-input user who
   says what they see cannot press it (WCAG 2.5.3 Label in Name, level A; axe-core
   4.14's label-content-name-mismatch). Without the label the summary is named by
   its visible text, which follows the open state. The theme's search and
   colour-mode buttons, rendered by the theme's templates, are fixed in the browser
   by _static/label-in-name.js.

Registered in _config.yml under ``sphinx: local_extensions``; tests/test_accessibility.py
checks the result with axe-core.
"""

import re

BIBLIOENTRY = 'role="doc-biblioentry"'
FOLD_SUMMARY = '<summary aria-label="Toggle hidden content">'
NOTEBOOK_TABLE = re.compile(
    r'<table (?:id="T_|border="1" class="dataframe")[^>]*>.*?</table>', re.S
)
SCROLL = '<div class="table-scroll" tabindex="0" role="region" aria-label="{label}">{table}</div>'
CAPTION = re.compile(r"<caption[^>]*>(.*?)</caption>", re.S)
TAG = re.compile(r"<[^>]+>")


def wrap_table(match):
    table = match[0]
    caption = CAPTION.search(table)
    label = TAG.sub("", caption[1]).strip() if caption else ""
    label = label.replace('"', "&quot;") or "Table (scrolls sideways)"
    return SCROLL.format(label=label, table=table)


def accessible_body(body):
    """The page body with the bibliography roles fixed, notebook tables wrapped and
    folded cells' toggles named by their text."""
    body = body.replace(BIBLIOENTRY, 'role="listitem"').replace(FOLD_SUMMARY, "<summary>")
    return NOTEBOOK_TABLE.sub(wrap_table, body)


def on_page_context(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = accessible_body(context["body"])


def setup(app):
    app.connect("html-page-context", on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
