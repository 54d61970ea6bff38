"""Chart builders: plain data in, a Vega-Lite spec, an altair chart or a plotly figure out (no streamlit here).

User text reaches charts only as data values (vega renders them as SVG text) or,
for plotly, through `plotly_text`, which escapes the markup plotly would read.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from matching.explain.matrix_views import Outline
from matching.text.tokens import Token

ACCENT = "#1f6feb"
POSITIVE, NEGATIVE = "#1a7f37", "#cf222e"
UNKNOWN = "#d97706"
GREY = "#9ca3af"
ROW_PX = 26
"""Height of one bar row in the bar charts (room for a label at the largest font the app uses)."""
MAX_SIDE_BY_SIDE_COLUMNS = 16
"""Wider interaction matrices are drawn full width (stacked), so each cell keeps room for its rank label."""
MAX_TRUNCATED_SHOWN = 10
"""Unseen (truncated) tokens drawn as grey rows/columns after the seen ones; the rest are counted."""


def title(text: str, subtitle: str | None = None) -> alt.Title:
    """A chart title that is never cut: short text, the model (or other context) as a subtitle line."""
    return alt.Title(text, subtitle=subtitle or "", anchor="start", limit=0)


def short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plotly_text(text: str) -> str:
    """Plotly reads a subset of HTML in labels and hover text: escape every piece of user text."""
    # Only '<', '>' and '&' matter: with them escaped no tag can form; plotly shows '&quot;' literally.
    return html.escape(text, quote=False)


# ---------------------------------------------------------------- Rank page

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
Spec = dict[str, Any]
"""A Vega-Lite specification as plain data. The charts drawn on most page runs (rank shifts,
attention and word-deletion bars) are written this way rather than through altair, whose
object model cost more than half of an Attention page run (py-spy over bench/sessions.py);
tests/test_charts_specs.py validates them against the schema."""


def _plain(value: Any) -> int | None:
    """A rank as JSON reads it (numpy integers are not JSON)."""
    return None if value is None else int(value)


def _title_spec(text: str, subtitle: str | None = None) -> Spec:
    """`title` as plain data."""
    return {"text": text, "anchor": "start", "limit": 0, "subtitle": subtitle or ""}


def _word_bars(rows: list[dict[str, Any]], x: Spec, color: Spec, tooltip: list[Spec], label_limit: int,
               row_px: int, rule: Spec, heading: str, subtitle: str | None) -> Spec:
    """Horizontal bars, one per word in text order (the `label` field), and one vertical rule."""
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "layer": [
            {"data": {"values": rows}, "mark": {"type": "bar"},
             "encoding": {"y": {"field": "label", "type": "nominal", "sort": [r["label"] for r in rows], "title": None,
                                "axis": {"labelLimit": label_limit, "labelOverlap": False}},
                          "x": x, "color": color, "tooltip": tooltip}},
            rule,
        ],
        "height": max(90, row_px * len(rows)),
        "title": _title_spec(heading, subtitle),
    }


CHARTED_TOP = 10
"""A long list's bump chart draws this many candidates (and the one explained): thirty lines in ten colours could be
told apart only by hovering each."""


def charted_candidates(ranks: Mapping[str, Sequence[int]], count: int, selected: int) -> list[int]:
    """The candidates `rank_shift_chart` draws, in list order: every one of a list of at most CHARTED_TOP, else the
    CHARTED_TOP best by their best rank over the systems (then their mean rank, then their place), and the selected
    one. A baseline's tie can rank most of a list first, so "in some system's top ten" could still be all of it."""
    if count <= CHARTED_TOP:
        return list(range(count))
    systems = [np.asarray(r, dtype=float) for r in ranks.values()]
    order = sorted(range(count), key=lambda i: (min(r[i] for r in systems), sum(r[i] for r in systems), i))
    return sorted({*order[:CHARTED_TOP], selected})


