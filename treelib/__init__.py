"""treelib: decision trees from scratch in PyTorch.

The companion package of the book "Decision Trees from Scratch in PyTorch".
Each public object's docstring names the chapter that introduces it.
"""

from . import datasets
from .criteria import entropy, gini, squared_error
from .split import Split, best_split
from .stump import DecisionStump
from .tree import DecisionTreeClassifier, DecisionTreeRegressor
from .tree_structure import Tree

__version__ = "0.1.0"
__all__ = [
    "datasets",
    "DecisionStump",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "Tree",
    "Split",
    "best_split",
    "entropy",
    "gini",
    "squared_error",
]
