"""Run scikit-learn's own tree and ensemble tests on treelib's estimators.

    .venv/bin/python benchmarks/sklearn_suite/run.py [--builder recursive levelwise hist]
    .venv/bin/python benchmarks/sklearn_suite/run.py --suite hgb

Two suites. ``trees`` (the default): the four test files of trees, monotonic trees,
forests and AdaBoost, once per builder (``tree_method``). ``hgb``: the three test
files of HistGradientBoosting (``ensemble/_hist_gradient_boosting/tests/``
``test_gradient_boosting.py``, ``test_monotonic_constraints.py``,
``test_warm_start.py``), once, with treelib's estimators as they are (the builder
column reads ``default``).

For each builder it copies the suite's test files of the installed scikit-learn into
a temporary folder and runs pytest there with scikit-learn's conftest (its fixtures)
and substitute.py (treelib's estimators in place of scikit-learn's), then writes
(``PREFIX`` is ``sklearn_suite`` for the trees, ``sklearn_suite_hgb`` for hgb)

- benchmarks/results/PREFIX.csv: per builder and file, all items and the
  items in scope (all but those exclusions.txt lists), passed / failed / errors /
  skipped;
- benchmarks/results/PREFIX_failures.txt: every item that did not pass, with
  a one-line reason and its cause (causes.py), per builder;
- benchmarks/results/PREFIX_causes.txt: the items that did not pass, counted
  by cause, per builder.

Builders not run keep their rows (the files are updated, not rewritten).
See benchmarks/README.md, "scikit-learn's own tests".
"""

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import sklearn

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(HERE))
from causes import cause_of  # noqa: E402

SKLEARN = Path(sklearn.__file__).parent
SUITES = {
    "trees": {
        "files": [
            "tree/tests/test_tree.py",
            "tree/tests/test_monotonic_tree.py",
            "ensemble/tests/test_forest.py",
            "ensemble/tests/test_weight_boosting.py",
        ],
        "builders": ("recursive", "levelwise", "hist"),
        "prefix": "sklearn_suite",
    },
    "hgb": {
        "files": [
            "ensemble/_hist_gradient_boosting/tests/test_gradient_boosting.py",
            "ensemble/_hist_gradient_boosting/tests/test_monotonic_constraints.py",
            "ensemble/_hist_gradient_boosting/tests/test_warm_start.py",
        ],
        # HistGradientBoosting has no tree_method: one run, treelib's defaults
        "builders": ("default",),
        "prefix": "sklearn_suite_hgb",
    },
}
# the suite being run (main() sets it from --suite)
SUITE = "trees"
FILES = SUITES[SUITE]["files"]
BUILDERS = SUITES[SUITE]["builders"]
PREFIX = SUITES[SUITE]["prefix"]
UNTOUCHED = set()  # tests that made none of the suite's substituted estimators
FIELDS = ["builder", "file", "scope", "passed", "failed", "errors", "skipped", "total", "pass_rate"]


def read_exclusions():
    """{"file.py::test_function": reason} from exclusions.txt."""
    out = {}
    for line in (HERE / "exclusions.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            test, reason = line.split(None, 1)
            out[test] = reason
    return out


def run_pytest(builder, workdir, jobs, timeout, extra):
    """Run the copied files under pytest; return the JUnit XML path."""
    junit = workdir / f"junit-{builder}.xml"
    env = dict(os.environ)
    env["TREELIB_SUITE"] = SUITE
    if builder in SUITES["trees"]["builders"]:
        env["TREELIB_SUITE_BUILDER"] = builder
    env["TREELIB_SUITE_TIMEOUT"] = str(timeout)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    env.setdefault("OMP_NUM_THREADS", "1")  # two workers on two cores: one thread each
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "sklearn.conftest",  # global_random_seed, global_dtype, ...
        "-p",
        "substitute",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rN",
        "--tb=line",
        f"--junitxml={junit}",
        "-o",
        "junit_family=xunit1",
        "-o",
        "junit_logging=no",
        *([f"-n{jobs}"] if jobs > 1 else []),
        *extra,
        # the suite's files, unless the extra arguments name tests themselves
        *([] if any(".py" in a for a in extra) else [Path(f).name for f in FILES]),
    ]
    start = time.time()
    log = workdir / f"pytest-{builder}.log"
    with log.open("w") as fh:
        subprocess.run(cmd, cwd=workdir, env=env, check=False, stdout=fh, stderr=subprocess.STDOUT)
    last = log.read_text().strip().splitlines()[-1:]
    took = time.time() - start
    print(f"[{builder}] {' '.join(last)}; {took:.0f} s (pytest's output: {log})", flush=True)
    return junit


def parse_junit(path):
    """[(file, test id, outcome, message)] from pytest's JUnit XML."""
    items = []
    for case in ET.parse(path).getroot().iter("testcase"):
        file = case.get("classname").split(".")[0] + ".py"
        test_id = f"{file}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed", "error": "errors", "skipped": "skipped"}[tag]
                message = node.get("message") or (node.text or "").strip()
                if "fits failed" in message and node.text:
                    # cross-validation: the error of the fits is in the details
                    inner = re.findall(r"^\s*(\w+(?:Error|Exception): \S.*)$", node.text, re.M)
                    message = f"{inner[-1]} (all fits of a cross-validation)" if inner else message
                break
        message = " ".join(message.split())
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        if not props.get("estimators") and outcome != "skipped":
            UNTOUCHED.add(test_id.split("[")[0])
        items.append((file, test_id, outcome, message))
    return items


