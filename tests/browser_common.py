"""What the browser tests share: the built book, a local server, Debian's Chromium.

Used by tests/test_browser.py (every page as a reader sees it, interactive figures)
and tests/test_accessibility.py (axe-core in both themes, alt texts). Two files, so
that ``pytest -n 2 --dist loadfile`` runs them on both workers side by side; each
file starts its own server and browser (module fixtures, about a second).

Needs ``make book`` first (``make test`` builds the book before the tests),
``/usr/bin/chromium`` (``.ci/run`` and ``make browser-deps`` install it) and, for
axe-core, ``tests/axe/node_modules`` (``make axe-core``: npm installs the release
pinned in tests/axe/package.json and package-lock.json).
``BOOK_HTML=/path/to/html`` tests a book built elsewhere
(``jupyter-book build . --path-output DIR`` puts it in ``DIR/_build/html``).
"""

import functools
import http.server
import json
import os
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
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


def page_paths(select=book_pages):
    """``select()``, the built pages by default, for ``parametrize`` (one empty id when
    there is no build: the test then fails with ``book_pages``'s message)."""
    return select() if (HTML / "index.html").exists() else [""]


# The WCAG 2.0 and 2.1 rules, levels A and AA (what universities are asked to meet).
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
FAILING_IMPACTS = ("serious", "critical")


# axe-core from the npm registry, at the version pinned in tests/axe/package.json (its
# hash in package-lock.json), installed by `make axe-core`; injected into each page
# from this file, never from a CDN.
AXE_PACKAGE = ROOT / "tests" / "axe"
AXE_JS = AXE_PACKAGE / "node_modules" / "axe-core" / "axe.min.js"


def axe_version():
    """The axe-core release that tests/axe/package.json pins."""
    return json.loads((AXE_PACKAGE / "package.json").read_text())["dependencies"]["axe-core"]


@functools.cache
def axe_script():
    if not AXE_JS.exists():
        pytest.fail(f"{AXE_JS} is missing: run `make axe-core` (npm ci)", pytrace=False)
    script = AXE_JS.read_text()
    header = f"/*! axe v{axe_version()}\n"
    if not script.startswith(header):
        pytest.fail(f"{AXE_JS} is not axe-core {axe_version()}: run `make axe-core`", pytrace=False)
    return script


def describe(violation, nodes):
    where = "; ".join(f"{n['target']}: {n['html'][:120]}" for n in nodes[:3])
    more = f" (+{len(nodes) - 3} more)" if len(nodes) > 3 else ""
    name = f"{violation['id']} ({violation['impact']}, {len(nodes)}x)"
    return f"{name}: {violation['help']}: {where}{more}"
