"""The built book as a reader's browser sees it (headless Chromium from Debian).

Needs ``make book`` first (``make test`` builds the book before the tests) and
``/usr/bin/chromium`` (``.ci/run`` and ``make browser-deps`` install it).
Every page: served from 127.0.0.1, HTTP 200, no JavaScript error but the known
harmless ones (see HARMLESS), MathJax rendered wherever there is math, every image
loaded, no request leaving 127.0.0.1; notebook pages: the Colab link is the
repository's Colab edition of the notebook (notebooks/colab/) on branch main;
pages with solutions: hidden until clicked.
With ``BOOK_SCREENSHOTS=1`` a full-page screenshot of each page goes to
``_build/screenshots/`` (to look at; about seven seconds per chapter, so not by default).

Accessibility (issue 18; ACCESSIBILITY.md): axe-core, bundled by the PyPI package
axe-playwright-python (never fetched from a CDN), runs the WCAG 2.1 A and AA rules
on every page in the light theme and its colour rules (contrast) in the dark theme,
where nothing but the colours changes; inside code blocks and text outputs the colour
rules check one element of each look (colour, font, background), not every token
(``MARK_CODE_SAMPLES``). A serious or critical violation
inside the book's own content (the page's ``article``) fails; those in the theme's
chrome (navigation, header, footer) are listed as warnings in the test output.
Every image in the content needs alt text that is not a file name, and every
internal link and ``#anchor`` must resolve.

``BOOK_HTML=/path/to/html`` tests a book built elsewhere
(``jupyter-book build . --path-output DIR`` puts it in ``DIR/_build/html``).
"""

import functools
import html.parser
import http.server
import os
import re
import threading
import time
import warnings
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
SHOTS = HTML.parent / "screenshots" if os.environ.get("BOOK_SCREENSHOTS") else None
CHROMIUM = Path("/usr/bin/chromium")
# Known harmless console errors of Jupyter Book 1's theme: THEBE_JS_URL is declared
# twice on every page; a fresh browser profile has no stored light/dark mode, which
# the theme reports before falling back to "auto".
HARMLESS = ("THEBE_JS_URL", "Got invalid theme mode: . Resetting to auto.")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def book_pages():
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book in {HTML}: run `make book` first", pytrace=False)
    skip = ("_static", "_sources", "_images")
    return sorted(
        p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html") if p.parts[-2] not in skip
    )


def repository_url():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"].rstrip("/")


