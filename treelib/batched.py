"""Growing many trees at once: the tree is one more batch dimension.

Introduced in Chapter 7 (``notebooks/07_fast_trees``). A forest's trees grown
one after the other pay the level loop's Python overhead once per level *of
each tree*. Here the trees of a batch share one level loop: a "sample" is one
sample of one tree (its bootstrap count becomes its weight, samples a tree does
not draw are left out), a level holds the nodes of every tree, numbered tree
after tree, and each root has its own key, so every node draws the features it
would draw in a tree grown alone. The split search, the tie rule and the
stopping rules are the builders' own (:func:`treelib.levelwise.grow_levels`):
a forest grown batched equals the forest grown tree by tree.
"""

from inspect import signature

import torch
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils import check_random_state

from ._validation import check_criterion
from .criteria import node_sums, node_weight, target_stats
from .hist import HistogramSearch
from .levelwise import ExactSearch, assemble_trees, grow_levels
from .node_random import root_key
from .tree import one_cpu_thread

BATCH_ELEMENTS = 2**21  # (tree, sample, feature) triples per batch of the exact search
HIST_BATCH_SAMPLES = 2**20  # (tree, sample) pairs per batch of the histogram search
GPU_BATCH_SCALE = 64  # on a GPU, batches 64 times larger (a forest of 100 trees in one)
# batches handed back as they are grown (the progress bar moves); joblib before 1.3
# (scikit-learn 1.6 accepts 1.2) hands them back all at the end
AS_DONE = {"return_as": "generator"} if "return_as" in signature(Parallel).parameters else {}