def rank_shift_chart(ranks: Mapping[str, Sequence[int]], candidates: Sequence[str], selected: int,
                     disagreement: Sequence[int]) -> Spec:
    """A bump chart: one line per candidate across systems (models, then baselines), rank 1 on top; of a long list,
    the candidates of `charted_candidates`."""
    systems = list(ranks)
    drawn = charted_candidates(ranks, len(candidates), selected)
    rows = [{"system": system, "rank": int(ranks[system][index]), "candidate": f"#{index + 1}",
             "text": short(candidates[index], 80), "selected": index == selected, "spread": int(disagreement[index])}
            for index in drawn for system in systems]
    count = len(candidates)
    color: Spec = {"field": "candidate", "type": "nominal", "sort": [f"#{i + 1}" for i in drawn],
                   "scale": {"scheme": "tableau10" if len(drawn) <= 10 else "category20"},
                   "legend": {"title": "candidate", "orient": "right", "labelLimit": 0} if len(drawn) <= 20 else None}
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "data": {"values": rows},
        "mark": {"type": "line", "point": {"size": 60}},
        "encoding": {
            "x": {"field": "system", "type": "nominal", "sort": systems, "title": None,
                  "axis": {"labelAngle": -60, "labelLimit": 0, "labelOverlap": False}},
            "y": {"field": "rank", "type": "quantitative", "title": "rank (1 = best)",
                  "scale": {"reverse": True, "domain": [1, max(count, 2)], "nice": False},
                  "axis": {"tickMinStep": 1, "format": "d"}},
            "color": color, "detail": {"field": "candidate", "type": "nominal"},
            "strokeWidth": {"condition": {"test": "datum.selected", "value": 5}, "value": 1.5},
            "opacity": {"condition": {"test": "datum.selected", "value": 1.0}, "value": 0.8},
            "tooltip": [{"field": "candidate", "type": "nominal"}, {"field": "system", "type": "nominal"},
                        {"field": "rank", "type": "quantitative"},
                        {"field": "spread", "type": "quantitative", "title": "rank spread across models"},
                        {"field": "text", "type": "nominal", "title": "text"}],
        },
        "height": min(max(220, 30 * count), 600),
        "title": _title_spec("Rank per system", "one line per candidate; rank 1 on top" if len(drawn) == count else
                             f"the {len(drawn)} of {count} candidates ranked best by some system (every one is in "
                             "the table); rank 1 on top"),
    }


# ---------------------------------------------------------------- Attention page

def attention_chart(tokens: Sequence[Token], weights: np.ndarray, heading: str, subtitle: str | None = None
                    ) -> Spec:
    """Horizontal bars, one per word in text order, with the uniform weight 1/n as a rule."""
    n = len(weights)
    values = np.asarray(weights, dtype=float).tolist()
    rows = [{"position": i + 1, "word": t.text, "label": f"{i + 1}. {short(t.text, 24)}", "weight": w,
             "times uniform": w * n, "kind": "unknown word" if t.unknown else "known word"}
            for i, (t, w) in enumerate(zip(tokens[:n], values, strict=True))]
    uniform = 1.0 / max(n, 1)
    rule = {"data": {"values": [{"uniform": uniform, "what": f"uniform 1/n = {uniform:.3f}"}]},
            "mark": {"type": "rule", "color": NEGATIVE, "size": 2, "strokeDash": [6, 4]},
            "encoding": {"x": {"field": "uniform", "type": "quantitative"},
                         "tooltip": [{"field": "what", "type": "nominal"}]}}
    return _word_bars(
        rows, x={"field": "weight", "type": "quantitative", "title": "weight",
                 "axis": {"format": ".2f", "labelOverlap": True, "labelFlush": True}},
        color={"field": "kind", "type": "nominal",
               "scale": {"domain": ["known word", "unknown word"], "range": [ACCENT, UNKNOWN]},
               # The legend only where it tells something: a text with an unknown word.
               "legend": {"title": None, "orient": "bottom", "direction": "vertical", "labelLimit": 0}
               if any(row["kind"] == "unknown word" for row in rows) else None},
        tooltip=[{"field": "position", "type": "quantitative"}, {"field": "word", "type": "nominal"},
                 {"field": "weight", "type": "quantitative", "format": ".4f"},
                 {"field": "times uniform", "type": "quantitative", "format": ".2f"},
                 {"field": "kind", "type": "nominal"}],
        label_limit=150, row_px=ROW_PX, rule=rule, heading=heading, subtitle=subtitle)


