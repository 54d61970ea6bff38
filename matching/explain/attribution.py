"""Integrated gradients over the words a model read: an approximate split of a score over words.

For a family whose score does not split exactly over parts of its trace (MCAN's casts, LSTM and
highway layers are not piecewise linear in anything shown), the score is split over the words by
integrated gradients (Sundararajan et al., ICML 2017): each word's vector x is scaled from 0 to x
along a straight line, and its attribution is (x - 0) . (the mean gradient of the score along that
line). The baseline is the same pair with every word vector zero. Completeness says the
attributions add up to score - baseline score; the Riemann sum only approximates the integral, so
the gap left, the *completeness residual*, is reported beside every attribution (as Captum's
`return_convergence_delta` does), never hidden: score = baseline + sum of attributions + residual,
exactly, by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from matching.explain.matcher import Matcher, flag_tokens
from matching.models.batching import batch_rows, make_token_batch
from matching.text.tokens import Token

STEPS = 64
"""Points of the Riemann sum (midpoints): the residual is printed, so a reader sees whether it was enough."""


@dataclass(frozen=True)
class WordAttribution:
    """One pair's score split over the words read: score = baseline + question.sum() + answer.sum() + residual."""

    question: np.ndarray  # (m,) one value per seen question token
    answer: np.ndarray  # (n,) one value per seen answer token
    score: float
    baseline: float
    """The score of the same pair with every word vector zero (the straight line's start)."""
    residual: float
    """score - baseline - all attributions: what the Riemann sum missed (0 for an exact integral)."""
    steps: int

    @property
    def total(self) -> float:
        return float(self.question.sum(dtype=np.float64) + self.answer.sum(dtype=np.float64))


def integrated_gradients(matcher: Matcher, question: Sequence[Token], candidates: Sequence[Sequence[Token]],
                         steps: int = STEPS, of: Sequence[int] | None = None) -> list[WordAttribution]:
    """Each candidate's score split over the words of the question and of the candidate, with its residual.

    `candidates` is the whole list the question was ranked with: a keyword term may read the list (BM25 within it),
    so a pair's score, and the line it is integrated along, is its score among them. `of` picks the candidates to
    attribute (their positions; all when None)."""
    params = matcher.params
    q_tokens = flag_tokens(question, matcher.vectors, params.max_question_len)
    a_tokens = [flag_tokens(a, matcher.vectors, params.max_answer_len) for a in candidates]
    batch = make_token_batch(matcher.vectors, [q_tokens] * len(a_tokens), a_tokens,
                             params.max_question_len, params.max_answer_len, lists_for=params)
    if of is not None:
        batch = batch_rows(batch, torch.as_tensor(list(of), dtype=torch.long))
    model = matcher.model
    with torch.inference_mode(False), torch.no_grad():
        # The vectors as the network reads them: each unknown word carries the learned unknown vector.
        q_words = model.unknown_word(batch.question_vectors.clone(), batch.question_unknown.clone())
        a_words = model.unknown_word(batch.answer_vectors.clone(), batch.answer_unknown.clone())
    count = int(batch.answer_lengths.shape[0])
    # Midpoints of `steps` equal slices of [0, 1], then the two ends (baseline and input) for completeness.
    alphas = torch.cat([(torch.arange(steps, dtype=q_words.dtype) + 0.5) / steps, torch.tensor([0.0, 1.0])])
    points = len(alphas)

    def spread(values: torch.Tensor) -> torch.Tensor:  # (B, ...) -> (points * B, ...), point-major
        return values.repeat(points, *([1] * (values.dim() - 1)))

    scale = alphas.repeat_interleave(count)[:, None, None]
    with torch.inference_mode(False), torch.enable_grad():
        q_line = (spread(q_words) * scale).requires_grad_(True)
        a_line = (spread(a_words) * scale).requires_grad_(True)
        line_batch = type(batch)(
            q_line, torch.zeros_like(spread(batch.question_unknown)), spread(batch.question_lengths),
            a_line, torch.zeros_like(spread(batch.answer_unknown)), spread(batch.answer_lengths),
            None if batch.question_ids is None else spread(batch.question_ids),
            None if batch.answer_ids is None else spread(batch.answer_ids),
            list_bm25=None if batch.list_bm25 is None else spread(batch.list_bm25),
            list_idf=None if batch.list_idf is None else spread(batch.list_idf),
            question_stems=None if batch.question_stems is None else spread(batch.question_stems),
            answer_stems=None if batch.answer_stems is None else spread(batch.answer_stems))
        scores = model(line_batch)
        assert isinstance(scores, torch.Tensor)
        q_grad, a_grad = torch.autograd.grad(scores.sum(), (q_line, a_line))
    scores = scores.detach().view(points, count).double()
    q_mean = q_grad.view(points, *q_words.shape)[:steps].double().mean(0)
    a_mean = a_grad.view(points, *a_words.shape)[:steps].double().mean(0)
    q_values = (q_words.double() * q_mean).sum(-1).numpy()
    a_values = (a_words.double() * a_mean).sum(-1).numpy()
    m = int(batch.question_lengths[0])
    found = []
    for b in range(count):
        n = int(batch.answer_lengths[b])
        baseline, score = float(scores[steps, b]), float(scores[steps + 1, b])
        q_part, a_part = q_values[b, :m].copy(), a_values[b, :n].copy()
        attributed = float(q_part.sum() + a_part.sum())
        found.append(WordAttribution(q_part, a_part, score, baseline, score - baseline - attributed, steps))
    return found
