"""evaluate(): models beside the three baselines, overall and per question."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import MatcherFactory, toy_lists

from matching.evaluation.dataset import evaluate, first_correct_rank, format_table, model_scores, tokenize_lists
from matching.evaluation.metrics import METRICS
from matching.explain.matcher import Matcher
from matching.models.batching import RowCache
from matching.text.baselines import BASELINES
from matching.text.data import RankingList


@pytest.fixture(scope="module")
def matcher(make_matcher: MatcherFactory) -> Matcher:
    return make_matcher(seed=5, name="tiny")


def test_overall_table_has_the_model_and_the_three_baselines(matcher: Matcher) -> None:
    lists = toy_lists()
    progress: list[tuple[int, int, str]] = []
    result = evaluate(lists, {"tiny": matcher}, progress=lambda *call: progress.append(call))
    assert result.systems == ["tiny", *BASELINES]
    assert result.evaluated == len(lists) and result.skipped == []
    assert [row["system"] for row in result.table()] == result.systems
    for system in result.systems:
        assert set(result.overall[system]) == set(METRICS)
        assert all(0.0 <= value <= 1.0 for value in result.overall[system].values())
    # The correct answer sits at position n % 4 of toy list n: original order's AP is 1 / (n % 4 + 1).
    expected_map = np.mean([1 / (n % 4 + 1) for n in range(len(lists))])
    assert result.overall["original order"]["MAP"] == pytest.approx(expected_map)
    # The correct answers share many words with their questions: overlap finds them all.
    assert result.overall["word overlap"]["MAP"] == 1.0
    pairs = sum(len(item.candidates) for item in lists)
    assert progress[-1] == (pairs, pairs, "tiny")
    # Evaluation scores are the same scores the explanations show.
    explained = matcher.explain(lists[0].question, list(lists[0].candidates))
    np.testing.assert_allclose(result.scores["tiny"][0], [e.score for e in explained], atol=1e-5)


def test_per_question_rows(matcher: Matcher) -> None:
    lists = toy_lists(0, 4)
    result = evaluate(lists, {"tiny": matcher, "twin": matcher})
    assert [row["qid"] for row in result.per_question] == ["Q0", "Q1", "Q2", "Q3"]
    for n, row in enumerate(result.per_question):
        assert row["question"] == lists[n].question
        assert row["candidates"] == 4 and row["correct"] == 1
        assert row["original order first correct"] == n + 1
        assert row["original order AP"] == pytest.approx(1 / (n + 1))
        for system in result.systems:
            assert 1 <= row[f"{system} first correct"] <= 4  # type: ignore[operator]
        assert row["models disagree"] is False  # the same model twice always agrees


def test_candidate_without_words_gets_minus_infinity(matcher: Matcher) -> None:
    lists = [RankingList("Q", "who wrote hamlet", ("shakespeare wrote hamlet", "  ", "\u200b", "a play"),
                         (1, 0, 0, 0)),
             RankingList("E", "   ", ("anything",), (1,)),
             RankingList("N", "no candidates", (), ())]
    result = evaluate(lists, {"tiny": matcher})
    assert result.evaluated == 1
    assert result.skipped == ["E: the question has no words", "N: no candidates"]
    scores = result.scores["tiny"][0]
    assert scores[1] == scores[2] == -math.inf and np.isfinite(scores[[0, 3]]).all()
    assert all(np.isfinite(v) for v in result.overall["tiny"].values())
    assert result.per_question[0]["tiny first correct"] in (1, 2)


def test_first_correct_rank_counts_ties_against_it() -> None:
    assert first_correct_rank(np.array([0.1, 0.9, 0.5]), [1, 0, 1]) == 2
    assert first_correct_rank(np.array([0.5, 0.5, 0.5]), [0, 1, 0]) == 3
    assert first_correct_rank(np.array([0.5, 0.2]), [0, 0]) is None


def test_format_table(matcher: Matcher) -> None:
    result = evaluate(toy_lists(0, 2), {"tiny": matcher})
    table = format_table(result, extra={"paper": {"MAP": 0.6046, "MRR": 0.6215}})
    lines = table.splitlines()
    assert lines[0] == "| system | " + " | ".join(METRICS) + " |"
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| tiny", "| original order", "| word overlap", "| BM25",
                                                           "| paper"]
    assert lines[-1] == "| paper | 0.6046 | 0.6215 | - | - | - |"


@pytest.mark.parametrize("workers", [1, 3])
def test_scores_do_not_depend_on_threads_order_or_remembered_lookups(matcher: Matcher, workers: int) -> None:
    """Bucketed, threaded, with word rows remembered across calls: each pair's score is the one
    it gets scored alone."""
    tokenized, _ = tokenize_lists(toy_lists())
    known: RowCache = {}
    first = model_scores(matcher, tokenized, batch_size=4, workers=workers, known=known)
    assert known, "the word rows were remembered"
    again = model_scores(matcher, tokenized, batch_size=4, workers=workers, known=known)
    for n, item in enumerate(tokenized):
        alone = matcher.score_tokens([item.question] * len(item.candidates), item.candidates)
        np.testing.assert_allclose(first[n], alone, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(first[n], again[n])


def test_a_file_read_in_many_chunks_gives_what_one_chunk_gives(matcher: Matcher,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import matching.evaluation.dataset as evaluation_module

    lists = toy_lists()
    whole = evaluate(lists, {"tiny": matcher}, workers=1)
    monkeypatch.setattr(evaluation_module, "CHUNK_QUESTIONS", 2)  # metrics and slices are kept chunk by chunk
    chunked = evaluate(lists, {"tiny": matcher}, workers=2)
    assert chunked.per_question == whole.per_question and chunked.overall == whole.overall
    assert chunked.slices == whole.slices and [item.qid for item in chunked.lists] == [item.qid for item in lists]
    for system in whole.systems:
        for mine, theirs in zip(chunked.scores[system], whole.scores[system], strict=True):
            np.testing.assert_allclose(mine, theirs, atol=1e-6)
