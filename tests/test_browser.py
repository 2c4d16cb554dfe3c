"""The built book as a reader's browser sees it (headless Chromium from Debian).

Needs ``make book`` first (``make test`` builds the book before the tests) and
``/usr/bin/chromium`` (``.ci/run`` and ``make browser-deps`` install it).
Every page: served from 127.0.0.1, HTTP 200, no JavaScript error but the known
harmless ones (see HARMLESS), MathJax rendered wherever there is math, every image
loaded, no request leaving 127.0.0.1; notebook pages: the Colab link is the
repository's notebook on branch main; pages with solutions: hidden until clicked.
A full-page screenshot of each page goes to ``_build/screenshots/``.
"""

import functools
import http.server
import re
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
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
        pytest.fail("no built book in _build/html: run `make book` first", pytrace=False)
    skip = ("_static", "_sources", "_images")
    return sorted(
        p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html") if p.parts[-2] not in skip
    )


def repository_url():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["repository"]["url"].rstrip("/")


def expected_colab_link(page):
    repo = urlparse(repository_url()).path.strip("/")
    notebook = page.removesuffix(".html") + ".ipynb"
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


def open_page(browser, server, page_path):
    """Load a page, recording errors and blocking (and recording) outside requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
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
    response = page.goto(f"{server}/{page_path}", wait_until="load")
    page.wait_for_load_state("networkidle")
    return context, page, response, record


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
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / (page_path.replace("/", "__") + ".png")), full_page=True)
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
