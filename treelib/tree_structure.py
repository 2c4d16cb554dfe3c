"""A fitted tree as flat arrays, with scikit-learn's field names, dtypes and meaning.

Introduced in Chapter 2 (``notebooks/02_cart_classification``).

Node ``0`` is the root and ids follow preorder (a node, then its whole left
subtree, then its right subtree), except in trees grown best-first
(``max_leaf_nodes``), whose ids follow creation order as scikit-learn's; in
both, a parent's id is smaller than its children's, which is all the methods
below rely on. A leaf has ``children_left == -1`` and
``feature == -2``. What a user reads after ``fit`` follows scikit-learn: every
field is a numpy array, indexed by node id, with the dtype and shape of
``sklearn.tree._tree.Tree``. torch stays the engine: the builders grow the tree
in tensors, prediction runs in tensors on the estimator's device, and
:meth:`Tree.to_torch` gives the fields as tensors.
"""

from types import SimpleNamespace

import numpy as np
import torch
from scipy import sparse
from sklearn import get_config

from ._validation import _as_numpy
from .rules import goes_left, more_samples_left

TREE_LEAF = -1
TREE_UNDEFINED = -2


class Tree:
    """Flat-array storage of a binary tree, as ``sklearn.tree._tree.Tree``.

    Introduced in Chapter 2.

    Parameters
    ----------
    device : str, torch.device or None, default=None
        Where :meth:`apply_tensor` runs by default (None: CPU).
    n_features : int or None, default=None
        Number of features of the training data (the estimator sets it).
    **fields : tensor or array-like
        One entry per name of :attr:`FIELDS`, as the builders produce them.

    Attributes
    ----------
    children_left, children_right : ndarray of int64 (intp), shape (node_count,)
    feature : ndarray of int64 (intp), shape (node_count,)
    threshold : ndarray of float64, shape (node_count,)
    value : ndarray of float64, shape (node_count, n_outputs, max_n_classes)
        Class fractions (classifier) or the mean target (regressor, one column).
    impurity : ndarray of float64, shape (node_count,)
    n_node_samples : ndarray of int64 (intp), shape (node_count,)
    weighted_n_node_samples : ndarray of float64, shape (node_count,)
    categorical : ndarray of bool, shape (node_count,)
        True where the split is one-vs-rest: ``x == threshold`` goes left
        (Chapter 6). Not in scikit-learn, whose splits are all ``x <= threshold``.
    missing_go_to_left : ndarray of uint8, shape (node_count,)
        1 where a sample whose feature is NaN goes left (Chapter 6). A split
        that saw NaN in training sends it to the side that scored better; one
        that saw none, to the child that had more training samples (the right
        one on equal counts), as scikit-learn 1.9. Builders that never see NaN
        may leave it out: it is then computed from ``n_node_samples``. Leaves: 0.
    node_count, capacity, max_depth, n_features, n_outputs, max_n_classes : int
    n_classes : ndarray of int64 (intp), shape (n_outputs,)
        ``[n_classes]`` for a classifier, ``[1]`` for a regressor.
    """

    FIELDS = {
        "children_left": np.intp,
        "children_right": np.intp,
        "feature": np.intp,
        "threshold": np.float64,
        "value": np.float64,
        "impurity": np.float64,
        "n_node_samples": np.intp,
        "weighted_n_node_samples": np.float64,
        "categorical": np.bool_,
        "missing_go_to_left": np.uint8,
    }

    def __init__(self, device=None, n_features=None, **fields):
        if fields.get("missing_go_to_left") is None:
            fields["missing_go_to_left"] = more_samples_left(
                *(_as_numpy(fields[name]) for name in ("children_left", "children_right")),
                _as_numpy(fields["n_node_samples"]),
            )
        for name, dtype in self.FIELDS.items():
            setattr(self, name, np.ascontiguousarray(_as_numpy(fields[name]), dtype=dtype))
        self.device = str(torch.device("cpu" if device is None else device))
        self.n_features = n_features
        self._tensors = {}

    def __getstate__(self):
        """Pickle the numpy arrays only (deterministic bytes), not the tensor cache."""
        return {k: v for k, v in self.__dict__.items() if k != "_tensors"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._tensors = {}
        if "missing_go_to_left" not in state:  # pickled before treelib 0.3
            self.missing_go_to_left = more_samples_left(
                self.children_left, self.children_right, self.n_node_samples
            )

    def set_leaf_values(self, values):
        """Overwrite the leaves' values (one per node; inner nodes keep theirs).

        Introduced in Chapter 8, where gradient boosting replaces a tree's leaf
        means by Newton steps. The tensor copies cached for prediction are
        dropped, so the next prediction reads the new values.
        """
        is_leaf = self.children_left == TREE_LEAF
        self.value[is_leaf, 0, 0] = _as_numpy(values)[is_leaf]
        self._tensors.clear()

    @property
    def node_count(self):
        """Number of nodes, inner nodes and leaves."""
        return len(self.feature)

    @property
    def capacity(self):
        """Length of the arrays: ``node_count``, as a fitted scikit-learn tree."""
        return self.node_count

    @property
    def n_outputs(self):
        """Number of outputs (more than 1 for a multi-output y, Chapter 3)."""
        return self.value.shape[1]

    @property
    def max_n_classes(self):
        """Number of classes (1 for a regressor): the last axis of ``value``."""
        return self.value.shape[2]

    @property
    def n_classes(self):
        """Classes per output: ``np.array([max_n_classes])`` unless :meth:`set_n_classes` said."""
        n_classes = getattr(self, "_n_classes", None)
        if n_classes is not None:
            return n_classes
        return np.full(self.n_outputs, self.max_n_classes, dtype=np.intp)

    def set_n_classes(self, n_classes):
        """Record each output's number of classes (a multi-output classifier, Chapter 3).

        ``value`` is zero-padded to the largest of them, as scikit-learn's.
        """
        self._n_classes = np.asarray(n_classes, dtype=np.intp)

    @property
    def n_leaves(self):
        """Number of leaves."""
        return int((self.children_left == TREE_LEAF).sum())

    @property
    def max_depth(self):
        """Depth of the deepest leaf (the root alone has depth 0)."""
        return int(self.node_depth().max())

    def node_depth(self):
        """Depth of every node, the root's being 0 (an int64 array)."""
        return self.compute_node_depths() - 1

    def compute_node_depths(self):
        """Depth of every node counting the root as 1, as scikit-learn's method."""
        parent, depth = self._parents(), np.ones(self.node_count, dtype=np.int64)
        for node in range(1, self.node_count):  # a parent's id precedes its children's
            depth[node] = depth[parent[node]] + 1
        return depth

    def _parents(self):
        """The parent of every node (-1 for the root)."""
        parent = np.full(self.node_count, -1, dtype=np.intp)
        inner = np.flatnonzero(self.children_left != TREE_LEAF)
        parent[self.children_left[inner]] = inner
        parent[self.children_right[inner]] = inner
        return parent

    def to_torch(self, device=None):
        """The fields as torch tensors on ``device`` (default: the tree's device).

        Introduced in Chapter 2. The tensors are made once per device and kept
        (they are not pickled); treat them as read-only.

        Returns
        -------
        types.SimpleNamespace
            One tensor per name of :attr:`FIELDS` (int64, float64 or bool).
        """
        device = str(torch.device(self.device if device is None else device))
        if device not in self._tensors:
            self._tensors[device] = SimpleNamespace(
                **{name: torch.from_numpy(getattr(self, name)).to(device) for name in self.FIELDS}
            )
        return self._tensors[device]

    def _as_float32(self, X):
        """``X`` as a 2-d float32 numpy array with ``n_features`` columns.

        A CSR sparse matrix (or array) is made dense, n x d float32 in memory;
        other sparse formats are refused, as scikit-learn's ``Tree`` does.
        """
        if sparse.issparse(X):
            if X.format != "csr":
                raise ValueError(f"X should be in CSR sparse format, got {type(X)}")
            X = X.toarray()
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d; got an array of shape {X.shape}.")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features; the tree has {self.n_features}.")
        return X

    def apply(self, X):
        """Leaf id of every row of ``X``, as scikit-learn's ``Tree.apply``.

        Parameters
        ----------
        X : array-like or CSR sparse matrix of shape (n_samples, n_features)
            Cast to float32, as the estimators do before they predict (a
            sparse X is made dense).

        Returns
        -------
        ndarray of int64 (intp), shape (n_samples,)
        """
        X = torch.from_numpy(self._as_float32(X)).to(self.device)
        return self.apply_tensor(X).cpu().numpy()

    def apply_tensor(self, X):
        """Leaf id of every row of float32 tensor ``X``: all samples descend together.

        The torch engine behind :meth:`apply`; runs on ``X``'s device. One step per
        depth; samples that reach a leaf leave the working set.
        """
        t = self.to_torch(X.device)
        n, p = X.shape
        leaf = torch.zeros(n, dtype=torch.int64, device=X.device)
        rows, node = torch.arange(n, device=X.device), torch.zeros_like(leaf)
        is_inner = t.children_left != TREE_LEAF
        any_categorical = bool(self.categorical.any())
        while len(rows):
            inner = torch.take(is_inner, node)
            if not bool(inner.all()):
                leaf[rows[~inner]] = node[~inner]
                rows, node = rows[inner], node[inner]
            x = torch.take(X, rows * p + torch.take(t.feature, node))
            threshold = torch.take(t.threshold, node)
            categorical = torch.take(t.categorical, node) if any_categorical else False
            missing_left = torch.take(t.missing_go_to_left, node).bool()
            left = goes_left(x, threshold, categorical, missing_left)  # treelib.rules
            left_child = torch.take(t.children_left, node)
            node = torch.where(left, left_child, torch.take(t.children_right, node))
        return leaf

    def predict(self, X):
        """``value`` of the leaf of every row: shape (n_samples, max_n_classes).

        As scikit-learn's ``Tree.predict`` (class fractions, or the mean target);
        with several outputs (Chapter 3) shape (n_samples, n_outputs, max_n_classes).
        """
        if self.n_outputs > 1:
            return self.value[self.apply(X)]
        return self.value[self.apply(X), 0]

    def decision_path(self, X):
        """Which nodes each row of ``X`` passes through, as scikit-learn's method.

        Parameters
        ----------
        X : array-like or CSR sparse matrix of shape (n_samples, n_features)
            Cast to float32 (a sparse X is made dense).

        Returns
        -------
        scipy.sparse CSR matrix of int64, shape (n_samples, node_count)
            Entry ``(i, j)`` is 1 when sample ``i`` visits node ``j``.
        """
        return self.path_matrix(self.apply(X))

    def path_matrix(self, leaves):
        """The decision-path matrix of samples that end in ``leaves``.

        A sample's row is its leaf and the leaf's ancestors (an ancestor
        has a smaller id, so climbing from the leaf fills the row from
        its end); all samples climb together, one parent step per depth.

        Parameters
        ----------
        leaves : array-like of int, shape (n_samples,)
            Leaf ids, as :meth:`apply` returns them.

        Returns
        -------
        scipy.sparse CSR matrix of int64, shape (n_samples, node_count)
        """
        leaves = np.asarray(leaves, dtype=np.intp)
        parent, length = self._parents(), self.compute_node_depths()[leaves]
        indptr = np.concatenate([[0], np.cumsum(length)]).astype(np.intp)
        indices = np.empty(indptr[-1], dtype=np.intp)
        node = leaves.copy()
        for step in range(int(length.max(initial=0))):  # climb from the leaves, all at once
            alive = length > step
            indices[indptr[1:][alive] - 1 - step] = node[alive]  # rows fill root first
            node = np.where(alive, parent[node], node)
        data = np.ones(len(indices), dtype=np.intp)
        shape = (len(leaves), self.node_count)
        if get_config().get("sparse_interface") == "sparray":
            return sparse.csr_array((data, indices, indptr), shape=shape)
        return sparse.csr_matrix((data, indices, indptr), shape=shape)

    def compute_feature_importances(self, normalize=True):
        """Mean decrease in impurity per feature, as scikit-learn's method.

        For each split on feature ``f`` add ``W_t i_t - W_L i_L - W_R i_R``,
        divide by the root's weight, and (``normalize``) scale to sum to one.

        Returns
        -------
        ndarray of float64, shape (n_features,)
        """
        inner = self.children_left != TREE_LEAF
        w_imp = self.weighted_n_node_samples * self.impurity
        left, right = self.children_left[inner], self.children_right[inner]
        decrease = w_imp[inner] - w_imp[left] - w_imp[right]
        n_features = self.n_features
        if n_features is None:
            n_features = int(self.feature.max()) + 1 if inner.any() else 0
        importances = np.zeros(n_features, dtype=np.float64)
        np.add.at(importances, self.feature[inner], decrease)
        importances /= self.weighted_n_node_samples[0]
        total = importances.sum()
        return importances / total if normalize and total > 0 else importances


