"""Honest figures for a model card: does the attention matter, and is the gain real?

- `attention_study`: over a test set, the mean normalised entropy of alpha
  (H(alpha) / log n, 1 = uniform), the mean top-weight ratio (max alpha x n, 1 =
  uniform) and the MAP of the same model with its gate overridden at inference:
  alpha replaced by uniform weights, and by a seeded permutation of its own alpha.
- `keyword_study`: for a model with a keyword term, on a dev set, the MAP of the whole score beside
  the learned match alone and the keyword term alone, how often the keyword term changes the top
  answer, and how far each part spreads within a question: does the keyword term decide anything?
- `paired_test`: a paired randomisation (sign-flip) test on per-question AP, model
  against a baseline, via scipy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from matching.evaluation.dataset import model_scores
from matching.evaluation.metrics import mean_metrics, question_metrics
from matching.explain.matcher import Matcher
from matching.models.base import KEYWORDS, LEARNED_MATCH
from matching.models.blocks import AttentionGate
from matching.text.data import RankingList
from matching.text.tokenized import TokenizedList, tokenize_lists

PERMUTATION_SEED = 0
RESAMPLES = 9999


@dataclass(frozen=True)
class AttentionStudy:
    entropy: float
    """Mean over test pairs and attended sides of H(alpha) / log(n) (1 = uniform)."""
    top_weight_ratio: float
    """Mean of max(alpha) x n: how many times the uniform weight the top word gets."""
    MAP: float
    uniform_MAP: float
    """The same model with alpha = 1/n on every real token."""
    permuted_MAP: float
    """The same model with alpha shuffled among the real tokens (seed `permutation_seed`)."""
    permutation_seed: int = PERMUTATION_SEED


@dataclass(frozen=True)
class PairedTest:
    baseline: str
    difference: float
    """Mean per-question AP of the model minus the baseline's."""
    p_value: float
    """Two-sided, paired randomisation test (sign flips of the per-question differences)."""
    questions: int
    resamples: int = RESAMPLES


@dataclass(frozen=True)
class KeywordStudy:
    """Does a keyword model's keyword term decide anything on a set of questions?"""

    MAP: float
    """The whole score: learned match + keywords."""
    learned_MAP: float
    """The learned match alone (the keyword term left out)."""
    keywords_MAP: float
    """The keyword term alone (the learned match left out)."""
    top_changed: int
    """Questions whose top answer by the whole score differs from the learned match's alone."""
    questions: int
    """Questions with at least two candidates (those where a top answer can change)."""
    learned_spread: float
    """Mean over those questions of the standard deviation of the learned match among its candidates."""
    keywords_spread: float
    """The same for the keyword term."""


def p_text(p: float) -> str:
    """A p-value with three decimals, or '<0.001' below that (the smallest a randomisation test of 9,999
    sign flips gives is 0.0001: '0.000' would read as impossible)."""
    return f"{p:.3f}" if p >= 0.001 else "<0.001"


def gates(matcher: Matcher) -> list[AttentionGate]:
    return [m for m in matcher.model.modules() if isinstance(m, AttentionGate)]


@contextmanager
def gate_override(matcher: Matcher, override: str, seed: int = PERMUTATION_SEED) -> Iterator[None]:
    """Within the block, every attention gate of the model uses `override` (see AttentionGate)."""
    found = gates(matcher)
    for gate in found:
        gate.override, gate.override_seed = override, seed
    try:
        yield
    finally:
        for gate in found:
            gate.override, gate.override_seed = None, 0


@contextmanager
def scored_alone(matcher: Matcher, part: str | None) -> Iterator[None]:
    """Within the block, the model scores `part` alone (LEARNED_MATCH or KEYWORDS; see MatchingModel)."""
    matcher.model.scored_alone = part
    try:
        yield
    finally:
        matcher.model.scored_alone = None