def counts(items):
    c = Counter(outcome for _, _, outcome, _ in items)
    row = {k: c.get(k, 0) for k in ("passed", "failed", "errors", "skipped")}
    row["total"] = len(items)
    ran = len(items) - row["skipped"]
    row["pass_rate"] = f"{row['passed'] / ran:.3f}" if ran else ""
    return row


def excluded(test_id, exclusions):
    return test_id.split("[")[0] in exclusions


def summarise(builder, items, exclusions):
    rows, lines = [], []
    files = [Path(f).name for f in FILES]
    for scope in ("all", "in_scope"):
        chosen = [it for it in items if scope == "all" or not excluded(it[1], exclusions)]
        for file in files + ["ALL"]:
            sub = [it for it in chosen if file in ("ALL", it[0])]
            rows.append({"builder": builder, "file": file, "scope": scope, **counts(sub)})
    causes = Counter()
    for _file, test_id, outcome, message in items:
        if outcome in ("failed", "errors"):
            scope = "excluded" if excluded(test_id, exclusions) else "in scope"
            cause = cause_of(message)
            if scope == "in scope":
                causes[cause] += 1
            lines.append(f"{builder}\t{test_id}\t{outcome}\t{scope}\t{cause}\t{message[:300]}")
    return rows, lines, causes


def update(path, builders, header, new_lines):
    """Keep the lines of other builders in a tab-separated or CSV text file."""
    kept = []
    if path.exists():
        for line in path.read_text().splitlines()[1:]:
            if line and line.split("\t" if "\t" in line else ",")[0] not in builders:
                kept.append(line)
    path.write_text("\n".join([header] + kept + new_lines) + "\n")


def reclassify(exclusions):
    """Rewrite the cause and scope columns of the failures file, and the causes file."""
    path = RESULTS / f"{PREFIX}_failures.txt"
    header, *lines = path.read_text().splitlines()
    out, causes = [], {}
    for line in lines:
        builder, test_id, outcome, _, _, message = line.split("\t", 5)
        scope = "excluded" if excluded(test_id, exclusions) else "in scope"
        cause = cause_of(message)
        if scope == "in scope":
            causes.setdefault(builder, Counter())[cause] += 1
        out.append("\t".join([builder, test_id, outcome, scope, cause, message]))
    path.write_text("\n".join([header] + out) + "\n")
    summary = [f"{b}\t{n}\t{c}" for b, cs in causes.items() for c, n in cs.most_common()]
    update(RESULTS / f"{PREFIX}_causes.txt", list(causes), "builder\titems\tcause", summary)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--suite",
        choices=list(SUITES),
        default="trees",
        help="trees: tree, forest, AdaBoost tests (per builder); hgb: HistGradientBoosting's",
    )
    parser.add_argument(
        "--builder",
        nargs="+",
        choices=[b for suite in SUITES.values() for b in suite["builders"]],
        help="builders to run (default: all of the suite's)",
    )
    parser.add_argument("--jobs", "-n", type=int, default=2, help="pytest-xdist workers")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--reclassify",
        action="store_true",
        help="only recompute the causes of the stored failures (after editing causes.py)",
    )
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    select_suite(args.suite)
    builders = args.builder or list(BUILDERS)
    wrong = [b for b in builders if b not in BUILDERS]
    if wrong:
        parser.error(f"--builder {' '.join(wrong)}: the {SUITE} suite has {', '.join(BUILDERS)}")

    exclusions = read_exclusions()
    if args.reclassify:
        return reclassify(exclusions)
    RESULTS.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="sklearn_suite_"))
    (workdir / "pytest.ini").write_text("[pytest]\n")  # rootdir here, no repository config
    for f in FILES:
        shutil.copy(SKLEARN / f, workdir / Path(f).name)
    for builder in builders:  # (each builder's results are written as soon as it ends)
        junit = run_pytest(builder, workdir, args.jobs, args.timeout, args.pytest_args)
        rows, lines, causes = summarise(builder, parse_junit(junit), exclusions)
        summary = [f"{builder}\t{n}\t{cause}" for cause, n in causes.most_common()]
        for row in rows:
            if row["file"] == "ALL":
                numbers = ", ".join(f"{k}={row[k]}" for k in FIELDS[3:])
                print(f"[{builder}] {row['scope']}: {numbers}")
        write_results([builder], rows, lines, summary)
    unlisted = sorted(UNTOUCHED - set(exclusions))
    if unlisted:
        print("These tests made no substituted estimator; exclude them in exclusions.txt?")
        print("\n".join("  " + t for t in unlisted))
    if not args.keep:
        shutil.rmtree(workdir)
    else:
        print(f"kept {workdir}")


def select_suite(name):
    """Make ``name`` the suite that the functions of this module run and write."""
    global SUITE, FILES, BUILDERS, PREFIX
    SUITE = name
    FILES = SUITES[name]["files"]
    BUILDERS = SUITES[name]["builders"]
    PREFIX = SUITES[name]["prefix"]


def write_results(builders, rows, lines, summary):
    """Replace the rows of ``builders`` in the three results files (the others stay)."""
    csv_path = RESULTS / f"{PREFIX}.csv"
    old = []
    if csv_path.exists():
        with csv_path.open() as fh:
            old = [r for r in csv.DictReader(fh) if r["builder"] not in builders]
    with csv_path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(sorted(old + rows, key=lambda r: BUILDERS.index(r["builder"])))
    update(
        RESULTS / f"{PREFIX}_failures.txt",
        builders,
        "builder\ttest\toutcome\tscope\tcause\tmessage",
        lines,
    )
    update(RESULTS / f"{PREFIX}_causes.txt", builders, "builder\titems\tcause", summary)


if __name__ == "__main__":
    main()
