"""``treelib.show_versions()``: the versions to paste into a bug report.

Introduced in Chapter 1 (``notebooks/01_decision_stump``), whose reproducibility
cell, the last cell of every chapter, prints it through
``treelib.notebook.reproducibility``. CONTRIBUTING.md asks for its output in
every error report, as scikit-learn's ``sklearn.show_versions()`` does.
"""

import importlib.metadata
import platform
import sys

# Distribution names as pip knows them, in the order they are printed.
PACKAGES = ("torch", "numpy", "scipy", "pandas", "scikit-learn", "matplotlib", "seaborn")


def _version(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _torch_line():
    # torch is imported (not just looked up) to ask whether CUDA works here.
    try:
        import torch
    except ImportError:
        return None
    return f"{torch.__version__} (CUDA available: {torch.cuda.is_available()})"


def versions():
    """The versions ``show_versions`` prints, as ``{name: text}``; ``None`` = not installed."""
    import treelib

    found = {
        "python": sys.version.replace("\n", " "),
        "platform": platform.platform(),
        "torch": _torch_line(),
    }
    found.update({name: _version(name) for name in PACKAGES[1:]})
    found["treelib"] = treelib.__version__
    return found


def show_versions():
    """Print Python, the platform and the versions of treelib and the packages it uses.

    Introduced in Chapter 1's reproducibility cell. Paste its output into an error
    report (see CONTRIBUTING.md). torch's line says whether CUDA is available;
    a package that is not installed reads "not installed".

    Examples
    --------
    >>> import treelib
    >>> treelib.show_versions()  # doctest: +SKIP
    System:
        python: 3.11.7 (main, ...) [GCC ...]
      platform: Linux-...
    Packages:
         torch: 2.13.0+cpu (CUDA available: False)
    ...
    """
    found = versions()
    width = max(len(name) for name in found)
    print("System:")
    for name in ("python", "platform"):
        print(f"{name:>{width}}: {found[name]}")
    print("Packages:")
    for name in (*PACKAGES, "treelib"):
        print(f"{name:>{width}}: {found[name] or 'not installed'}")
