/* Label in Name (WCAG 2.5.3, level A): a control's accessible name contains the
   text it shows, so that a speech-input user can press it by saying what they see
   (issue 36; axe-core 4.14's label-content-name-mismatch rule, which
   tests/test_accessibility.py runs). Jupyter Book adds every .js file in _static/
   to every page. The toggles of folded notebook cells are fixed in the HTML itself
   (_ext/accessible_html.py); these two buttons come from the theme's templates.

   - The search button shows "Search" and the shortcut "Ctrl+K" but is labelled
     "Search": without the label it is named by what it shows.
   - The colour-mode button shows the icon of the current mode, titled "Light",
     "Dark" or "System Settings", but is labelled "Color mode": its label names the
     mode too ("Color mode: Dark"), and follows it when the button changes it. */
(() => {
  const MODES = { light: "Light", dark: "Dark", auto: "System Settings" };

  const nameSearchButtons = () => {
    for (const button of document.querySelectorAll("button.search-button__button[aria-label]")) {
      button.removeAttribute("aria-label");
    }
  };

  const nameModeButtons = () => {
    const mode = document.documentElement.dataset.mode || "auto";
    for (const button of document.querySelectorAll("button.theme-switch-button")) {
      button.dataset.label ??= button.getAttribute("aria-label") || "Color mode";
      // the icon is an <i title> until Font Awesome swaps it for an <svg> with a <title>
      const icon = button.querySelector(`.theme-switch[data-mode="${mode}"]`);
      const shown =
        icon?.getAttribute("title") || icon?.querySelector("title")?.textContent || MODES[mode];
      button.setAttribute("aria-label", `${button.dataset.label}: ${shown || mode}`);
    }
  };

  const start = () => {
    nameSearchButtons();
    nameModeButtons();
    new MutationObserver(nameModeButtons).observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-mode"],
    });
  };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
