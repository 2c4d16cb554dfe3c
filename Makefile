# Build and test "Decision Trees from Scratch in PyTorch".
#
# On a fresh clone with only Python 3:
#   make book   # builds the HTML book into _build/html
#   make test   # lint + unit tests + notebook tests + strict book build
# Both create the virtualenv .venv and install the pinned toolchain first.

VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# Directories to lint: the package, tests and notebooks, plus helper scripts if present.
LINT_DIRS := $(wildcard treelib tests notebooks benchmarks scripts _ext)

# Notebook tests re-run every chapter and compare each cell's text output with
# the output stored in the notebook (strict nbval, not --nbval-lax).
# MPLBACKEND is deliberately NOT set here: the kernel must use the inline
# backend the notebooks were executed with, or figure outputs would differ.
NBVAL_FLAGS := --nbval --nbval-current-env \
               --nbval-sanitize-with tests/nbval_sanitize.cfg \
               -p no:cacheprovider

.DEFAULT_GOAL := help
.PHONY: help setup book lint browser-deps axe-core test-unit test-notebooks test-all test test-colab clean distclean \
        student-notebooks colab-notebooks book-no-solutions pdf assignments grade sklearn-suite \
        sklearn-suite-hgb

help:
	@echo "make book            build the book into _build/html (uses stored notebook outputs)"
	@echo "make test            lint, strict book build, unit tests, notebook tests"
	@echo "make lint            ruff check + ruff format --check"
	@echo "make test-unit       pytest tests"
	@echo "make test-notebooks  re-run the notebooks and compare outputs (nbval)"
	@echo "make test-all        both in one run, as make test runs them"
	@echo "make test-colab      run every chapter alone on Colab's package versions + the wheel"
	@echo "make student-notebooks  regenerate notebooks/student/ (chapters without solutions)"
	@echo "make colab-notebooks  regenerate notebooks/colab/ (the Colab edition, plain Markdown)"
	@echo "make book-no-solutions  build the book without solutions into _build/html-no-solutions"
	@echo "make pdf             the whole book as one PDF: _build/pdf/trees-from-scratch.pdf"
	@echo "make assignments     otter-grader assignments of every chapter: _build/assignments/"
	@echo "make grade ASSIGNMENT=NN_topic SUBMISSIONS=DIR   grade a class: DIR/grades.csv, DIR/feedback/"
	@echo "make sklearn-suite   scikit-learn's own tree/forest/AdaBoost tests on treelib (BUILDERS=...)"
	@echo "make sklearn-suite-hgb  scikit-learn's own HistGradientBoosting tests on treelib"
	@echo "make setup           create .venv and install the pinned toolchain"
	@echo "make axe-core        install the pinned axe-core (npm) for the accessibility tests"
	@echo "make clean           remove build output and caches (keeps .venv)"
	@echo "make distclean       clean, and remove .venv too"

# --- environment ---------------------------------------------------------------

# Re-install whenever the pins or the package metadata change.
$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -r requirements.txt
	$(PY) -m pip install -e . --no-deps
	touch $@

setup: $(STAMP)

# --- book ------------------------------------------------------------------------

# Notebooks are NOT executed here (execute_notebooks: "off" in _config.yml): the
# book shows the outputs committed with each notebook; test-notebooks checks them.
# Old output is removed and --all rebuilds every page, so that _build/html holds
# exactly the pages in _toc.yml and warnings of unchanged pages are reported too;
# -W -n --keep-going turns every warning (and broken reference) into a failure.
book: $(STAMP)
	rm -rf _build/html
	$(VENV)/bin/jupyter-book build . --all -W -n --keep-going
	@if [ -f $(PDF) ]; then cp $(PDF) _build/html/; echo "Copied $(PDF) (from the last make pdf)"; fi
	@echo "Book: open _build/html/index.html"

# The whole book as one PDF (scripts/make_pdf.py): each page of _toc.yml printed from
# the built HTML by Debian's Chromium, after a title and contents page. Copied into
# _build/html/ so that the published site carries it at the address book/index.md
# links to; `make book` copies the last one back after rebuilding _build/html.
PDF := _build/pdf/trees-from-scratch.pdf
pdf: book browser-deps
	$(PY) scripts/make_pdf.py _build/html -o $(PDF)
	cp $(PDF) _build/html/

# The book with every solution removed (sphinx-exercise's hide_solutions, plus the
# gated solutions), for teachers to publish during a course; see book/teaching.md.
book-no-solutions: $(STAMP)
	$(PY) scripts/book_no_solutions.py _build/html-no-solutions

# notebooks/student/: each chapter without solutions, exercise bodies stubbed.
# Run after changing a chapter; tests/test_student_notebooks.py checks they match.
student-notebooks: $(STAMP)
	$(PY) scripts/make_student_notebooks.py

# notebooks/colab/: the chapters with their MyST markup written out as plain Markdown
# (glued numbers, exercise headings, solutions in <details> or gathered at the end,
# folded code as Colab forms), which is what the Colab buttons open. The student
# notebooks are written in the same plain Markdown by make student-notebooks.
# tests/test_colab_notebooks.py checks they match.
colab-notebooks: student-notebooks
	$(PY) scripts/make_colab_notebooks.py

