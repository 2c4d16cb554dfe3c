"""Small helpers for the book's notebooks (not a chapter topic).

Introduced in Chapter 1 (``notebooks/01_decision_stump``) and used by every chapter.
"""

import html
import inspect

from IPython.display import Code, display


def glue(name, value, display_value=True):
    """Make ``value`` citable in the book's prose as ``{glue:text}`name```.

    Introduced in Chapter 1. In the book build this is myst-nb's ``glue``; where
    myst-nb is not installed (e.g. Colab) the value is simply shown.
    """
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if display_value:
            display(value)
        return
    myst_glue(name, value, display=display_value)


def show_source(obj, lines=None):
    """Display the source code of a treelib function or class, highlighted.

    Introduced in Chapter 1: the book shows the library's code instead of copying it.
    The code is displayed here (and ``None`` returned), so a cell may call it more
    than once and every listing shows. ``lines=(first, last)`` shows only those
    lines of the listing (1-based, inclusive), to put the few lines that matter
    next to the math; the full listing can sit in a collapsed cell.
    """
    source = inspect.getsource(obj)
    if lines is not None:
        first, last = lines
        source = "".join(source.splitlines(keepends=True)[first - 1 : last])
        if not source.strip():
            raise ValueError(f"lines {lines} of {obj.__qualname__} hold no code")
    display(Code(source, language="python"))


class Table:
    """A results table with a caption: what ``table(frame, caption)`` returns.

    Its HTML (the book, Colab, Jupyter) is pandas' table with a ``<caption>`` that
    screen readers announce with the table; its plain text, which the notebook tests
    compare, is the caption and pandas' own text of the frame.
    """

    def __init__(self, frame, caption):
        self.frame, self.caption = frame, caption

    def _repr_html_(self):
        table = self.frame.to_html()
        start = table.index(">") + 1  # after the opening <table ...>
        caption = f"\n  <caption>{html.escape(self.caption)}</caption>"
        return table[:start] + caption + table[start:]

    def __repr__(self):
        return f"{self.caption}\n{self.frame!r}"


def table(frame, caption):
    """Show a pandas DataFrame (or Series) as a table with a caption.

    Introduced in Chapter 2, and used for every results table of the book: a
    caption says what the table holds, for every reader (WCAG: tables have captions).
    """
    if hasattr(frame, "to_frame") and not hasattr(frame, "columns"):
        frame = frame.to_frame()
    return Table(frame, caption)


def reproducibility(seed=0):
    """Print the versions and the seed behind a chapter's numbers.

    Introduced in Chapter 1; the last cell of every chapter calls it (tagged so
    that the notebook tests ignore its output, which changes with versions).
    The versions are ``treelib.show_versions()``'s, the report CONTRIBUTING.md
    asks for when a reader reports an error.
    """
    from ._show_versions import show_versions

    print(f"Reproducibility: random seed {seed}.")
    show_versions()
