"""MCAN (Tay et al., KDD 2018) as the paper's section 2 describes it, masked against padding."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY_MCAN, MatcherFactory

from matching.explain.attribution import integrated_gradients
from matching.models.base import SCORE_BIAS, SCORE_TERMS
from matching.models.blocks import CastCompressions, make_compression, softmax_over
from matching.models.blocks.compression import FactorizationMachine
from matching.models.mcan import CASTS, CHANNEL_NAMES, COMPARISONS, EXACT_MATCH, meanmax
from matching.models.params import MCANParams, ParamsError
from matching.models.parts import Part
from matching.text.tokens import tokenize
from matching.training.checkpoint import load_checkpoint, save_checkpoint

QUESTION = "who wrote the novel frankenstein"
CANDIDATES = ["frankenstein was written by mary shelley and published in 1818",
              "who wrote the novel frankenstein is a common quiz question", "dogs bark"]


def test_the_factorisation_machine_is_the_papers_pairwise_sum() -> None:
    torch.manual_seed(0)
    fm = FactorizationMachine(5, 3)
    with torch.no_grad():
        fm.factors.normal_()
    x = torch.randn(4, 5)
    pairwise = sum((fm.factors[i] @ fm.factors[j]) * x[:, i] * x[:, j] for i, j in itertools.combinations(range(5), 2))
    expected = fm.linear(x).squeeze(-1) + pairwise
    torch.testing.assert_close(fm(x), expected, atol=1e-5, rtol=1e-5)


def test_each_compression_gives_one_scalar_per_word() -> None:
    x = torch.randn(2, 7, 6)
    assert make_compression("sm", 6)(x).shape == (2, 7)
    torch.testing.assert_close(make_compression("sm", 6)(x), x.sum(-1))
    assert (make_compression("nn", 6)(x) >= 0).all()  # ReLU(W x + b)
    with pytest.raises(ValueError):
        make_compression("max", 6)  # type: ignore[arg-type]


def test_params_refuse_an_unknown_compression() -> None:
    with pytest.raises(ParamsError):
        MCANParams(compression="mean").validate()  # type: ignore[arg-type]
    with pytest.raises(ParamsError):
        MCANParams(fm_factors=0).validate()


def test_masked_softmax_gives_padding_nothing_and_padding_rows_zero() -> None:
    scores = torch.randn(2, 3, 4)
    mask = torch.tensor([[True, True, False, False], [True, True, True, True]])[:, None, :].expand(2, 3, 4)
    weights = softmax_over(scores, mask)
    assert (weights[0, :, 2:] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))
    none = softmax_over(scores, torch.zeros_like(mask))
    assert (none == 0).all()


def test_meanmax_reads_real_positions_only() -> None:
    states = torch.tensor([[[1.0, -5.0], [3.0, -1.0], [100.0, 100.0]]])
    found = meanmax(states, torch.tensor([[True, True, False]]))
    torch.testing.assert_close(found, torch.tensor([[2.0, -3.0, 3.0, -1.0]]))


@pytest.mark.parametrize("compression", ["fm", "nn", "sm"])
def test_the_trace_carries_every_part_and_its_casts_in_the_papers_order(make_matcher: MatcherFactory,
                                                                     compression: str) -> None:
    matcher = make_matcher(family="mcan", compression=compression)
    explanations = matcher.explain(QUESTION, CANDIDATES)
    first = explanations[0]
    assert first.parts == matcher.parts == {Part.WORD_WEIGHTS, Part.MATRICES, Part.CHANNELS, Part.STATES,
                                           Part.PAIR_VECTORS}
    assert first.channels is not None and first.channels.names == CHANNEL_NAMES
    assert len(CHANNEL_NAMES) == len(CASTS) * len(COMPARISONS) == 12
    assert CHANNEL_NAMES[:3] == ("alignment, product", "alignment, difference", "alignment, concatenation")
    m, n = len(first.seen_question_tokens), len(first.seen_answer_tokens)
    align_q, align_a = first.display_matrices.values()
    np.testing.assert_allclose(align_q.sum(1), np.ones(m), atol=1e-5)  # each question word's row
    np.testing.assert_allclose(align_a.sum(0), np.ones(n), atol=1e-5)  # each answer word's column
    affinity = first.interaction_matrices["affinity"]
    # The max-pooled co-attention is the softmax of each word's strongest affinity, read off the trace.
    weights = first.word_weights["max-pooled co-attention"][0]
    expected = np.exp(affinity.max(1) - affinity.max(1).max())
    np.testing.assert_allclose(weights, expected / expected.sum(), atol=1e-5)
    mean = first.word_weights["mean-pooled co-attention"][1]
    expected = np.exp(affinity.mean(0) - affinity.mean(0).max())
    np.testing.assert_allclose(mean, expected / expected.sum(), atol=1e-5)
    # The MeanMax vectors are the pooled LSTM states of the trace.
    states = first.steps.question.states
    assert states is not None
    np.testing.assert_allclose(first.steps.vectors["question MeanMax"],
                               np.concatenate([states.mean(0), states.max(0)]), atol=1e-5)
    # The score layer's traced terms and bias add up to the score (this model has no keyword term).
    for explanation in explanations:
        vectors = explanation.steps.vectors
        assert abs(float(vectors[SCORE_TERMS].sum(dtype=np.float64)) + float(vectors[SCORE_BIAS][0])
                   - explanation.score) < 1e-5
    np.testing.assert_allclose(first.steps.vectors[SCORE_TERMS], first.steps.vectors["highway 2"]
                               * matcher.model.head.weight[0].detach().numpy(), atol=1e-6)
    # The scores of the traced pass are the scores of the scoring pass.
    scores = matcher.score_tokens([tokenize(QUESTION)] * 3, [tokenize(c) for c in CANDIDATES])
    np.testing.assert_allclose([e.score for e in explanations], scores, atol=1e-5)


def test_padding_changes_nothing(make_matcher: MatcherFactory) -> None:
    """A pair scores the same alone and beside much longer texts (padded far past its length)."""
    matcher = make_matcher(family="mcan", seed=3)
    alone = matcher.explain(QUESTION, CANDIDATES[2:])[0]
    padded = matcher.explain(QUESTION, [CANDIDATES[2], " ".join(["long words here"] * 5)])[0]
    assert abs(alone.score - padded.score) < 1e-5
    assert alone.channels is not None and padded.channels is not None
    np.testing.assert_allclose(alone.channels.answer, padded.channels.answer, atol=1e-5)


def test_integrated_gradients_report_their_residual_exactly(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(family="mcan", seed=5)
    found = integrated_gradients(matcher, tokenize(QUESTION), [tokenize(c) for c in CANDIDATES])
    scores = [e.score for e in matcher.explain(QUESTION, CANDIDATES)]
    for attribution, score in zip(found, scores, strict=True):
        assert abs(attribution.score - score) < 1e-5
        assert abs(attribution.baseline + attribution.total + attribution.residual - attribution.score) < 1e-5
        assert abs(attribution.residual) < 0.05 * max(abs(attribution.score - attribution.baseline), 1e-3)


def test_the_compression_is_recorded_in_the_checkpoint(make_matcher: MatcherFactory, tmp_path: Path) -> None:
    matcher = make_matcher(family="mcan", compression="nn", name="mcan-nn-tiny")
    save_checkpoint(matcher, tmp_path / "model", {})
    loaded = load_checkpoint(tmp_path / "model", matcher.vectors)
    assert isinstance(loaded.params, MCANParams) and loaded.params.compression == "nn"
    assert loaded.params == MCANParams(**{**TINY_MCAN, "compression": "nn"})
    before = [e.score for e in matcher.explain(QUESTION, CANDIDATES)]
    after = [e.score for e in loaded.explain(QUESTION, CANDIDATES)]
    np.testing.assert_allclose(before, after, atol=1e-6)


@pytest.mark.parametrize("kind", ["fm", "nn", "sm"])
def test_the_casts_compressed_together_are_each_functions_own(kind: str) -> None:
    torch.manual_seed(0)
    compressions = CastCompressions(kind, 6, 4, 3)  # type: ignore[arg-type]
    for function in compressions:
        for parameter in function.parameters():
            torch.nn.init.normal_(parameter, std=0.5)
    bars, words = torch.randn(4, 2, 5, 6), torch.randn(2, 5, 6)
    together = compressions(bars * words, bars - words, bars, words)
    one_by_one = torch.stack([compressions[c * 3 + k](z) for c in range(4) for k, z in enumerate(
        (bars[c] * words, bars[c] - words, torch.cat([bars[c], words], dim=-1)))], dim=-1)
    torch.testing.assert_close(together, one_by_one, atol=1e-5, rtol=1e-5)


def test_the_exact_match_flag_marks_the_words_the_other_text_holds(make_matcher: MatcherFactory,
                                                                   tmp_path: Path) -> None:
    """A 13th feature per word beside the 12 casts: 1 where the word's lookup key is in the other text. It is
    in the trace the score came from, it changes the score, and it survives the checkpoint."""
    matcher = make_matcher(family="mcan", seed=4, exact_match=True, name="mcan-em-tiny")
    explanations = matcher.explain(QUESTION, CANDIDATES)
    for explanation in explanations:
        channels = explanation.channels
        assert channels is not None and channels.names == (*CHANNEL_NAMES, EXACT_MATCH)
        question_words = [t.key for t in explanation.seen_question_tokens]
        answer_words = [t.key for t in explanation.seen_answer_tokens]
        np.testing.assert_array_equal(channels.question[:, -1], [w in answer_words for w in question_words])
        np.testing.assert_array_equal(channels.answer[:, -1], [w in question_words for w in answer_words])
    assert explanations[2].channels is not None and not explanations[2].channels.question[:, -1].any()  # "dogs bark"
    scores = matcher.score_tokens([tokenize(QUESTION)] * 3, [tokenize(c) for c in CANDIDATES])
    np.testing.assert_allclose([e.score for e in explanations], scores, atol=1e-5)
    # The flag feeds the LSTM: with its input weights zeroed the scores change.
    lstm = matcher.model.encoder
    with torch.no_grad():
        saved = lstm.weight_ih_l0[:, -1].clone()
        lstm.weight_ih_l0[:, -1] = 0
        without = matcher.score_tokens([tokenize(QUESTION)] * 3, [tokenize(c) for c in CANDIDATES])
        lstm.weight_ih_l0[:, -1] = saved
    assert np.abs(np.asarray(without[:2]) - np.asarray(scores[:2])).max() > 1e-4
    np.testing.assert_allclose(without[2], scores[2], atol=1e-6)  # no word shared: the flag is 0 throughout
    save_checkpoint(matcher, tmp_path / "model", {})
    loaded = load_checkpoint(tmp_path / "model", matcher.vectors)
    assert isinstance(loaded.params, MCANParams) and loaded.params.exact_match
    np.testing.assert_allclose([e.score for e in loaded.explain(QUESTION, CANDIDATES)], scores, atol=1e-6)
