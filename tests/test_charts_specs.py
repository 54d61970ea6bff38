"""Every chart builder the pages draw through `components.chart` gives a valid Vega-Lite spec.

The app skips altair's JSON-schema validation when it builds a spec (once per input, cached);
here each builder's output is validated, for a real explanation of every model variant.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import altair as alt
import numpy as np

from matching.evaluation.tables import cell_rows, strongest
from matching.explain import charts
from matching.explain.deletion import deletion_effects
from matching.explain.matcher import Matcher
from matching.explain.ranking import rank
from matching.text.tokens import tokenize
from matching.training.cards import ModelCard, metrics_rows


def validated(built: alt.TopLevelMixin | tuple[alt.TopLevelMixin, ...] | dict[str, Any]) -> None:
    if isinstance(built, dict):  # a plain spec: read back by altair, which validates it against the schema
        json.dumps(built)  # and it must be JSON as it is sent to the browser
        (alt.LayerChart if "layer" in built else alt.Chart).from_dict(built, validate=True)
        return
    for chart in built if isinstance(built, tuple) else (built,):
        chart.to_dict(validate=True)  # raises on an invalid spec


def test_ranking_and_explanation_charts_are_valid(variant_matcher: Matcher) -> None:
    ranking = rank("who wrote hamlet ?", ["Hamlet is a tragedy by Shakespeare.", "Paris is in France.",
                                         "Shakespeare wrote plays."], {"tiny": variant_matcher})
    ranks = {**{n: r.ranks for n, r in ranking.models.items()}, **ranking.baseline_ranks}
    validated(charts.rank_shift_chart(ranks, ranking.candidates, 0, ranking.disagreement()))
    explanation = ranking.models["tiny"].explanations[0]
    if explanation.pooled_cells:
        rows = cell_rows(explanation)
        validated(charts.share_chart(strongest(rows), "share of the score per cell", "tiny"))
        # One label for the matrix and the rank, as the pooled table's 'cell' column shows it.
        assert all(row["cell"] == f"{row['matrix']} #{row['pooling rank']}" for row in rows)
    for tokens, weights in ((explanation.question_tokens, explanation.question_attention),
                            (explanation.answer_tokens, explanation.answer_attention)):
        if weights is not None:
            validated(charts.attention_chart(tokens, weights, "attention", "tiny"))
    effects = deletion_effects(variant_matcher, ranking.question_tokens, ranking.candidate_tokens, [0])[0]
    for side in ("question", "answer"):
        validated(charts.deletion_chart(effects.rows(side), "each word deleted", "tiny"))
    low, high = domain = charts.effect_domain(effects.rows("question"), effects.rows("answer"))
    shared = charts.deletion_chart(effects.rows("answer"), "each word deleted", "tiny", domain)
    validated(shared)
    assert low <= 0 <= high and all(low <= r["effect"] <= high for side in ("question", "answer")
                                    for r in effects.rows(side) if r["effect"] is not None)
    assert list(domain) in [layer["encoding"]["x"].get("scale", {}).get("domain") for layer in shared["layer"]
                            if "encoding" in layer and "x" in layer["encoding"]]


def test_model_card_charts_are_valid(trained: tuple[Matcher, ModelCard]) -> None:
    _, card = trained
    validated(charts.training_curves(card.log, "tiny"))
    validated(charts.metrics_chart(metrics_rows(card, "dev"), "MAP", "dev MAP"))



def test_the_attention_legend_names_unknown_words_only_when_there_are_some() -> None:
    known = tokenize("who wrote hamlet")
    spec = charts.attention_chart(known, np.full(3, 1 / 3), "attention")
    assert spec["layer"][0]["encoding"]["color"]["legend"] is None
    unknown = [*known[:2], replace(known[2], unknown=True)]
    spec = charts.attention_chart(unknown, np.full(3, 1 / 3), "attention")
    assert spec["layer"][0]["encoding"]["color"]["legend"] is not None
    validated(spec)


def test_deletion_curves_name_only_the_orders_the_model_has() -> None:
    def points(model: str, orders: tuple[str, ...]) -> list[dict[str, object]]:
        return [{"model": model, "order": order, "fraction": f, "comprehensiveness": f, "sufficiency": 1 - f}
                for order in orders for f in (0.0, 0.5, 1.0)]

    plain = charts.curves_chart(points("cdssm", ("deletion effect", "random")), "cdssm").to_dict()
    assert plain["encoding"]["color"]["scale"]["domain"] == ["deletion effect", "random"]
    gated = charts.curves_chart(points("amvlstm-q", ("attention", "deletion effect", "random")), "amvlstm-q")
    validated(gated)
    assert gated.to_dict()["encoding"]["color"]["scale"]["domain"] == ["attention", "deletion effect", "random"]
    # Solid and dashed are said in the page's caption: a second legend beside the colours was cut off.
    assert gated.to_dict()["encoding"]["strokeDash"]["legend"] is None


def test_strips_side_by_side_share_one_colour_scale() -> None:
    """The question's and the answer's strips (Word features, the walkthrough) map one value to one colour."""
    question, answer = np.array([[1.9, -0.4]]), np.array([[0.5, -1.0]])
    limit = charts.shared_limit(question, answer)
    assert limit == 1.9
    for values in (question, answer):
        spec = charts.vector_strips(values, ["w"], "strips", columns=["a", "b"], limit=limit).to_dict()
        assert spec["encoding"]["color"]["scale"]["domain"] == [-1.9, 1.9]
    alone = charts.vector_strips(answer, ["w"], "strips").to_dict()
    assert alone["encoding"]["color"]["scale"]["domain"] == [-1.0, 1.0]  # one chart alone: its own largest value
    assert charts.shared_limit(np.zeros((0, 3))) == 1.0


def test_a_long_lists_bump_chart_draws_the_candidates_some_system_ranks_high(make_matcher) -> None:  # type: ignore[no-untyped-def]
    """Thirty candidates were thirty lines in ten repeated colours with no legend: the ten some system ranks best are
    drawn (and the one explained), each its own colour, with the legend; the title says how many."""
    candidates = [f"candidate {n} is about the roman empire" if n % 3 else f"line {n} on pizza" for n in range(30)]
    ranking = rank("how did the roman empire fall ?", candidates, {"tiny": make_matcher()})
    ranks = {**{n: r.ranks for n, r in ranking.models.items()}, **ranking.baseline_ranks}
    spec = charts.rank_shift_chart(ranks, ranking.candidates, 29, ranking.disagreement())
    validated(spec)
    drawn = charts.charted_candidates(ranks, 30, 29)
    assert 29 in drawn and len(drawn) <= charts.CHARTED_TOP + 1
    best = {i: min(int(r[i]) for r in ranks.values()) for i in range(30)}
    assert max(best[i] for i in drawn if i != 29) <= min(best[i] for i in range(30) if i not in drawn)
    assert {row["candidate"] for row in spec["data"]["values"]} == {f"#{i + 1}" for i in drawn}
    assert spec["encoding"]["color"]["legend"] is not None or len(drawn) > 20
    assert f"the {len(drawn)} of 30 candidates" in str(spec["title"])
    short_list = charts.rank_shift_chart(ranks, ranking.candidates[:5], 0, ranking.disagreement()[:5])
    assert "one line per candidate" in str(short_list["title"])


def test_each_side_of_the_interactions_page_shows_its_own_model() -> None:
    names = ["plain", "gated", "mcan"]
    attention = ["gated", "mcan"]
    assert charts.side_models(names, attention, [None, None]) == ["plain", "mcan"]  # default_pair's
    # A link naming the attending model for one side: the other side shows another model, not the same one twice.
    assert charts.side_models(names, attention, ["mcan", None]) == ["mcan", "plain"]
    assert charts.side_models(names, attention, [None, "plain"]) == ["mcan", "plain"]
    assert charts.side_models(names, attention, ["gated", "gated"]) == ["gated", "gated"]  # both chosen: as chosen
    assert charts.side_models(names, attention, ["gone", None]) == ["plain", "mcan"]  # not among the names
    assert charts.side_models(["only"], [], [None, None]) == ["only", "only"]
