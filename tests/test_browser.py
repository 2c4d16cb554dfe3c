"""The built book as a reader's browser sees it (headless Chromium from Debian).

Every page: served from 127.0.0.1, HTTP 200, no JavaScript error but the known
harmless ones (see HARMLESS), MathJax rendered wherever there is math, every image
loaded, no request leaving 127.0.0.1; notebook pages: the Colab link is the
repository's Colab edition of the notebook (notebooks/colab/) on branch main;
pages with solutions: hidden until clicked. Every internal link and ``#anchor``
must resolve, and every interactive figure's slider moves with the keyboard.
With ``BOOK_SCREENSHOTS=1`` a full-page screenshot of each page goes to
``_build/screenshots/`` (to look at; about seven seconds per chapter, so not by default).

Accessibility (axe-core, alt texts): tests/test_accessibility.py. The server, the
browser and the page loading are tests/browser_common.py's (needs ``make book``
first and ``/usr/bin/chromium``; ``BOOK_HTML`` tests a book built elsewhere).
"""

import html.parser
import os
import re
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest
import yaml
from browser_common import (
    AXE_TAGS,
    FAILING_IMPACTS,
    HARMLESS,
    HTML,
    ROOT,
    axe_script,
    book_pages,
    describe,
    open_page,
    page_paths,
)

SHOTS = HTML.parent / "screenshots" if os.environ.get("BOOK_SCREENSHOTS") else None


def repository_url():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"].rstrip("/")


def expected_colab_link(page):
    """The Colab edition of the page's notebook: notebooks/colab/NN_topic.ipynb."""
    repo = urlparse(repository_url()).path.strip("/")
    notebook = page.removesuffix(".html").replace("notebooks/", "notebooks/colab/", 1) + ".ipynb"
    return f"https://colab.research.google.com/github/{repo}/blob/main/{notebook}"


