"""Sphinx extension: the Colab launch button opens the chapter's Colab edition.

sphinx-book-theme builds the Colab URL from the page's path,
``.../blob/main/notebooks/NN_topic.ipynb``: the book notebook, whose MyST markup
Colab cannot render. This extension rewrites that URL, after the theme has added
its buttons, to ``.../blob/main/notebooks/colab/NN_topic.ipynb``, the Colab edition
that scripts/make_colab_notebooks.py generates (only where that file exists).
Registered in _config.yml under ``sphinx: local_extensions``.
"""

import re
from pathlib import Path

CHAPTER = re.compile(r"(/notebooks/)([0-9][0-9]_[\w-]+\.ipynb)$")


def colab_edition_url(url, srcdir):
    """A Colab URL of a chapter notebook, pointed at its Colab edition."""
    match = CHAPTER.search(url)
    if "colab.research.google.com" not in url or not match:
        return url
    if not (Path(srcdir) / "notebooks" / "colab" / match[2]).exists():
        return url
    return url[: match.start()] + f"/notebooks/colab/{match[2]}"


def rewrite(buttons, srcdir):
    for button in buttons:
        rewrite(button.get("buttons", []), srcdir)  # a drop-down group
        if "url" in button:
            button["url"] = colab_edition_url(button["url"], srcdir)


def update_buttons(app, pagename, templatename, context, doctree):
    rewrite(context.get("header_buttons", []), app.srcdir)


def setup(app):
    # After the theme adds its launch buttons (priority 501), before
    # scripts/book_no_solutions.py points them at the student notebooks (900).
    app.connect("html-page-context", update_buttons, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
