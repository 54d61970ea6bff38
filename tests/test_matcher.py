"""A candidate's score and explanation do not depend on the batch it is scored in."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
from conftest import VARIANTS, MatcherFactory
from hypothesis import given
from hypothesis import strategies as st

from matching.explain.explanation import Explanation
from matching.explain.matcher import Matcher, flag_tokens
from matching.text.tokens import TextError, tokenize

ATOL = 1e-5

QUESTION = "who painted the mona lisa in zzqxv florence ?"
CANDIDATES = [
    "leonardo",
    "the mona lisa was painted by leonardo da vinci",
    "it hangs in the louvre in paris , qqzvx",
    " ".join(["the painting is famous"] * 6),  # 24 tokens, truncated at 16
    "da vinci",
]


def assert_same_explanation(alone: Explanation, batched: Explanation, strict_positions: bool = True) -> None:
    assert alone.question_tokens == batched.question_tokens
    assert alone.answer_tokens == batched.answer_tokens
    assert alone.score == pytest.approx(batched.score, abs=ATOL)
    assert alone.bias_contribution == pytest.approx(batched.bias_contribution, abs=ATOL)
    assert alone.cell_bias == pytest.approx(batched.cell_bias, abs=ATOL)
    for a, b in ((alone.question_attention, batched.question_attention),
                 (alone.answer_attention, batched.answer_attention)):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, atol=ATOL, rtol=0)
    for kind in ("interaction_matrices", "display_matrices", "cell_contributions"):
        one, many = getattr(alone, kind), getattr(batched, kind)
        assert list(one) == list(many)
        for name in one:
            assert one[name].shape == many[name].shape
            np.testing.assert_allclose(one[name], many[name], atol=ATOL, rtol=0)
    assert len(alone.pooled_cells) == len(batched.pooled_cells)
    for a_cell, b_cell in zip(alone.pooled_cells, batched.pooled_cells, strict=True):
        assert (a_cell.slot, a_cell.group, a_cell.matrix, a_cell.rank, a_cell.filler, a_cell.window) == (
            b_cell.slot, b_cell.group, b_cell.matrix, b_cell.rank, b_cell.filler, b_cell.window)
        assert a_cell.value == pytest.approx(b_cell.value, abs=ATOL)
        assert a_cell.contribution == pytest.approx(b_cell.contribution, abs=ATOL)
        if (a_cell.i, a_cell.j) != (b_cell.i, b_cell.j):
            assert not strict_positions, f"slot {a_cell.slot} moved from {(a_cell.i, a_cell.j)}"
            # Only cells tied to within float rounding (a word in the very same context
            # twice, or question == answer) may swap places: both must hold the value.
            assert a_cell.i is not None and b_cell.i is not None
            matrix = alone.interaction_matrices[a_cell.matrix]
            assert matrix[b_cell.i, b_cell.j] == pytest.approx(a_cell.value, abs=ATOL)


def test_alone_or_in_a_batch(variant_matcher: Matcher) -> None:
    batched = variant_matcher.explain(QUESTION, CANDIDATES)
    for candidate, in_batch in zip(CANDIDATES, batched, strict=True):
        (alone,) = variant_matcher.explain(QUESTION, [candidate])
        assert_same_explanation(alone, in_batch)
    # Order does not matter either.
    reversed_batch = variant_matcher.explain(QUESTION, CANDIDATES[::-1])
    for a, b in zip(batched, reversed_batch[::-1], strict=True):
        assert_same_explanation(a, b)


WORDS = ["the", "mona", "lisa", "painted", "by", "leonardo", "in", "paris", "zzqxv", "qqzvx", ".", "famous"]
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=22).map(" ".join)


@pytest.mark.parametrize("variant", ["cosine", "bilinear", "tensor", "amv-both-tensor"])
@given(question=sentence, candidates=st.lists(sentence, min_size=2, max_size=5))
def test_alone_or_in_a_batch_on_random_texts(make_matcher: MatcherFactory, variant: str, question: str,
                                             candidates: list[str]) -> None:
    matcher = make_matcher(seed=11, **VARIANTS[variant])
    batched = matcher.explain(question, candidates)
    for index in {0, len(candidates) - 1}:
        (alone,) = matcher.explain(question, [candidates[index]])
        assert_same_explanation(alone, batched[index], strict_positions=False)


def test_score_tokens_batches_do_not_matter(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(**VARIANTS["amv-question"])
    question = tokenize(QUESTION)
    answers = [tokenize(c) for c in CANDIDATES]
    whole = matcher.score_tokens([question] * len(answers), answers)
    in_pairs = matcher.score_tokens([question] * len(answers), answers, batch_size=2)
    assert whole.shape == (len(answers),) and whole.dtype == np.float32
    np.testing.assert_allclose(whole, in_pairs, atol=ATOL, rtol=0)
    assert matcher.score_tokens([], []).shape == (0,)


def test_score_tokens_threads_give_the_same_scores_and_leave_torch_threads_as_they_were(
        make_matcher: MatcherFactory) -> None:
    matcher = make_matcher()
    questions = [tokenize(QUESTION), tokenize("where is the louvre ?")] * 10
    answers = [tokenize(CANDIDATES[n % len(CANDIDATES)]) for n in range(len(questions))]
    alone = matcher.score_tokens(questions, answers, batch_size=2)
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # the workers run theirs on one thread each, then put this back
    try:
        seen: list[int] = []
        threaded = matcher.score_tokens(questions, answers, batch_size=2, workers=3, progress=seen.append)
        assert torch.get_num_threads() == 2
        with ThreadPoolExecutor(1) as fresh:  # a thread started later takes the process-wide count
            assert fresh.submit(torch.get_num_threads).result() == 2
    finally:
        torch.set_num_threads(before)
    np.testing.assert_array_equal(alone, threaded)  # same batches, same arithmetic: the same bits
    assert seen == sorted(seen) and seen[-1] == len(answers)


def test_tokens_are_flagged_unknown_and_truncated(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher()
    tokens = flag_tokens(tokenize("Paris zzqxv is nice"), matcher.vectors, max_len=3)
    assert [t.unknown for t in tokens] == [False, True, False, False]
    assert [t.truncated for t in tokens] == [False, False, False, True]
    (explanation,) = matcher.explain(" ".join(["paris"] * 20), ["zzqxv"])
    assert sum(t.truncated for t in explanation.question_tokens) == 20 - matcher.params.max_question_len
    assert explanation.answer_tokens[0].unknown


@pytest.mark.parametrize("question, candidates, message", [
    ("", ["an answer"], "the question has no words"),
    ("a question", ["an answer", " \u200b "], "candidate #2 has no words"),
])
def test_texts_without_words_are_refused(make_matcher: MatcherFactory, question: str, candidates: list[str],
                                         message: str) -> None:
    with pytest.raises(TextError, match=message):
        make_matcher().explain(question, candidates)
