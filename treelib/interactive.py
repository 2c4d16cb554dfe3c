"""Figures a reader can move: a slider over frames that treelib computes in Python.

Introduced in Chapter 1 (``notebooks/01_decision_stump``, the stump's threshold).

Every figure here is a Vega-Lite chart built with Altair. All of its frames are
computed by treelib before the chart is drawn, and one integer parameter, the
frame, picks the frame to show. The parameter is bound to a native
``<input type="range">`` (``alt.binding_range``), so the slider works with the
mouse and the keyboard (arrow keys, Home, End) with no hand-written slider code.

**Why Altair, not plotly.** Measured on a prototype (issue 19): plotly's own
slider cannot be reached with the keyboard, its notebook output is not rendered
by myst-nb, and its renderers load plotly.js and MathJax from CDNs with a random
element id per call. Altair's bound parameter is a native range input, its
output is byte-identical across runs, and vl-convert renders a PNG still without
a browser. Colab renders Altair charts by itself.

**What a cell shows** (:class:`InteractiveFigure`):

- a still image (PNG, the most instructive frame) with alt text, inside the HTML,
  so that it shows wherever the script is missing: a stored notebook on GitHub or
  in Jupyter before running, print and the PDF, a browser that blocks scripts;
- the chart's Vega-Lite spec and one sentence per frame, which the book's script
  ``_static/treelib-interactive.js`` draws with Vega-Embed. The sentence of the
  current frame is shown in an ``aria-live`` region and given to the slider as
  ``aria-valuetext``, so a screen reader hears what changed;
- in Google Colab, the live Altair chart itself.

The book serves the Vega runtime (``_static/vega/vega-bundle.js``, vendored from
vl-convert; licences in ``_static/vega/LICENSE.txt``) with ``defer``, only on
pages that have such a figure (``_ext/interactive_figures.py``); nothing is
loaded from the network. Element ids come from the figure's name, and the spec
is serialised with sorted keys, so that re-running a notebook gives the same
bytes (the notebook tests compare them).
"""

import base64
import html
import json
import sys

import numpy as np
import torch

from .criteria import gini, target_stats
from .rules import distinct, midpoints
from .stump import DecisionStump

PARAM = "frame"
WIDTH = 300
VL_VERSION = "5.20"  # Altair 5.5's Vega-Lite; the bundle in _static matches it
FONT = "Liberation Sans"  # bundled by vl-convert: the still does not depend on system fonts


def _altair():
    """Altair, imported when a figure is made (treelib itself does not need it)."""
    try:
        import altair as alt
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError("interactive figures need Altair: pip install altair") from error
    return alt


def _live_only():
    """True in Colab, and where vl-convert (which renders the still) is not installed.

    There the cell shows Altair's own live chart: Colab and JupyterLab render it.
    """
    if "google.colab" in sys.modules:
        return True
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        return True
    return False


def frame_slider(n_frames, label, start):
    """The frame parameter, bound to a native range input from 0 to ``n_frames - 1``.

    Introduced in Chapter 1.
    """
    alt = _altair()
    if not 0 <= start < n_frames:
        raise ValueError(f"start={start} is not a frame of 0..{n_frames - 1}")
    binding = alt.binding_range(min=0, max=n_frames - 1, step=1, name=label)
    return alt.param(name=PARAM, value=int(start), bind=binding)


def _png(spec, colours=64):
    """The still: vl-convert's PNG of the spec (its parameter at the start frame).

    Reduced to a palette of ``colours`` colours, which keeps a figure's still at a
    few tens of kilobytes in the notebook.
    """
    import io

    import vl_convert
    from PIL import Image

    png = vl_convert.vegalite_to_png(spec, vl_version=VL_VERSION, scale=2)
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colours, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def _spec_json(spec):
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