@pytest.mark.parametrize("page_path", page_paths())
def test_page_as_a_reader_sees_it(browser, server, page_path):
    pages = book_pages()
    assert page_path in pages
    source = (HTML / page_path).read_text()
    context, page, response, record = open_page(browser, server, page_path)
    try:
        assert response.status == 200
        if 'class="math' in source:
            page.wait_for_function("() => window.MathJax && window.MathJax.startup", timeout=20000)
            page.evaluate("() => MathJax.startup.promise")
            assert page.locator("mjx-container").count() > 0, "math was not typeset"
            assert page.locator("mjx-merror").count() == 0, "MathJax reported an error"
        broken = page.evaluate(
            "() => Array.from(document.images)"
            ".filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        )
        assert broken == [], f"images that did not load: {broken}"
        if page_path.startswith("notebooks/"):
            links = page.locator('a[href*="colab.research.google.com"]')
            hrefs = {links.nth(i).get_attribute("href") for i in range(links.count())}
            assert hrefs == {expected_colab_link(page_path)}
        if page.locator("div.solution").count():
            check_solution_toggle(page)
        if SHOTS is not None:
            SHOTS.mkdir(parents=True, exist_ok=True)
            shot = SHOTS / (page_path.replace("/", "__") + ".png")
            page.screenshot(path=str(shot), full_page=True)
        errors = [e for e in record["errors"] if not any(h in e for h in HARMLESS)]
        assert errors == [], f"JavaScript errors: {errors}"
        assert record["outside"] == [], f"requests leaving 127.0.0.1: {record['outside']}"
    finally:
        context.close()


def check_solution_toggle(page):
    """A solution's body is hidden until its toggle button is clicked."""
    solution = page.locator("div.solution").first
    body = solution.locator(":scope > :not(.admonition-title)").first
    assert not body.is_visible(), "a solution is visible before its toggle is clicked"
    solution.locator("button.toggle-button").first.click()
    body.wait_for(state="visible", timeout=5000)


def test_config_and_notebooks_agree_on_the_repository():
    """The one repository URL (in _config.yml) is the one every Colab setup cell installs."""
    url = repository_url()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        urls = set(re.findall(r"git\+(https://github\.com/[\w.-]+/[\w.-]+)", notebook.read_text()))
        assert urls == {url}, f"{notebook.name} installs from {urls}, _config.yml says {url}"


class LinkParser(html.parser.HTMLParser):
    """Collects a page's ids (link targets) and the hrefs of its links."""

    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def parse_page(path):
    parser = LinkParser()
    parser.feed(path.read_text())
    return parser


def broken_internal_links(pages):
    """``page: href`` for every internal link whose file or #anchor does not exist."""
    parsed = {page: parse_page(HTML / page) for page in pages}
    broken = []
    for page, parser in parsed.items():
        base = f"http://book.invalid/{page}"
        for href in parser.hrefs:
            url = urljoin(base, href)
            if urlparse(url).hostname != "book.invalid":
                continue  # external, mailto:, javascript: ...
            target, fragment = urldefrag(url)
            target = unquote(urlparse(target).path).lstrip("/") or "index.html"
            if target.endswith("/"):
                target += "index.html"
            if not (HTML / target).is_file():
                broken.append(f"{page}: {href} (no file {target})")
            elif fragment and target.endswith(".html"):
                ids = parsed[target].ids if target in parsed else parse_page(HTML / target).ids
                if unquote(fragment) not in ids:
                    broken.append(f"{page}: {href} (no #{fragment} in {target})")
    return broken


def test_every_internal_link_and_anchor_resolves():
    broken = broken_internal_links(book_pages())
    assert broken == [], f"{len(broken)} broken internal links:\n" + "\n".join(broken)


# --- interactive figures (issue 19, treelib/interactive.py) -------------------------

INTERACTIVE = 'class="tl-interactive"'
RUN_AXE_IN_FIGURES = """async ([runOnly]) => {
  const results = await axe.run({include: [['div.tl-interactive']]},
                                {runOnly, resultTypes: ['violations']});
  return results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200)}))}));
}"""


# Chromium asks for /favicon.ico, which the book has not, some time after the page has
# loaded (outside Playwright's routing); a page watched as long as this one sees the 404.
# Everything the figures need has loaded once they are live (tl-is-live).
FAVICON = ("Failed to load resource: the server responded with a status of 404",)


def interactive_pages():
    """The pages that show an interactive figure."""
    return [p for p in book_pages() if INTERACTIVE in (HTML / p).read_text()]


def figure_state(figure):
    """What a reader sees and hears: the drawn chart, the sentence, the slider."""
    slider = figure.locator('input[type="range"]')
    return {
        "chart": figure.locator(".tl-live svg").first.inner_html(),
        "text": figure.locator(".tl-description").inner_text(),
        "valuetext": slider.get_attribute("aria-valuetext"),
        "value": slider.input_value(),
    }


def check_slider_moves(page, figure):
    """ArrowRight (ArrowLeft from the last frame), End and Home change the chart, the
    live text and aria-valuetext."""
    slider = figure.locator('input[type="range"]')
    assert slider.count() == 1, "one native range input per figure"
    start = figure_state(figure)
    assert start["text"] and start["valuetext"] == start["text"]
    assert not figure.locator(".tl-still").is_visible(), "the still stays over the live figure"
    slider.focus()
    seen = [start]
    at_max = start["value"] == slider.get_attribute("max")  # e.g. a forest shown in full
    keys = ("ArrowLeft", "Home", "End") if at_max else ("ArrowRight", "End", "Home")
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(150)  # Vega redraws on its next animation frame
        state = figure_state(figure)
        assert state["valuetext"] == state["text"]
        for field in ("chart", "text", "value"):
            assert state[field] != seen[-1][field], f"{key} did not change the {field}"
        seen.append(state)
    ends = {key: state["value"] for key, state in zip(keys, seen[1:])}
    assert (ends["End"], ends["Home"]) == (slider.get_attribute("max"), slider.get_attribute("min"))


@pytest.mark.parametrize("page_path", page_paths(interactive_pages))
def test_interactive_figures_move_with_the_keyboard(browser, server, page_path):
    """Each slider moves by keyboard; nothing leaves the machine; axe passes inside figures."""
    context, page, response, record = open_page(browser, server, page_path)
    try:
        assert response.status == 200
        figures = page.locator("div.tl-interactive")
        count = figures.count()
        assert count >= 1
        page.wait_for_function(
            f"() => document.querySelectorAll('div.tl-interactive.tl-is-live').length === {count}",
            timeout=20000,
        )
        for index in range(count):
            check_slider_moves(page, figures.nth(index))
        page.evaluate(axe_script())
        run_only = {"type": "tag", "values": AXE_TAGS}
        violations = page.evaluate(RUN_AXE_IN_FIGURES, [run_only])
        errors = [e for e in record["errors"] if not any(h in e for h in HARMLESS + FAVICON)]
    finally:
        context.close()
    serious = [describe(v, v["nodes"]) for v in violations if v["impact"] in FAILING_IMPACTS]
    assert serious == [], f"axe-core inside the interactive figures: {serious}"
    assert errors == [], f"JavaScript errors: {errors}"
    assert record["outside"] == [], f"requests leaving 127.0.0.1: {record['outside']}"


def test_runtime_is_loaded_deferred_and_only_where_needed():
    pages = book_pages()
    with_figures = set(interactive_pages())
    assert with_figures, "no page has an interactive figure"
    for page_path in pages:
        source = (HTML / page_path).read_text()
        scripts = re.findall(r"<script[^>]*vega-bundle\.js[^>]*>", source)
        if page_path in with_figures:
            assert len(scripts) == 1 and "defer" in scripts[0], page_path
        else:
            assert scripts == [], f"{page_path} loads the Vega runtime without a figure"