def trees_per_batch(n_samples, n_features, histogram=False, device="cpu"):
    """How many trees to grow side by side, so that memory stays bounded.

    Introduced in Chapter 7. The exact search keeps every feature's sorted
    samples: a batch holds at most ``BATCH_ELEMENTS`` (tree, sample, feature)
    triples. The histogram search keeps one byte per feature and sample (the
    bin code) and the rest per sample: a batch holds at most
    ``HIST_BATCH_SAMPLES`` (tree, sample) pairs (at 100,000 rows, ten trees:
    as fast as twenty, with half the memory). On a GPU the caps are
    ``GPU_BATCH_SCALE`` times larger: a level's operations cost about the
    same for many more elements, and 100 trees of 100,000 rows in one batch
    grew 1.3 (histograms) and 2.5 (exact) times faster than in batches of
    the CPU's size (``benchmarks/results/fast_fit_cuda.csv``).

    Parameters
    ----------
    n_samples, n_features : int
        The shape of the training set.
    histogram : bool
        For the histogram search.
    device : str or torch.device
        Where the trees grow.

    Returns
    -------
    int
        At least one; about ``BATCH_ELEMENTS / (n_samples * n_features)``
        (``HIST_BATCH_SAMPLES / n_samples`` for the histogram search), times
        ``GPU_BATCH_SCALE`` on a GPU.
    """
    scale = 1 if torch.device(device).type == "cpu" else GPU_BATCH_SCALE
    if histogram:
        return max(1, scale * HIST_BATCH_SAMPLES // max(n_samples, 1))
    return max(1, scale * BATCH_ELEMENTS // max(n_samples * n_features, 1))


def grow_trees_batched(X, y, weights, criterion, rules, seeds, n_classes=None, bins=None):
    """Grow one tree per seed in one level loop; the same trees as one by one.

    Introduced in Chapter 7.

    Parameters
    ----------
    X : float32 tensor of shape (n_samples, n_features)
        The training set, on the device the trees grow on.
    y : tensor of shape (n_samples,)
        Encoded classes or real targets.
    weights : list of float64 tensors of shape (n_samples,)
        Each tree's sample weights (bootstrap counts times sample weights);
        samples of weight zero take no part in that tree.
    criterion : str
    rules : treelib.grow.StoppingRules
        Shared by every tree (so ``min_weight_leaf`` must not depend on the
        tree's total weight).
    seeds : list of int
        Each tree's seed, as :func:`treelib.levelwise.grow_tree_levelwise` takes it.
    n_classes : int or None
        For classification.
    bins : treelib.hist.Bins or None
        None: exact search; otherwise the histogram search on these bins.

    Returns
    -------
    list of treelib.tree_structure.Tree
    """
    device = X.device
    rows, stats, sizes = [], [], []
    for w in weights:
        w = w.to(device)
        keep = torch.nonzero(w > 0).squeeze(1)
        rows.append(keep)
        stats.append(target_stats(y, w, criterion, n_classes).index_select(1, keep))
        sizes.append(len(keep))
    rows, stats = torch.cat(rows), torch.cat(stats, 1)
    sizes = torch.tensor(sizes, device=device)
    bounds = torch.cumsum(sizes, 0).tolist()
    root_weight = torch.stack(  # summed as a tree grown alone sums them
        [node_weight(node_sums(stats[:, a:b]), criterion) for a, b in zip([0] + bounds, bounds)]
    )
    if bins is None:
        search = ExactSearch.for_trees(X, stats, rows, sizes)
    else:
        search = HistogramSearch(None, stats, criterion=criterion, bins=bins.select(rows))
    keys = torch.cat([root_key(seed, device) for seed in seeds])
    levels = grow_levels(stats, criterion, rules, keys, sizes, root_weight, search)
    return assemble_trees(levels, device)


def grow_batch(X, y, weights, criterion, rules, seeds, n_classes=None, bins=None):
    """:func:`grow_trees_batched` on one CPU thread: one job of :func:`fit_trees_batched`.

    Introduced in Chapter 7. A module-level function of tensors and plain
    objects, so that joblib can send it to another process or machine (its
    ``loky`` and Dask backends pickle it); it returns the trees' structures,
    which come back the same way.
    """
    with one_cpu_thread(X.device):
        return grow_trees_batched(X, y, weights, criterion, rules, seeds, n_classes, bins)


def batchable(tree, n_samples, n_features, missing=False):
    """The stopping rules if ``tree``'s settings can be grown batched, else None.

    Introduced in Chapter 7. Covered: the level-wise and histogram builders
    (NaN in X, categorical features and monotonic constraints included: ``missing``),
    without random splits (``splitter="random"``, the extra trees of
    Chapter 5, grown by the recursive builder), ``min_weight_fraction_leaf=0``
    (otherwise each tree's minimum leaf weight depends on its bootstrap
    total), no ``max_leaf_nodes``, no pruning, no class weights of the tree's
    own. Invalid
    settings also give None: the tree-by-tree path then raises their error.

    Parameters
    ----------
    tree : unfitted treelib decision tree
    n_samples, n_features : int
    missing : bool
        Does X hold NaN? (Every builder takes it since Chapter 7: ``_builder`` decides.)

    Returns
    -------
    treelib.grow.StoppingRules or None
    """
    if tree.min_weight_fraction_leaf != 0:
        return None
    if getattr(tree, "class_weight", None) is not None or getattr(tree, "ccp_alpha", 0.0) != 0:
        return None
    try:
        check_criterion(tree.criterion, tree._criteria)
        rules = tree._stopping_rules(n_samples, n_features, 1.0)
        tree._device()
    except (ValueError, TypeError):
        return None
    if tree._builder(missing=missing, rules=rules) not in ("levelwise", "hist"):
        return None
    return rules


def fit_trees_batched(trees, X, y, weight_of, bins=None, progress=None, n_jobs=None):
    """Fit unfitted trees, a batch at a time, as their ``_fit_tensors`` would.

    Introduced in Chapter 7. The trees share every parameter except
    ``random_state`` and already know ``classes_`` and ``n_features_in_``.

    Parameters
    ----------
    trees : list of treelib decision trees
    X : float32 tensor of shape (n_samples, n_features)
    y : tensor of shape (n_samples,)
    weight_of : callable
        ``weight_of(i)``: tree ``i``'s sample weights (float64 tensor).
    bins : treelib.hist.Bins or None
        ``X``'s bins, for ``tree_method="hist"``.
    progress : callable or None
        Called with the number of trees of each batch grown (a progress bar).
    n_jobs : int or None
        Jobs that grow batches side by side, each on one CPU core, through
        ``joblib.Parallel(n_jobs, prefer="threads")`` as scikit-learn's forests:
        threads, unless a joblib backend is active (``joblib.parallel_config``
        or ``parallel_backend``: ``"loky"`` processes, a Dask cluster), which
        is then used; None: one job, or the active backend's count. The number
        of batches is rounded up towards a multiple of the jobs, so that they
        get about the same work. The trees depend neither on it nor on the
        backend (each batch depends only on its trees' seeds and weights).
        On a GPU one thread grows the batches one after the other: threads
        launching kernels on one GPU only get in each other's way (a forest
        of 100 trees grew 3 times slower with 16 threads than with one).

    Returns
    -------
    bool
        False (nothing fitted) when :func:`batchable` says no.
    """
    first = trees[0]
    missing = X.isnan().any(1)  # (per row: a tree saw NaN if one of its rows has some)
    rules = batchable(first, *X.shape, missing=bool(missing.any()))
    if rules is None or (first.tree_method == "hist" and bins is None):
        return False
    criterion = check_criterion(first.criterion, first._criteria)
    n_classes = len(first.classes_) if first._is_classifier else None
    device = first._device()
    Xd, yd = X.to(device), y.to(device)
    bins = None if first.tree_method != "hist" else bins.to(device)
    n_trees = len(trees)
    n_jobs = n_jobs if device.type == "cpu" else 1
    n_parallel = effective_n_jobs(n_jobs)  # None: 1, or the active joblib backend's count
    n_batches = -(-n_trees // trees_per_batch(*X.shape, histogram=bins is not None, device=device))
    n_batches = -(-n_batches // n_parallel) * n_parallel  # towards a multiple of the jobs
    step = -(-n_trees // n_batches)
    starts = range(0, n_trees, step)

    saw_nan = {}  # per tree: NaN in its rows (export_text shows where NaN goes)

    def job(start):  # one batch of trees: its seeds and weights, drawn here
        batch = trees[start : start + step]
        seeds = [check_random_state(tree.random_state).randint(2**31) for tree in batch]
        weights = [weight_of(start + i) for i in range(len(batch))]
        for i, w in enumerate(weights):
            saw_nan[start + i] = bool((missing & (w > 0)).any())
        return delayed(grow_batch)(Xd, yd, weights, criterion, rules, seeds, n_classes, bins)

    # torch releases the GIL inside its operations: threads run side by side
    parallel = Parallel(n_jobs=n_jobs, prefer="threads", **AS_DONE)
    with one_cpu_thread(device):
        for start, grown in zip(starts, parallel(job(start) for start in starts)):
            batch = trees[start : start + step]
            for i, (tree, tree_) in enumerate(zip(batch, grown)):
                tree_.n_features = X.shape[1]
                tree.tree_, tree.max_features_, tree.n_outputs_ = tree_, rules.max_features, 1
                tree._missing_in_fit = saw_nan[start + i]
                if first._is_classifier:
                    tree.n_classes_ = n_classes
            if progress is not None:
                progress(len(batch))
    return True