class InteractiveFigure:
    """A chart with a frame slider, its still image and one sentence per frame.

    Introduced in Chapter 1. Display it as a cell's last expression: Jupyter and
    the book show the HTML (still, then the live figure where the script runs),
    Colab shows the live Altair chart. Its plain text is the current frame's
    sentence.

    Parameters
    ----------
    chart : altair.TopLevelMixin
        A chart whose data and marks depend on the parameter ``frame``.
    name : str
        The figure's name, ``fig-N-topic``: the element ids derive from it.
    descriptions : list of str
        One sentence per frame, what the frame shows in words.
    alt : str
        Alt text of the still image.
    """

    def __init__(self, chart, name, descriptions, alt):
        self.chart, self.name, self.alt = chart, name, alt
        self.descriptions = list(descriptions)
        self.spec = chart.to_dict()
        self.start = self._start_frame()
        self._still = None

    def _start_frame(self):
        params = [p for p in self.spec.get("params", []) if p.get("name") == PARAM]
        if len(params) != 1:
            raise ValueError(f"the chart needs exactly one top-level parameter {PARAM!r}")
        binding = params[0]["bind"]
        if binding["max"] != len(self.descriptions) - 1:
            raise ValueError("one description per frame of the slider is needed")
        return params[0]["value"]

    @property
    def still(self):
        """The still image, PNG bytes (rendered once)."""
        if self._still is None:
            self._still = _png(self.spec)
        return self._still

    def to_html(self):
        """The HTML the book shows: still, live region, spec and sentences."""
        png = base64.b64encode(self.still).decode("ascii")
        ident = html.escape(self.name)
        text = html.escape(self.descriptions[self.start])
        return (
            f'<div class="tl-interactive" id="tl-{ident}" data-param="{PARAM}">\n'
            f'<img class="tl-still" alt="{html.escape(self.alt)}" '
            f'src="data:image/png;base64,{png}">\n'
            f'<div class="tl-live" id="tl-{ident}-live"></div>\n'
            f'<p class="tl-description" id="tl-{ident}-text" aria-live="polite">{text}</p>\n'
            f'<script type="application/json" class="tl-spec">{_escape_script(self.spec)}'
            "</script>\n"
            f'<script type="application/json" class="tl-frames">'
            f"{_escape_script(self.descriptions)}</script>\n"
            "</div>"
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        if _live_only():
            return self.chart._repr_mimebundle_(include, exclude)
        return {
            "text/html": self.to_html(),
            "image/png": base64.b64encode(self.still).decode("ascii"),
            "text/plain": self.descriptions[self.start],
        }

    def __repr__(self):
        return self.descriptions[self.start]


def _escape_script(value):
    """JSON that cannot close its ``<script>`` element."""
    return _spec_json(value).replace("</", "<\\/")


def _records(frame):
    """A pandas frame as JSON-ready records with plain Python numbers."""
    return json.loads(frame.to_json(orient="records", double_precision=6))


# --- Chapter 1: the stump's threshold ------------------------------------------------


def threshold_frames(x, y):
    """Every candidate threshold of one feature with its children and weighted Gini.

    Introduced in Chapter 1. The candidates are the stump's: midpoints between
    consecutive distinct values (treelib's rule). Returns a pandas DataFrame with
    one row per candidate: ``threshold``, the class counts ``left_k`` and
    ``right_k`` of each child and ``impurity``, the weighted Gini impurity
    ``n_L/n G(t_L) + n_R/n G(t_R)`` computed with :func:`treelib.gini`.
    """
    import pandas as pd

    x = torch.as_tensor(np.asarray(x, dtype=np.float64))
    y_codes, y = np.unique(np.asarray(y), return_inverse=True)
    y = torch.as_tensor(y)
    n_classes = len(y_codes)
    order = torch.argsort(x, stable=True)
    x_sorted = x[order]
    stats = target_stats(y[order], torch.ones(len(y), dtype=torch.float64), "gini", n_classes)
    left = stats.double().cumsum(1)[:, :-1]  # (n_classes, n - 1)
    right = stats.double().sum(1, keepdim=True) - left
    between = distinct(x_sorted[:-1].float(), x_sorted[1:].float())  # the rule of treelib.rules
    left, right = left[:, between], right[:, between]
    n = float(len(y))
    impurity = (left.sum(0) * gini(left) + right.sum(0) * gini(right)) / n
    thresholds = midpoints(x_sorted[:-1][between], x_sorted[1:][between])
    frame = pd.DataFrame({"threshold": thresholds.numpy(), "impurity": impurity.numpy()})
    for k in range(n_classes):
        frame[f"left_{k}"] = left[k].numpy().astype(int)
        frame[f"right_{k}"] = right[k].numpy().astype(int)
    return frame


def stump_threshold_figure(x, y, feature, class_names, name, alt_text):
    """Slide the stump's threshold along one feature; Chapter 1's interactive figure.

    Introduced in Chapter 1. Top: the class histogram of the feature with the
    threshold as a rule. Middle: both children's class counts. Bottom: the
    weighted Gini impurity of every candidate threshold, the current one as a
    point and the best one (``DecisionStump``'s) marked. The figure starts at the
    best threshold.

    Parameters
    ----------
    x : array-like of shape (n_samples,)
        The feature.
    y : array-like of shape (n_samples,)
        Class labels.
    feature : str
        The feature's name, for the axis and the sentences.
    class_names : list of str
        One name per class, in sorted label order.
    name, alt_text : str
        The figure's name (``fig-1-...``) and its alt text.

    Returns
    -------
    InteractiveFigure
    """
    alt = _altair()
    import pandas as pd

    x = np.asarray(x, dtype=np.float64)
    frames = threshold_frames(x, y)
    stump = DecisionStump().fit(x[:, None], y)
    best = int(np.argmin(np.abs(frames["threshold"].to_numpy() - stump.threshold_)))
    frames["frame"] = np.arange(len(frames))
    slider = frame_slider(len(frames), f"Threshold on {feature}", best)
    current = f"datum.frame === {PARAM}"

    labels = np.unique(np.asarray(y), return_inverse=True)[1]
    points = pd.DataFrame({"value": x, "class": np.asarray(class_names)[labels]})
    colour = alt.Color("class:N", title="class", scale=alt.Scale(scheme="tableau10"))
    histogram = (
        alt.Chart(alt.Data(values=_records(points)))
        .mark_bar(opacity=0.7)
        .encode(
            alt.X("value:Q", bin=alt.Bin(maxbins=30), title=feature),
            alt.Y("count():Q", stack=None, title="samples"),
            colour,
        )
        .properties(width=WIDTH, height=110)
    )
    frame_data = alt.Data(values=_records(frames))
    rule = (
        alt.Chart(frame_data)
        .mark_rule(color="black", strokeWidth=2)
        .encode(x="threshold:Q")
        .transform_filter(current)
    )
    children = _children_chart(alt, frame_data, class_names, current, colour)
    curve = _impurity_chart(alt, frame_data, feature, current, best)
    chart = (
        alt.vconcat(histogram + rule, children, curve)
        .add_params(slider)
        .properties(description=alt_text)
        .configure(font=FONT, background="white")  # readable in the dark theme too
        # Marks stay out of the accessibility tree: the chart has its description and the
        # live sentence; an empty mark layer (no stump on that axis) would be an unnamed image.
        .configure_mark(aria=False)
    )
    sentences = [
        _threshold_sentence(row, feature, class_names, row.Index == best)
        for row in frames.itertuples()
    ]
    return InteractiveFigure(chart, name, sentences, alt_text)


def _children_chart(alt, frame_data, class_names, current, colour):
    counts = [f"left_{k}" for k in range(len(class_names))]
    counts += [f"right_{k}" for k in range(len(class_names))]
    names = {f"{side}_{k}": c for k, c in enumerate(class_names) for side in ("left", "right")}
    return (
        alt.Chart(frame_data)
        .transform_filter(current)
        .transform_fold(counts, as_=["key", "count"])
        .transform_calculate(
            child="indexof(datum.key, 'left') === 0 ? 'left' : 'right'",
            **{"class": _class_lookup(names)},
        )
        .mark_bar()
        .encode(
            alt.X("count:Q", title="samples in the child"),
            alt.Y("child:N", title=None, sort=["left", "right"]),
            colour,
            tooltip=["child:N", "class:N", "count:Q"],
        )
        .properties(width=WIDTH, height=60)
    )


def _class_lookup(names):
    """A Vega expression mapping a folded key such as ``left_1`` to its class name."""
    expression = "''"
    for key, name in names.items():
        expression = f"datum.key === {json.dumps(key)} ? {json.dumps(name)} : ({expression})"
    return expression


def _impurity_chart(alt, frame_data, feature, current, best):
    base = alt.Chart(frame_data).encode(
        alt.X("threshold:Q", title=f"threshold on {feature}", scale=alt.Scale(zero=False)),
        alt.Y("impurity:Q", title="weighted Gini", scale=alt.Scale(zero=False)),
    )
    line = base.mark_line(color="#4c78a8")
    best_mark = base.mark_point(
        shape="diamond", size=120, color="#e45756", filled=True
    ).transform_filter(alt.datum.frame == best)
    point = base.mark_circle(size=90, color="black").transform_filter(current)
    return (line + best_mark + point).properties(width=WIDTH, height=130)


def _threshold_sentence(row, feature, class_names, is_best):
    def counts(side):
        return ", ".join(
            f"{int(getattr(row, f'{side}_{k}'))} {name}" for k, name in enumerate(class_names)
        )

    best = " This is the best threshold, the stump's." if is_best else ""
    return (
        f"Threshold {feature} <= {row.threshold:.4g}: left child {counts('left')}; "
        f"right child {counts('right')}; weighted Gini {row.impurity:.4f}.{best}"
    )


# --- decision regions on two features (Chapters 2, 5 and 6) -----------------------------


def region_grid(X, grid=40, margin=0.05):
    """A ``grid x grid`` lattice of cell centres over two features, row by row.

    Introduced in Chapter 2. Returns ``(points, extent)``: ``points`` of shape
    ``(grid * grid, 2)``, cell ``i`` at column ``i % grid`` and row ``i // grid``;
    ``extent = (x_min, x_max, y_min, y_max)``, the data's range widened by ``margin``.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"decision regions need exactly two features, got shape {X.shape}")
    low, high = X.min(0), X.max(0)
    pad = (high - low) * margin
    low, high = low - pad, high + pad
    step = (high - low) / grid
    centres = [low[j] + step[j] * (np.arange(grid) + 0.5) for j in range(2)]
    xx, yy = np.meshgrid(centres[0], centres[1])
    points = np.column_stack([xx.ravel(), yy.ravel()])
    return points, (float(low[0]), float(high[0]), float(low[1]), float(high[1]))


def _class_names_expression(class_names):
    return f"{json.dumps(list(class_names))}[datum.c]"


def _regions_layer(alt, codes, extent, grid, class_names, colour):
    """Shaded cells of the current frame: ``codes[f]`` holds the grid's class indices."""
    x0, x1, y0, y1 = extent
    dx, dy = (x1 - x0) / grid, (y1 - y0) / grid
    values = [{"frame": f, "c": [int(c) for c in cells]} for f, cells in enumerate(codes)]
    return (
        alt.Chart(alt.Data(values=values))
        .transform_filter(f"datum.frame === {PARAM}")
        .transform_flatten(["c"])
        .transform_window(cell="row_number()")
        .transform_calculate(
            x=f"{x0!r} + ((datum.cell - 1) % {grid}) * {dx!r}",
            x2=f"{x0!r} + ((datum.cell - 1) % {grid} + 1) * {dx!r}",
            y=f"{y0!r} + floor((datum.cell - 1) / {grid}) * {dy!r}",
            y2=f"{y0!r} + (floor((datum.cell - 1) / {grid}) + 1) * {dy!r}",
            **{"class": _class_names_expression(class_names)},
        )
        .mark_rect(opacity=0.25)
        .encode(
            alt.X("x:Q", scale=alt.Scale(domain=[x0, x1], nice=False, zero=False)),
            alt.X2("x2:Q"),
            alt.Y("y:Q", scale=alt.Scale(domain=[y0, y1], nice=False, zero=False)),
            alt.Y2("y2:Q"),
            colour,
        )
    )


def _points_layer(alt, X, y, class_names, feature_names, extent, colour, size=None):
    """The training points; ``size`` (frames x samples) makes their area follow a weight."""
    import pandas as pd

    names = np.asarray(class_names)[np.unique(np.asarray(y), return_inverse=True)[1]]
    points = pd.DataFrame({"x": X[:, 0], "y": X[:, 1], "class": names, "i": np.arange(len(X))})
    chart = alt.Chart(alt.Data(values=_records(points)))
    x0, x1, y0, y1 = extent
    encoding = {
        "x": alt.X(
            "x:Q", title=feature_names[0], scale=alt.Scale(domain=[x0, x1], nice=False, zero=False)
        ),
        "y": alt.Y(
            "y:Q", title=feature_names[1], scale=alt.Scale(domain=[y0, y1], nice=False, zero=False)
        ),
        "color": colour,
        "shape": alt.Shape("class:N", legend=None),
    }
    if size is None:
        return chart.mark_point(filled=True, size=30, opacity=0.8).encode(**encoding)
    weights = [{"frame": f, "w": [round(float(v), 3) for v in row]} for f, row in enumerate(size)]
    return (
        chart.transform_calculate(frame_key=PARAM)
        .transform_lookup(
            lookup="frame_key",
            from_=alt.LookupData(alt.Data(values=weights), key="frame", fields=["w"]),
        )
        .transform_calculate(weight="datum.w[datum.i]")  # sample i's weight in this frame
        .mark_point(filled=True, opacity=0.8)
        .encode(
            size=alt.Size("weight:Q", title="sample weight", scale=alt.Scale(range=[5, 400])),
            **encoding,
        )
    )


def _curves_layer(alt, curves, x_field, x_title, y_title, current_value):
    """Lines of ``curves`` (records with ``x_field``, ``set``, ``error``) and a rule at
    the current frame's ``x_field`` (``current_value``, a Vega expression)."""
    lines = (
        alt.Chart(alt.Data(values=curves))
        .mark_line()
        .encode(
            alt.X(f"{x_field}:Q", title=x_title),
            alt.Y("error:Q", title=y_title),
            alt.StrokeDash("set:N", legend=None),
            alt.Color("set:N", title=None, scale=alt.Scale(range=["#000000", "#7f3b08"])),
        )
    )
    rule = (
        alt.Chart(alt.Data(values=[{}]))
        .transform_calculate(at=current_value)
        .mark_rule(color="#555555", strokeDash=[2, 2])
        .encode(x="at:Q")
    )
    return (lines + rule).properties(width=WIDTH, height=150)


def _layout(alt, regions, points, curves, slider, alt_text):
    square = (regions + points).properties(width=WIDTH, height=WIDTH)
    return (
        alt.vconcat(square, curves)
        .resolve_scale(color="independent", shape="independent")
        .add_params(slider)
        .properties(description=alt_text)
        .configure(font=FONT, background="white")  # readable in the dark theme too
        # Marks stay out of the accessibility tree: the chart has its description and the
        # live sentence; an empty mark layer (no stump on that axis) would be an unnamed image.
        .configure_mark(aria=False)
    )


def _class_colour(alt, class_names):
    return alt.Color(
        "class:N", title="class", scale=alt.Scale(domain=list(class_names), scheme="tableau10")
    )


def depth_regions_figure(
    X_train,
    y_train,
    X_test,
    y_test,
    feature_names,
    class_names,
    *,
    name,
    alt_text,
    depths=tuple(range(1, 11)),
    start=None,
    grid=40,
    random_state=0,
):
    """A tree's decision regions on two features as ``max_depth`` grows; Chapter 2's figure.

    Introduced in Chapter 2. One frame per depth: the regions of a
    ``treelib.DecisionTreeClassifier(max_depth=d)`` over the training points,
    and training and test error against the depth. Starts at ``start`` (a
    depth), by default the depth with the lowest test error.

    Returns
    -------
    InteractiveFigure
        Its ``table`` attribute holds the depths with the train and test accuracies.
    """
    import pandas as pd

    from .tree import DecisionTreeClassifier

    alt = _altair()
    X_train, X_test = np.asarray(X_train, float), np.asarray(X_test, float)
    points, extent = region_grid(np.vstack([X_train, X_test]), grid)
    codes, rows = [], []
    for depth in depths:
        tree = DecisionTreeClassifier(max_depth=depth, random_state=random_state)
        tree.fit(X_train, y_train)
        codes.append(np.searchsorted(tree.classes_, tree.predict(points)))
        rows.append((depth, tree.score(X_train, y_train), tree.score(X_test, y_test)))
    table = pd.DataFrame(rows, columns=["max_depth", "train_accuracy", "test_accuracy"])
    if start is None:
        start = int(table.loc[table["test_accuracy"].idxmax(), "max_depth"])
    depths = list(depths)
    slider = frame_slider(len(depths), "max_depth", depths.index(start))
    colour = _class_colour(alt, class_names)
    curves = [
        {"max_depth": int(r.max_depth), "set": s, "error": round(1 - getattr(r, f), 6)}
        for r in table.itertuples()
        for s, f in (("training error", "train_accuracy"), ("test error", "test_accuracy"))
    ]
    chart = _layout(
        alt,
        _regions_layer(alt, codes, extent, grid, class_names, colour),
        _points_layer(alt, X_train, y_train, class_names, feature_names, extent, colour),
        _curves_layer(alt, curves, "max_depth", "max_depth", "error", f"{depths}[{PARAM}]"),
        slider,
        alt_text,
    )
    sentences = [
        f"max_depth = {r.max_depth}: training accuracy {r.train_accuracy:.3f}, "
        f"test accuracy {r.test_accuracy:.3f}."
        for r in table.itertuples()
    ]
    figure = InteractiveFigure(chart, name, sentences, alt_text)
    figure.table = table
    return figure


def _forest_curves(forest, X_train, y_train, X_test, y_test):
    """Test and OOB error of the forest's first k trees, for k = 1 .. n_trees.

    The first k trees' soft vote is the mean of their class probabilities (as the
    forest's ``predict_proba``); a training sample's OOB vote uses those of the first k
    trees that did not draw it, and samples that all of them drew are left out.
    """
    from ._validation import check_predict_input

    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    outputs = forest._tree_outputs(check_predict_input(forest, X_test))
    votes = outputs.cumsum(0) / np.arange(1, len(outputs) + 1)[:, None, None]
    test_error = (forest.classes_[votes.argmax(2)] != y_test).mean(1)
    n = len(y_train)
    in_bag = np.array([forest._in_bag_counts(t.random_state, n) > 0 for t in forest])
    out = ~in_bag[:, :, None]
    train_outputs = forest._tree_outputs(check_predict_input(forest, X_train))
    oob_sum, oob_n = (train_outputs * out).cumsum(0), out.cumsum(0)[:, :, 0]
    oob_error = np.array(
        [
            (forest.classes_[s[has].argmax(1)] != y_train[has]).mean() if has.any() else np.nan
            for s, has in ((oob_sum[k], oob_n[k] > 0) for k in range(len(outputs)))
        ]
    )
    return test_error, oob_error


def forest_size_figure(
    forest,
    X_train,
    y_train,
    X_test,
    y_test,
    feature_names,
    class_names,
    *,
    name,
    alt_text,
    sizes=(1, 2, 3, 5, 10, 20, 50, 100, 200),
    start=None,
    grid=40,
):
    """A forest's decision regions and OOB/test error as trees are added; Chapter 5's figure.

    Introduced in Chapter 5. ``forest`` is one fitted
    ``treelib.RandomForestClassifier`` on two features (at least ``max(sizes)``
    trees, bootstrap on); the frame for ``k`` in ``sizes`` uses its first ``k``
    trees. The error curves run over every ``k`` from one to the forest's size.
    Starts at ``start`` (a size), by default the largest.

    Returns
    -------
    InteractiveFigure
        Its ``table`` attribute holds ``k`` with the test and OOB errors.
    """
    import pandas as pd

    from ._validation import check_predict_input

    alt = _altair()
    sizes = list(sizes)
    if max(sizes) > len(forest.estimators_):
        raise ValueError(
            f"the forest has {len(forest.estimators_)} trees, sizes go to {max(sizes)}"
        )
    X_train, X_test = np.asarray(X_train, float), np.asarray(X_test, float)
    test_error, oob_error = _forest_curves(forest, X_train, y_train, X_test, y_test)
    table = pd.DataFrame(
        {"k": np.arange(1, len(test_error) + 1), "test_error": test_error, "oob_error": oob_error}
    )
    points, extent = region_grid(np.vstack([X_train, X_test]), grid)
    votes = forest._tree_outputs(check_predict_input(forest, points)).cumsum(0)
    codes = [votes[k - 1].argmax(1) for k in sizes]
    start = sizes[-1] if start is None else start
    slider = frame_slider(len(sizes), "Trees in the forest", sizes.index(start))
    colour = _class_colour(alt, class_names)
    curves = [
        {"k": int(r.k), "set": s, "error": round(float(getattr(r, f)), 6)}
        for r in table.itertuples()
        for s, f in (("test error", "test_error"), ("OOB error", "oob_error"))
        if np.isfinite(getattr(r, f))
    ]
    chart = _layout(
        alt,
        _regions_layer(alt, codes, extent, grid, class_names, colour),
        _points_layer(alt, X_train, y_train, class_names, feature_names, extent, colour),
        _curves_layer(alt, curves, "k", "trees", "error", f"{sizes}[{PARAM}]"),
        slider,
        alt_text,
    )
    sentences = []
    for k in sizes:
        row = table.iloc[k - 1]
        oob = f"{row.oob_error:.3f}" if np.isfinite(row.oob_error) else "not defined yet"
        sentences.append(f"{k} trees: test error {row.test_error:.3f}, OOB error {oob}.")
    figure = InteractiveFigure(chart, name, sentences, alt_text)
    figure.table = table
    return figure


def adaboost_rounds_figure(
    model,
    X_train,
    y_train,
    X_test,
    y_test,
    feature_names,
    class_names,
    *,
    name,
    alt_text,
    start=None,
    grid=30,
):
    """AdaBoost round by round on two features; Chapter 6's figure.

    Introduced in Chapter 6. ``model`` is a fitted ``treelib.AdaBoostClassifier``
    whose learners are stumps (the default). Frame ``m`` shows the ensemble's
    regions after round ``m``, the training points with areas proportional to the
    weights the round's stump was fitted with (``model.sample_weights_[m]``), the
    round's split as a line, its weighted error and ``alpha``
    (``estimator_errors_``, ``estimator_weights_``) and the training and test error
    of the first ``m`` rounds. Starts at ``start`` (a round, from one), by default
    the third or the last.

    Returns
    -------
    InteractiveFigure
        Its ``table`` attribute holds the rounds with error, alpha and the errors.
    """
    import pandas as pd

    alt = _altair()
    X_train, X_test = np.asarray(X_train, float), np.asarray(X_test, float)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    rounds = len(model.estimators_)
    train = [np.mean(p != y_train) for p in model.staged_predict(X_train)]
    test = [np.mean(p != y_test) for p in model.staged_predict(X_test)]
    splits = [(int(t.tree_.feature[0]), float(t.tree_.threshold[0])) for t in model.estimators_]
    table = pd.DataFrame(
        {
            "round": np.arange(1, rounds + 1),
            "feature": [f for f, _ in splits],
            "threshold": [s for _, s in splits],
            "weighted_error": model.estimator_errors_[:rounds],
            "alpha": model.estimator_weights_[:rounds],
            "train_error": train,
            "test_error": test,
        }
    )
    points, extent = region_grid(np.vstack([X_train, X_test]), grid)
    codes = [np.searchsorted(model.classes_, p) for p in model.staged_predict(points)]
    start = min(3, rounds) if start is None else start
    slider = frame_slider(rounds, "Boosting round", start - 1)
    colour = _class_colour(alt, class_names)
    weights = model.sample_weights_ * len(y_train)  # 1 = the weight of an equal share
    curves = [
        {"round": int(r.round), "set": s, "error": round(float(getattr(r, f)), 6)}
        for r in table.itertuples()
        for s, f in (("training error", "train_error"), ("test error", "test_error"))
    ]
    regions = _regions_layer(alt, codes, extent, grid, class_names, colour)
    points_layer = _points_layer(
        alt, X_train, y_train, class_names, feature_names, extent, colour, size=weights
    )
    stump_data = alt.Data(
        values=[
            {"frame": m, "feature": f, "threshold": round(s, 6)} for m, (f, s) in enumerate(splits)
        ]
    )
    current = f"datum.frame === {PARAM}"
    vertical = (
        alt.Chart(stump_data)
        .transform_filter(f"{current} && datum.feature === 0")
        .mark_rule(color="black", strokeWidth=2)
        .encode(x="threshold:Q")
    )
    horizontal = (
        alt.Chart(stump_data)
        .transform_filter(f"{current} && datum.feature === 1")
        .mark_rule(color="black", strokeWidth=2)
        .encode(y="threshold:Q")
    )
    chart = _layout(
        alt,
        regions + vertical + horizontal,
        points_layer,
        _curves_layer(alt, curves, "round", "round", "error", f"{PARAM} + 1"),
        slider,
        alt_text,
    )
    sentences = [
        f"Round {r.round}: the stump splits {feature_names[r.feature]} at {r.threshold:.4g}, "
        f"weighted error {r.weighted_error:.3f}, alpha {r.alpha:.3f}; "
        f"after {r.round} round{'s' if r.round > 1 else ''} "
        f"training error {r.train_error:.3f}, test error {r.test_error:.3f}."
        for r in table.itertuples()
    ]
    figure = InteractiveFigure(chart, name, sentences, alt_text)
    figure.table = table
    return figure


# --- Chapter 10: one patient's SHAP values --------------------------------------------------

# The book's two signs (tableau10, the palette of the other figures): red raises the
# output, blue lowers it. A red/blue pair stays apart for the common colour-vision
# deficiencies, both reach 3:1 against the chart's white background (in either theme),
# and the sign is also the bar's direction and its "+"/"-" label.
RAISES, LOWERS = "#e45756", "#4c78a8"


def _value_text(value):
    """A feature value as the bars' labels show it: ``2`` for 2.0, ``missing`` for NaN."""
    value = float(value)
    if np.isnan(value):
        return "missing"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def _check_attributions(values, expected_value, X, feature_names, labels, start, top):
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(
            f"values must be one output's SHAP values of shape (n_samples, n_features), got "
            f"shape {values.shape}; for K outputs pass one of them, e.g. values[:, :, k]"
        )
    n, d = values.shape
    if n == 0 or d == 0:
        raise ValueError(f"values has shape {values.shape}: no patient or no feature to show")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite (SHAP values are)")
    base = np.asarray(expected_value, dtype=np.float64)
    if base.size != 1 or not np.isfinite(base).all():
        raise ValueError(f"expected_value must be one finite number, got {expected_value!r}")
    features = np.asarray(X, dtype=np.float64)
    if features.shape != (n, d):
        raise ValueError(f"X has shape {features.shape}, values {values.shape}: they must agree")
    names = [str(name) for name in feature_names]
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"feature_names must be {d} distinct names, got {len(names)}")
    if labels is not None:
        labels = [str(label) for label in labels]
        if len(labels) != n:
            raise ValueError(f"labels must hold one string per patient ({n}), got {len(labels)}")
    top = d if top is None else int(top)
    if not 1 <= top <= d:
        raise ValueError(f"top={top} must be between 1 and the number of features ({d})")
    if not 0 <= start < n:
        raise ValueError(f"start={start} is not a patient of 0..{n - 1}")
    return values, float(base.ravel()[0]), features, names, labels, top


