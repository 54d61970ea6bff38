"""Each word-deletion effect equals scoring the edited text from scratch."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import VARIANTS, MatcherFactory

from matching.explain.deletion import attention_agreement, delete_words, deletion_effects, spearman, without
from matching.text.tokens import tokenize

QUESTION = "who wrote the novel pride and prejudice"
CANDIDATES = ["pride and prejudice is a novel by jane austen", "the novel is set in england", "emma"]


@pytest.mark.parametrize("variant", ["cosine", "tensor", "amv-question", "amv-both-tensor", "pyramid-question"])
def test_effects_equal_rescoring_from_scratch(make_matcher: MatcherFactory, variant: str) -> None:
    matcher = make_matcher(seed=5, name=variant, **VARIANTS[variant])
    question = tokenize(QUESTION)
    candidates = [tokenize(c) for c in CANDIDATES]
    effects = deletion_effects(matcher, question, candidates)
    assert sorted(effects) == [0, 1, 2]
    for c, result in effects.items():
        fresh = matcher.explain_tokens(question, candidates)
        assert abs(result.score - fresh[c].score) < 1e-5
        for word in result.question:
            edited = without(question, {word.position})
            rescored = np.array([e.score for e in matcher.explain_tokens(edited, candidates)])
            assert word.score_after is not None and abs(word.score_after - rescored[c]) < 1e-5
            assert word.rank_after == 1 + int((np.delete(rescored, c) > rescored[c]).sum())
        for word in result.answer:
            if word.score_after is None:  # a one-word candidate cannot lose its word
                assert len(candidates[c]) == 1 and word.rank_after is None
                continue
            edited_answer = without(candidates[c], {word.position})
            fresh_score = matcher.explain_tokens(question, [edited_answer])[0].score
            assert abs(word.score_after - fresh_score) < 1e-5
            assert abs(result.effects("answer")[word.position] - (result.score - fresh_score)) < 1e-5
        assert len(result.question) == len(question)
        assert len(result.answer) == len(candidates[c])


def test_effects_cover_only_seen_words(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=1)  # max_answer_len 16
    long = tokenize(" ".join(["word"] * 30))
    effects = deletion_effects(matcher, tokenize(QUESTION), [long], chosen=[0])
    assert len(effects[0].answer) == 16
    rows = effects[0].rows("answer")
    assert rows[0]["position"] == 1 and "rank change" in rows[0]


def test_delete_words_keeps_the_persons_text() -> None:
    text = "Who  wrote the novel, Pride and Prejudice?"
    tokens = tokenize(text)
    keys = [t.key for t in tokens]
    assert delete_words(text, tokens, {keys.index("wrote")}) == "Who the novel, Pride and Prejudice?"
    assert delete_words(text, tokens, {keys.index("novel")}) == "Who wrote the , Pride and Prejudice?"
    assert delete_words(text, tokens, set()) == text


def test_spearman_and_attention_agreement(make_matcher: MatcherFactory) -> None:
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None  # constant: undefined, not NaN
    assert spearman([1, 2], [1, 2]) is None
    matcher = make_matcher(seed=2, name="q", **VARIANTS["amv-question"])
    question, candidates = tokenize(QUESTION), [tokenize(CANDIDATES[0])]
    effects = deletion_effects(matcher, question, candidates)[0]
    alpha = matcher.explain_tokens(question, candidates)[0].question_attention
    rho = attention_agreement(alpha, effects, "question")
    assert rho is not None and -1 <= rho <= 1
    assert attention_agreement(None, effects, "question") is None