def effect_domain(*row_lists: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """One x range for deletion charts shown side by side (0 always inside), so equal bars mean equal effects."""
    effects = [float(r["effect"]) for rows in row_lists for r in rows if r["effect"] is not None]
    return min(0.0, *effects), max(0.0, *effects)


def deletion_chart(rows: Sequence[Mapping[str, Any]], heading: str, subtitle: str | None = None,
                   domain: tuple[float, float] | None = None) -> Spec:
    """Word-deletion effects: one bar per word in text order, green where the word raised the score;
    `domain` fixes the x range (two charts on one scale, `effect_domain`)."""
    bars = [{"position": int(r["position"]), "word": str(r["word"]), "effect": float(r["effect"]),
             "rank": _plain(r["rank"]), "rank after": _plain(r["rank after"]),
             "label": f"{int(r['position'])}. {short(str(r['word']), 24)}",
             "direction": "raises the score" if r["effect"] >= 0 else "lowers the score"}
            for r in rows if r["effect"] is not None]
    rule = {"data": {"values": [{"x": 0.0}]}, "mark": {"type": "rule", "color": "#374151"},
            "encoding": {"x": {"field": "x", "type": "quantitative"}}}
    return _word_bars(
        bars, x={"field": "effect", "type": "quantitative", "title": "score - score without the word",
                 **({"scale": {"domain": list(domain), "nice": False}} if domain else {})},
        color={"field": "direction", "type": "nominal",
               "scale": {"domain": ["raises the score", "lowers the score"], "range": [POSITIVE, NEGATIVE]},
               "legend": {"title": None, "orient": "bottom", "columns": 1}},
        tooltip=[{"field": "position", "type": "quantitative"}, {"field": "word", "type": "nominal"},
                 {"field": "effect", "type": "quantitative", "format": "+.4f"},
                 {"field": "rank", "type": "quantitative", "title": "rank with the word"},
                 {"field": "rank after", "type": "quantitative", "title": "rank without it"}],
        label_limit=220, row_px=24, rule=rule, heading=heading, subtitle=subtitle)


def randomisation_chart(rows: Sequence[Mapping[str, Any]], heading: str, subtitle: str | None = None
                        ) -> alt.Chart:
    """Rank correlation with the trained model after each cascading randomisation step."""
    data = pd.DataFrame(rows)
    steps = data.drop_duplicates("step")
    labels = {int(r["step"]): f"{int(r['step'])}. {r['layer']}" for _, r in steps.iterrows()}
    data["after"] = [labels[int(s)] for s in data["step"]]
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("after:N", sort=[labels[k] for k in sorted(labels)], title="randomised down to (cascading)",
                axis=alt.Axis(labelAngle=0, labelLimit=200, labelOverlap=False)),
        y=alt.Y("value:Q", title="rank correlation / share kept", scale=alt.Scale(domain=[-1, 1])),
        color=alt.Color("measure:N", legend=alt.Legend(title=None, orient="right", labelLimit=200)),
        tooltip=["after:N", "measure:N", alt.Tooltip("value:Q", format="+.3f")],
    ).properties(height=300, title=title(heading, subtitle))


def curves_chart(points: Sequence[Mapping[str, Any]], model: str) -> alt.Chart:
    """One model's deletion curves: comprehensiveness (solid) and sufficiency (dashed) per share of words cut,
    one colour per word order."""
    rows = [p for p in points if p["model"] == model]
    data = pd.DataFrame(rows).melt(id_vars=["model", "order", "fraction"],
                                   value_vars=["comprehensiveness", "sufficiency"], var_name="measure",
                                   value_name="score drop")
    # Only the orders this model has (no "attention" line for a model without attention), each in its colour.
    colours = {"attention": ACCENT, "deletion effect": POSITIVE, "random": GREY}
    orders = [order for order in colours if order in set(data["order"])]
    return alt.Chart(data).mark_line(point=True).encode(
        x=alt.X("fraction:Q", title="top k% of the words", axis=alt.Axis(format="%", tickCount=5)),
        y=alt.Y("score drop:Q", title="score - edited score"),
        color=alt.Color("order:N", title="words ordered by",
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=0),
                        scale=alt.Scale(domain=orders, range=[colours[order] for order in orders])),
        # No legend for the dashes: beside the colours' it was cut ("compr...") in a third of the page and drew
        # dots, not dashes; the page's caption above the charts says solid and dashed, as the tooltip does.
        strokeDash=alt.StrokeDash("measure:N", title=None, legend=None,
                                  scale=alt.Scale(domain=["comprehensiveness", "sufficiency"],
                                                  range=[[1, 0], [5, 4]])),
        tooltip=["order:N", "measure:N", alt.Tooltip("fraction:Q", format="%"),
                 alt.Tooltip("score drop:Q", format="+.3f")],
    ).properties(height=240, title=title(model))


