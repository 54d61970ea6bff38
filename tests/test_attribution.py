"""Integrated gradients: the word split of a score, its baseline and its completeness residual."""

from __future__ import annotations

import numpy as np
import pytest

from matching.explain.attribution import integrated_gradients
from matching.explain.matcher import Matcher
from matching.text.tokens import tokenize

QUESTION = "who wrote the novel frankenstein"
CANDIDATES = ("frankenstein was written by mary shelley", "a zzqxv play", "the novel")


def test_the_split_adds_up_and_ends_at_the_traced_score(variant_matcher: Matcher) -> None:
    question, candidates = tokenize(QUESTION), [tokenize(c) for c in CANDIDATES]
    found = integrated_gradients(variant_matcher, question, candidates, steps=16)
    traced = [e.score for e in variant_matcher.explain_tokens(question, candidates)]
    for attribution, score, candidate in zip(found, traced, candidates, strict=True):
        assert attribution.score == pytest.approx(score, abs=1e-5)  # the line ends at the pass that was explained
        assert len(attribution.question) == len(question) and len(attribution.answer) == len(candidate)
        total = attribution.baseline + attribution.total + attribution.residual
        assert total == pytest.approx(attribution.score, abs=1e-9)  # exact by construction


def test_more_steps_leave_a_smaller_residual(make_matcher) -> None:  # type: ignore[no-untyped-def]
    matcher = make_matcher(family="amvlstm", attention="question", attention_scaling="length")
    question, candidates = tokenize(QUESTION), [tokenize(CANDIDATES[0])]
    coarse = integrated_gradients(matcher, question, candidates, steps=2)[0]
    fine = integrated_gradients(matcher, question, candidates, steps=128)[0]
    assert abs(fine.residual) < abs(coarse.residual) or abs(fine.residual) < 1e-6
    assert abs(fine.residual) < 0.05 * max(abs(fine.score - fine.baseline), 1e-3)
    assert np.isfinite(fine.question).all() and np.isfinite(fine.answer).all()
