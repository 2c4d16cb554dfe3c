"""The cause of a failing item, from its one-line message (first matching rule wins).

Used by run.py for the "cause" column of sklearn_suite_failures.txt and the counts of
sklearn_suite_causes.txt; `run.py --reclassify` applies changed rules to those files.
"""

import re

RULES = [
    (r"NotProvided: not provided by treelib: (.*)", r"estimator not provided by treelib: \1"),
    (r"TimeoutError", "timeout"),
    (r"unexpected keyword argument '(\w+)'", r"unknown parameter: \1"),
    (r"Input X contains (NaN|infinity)", "missing values (NaN) in X not supported"),
    (r"Sparse data was passed for X", "sparse X not supported"),
    (r"Sparse data was passed for y", "sparse y not supported"),
    # test_public_apply_sparse_trees: tree_.apply(csr_matrix) packs sparse rows
    (r"setting an array element with a sequence", "sparse X not supported (tree_.apply)"),
    # test_backend_respected: joblib.parallel_backend("testing") counted no task
    (r"MyBackend object", "n_jobs: fit does not use joblib's active backend"),
    (r"y should be a 1d array, got an array of shape", "multi-output y not supported"),
    (r"criterion must be one of \[.*\]; got '(\w+)'", r"criterion not supported: \1"),
    (r"criterion must be one of .*; got <", "criterion object (Cython Criterion) not supported"),
    (r"expected sklearn\.tree\._tree\.Tree, got Tree", "tree_ is not scikit-learn's Cython Tree"),
    (r"Regex pattern did not match", "error message wording"),
    (r"DID NOT RAISE", "no error raised where scikit-learn raises"),
    (r"DID NOT WARN.*?\(<class '(\w+)'>", r"no warning where scikit-learn warns: \1"),
    (r"has no attribute '(\w+)'", r"missing attribute: \1"),
]


def cause_of(message):
    for pattern, cause in RULES:
        found = re.search(pattern, message)
        if found:
            return found.expand(cause)
    # otherwise the exception type and message, numbers and quoted values blanked
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)
    text = re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?", "N", text)
    return "other: " + text[:100]
