"""Interactive figures (treelib/interactive.py, issue 19): frames, still, HTML, runtime.

The frames are checked against numbers worked out independently (numpy counts and
scikit-learn's stump), the HTML for what the book's script and the notebook tests
need: fixed ids, identical bytes on a second build, no network, a still with alt text.
"""

import base64
import importlib.util
import json
import re
import sys
from pathlib import Path

import altair as alt
import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from treelib import DecisionStump, interactive
from treelib import DecisionTreeClassifier as TreelibTree
from treelib.datasets import load_heart_disease

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_BYTES = 300_000  # issue 19: at most about 300 KB per figure in the notebook


def test_vl_convert_is_installed():
    """The stills need it (requirements.txt); without it cells show only the live chart."""
    assert importlib.util.find_spec("vl_convert") is not None


def gini_by_hand(labels):
    _, counts = np.unique(labels, return_counts=True)
    p = counts / counts.sum()
    return 1 - (p**2).sum()


@pytest.fixture(scope="module")
def heart():
    X, y = load_heart_disease(return_X_y=True)
    return X["thalach"].to_numpy(), y.to_numpy()


def test_threshold_frames_match_counts_by_hand():
    x = np.array([1.0, 1.5, 2.0, 3.0, 3.5, 4.0, 5.0, 6.0])
    y = np.array([0, 0, 1, 0, 0, 1, 1, 1])
    frames = interactive.threshold_frames(x, y)
    np.testing.assert_allclose(frames["threshold"], [1.25, 1.75, 2.5, 3.25, 3.75, 4.5, 5.5])
    for row in frames.itertuples():
        left, right = y[x <= row.threshold], y[x > row.threshold]
        assert (row.left_0, row.left_1) == ((left == 0).sum(), (left == 1).sum())
        assert (row.right_0, row.right_1) == ((right == 0).sum(), (right == 1).sum())
        expected = (len(left) * gini_by_hand(left) + len(right) * gini_by_hand(right)) / 8
        assert row.impurity == pytest.approx(expected, abs=1e-12)
    assert frames["impurity"].min() == pytest.approx(0.2)  # Chapter 1's toy answer
    assert frames.loc[frames["impurity"].idxmin(), "threshold"] == 3.75


def test_repeated_values_are_never_separated():
    frames = interactive.threshold_frames([1, 1, 2, 2, 2, 3], [0, 1, 0, 1, 1, 0])
    np.testing.assert_allclose(frames["threshold"], [1.5, 2.5])


def test_best_frame_is_the_stump_and_scikit_learns(heart):
    x, y = heart
    frames = interactive.threshold_frames(x, y)
    best = frames.loc[frames["impurity"].idxmin(), "threshold"]
    sklearn_stump = DecisionTreeClassifier(max_depth=1).fit(x[:, None], y)
    assert best == sklearn_stump.tree_.threshold[0]
    assert best == DecisionStump().fit(x[:, None], y).threshold_
    assert len(frames) == len(np.unique(x)) - 1


@pytest.fixture(scope="module")
def figure(heart):
    x, y = heart
    return interactive.stump_threshold_figure(
        x, y, "thalach", ["no disease", "disease"], name="fig-1-test", alt_text="Alt text."
    )


def test_figure_starts_at_the_stumps_threshold(figure, heart):
    x, y = heart
    stump = DecisionStump().fit(x[:, None], y)
    (param,) = figure.spec["params"]
    assert param["bind"]["input"] == "range"
    assert (param["bind"]["min"], param["bind"]["step"]) == (0, 1)
    assert param["bind"]["max"] == len(np.unique(x)) - 2
    assert f"<= {stump.threshold_:.4g}:" in figure.descriptions[param["value"]]
    assert "best threshold" in figure.descriptions[param["value"]]
    assert sum("best threshold" in d for d in figure.descriptions) == 1
    left, right = y[x <= stump.threshold_], y[x > stump.threshold_]
    sentence = figure.descriptions[param["value"]]
    assert f"left child {(left == 0).sum()} no disease, {(left == 1).sum()} disease" in sentence
    assert f"right child {(right == 0).sum()} no disease, {(right == 1).sum()} disease" in sentence