# Graded assignments (book/teaching.md): for each chapter an otter-grader assign source from
# its exercises and scripts/assignments/NN_topic.yml, then `otter assign`: the student
# notebook, the teachers' edition and the autograder zip under _build/assignments/NN_topic/.
# The hidden cases' seeds are moved by a number drawn on the first run and kept in
# _build/assignments/hidden-seed (or HIDDEN_SEED=N): keep it, and _build/assignments/source/,
# to yourself.
assignments: $(STAMP)
	$(PY) scripts/make_assignments.py $(if $(HIDDEN_SEED),--seed-offset $(HIDDEN_SEED))

# Grade every notebook under SUBMISSIONS (a file or a folder per student) with otter run:
# SUBMISSIONS/grades.csv and SUBMISSIONS/feedback/STUDENT.txt. TIMEOUT=N: seconds a whole
# notebook may run (default 1200).
grade: $(STAMP)
	@test -n "$(ASSIGNMENT)" -a -n "$(SUBMISSIONS)" || \
	  { echo "usage: make grade ASSIGNMENT=05_random_forest SUBMISSIONS=path/to/folder"; exit 2; }
	@test -d _build/assignments/$(ASSIGNMENT)/autograder || $(MAKE) assignments
	$(PY) scripts/grade.py $(ASSIGNMENT) $(SUBMISSIONS) $(if $(TIMEOUT),--timeout $(TIMEOUT))

# --- checks ------------------------------------------------------------------------

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINT_DIRS)
	$(VENV)/bin/ruff format --check $(LINT_DIRS)

# Two workers, one test file each at a time (--dist loadfile keeps a file's module
# fixtures, such as the browser and its server, in one worker): the browser tests,
# about half of the time, run beside the others.
test-unit: $(STAMP) $(AXE)
	MPLBACKEND=Agg $(PY) -m pytest tests -q -n 2 --dist loadfile

# Two workers, one notebook each at a time (--dist loadfile: a notebook's cells run in
# order in one kernel).
test-notebooks: $(STAMP)
	$(PY) -m pytest $(NBVAL_FLAGS) -n 2 --dist loadfile notebooks/[0-9]*.ipynb

# tests/test_browser.py, test_accessibility.py and test_pdf.py drive Debian's Chromium (never a browser
# downloaded by a test tool); test_pdf.py reads the PDF's text with pdftotext
# (poppler-utils). Installed here when missing and we are root with apt (CI, dev boxes).
browser-deps:
	@test -x /usr/bin/chromium -a -x /usr/bin/pdftotext || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium poppler-utils; \
	  else \
	    echo "The browser and PDF tests need Debian's chromium and poppler-utils:" \
	      "sudo apt-get install chromium poppler-utils"; exit 1; \
	  fi; }

# axe-core for the accessibility tests (tests/browser_common.py injects it into each
# page): the release pinned in tests/axe/package.json, from the npm registry, checked
# against the hash in tests/axe/package-lock.json (npm ci). npm is Debian's package,
# installed here when missing and we are root with apt, as the browser is. npm dates
# the files it unpacks 1985: touch, so that make sees the install as newer than the pins.
AXE := tests/axe/node_modules/axe-core/axe.min.js
$(AXE): tests/axe/package.json tests/axe/package-lock.json
	@command -v npm >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm; \
	  else \
	    echo "The accessibility tests need npm to install axe-core: sudo apt-get install npm"; exit 1; \
	  fi; }
	npm ci --prefix tests/axe --ignore-scripts --no-audit --no-fund
	touch $@

axe-core: $(AXE)

# The unit, browser and notebook tests in one pytest run: two workers, one test file
# or notebook each at a time, the longest first (tests/conftest.py orders them), so
# that neither worker waits for the other's last file.
test-all: $(STAMP) $(AXE)
	$(PY) -m pytest tests $(NBVAL_FLAGS) notebooks/[0-9]*.ipynb -q -n 2 --dist loadfile \
	  --no-loadscope-reorder

# The book is built before the tests (the browser tests open it) so that the run
# ends with pytest's summary line.
test: setup lint book browser-deps axe-core test-all

# Every chapter executed from a fresh virtualenv holding only what Colab brings, at
# Colab's versions (tests/colab_versions.txt, not requirements.txt), plus our wheel
# installed with --no-deps, each notebook alone in an empty folder (several minutes).
test-colab: $(STAMP)
	$(PY) tests/colab_like.py

# scikit-learn's own test files for trees, forests, AdaBoost and monotonic trees, run on
# treelib's estimators, once per builder (benchmarks/README.md, "scikit-learn's own
# tests"): benchmarks/results/sklearn_suite*.{csv,txt}. Not part of make test (minutes).
# BUILDERS="hist" runs one builder only.
BUILDERS ?= recursive levelwise hist
sklearn-suite: $(STAMP)
	$(PY) benchmarks/sklearn_suite/run.py --builder $(BUILDERS)

# scikit-learn's own HistGradientBoosting tests (test_gradient_boosting.py,
# test_monotonic_constraints.py, test_warm_start.py), run once on treelib's
# HistGradientBoosting*: benchmarks/results/sklearn_suite_hgb*.{csv,txt}.
sklearn-suite-hgb: $(STAMP)
	$(PY) benchmarks/sklearn_suite/run.py --suite hgb

# --- housekeeping ------------------------------------------------------------------

clean:
	rm -rf _build .pytest_cache .ruff_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) *.egg-info