def expected_colab_link(page):
    """The Colab edition of the page's notebook: notebooks/colab/NN_topic.ipynb."""
    repo = urlparse(repository_url()).path.strip("/")
    notebook = page.removesuffix(".html").replace("notebooks/", "notebooks/colab/", 1) + ".ipynb"
    return f"https://colab.research.google.com/github/{repo}/blob/main/{notebook}"


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(QuietHandler, directory=str(HTML))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            "Chromium is missing: `apt-get install chromium` (make browser-deps)", pytrace=False
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def open_page(browser, server, page_path, theme=None):
    """Load a page, recording errors and blocking (and recording) outside requests.

    ``theme="dark"`` (or ``"light"``) is stored where the theme looks for the reader's
    choice before the page loads.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    if theme is not None:
        context.add_init_script(
            f"localStorage.setItem('mode', '{theme}'); localStorage.setItem('theme', '{theme}');"
        )
    page = context.new_page()
    record = {"errors": [], "outside": []}
    page.on("pageerror", lambda error: record["errors"].append(str(error)))
    page.on(
        "console",
        lambda msg: record["errors"].append(msg.text) if msg.type == "error" else None,
    )

    def route(request_route):
        if urlparse(request_route.request.url).hostname == "127.0.0.1":
            request_route.continue_()
        else:
            record["outside"].append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    pending = set()
    page.on("request", lambda request: pending.add(request))
    page.on("requestfinished", lambda request: pending.discard(request))
    page.on("requestfailed", lambda request: pending.discard(request))
    response = page.goto(f"{server}/{page_path}", wait_until="load")
    wait_until_quiet(page, pending)
    return context, page, response, record


def wait_until_quiet(page, pending, quiet_ms=500, timeout_s=60):
    """Wait until no request of the page has been in flight for ``quiet_ms``.

    Playwright's own "networkidle" event sometimes never fires on pages whose Vega
    figures render after the load (seen on about one load in three with every request
    finished), so the test keeps its own count of requests in flight. Interactive
    figures must also have been drawn.
    """
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    while time.monotonic() < deadline:
        if pending:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif (time.monotonic() - quiet_since) * 1000 >= quiet_ms:
            break
        page.wait_for_timeout(100)
    else:
        raise AssertionError(f"requests still in flight after {timeout_s} s: {pending}")
    page.wait_for_function(
        "() => [...document.querySelectorAll('div.tl-interactive')]"
        ".every(f => f.classList.contains('tl-is-live'))",
        timeout=timeout_s * 1000,
    )


@pytest.mark.parametrize("page_path", book_pages() if (HTML / "index.html").exists() else [""])
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


# --- accessibility (issue 18, ACCESSIBILITY.md) ------------------------------------

# The WCAG 2.0 and 2.1 rules, levels A and AA (what universities are asked to meet).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# The rules whose outcome depends on colours; the others see the same page in both
# themes, so the dark theme runs only these (axe-core takes seconds on a chapter).
AXE_COLOUR_RULES = ["color-contrast", "link-in-text-block"]
FAILING_IMPACTS = ("serious", "critical")
# The book's own content; everything else on a page is the theme's chrome.
CONTENT = "article.bd-article"
# Code blocks and text outputs (<pre>) hold thousands of highlighted tokens (14,000
# in Chapter 7), and axe-core's contrast rule spent most of a chapter's time on them
# (Chapter 7: 18.5 s on the whole page, 6.4 s without the <pre> blocks). A token's
# contrast depends only on its look: its colour, font
# and the background behind it. So inside <pre> the colour rules check one element
# per look (every <pre> element with text of its own, the <pre> itself included, is
# grouped by the key below; the first of each group is marked), and every other rule
# still sees every element.
MARK_CODE_SAMPLES = """() => {
  const seen = new Set();
  for (const pre of document.querySelectorAll('pre')) {
    for (const element of [pre, ...pre.querySelectorAll('*')]) {
      const text = [...element.childNodes].some(n => n.nodeType === 3 && n.data.trim());
      if (!text) continue;
      let background = 'rgba(0, 0, 0, 0)';
      for (let up = element; up && background === 'rgba(0, 0, 0, 0)'; up = up.parentElement)
        background = getComputedStyle(up).backgroundColor;
      const s = getComputedStyle(element);
      const key = [element.tagName, element.className, s.color, s.fontSize, s.fontWeight,
                   s.fontStyle, s.opacity, s.textShadow, background].join('|');
      if (!seen.has(key)) { seen.add(key); element.setAttribute('data-axe-sample', ''); }
    }
  }
  return seen.size;
}"""
COLOUR_CONTEXT = {"include": [["html"], ["[data-axe-sample]"]], "exclude": [["pre"]]}
RUN_AXE = """async ([context, options, content]) => {
  const results = await axe.run(context, {...options, resultTypes: ['violations']});
  const inContent = (target) => {
    const selector = target[target.length - 1];
    const element = document.querySelector(Array.isArray(selector) ? selector[0] : selector);
    return !!(element && element.closest(content));
  };
  return results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 200),
                              content: inContent(n.target)}))}));
}"""
# An alt text that is a file name or path, as Sphinx writes when a figure has none.
FILE_ALT = re.compile(r"(^|/)[^\s/]+\.(png|jpe?g|gif|svg|webp)$|^\.\.?/|_images/", re.I)


def axe_script():
    from axe_playwright_python.base import AXE_FILE_PATH

    return AXE_FILE_PATH.read_text()


def run_axe(page, theme):
    """axe-core's WCAG 2.1 A/AA violations, each node marked ``content`` or not.

    The colour rules run on the page less its ``<pre>`` blocks, plus one sample of
    each look inside them (``MARK_CODE_SAMPLES``); in the light theme every other
    rule runs on the whole page.
    """
    page.evaluate(axe_script())
    assert page.evaluate(MARK_CODE_SAMPLES) > 0 or page.locator("pre").count() == 0
    colour = {"runOnly": {"type": "rule", "values": AXE_COLOUR_RULES}}
    violations = page.evaluate(RUN_AXE, [COLOUR_CONTEXT, colour, CONTENT])
    if theme == "light":
        others = {
            "runOnly": {"type": "tag", "values": AXE_TAGS},
            "rules": {rule: {"enabled": False} for rule in AXE_COLOUR_RULES},
        }
        violations += page.evaluate(RUN_AXE, [{"include": [["html"]]}, others, CONTENT])
    return violations


def describe(violation, nodes):
    where = "; ".join(f"{n['target']}: {n['html'][:120]}" for n in nodes[:3])
    more = f" (+{len(nodes) - 3} more)" if len(nodes) > 3 else ""
    name = f"{violation['id']} ({violation['impact']}, {len(nodes)}x)"
    return f"{name}: {violation['help']}: {where}{more}"


def bad_alt_texts(page):
    """Images in the content with no alt text, or a file name as alt text."""
    images = page.evaluate(
        f"() => Array.from(document.querySelectorAll('{CONTENT} img'))"
        ".map(i => [i.getAttribute('src'), i.getAttribute('alt')])"
    )
    return [
        f"{src}: alt={alt!r}"
        for src, alt in images
        if alt is None or not alt.strip() or FILE_ALT.search(alt.strip())
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("page_path", book_pages() if (HTML / "index.html").exists() else [""])
def test_page_is_accessible(browser, server, page_path, theme):
    """axe-core finds no serious or critical violation in the content; images have alt text."""
    assert page_path in book_pages()
    context, page, response, _ = open_page(browser, server, page_path, theme=theme)
    try:
        assert response.status == 200
        assert page.evaluate("() => document.documentElement.dataset.theme") == theme
        if page.evaluate("() => !!(window.MathJax && MathJax.startup)"):
            page.evaluate("() => MathJax.startup.promise")  # axe checks typeset math too
        violations = run_axe(page, theme)
        bad_alts = bad_alt_texts(page)
    finally:
        context.close()
    content, chrome = [], []
    for violation in violations:
        nodes = [n for n in violation["nodes"] if n["content"]]
        if nodes and violation["impact"] in FAILING_IMPACTS:
            content.append(describe(violation, nodes))
        others = [n for n in violation["nodes"] if not n["content"]]
        if others:
            chrome.append(describe(violation, others))
    if chrome:  # the theme's, not ours to fix here: listed, not failed on
        message = f"theme chrome, {theme} theme, {page_path}: " + " | ".join(chrome)
        warnings.warn(message, stacklevel=1)
    problems = [f"{theme} theme, axe-core: {v}" for v in content]
    problems += [f"image without real alt text: {a}" for a in bad_alts]
    assert problems == [], f"{page_path}:\n" + "\n".join(problems)


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


@pytest.mark.parametrize(
    "page_path", interactive_pages() if (HTML / "index.html").exists() else [""]
)
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
