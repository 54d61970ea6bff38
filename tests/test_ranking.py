"""rank(): models and baselines side by side, and a defined result or a TextError for any input."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import VARIANTS, MatcherFactory, assert_explanation_invariants

from matching.explain.matcher import Matcher
from matching.explain.ranking import ModelRanking, Ranking, competition_ranks, rank, score_split_rows
from matching.text.inputs import MAX_CANDIDATES
from matching.text.tokens import MAX_TEXT_CHARS, TextError


@pytest.fixture(scope="module")
def models(make_matcher: MatcherFactory) -> dict[str, Matcher]:
    return {"plain": make_matcher(seed=1, name="plain", **VARIANTS["cosine"]),
            "attentive": make_matcher(seed=2, name="attentive", **VARIANTS["amv-both-tensor"])}


def test_competition_ranks_share_the_best_rank_of_a_tie() -> None:
    assert competition_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist() == [2, 1, 2, 4]
    assert competition_ranks(np.array([1.0, 1.0, 1.0])).tolist() == [1, 1, 1]
    assert competition_ranks(np.array([-np.inf, 0.0])).tolist() == [2, 1]


def test_models_and_baselines_side_by_side(models: dict[str, Matcher]) -> None:
    candidates = ["Paris is the capital of France .", "Berlin is in Germany .", "Paris !"]
    ranking = rank("What is the capital of France ?", candidates, models, labels=[1, 0, 0])
    assert list(ranking.models) == ["plain", "attentive"]
    assert list(ranking.baselines) == ["original order", "word overlap", "BM25"]
    for name, result in ranking.models.items():
        assert result.scores.shape == result.ranks.shape == (3,)
        assert result.ranks.tolist() == competition_ranks(result.scores).tolist()
        alone = models[name].explain("What is the capital of France ?", candidates)
        np.testing.assert_allclose(result.scores, [e.score for e in alone], atol=1e-5)
        for explanation in result.explanations:
            assert_explanation_invariants(explanation, models[name])
    rows = ranking.rows()
    assert len(rows) == 3
    assert rows[0]["#"] == 1 and rows[0]["candidate"] == candidates[0] and rows[0]["correct"] is True
    assert rows[1]["correct"] is False
    for row, index in zip(rows, range(3), strict=True):
        for name in (*models, "original order", "word overlap", "BM25"):
            assert isinstance(row[f"{name} rank"], int) and isinstance(row[f"{name} score"], float)
        assert row["plain score"] == ranking.models["plain"].scores[index]
    assert [r["original order rank"] for r in rows] == [1, 2, 3]
    assert [r["word overlap score"] for r in rows] == [5.0, 1.0, 0.0]
    spread = ranking.disagreement()
    plain, attentive = ranking.models["plain"].ranks, ranking.models["attentive"].ranks
    assert spread.tolist() == np.abs(plain - attentive).tolist()


def test_rows_without_labels_and_disagreement_without_models() -> None:
    ranking = rank("what is ice ?", ["frozen water", "a cream"], {})
    assert ranking.labels is None and ranking.models == {}
    assert "correct" not in ranking.rows()[0]
    assert ranking.disagreement().tolist() == [0, 0]


def test_disagreement_is_the_rank_spread_across_models() -> None:
    def model(ranks: list[int]) -> ModelRanking:
        return ModelRanking(np.zeros(3), np.array(ranks), [])

    ranking = Ranking("q", ("a", "b", "c"), (), ((), (), ()), None,
                      {"x": model([1, 2, 3]), "y": model([3, 2, 1]), "z": model([2, 2, 1])}, {}, {})
    assert ranking.disagreement().tolist() == [2, 0, 2]


EMOJI_CJK_RTL = "東京タワー 🗼 is tall — برج بلند — מגדל גבוה"
LONG = " ".join(["the tower is tall and red"] * 400)[:10_000]


@pytest.mark.parametrize("question, candidate", [
    ("zzqxv qqzvx wwkzq ?", "xxqzv vvzqk"),  # every word unknown
    ("how tall is the tokyo tower ?", EMOJI_CJK_RTL),
    ("東京タワー の 高さ は ?", "It is 333 m tall ."),
    ("how tall is the tower\u200b ?", "it is 333\u200b m tall\u200d ."),  # zero-width inside words
    ("<script>alert('x')</script> tower ?", "<b>333 m</b> &amp; <img src=x onerror=alert(1)>"),
    ("how tall is it ?", LONG),  # 10,000 characters
    ("x", "y"),
])
def test_any_text_gives_a_defined_result(models: dict[str, Matcher], question: str, candidate: str) -> None:
    ranking = rank(question, [candidate, "a short answer"], models)
    for tokens, text in ((ranking.question_tokens, question),
                         *((c, t) for c, t in zip(ranking.candidate_tokens, ranking.candidates, strict=True))):
        assert tokens and all(text[t.start:t.end] == t.text for t in tokens)
    for name, result in ranking.models.items():
        assert np.isfinite(result.scores).all()
        for explanation, text in zip(result.explanations, ranking.candidates, strict=True):
            assert_explanation_invariants(explanation, models[name])
            assert all(text[t.start:t.end] == t.text for t in explanation.answer_tokens)
            assert all(question[t.start:t.end] == t.text for t in explanation.question_tokens)
        first = result.explanations[0]
        max_len = models[name].params.max_answer_len
        assert [t.truncated for t in first.answer_tokens] == [n >= max_len for n in range(len(first.answer_tokens))]
    for scores in ranking.baselines.values():
        assert np.isfinite(scores).all()


def test_long_candidate_is_truncated_not_refused(models: dict[str, Matcher]) -> None:
    assert len(LONG) == 10_000
    ranking = rank("how tall is the tower ?", [LONG], models)
    tokens = ranking.models["plain"].explanations[0].answer_tokens
    assert len(tokens) > 1000 and sum(not t.truncated for t in tokens) == models["plain"].params.max_answer_len
    assert all(LONG[t.start:t.end] == t.text for t in tokens)


@pytest.mark.parametrize("question, candidates, labels, message", [
    ("", ["an answer"], None, "the question has no words"),
    ("   \n\t", ["an answer"], None, "the question has no words"),
    ("\u200b\u200d\ufeff", ["an answer"], None, "the question has no words"),
    ("a question", [""], None, "candidate #1 has no words"),
    ("a question", ["fine", " \u200b "], None, "candidate #2 has no words"),
    ("a question", [], None, "at least one candidate"),
    ("a question", ["answer"] * (MAX_CANDIDATES + 1), None, f"the limit is {MAX_CANDIDATES}"),
    ("a question", ["one", "two"], [1], "1 labels for 2 candidates"),
    ("q " * (MAX_TEXT_CHARS // 2 + 1), ["an answer"], None, "^the question: text has .* the limit is"),
    ("a question", ["fine", "a" * (MAX_TEXT_CHARS + 1)], None, "^candidate #2: text has .* the limit is"),
])
def test_unusable_input_is_a_text_error(models: dict[str, Matcher], question: str, candidates: list[str],
                                        labels: list[int] | None, message: str) -> None:
    with pytest.raises(TextError, match=message):
        rank(question, candidates, models, labels=labels)


def test_exactly_the_candidate_limit_is_accepted(models: dict[str, Matcher]) -> None:
    ranking = rank("which one ?", [f"answer {n}" for n in range(MAX_CANDIDATES)], {"plain": models["plain"]})
    assert len(ranking.models["plain"].scores) == MAX_CANDIDATES


def test_ranking_tokens_carry_the_unknown_flags(models: dict[str, Matcher]) -> None:
    ranking = rank("who wrote zzqxvv ?", ["shakespeare wrote qqvzzx"], models)
    assert [t.unknown for t in ranking.question_tokens] == [False, False, True, False]
    assert [t.unknown for t in ranking.candidate_tokens[0]] == [False, False, True]


def test_the_score_split_is_read_off_the_pass_without_building_explanations(make_matcher: MatcherFactory) -> None:
    models = {"kw": make_matcher(name="kw", **VARIANTS["cosine-exact-keywords"]), "plain": make_matcher(name="plain")}
    ranking = rank("where is the eiffel tower", ["the tower is in paris", "the river flows north"], models)
    rows = score_split_rows(ranking, 1)
    assert all(not result.explanations._built for result in ranking.models.values())  # type: ignore[attr-defined]
    for row, (name, result) in zip(rows, ranking.models.items(), strict=True):
        explanation = result.explanations[1]  # built now: the same numbers
        assert row["score"] == explanation.score and row["learned match"] == explanation.learned_score
        assert row["keywords"] == (explanation.keyword_score if explanation.keyword_terms else None)
        assert abs(row["learned match"] + (row["keywords"] or 0.0) - row["score"]) < 1e-5, name
    assert rows[0]["keywords"] is not None and rows[1]["keywords"] is None


def test_silent_features_are_the_keyword_columns_that_add_nothing_for_any_model() -> None:
    from matching.explain.ranking import silent_features

    rows = [{"model": "a", "score": 2.5, "learned match": 2.0, "keywords": 0.5, "word overlap": 0.5,
             "number asked, number given": 0.0, "echoes the question": -0.0},
            {"model": "b", "score": 1.25, "learned match": 1.0, "keywords": 0.25, "word overlap": 0.0,
             "number asked, number given": 0.0, "echoes the question": 0.25},
            {"model": "c", "score": 3.0, "learned match": 3.0, "keywords": None}]
    assert silent_features(rows) == ["number asked, number given"]
    # the rows still add up without them
    for row in rows[:2]:
        kept = sum(v for k, v in row.items() if k not in {"model", "score", "learned match", "keywords",
                                                          *silent_features(rows)})
        assert kept == row["keywords"]
    assert silent_features(rows[2:]) == []


def test_keyword_decisions_say_when_the_keyword_term_changes_the_first_candidate(make_matcher: MatcherFactory) -> None:
    """`keyword_decisions`: for each keyword model, the first candidate by its whole score and by its learned match
    alone, read off the pass; the keyword term decides where they differ, and only a weight that can carry the
    ranking makes it so."""
    import torch

    from matching.explain.ranking import keyword_decisions

    keyword_model = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3)
    models = {"kw": keyword_model, "plain": make_matcher(seed=2, name="plain", family="mcan")}
    question, candidates = "who wrote the play hamlet", ["who wrote the play hamlet", "paris is in france",
                                                          "the river flows north"]
    weights = keyword_model.model.keywords.weights  # type: ignore[union-attr]
    with torch.no_grad():
        weights.zero_()
    [silent] = keyword_decisions(rank(question, candidates, models))  # the model without keywords has none
    assert silent.model == "kw" and silent.whole == silent.learned and not silent.keywords_decide
    first = silent.learned[0]
    # Word overlap weighed so that it carries the ranking: to the question's copy, or away from it if the learned
    # match puts the copy first already.
    with torch.no_grad():
        weights[0] = 1e3 if first != 0 else -1e3
    ranking = rank(question, candidates, models)
    [decided] = keyword_decisions(ranking)
    splits = [ranking.models["kw"].score_split(index) for index in range(len(candidates))]
    assert decided.keywords_decide and decided.learned == (first,)
    assert decided.learned == (int(np.argmax([split.learned_score for split in splits])),)
    assert decided.whole == tuple(int(i) for i in np.flatnonzero(ranking.models["kw"].ranks == 1))
    assert decided.whole == ((0,) if first != 0 else (1,))
    assert keyword_decisions(rank(question, candidates[:1], models)) == []  # one candidate: nothing to put first


def test_copies_of_a_candidate_are_one_row_of_the_pass(variant_matcher: Matcher) -> None:
    """A visitor who pastes one answer three times saw ranks 2, 1, 2 and "the models disagree": each copy was scored
    in its own row of the batch, and rows differ by float noise (2e-6). Copies the model reads alike (the same lookup
    keys: "Bram", "bram") are one row of the pass; the other candidates still count in each pair's list."""
    candidates = ["the novel was written by mary shelley", "a river in france", "The novel was written by Mary Shelley",
                  "the novel was written by mary shelley", "shelley"]
    ranking = rank("who wrote the novel frankenstein", candidates, {"m": variant_matcher})
    result = ranking.models["m"]
    assert result.scores[0] == result.scores[2] == result.scores[3]
    assert result.ranks[0] == result.ranks[2] == result.ranks[3]
    copy, first = result.explanations[2], result.explanations[0]
    assert copy.answer_tokens[1].text == "novel" and copy.answer_tokens[5].text == "Mary"  # its own words, shown
    for name, cells in first.cell_contributions.items():
        np.testing.assert_array_equal(copy.cell_contributions[name], cells)
    for explanation in result.explanations:
        assert_explanation_invariants(explanation, variant_matcher)
    # The scores are those of the whole list, as evaluation scores it (BM25 within the list counts every copy).
    tokens = [ranking.question_tokens] * len(candidates)
    scored = variant_matcher.score_tokens(tokens, list(ranking.candidate_tokens))
    np.testing.assert_allclose(result.scores, scored, rtol=1e-5, atol=1e-5)
