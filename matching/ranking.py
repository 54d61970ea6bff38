"""Rank a question's candidates with several models and the baselines, side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .baselines import baseline_scores
from .embeddings import WordVectors
from .explanation import Explanation
from .matcher import Matcher, require_words
from .text import TextError, Token, tokenize

MAX_CANDIDATES = 100


def flag_unknown(tokens: Sequence[Token], vectors: WordVectors) -> list[Token]:
    return [replace(t, unknown=not vectors.is_known(t.key)) for t in tokens]


def competition_ranks(scores: np.ndarray) -> np.ndarray:
    """1 = best; tied scores share the best rank of their group (1, 2, 2, 4)."""
    return np.array([1 + int((scores > s).sum()) for s in scores], dtype=np.int64)


@dataclass(frozen=True)
class ModelRanking:
    scores: np.ndarray
    ranks: np.ndarray
    explanations: list[Explanation]


@dataclass(frozen=True)
class Ranking:
    question: str
    candidates: tuple[str, ...]
    question_tokens: tuple[Token, ...]
    candidate_tokens: tuple[tuple[Token, ...], ...]
    labels: tuple[int, ...] | None
    models: dict[str, ModelRanking]
    baselines: dict[str, np.ndarray]
    baseline_ranks: dict[str, np.ndarray] = field(default_factory=dict)

    def rows(self) -> list[dict[str, object]]:
        """One plain row per candidate: text, label, each model's and baseline's score and rank."""
        rows = []
        for index, candidate in enumerate(self.candidates):
            row: dict[str, object] = {"#": index + 1, "candidate": candidate}
            if self.labels is not None:
                row["correct"] = bool(self.labels[index])
            for name, result in self.models.items():
                row[f"{name} rank"] = int(result.ranks[index])
                row[f"{name} score"] = float(result.scores[index])
            for name, scores in self.baselines.items():
                row[f"{name} rank"] = int(self.baseline_ranks[name][index])
                row[f"{name} score"] = float(scores[index])
            rows.append(row)
        return rows

    def disagreement(self) -> np.ndarray:
        """Per candidate: the spread (max - min) of its rank across the models."""
        if not self.models:
            return np.zeros(len(self.candidates), dtype=np.int64)
        ranks = np.stack([r.ranks for r in self.models.values()])
        return ranks.max(axis=0) - ranks.min(axis=0)


def rank(question: str, candidates: Sequence[str], models: Mapping[str, Matcher],
         labels: Sequence[int] | None = None, max_candidates: int = MAX_CANDIDATES) -> Ranking:
    """Score all candidates in one batch per model; raises TextError on unusable input."""
    return rank_tokens(question, tokenize(question), candidates, [tokenize(c) for c in candidates], models,
                       labels, max_candidates)


def rank_tokens(question: str, question_tokens: Sequence[Token], candidates: Sequence[str],
                candidate_tokens: Sequence[Sequence[Token]], models: Mapping[str, Matcher],
                labels: Sequence[int] | None = None, max_candidates: int = MAX_CANDIDATES) -> Ranking:
    """`rank` for text already parsed (see `inputs.parse_input`): the words are not read again."""
    if not candidates:
        raise TextError("give at least one candidate answer")
    if len(candidates) > max_candidates:
        raise TextError(f"{len(candidates)} candidates; the limit is {max_candidates}")
    if labels is not None and len(labels) != len(candidates):
        raise TextError(f"{len(labels)} labels for {len(candidates)} candidates")
    require_words(question_tokens, "the question")
    for index, tokens in enumerate(candidate_tokens):
        require_words(tokens, f"candidate {index + 1}")
    if models:  # every model reads the same vectors: flag the unknown words once, for the views
        vectors = next(iter(models.values())).vectors
        question_tokens = flag_unknown(question_tokens, vectors)
        candidate_tokens = [flag_unknown(tokens, vectors) for tokens in candidate_tokens]
    results = {}
    for name, matcher in models.items():
        explanations = matcher.explain_tokens(question_tokens, candidate_tokens)
        scores = np.array([e.score for e in explanations], dtype=np.float64)
        results[name] = ModelRanking(scores, competition_ranks(scores), explanations)
    baselines = baseline_scores(question_tokens, candidate_tokens)
    return Ranking(
        question=question, candidates=tuple(candidates), question_tokens=tuple(question_tokens),
        candidate_tokens=tuple(tuple(t) for t in candidate_tokens),
        labels=None if labels is None else tuple(int(x) for x in labels), models=results,
        baselines=baselines, baseline_ranks={k: competition_ranks(v) for k, v in baselines.items()})
