"""Counterfactual editing: what changed between two rankings, word by word and rank by rank.

The app keeps the ranking from before an edit; `compare` lines the candidates of
both up (by position when the count is unchanged, else by identical text) and
reports, per model, how each candidate's rank and score moved, plus the words
that were replaced, added or removed in the question and the candidates.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from matching.explain.ranking import Ranking
from matching.text.tokens import Token


@dataclass(frozen=True)
class WordChange:
    where: str
    """'question' or 'candidate N' (1-based, in the new list)."""
    before: str
    """Words removed or replaced ('' for an insertion)."""
    after: str
    """Words that took their place ('' for a deletion)."""

    def describe(self) -> str:
        if not self.before:
            return f"{self.where}: added '{self.after}'"
        if not self.after:
            return f"{self.where}: removed '{self.before}'"
        return f"{self.where}: '{self.before}' -> '{self.after}'"


@dataclass(frozen=True)
class Comparison:
    pairs: tuple[tuple[int, int], ...]
    """(index before, index now) of each candidate present in both rankings."""
    changes: tuple[WordChange, ...]
    rows: tuple[dict[str, object], ...]
    """One row per paired candidate: '#', then '<model> rank before', '<model> rank now',
    '<model> rank change' (positive = moved up), '<model> rank' (text: '4 → 3', or '2' when
    unchanged) and '<model> score change' for each model in both rankings."""
    models: tuple[str, ...]
    added: int = 0
    """Candidates now that have no partner before."""
    removed: int = 0
    """Candidates before that have no partner now."""

    @property
    def changed(self) -> bool:
        return bool(self.changes or self.added or self.removed) or any(
            row[f"{m} rank change"] != 0 or abs(float(row[f"{m} score change"])) > 1e-9  # type: ignore[arg-type]
            for row in self.rows for m in self.models)

    @property
    def small(self) -> bool:
        """A counterfactual-sized edit: at most 8 words changed and 2 candidates added or removed."""
        words = sum(max(len(c.before.split()), len(c.after.split())) for c in self.changes)
        return words <= 8 and self.added + self.removed <= 2 and bool(self.pairs)

    def moved(self, model: str) -> int:
        """How many candidates changed rank under `model`."""
        return sum(row[f"{model} rank change"] != 0 for row in self.rows)


def rank_text(before: int, now: int) -> str:
    """'4 → 3' when the rank moved, '2' when it stayed."""
    return f"{before} → {now}" if before != now else str(now)


def word_changes(before: Sequence[Token], after: Sequence[Token], where: str) -> list[WordChange]:
    """Word-level differences (on the lookup keys) between two token sequences."""
    old, new = [t.key for t in before], [t.key for t in after]
    changes = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op != "equal":
            changes.append(WordChange(where, " ".join(t.text for t in before[i1:i2]),
                                      " ".join(t.text for t in after[j1:j2])))
    return changes


def pair_candidates(before: Sequence[str], after: Sequence[str]) -> list[tuple[int, int]]:
    """Same count: pair by position (an edited candidate stays itself); else by identical text."""
    if len(before) == len(after):
        return list(zip(range(len(before)), range(len(after)), strict=True))
    unused: dict[str, list[int]] = {}
    for index, text in enumerate(before):
        unused.setdefault(text, []).append(index)
    pairs = []
    for index, text in enumerate(after):
        if unused.get(text):
            pairs.append((unused[text].pop(0), index))
    return pairs


def compare(before: Ranking, after: Ranking) -> Comparison:
    pairs = pair_candidates(before.candidates, after.candidates)
    changes = word_changes(before.question_tokens, after.question_tokens, "question")
    for old, new in pairs:
        changes += word_changes(before.candidate_tokens[old], after.candidate_tokens[new], f"candidate {new + 1}")
    models = tuple(m for m in after.models if m in before.models)
    rows = []
    for old, new in pairs:
        row: dict[str, object] = {"#": new + 1}
        for m in models:
            rank_before, rank_now = int(before.models[m].ranks[old]), int(after.models[m].ranks[new])
            row[f"{m} rank before"] = rank_before
            row[f"{m} rank now"] = rank_now
            row[f"{m} rank change"] = rank_before - rank_now
            row[f"{m} rank"] = rank_text(rank_before, rank_now)
            row[f"{m} score change"] = float(after.models[m].scores[new] - before.models[m].scores[old])
        rows.append(row)
    return Comparison(pairs=tuple(pairs), changes=tuple(changes), rows=tuple(rows), models=models,
                      added=len(after.candidates) - len(pairs), removed=len(before.candidates) - len(pairs))