def _attribution_sentence(patient, label, output_name, prediction, base, items):
    """``items``: (feature label, shap) pairs of one patient, every feature."""

    def listed(pairs):
        return ", ".join(f"{text} ({value:+.2f})" for text, value in pairs)

    pushes = sorted((p for p in items if p[1] > 0), key=lambda p: -p[1])[:3]
    pulls = sorted((p for p in items if p[1] < 0), key=lambda p: p[1])[:3]
    up = "the largest push" + ("es" if len(pushes) > 1 else "") + f" up: {listed(pushes)}"
    down = "the largest pull" + ("s" if len(pulls) > 1 else "") + f" down: {listed(pulls)}"
    who = f"Patient {patient}" + (f" ({label})" if label is not None else "")
    return (
        f"{who}: the model's {output_name} {prediction:.2f} = base {base:.2f} + attributions; "
        f"{up if pushes else 'no feature pushes up'}; "
        f"{down if pulls else 'no feature pulls down'}."
    )


def patient_attributions_figure(
    values,
    expected_value,
    X,
    feature_names,
    *,
    name,
    alt_text,
    labels=None,
    start=0,
    top=None,
    output_name="log-odds of disease",
):
    """One patient's SHAP values as a waterfall, a slider over patients; Chapter 10's figure.

    Introduced in Chapter 10. Frame ``i`` shows row ``i`` of ``values``: each
    feature's attribution as a horizontal bar from the running total before it to
    the running total after it, so that the bars climb from the base value
    (``expected_value``, the dashed rule) to the model's output for that patient,
    ``expected_value + values[i].sum()`` (the solid rule). Bars that raise the output
    are red, bars that lower it blue; each is labelled ``feature = value`` (from
    ``X``) and by its signed size.

    The features are sorted by ``|value|`` within each patient, largest on top (as
    ``shap``'s waterfall plot): the question a frame answers is what drove *this*
    patient's prediction, and sorted bars answer it at a glance, with the small
    attributions bunched at the bottom next to the base value. A fixed order would
    keep each feature's row in place as the slider moves, but the reader would have
    to hunt for the long bars in every frame; the labels name the features, so the
    rows moving is no loss. The x axis is the same for every patient, so bar lengths
    compare across frames.

    Parameters
    ----------
    values : array-like of shape (n_patients, n_features)
        SHAP values of one output, e.g. ``TreeExplainer(model).shap_values(X)`` for a
        binary gradient boosting classifier (raw log-odds).
    expected_value : float
        The base value (``TreeExplainer.expected_value``; an array of one value is
        accepted).
    X : array-like of shape (n_patients, n_features)
        The feature values shown beside the bars (NaN shows as ``missing``). A
        DataFrame's index numbers the patients; otherwise they are numbered from 0,
        as the slider is.
    feature_names : list of str
    name, alt_text : str
        The figure's name (``fig-10-...``) and its alt text.
    labels : list of str, default=None
        One label per patient (e.g. ``"has disease"``), in the header and sentences.
    start : int, default=0
        The frame (row) shown first.
    top : int, default=None
        Show the ``top`` largest attributions of each patient and sum the others into
        one bar, ``other k features``. None shows every feature.
    output_name : str, default="log-odds of disease"
        What the model's output is, for the axis, header and sentences.

    Returns
    -------
    InteractiveFigure
        Its ``table`` attribute holds one row per patient and feature, ``patient,
        feature, value, shap``, each patient's features in the order drawn (largest
        ``|shap|`` first). The sentence of each frame names the output, the base value
        and the three largest pushes up and pulls down.
    """
    import pandas as pd

    alt = _altair()
    ids = list(X.index) if isinstance(X, pd.DataFrame) else None
    values, base, features, names, labels, top = _check_attributions(
        values, expected_value, X, feature_names, labels, start, top
    )
    n, d = values.shape
    ids = list(range(n)) if ids is None else ids
    order = np.argsort(-np.abs(values), axis=1, kind="stable")  # largest |value| first
    table = pd.DataFrame(
        {
            "patient": np.repeat(ids, d),
            "feature": np.asarray(names, dtype=object)[order].ravel(),
            "value": np.take_along_axis(features, order, 1).ravel(),
            "shap": np.take_along_axis(values, order, 1).ravel(),
        }
    )
    other = d - top
    bar_names = names + ([f"other {other} feature{'s' if other > 1 else ''}"] if other else [])
    frames, sentences, low, high = [], [], base, base
    for i in range(n):
        shown = [int(j) for j in order[i, :top]]
        shap = [float(values[i, j]) for j in shown]
        text = [_value_text(features[i, j]) for j in shown]
        if other:
            shown.append(d)
            shap.append(float(values[i, order[i, top:]].sum()))
            text.append("")
        prediction = base + float(values[i].sum())
        # the running totals, climbing from the base (bottom bar) to the prediction (top)
        totals = base + np.cumsum(shap[::-1])
        low, high = min(low, totals.min()), max(high, totals.max())
        who = f"Patient {ids[i]}" + (f" ({labels[i]})" if labels is not None else "")
        frames.append(
            {
                "frame": i,
                "j": shown,
                "s": [round(s, 4) for s in shap],
                "v": text,
                "p": round(prediction, 4),
                "t": who,
            }
        )
        items = [(f"{names[j]} = {_value_text(features[i, j])}", values[i, j]) for j in range(d)]
        label = labels[i] if labels is not None else None
        sentences.append(_attribution_sentence(ids[i], label, output_name, prediction, base, items))
    pad = 0.18 * max(high - low, 1e-9)  # room for the signed labels beside the bars
    domain = [round(low - pad, 4), round(high + pad, 4)]
    chart = _waterfall_chart(alt, frames, bar_names, base, domain, output_name, top + bool(other))
    chart = (
        chart.add_params(frame_slider(n, "Patient", start))
        .properties(description=alt_text)
        .configure(font=FONT, background="white")  # readable in the dark theme too
        .configure_mark(aria=False)  # the description and the live sentence speak for it
        .configure_view(stroke=None)  # no frame around the header line
    )
    figure = InteractiveFigure(chart, name, sentences, alt_text)
    figure.table = table
    return figure


