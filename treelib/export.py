"""Reading a fitted tree: its rules as indented text, and a drawing of its boxes.

Introduced in Chapter 2 (``notebooks/02_cart_classification``).

Both functions only read the flat arrays of ``tree.tree_`` (see :class:`treelib.Tree`).
``export_text`` writes exactly what ``sklearn.tree.export_text`` writes for the same
tree; ``plot_tree`` follows ``sklearn.tree.plot_tree`` with matplotlib alone.
"""

import itertools
import numbers
from types import SimpleNamespace

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from .tree_structure import TREE_LEAF, Tree


def _fitted_arrays(tree):
    """``tree.tree_`` as numpy arrays, once we know ``tree`` is a fitted treelib tree."""
    from .tree import BaseDecisionTree  # late import: keeps export.py free of cycles

    if not isinstance(tree, BaseDecisionTree):
        raise TypeError(
            "Expected a treelib DecisionTreeClassifier or DecisionTreeRegressor; "
            f"got {type(tree).__name__}."
        )
    check_is_fitted(tree, "tree_")
    arrays = {name: np.asarray(getattr(tree.tree_, name)) for name in Tree.FIELDS}
    arrays.setdefault("categorical", np.zeros(len(arrays["feature"]), dtype=bool))
    # where NaN goes is shown when the tree saw NaN in training (Chapter 6)
    return SimpleNamespace(**arrays, show_missing=getattr(tree, "_missing_in_fit", False))


def _or_missing(t, node, left):
    """`` or NaN`` on the branch a NaN takes, in a tree that saw NaN (else nothing)."""
    return " or NaN" if t.show_missing and bool(t.missing_go_to_left[node]) == left else ""


def _names(names, default, what):
    """``names`` (or ``default``) as a list, which must be as long as ``default``."""
    names = list(default if names is None else names)
    if len(names) != len(default):
        raise ValueError(f"{what} must contain {len(default)} elements, got {len(names)}.")
    return names


def _check_int(name, value, low):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}.")


def _operators(t, node):
    """How the left and right branch read: ``x <= t`` / ``x >  t``, or one-vs-rest (Chapter 6)."""
    return ("==", "!=") if t.categorical[node] else ("<=", "> ")


def _subtree_depth(t, node):
    """Levels of the subtree under ``node``, the node itself counting 1 (as scikit-learn)."""
    if t.children_left[node] == TREE_LEAF:
        return 1
    left, right = t.children_left[node], t.children_right[node]
    return 1 + max(_subtree_depth(t, left), _subtree_depth(t, right))


