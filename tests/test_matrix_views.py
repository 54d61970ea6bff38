"""The Interactions page's data: every view of every family names a real matrix and outlines real cells."""

from __future__ import annotations

import numpy as np
import pytest

from matching.explain.matcher import Matcher
from matching.explain.matrix_views import CONTRIBUTIONS, WINDOWS, matrix_view, view_names

QUESTION = "who wrote the play hamlet ?"
ANSWER = "hamlet is a tragedy written by william shakespeare around 1600"


def test_every_view_shows_a_seen_matrix_with_cells_inside(variant_matcher: Matcher) -> None:
    explanation = variant_matcher.explain(QUESTION, [ANSWER])[0]
    m, n = len(explanation.seen_question_tokens), len(explanation.seen_answer_tokens)
    names = view_names(explanation)
    if not explanation.interaction_matrices:  # the texts never meet in a matrix: nothing to view
        assert names == []
        return
    assert (names[-1] == CONTRIBUTIONS) == bool(explanation.cell_contributions)
    assert (WINDOWS in names) == any(cell.window is not None for cell in explanation.pooled_cells)
    for name in names:
        view = matrix_view(explanation, name)
        assert view.matrix.shape == (m, n) and np.isfinite(view.matrix).all()
        assert bool(view.outlines) == bool(explanation.pooled_cells or view.name == CONTRIBUTIONS)
        assert all(0 <= o.i < m and 0 <= o.j < n for o in view.outlines)
        assert len({(o.i, o.j) for o in view.outlines}) == len(view.outlines)
        # A caption speaks of outlined cells only where cells are outlined (DUET pools no exact-match cell).
        assert ("outlined:" in view.caption or "outlines" in view.caption) <= bool(view.outlines), view.caption
    with pytest.raises(KeyError):
        matrix_view(explanation, "no such view")


def test_contributions_view_adds_up_to_the_score(variant_matcher: Matcher) -> None:
    explanation = variant_matcher.explain(QUESTION, [ANSWER])[0]
    if not explanation.cell_contributions:  # a score that does not split over cells has no such view
        assert CONTRIBUTIONS not in view_names(explanation)
        return
    view = matrix_view(explanation, CONTRIBUTIONS)
    assert abs(float(view.matrix.sum(dtype=np.float64)) + explanation.cell_bias + explanation.keyword_score
               - explanation.score) < 1e-5
    largest = np.abs(view.matrix).max()
    first = next(o for o in view.outlines if o.label == "1")
    assert abs(view.matrix[first.i, first.j]) == largest


def test_pooling_is_named_for_the_family(variant_matcher: Matcher) -> None:
    from matching.evaluation.tables import pooling_text

    text = pooling_text(variant_matcher.explain(QUESTION, [ANSWER])[0])
    windows = hasattr(variant_matcher.params, "pool_rows")  # dynamic pooling over a grid of windows
    assert text.startswith("Dynamic pooling" if windows else "k-max pooling")


def test_a_matrix_without_negative_values_is_shaded_from_white() -> None:
    from matching.explain.charts import interaction_heatmap
    from matching.text.tokens import tokenize

    question, answer = tokenize("who wrote hamlet"), tokenize("shakespeare wrote hamlet")
    exact = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    heat = interaction_heatmap(exact, question, answer, [], "exact match", zero_centered=False).data[0]
    assert heat.zmin == 0 and heat.zmax == 1 and heat.colorscale[0][1] in ("rgb(255,245,240)", "#fff5f0")
    signed = interaction_heatmap(exact - 0.5, question, answer, [], "cosine").data[0]
    assert heat.colorscale != signed.colorscale and signed.zmid == 0


def test_pooled_cells_that_hold_zero_are_said(make_matcher) -> None:  # type: ignore[no-untyped-def]
    """An exact-match matrix with fewer matches than k: pooling keeps zeros, listed with words that do not match."""
    from matching.evaluation.tables import zero_cells_text

    matcher = make_matcher(seed=1, exact_match="binary")
    explanation = matcher.explain("who wrote hamlet ?", ["shakespeare wrote the play hamlet ."])[0]
    zeros = [c for c in explanation.pooled_cells if not c.filler and c.window is None and c.value == 0.0]
    text = zero_cells_text(explanation)
    assert zeros, "the tiny exact-match matrix has fewer matches than k"
    assert text is not None and text.startswith(f"{len(zeros)} pooled cell") and "exact match" in text
    assert all(c.contribution == 0.0 for c in zeros)  # what the text says: they add nothing
    plain = make_matcher(seed=1).explain("who wrote hamlet ?", ["shakespeare wrote the play hamlet ."])[0]
    assert (zero_cells_text(plain) is None) == (not [c for c in plain.pooled_cells if c.value == 0.0 and not c.filler])
