"""Accessibility of the built book (issue 18; ACCESSIBILITY.md), in headless Chromium.

axe-core (the npm release pinned in tests/axe/package.json, installed by ``make
axe-core``; injected from that file, never fetched from a CDN) runs the WCAG 2.1 A
and AA rules on every page, loaded once in the dark theme:
the rules that do not depend on colours once, then the colour rules (contrast) in
the light and in the dark theme, switched with the theme's own button. Inside code
blocks and text outputs the colour rules check one element of each look (colour,
font, background), not every token (``MARK_CODE_SAMPLES``, ``PRUNE_CODE``). A serious or
critical violation inside the book's own content (the page's ``article``) fails;
those in the theme's chrome (navigation, header, footer) are listed as warnings in
the test output. Every image in the content needs alt text that is not a file name.
Controls are named by the text they show (WCAG 2.5.3 Label in Name, which axe-core
checks since 4.14): ``test_controls_are_named_by_what_they_show`` fails on it in the
theme's chrome too.
Internal links and anchors: tests/test_browser.py. The server, the browser and the
page loading are tests/browser_common.py's.
"""

import re
import warnings

import pytest
from browser_common import (
    AXE_TAGS,
    FAILING_IMPACTS,
    axe_script,
    axe_version,
    book_pages,
    describe,
    open_page,
    page_paths,
)

# The rules whose outcome depends on colours; the others see the same page in both
# themes, so they run once, and the colour rules run in each theme.
AXE_COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# The book's own content; everything else on a page is the theme's chrome.
CONTENT = "article.bd-article"
# Code blocks and text outputs (<pre>) hold thousands of highlighted tokens (14,000
# in Chapter 7), and axe-core's contrast rule spent most of a chapter's time on them
# (Chapter 7: 18.5 s on the whole page, 6.4 s without the <pre> blocks). A token's
# contrast depends only on its look: its colour, font and the background behind it.
# So before the colour rules run, one element per look is kept inside each <pre>:
# every <pre> element with text of its own, the <pre> itself included, is grouped by
# the key below, in each theme, and the one with the most text of each group is
# marked (axe-core skips a text of one character); PRUNE_CODE takes the others out
# of the page. The colour rules then check the whole page, each look of code once.
# Every other rule runs before that, on every element.
MARK_CODE_SAMPLES = """() => {
  const best = new Map();
  for (const pre of document.querySelectorAll('pre')) {
    for (const element of [pre, ...pre.querySelectorAll('*')]) {
      const text = [...element.childNodes].filter(n => n.nodeType === 3)
        .map(n => n.data.trim()).join('').length;
      if (!text) continue;
      let background = 'rgba(0, 0, 0, 0)';
      for (let up = element; up && background === 'rgba(0, 0, 0, 0)'; up = up.parentElement)
        background = getComputedStyle(up).backgroundColor;
      const s = getComputedStyle(element);
      const key = [element.tagName, element.className, s.color, s.fontSize, s.fontWeight,
                   s.fontStyle, s.opacity, s.textShadow, background].join('|');
      if (!best.has(key) || text > best.get(key)[1]) best.set(key, [element, text]);
    }
  }
  for (const [element] of best.values()) element.setAttribute('data-axe-sample', '');
  return best.size;
}"""
# Inside each <pre>, remove every element that is neither a sample nor holds one (a
# sample keeps its own text, its ancestors, and so the background behind it).
PRUNE_CODE = """() => {
  const keep = new Set();
  for (const sample of document.querySelectorAll('[data-axe-sample]'))
    for (let e = sample; e && !keep.has(e); e = e.parentElement) keep.add(e);
  for (const pre of document.querySelectorAll('pre')) {
    const stack = [pre];
    while (stack.length) {
      for (const child of [...stack.pop().children]) {
        if (keep.has(child)) stack.push(child); else child.remove();
      }
    }
  }
}"""
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
WHOLE_PAGE = {"include": [["html"]]}
THEME = "() => document.documentElement.dataset.theme"
# An alt text that is a file name or path, as Sphinx writes when a figure has none.
FILE_ALT = re.compile(r"(^|/)[^\s/]+\.(png|jpe?g|gif|svg|webp)$|^\.\.?/|_images/", re.I)


def switch_theme(page, theme):
    """Switch to ``theme`` with the theme's own button, as a reader does."""
    for _ in range(3):  # the button cycles through auto, light and dark
        if page.evaluate(THEME) == theme:
            return
        page.locator("button.theme-switch-button").first.click()
        # colours change with CSS transitions: measure them once they have ended
        page.wait_for_function(
            "() => document.getAnimations().every(a => a.playState !== 'running')"
        )
    raise AssertionError(f"the theme button never switched to the {theme} theme")


