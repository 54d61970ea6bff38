"""Counterfactual comparison on hand-built rankings (no model needed)."""

from __future__ import annotations

import numpy as np

from matching.explain.counterfactual import compare, pair_candidates, word_changes
from matching.explain.ranking import ModelRanking, Ranking, competition_ranks
from matching.text.tokens import tokenize


def ranking(question: str, candidates: list[str], scores: dict[str, list[float]]) -> Ranking:
    models = {name: ModelRanking(np.array(s), competition_ranks(np.array(s)), []) for name, s in scores.items()}
    return Ranking(question=question, candidates=tuple(candidates), question_tokens=tuple(tokenize(question)),
                   candidate_tokens=tuple(tuple(tokenize(c)) for c in candidates), labels=None, models=models,
                   baselines={})


def test_word_changes_replace_insert_delete() -> None:
    changes = word_changes(tokenize("who wrote the novel"), tokenize("who wrote that great novel"), "question")
    assert [c.describe() for c in changes] == ["question: 'the' -> 'that great'"]
    assert word_changes(tokenize("a b"), tokenize("a b c"), "q")[0].describe() == "q: added 'c'"
    assert word_changes(tokenize("a b c"), tokenize("a c"), "q")[0].describe() == "q: removed 'b'"
    assert word_changes(tokenize("Same words"), tokenize("same WORDS"), "q") == []


def test_pairing_by_position_or_text() -> None:
    assert pair_candidates(["a", "b"], ["a", "x"]) == [(0, 0), (1, 1)]
    assert pair_candidates(["a", "b", "c"], ["c", "a"]) == [(2, 0), (0, 1)]


def test_compare_reports_rank_and_score_deltas() -> None:
    before = ranking("who wrote it", ["Austen wrote it", "a dog"], {"m": [1.0, 2.0], "n": [3.0, 1.0]})
    after = ranking("who wrote it", ["Austen wrote it", "a cat"], {"m": [3.0, 2.0], "n": [3.0, 1.5]})
    comparison = compare(before, after)
    assert comparison.changed
    assert [c.describe() for c in comparison.changes] == ["candidate 2: 'dog' -> 'cat'"]
    first, second = comparison.rows
    assert first["m rank before"] == 2 and first["m rank change"] == 1  # moved up to rank 1
    assert first["m rank now"] == 1 and first["m rank"] == "2 → 1"
    assert second["m rank change"] == -1
    assert abs(float(first["m score change"]) - 2.0) < 1e-9  # type: ignore[arg-type]
    assert comparison.moved("m") == 2 and comparison.moved("n") == 0
    assert comparison.added == 0 and comparison.removed == 0


def test_no_change_is_not_changed() -> None:
    same = ranking("q", ["a", "b"], {"m": [1.0, 2.0]})
    assert not compare(same, same).changed


def test_added_candidates_are_counted() -> None:
    before = ranking("q", ["a", "b"], {"m": [1.0, 2.0]})
    after = ranking("q", ["a", "b", "c"], {"m": [1.0, 2.0, 0.5]})
    comparison = compare(before, after)
    assert comparison.added == 1 and comparison.removed == 0 and comparison.changed
    assert comparison.models == ("m",)


def test_small_edits_only_are_compared() -> None:
    before = ranking("who wrote the novel", ["a b c", "d e f"], {"m": [1.0, 2.0]})
    edited = ranking("who wrote the book", ["a b c", "d e f"], {"m": [2.0, 1.0]})
    assert compare(before, edited).small
    replaced = ranking("what is the capital of france now", ["x y z w", "p q r s"], {"m": [2.0, 1.0]})
    assert not compare(before, replaced).small
    many = ranking("q", [f"new candidate {i}" for i in range(6)], {"m": [float(i) for i in range(6)]})
    assert not compare(before, many).small  # nothing pairs up: a new input, not an edit