# ---------------------------------------------------------------- Interactions page

def _axis_labels(tokens: Sequence[Token], seen: int, shown: int) -> list[str]:
    labels = []
    for index, token in enumerate(tokens[:shown]):
        text = plotly_text(short(token.text, 18))
        if index >= seen:
            text = f"<span style='color:{GREY}'>{text}</span>"
        elif token.unknown:
            text = f"<i>{text}</i>"
        labels.append(text)
    return labels


def interaction_heatmap(matrix: np.ndarray, question_tokens: Sequence[Token], answer_tokens: Sequence[Token],
                        outlines: Sequence[Outline], title: str, show_cells: bool = True,
                        zero_centered: bool = True, limit: float | None = None) -> go.Figure:
    """Question tokens down, answer tokens across; the given cells outlined and labelled.

    Unseen (truncated) tokens are appended as grey, empty rows/columns (up to
    MAX_TRUNCATED_SHOWN of each) so the reader sees where the model stopped reading.
    `limit` fixes the colour scale at [-limit, limit] (two heatmaps on one scale).
    """
    m, n = matrix.shape
    extra_rows = min(len(question_tokens) - m, MAX_TRUNCATED_SHOWN)
    extra_cols = min(len(answer_tokens) - n, MAX_TRUNCATED_SHOWN)
    rows, cols = m + extra_rows, n + extra_cols
    z = np.full((rows, cols), np.nan)
    z[:m, :n] = matrix
    hover = np.empty((rows, cols), dtype=object)
    for i in range(rows):
        q = plotly_text(short(question_tokens[i].text, 30))
        for j in range(cols):
            a = plotly_text(short(answer_tokens[j].text, 30))
            if i < m and j < n:
                hover[i, j] = f"question {i + 1}: {q}<br>answer {j + 1}: {a}<br>value {matrix[i, j]:.4f}"
            else:
                hover[i, j] = f"question {i + 1}: {q}<br>answer {j + 1}: {a}<br>not seen (truncated)"
    if limit is None:
        limit = float(np.nanmax(np.abs(matrix))) if matrix.size else 1.0
    limit = limit if limit > 0 else 1.0
    # A matrix of no negative values (exact match, alignment weights) that is not put on a scale around 0
    # gets a white-to-red scale from 0: on the diverging scale its zeros would be the darkest blue, and "no
    # match" would look like a strong negative.
    sequential = not zero_centered and (not matrix.size or float(np.nanmin(matrix)) >= 0)
    scale = ({"colorscale": "RdBu", "reversescale": True, "zmid": 0, "zmin": -limit, "zmax": limit} if zero_centered
             else {"colorscale": "Reds", "zmin": 0, "zmax": limit} if sequential
             else {"colorscale": "RdBu", "reversescale": True})
    heat = go.Heatmap(z=z, x=list(range(cols)), y=list(range(rows)), text=hover, hoverinfo="text",
                      hovertemplate="%{text}<extra></extra>", **scale,
                      colorbar={"title": {"text": "value"}, "thickness": 14}, xgap=1, ygap=1)
    # Shapes and labels go in as one list each: figure.add_shape per cell copies the layout's
    # list every time, and was most of a page run's CPU for a matrix with many pooled cells.
    shapes = [{"type": "rect", "x0": -0.5, "x1": cols - 0.5, "y0": i - 0.5, "y1": i + 0.5, "fillcolor": GREY,
               "opacity": 0.35, "line": {"width": 0}, "layer": "below"} for i in range(m, rows)]
    shapes += [{"type": "rect", "x0": j - 0.5, "x1": j + 0.5, "y0": -0.5, "y1": rows - 0.5, "fillcolor": GREY,
                "opacity": 0.35, "line": {"width": 0}, "layer": "below"} for j in range(n, cols)]
    # Rank labels of neighbouring cells must not run into each other ("5 8 9 10"): the label shrinks
    # with the cell width the page allows (see MAX_SIDE_BY_SIDE_COLUMNS).
    label_px = 13 if cols <= 12 else 11 if cols <= MAX_SIDE_BY_SIDE_COLUMNS else 10
    annotations = []
    if show_cells:
        for cell in outlines:
            shapes.append({"type": "rect", "x0": cell.j - 0.5, "x1": cell.j + 0.5, "y0": cell.i - 0.5,
                           "y1": cell.i + 0.5, "line": {"color": "#111827", "width": 2.5},
                           "fillcolor": "rgba(0,0,0,0)"})
            annotations.append({"x": cell.j, "y": cell.i, "text": f"<b>{cell.label}</b>", "showarrow": False,
                                "font": {"color": "#111827", "size": label_px}, "bgcolor": "rgba(255,255,255,0.75)",
                                "borderpad": 0})
    figure = go.Figure(heat, layout={"shapes": shapes, "annotations": annotations})
    cell_px = 34 if rows <= 12 else 26 if rows <= 30 else 18
    tick_font = {"size": 12 if cols <= 30 else 10}
    figure.update_layout(
        title={"text": plotly_text(title), "font": {"size": 15}, "x": 0, "xanchor": "left", "y": 1.0,
               "yanchor": "top", "yref": "container", "pad": {"t": 12}},
        height=int(min(max(300, 190 + cell_px * rows), 1150)),
        margin={"l": 10, "r": 10, "t": 150, "b": 10},
        xaxis={"tickmode": "array", "tickvals": list(range(cols)), "ticktext": _axis_labels(answer_tokens, n, cols),
               "side": "top", "tickangle": -60 if cols <= 30 else -90, "showgrid": False, "tickfont": tick_font,
               "range": [-0.5, cols - 0.5]},
        yaxis={"tickmode": "array", "tickvals": list(range(rows)),
               "ticktext": _axis_labels(question_tokens, m, rows), "autorange": "reversed",
               "showgrid": False},
        plot_bgcolor="white")
    return figure


