"""Grade one learner's function on hidden cases, in a fresh Python process.

Shipped in every autograder zip that ``make assignments`` writes, and run by its
hidden tests (never imported into the learner's kernel):

    TREELIB_CASE_SEED_OFFSET=1000 python hidden_grader.py gini < function.dill

reads the learner's function (pickled by value with ``dill``), runs the book's
checker for that exercise (``treelib.exercises.CHECKERS``) on random cases drawn
from seeds moved by the offset, which only the teacher's zip knows, and prints
one line ``OUTCOMES [[passed, what happened, hint], ...]``: one entry per case.

Being a fresh process, it sees none of what the learner's notebook changed
(``CHECKERS``, ``abs``, ``np.allclose``, the checkers themselves). As in the
learner's own check cell, treelib's implementation of the exercise raises while the
learner's function runs (``treelib.exercises._framework.from_scratch``), so a
from-scratch exercise answered with treelib's code fails every case.
"""

import contextlib
import io
import json
import sys

import dill


def outcomes(name, fn):
    """``[(passed, what happened, hint)]`` for every case of the exercise's checker."""
    from treelib.exercises import CHECKERS
    from treelib.exercises._framework import record_outcomes

    with record_outcomes() as recorded, contextlib.redirect_stdout(io.StringIO()):
        CHECKERS[name](fn)
    return recorded


def main():
    name = sys.argv[1]
    fn = dill.loads(sys.stdin.buffer.read())
    print("OUTCOMES " + json.dumps(outcomes(name, fn)))


if __name__ == "__main__":
    main()
