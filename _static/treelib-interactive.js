/* Draws the book's interactive figures (treelib/interactive.py) with Vega-Embed.
   Each figure is a div.tl-interactive holding a still image, the Vega-Lite spec and
   one sentence per frame. Where Vega-Embed is loaded (_static/vega/vega-bundle.js,
   served by the book itself), the live chart replaces the still on screen; its
   slider is Vega's native <input type="range">; the current frame's sentence goes
   to the slider's aria-valuetext and to the figure's aria-live paragraph. Where it
   is not (print, a blocked script), the still stays. */
(function () {
  "use strict";

  function json(figure, selector) {
    return JSON.parse(figure.querySelector(selector).textContent);
  }

  function draw(figure) {
    var spec = json(figure, "script.tl-spec");
    var sentences = json(figure, "script.tl-frames");
    var param = figure.dataset.param;
    var live = figure.querySelector(".tl-live");
    var text = figure.querySelector(".tl-description");
    var still = figure.querySelector(".tl-still");
    var options = {actions: false, renderer: "svg", mode: "vega-lite"};
    return window.vegaEmbed(live, spec, options).then(function (result) {
      var slider = live.querySelector('input[type="range"]');
      function describe(value) {
        var sentence = sentences[Math.round(Number(value))] || "";
        text.textContent = sentence;
        if (slider) slider.setAttribute("aria-valuetext", sentence);
      }
      var svg = live.querySelector("svg");
      if (svg && still) svg.setAttribute("aria-label", still.getAttribute("alt"));
      describe(result.view.signal(param));
      result.view.addSignalListener(param, function (name, value) { describe(value); });
      figure.classList.add("tl-is-live");
    });
  }

  function start() {
    if (typeof window.vegaEmbed !== "function") return;
    document.querySelectorAll("div.tl-interactive").forEach(function (figure) {
      draw(figure).catch(function (error) {
        figure.classList.remove("tl-is-live");
        console.warn("interactive figure kept its still:", error);
      });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
