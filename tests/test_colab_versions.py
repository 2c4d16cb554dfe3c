"""pyproject.toml accepts Colab's package versions (tests/colab_versions.txt).

In Colab the setup cell installs the book from git; a dependency whose lower bound
rose above Colab's version would make pip upgrade Colab's own package (or fail),
while ``make test-colab``, which installs Colab's versions, would no longer show
what a learner runs. These tests keep the two files consistent.
"""

import re
from pathlib import Path

import pytest
from colab_like import COLAB_PACKAGES, KERNEL_PACKAGES, VERSIONS, canonical, colab_versions
from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def bound_problems(dependencies, versions):
    """Each dependency that Colab's version, or the version test-colab installs, fails.

    ``dependencies`` are requirement strings as in pyproject.toml; ``versions`` is
    ``{name: (installed, colab)}`` as read by ``colab_versions``.
    """
    problems = []
    for dependency in dependencies:
        requirement = Requirement(dependency)
        name = canonical(requirement.name)
        if name not in versions:
            problems.append(f"{dependency}: {name} is not in {VERSIONS.name}")
            continue
        installed, colab = versions[name]
        for what, version in (("Colab's", colab), ("test-colab's", installed)):
            if not requirement.specifier.contains(version, prereleases=True):
                problems.append(f"{dependency} excludes {what} {name}=={version}")
    return problems


@pytest.fixture(scope="module")
def versions():
    return colab_versions(VERSIONS.read_text())


def test_pyproject_accepts_colab_versions(versions):
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert bound_problems(pyproject["project"]["dependencies"], versions) == []


def test_bound_problems_catches_a_bound_above_colab():
    versions = {"scikit-learn": ("1.6.1", "1.6.1"), "torch": ("2.13.0", "2.11.0")}
    assert bound_problems(["scikit-learn>=1.6", "torch>=2.1"], versions) == []
    raised = ["scikit_learn>=1.7", "torch>=2.12", "torch<2.12", "seaborn"]
    assert bound_problems(raised, versions) == [
        "scikit_learn>=1.7 excludes Colab's scikit-learn==1.6.1",
        "scikit_learn>=1.7 excludes test-colab's scikit-learn==1.6.1",
        "torch>=2.12 excludes Colab's torch==2.11.0",
        "torch<2.12 excludes test-colab's torch==2.13.0",
        f"seaborn: seaborn is not in {VERSIONS.name}",
    ]


def test_colab_versions_reads_pins_and_overrides():
    text = "# a comment\n\nNumPy==2.1.3\ntorch==2.13.0  # colab: 2.11.0, the CPU wheel\n"
    assert colab_versions(text) == {"numpy": ("2.1.3", "2.1.3"), "torch": ("2.13.0", "2.11.0")}
    with pytest.raises(ValueError, match="name==version"):
        colab_versions("numpy>=2.1\n")


def test_colab_versions_lists_what_the_notebooks_need(versions):
    assert set(COLAB_PACKAGES + KERNEL_PACKAGES) <= set(versions)


def test_torch_override_is_the_book_toolchains_cpu_wheel(versions):
    """The one override: Colab's torch installs here only as a multi-GB CUDA build."""
    pins = dict(re.findall(r"^([\w-]+)==(\S+)", (ROOT / "requirements.txt").read_text(), re.M))
    assert versions["torch"][0] == pins["torch"]
    overridden = [name for name, (installed, colab) in versions.items() if installed != colab]
    assert overridden == ["torch"]


def test_colab_versions_says_when_and_where_it_was_read():
    text = VERSIONS.read_text()
    assert re.search(r"Read on \d{4}-\d{2}-\d{2} from https://github\.com/googlecolab/", text)
    assert "Refresh:" in text
