"""Histogram split search: bin each feature once, then split on bin edges.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). Each feature is cut
into at most ``max_bins`` quantile bins before growing. At every level one
weighted ``bincount`` builds, for all nodes at once, the statistics of every
(node, feature, bin); a cumulative sum over the bins gives every left child.
No sorting after the binning. When a feature has at most ``max_bins`` distinct
values every value is its own bin and the split search is exact; thresholds
are always reported as real feature values.
"""

import torch

from .criteria import node_weight
from .levelwise import take
from .node_random import search_ranks
from .split import FEATURE_THRESHOLD, split_scores

MAX_CELLS = 2**22  # (node, feature, bin) cells per histogram batch: bounds memory


def bin_feature(x, max_bins):
    """Bin codes of one float32 column, and each bin's smallest and largest value."""
    values = torch.unique(x)
    if len(values) <= max_bins:
        cuts = values[:-1]  # one bin per distinct value
    else:
        quantiles = torch.linspace(0, 1, max_bins + 1, dtype=torch.float64)[1:-1]
        cuts = torch.unique(torch.quantile(values.double(), quantiles.to(values.device)).float())
    codes = torch.searchsorted(cuts, x.contiguous())  # first cut >= x: bin b holds x <= cut[b]
    n_bins = len(cuts) + 1
    low = torch.full((n_bins,), float("inf"), device=x.device).scatter_reduce(0, codes, x, "amin")
    high = torch.full((n_bins,), float("-inf"), device=x.device).scatter_reduce(0, codes, x, "amax")
    return codes, low, high


class HistogramSearch:
    """Level-wise split search on per-node histograms (see the module docstring)."""

    def __init__(self, X, max_bins=255):
        binned = [bin_feature(X[:, j], max_bins) for j in range(X.shape[1])]
        self.n_bins = max(len(low) for _, low, _ in binned)
        pad = [self.n_bins - len(low) for _, low, _ in binned]
        self.codes = torch.stack([codes for codes, _, _ in binned], dim=1)  # (n, p)
        self.low = torch.stack([torch.nn.functional.pad(b[1], (0, k), value=float("inf"))
                                for b, k in zip(binned, pad)])  # fmt: skip
        self.high = torch.stack([torch.nn.functional.pad(b[2], (0, k), value=float("-inf"))
                                 for b, k in zip(binned, pad)])  # fmt: skip
        self.active = torch.arange(X.shape[0], device=X.device)

    def samples(self):
        return self.active

    def next_level(self, node_of):
        self.active = torch.nonzero(node_of >= 0).squeeze(1)

    def histograms(self, stats, node, first, count):
        """Statistics and counts of every (node, feature, bin), nodes first..first+count-1."""
        p, B = self.codes.shape[1], self.n_bins
        in_batch = (node >= first) & (node < first + count)
        rows, local = self.active[in_batch], (node[in_batch] - first)[:, None]
        cell = ((local * p + torch.arange(p, device=rows.device)) * B + self.codes[rows]).reshape(
            -1
        )
        size = count * p * B
        hist = torch.stack(
            [torch.bincount(cell, s[rows].repeat_interleave(p), size) for s in stats]
        )
        counts = torch.bincount(cell, minlength=size)
        return hist.view(-1, count, p, B), counts.view(count, p, B)

    def best_splits(self, stats, node_of, total, sizes, is_open, keys, rules, criterion):
        node = node_of[self.active]
        p, B = self.codes.shape[1], self.n_bins
        batch = max(1, MAX_CELLS // (p * B))
        found = [
            self._best_in_batch(
                stats, node, total, sizes, is_open, keys, rules, criterion, first, batch
            )
            for first in range(0, len(sizes), batch)
        ]
        return tuple(torch.cat(parts) if i < 3 else torch.cat(parts, dim=1)
                     for i, parts in enumerate(zip(*found)))  # fmt: skip

    def _best_in_batch(
        self, stats, node, total, sizes, is_open, keys, rules, criterion, first, batch
    ):
        count = min(batch, len(sizes) - first)
        hist, counts = self.histograms(stats, node, first, count)
        nodes = torch.arange(first, first + count, device=node.device)
        present = counts > 0
        constant = present.sum(-1) <= 1 if rules.max_features < counts.shape[1] else None
        ranks = search_ranks(keys[nodes], counts.shape[1], rules.max_features, constant)
        left, n_left = hist.cumsum(-1), counts.cumsum(-1)
        right = total[:, nodes, None, None] - left
        n_right = sizes[nodes, None, None] - n_left
        w_left, w_right = node_weight(left, criterion), node_weight(right, criterion)
        scores = split_scores(left, right, w_left, w_right, criterion)
        # the next non-empty bin of the node: the right side of a split after bin b
        bins = torch.arange(counts.shape[2], device=node.device)
        first_present = torch.where(present, bins, counts.shape[2])
        after = torch.flip(torch.cummin(torch.flip(first_present, [-1]), -1).values, [-1])
        nxt = torch.cat([after[..., 1:], torch.full_like(after[..., :1], counts.shape[2])], -1)
        nxt_c = nxt.clamp(max=counts.shape[2] - 1)
        low = torch.gather(self.low.expand(len(nodes), -1, -1), 2, nxt_c)
        high = self.high.expand(len(nodes), -1, -1)
        allowed = present & (nxt < counts.shape[2]) & (low > high + FEATURE_THRESHOLD)
        allowed &= (n_left >= rules.min_samples_leaf) & (n_right >= rules.min_samples_leaf)
        allowed &= (w_left >= rules.min_weight_leaf) & (w_right >= rules.min_weight_leaf)
        allowed &= is_open[nodes, None, None] & (ranks < counts.shape[1])[:, :, None]
        scores = torch.where(allowed, scores, float("-inf")).flatten(1)
        tie = (ranks[:, :, None] * counts.shape[2] + bins).flatten(1)
        best = scores.max(1, keepdim=True).values
        tie = torch.where(
            (scores == best) & (best > float("-inf")), tie, torch.iinfo(torch.int64).max
        )
        choice = tie.argmin(1)
        has = torch.gather(scores, 1, choice[:, None])[:, 0] > float("-inf")
        choice, nodes = choice[has], nodes[has]
        f, b = choice // counts.shape[2], choice % counts.shape[2]
        local = nodes - first
        a = take(self.high.reshape(-1), f * counts.shape[2] + b).double()
        c = low[local, f, b].double()
        t = a / 2 + c / 2
        threshold = torch.where((t == c) | t.isinf(), a, t)
        return nodes, f, threshold, left[:, local, f, b]