def run_axe(page):
    """axe-core's WCAG 2.1 A/AA violations in the dark theme, then in the light one.

    The page is loaded in the dark theme (a reader's stored choice). Every rule but
    the colour rules runs on the whole page, once; then the colour rules run in
    each theme on the page less the code tokens ``PRUNE_CODE`` takes out. Returns
    ``{theme: violations}``, each node marked ``content`` or not.
    """
    page.evaluate(axe_script())
    others = {
        "runOnly": {"type": "tag", "values": AXE_TAGS},
        "rules": {rule: {"enabled": False} for rule in AXE_COLOUR_RULES},
    }
    violations = {"light": [], "dark": page.evaluate(RUN_AXE, [WHOLE_PAGE, others, CONTENT])}
    looks = {}
    for theme in ("dark", "light"):
        switch_theme(page, theme)
        looks[theme] = page.evaluate(MARK_CODE_SAMPLES)
    has_code = page.locator("pre").count() > 0
    assert (min(looks.values()) > 0) == has_code
    page.evaluate(PRUNE_CODE)
    colour = {"runOnly": {"type": "rule", "values": AXE_COLOUR_RULES}}
    for theme in ("light", "dark"):
        switch_theme(page, theme)
        violations[theme] += page.evaluate(RUN_AXE, [WHOLE_PAGE, colour, CONTENT])
    return violations


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


@pytest.mark.parametrize("page_path", page_paths())
def test_page_is_accessible(browser, server, page_path):
    """axe-core finds no serious or critical violation in the content, in either theme;
    images have alt text."""
    assert page_path in book_pages()
    context, page, response, _ = open_page(browser, server, page_path, theme="dark")
    try:
        assert response.status == 200
        assert page.evaluate(THEME) == "dark"
        if page.evaluate("() => !!(window.MathJax && MathJax.startup)"):
            page.evaluate("() => MathJax.startup.promise")  # axe checks typeset math too
        bad_alts = bad_alt_texts(page)
        violations = run_axe(page)
    finally:
        context.close()
    problems = [f"image without real alt text: {a}" for a in bad_alts]
    for theme, found in violations.items():
        content, chrome = [], []
        for violation in found:
            nodes = [n for n in violation["nodes"] if n["content"]]
            if nodes and violation["impact"] in FAILING_IMPACTS:
                content.append(describe(violation, nodes))
            others = [n for n in violation["nodes"] if not n["content"]]
            if others:
                chrome.append(describe(violation, others))
        if chrome:  # the theme's, not ours to fix here: listed, not failed on
            message = f"theme chrome, {theme} theme, {page_path}: " + " | ".join(chrome)
            warnings.warn(message, stacklevel=1)
        problems += [f"{theme} theme, axe-core: {v}" for v in content]
    assert problems == [], f"{page_path}:\n" + "\n".join(problems)


# A chapter with folded cells (hide-input and hide-output) and the theme's buttons.
LABEL_IN_NAME_PAGE = "notebooks/01_decision_stump.html"


def test_controls_are_named_by_what_they_show(browser, server):
    """Label in Name (WCAG 2.5.3, level A): no control's accessible name leaves out the
    text it shows, in the content or the theme's chrome: the folded cells' toggles
    (myst-nb labelled them "Toggle hidden content"), the search button ("Search
    Ctrl+K", labelled "Search") and the colour-mode button (its mode's icon, titled
    "Dark", labelled "Color mode"), whose name follows the mode it switches to."""
    context, page, response, _ = open_page(browser, server, LABEL_IN_NAME_PAGE, theme="dark")
    try:
        assert response.status == 200
        page.evaluate(axe_script())
        assert page.evaluate("() => axe.version") == axe_version()
        rule = "label-content-name-mismatch"
        assert rule in page.evaluate("(tags) => axe.getRules(tags).map(r => r.ruleId)", AXE_TAGS)
        only = {"runOnly": {"type": "rule", "values": [rule]}}
        found = page.evaluate(RUN_AXE, [WHOLE_PAGE, only, CONTENT])
        assert found == [], [describe(v, v["nodes"]) for v in found]
        session = context.new_cdp_session(page)
        names = [
            (node["role"]["value"], node.get("name", {}).get("value", ""))
            for node in session.send("Accessibility.getFullAXTree")["nodes"]
            if node.get("role", {}).get("value") in ("button", "DisclosureTriangle")
        ]
        assert ("button", "Color mode: Dark") in names
        assert any(role == "button" and name.startswith("Search Ctrl") for role, name in names)
        toggles = [name for role, name in names if role == "DisclosureTriangle"]
        assert "Show code cell source" in toggles and "Toggle hidden content" not in toggles
        summary = page.locator("details.hide.above-input > summary").first
        summary.click()
        assert summary.aria_snapshot() == "- paragraph: Hide code cell source"
        button = page.locator("button.theme-switch-button").first
        for _ in range(3):  # the button cycles through the modes: its name follows
            button.click()
            mode = page.evaluate("() => document.documentElement.dataset.mode")
            title = {"light": "Light", "dark": "Dark", "auto": "System Settings"}[mode]
            assert button.get_attribute("aria-label") == f"Color mode: {title}"
    finally:
        context.close()