def export_text(
    tree,
    *,
    feature_names=None,
    class_names=None,
    max_depth=10,
    spacing=3,
    decimals=2,
    show_weights=False,
):
    """The rules of a fitted tree as indented text, as ``sklearn.tree.export_text``.

    Introduced in Chapter 2 (notebooks/02_cart_classification). In a tree
    that saw missing values in training, the branch a NaN takes ends in
    ``or NaN`` (Chapter 6; scikit-learn does not show it).

    Parameters
    ----------
    tree : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted treelib tree.
    feature_names : sequence of str, optional
        One name per feature; default ``"feature_0"``, ``"feature_1"``, ...
    class_names : sequence of str, optional
        One name per class, in the order of ``tree.classes_`` (the default names).
    max_depth : int, default=10
        Levels to write; deeper subtrees become "truncated branch" lines.
    spacing : int, default=3
        Width of one level of indentation.
    decimals : int, default=2
        Decimals of thresholds, leaf values and weights.
    show_weights : bool, default=False
        Classifier only: also write the weighted class counts of every leaf.

    Returns
    -------
    str
        One line per rule or leaf, each ending with a newline. A one-vs-rest split
        of a categorical feature (Chapter 6) reads ``x == c`` / ``x != c``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from treelib import DecisionTreeClassifier, export_text
    >>> X, y = load_iris(return_X_y=True)
    >>> print(export_text(DecisionTreeClassifier(max_depth=1, random_state=1).fit(X, y)))
    |--- feature_3 <= 0.80
    |   |--- class: 0
    |--- feature_3 >  0.80
    |   |--- class: 1
    <BLANKLINE>
    """
    t = _fitted_arrays(tree)
    classifier = is_classifier(tree)
    for name, value, low in [("max_depth", max_depth, 0), ("spacing", spacing, 1),
                             ("decimals", decimals, 0)]:  # fmt: skip
        _check_int(name, value, low)
    default = [f"feature_{i}" for i in range(tree.n_features_in_)]
    feature_names = _names(feature_names, default, "feature_names")
    if classifier:
        class_names = _names(class_names, tree.classes_, "class_names")

    def number(v):
        return f"{v:.{decimals}f}"

    def leaf(node):
        # several outputs (Chapter 3): as scikit-learn, each output's first column
        # (its mean, or its fraction of the first class), and the index of their largest
        value = t.value[node, 0] if t.value.shape[1] == 1 else t.value[node].T[0]
        if not classifier:
            return "value: [" + ", ".join(map(number, value)) + "]"
        best = np.argmax(value)
        text = f"class: {class_names[best] if t.value.shape[1] == 1 else best}"
        if show_weights:
            weights = value * t.weighted_n_node_samples[node]  # fractions back to counts
            text = "weights: [" + ", ".join(map(number, weights)) + "] " + text
        return text

    lines = []

    def write(node, depth):
        indent = ("|" + " " * spacing) * depth
        indent = indent[:-spacing] + "-" * spacing
        if depth > max_depth + 1:  # scikit-learn writes one level past max_depth
            levels = _subtree_depth(t, node)
            lines.append(f"{indent} " + (leaf(node) if levels == 1 else
                                         f"truncated branch of depth {levels}"))  # fmt: skip
        elif t.children_left[node] == TREE_LEAF:
            lines.append(f"{indent} {leaf(node)}")
        else:
            name, threshold = feature_names[t.feature[node]], number(t.threshold[node])
            yes, no = _operators(t, node)
            lines.append(f"{indent} {name} {yes} {threshold}{_or_missing(t, node, True)}")
            write(t.children_left[node], depth + 1)
            lines.append(f"{indent} {name} {no} {threshold}{_or_missing(t, node, False)}")
            write(t.children_right[node], depth + 1)

    write(0, 1)
    return "".join(line + "\n" for line in lines)


def _box_text(t, node, names, criterion, precision):
    """What one box says: rule, impurity, samples, value and (classifier) class."""
    lines = []
    if t.children_left[node] != TREE_LEAF:
        rule = f"{_operators(t, node)[0]} {round(t.threshold[node], precision)}"
        lines.append(f"{names.features[t.feature[node]]} {rule}")
        if t.show_missing:
            lines.append("NaN goes " + ("left" if t.missing_go_to_left[node] else "right"))
    if criterion is not None:
        lines.append(f"{criterion} = {round(t.impurity[node], precision)}")
    lines.append(f"samples = {t.n_node_samples[node]}")
    if t.value.shape[1] > 1:  # several outputs (Chapter 3): every output's row, no class
        lines.append("value = " + _outputs_text(t, node, names.classes is not None, precision))
        return "\n".join(lines)
    value = t.value[node, 0]
    if names.classes is None:
        lines.append(f"value = {round(value[0], precision)}")
        return "\n".join(lines)
    counts = value * t.weighted_n_node_samples[node]
    whole = np.all(np.mod(counts, 1) == 0)  # integer counts unless samples were weighted
    shown = [str(int(c)) if whole else str(round(c, precision)) for c in counts]
    lines.append("value = [" + ", ".join(shown) + "]")
    lines.append(f"class = {names.classes[np.argmax(value)]}")
    return "\n".join(lines)


