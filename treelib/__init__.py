"""treelib: decision trees from scratch in PyTorch.

The companion package of the book "Decision Trees from Scratch in PyTorch".
Each public object's docstring names the chapter that introduces it.
"""

from . import datasets, explain
from ._show_versions import show_versions
from .boosting import AdaBoostClassifier, AdaBoostRegressor
from .criteria import entropy, gini, squared_error
from .export import export_text, plot_tree
from .extra_trees import ExtraTreesClassifier, ExtraTreesRegressor, RandomTreesEmbedding
from .forest import RandomForestClassifier, RandomForestRegressor
from .gradient_boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .hist_gradient_boosting import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from .split import Split, best_split
from .stump import DecisionStump
from .tree import DecisionTreeClassifier, DecisionTreeRegressor
from .tree_structure import Tree

__version__ = "0.2.0"
__all__ = [
    "datasets",
    "explain",
    "AdaBoostClassifier",
    "AdaBoostRegressor",
    "DecisionStump",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
    "Tree",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "RandomTreesEmbedding",
    "Split",
    "best_split",
    "entropy",
    "gini",
    "squared_error",
    "export_text",
    "plot_tree",
    "show_versions",
]
