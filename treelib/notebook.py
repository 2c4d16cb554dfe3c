"""Small helpers for the book's notebooks (not a chapter topic).

Introduced in Chapter 1 (``notebooks/01_decision_stump``) and used by every chapter.
"""

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
    display(Code(source, language="python"))


def reproducibility(seed=0):
    """Print the versions and the seed behind a chapter's numbers.

    Introduced in Chapter 1; the last cell of every chapter calls it (tagged so
    that the notebook tests ignore its output, which changes with versions).
    """
    import platform

    import numpy
    import sklearn
    import torch

    import treelib

    print(
        f"Reproducibility: Python {platform.python_version()}, torch {torch.__version__}, "
        f"numpy {numpy.__version__}, scikit-learn {sklearn.__version__}, "
        f"treelib {treelib.__version__}; random seed {seed}; CPU."
    )