def _outputs_text(t, node, classifier, precision):
    """A multi-output node's values as scikit-learn's ``plot_tree`` writes them (Chapter 3).

    One row per output, ``[[a, b]\n[c, d]]``: class counts (whole numbers
    unless samples were weighted), or each output's mean.
    """
    value = t.value[node]
    if classifier:
        value = value * t.weighted_n_node_samples[node]
    if classifier and np.all(np.mod(value, 1) == 0):
        value = value.astype(int)
    else:
        value = np.around(value, precision)
    text = str(value.astype("S32")).replace("b'", "'")
    return text.replace("' '", ", ").replace("'", "").replace("\n ", "\n")


def _box_color(t, node, classifier):
    """Majority-class color, paler the more mixed the node (scikit-learn's rule).

    Several outputs (Chapter 3): one color, stronger the purer the node, as scikit-learn.
    """
    from matplotlib import colormaps

    if t.value.shape[1] > 1:
        rgb, low, high = colormaps["tab10"](0)[:3], -t.impurity.max(), -t.impurity.min()
        alpha = 0.0 if high == low else (-t.impurity[node] - low) / (high - low)
        return tuple(alpha * c + (1 - alpha) for c in rgb)
    value = t.value[node, 0]
    if classifier:
        rgb = colormaps["tab10"](int(np.argmax(value)) % 10)[:3]
        top = np.sort(value)[::-1]
        alpha = 0.0 if len(top) == 1 else (top[0] - top[1]) / (1 - top[1])
    else:  # regression: stronger for larger predictions
        rgb, low, high = colormaps["tab10"](1)[:3], t.value.min(), t.value.max()
        alpha = 0.0 if high == low else (value[0] - low) / (high - low)
    return tuple(alpha * c + (1 - alpha) for c in rgb)


def _layout(t, max_depth):
    """Boxes in preorder: leaves take the next x slot, a parent sits above its children.

    The children of a node at depth ``max_depth`` become "(...)" stubs.
    """
    boxes, slots = [], itertools.count()

    def place(node, depth, parent):
        box = SimpleNamespace(node=node, depth=depth, parent=parent, x=None)
        box.stub = max_depth is not None and depth > max_depth
        boxes.append(box)
        if box.stub or t.children_left[node] == TREE_LEAF:
            box.x = next(slots)
        else:
            here = len(boxes) - 1
            box.x = (place(t.children_left[node], depth + 1, here)
                     + place(t.children_right[node], depth + 1, here)) / 2  # fmt: skip
        return box.x

    place(0, 0, None)
    return boxes


