"""What a school checks before adopting the book (issue 18): licences, citation, URL.

The published address is decided in one place, ``html.baseurl`` in _config.yml, and
the repository in ``repository.url``; README.md, CITATION.cff and the front page
(book/index.md) must follow them. CITATION.cff must pass ``cffconvert --validate``.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import treelib

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
BOOK_URL = CONFIG["html"]["baseurl"]
REPO_URL = CONFIG["repository"]["url"]
CITATION = yaml.safe_load((ROOT / "CITATION.cff").read_text())
PYPROJECT = (ROOT / "pyproject.toml").read_text()


def pyproject_value(key):
    return re.search(rf'^{key} = "([^"]+)"$', PYPROJECT, re.M)[1]


def cffconvert():
    """The cffconvert script of this environment (requirements.txt pins it)."""
    script = Path(sys.executable).parent / "cffconvert"
    found = str(script) if script.exists() else shutil.which("cffconvert")
    if found is None:
        pytest.fail("cffconvert is missing: `make setup` installs requirements.txt")
    return found


def test_citation_cff_is_valid():
    result = subprocess.run(
        [cffconvert(), "--validate", "-i", str(ROOT / "CITATION.cff")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "valid" in result.stdout


def test_citation_cff_follows_the_config_and_the_package():
    assert BOOK_URL.startswith("https://") and BOOK_URL.endswith("/")
    assert CITATION["url"] == BOOK_URL
    assert CITATION["repository-code"] == REPO_URL
    assert CITATION["title"] == CONFIG["title"]
    assert [author["name"] for author in CITATION["authors"]] == [CONFIG["author"]]
    assert str(CITATION["version"]) == pyproject_value("version") == treelib.__version__
    assert CITATION["license"] == "CC-BY-4.0"


def test_readme_and_front_page_name_the_published_url_and_how_to_cite():
    readme = (ROOT / "README.md").read_text()
    first_screen = readme.split("\n## ", 1)[0]
    assert BOOK_URL in first_screen
    assert "CC BY 4.0" in first_screen and "MIT" in first_screen
    assert "How to cite" in first_screen and "CITATION.cff" in first_screen
    index = (ROOT / "book" / "index.md").read_text()
    assert "\n## How to cite this book\n" in index
    bibtex = re.search(r"```bibtex\n(.*?)```", index, re.S)[1]
    assert BOOK_URL in bibtex and REPO_URL in bibtex
    assert f"version      = {{{treelib.__version__}}}" in bibtex
    assert str(CITATION["date-released"])[:4] in bibtex
    # Every other mention of a github.io address is the published one.
    for text in (readme, index):
        assert set(re.findall(r"https://[\w.-]+\.github\.io/[\w./-]*", text)) <= {BOOK_URL}


def test_licences_are_stated_everywhere():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    text_licence = (ROOT / "LICENSE-text").read_text()
    assert "Creative Commons Attribution 4.0 International" in text_licence
    assert "https://creativecommons.org/licenses/by/4.0/legalcode" in text_licence
    assert pyproject_value("license") == "MIT AND CC-BY-4.0"
    assert 'license-files = ["LICENSE", "LICENSE-text"]' in PYPROJECT
    footer = CONFIG["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "MIT" in footer


def test_changelog_and_contributing_guide():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "\n## Errata\n" in changelog
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert "treelib.show_versions()" in contributing
    assert "make test" in contributing
    assert "Adding a chapter" in contributing
    assert "\n## Adding a chapter\n" in (ROOT / "README.md").read_text()
