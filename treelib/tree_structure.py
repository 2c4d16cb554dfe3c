"""A fitted tree as flat arrays, with scikit-learn's field names and meaning.

Introduced in Chapter 2 (``notebooks/02_cart_classification``).

Node ``0`` is the root and ids follow preorder (a node, then its whole left
subtree, then its right subtree). A leaf has ``children_left == -1`` and
``feature == -2``. Every field is a torch tensor, indexed by node id.
"""

import torch

TREE_LEAF = -1
TREE_UNDEFINED = -2


class Tree:
    """Flat-array storage of a binary tree, as ``sklearn.tree._tree.Tree``.

    Introduced in Chapter 2.

    Attributes
    ----------
    children_left, children_right : int64 tensor (node_count,)
    feature : int64 tensor (node_count,)
    threshold : float64 tensor (node_count,)
    value : float64 tensor (node_count, 1, n_values)
        Class fractions (classifier) or the mean target (regressor).
    impurity : float64 tensor (node_count,)
    n_node_samples : int64 tensor (node_count,)
    weighted_n_node_samples : float64 tensor (node_count,)
    categorical : bool tensor (node_count,)
        True where the split is one-vs-rest: ``x == threshold`` goes left
        (Chapter 6). Not in scikit-learn, whose splits are all ``x <= threshold``.
    """

    FIELDS = {
        "children_left": torch.int64,
        "children_right": torch.int64,
        "feature": torch.int64,
        "threshold": torch.float64,
        "value": torch.float64,
        "impurity": torch.float64,
        "n_node_samples": torch.int64,
        "weighted_n_node_samples": torch.float64,
        "categorical": torch.bool,
    }

    def __init__(self, device=None, **fields):
        for name, dtype in self.FIELDS.items():
            setattr(self, name, torch.as_tensor(fields[name], dtype=dtype, device=device))

    @property
    def node_count(self):
        return len(self.feature)

    @property
    def n_leaves(self):
        return int((self.children_left == TREE_LEAF).sum())

    @property
    def max_depth(self):
        """Depth of the deepest leaf (the root alone has depth 0)."""
        return int(self.node_depth().max())

    def node_depth(self):
        """Depth of every node; parents precede children in preorder."""
        left, right = self.children_left.tolist(), self.children_right.tolist()
        depth = [0] * self.node_count
        for node in range(self.node_count):
            if left[node] != TREE_LEAF:
                depth[left[node]] = depth[right[node]] = depth[node] + 1
        return torch.tensor(depth)

    def apply(self, X):
        """Leaf id of every row of float32 ``X``: all samples descend together.

        One step per depth; samples that reach a leaf leave the working set.
        """
        n, p = X.shape
        leaf = torch.zeros(n, dtype=torch.int64, device=X.device)
        rows, node = torch.arange(n, device=X.device), torch.zeros_like(leaf)
        is_inner = self.children_left != TREE_LEAF
        any_categorical = bool(self.categorical.any())
        while len(rows):
            inner = torch.take(is_inner, node)
            if not bool(inner.all()):
                leaf[rows[~inner]] = node[~inner]
                rows, node = rows[inner], node[inner]
            x = torch.take(X, rows * p + torch.take(self.feature, node)).double()
            threshold = torch.take(self.threshold, node)
            left = x <= threshold
            if any_categorical:
                left = torch.where(torch.take(self.categorical, node), x == threshold, left)
            left_child = torch.take(self.children_left, node)
            node = torch.where(left, left_child, torch.take(self.children_right, node))
        return leaf

    def compute_feature_importances(self, n_features):
        """Mean decrease in impurity per feature, normalised to sum to one."""
        inner = self.children_left != TREE_LEAF
        w_imp = self.weighted_n_node_samples * self.impurity
        left, right = self.children_left[inner], self.children_right[inner]
        decrease = w_imp[inner] - w_imp[left] - w_imp[right]
        importances = torch.zeros(n_features, dtype=torch.float64, device=self.feature.device)
        importances.index_add_(0, self.feature[inner], decrease)
        importances /= self.weighted_n_node_samples[0]
        total = importances.sum()
        return importances / total if total > 0 else importances