def plot_tree(
    tree,
    *,
    feature_names=None,
    class_names=None,
    max_depth=None,
    filled=True,
    impurity=True,
    precision=3,
    fontsize=None,
    ax=None,
):
    """Draw a fitted tree with matplotlib, one box per node, as ``sklearn.tree.plot_tree``.

    Introduced in Chapter 2 (notebooks/02_cart_classification). In a tree
    that saw missing values in training, a split's box says where NaN goes
    (Chapter 6).

    A box shows the rule, impurity, samples, value (class counts, or the mean)
    and class. Leaves sit side by side in left-to-right order, one row per depth,
    each parent centred above its children; True means the rule holds.

    Parameters
    ----------
    tree : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted treelib tree.
    feature_names : sequence of str, optional
        One name per feature; default ``"x[0]"``, ``"x[1]"``, ...
    class_names : sequence of str, optional
        One name per class, in the order of ``tree.classes_`` (the default names).
    max_depth : int, optional
        Levels to draw below the root; deeper subtrees become grey "(...)" boxes.
    filled : bool, default=True
        Color each box by its majority class (regressor: by its value).
    impurity : bool, default=True
        Show the impurity, named after the criterion.
    precision : int, default=3
        Digits after the decimal point of thresholds, impurities and values.
    fontsize : float, optional
        Font size; by default the largest that keeps the boxes apart.
    ax : matplotlib Axes, optional
        Axes to draw on (cleared first); default the current axes.

    Returns
    -------
    list of matplotlib.text.Annotation
        One per box, in preorder: ``[i]`` is node ``i`` when nothing is truncated.
    """
    import matplotlib.pyplot as plt

    t = _fitted_arrays(tree)
    classifier = is_classifier(tree)
    if max_depth is not None:
        _check_int("max_depth", max_depth, 0)
    _check_int("precision", precision, 0)
    default = [f"x[{i}]" for i in range(tree.n_features_in_)]
    names = SimpleNamespace(features=_names(feature_names, default, "feature_names"))
    names.classes = _names(class_names, tree.classes_, "class_names") if classifier else None
    criterion = {"log_loss": "entropy"}.get(tree.criterion) or tree.criterion
    criterion = criterion if impurity else None

    ax = plt.gca() if ax is None else ax
    ax.clear()
    ax.set_axis_off()
    boxes = _layout(t, max_depth)
    n_slots, n_levels = max(b.x for b in boxes) + 1, max(b.depth for b in boxes) + 1
    xy = [((b.x + 0.5) / n_slots, 1 - (b.depth + 0.5) / n_levels) for b in boxes]
    arrow = dict(arrowstyle="<-", color=plt.rcParams["text.color"])
    annotations = []
    for i, box in enumerate(boxes):
        text = "(...)" if box.stub else _box_text(t, box.node, names, criterion, precision)
        color = _box_color(t, box.node, classifier) if filled else "white"
        kwargs = dict(xycoords="axes fraction", ha="center", va="center", fontsize=fontsize,
                      zorder=100 - 10 * box.depth,  # a parent's box hides its edges' ends
                      bbox=dict(fc="lightgrey" if box.stub else color, ec="black"))  # fmt: skip
        if box.parent is None:
            annotations.append(ax.annotate(text, xy[i], **kwargs))
        else:
            annotations.append(ax.annotate(text, xy[box.parent], xy[i], arrowprops=arrow, **kwargs))
    if fontsize is None:
        _fit_fontsize(ax, annotations, n_slots, n_levels)
    if len(boxes) > 1:
        _label_root_edges(ax, annotations, boxes, xy)
    return annotations


def _fit_fontsize(ax, annotations, n_slots, n_levels):
    """Scale the font so that the widest (tallest) box fits its slot, as scikit-learn does."""
    renderer = ax.figure.canvas.get_renderer()
    for ann in annotations:
        ann.update_bbox_position_size(renderer)
    extents = [ann.get_bbox_patch().get_window_extent() for ann in annotations]
    frame = ax.get_window_extent()
    # leave a little room between neighbours, and more between levels for the edges
    scale = min(0.95 * frame.width / n_slots / max(e.width for e in extents),
                0.7 * frame.height / n_levels / max(e.height for e in extents))  # fmt: skip
    size = annotations[0].get_fontsize() * scale
    for ann in annotations:
        ann.set_fontsize(size)


def _label_root_edges(ax, annotations, boxes, xy):
    """Write True / False halfway along the visible part of the root's two edges."""
    renderer = ax.figure.canvas.get_renderer()
    axes_height = ax.get_window_extent().height

    def half_height(i):  # of box i, in axes coordinates
        annotations[i].update_bbox_position_size(renderer)
        return annotations[i].get_bbox_patch().get_window_extent().height / axes_height / 2

    (x0, y0), root_half = xy[0], half_height(0)
    children = [i for i, box in enumerate(boxes) if box.parent == 0]  # left child first
    for i, (label, ha) in zip(children, [("True  ", "right"), ("  False", "left")]):
        x1, y1 = xy[i]
        y = (y0 - root_half + y1 + half_height(i)) / 2
        x = x0 + (x1 - x0) * (y0 - y) / (y0 - y1)  # on the line between the two centres
        ax.text(x, y, label, ha=ha, va="center", transform=ax.transAxes,
                fontsize=annotations[0].get_fontsize())  # fmt: skip
