"""Fine-tuned word vectors (an ablation any family can have): offsets for the training answers'
words, sized and filled from them, kept with the checkpoint, read through the same pass."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import TUNED_WORDS, MatcherFactory, toy_lists

from matching.models import build_model
from matching.models.base import fit_to_corpus, sized_for_corpus
from matching.models.params import AMVLSTMParams, ParamsError
from matching.text.corpus import Corpus
from matching.text.tokenized import tokenize_lists
from matching.training.cards import deviations, group_of
from matching.training.checkpoint import load_checkpoint, save_checkpoint

QUESTION = "where is the eiffel tower"
CANDIDATES = ["the eiffel tower is in paris", "zzqxjvtk is a word no one knows", "bees make honey"]


def test_params_refuse_a_non_boolean_or_negative_size() -> None:
    with pytest.raises(ParamsError, match="tune_vectors"):
        AMVLSTMParams(tune_vectors="yes").validate()  # type: ignore[arg-type]
    with pytest.raises(ParamsError, match="tuned_words"):
        AMVLSTMParams(tuned_words=-1).validate()


def test_offsets_change_the_scores_of_texts_with_tuned_words_only(make_matcher: MatcherFactory) -> None:
    tuned = make_matcher(seed=4, family="amvlstm", attention="question", tune_vectors=True, tuned_words=4)
    assert tuned.model.tuned_words is not None
    plain_scores = [e.score for e in tuned.explain("bees make honey", ["honey is sweet", "bees fly"])]
    before = [e.score for e in tuned.explain(QUESTION, CANDIDATES)]
    with torch.no_grad():
        tuned.model.tuned_words.offsets.zero_()
    zeroed = [e.score for e in tuned.explain(QUESTION, CANDIDATES)]
    assert all(abs(a - b) > 1e-6 for a, b in zip(before, zeroed, strict=True))  # every pair reads 'the' or 'tower'
    # No tuned word in these texts: the offsets are not read.
    assert [e.score for e in tuned.explain("bees make honey", ["honey is sweet", "bees fly"])] == plain_scores
    # The words shown are those the network read: GloVe plus the offset (zero now).
    explanation = tuned.explain(QUESTION, CANDIDATES)[0]
    assert explanation.score == pytest.approx(zeroed[0], abs=1e-6)


def test_scoring_and_tracing_read_the_same_tuned_words(make_matcher: MatcherFactory) -> None:
    tuned = make_matcher(seed=5, family="amvlstm", attention="question", tune_vectors=True, tuned_words=4)
    from matching.text.tokens import tokenize

    answers = [tokenize(c) for c in CANDIDATES]
    scored = tuned.score_tokens([tokenize(QUESTION)] * len(answers), answers)
    traced = [e.score for e in tuned.explain(QUESTION, CANDIDATES)]
    assert scored.tolist() == pytest.approx(traced, abs=1e-5)


def test_tuned_words_come_from_the_training_answers_and_travel_with_the_checkpoint(
        make_matcher: MatcherFactory, tmp_path: Path) -> None:
    matcher = make_matcher(seed=2, family="amvlstm", attention="question", tune_vectors=True, tuned_words=4)
    tokens, _ = tokenize_lists(toy_lists(0, 6))
    corpus = Corpus.of((c for t in tokens for c in t.candidates), matcher.vectors)
    sized = sized_for_corpus(AMVLSTMParams(tune_vectors=True), corpus)
    assert sized.tuned_words == len(corpus.idf[0]) > len(TUNED_WORDS)
    save_checkpoint(matcher, tmp_path / "tuned", {})
    loaded = load_checkpoint(tmp_path / "tuned", matcher.vectors)
    assert loaded.model.tuned_words is not None and loaded.params.tune_vectors
    torch.testing.assert_close(loaded.model.tuned_words.offsets, matcher.model.tuned_words.offsets)
    before = [e.score for e in matcher.explain(QUESTION, CANDIDATES)]
    assert [e.score for e in loaded.explain(QUESTION, CANDIDATES)] == pytest.approx(before, abs=1e-6)
    fresh = build_model(sized)
    fit_to_corpus(fresh, corpus)
    assert fresh.tuned_words is not None and not fresh.tuned_words.offsets.any()  # training starts from GloVe
    assert torch.equal(fresh.tuned_words.ids, torch.sort(corpus.idf[0]).values)


def test_card_names_the_addition() -> None:
    params = {"family": "amvlstm", "attention": "question", "tune_vectors": True, "tuned_words": 1234}
    assert any("1,234 training answer words fine-tuned" in line for line in deviations(params, {}))
    assert group_of(params, {}) != group_of({**params, "tune_vectors": False}, {})
