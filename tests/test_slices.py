"""Slices, top answers, identical-word share and the empty-filter sentence on tiny data."""

from __future__ import annotations

from conftest import MatcherFactory, toy_lists

from matching.evaluation.dataset import evaluate
from matching.evaluation.slices import identical_word_share, overlap, question_word, slice_rows, top_answers
from matching.text.tokens import tokenize


def test_question_word_and_overlap() -> None:
    assert question_word(tokenize("Who wrote Hamlet?")) == "who"
    assert question_word(tokenize("In which year did it end?")) == "other"
    assert question_word(tokenize("Tell me: how hot is the sun")) == "how"
    assert overlap(tokenize("who wrote hamlet ?"), tokenize("Hamlet was written by Shakespeare.")) == 1 / 3
    assert overlap(tokenize("?"), tokenize("x")) == 0.0


def test_slices_cover_every_question_with_a_correct_answer(make_matcher: MatcherFactory) -> None:
    lists = toy_lists()
    models = {"tiny": make_matcher(seed=1)}
    evaluation = evaluate(lists, models)
    tables = evaluation.slice_rows()
    assert tables == slice_rows(evaluation.slices, {s: evaluation.ap(s) for s in evaluation.systems})
    assert set(tables) == {"question word", "correct-answer length", "word overlap"}
    for rows in tables.values():
        assert sum(int(r["questions"]) for r in rows) == len(lists)  # type: ignore[call-overload]
        assert all(0 <= float(r["tiny MAP"]) <= 1 for r in rows)  # type: ignore[arg-type]
    words = {r["question word"] for r in tables["question word"]}
    assert {"where", "who", "what", "how", "when"} <= words
    tops = evaluation.top_answers(lists, limit=20)
    assert len(tops) == len(lists) and all(len(t["tiny"]) <= 20 for t in tops)
    for item, top, position in zip(lists, tops, evaluation.top("tiny"), strict=True):
        assert item.candidates[int(position)].startswith(top["tiny"].rstrip("…"))
    assert top_answers(lists[:1], {"m": [1]}, limit=1000) == [{"m": lists[0].candidates[1]}]
    shares = identical_word_share(lists, models | {"mcan": make_matcher(seed=1, name="mcan", family="mcan")},
                                  max_questions=3)
    assert shares[0]["pairs"] == 12 and 0 < float(shares[0]["identical-word share"]) <= 1  # type: ignore[arg-type]
    assert shares[1]["identical-word share"] is None  # no pooled cells: no share, not "0%, beyond exact words"


def test_fractional_mean_lengths_and_small_overlaps_fall_in_a_slice() -> None:
    from matching.evaluation.slices import LENGTH_BINS, OVERLAP_BINS, _bin

    assert _bin(10.5, LENGTH_BINS) == "11-20 words" and _bin(10.0, LENGTH_BINS) == "1-10 words"
    assert _bin(40.5, LENGTH_BINS) == "41+ words" and _bin(1e-12, OVERLAP_BINS) == "up to 1/3"
    assert _bin(0.0, OVERLAP_BINS) == "none" and _bin(1.0, OVERLAP_BINS) == "over 2/3"


def test_empty_filter_reason(make_matcher: MatcherFactory) -> None:
    lists = toy_lists(0, 3)
    evaluation = evaluate(lists, {"a": make_matcher(seed=1, name="a")})
    text = evaluation.empty_filter_reason(disagree=True, low=False, threshold=3)
    assert "agree on the top answer for all 3 questions" in text  # one model cannot disagree with itself
    text = evaluation.empty_filter_reason(disagree=False, low=True, threshold=100)
    assert "rank ≥ 100" in text


def test_a_question_whose_correct_answers_average_between_two_bins_is_sliced(make_matcher: MatcherFactory) -> None:
    """Two correct answers of 10 and 11 words: a mean of 10.5 (an uploaded file broke on this)."""
    from matching.text.data import RankingList

    ten = " ".join(["word"] * 9) + " paris"
    eleven = " ".join(["word"] * 10) + " paris"
    lists = [RankingList("q1", "where is paris", (ten, eleven, "a river in spain"), (1, 1, 0))]
    evaluation = evaluate(lists, {"tiny": make_matcher(seed=1)})
    tables = evaluation.slice_rows()
    assert [r["correct-answer length"] for r in tables["correct-answer length"]] == ["11-20 words"]
    assert evaluation.top_answers(lists)[0]["tiny"] in (ten, eleven, "a river in spain")
