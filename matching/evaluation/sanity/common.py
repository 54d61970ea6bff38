"""What the sanity checks share: progress reports, scoring a data set, and its MAP."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from matching.evaluation.metrics import mean_metrics, question_metrics
from matching.explain.matcher import Matcher
from matching.text.data import RankingList
from matching.text.tokenized import TokenizedList, tokenize_lists

Progress = Callable[[float, str], None]
"""progress(fraction done in [0, 1], what is running)."""

TRAINED = "trained"


def scores_of(matcher: Matcher, lists: Sequence[TokenizedList], batch_size: int = 256) -> list[np.ndarray]:
    questions = [t.question for t in lists for _ in t.candidates]
    answers = [c for t in lists for c in t.candidates]
    flat = matcher.score_tokens(questions, answers, batch_size)
    out, start = [], 0
    for t in lists:
        out.append(flat[start:start + len(t.candidates)].astype(np.float64))
        start += len(t.candidates)
    return out


def map_of(lists: Sequence[TokenizedList], scores: Sequence[np.ndarray]) -> float:
    return mean_metrics([question_metrics(s, t.item.labels) for s, t in zip(scores, lists, strict=True)])["MAP"]


def usable(lists: Sequence[RankingList], max_questions: int | None) -> tuple[list[TokenizedList], list[str]]:
    kept, skipped = tokenize_lists(lists)
    kept = [t for t in kept if all(t.candidates)]
    if max_questions is not None and len(kept) > max_questions:
        skipped.append(f"only the first {max_questions} of {len(kept)} questions are used")
        kept = kept[:max_questions]
    return kept, skipped