def _waterfall_chart(alt, frames, bar_names, base, domain, output_name, rows):
    current = f"datum.frame === {PARAM}"
    data = alt.NamedData(name="patients")  # the frames, once in the spec's datasets
    raises, lowers = f"raises the {output_name}", f"lowers the {output_name}"
    bars = (
        alt.Chart(data)
        .transform_filter(current)
        .transform_flatten(["j", "s", "v"])
        .transform_window(rank="row_number()")
        .transform_window(
            total="sum(s)", sort=[alt.SortField("rank", order="descending")], frame=[None, 0]
        )
        .transform_calculate(
            end=f"{base!r} + datum.total",
            start=f"{base!r} + datum.total - datum.s",
            label=f"{json.dumps(bar_names)}[datum.j] + (datum.v === '' ? '' : ' = ' + datum.v)",
            sign=f"datum.s >= 0 ? {json.dumps(raises)} : {json.dumps(lowers)}",
            size="format(datum.s, '+.2f')",
        )
    )
    x = alt.X(
        "start:Q",
        title=f"{output_name} (dashed: the base value {base:.2f}; solid: the prediction)",
        scale=alt.Scale(domain=domain, nice=False, zero=False),
    )
    y = alt.Y(
        "label:N", title=None, sort=alt.EncodingSortField(field="rank", op="min"),
    )  # fmt: skip
    colour = alt.Color(
        "sign:N",
        title=None,
        scale=alt.Scale(domain=[raises, lowers], range=[RAISES, LOWERS]),
        legend=alt.Legend(orient="bottom"),
    )
    drawn = bars.mark_bar(height={"band": 0.7}).encode(x, alt.X2("end:Q"), y, colour)
    up = (
        bars.transform_filter("datum.s >= 0")
        .mark_text(align="left", dx=3, fontSize=10)
        .encode(alt.X("end:Q"), y, text="size:N")
    )
    down = (
        bars.transform_filter("datum.s < 0")
        .mark_text(align="right", dx=-3, fontSize=10)
        .encode(alt.X("end:Q"), y, text="size:N")
    )
    base_rule = (
        alt.Chart(alt.Data(values=[{"b": base}]))
        .mark_rule(color="#555555", strokeDash=[4, 3])
        .encode(x="b:Q")
    )
    prediction = (
        alt.Chart(data).transform_filter(current).mark_rule(color="black", strokeWidth=1.5)
        .encode(x="p:Q")
    )  # fmt: skip
    header = (
        alt.Chart(data)
        .transform_filter(current)
        .mark_text(align="left", baseline="middle", fontSize=12, fontWeight="bold")
        .transform_calculate(header="datum.t + ': prediction ' + format(datum.p, '.2f')")
        .encode(x=alt.value(0), y=alt.value(8), text="header:N")
        .properties(width=WIDTH + 100, height=16)
    )
    waterfall = (base_rule + prediction + drawn + up + down).properties(
        width=WIDTH + 100, height=20 * rows
    )
    return alt.vconcat(header, waterfall, spacing=6, datasets={"patients": frames})