def test_html_has_still_live_region_and_spec(figure):
    page = figure.to_html()
    assert page.count('id="tl-fig-1-test"') == 1
    assert 'aria-live="polite"' in page
    assert '<img class="tl-still" alt="Alt text."' in page
    still = re.search(r'src="data:image/png;base64,([^"]+)"', page)[1]
    assert base64.b64decode(still).startswith(PNG_SIGNATURE)
    spec = re.search(r'<script type="application/json" class="tl-spec">(.*?)</script>', page, re.S)
    assert json.loads(spec[1])["params"][0]["name"] == "frame"
    frames = re.search(r'class="tl-frames">(.*?)</script>', page, re.S)
    assert json.loads(frames[1]) == figure.descriptions


def test_nothing_is_loaded_from_the_network(figure):
    page = figure.to_html()
    assert " src=" not in page.replace('src="data:image/png', "")
    assert "<link" not in page
    spec = json.dumps(figure.spec)
    assert re.findall(r"https?://[^\"]+", spec) == [
        figure.spec["$schema"]
    ]  # an identifier, never fetched


def test_same_bytes_on_a_second_build(figure, heart):
    x, y = heart
    again = interactive.stump_threshold_figure(
        x, y, "thalach", ["no disease", "disease"], name="fig-1-test", alt_text="Alt text."
    )
    assert again._repr_mimebundle_() == figure._repr_mimebundle_()


def test_figure_fits_the_notebook_budget(figure):
    bundle = figure._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    assert sum(len(v) for v in bundle.values()) < MAX_BYTES
    assert bundle["text/plain"] == figure.descriptions[figure.start]