class NodeTable:
    """The nodes of a tree being built, as the columns of a :class:`Tree`.

    Introduced in Chapter 7. The one place where a builder's nodes become a
    :class:`Tree`: the recursive and best-first builders fill it row by row
    (:meth:`add`, :func:`treelib.grow.tree_of`), the level-wise ones column
    by column (``NodeTable(**columns)``, :func:`treelib.levelwise.assemble_trees`).
    Its columns are :attr:`Tree.FIELDS`; a row leaves out what a leaf needs
    not say (:attr:`LEAF`), and a table without ``categorical`` has none, one
    without ``missing_go_to_left`` sends a NaN to the bigger child
    (:class:`Tree`). ``value`` holds one row ``(n_values,)`` per node, or
    ``(n_outputs, n_values)`` with several outputs (Chapter 3).
    """

    LEAF = dict(
        children_left=TREE_LEAF, children_right=TREE_LEAF, feature=TREE_UNDEFINED,
        threshold=float(TREE_UNDEFINED), categorical=False, missing_go_to_left=False,
    )  # fmt: skip

    def __init__(self, **columns):
        unknown = set(columns) - set(Tree.FIELDS)
        if unknown:
            raise ValueError(f"Not a field of Tree: {sorted(unknown)}")
        self.columns = columns

    def add(self, **row):
        """Append one node (a row); the fields it leaves out are a leaf's (:attr:`LEAF`)."""
        for name in Tree.FIELDS:
            self.columns.setdefault(name, []).append(row[name] if name in row else self.LEAF[name])

    def split(self, sizes):
        """Consecutive tables of ``sizes`` nodes each (the trees of a forest, one after another)."""
        parts = {name: column.split(sizes) for name, column in self.columns.items()}
        return [
            NodeTable(**{name: part[t] for name, part in parts.items()}) for t in range(len(sizes))
        ]

    def to_tree(self, device=None, n_features=None):
        """The :class:`Tree` of these nodes (it predicts on ``device``; None: the CPU)."""
        columns = dict(self.columns)
        value = columns["value"]
        value = torch.stack(value) if isinstance(value, list) else value
        columns["value"] = value[:, None] if value.ndim == 2 else value  # (one output)
        if "categorical" not in columns:
            columns["categorical"] = torch.zeros(len(value), dtype=torch.bool)
        return Tree(device=device, n_features=n_features, **columns)
