"""Every Explanation is consistent with itself and with the model that produced it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import VARIANTS, MatcherFactory, assert_explanation_invariants
from hypothesis import given
from hypothesis import strategies as st

from matching.explain.explanation import matrix_names
from matching.explain.matcher import Matcher
from matching.models.parts import Part

QUESTION = "Who wrote Hamlet , the zzqxv play ?"
CANDIDATES = [
    "Shakespeare",  # 8 x 1 = 8 real cells (more than k = 5)
    "Hamlet was written by William Shakespeare around 1600 .",
    "qqzvx wwkzq",  # only unknown words
    " ".join(f"word{n}" for n in range(30)),  # longer than max_answer_len: truncated
]

WORDS = ["the", "who", "wrote", "hamlet", "play", "paris", "tower", "is", "of", "a", "zzqxv", "qqzvx", "?", ","]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=20).map(" ".join)


def test_explanations_of_every_variant(variant_matcher: Matcher) -> None:
    explanations = variant_matcher.explain(QUESTION, CANDIDATES)
    assert len(explanations) == len(CANDIDATES)
    for explanation in explanations:
        assert explanation.model == variant_matcher.name
        assert_explanation_invariants(explanation, variant_matcher)
    assert [t.truncated for t in explanations[3].answer_tokens] == [n >= 16 for n in range(30)]
    assert all(t.unknown for t in explanations[2].answer_tokens)


@pytest.mark.parametrize("attention", ["question", "answer", "both"])
@pytest.mark.parametrize("scaling", ["none", "length"])
def test_attention_sums_to_one_over_seen_tokens(make_matcher: MatcherFactory, attention: str,
                                                 scaling: str) -> None:
    matcher = make_matcher(family="amvlstm", attention=attention, attention_scaling=scaling)
    long_question = " ".join(["who", "wrote", "hamlet"] * 6)  # 18 tokens, 12 seen
    for question in (QUESTION, long_question, "hamlet"):
        for explanation in matcher.explain(question, CANDIDATES):
            assert_explanation_invariants(explanation, matcher)
            for alpha, seen in ((explanation.question_attention, explanation.seen_question_tokens),
                                (explanation.answer_attention, explanation.seen_answer_tokens)):
                if alpha is not None:
                    assert len(alpha) == len(seen)
                    assert alpha.sum() == pytest.approx(1.0, abs=1e-5) and (alpha >= 0).all()


@pytest.mark.parametrize("interaction", ["cosine", "bilinear", "tensor"])
def test_fillers_when_a_matrix_has_fewer_than_k_cells(make_matcher: MatcherFactory, interaction: str) -> None:
    matcher = make_matcher(k=10, filler_value=0.25, interaction=interaction)
    short, wide = matcher.explain("hamlet", ["william shakespeare", "hamlet was written by shakespeare in 1600"])
    assert_explanation_invariants(short, matcher)
    assert_explanation_invariants(wide, matcher)
    for name in matrix_names(matcher.params):
        cells = [c for c in short.pooled_cells if c.matrix == name]
        assert [c.filler for c in cells] == [False, False] + [True] * 8  # 1 x 2 = 2 real cells
        assert {(c.i, c.j) for c in cells[:2]} == {(0, 0), (0, 1)}
        assert all(c.value == 0.25 and c.i is None and c.j is None for c in cells[2:])
    # 1 x 7 = 7 real cells: 3 fillers per matrix.
    assert sum(c.filler for c in wide.pooled_cells) == 3 * matcher.params.matrix_count


@pytest.mark.parametrize("variant", ["cosine", "tensor", "amv-both-tensor"])
@given(question=sentence, candidates=st.lists(sentence, min_size=1, max_size=4))
def test_invariants_on_random_texts(make_matcher: MatcherFactory, variant: str, question: str,
                                    candidates: list[str]) -> None:
    matcher = make_matcher(seed=3, **VARIANTS[variant])
    for explanation in matcher.explain(question, candidates):
        assert_explanation_invariants(explanation, matcher)


def test_explanation_scores_equal_plain_scores(variant_matcher: Matcher) -> None:
    explanations = variant_matcher.explain(QUESTION, CANDIDATES)
    q_tokens = explanations[0].question_tokens
    scores = variant_matcher.score_tokens([q_tokens] * len(CANDIDATES), [e.answer_tokens for e in explanations],
                                          batch_size=3)
    np.testing.assert_allclose(scores, [e.score for e in explanations], atol=1e-5, rtol=0)


def test_to_dict_is_json_and_shares_are_signed_fractions(variant_matcher: Matcher) -> None:
    explanation = variant_matcher.explain(QUESTION, CANDIDATES[:2])[1]
    data = json.loads(json.dumps(explanation.to_dict()))
    params = variant_matcher.params
    assert data["score"] == explanation.score
    assert data["cell_bias"] == explanation.cell_bias and data["family"] == params.family
    assert data["answer_tokens"][0]["text"] == "Hamlet"
    for name in matrix_names(params):  # none for a family whose texts never meet in a matrix
        assert np.asarray(data["interaction_matrices"][name]).shape == (
            len(explanation.seen_question_tokens), len(explanation.seen_answer_tokens))
    if not explanation.has(Part.POOLED_CELLS):
        assert data["pooled_cells"] == [] and not explanation.shares().any()
        return
    assert len(data["pooled_cells"]) == params.pooled_size  # type: ignore[attr-defined]
    shares = explanation.shares()
    assert np.abs(shares).sum() == pytest.approx(1.0)
    contributions = np.array([c.contribution for c in explanation.pooled_cells])
    assert (np.sign(shares) == np.sign(contributions)).all()


def test_pool_directions_pools_the_shown_direction_matrices(make_matcher: MatcherFactory) -> None:
    """With pool_directions the forward/backward cosine matrices are pooled too, and they are
    the very matrices otherwise shown for display (one pass, no re-derivation)."""
    matcher = make_matcher(seed=3, family="amvlstm", attention="question", pool_directions=True)
    explanation = matcher.explain("who wrote the play hamlet", ["hamlet was written by shakespeare"])[0]
    assert list(explanation.interaction_matrices) == ["cosine", "forward", "backward"]
    assert len(explanation.pooled_cells) == 3 * matcher.params.k
    assert explanation.display_matrices == {}
    unpooled = make_matcher(seed=3, family="amvlstm", attention="question")
    shown = unpooled.explain("who wrote the play hamlet", ["hamlet was written by shakespeare"])[0]
    assert list(shown.display_matrices) == ["forward", "backward"]
    for name in ("forward", "backward"):
        cells = [c for c in explanation.pooled_cells if c.matrix == name and not c.filler]
        assert cells and all(explanation.interaction_matrices[name][c.i, c.j] == c.value for c in cells)


@pytest.mark.parametrize("variant", ["cosine-exact", "amv-question-exact-idf", "amv-both-exact-attention"])
def test_exact_match_channel_is_an_interaction_matrix(variant: str, make_matcher: MatcherFactory) -> None:
    from matching.explain.matrix_views import EXACT_MATCH, matrix_view, view_names

    matcher = make_matcher(seed=5, **VARIANTS[variant])
    explanation = matcher.explain("Who wrote Hamlet , the zzqxv play ?",
                                  ["Hamlet , the play , was written by zzqxv ."])[0]
    matrix = explanation.interaction_matrices[EXACT_MATCH]
    q_keys = [t.key for t in explanation.seen_question_tokens]
    a_keys = [t.key for t in explanation.seen_answer_tokens]
    same = np.array([[q == a for a in a_keys] for q in q_keys])
    # Zero wherever the lookup keys differ; with binary or IDF weights, non-zero wherever they are
    # equal (unknown words included); attention weights may zero a shared word (sparse gate).
    assert (matrix[~same] == 0).all() and same.any()
    if variant != "amv-both-exact-attention":
        assert (matrix[same] > 0).all()
    if variant == "cosine-exact":
        assert set(np.unique(matrix)) <= {0.0, 1.0}
    if variant == "amv-question-exact-idf":  # the table's common words weigh less than unseen ones
        the, hamlet = q_keys.index("the"), q_keys.index("hamlet")
        assert 0 < matrix[the].max() < matrix[hamlet].max() == 1.0
    assert EXACT_MATCH in view_names(explanation)
    view = matrix_view(explanation, EXACT_MATCH)
    assert not view.zero_centered and (view.matrix == matrix).all()
    assert any(c.matrix == EXACT_MATCH and not c.filler for c in explanation.pooled_cells)
    assert_explanation_invariants(explanation, matcher)


def test_traced_explanations_are_built_on_demand_and_equal_the_eager_ones(variant_matcher: Matcher) -> None:
    """A ranking cuts each candidate's explanation from the trace only when it is read; what it
    cuts is the same as building all of them at once (scores, cells, steps)."""
    from matching.text.tokens import tokenize

    question = tokenize("who wrote the book")
    answers = [tokenize("the book was written by austen"), tokenize("a city in france"), tokenize("book")]
    traced = variant_matcher.traced(question, answers)
    assert len(traced) == 3 and not traced._built
    eager = variant_matcher.explain_tokens(question, answers)
    second = traced[1]
    assert set(traced._built) == {1} and traced[1] is second
    assert traced[-1] is traced[2]
    np.testing.assert_allclose(traced.scores, [e.score for e in eager], atol=0)
    for built, reference in zip(traced, eager, strict=True):
        assert built.pooled_cells == reference.pooled_cells
        assert built.answer_tokens == reference.answer_tokens
        for name, matrix in reference.interaction_matrices.items():
            np.testing.assert_array_equal(built.interaction_matrices[name], matrix)
        np.testing.assert_array_equal(built.steps.answer.words, reference.steps.answer.words)
    assert [len(e.pooled_cells) for e in traced[0:2]] == [len(eager[0].pooled_cells)] * 2
    with pytest.raises(IndexError):
        traced[3]