# ---------------------------------------------------------------- Pooled cells page

def default_pair(names: Sequence[str], attention: Sequence[str]) -> list[str]:
    """Two models worth comparing first: one without attention and one with (else the first two)."""
    plain = [n for n in names if n not in attention]
    attending = [n for n in names if n in attention]
    if plain and attending:
        return [plain[0], attending[-1]]
    return list(names[:2])


def side_models(names: Sequence[str], attention: Sequence[str], kept: Sequence[str | None]) -> list[str]:
    """The model of each side (two): the one `kept` there (a link's or the page's choice) where it is among `names`,
    else `default_pair`'s, never the model the other side already shows while another is at hand (a link naming one
    side's model, the attending one that `default_pair` puts on the other side, showed it twice)."""
    pair = default_pair(names, attention)
    sides: list[str | None] = [name if name in names else None for name in kept[:2]]
    sides += [None] * (2 - len(sides))
    for side in (0, 1):
        if sides[side] is None:
            other = sides[1 - side]
            preferred = [*pair[side:side + 1], *pair, *names]
            sides[side] = next((name for name in preferred if name != other), preferred[0] if preferred else None)
    return [str(name) for name in sides if name is not None]


def share_chart(rows: Sequence[Mapping[str, Any]], heading: str, subtitle: str | None = None) -> alt.LayerChart:
    """Each pooled cell's signed share of the score, one bar per cell in pooling order."""
    data = pd.DataFrame(rows)
    multi = data["matrix"].nunique() > 1
    data["cell"] = [
        (f"{r['matrix'].replace('slice ', 's')} #{r['pooling rank']}: " if multi else f"#{r['pooling rank']}: ")
        + (short(f"{r['question word']} × {r['answer word']}", 34) if r["question word"] != "(filler)" else "(filler)")
        for r in rows]
    data["direction"] = np.where(data["share"] >= 0, "raises the score", "lowers the score")
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y("cell:N", sort=data["cell"].tolist(), title=None, axis=alt.Axis(labelLimit=180, labelOverlap=False)),
        x=alt.X("share:Q", title="signed share", axis=alt.Axis(format="%", labelOverlap=True, labelFlush=True)),
        color=alt.Color("direction:N", scale=alt.Scale(domain=["raises the score", "lowers the score"],
                                                       range=[POSITIVE, NEGATIVE]),
                        legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=0)),
        tooltip=[alt.Tooltip("matrix:N"), alt.Tooltip("pooling rank:Q"), alt.Tooltip("question word:N"),
                 alt.Tooltip("answer word:N"), alt.Tooltip("value:Q", format=".4f"),
                 alt.Tooltip("contribution:Q", format="+.4f"), alt.Tooltip("share:Q", format="+.1%")])
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#374151").encode(x="x:Q")
    return (bars + zero).properties(height=max(120, ROW_PX * len(data)), title=title(heading, subtitle))


