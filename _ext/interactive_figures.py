"""Sphinx extension: the runtime of the interactive figures, only where a page has one.

A page that shows a ``treelib.interactive`` figure (``div.tl-interactive`` in its
body) gets two scripts, both with ``defer`` so that they never block the page:
the Vega bundle ``_static/vega/vega-bundle.js`` (Vega, Vega-Lite and Vega-Embed,
vendored from vl-convert-python; licences in ``_static/vega/LICENSE.txt``) and
the book's ``_static/treelib-interactive.js``, which draws the figures. Nothing is
fetched from the network. Jupyter Book adds every ``.js`` file under ``_static``
to every page; this extension takes these two back out of that list.

Registered in _config.yml under ``sphinx: local_extensions``; tests/test_browser.py
moves the sliders with the keyboard.
"""

MARKER = 'class="tl-interactive"'
SCRIPTS = ("vega/vega-bundle.js", "treelib-interactive.js")


def _name(entry):
    return entry[0] if isinstance(entry, (tuple, list)) else entry


def keep_runtime_off_other_pages(app, config):
    config.html_js_files = [e for e in config.html_js_files if _name(e) not in SCRIPTS]


def add_runtime(app, pagename, templatename, context, doctree):
    if MARKER in context.get("body", ""):
        for script in SCRIPTS:  # deferred scripts run in this order
            app.add_js_file(script, defer="defer")


def setup(app):
    app.connect("config-inited", keep_runtime_off_other_pages, priority=900)
    app.connect("html-page-context", add_runtime)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
