"""Reproducible per-node randomness: which features a node searches, in which order.

Introduced in Chapter 2 (the feature order breaks ties) and Chapter 5 (each node
searches ``max_features`` random features); Chapter 7 relies on it.

Instead of drawing from one random stream node after node (the result would
depend on the order nodes are grown in), every node gets a 32-bit *key* that
hashes its path from the root, and its feature order is computed from that
key. So the depth-first builder of Chapter 2 and the level-wise builders of
Chapter 7 make the same random choices; with one tie rule
(``treelib.rules.is_tie_or_best``) they grow identical trees (``hist`` too, when
its bins hold every distinct value).
"""

import torch

MASK32 = 0xFFFFFFFF
GOLDEN = 0x9E3779B1  # spreads consecutive keys apart before hashing


def mix32(x):
    """A 32-bit integer hash ("lowbias32") on int64 tensors holding values below 2**32.

    int64 products may wrap around; the low 32 bits, all we keep, are still exact.
    """
    x = x & MASK32
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & MASK32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & MASK32
    return x ^ (x >> 16)


def root_key(seed, device=None):
    """The root's key, from an integer seed."""
    return mix32(torch.tensor([seed], dtype=torch.int64, device=device))


def child_keys(keys, is_right):
    """Keys of the children of nodes with ``keys`` (``is_right``: 0 left, 1 right)."""
    return mix32(keys * 2 + 1 + is_right)


def search_ranks(keys, n_features, max_features, constant=None):
    """Each node's search order: rank of every feature, ``n_features`` if not searched.

    Like scikit-learn: visit ``max_features`` features in random order; constant
    ones (``constant``, a bool tensor ``(n_nodes, n_features)``) count as visited
    but are skipped; if all visited ones are constant, take the first
    non-constant one.
    """
    p = n_features
    positions = torch.arange(p, device=keys.device)
    order = torch.argsort(mix32(keys[:, None] * GOLDEN + positions), dim=1, stable=True)
    chosen = torch.ones_like(order, dtype=torch.bool)
    if max_features < p:
        varies = ~constant.gather(1, order)  # in visiting order
        chosen = (positions < max_features) & varies
        fallback = ~chosen.any(1) & varies.any(1)
        first_varying = varies.int().argmax(1)
        chosen[fallback, first_varying[fallback]] = True
    ranks = torch.full_like(order, p)
    return ranks.scatter_(1, order, torch.where(chosen, positions, p))
