"""Figure numbers by chapter: the third figure of Chapter 5 is "Figure 5.3".

Sphinx numbers figures page by page ("Figure 3") unless the table of contents is
numbered, which would also number every heading. This extension keeps the book's
own headings and prefixes each figure number on a chapter page
(``notebooks/NN_topic``) with the chapter number NN, in captions and in
``{numref}`` references alike. Figures are named ``fig-N-topic`` in the cell
metadata (``mystnb.figure.name``) and referenced with ``{numref}`fig-N-topic```.
"""

import re

CHAPTER_PAGE = re.compile(r"^notebooks/(\d\d)_")


def number_by_chapter(app, env):
    for docname, numbers in env.toc_fignumbers.items():
        chapter = CHAPTER_PAGE.match(docname)
        if not chapter:
            continue
        for ids in numbers.values():
            # Sphinx counts across pages when headings are unnumbered: count again per page.
            in_order = sorted(ids, key=ids.get)
            for position, node_id in enumerate(in_order, start=1):
                ids[node_id] = (int(chapter[1]), position)
    return []


def setup(app):
    app.connect("env-get-updated", number_by_chapter, priority=900)  # after the toctree collector
    app.config.numfig = True
    app.config.numfig_format = {
        "figure": "Figure %s",
        "table": "Table %s",
        "code-block": "Listing %s",
        "section": "Section %s",
    }
    return {"parallel_read_safe": True, "parallel_write_safe": True}