# ---------------------------------------------------------------- Models page

def training_curves(log: Sequence[Mapping[str, Any]], name: str) -> tuple[alt.Chart, alt.LayerChart]:
    """(training loss per epoch, dev MAP per epoch with the kept epoch marked)."""
    data = pd.DataFrame([{"epoch": int(e["epoch"]), "train loss": float(e["train_loss"]),
                          "dev MAP": float(e["dev_MAP"]), "kept": bool(e.get("selected"))} for e in log])
    base = alt.Chart(data).encode(x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1, format="d")))
    loss = base.mark_line(point=True, color=ACCENT).encode(
        y=alt.Y("train loss:Q", scale=alt.Scale(zero=False)),
        tooltip=["epoch:Q", alt.Tooltip("train loss:Q", format=".4f")]).properties(
        title=title("training loss", name), height=240)
    dev = base.mark_line(point=True, color=POSITIVE).encode(
        y=alt.Y("dev MAP:Q", scale=alt.Scale(zero=False)),
        tooltip=["epoch:Q", alt.Tooltip("dev MAP:Q", format=".4f"), "kept:N"])
    kept = base.transform_filter("datum.kept").mark_point(size=220, shape="diamond", filled=True,
                                                           color=NEGATIVE).encode(
        y="dev MAP:Q", tooltip=["epoch:Q", alt.Tooltip("dev MAP:Q", format=".4f")])
    return loss, (dev + kept).properties(title=title("dev MAP", f"{name}; diamond = kept epoch"), height=240)


def metrics_chart(rows: Sequence[Mapping[str, Any]], metric: str, heading: str) -> alt.Chart:
    """One bar per system: the model first, then the baselines (grey) and the paper's figure (amber)."""
    data = pd.DataFrame([{"system": r["system"], metric: r[metric],
                          "kind": "paper" if str(r["system"]).startswith("paper") else
                          "model" if index == 0 else "baseline"}
                         for index, r in enumerate(rows) if r.get(metric) is not None])
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("system:N", sort=data["system"].tolist(), title=None, axis=alt.Axis(labelLimit=240)),
        x=alt.X(f"{metric}:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("kind:N", scale=alt.Scale(domain=["model", "baseline", "paper"],
                                                  range=[ACCENT, GREY, UNKNOWN]), legend=None),
        tooltip=["system:N", alt.Tooltip(f"{metric}:Q", format=".4f")],
    ).properties(height=30 * len(data) + 10, title=title(heading))


# ---------------------------------------------------------------- Walkthrough page

def shared_limit(*values: np.ndarray) -> float:
    """The largest magnitude over all of `values`: one colour scale for strips shown side by side."""
    return max((float(np.abs(v).max()) for v in values if v.size), default=1.0)


def vector_strips(values: np.ndarray, labels: Sequence[str], heading: str, subtitle: str | None = None,
                  highlight: Sequence[int] = (), columns: Sequence[str] | None = None,
                  limit: float | None = None) -> alt.Chart:
    """One strip per row of `values` (a word, a position): each number a cell, blue below zero, red above.
    `columns` names the values (named channels) instead of numbering them. `limit` is the value of the darkest
    colour (default: the largest magnitude in `values`); charts shown side by side pass one (`shared_limit`), so
    the same colour means the same value in each."""
    rows, size = values.shape
    names = list(columns) if columns is not None else [str(c + 1) for c in range(size)]
    data = pd.DataFrame([{"row": labels[r], "index": names[c], "value": float(values[r, c]),
                          "marked": r in highlight} for r in range(rows) for c in range(size)])
    if limit is None:
        limit = shared_limit(values)
    # Every channel's name on the axis (Vega would hide the ones that overlap): turned upright, one per cell. At
    # 11 px: in the projector's 17 px the upright names ran out of the drawing, cut at both ends.
    x_axis = (alt.X("index:N", sort=names, title=None,
                    axis=alt.Axis(labelAngle=-90, labelLimit=200, labelOverlap=False, labelFontSize=11))
              if columns is not None else
              alt.X("index:O", sort=names, title="the value" if size == 1 else f"the {size} values",
                    axis=alt.Axis(labels=size <= 20, ticks=False)))
    strips = alt.Chart(data).mark_rect().encode(
        x=x_axis,
        y=alt.Y("row:N", sort=list(labels), title=None,
                axis=alt.Axis(labelLimit=170, labelOverlap=False, labelFlush=False)),
        color=alt.Color("value:Q", scale=alt.Scale(scheme="redblue", reverse=True, domain=[-limit, limit or 1.0]),
                        legend=alt.Legend(title="value", orient="bottom", direction="horizontal",
                                          gradientLength=220)),
        stroke=alt.condition("datum.marked", alt.value("#111827"), alt.value(None)),
        tooltip=[alt.Tooltip("row:N", title="word"),
                 alt.Tooltip("index:N", title="channel" if columns is not None else "value #"),
                 alt.Tooltip("value:Q", format=".4f")])
    return strips.properties(height=max(40, ROW_PX * rows), title=title(heading, subtitle))


