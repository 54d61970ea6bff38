"""The smallest rank flip: a few word deletions after which the lower candidate outranks the upper one.

Greedy search, bounded: at each step every remaining seen word of the question and of
the lower candidate is tried as the next deletion, all in one batched pass; the one
that shrinks the gap score(upper) - score(lower) the most is kept. It stops as soon
as the lower candidate scores strictly higher, after `max_deletions` words, or when
the time budget is spent. Greedy finds a small set, not provably the smallest.

The edited texts are the person's own texts with the words' spans cut out, and the
result is checked by scoring those texts from scratch (`verified`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from matching.explain.deletion import delete_words, in_place, seen_positions, without
from matching.explain.matcher import Matcher
from matching.explain.ranking import Ranking
from matching.text.tokens import Token, tokenize

MAX_DELETIONS = 5
MAX_SECONDS = 2.0


@dataclass(frozen=True)
class Deletion:
    side: str
    """'question' or 'candidate'."""
    position: int
    """Index into the original tokens of that text."""
    word: str


@dataclass(frozen=True)
class RankFlip:
    model: str
    upper: int
    """The candidate the model ranked higher before the edit."""
    lower: int
    found: bool
    deletions: tuple[Deletion, ...]
    gaps: tuple[float, ...]
    """score(upper) - score(lower) before any deletion, then after each one."""
    question: str
    """The edited question text (the original when nothing was deleted from it)."""
    lower_text: str
    """The edited text of the lower candidate."""
    verified_gap: float | None
    """The gap when the edited texts are tokenised and scored from scratch."""
    note: str
    """Why the search stopped, in a sentence."""

    @property
    def verified(self) -> bool:
        return self.verified_gap is not None and self.verified_gap < 0

    def describe(self) -> str:
        if not self.deletions and self.found:
            return f"{self.model} already ranks #{self.lower + 1} above #{self.upper + 1}."
        words = ", ".join(f"'{d.word}' from the {d.side}" for d in self.deletions)
        if self.found:
            return (f"Deleting {len(self.deletions)} word(s) ({words}) puts #{self.lower + 1} above "
                    f"#{self.upper + 1} for {self.model}: the gap goes from {self.gaps[0]:+.3f} to "
                    f"{self.gaps[-1]:+.3f}.")
        return self.note


def smallest_flip(matcher: Matcher, question_text: str, question: Sequence[Token], candidate_texts: Sequence[str],
                  candidates: Sequence[Sequence[Token]], upper: int, lower: int,
                  max_deletions: int = MAX_DELETIONS, max_seconds: float = MAX_SECONDS) -> RankFlip:
    """Greedy word deletions from the question and from candidate `lower` until it outranks `upper`."""
    params = matcher.params
    start = time.perf_counter()
    removed_q: set[int] = set()
    removed_c: set[int] = set()
    chosen: list[Deletion] = []
    # Each pair in its list (the candidates, `lower` as edited so far): a keyword feature may read the list.
    first = matcher.score_tokens([question, question], [candidates[upper], candidates[lower]],
                                 collections=[candidates, candidates])
    gaps = [float(first[0] - first[1])]
    note = ""
    while gaps[-1] >= 0:
        if len(chosen) >= max_deletions:
            note = (f"No flip within {max_deletions} deletions: the best greedy choice still leaves "
                    f"#{upper + 1} ahead by {gaps[-1]:.3f}.")
            break
        if time.perf_counter() - start > max_seconds:
            note = f"Stopped after {max_seconds:.0f} s with {len(chosen)} deletion(s); no flip found yet."
            break
        q_kept = without(question, removed_q)
        c_kept = without(candidates[lower], removed_c)
        q_index = [i for i in range(len(question)) if i not in removed_q]
        c_index = [i for i in range(len(candidates[lower])) if i not in removed_c]
        trials: list[tuple[str, int]] = []
        questions: list[Sequence[Token]] = []
        answers: list[Sequence[Token]] = []
        collections: list[Sequence[Sequence[Token]]] = []
        if len(q_kept) > 1:
            kept_list = in_place(candidates, lower, c_kept)
            for p in seen_positions(q_kept, params.max_question_len):
                edited = without(q_kept, {p})
                trials.append(("question", q_index[p]))
                questions += [edited, edited]
                answers += [candidates[upper], c_kept]
                collections += [kept_list, kept_list]
        if len(c_kept) > 1:
            for p in seen_positions(c_kept, params.max_answer_len):
                trials.append(("candidate", c_index[p]))
                questions += [q_kept, q_kept]
                answers += [candidates[upper], without(c_kept, {p})]
                edited_list = in_place(candidates, lower, answers[-1])
                collections += [edited_list, edited_list]
        if not trials:
            note = "Nothing left to delete: the question and the candidate are down to one word each."
            break
        scores = matcher.score_tokens(questions, answers, collections=collections)
        trial_gaps = scores[0::2] - scores[1::2]
        best = int(trial_gaps.argmin())
        side, position = trials[best]
        (removed_q if side == "question" else removed_c).add(position)
        word = (question if side == "question" else candidates[lower])[position].text
        chosen.append(Deletion(side, position, word))
        gaps.append(float(trial_gaps[best]))
    found = gaps[-1] < 0
    edited_question = delete_words(question_text, question, removed_q)
    edited_lower = delete_words(candidate_texts[lower], candidates[lower], removed_c)
    verified_gap = None
    q_tokens, c_tokens = tokenize(edited_question), tokenize(edited_lower)
    if q_tokens and c_tokens:
        checked_list = in_place(candidates, lower, c_tokens)
        check = matcher.score_tokens([q_tokens, q_tokens], [candidates[upper], c_tokens],
                                     collections=[checked_list, checked_list])
        verified_gap = float(check[0] - check[1])
    if found:
        note = f"Found with {len(chosen)} deletion(s)."
    return RankFlip(model=matcher.name, upper=upper, lower=lower, found=found, deletions=tuple(chosen),
                    gaps=tuple(gaps), question=edited_question, lower_text=edited_lower,
                    verified_gap=verified_gap, note=note)


def flip_pair(matcher: Matcher, ranking: Ranking, a: int, b: int, max_deletions: int = MAX_DELETIONS,
              max_seconds: float = MAX_SECONDS) -> RankFlip:
    """The flip for candidates a and b of a ranking, oriented by the model's own scores (upper = higher)."""
    scores = ranking.models[matcher.name].scores
    upper, lower = (a, b) if scores[a] >= scores[b] else (b, a)
    return smallest_flip(matcher, ranking.question, ranking.question_tokens, ranking.candidates,
                         ranking.candidate_tokens, upper, lower, max_deletions, max_seconds)
