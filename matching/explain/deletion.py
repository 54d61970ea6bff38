"""Word-deletion effects: how much each word moves the score and the rank when it is removed.

For one model, every seen word of the question and of the chosen candidates is
deleted in turn and the edited texts are scored from scratch, all in one batched
pass (`Matcher.score_tokens`). Removing a question word changes every candidate's
score, so the rank after a question deletion is taken among all re-scored
candidates; removing a candidate word changes that candidate only.

The effect of a word is score(with it) - score(without it): positive when the word
raised the score. Unlike attention, it is the model's own answer to "does this word
matter?", with everything downstream (the Bi-LSTM, the matrices, pooling) included.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from matching.explain.matcher import Matcher
from matching.text.tokens import Token


def competition_rank(score: float, others: Sequence[float] | np.ndarray) -> int:
    """1 + how many of `others` score strictly higher (ties share the best rank, as in ranking)."""
    return 1 + int((np.asarray(others, dtype=np.float64) > score).sum())


def without(tokens: Sequence[Token], positions: Collection[int]) -> list[Token]:
    """The tokens with those positions left out."""
    return [t for index, t in enumerate(tokens) if index not in positions]


def in_place(candidates: Sequence[Sequence[Token]], index: int, edited: Sequence[Token]) -> list[Sequence[Token]]:
    """The candidates with candidate `index` edited: an edited pair's list, for a model whose keyword feature reads
    the list ("BM25 within the list"; `Matcher.score_tokens`' collections)."""
    return [edited if n == index else candidate for n, candidate in enumerate(candidates)]


_SPACES = re.compile(r"[ \t]{2,}")


def delete_words(text: str, tokens: Sequence[Token], positions: Collection[int]) -> str:
    """The person's own text with the words at `positions` cut out (spans, not re-typed words)."""
    if not positions:
        return text
    pieces, start = [], 0
    for index, token in enumerate(tokens):
        if index in positions:
            pieces.append(text[start:token.start])
            start = token.end
    pieces.append(text[start:])
    return _SPACES.sub(" ", "".join(pieces)).strip()


@dataclass(frozen=True)
class WordEffect:
    side: str
    """'question' or 'answer'."""
    position: int
    """Index into that text's tokens."""
    word: str
    score_after: float | None
    """Score of the edited pair; None when the deletion would leave the text without words."""
    rank_before: int
    rank_after: int | None

    def effect(self, score: float) -> float | None:
        return None if self.score_after is None else score - self.score_after


@dataclass(frozen=True)
class DeletionEffects:
    """One candidate under one model: the effect of deleting each seen word."""

    model: str
    candidate: int
    score: float
    rank: int
    question: tuple[WordEffect, ...]
    answer: tuple[WordEffect, ...]

    def effects(self, side: str) -> np.ndarray:
        """score - score after deleting each word of `side` (NaN where it cannot be deleted)."""
        words = self.question if side == "question" else self.answer
        return np.array([np.nan if w.score_after is None else self.score - w.score_after for w in words])

    def rows(self, side: str) -> list[dict[str, object]]:
        words = self.question if side == "question" else self.answer
        return [{"position": w.position + 1, "word": w.word, "effect": w.effect(self.score),
                 "score after": w.score_after, "rank": w.rank_before, "rank after": w.rank_after,
                 "rank change": None if w.rank_after is None else w.rank_before - w.rank_after}
                for w in words]


def seen_positions(tokens: Sequence[Token], max_len: int) -> range:
    return range(min(len(tokens), max_len))


def deletion_effects(matcher: Matcher, question: Sequence[Token], candidates: Sequence[Sequence[Token]],
                     chosen: Sequence[int] | None = None) -> dict[int, DeletionEffects]:
    """Deletion effects for the `chosen` candidates (all by default), in one batched pass.

    The batch holds the unedited pairs, every question deletion paired with every
    candidate (for the ranks) and every deletion from the chosen candidates. Each pair is scored in its
    list (`in_place`), which a keyword feature may read ("BM25 within the list"): a deletion from a
    candidate is then scored with the list's IDF as that deletion makes it, and ranked among the other
    candidates' unedited scores (what it changes in theirs is left out).
    """
    params = matcher.params
    chosen = list(range(len(candidates))) if chosen is None else list(chosen)
    q_positions = [p for p in seen_positions(question, params.max_question_len) if len(question) > 1]
    questions: list[Sequence[Token]] = [question] * len(candidates)
    answers: list[Sequence[Token]] = list(candidates)
    for p in q_positions:
        edited = without(question, {p})
        questions += [edited] * len(candidates)
        answers += list(candidates)
    collections = [candidates] * len(answers)
    a_positions = {c: [p for p in seen_positions(candidates[c], params.max_answer_len) if len(candidates[c]) > 1]
                   for c in chosen}
    for c in chosen:
        for p in a_positions[c]:
            questions.append(question)
            answers.append(without(candidates[c], {p}))
            collections.append(in_place(candidates, c, answers[-1]))
    scores = matcher.score_tokens(questions, answers, collections=collections).astype(np.float64)
    count = len(candidates)
    base = scores[:count]
    by_question = scores[count:count * (1 + len(q_positions))].reshape(len(q_positions), count)
    offset = count * (1 + len(q_positions))
    results = {}
    for c in chosen:
        others = np.delete(base, c)
        rank = competition_rank(base[c], others)
        q_effects = []
        for row, p in enumerate(q_positions):
            after = by_question[row]
            q_effects.append(WordEffect("question", p, question[p].text, float(after[c]), rank,
                                        competition_rank(after[c], np.delete(after, c))))
        if len(question) == 1:
            q_effects.append(WordEffect("question", 0, question[0].text, None, rank, None))
        a_effects = []
        for p in a_positions[c]:
            value = float(scores[offset])
            offset += 1
            a_effects.append(WordEffect("answer", p, candidates[c][p].text, value, rank,
                                        competition_rank(value, others)))
        if len(candidates[c]) == 1:
            a_effects.append(WordEffect("answer", 0, candidates[c][0].text, None, rank, None))
        results[c] = DeletionEffects(matcher.name, c, float(base[c]), rank, tuple(q_effects), tuple(a_effects))
    return results


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float | None:
    """Spearman rank correlation over the pairs where both are finite; None when undefined.

    Undefined: fewer than 3 pairs, or one side constant (every word equally weighted).
    """
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(spearmanr(a, b).statistic)


def attention_agreement(attention: np.ndarray | None, effects: DeletionEffects, side: str) -> float | None:
    """Does the model use what it attends to? Spearman of alpha against |deletion effect| on `side`.

    The magnitude is used because attention says how much a word is read, not in which
    direction it moves the score.
    """
    if attention is None:
        return None
    values = np.abs(effects.effects(side))[: len(attention)]
    return spearman(np.asarray(attention)[: len(values)], values)