def waterfall_chart(rows: Sequence[Mapping[str, Any]], score: float, heading: str,
                    total: str = "score") -> alt.LayerChart:
    """Bars from 0 to the score: each part starts where the previous one ended; the last bar, named
    `total`, is the score itself (or what else the parts add up to, e.g. a gap between two scores)."""
    data = pd.DataFrame(rows)
    data["label"] = [short(str(p), 48) for p in data["part"]]
    data["direction"] = np.where(data["amount"] >= 0, f"raises the {total}", f"lowers the {total}")
    order = data["label"].tolist() + [total]
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=260, labelOverlap=False)),
        x=alt.X("start:Q", title="running total"), x2="end:Q",
        color=alt.Color("direction:N", scale=alt.Scale(domain=[f"raises the {total}", f"lowers the {total}"],
                                                       range=[POSITIVE, NEGATIVE]),
                        legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=0)),
        tooltip=[alt.Tooltip("part:N"), alt.Tooltip("amount:Q", format="+.4f"),
                 alt.Tooltip("end:Q", title="running total", format="+.4f")])
    end = alt.Chart(pd.DataFrame({"label": [total], "start": [0.0], "end": [score]})).mark_bar(
        color=ACCENT).encode(y=alt.Y("label:N", sort=order), x="start:Q", x2="end:Q",
                             tooltip=[alt.Tooltip("end:Q", title=total, format="+.4f")])
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(color="#374151").encode(x="x:Q")
    return (bars + end + zero).properties(height=ROW_PX * (len(data) + 1), title=title(heading))


def hidden_units_chart(hidden: np.ndarray, heading: str) -> alt.Chart:
    """The MLP's hidden pre-activations, one bar per unit; the active ones (above zero) pass on."""
    data = pd.DataFrame({"unit": np.arange(1, len(hidden) + 1), "pre-activation": hidden.astype(float),
                         "state": np.where(hidden > 0, "active (passes its value)", "off (gives 0)")})
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("unit:O", title="hidden unit", axis=alt.Axis(labelAngle=0, labelOverlap=True)),
        y=alt.Y("pre-activation:Q", title="W q + b"),
        color=alt.Color("state:N", scale=alt.Scale(domain=["active (passes its value)", "off (gives 0)"],
                                                   range=[ACCENT, GREY]),
                        legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=0)),
        tooltip=["unit:O", alt.Tooltip("pre-activation:Q", format="+.4f"), "state:N"],
    ).properties(height=200, title=title(heading))


def scores_chart(scores: Sequence[float], ranks: Sequence[int], chosen: int, heading: str,
                 subtitle: str | None = None) -> alt.Chart:
    """Every candidate's score, best first; the explained candidate in the accent colour."""
    data = pd.DataFrame({"candidate": [f"#{i + 1}" for i in range(len(scores))], "score": list(scores),
                         "rank": list(ranks), "this one": [i == chosen for i in range(len(scores))]})
    data = data.sort_values("rank", kind="stable")
    return alt.Chart(data).mark_bar().encode(
        y=alt.Y("candidate:N", sort=data["candidate"].tolist(), title=None),
        x=alt.X("score:Q", title="score"),
        color=alt.condition("datum['this one']", alt.value(ACCENT), alt.value(GREY)),
        tooltip=["candidate:N", "rank:Q", alt.Tooltip("score:Q", format="+.4f")],
    ).properties(height=max(60, ROW_PX * len(data)), title=title(heading, subtitle))