def part_scores(matcher: Matcher, lists: Sequence[TokenizedList]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(learned match alone, keyword term alone): each question's scores from each part of a keyword model; their sum
    is the model's score."""
    with scored_alone(matcher, LEARNED_MATCH):
        learned = model_scores(matcher, lists)
    with scored_alone(matcher, KEYWORDS):
        keywords = model_scores(matcher, lists)
    return learned, keywords


def keyword_study(matcher: Matcher, lists: Sequence[TokenizedList]) -> KeywordStudy | None:
    """The keyword figures of a model with a keyword term on `lists`; None for a model without one."""
    if matcher.model.keywords is None:
        return None
    whole = model_scores(matcher, lists)
    learned, keywords = part_scores(matcher, lists)
    # Candidates without words score -inf in every part; they take no part in a spread or a top answer.
    ranked = [(w[np.isfinite(w)], ln[np.isfinite(ln)], k[np.isfinite(k)])
              for w, ln, k in zip(whole, learned, keywords, strict=True)]
    ranked = [parts for parts in ranked if len(parts[0]) > 1]
    changed = sum(int(np.argmax(w) != np.argmax(ln)) for w, ln, _ in ranked)
    return KeywordStudy(mean_ap(whole, lists), mean_ap(learned, lists), mean_ap(keywords, lists), changed,
                        len(ranked), float(np.mean([ln.std() for _, ln, _ in ranked])) if ranked else 0.0,
                        float(np.mean([k.std() for _, _, k in ranked])) if ranked else 0.0)


def keyword_rows(lists: Sequence[RankingList], matchers: Mapping[str, Matcher], max_questions: int | None = None,
                 progress: Callable[[float, str], None] | None = None) -> list[dict[str, object]]:
    """Per model with a keyword term, on a collection (its first `max_questions`): `keyword_study`'s figures, as a
    card gives them for the dev sets: MAP by the whole score, by the learned match alone and by the keyword term
    alone, and how many questions' top answer the keyword term changes. Which part carries each model on this text."""
    kept = tokenize_lists(lists, limit=max_questions)[0]
    rows: list[dict[str, object]] = []
    for index, (name, matcher) in enumerate(matchers.items()):
        study = keyword_study(matcher, kept)
        if study is not None:
            rows.append({"model": name, "MAP": study.MAP, "learned match alone": study.learned_MAP,
                         "keywords alone": study.keywords_MAP, "top answer changed": study.top_changed,
                         "questions": study.questions})
        if progress:
            progress((index + 1) / len(matchers), name)
    return rows


def mean_ap(scores: Sequence[np.ndarray], lists: Sequence[TokenizedList]) -> float:
    return mean_metrics([question_metrics(s, t.item.labels) for s, t in zip(scores, lists, strict=True)])["MAP"]


def attention_study(matcher: Matcher, lists: Sequence[TokenizedList]) -> AttentionStudy | None:
    """The attention figures of an attention model on `lists`; None for a model without a gate."""
    if not gates(matcher):
        return None
    entropies, ratios = [], []
    for item in lists:
        candidates = [c for c in item.candidates if c]
        for explanation in matcher.explain_tokens(item.question, candidates):
            for alpha in (explanation.question_attention, explanation.answer_attention):
                if alpha is None or len(alpha) < 2:
                    continue
                positive = alpha[alpha > 0]
                entropies.append(float(-(positive * np.log(positive)).sum() / np.log(len(alpha))))
                ratios.append(float(alpha.max() * len(alpha)))
    own = mean_ap(model_scores(matcher, lists), lists)
    with gate_override(matcher, "uniform"):
        uniform = mean_ap(model_scores(matcher, lists), lists)
    with gate_override(matcher, "permuted"):
        permuted = mean_ap(model_scores(matcher, lists), lists)
    return AttentionStudy(float(np.mean(entropies)), float(np.mean(ratios)), own, uniform, permuted)


def paired_test(model_ap: Sequence[float], baseline_ap: Sequence[float], baseline: str,
                seed: int = 0) -> PairedTest:
    """Is the model's mean AP different from the baseline's on the same questions?"""
    return paired_tests([model_ap], [baseline_ap], [baseline], seed)[0]


PERMUTATION_VALUES = 4_000_000
"""About how many permuted values one step of `paired_tests` holds (32 MB each array): the
null distributions are built that many at a time, whatever the number of questions."""


def paired_tests(model_aps: Sequence[Sequence[float]], baseline_aps: Sequence[Sequence[float]],
                 baselines: Sequence[str], seed: int = 0) -> list[PairedTest]:
    """`paired_test` of each (model, baseline) pair of rows, all on the same questions, in one pass.

    scipy's permutation test draws each resample's sign flips from `seed` over the questions
    only, so all the pairs share them: one call tests every pair (the p-values are those of one
    call per pair), drawing the flips once, in batches that bound its memory.
    """
    from scipy.stats import permutation_test

    model, base = np.asarray(model_aps, dtype=float), np.asarray(baseline_aps, dtype=float)
    if model.shape != base.shape or model.ndim != 2 or len(baselines) != len(model):
        raise ValueError(f"one row of per-question AP per test: {model.shape}, {base.shape}, {len(baselines)} names")
    if model.shape[1] < 2:  # no test on fewer than two questions (scipy raises): p undefined, said as NaN
        return [PairedTest(name, float(np.mean(m - b)) if m.size else float("nan"), float("nan"), model.shape[1])
                for name, m, b in zip(baselines, model, base, strict=True)]
    batch = max(1, PERMUTATION_VALUES // max(1, model.size * 2))
    result = permutation_test((model, base), lambda x, y, axis: np.mean(x - y, axis=axis),
                              permutation_type="samples", n_resamples=RESAMPLES, vectorized=True,
                              alternative="two-sided", random_state=seed, axis=-1, batch=batch)
    pvalues = np.atleast_1d(result.pvalue)
    return [PairedTest(name, float(np.mean(m - b)), float(p), model.shape[1])
            for name, m, b, p in zip(baselines, model, base, pvalues, strict=True)]