def test_colab_gets_the_live_chart(figure, monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", object())
    bundle = figure._repr_mimebundle_()
    assert "image/png" not in bundle
    text = json.dumps(bundle).replace('\\"', '"')  # Altair's own output, whatever its renderer
    assert '"name": "frame"' in text
    assert "data:image/png" not in json.dumps(bundle)


def test_script_text_cannot_close_its_element():
    assert "</script>" not in interactive._escape_script(["</script><b>x</b>"])
    assert json.loads(interactive._escape_script(["</script>"])) == ["</script>"]


def test_slider_and_descriptions_must_agree():
    with pytest.raises(ValueError, match="start"):
        interactive.frame_slider(3, "x", 3)
    chart = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    chart = chart.add_params(interactive.frame_slider(3, "x", 0))
    with pytest.raises(ValueError, match="one description per frame"):
        interactive.InteractiveFigure(chart, "fig-1-x", ["a", "b"], "alt")
    with pytest.raises(ValueError, match="parameter"):
        interactive.InteractiveFigure(chart.properties(params=[]), "fig-1-x", ["a"], "alt")


# --- the book's side: _ext/interactive_figures.py -----------------------------------------


def load_extension():
    spec = importlib.util.spec_from_file_location(
        "interactive_figures", ROOT / "_ext" / "interactive_figures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeApp:
    def __init__(self):
        self.scripts = []

    def add_js_file(self, name, **attributes):
        self.scripts.append((name, attributes))


def test_runtime_only_on_pages_with_a_figure_and_deferred():
    extension = load_extension()
    app = FakeApp()
    extension.add_runtime(app, "index", None, {"body": "<p>no figure</p>"}, None)
    assert app.scripts == []
    extension.add_runtime(app, "ch1", None, {"body": '<div class="tl-interactive">'}, None)
    assert [name for name, _ in app.scripts] == ["vega/vega-bundle.js", "treelib-interactive.js"]
    assert all(attributes == {"defer": "defer"} for _, attributes in app.scripts)


def test_runtime_is_not_on_every_page():
    class Config:
        html_js_files = ["vega/vega-bundle.js", ("treelib-interactive.js", {}), "other.js"]

    load_extension().keep_runtime_off_other_pages(None, Config)
    assert Config.html_js_files == ["other.js"]


def test_runtime_is_vendored_with_its_licence():
    bundle = ROOT / "_static" / "vega" / "vega-bundle.js"
    text = bundle.read_text()
    assert "window.vegaEmbed=" in text
    assert "BSD" in (bundle.parent / "LICENSE.txt").read_text()


# --- decision regions: Chapters 2, 5 and 6 --------------------------------------------------

CLASSES = ["setosa", "versicolor", "virginica"]
PETALS = ["petal length (cm)", "petal width (cm)"]


@pytest.fixture(scope="module")
def iris_petals():
    from sklearn.datasets import load_iris
    from sklearn.model_selection import train_test_split

    X, y = load_iris(return_X_y=True)
    return train_test_split(X[:, 2:], y, test_size=0.2, random_state=42)


def test_region_grid_cells_by_hand():
    points, extent = interactive.region_grid([[0.0, 0.0], [4.0, 2.0]], grid=2, margin=0.0)
    assert extent == (0.0, 4.0, 0.0, 2.0)
    np.testing.assert_allclose(points, [[1.0, 0.5], [3.0, 0.5], [1.0, 1.5], [3.0, 1.5]])
    with pytest.raises(ValueError, match="two features"):
        interactive.region_grid(np.zeros((3, 3)))


def test_depth_figure_frames_are_the_trees(iris_petals):
    X_train, X_test, y_train, y_test = iris_petals
    figure = interactive.depth_regions_figure(
        X_train, y_train, X_test, y_test, PETALS, CLASSES,
        name="fig-2-test", alt_text="Alt.", depths=(1, 2, 3), grid=10,
    )  # fmt: skip
    # a depth-one tree isolates setosa only: two thirds of the classes at best
    stump = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X_train, y_train)
    assert figure.table["train_accuracy"][0] == pytest.approx(stump.score(X_train, y_train))
    assert figure.table["test_accuracy"][0] == pytest.approx(stump.score(X_test, y_test))
    assert figure.table["train_accuracy"].is_monotonic_increasing
    (regions,) = [d for d in _inline_data(figure.spec) if d and "c" in d[0]]
    assert len(regions) == 3 and all(len(frame["c"]) == 100 for frame in regions)
    points, _ = interactive.region_grid(np.vstack([X_train, X_test]), 10)
    # petal length and width tie at depth one (Chapter 1): the regions are treelib's tree's
    treelib_stump = TreelibTree(max_depth=1, random_state=0).fit(X_train, y_train)
    np.testing.assert_array_equal(regions[0]["c"], treelib_stump.predict(points))
    assert (treelib_stump.predict(X_train) == stump.predict(X_train)).all()
    assert figure.descriptions[figure.start].startswith("max_depth = ")


def _inline_data(spec):
    """Every inline data set (``values``) in a spec, wherever it sits."""
    found = []
    if isinstance(spec, dict):
        if "values" in spec and isinstance(spec["values"], list):
            found.append(spec["values"])
        for value in spec.values():
            found += _inline_data(value)
    elif isinstance(spec, list):
        for value in spec:
            found += _inline_data(value)
    return found


def test_forest_figure_ends_at_the_forests_own_errors(heart):
    from treelib import RandomForestClassifier

    x, y = heart
    X = np.column_stack([x, np.arange(len(x)) % 7])
    forest = RandomForestClassifier(n_estimators=20, oob_score=True, random_state=0).fit(X, y)
    figure = interactive.forest_size_figure(
        forest, X, y, X[:50], y[:50], ["thalach", "code"], ["no", "yes"],
        name="fig-5-test", alt_text="Alt.", sizes=(1, 5, 20), grid=10,
    )  # fmt: skip
    last = figure.table.iloc[-1]
    assert last["oob_error"] == pytest.approx(1 - forest.oob_score_)
    assert last["test_error"] == pytest.approx(1 - forest.score(X[:50], y[:50]))
    first_tree = forest.estimators_[0]
    first = np.mean(forest.classes_[first_tree.predict(X[:50]).astype(int)] != y[:50])
    assert figure.table["test_error"][0] == pytest.approx(first)
    assert figure.descriptions[figure.start].startswith("20 trees")
    with pytest.raises(ValueError, match="20 trees"):
        interactive.forest_size_figure(
            forest, X, y, X, y, ["a", "b"], ["no", "yes"], name="f", alt_text="a", sizes=(50,)
        )


def test_adaboost_figure_replays_the_rounds(iris_petals):
    from treelib import AdaBoostClassifier

    X_train, X_test, y_train, y_test = iris_petals
    model = AdaBoostClassifier(n_estimators=5, random_state=0).fit(X_train, y_train)
    figure = interactive.adaboost_rounds_figure(
        model, X_train, y_train, X_test, y_test, PETALS, CLASSES,
        name="fig-6-test", alt_text="Alt.", grid=10,
    )  # fmt: skip
    for m, row in figure.table.iterrows():
        stump, w = model.estimators_[m], model.sample_weights_[m]
        wrong = stump.predict(X_train) != y_train
        assert row["weighted_error"] == pytest.approx(w[wrong].sum() / w.sum())
        goes_left = X_train[:, int(row["feature"])] <= row["threshold"]
        assert 0 < goes_left.sum() < len(y_train)  # the line is the stump's split
    assert figure.table["train_error"].iloc[-1] == pytest.approx(1 - model.score(X_train, y_train))
    assert figure.table["test_error"].iloc[-1] == pytest.approx(1 - model.score(X_test, y_test))
    assert figure.descriptions[figure.start].startswith("Round 3:")
    assert "; after 1 round training error" in figure.descriptions[0]  # one round, singular
    assert "; after 2 rounds training error" in figure.descriptions[1]


def test_region_figures_fit_the_notebook_budget(iris_petals):
    X_train, X_test, y_train, y_test = iris_petals
    figure = interactive.depth_regions_figure(
        X_train, y_train, X_test, y_test, PETALS, CLASSES, name="fig-2-size", alt_text="Alt."
    )
    assert sum(len(v) for v in figure._repr_mimebundle_().values()) < MAX_BYTES


def test_without_vl_convert_the_cell_shows_the_live_chart(figure, monkeypatch):
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import fails
    assert "image/png" not in figure._repr_mimebundle_()
    monkeypatch.undo()
    assert "image/png" in figure._repr_mimebundle_()


# --- Chapter 10: one patient's SHAP values ----------------------------------------------------

HEART_LABELS = np.array(["no disease", "has disease"])


@pytest.fixture(scope="module")
def heart_shap():
    """Gradient boosting on the complete heart-disease rows, explained by TreeExplainer."""
    from treelib import GradientBoostingClassifier
    from treelib.explain import TreeExplainer

    X, y = load_heart_disease(return_X_y=True)
    keep = X.notna().all(axis=1).to_numpy()
    X, y = X[keep], y[keep].to_numpy()
    model = GradientBoostingClassifier(n_estimators=30, max_depth=2, random_state=0).fit(X, y)
    explainer = TreeExplainer(model)
    return model, X, y, explainer.shap_values(X), explainer.expected_value


def attributions_figure(heart_shap, **kwargs):
    _, X, y, values, base = heart_shap
    kwargs = {"name": "fig-10-test", "alt_text": "Alt.", "labels": HEART_LABELS[y]} | kwargs
    return interactive.patient_attributions_figure(values, base, X, list(X.columns), **kwargs)


@pytest.fixture(scope="module")
def patients(heart_shap):
    return attributions_figure(heart_shap)


def test_patient_frames_add_up_to_the_models_log_odds(patients, heart_shap):
    model, X, _, values, base = heart_shap
    log_odds = model.decision_function(X)  # the model, not the figure's numbers
    table = patients.table
    assert list(table.columns) == ["patient", "feature", "value", "shap"]
    assert len(table) == values.size
    sums = table.groupby("patient", sort=False)["shap"].sum().to_numpy()
    np.testing.assert_allclose(base[0] + sums, log_odds, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(table["patient"].unique(), X.index)
    # the drawn bars (rounded to 4 decimals) and the solid rule are the same patients' numbers
    (frames,) = patients.spec["datasets"].values()
    for frame, expected in zip(frames, log_odds):
        assert frame["p"] == pytest.approx(expected, abs=1e-4)
        assert base[0] + sum(frame["s"]) == pytest.approx(expected, abs=1e-3)
    for i in (0, 7, len(X) - 1):
        one = table[table["patient"] == X.index[i]]
        assert (one["shap"].abs().diff().dropna() <= 0).all(), "largest |shap| first"
        by_feature = dict(zip(one["feature"], one["value"]))
        assert by_feature == X.iloc[i].to_dict()
        assert (
            f"log-odds of disease {log_odds[i]:.2f} = base {base[0]:.2f}"
            in (patients.descriptions[i])
        )


def test_sentences_name_the_largest_push_and_pull(patients, heart_shap):
    _, X, y, values, _ = heart_shap
    names = list(X.columns)
    for i in range(0, len(X), 17):
        sentence = patients.descriptions[i]
        assert sentence.startswith(f"Patient {X.index[i]} ({HEART_LABELS[y[i]]}): ")
        up, down = int(np.argmax(values[i])), int(np.argmin(values[i]))
        if values[i, up] > 0:
            push = f"{names[up]} = {X.iloc[i, up]:g} ({values[i, up]:+.2f})"
            assert re.search(r"the largest push(es)? up: " + re.escape(push), sentence)
        if values[i, down] < 0:
            pull = f"{names[down]} = {X.iloc[i, down]:g} ({values[i, down]:+.2f})"
            assert re.search(r"the largest pulls? down: " + re.escape(pull), sentence)


def test_patient_slider_is_a_range_input(patients, heart_shap):
    _, X, _, _, _ = heart_shap
    (param,) = patients.spec["params"]
    assert param["bind"] == {"input": "range", "min": 0, "max": len(X) - 1, "step": 1,
                             "name": "Patient"}  # fmt: skip
    assert param["value"] == patients.start == 0
    assert len(patients.descriptions) == len(X)


def test_other_features_are_summed_into_one_bar(heart_shap):
    _, X, _, values, _ = heart_shap
    figure = attributions_figure(heart_shap, top=4, start=5)
    (frames,) = figure.spec["datasets"].values()
    for i in (0, 5, 50):
        frame = frames[i]
        assert len(frame["s"]) == 5 and frame["j"][-1] == X.shape[1]
        by_size = np.sort(np.abs(values[i]))
        assert sorted(np.abs(frame["s"][:4])) == pytest.approx(by_size[-4:], abs=1e-4)
        smallest = np.argsort(np.abs(values[i]))[:-4]
        assert frame["s"][-1] == pytest.approx(values[i, smallest].sum(), abs=1e-4)
    assert "other 9 features" in json.dumps(figure.spec)
    assert figure.descriptions[figure.start].startswith(f"Patient {X.index[5]} ")


def test_patient_figure_same_bytes_on_a_second_build_and_fits_the_budget(patients, heart_shap):
    bundle = patients._repr_mimebundle_()
    assert attributions_figure(heart_shap)._repr_mimebundle_() == bundle
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    assert sum(len(v) for v in bundle.values()) < MAX_BYTES
    page = bundle["text/html"]
    assert page.count('id="tl-fig-10-test"') == 1 and 'aria-live="polite"' in page
    assert " src=" not in page.replace('src="data:image/png', "") and "<link" not in page
    assert re.findall(r"https?://[^\"]+", json.dumps(patients.spec)) == [patients.spec["$schema"]]


def test_patient_figure_rejects_bad_input(heart_shap):
    _, X, y, values, base = heart_shap
    names = list(X.columns)

    def make(values=values, X=X, names=names, **kwargs):
        return interactive.patient_attributions_figure(
            values, base, X, names, name="f", alt_text="a", **kwargs
        )

    with pytest.raises(ValueError, match="one output"):
        make(values=np.stack([values, -values], axis=2))
    with pytest.raises(ValueError, match="must agree"):
        make(X=X.iloc[:10])
    with pytest.raises(ValueError, match="distinct names"):
        make(names=names[:-1] + names[:1])
    with pytest.raises(ValueError, match="one string per patient"):
        make(labels=["x"] * 3)
    with pytest.raises(ValueError, match="top=0"):
        make(top=0)
    with pytest.raises(ValueError, match="start"):
        make(start=len(X))
    with pytest.raises(ValueError, match="expected_value"):
        interactive.patient_attributions_figure(
            values, [0.0, 1.0], X, names, name="f", alt_text="a"
        )
    with pytest.raises(ValueError, match="finite"):
        make(values=np.where(values > 0.5, np.nan, values))


def test_missing_values_are_named():
    values = np.array([[0.5, -0.25]])
    figure = interactive.patient_attributions_figure(
        values, 0.1, np.array([[np.nan, 2.5]]), ["ca", "oldpeak"], name="f", alt_text="a"
    )
    assert figure.descriptions == [
        "Patient 0: the model's log-odds of disease 0.35 = base 0.10 + attributions; "
        "the largest push up: ca = missing (+0.50); the largest pull down: oldpeak = 2.5 (-0.25)."
    ]
