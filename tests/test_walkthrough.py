"""The walkthrough's numbers: each piece of board arithmetic gives back the traced value (to 1e-5)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from matching.explain import walkthrough
from matching.explain.matcher import Matcher
from matching.models.parts import Part, View

QUESTION = "who wrote the novel pride and prejudice"
ANSWER = "pride and prejudice is a novel by jane austen"


@pytest.fixture(scope="module")
def explained(variant_matcher: Matcher):  # type: ignore[no-untyped-def]
    return variant_matcher.explain(QUESTION, [ANSWER, "paris is in france"])[0]


def test_every_cell_worked_out_on_the_board_is_the_traced_cell(variant_matcher: Matcher, explained) -> None:  # type: ignore[no-untyped-def]
    names = [*explained.interaction_matrices, *explained.display_matrices]
    worked = 0
    for name in names:
        matrix = explained.interaction_matrices.get(name, explained.display_matrices.get(name))
        for i, j in ((0, 0), (matrix.shape[0] - 1, matrix.shape[1] - 1), (1, 2)):
            math = walkthrough.cell_math(explained, name, i, j)
            if math is None:
                continue
            worked += 1
            assert math.traced == pytest.approx(float(matrix[i, j]))
            assert abs(math.board - math.traced) < 1e-5, (name, i, j)
            if math.cosine:
                assert math.dot == pytest.approx(float(math.left @ math.right), rel=1e-5, abs=1e-6)
    interaction = getattr(variant_matcher.params, "interaction", None)
    if interaction not in ("bilinear", "tensor") and explained.matrix_products:
        assert worked, "a cosine or dot matrix is always worked out"


def test_softmax_on_the_board_and_the_weight_applied(variant_matcher: Matcher, explained) -> None:  # type: ignore[no-untyped-def]
    scaled = getattr(variant_matcher.params, "attention_scaling", "none") == "length"
    for side in ("question", "answer"):
        rows = walkthrough.gate_rows(explained, side, scaled)
        attended = side in variant_matcher.params.attended_sides
        assert (rows is not None) == attended
        if rows is None:
            continue
        assert walkthrough.softmax_check(rows, getattr(variant_matcher.params, "attention_gate", "softmax")) < 1e-5
        assert sum(r["alpha"] for r in rows) == pytest.approx(1.0, abs=1e-5)
        if explained.has(Part.STATES):  # the gate reads raw words: the gated vectors are the words x the weight
            values = walkthrough.side_values(explained, side)
            factors = np.array([r["weight applied"] for r in rows])
            assert np.allclose(values.gated_words, values.words * factors[:, None], atol=1e-5)


def test_the_waterfall_adds_up_to_the_score_and_the_hidden_units_are_this_pass(variant_matcher: Matcher,
                                                                                explained) -> None:  # type: ignore[no-untyped-def]
    if not explained.has(Part.POOLED_CELLS):  # no MLP over pooled cells: no such step
        assert all(step.view != View.MLP for step in walkthrough.steps_for(explained))
        return
    mlp = walkthrough.mlp_step(explained, bars=5)
    assert mlp.waterfall[0]["start"] == 0.0
    assert mlp.waterfall[-1]["part"] == "bias"
    assert abs(mlp.waterfall[-1]["end"] - explained.score) < 1e-5
    for before, after in zip(mlp.waterfall, mlp.waterfall[1:], strict=False):
        assert after["start"] == before["end"]
    with torch.no_grad():  # the traced pre-activations, through ReLU and the output layer, give the score
        head = variant_matcher.model.head
        replay = float(head.out(torch.relu(torch.from_numpy(mlp.hidden).float()))[0])
        hidden = head.hidden(torch.from_numpy(mlp.inputs)[None])[0].numpy()
    assert abs(replay - explained.learned_score) < 1e-5
    assert [bar["part"] for bar in mlp.waterfall if bar["part"].startswith("keywords: ")] == [
        f"keywords: {name}" for name in explained.keyword_terms]
    assert np.allclose(hidden, mlp.hidden, atol=1e-5)
    assert mlp.active.dtype == bool and (mlp.active == (mlp.hidden > 0)).all()


def test_pooling_rows_keep_the_pooling_order_with_the_running_list(explained) -> None:  # type: ignore[no-untyped-def]
    for group in walkthrough.pooled_groups(explained):
        rows = walkthrough.pooling_rows(explained, group)
        assert [r["order"] for r in rows] == list(range(1, len(rows) + 1))
        assert rows[-1]["kept so far"].count(",") == len(rows) - 1
        if all(c.window is None for c in explained.pooled_cells):  # k-max: decreasing values
            values = [r["value"] for r in rows if not r["filler"]]
            assert values == sorted(values, reverse=True)


def test_states_and_the_same_word_at_two_positions(explained) -> None:  # type: ignore[no-untyped-def]
    found = walkthrough.states(explained, "question")
    if not explained.has(Part.STATES):  # no recurrent states: no such step in this model's walkthrough
        assert found is None and all(step.view != View.STATES for step in walkthrough.steps_for(explained))
        return
    assert list(found) == list(explained.descriptor.state_directions)
    widths = {values.shape for values in found.values()}
    assert len(widths) == 1 and next(iter(widths))[0] == len(explained.seen_question_tokens)
    same = walkthrough.same_word(explained)
    assert same is not None and same.word == "novel" and same.first == ("question", 3)
    assert same.second == ("answer", 5)
    if "cosine" in explained.interaction_matrices:
        assert same.cosine == pytest.approx(float(explained.interaction_matrices["cosine"][3, 5]))


def test_problems_show_up_at_the_step_where_they_matter(make_matcher) -> None:  # type: ignore[no-untyped-def]
    matcher = make_matcher(family="amvlstm", attention="both", attention_scaling="none")
    one_word = matcher.explain("austen", ["jane austen wrote it"])[0]
    assert any("one word" in p for p in walkthrough.problems(one_word, "gate"))
    assert any("one word" in p for p in walkthrough.problems(one_word, "states"))
    assert any("filler" in p for p in walkthrough.problems(one_word, "pooling"))
    assert not walkthrough.problems(one_word, "words")
    unknown = matcher.explain("zxqv wvvq", ["qqzx vvwz"])[0]
    assert any("Every word of the question is unknown" in p for p in walkthrough.problems(unknown, "vectors"))
    long = matcher.explain("who wrote it", [" ".join(["word"] * 40)])[0]
    assert any("reads only the first 16" in p for p in walkthrough.problems(long, "words"))


def test_each_family_reads_its_own_lead(explained) -> None:  # type: ignore[no-untyped-def]
    steps = {step.key: step for step in walkthrough.steps_for(explained)}
    if not explained.has(Part.POOLED_CELLS):
        assert not any(step.view in (View.POOLING, View.MLP) for step in steps.values())
        return
    pooling = steps["pooling"].lead
    kmax = all(c.window is None for c in explained.pooled_cells)
    assert ("k-max" in pooling) == kmax
    assert ("dynamic pooling" in pooling) != kmax


def test_step_index_is_clamped_to_the_models_own_steps(explained) -> None:  # type: ignore[no-untyped-def]
    steps = walkthrough.steps_for(explained)
    assert walkthrough.step_index(-3, explained) == 0 and walkthrough.step_index(99, explained) == len(steps) - 1
    gated = explained.question_attention is not None or explained.answer_attention is not None
    assert any(step.view == View.GATE for step in steps) == gated
    assert all(walkthrough.applies(explained, step) for step in steps)
    terms = explained.has(Part.TERMS)  # score terms (a keyword term, say): a step of them, just before the rank
    assert any(step.view == View.TERMS for step in steps) == terms and (not terms or steps[-2].view == View.TERMS)
    if explained.has(Part.POOLED_CELLS):
        assert len(steps) == 6 + gated + explained.has(Part.STATES) + terms
    else:  # the family's own steps that apply, and the terms step where the family has none of its own
        own = [step for step in explained.descriptor.steps if walkthrough.applies(explained, step)]
        assert len(steps) == len(own) + (terms and all(step.view != View.TERMS for step in own))
    assert steps[0].view == View.WORDS and steps[-1].view == View.RANK


def test_the_gate_formula_names_the_models_own_gate() -> None:
    from matching.explain.walkthrough import gate_formula

    assert gate_formula("softmax", 4).startswith("alpha_t = exp(V^T w_t)")
    assert "sparsemax" in gate_formula("sparsemax", 4) and "exactly 0" in gate_formula("sparsemax", 4)
    assert "1.5-entmax" in gate_formula("entmax15", 4)


def test_the_terms_step_adds_up_to_the_score(make_matcher) -> None:  # type: ignore[no-untyped-def]
    explained = make_matcher(seed=4, family="mvlstm", keywords=True, keyword_words=3).explain(QUESTION, [ANSWER])[0]
    rows = walkthrough.term_rows(explained)
    assert [r["term"] for r in rows] == ["learned match", "word overlap", "IDF-weighted overlap", "BM25"]
    assert abs(sum(r["value"] for r in rows) - explained.score) < 1e-5
    for row in rows[1:]:  # each keyword feature's term is its weight times its value, as traced
        assert abs(row["feature x"] * row["weight w"] - row["value"]) < 1e-6
    assert rows[1]["feature x"] > 0  # "novel" and "hamlet"-like words are shared with the answer
    bars = walkthrough.terms_waterfall(explained)
    assert bars[0]["start"] == 0.0 and abs(bars[-1]["end"] - explained.score) < 1e-5
    duet = make_matcher(seed=4, family="duet").explain(QUESTION, [ANSWER])[0]
    duet_rows = walkthrough.term_rows(duet)
    assert len(duet_rows) >= 2 and all(set(r) == {"term", "value"} for r in duet_rows)  # no empty columns
    assert abs(sum(r["value"] for r in duet_rows) - duet.score) < 1e-5


def test_the_cell_worked_out_is_of_two_words_where_there_is_one(variant_matcher: Matcher) -> None:
    """The walkthrough's default cell was "? x .", the largest cosine of a question and an answer that end in marks:
    a pair of punctuation marks teaches nothing. It is the first pooled cell of two words where the model pooled one,
    else the first real cell."""
    from matching.explain.trust import is_word

    explanation = variant_matcher.explain("who wrote the novel ? ?", ["it was written by mary shelley . ."])[0]
    real = [c for c in explanation.pooled_cells if not c.filler]
    cell = walkthrough.first_pooled(explanation)
    if not real:
        assert cell is None
        return
    worded = [c for c in real if is_word(explanation.question_tokens[c.i]) and is_word(explanation.answer_tokens[c.j])]
    assert cell == (worded[0] if worded else real[0])
    marks = variant_matcher.explain("? ?", [". ."])[0]
    first = next((c for c in marks.pooled_cells if not c.filler), None)
    assert walkthrough.first_pooled(marks) == first  # every cell of marks: the first real one
