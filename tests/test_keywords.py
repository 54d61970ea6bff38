"""The keyword term: exact features from lookup-key ids, kept with the checkpoint, split exactly from the score."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SECTION, MatcherFactory, assert_every_path_keeps_each_pairs_list, toy_lists

from matching.explain.matcher import Matcher
from matching.models.base import sized_for_corpus, trace_parts_of
from matching.models.blocks.keywords import (
    ANSWER_TYPE_RULES,
    BM25_B,
    BM25_K1,
    DAYS_ARE_NOT_NUMBERS,
    KEYWORD_FEATURES,
    ONE_IS_NOT_A_NUMBER,
    QUANTITY_NOUNS,
    YEARS_ARE_NOT_NUMBERS,
    KeywordTerm,
)
from matching.models.params import MVLSTMParams, ParamsError
from matching.models.parts import Part
from matching.text.corpus import Corpus
from matching.text.tokenized import tokenize_lists
from matching.training.checkpoint import load_checkpoint, save_checkpoint

PAD_Q, PAD_A = -(2**40), -(2**41)


def test_features_by_hand() -> None:
    term = KeywordTerm(2)
    term.fill(torch.tensor([10, 20]), torch.tensor([0.5, 0.25]), mean_answer_length=4.0)
    # question: 10 20 30 (pad); answer: 10 10 99 (pad pad)
    q = torch.tensor([[10, 20, 30, PAD_Q]])
    a = torch.tensor([[10, 10, 99, PAD_A, PAD_A]])
    features = term.features(q, a, torch.tensor([3]), torch.tensor([3]))[0]
    assert features[0].item() == pytest.approx(1 / 3)  # one of three question words occurs in the answer
    assert features[1].item() == pytest.approx(0.5 / (0.5 + 0.25 + 1.0))  # unseen word 30 has IDF 1
    norm = BM25_K1 * (1 - BM25_B + BM25_B * 3 / 4.0)
    assert features[2].item() == pytest.approx(0.5 * 2 * (BM25_K1 + 1) / (2 + norm) / 3)
    with torch.no_grad():
        term.weights.copy_(torch.tensor([1.0, 2.0, -3.0]))
    torch.testing.assert_close(term(q, a, torch.tensor([3]), torch.tensor([3]))[0], features * term.weights)


def test_unmatched_ids_leave_a_shared_mark_out_of_every_lexical_feature() -> None:
    """As trained, a '?' both texts hold counts as a shared word (bench/keyword_punctuation.py measures it); ids set
    unmatched never match, and the IDF sum and the question's length stay as they were."""
    term = KeywordTerm(2)
    term.fill(torch.tensor([10, 20]), torch.tensor([0.5, 0.25]), mean_answer_length=4.0)
    q, a, lengths = torch.tensor([[10, 20, 30]]), torch.tensor([[10, 30, 99]]), torch.tensor([3])  # 30: the '?'
    as_trained = term.features(q, a, lengths, lengths)[0]
    term.unmatched_ids = torch.tensor([30])
    unmatched = term.features(q, a, lengths, lengths)[0]
    assert as_trained[0].item() == pytest.approx(2 / 3) and unmatched[0].item() == pytest.approx(1 / 3)
    assert unmatched[1].item() == pytest.approx(0.5 / (0.5 + 0.25 + 1.0))
    assert 0 < unmatched[2].item() < as_trained[2].item()


def test_padding_never_matches() -> None:
    term = KeywordTerm(0)
    features = term.features(torch.tensor([[5, PAD_Q]]), torch.tensor([[6, PAD_A]]), torch.tensor([1]),
                             torch.tensor([1]))
    assert features.abs().sum().item() == 0.0


def test_params_refuse_a_non_boolean_keywords() -> None:
    with pytest.raises(ParamsError):
        MVLSTMParams(keywords="yes").validate()  # type: ignore[arg-type]
    with pytest.raises(ParamsError):
        MVLSTMParams(keyword_words=-1).validate()


def test_statistics_come_from_the_training_answers_and_travel_with_the_checkpoint(
        make_matcher: MatcherFactory, tmp_path: Path) -> None:
    matcher = make_matcher(seed=2, family="mvlstm", keywords=True, keyword_words=3)
    tokens, _ = tokenize_lists(toy_lists(0, 6))
    corpus = Corpus.of((c for t in tokens for c in t.candidates), matcher.vectors)
    sized = sized_for_corpus(MVLSTMParams(keywords=True), corpus)
    assert sized.keyword_words == len(corpus.idf[0]) > 0
    assert corpus.mean_length == pytest.approx(np.mean([len(a) for a in corpus.answers]))
    save_checkpoint(matcher, tmp_path / "kw", {})
    loaded = load_checkpoint(tmp_path / "kw", matcher.vectors)
    assert loaded.model.keywords is not None and loaded.params.keywords
    torch.testing.assert_close(loaded.model.keywords.weights, matcher.model.keywords.weights)
    before = matcher.explain("who wrote hamlet", ["hamlet was written by shakespeare", "paris is in france"])
    after = loaded.explain("who wrote hamlet", ["hamlet was written by shakespeare", "paris is in france"])
    assert [e.score for e in before] == pytest.approx([e.score for e in after], abs=1e-6)
    first = after[0]
    assert Part.TERMS in first.parts and trace_parts_of(loaded.params) == first.parts
    assert list(first.keyword_terms) == list(KEYWORD_FEATURES)
    assert first.learned_score + first.keyword_score == pytest.approx(first.score, abs=1e-5)
    assert first.keyword_terms["word overlap"] != after[1].keyword_terms["word overlap"]
    assert not math.isclose(first.keyword_score, 0.0)


def test_the_rank_split_adds_up_for_every_model(make_matcher: MatcherFactory) -> None:
    from matching.explain.ranking import rank, score_split_rows

    models = {"kw": make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3),
              "plain": make_matcher(seed=2, name="plain", family="mcan")}
    ranking = rank("who wrote hamlet", ["hamlet was written by shakespeare", "paris is in france"], models)
    for pick in (0, 1):
        rows = {row["model"]: row for row in score_split_rows(ranking, pick)}
        kw, plain = rows["kw"], rows["plain"]
        assert kw["learned match"] + kw["keywords"] == pytest.approx(kw["score"], abs=1e-5)  # type: ignore[operator]
        assert sum(kw[f] for f in KEYWORD_FEATURES) == pytest.approx(kw["keywords"], abs=1e-6)  # type: ignore[misc]
        assert plain["keywords"] is None and plain["learned match"] == plain["score"]


def test_answer_type_kinds_read_the_vocabulary() -> None:
    from matching.models.blocks.keywords import DATE, HOW, MONTH, NUMBER, QUANTITY, WH, WHEN, answer_type_kinds

    kinds = answer_type_kinds(["1945", "eight", "3.5", "march", "1990s", "paris", "many", "how", "when"])
    assert kinds["1945"] == NUMBER | DATE and kinds["eight"] == NUMBER and kinds["3.5"] == NUMBER
    assert kinds["march"] == DATE | MONTH and kinds["1990s"] == DATE and "paris" not in kinds
    assert kinds["many"] == QUANTITY and kinds["how"] == HOW | WH and kinds["when"] == WHEN | WH


def keyword_matcher(vectors: object, name: str, weights: list[float], **switches: bool) -> Matcher:
    """A tiny MV-LSTM with a keyword term, its features chosen by `switches` (MVLSTMParams' keyword_* flags) and
    weighted `weights`."""
    from matching.models.base import build_model, fit_to_corpus

    tokens, _ = tokenize_lists(toy_lists(0, 6))
    corpus = Corpus.of((c for t in tokens for c in t.candidates), vectors)  # type: ignore[arg-type]
    params = sized_for_corpus(MVLSTMParams(hidden_size=4, k=2, mlp_hidden=4, keywords=True, **switches), corpus)
    torch.manual_seed(0)
    model = build_model(params)
    fit_to_corpus(model, corpus)
    with torch.no_grad():
        model.keywords.weights.copy_(torch.tensor(weights))  # type: ignore[union-attr]
    return Matcher(name, model, vectors)  # type: ignore[arg-type]


def answer_type_matcher(vectors: object, weights: tuple[float, ...] = (0.5, 0.5, 0.1, 2.0, 3.0)) -> Matcher:
    """A tiny MV-LSTM with the five keyword features of the answer-type models, weighted `weights`."""
    return keyword_matcher(vectors, "types", list(weights), keyword_answer_types=True)


def test_answer_type_features_ask_and_give(vectors: object, tmp_path: Path) -> None:
    from matching.models.blocks.keywords import ALL_KEYWORD_FEATURES, ANSWER_TYPE_FEATURES

    with pytest.raises(ParamsError, match="needs keywords"):
        MVLSTMParams(keyword_answer_types=True).validate()
    matcher = answer_type_matcher(vectors)
    model = matcher.model
    assert matcher.params.answer_type_words > 20_000  # GloVe's number and date words

    def types(question: str, answers: list[str]) -> list[list[float]]:
        found = matcher.explain(question, answers)
        for e in found:  # the split still adds up, with the two new terms
            assert list(e.keyword_terms) == [*KEYWORD_FEATURES, *ANSWER_TYPE_FEATURES]
            assert e.learned_score + e.keyword_score == pytest.approx(e.score, abs=1e-5)
        return [[e.keyword_terms[f] / w for f, w in zip(ALL_KEYWORD_FEATURES[3:5], (2.0, 3.0), strict=True)]
                for e in found]

    assert types("how many legs does a spider have", ["a spider has eight legs", "a spider has legs",
                                                      "how many legs : 8 legs"]) == [[1, 0], [0, 0], [1, 0]]
    assert types("how many 8 legs", ["8 legs"]) == [[0, 0]]  # a number the question states answers nothing
    # A number GloVe does not know is a number all the same (its id says so; it read 0 before).
    assert types("how tall is mount everest", ["it is 29,029 feet high", "it is very high"]) == [[1, 0], [0, 0]]
    assert types("when did the war end", ["the war ended in 1945", "the war ended"]) == [[0, 1], [0, 0]]
    assert types("what is the capital of japan", ["tokyo, since 1869"]) == [[0, 0]]  # nothing asked
    # A quantity noun right before "of" / "in" asks for a number without "how"; elsewhere it asks nothing.
    people = ["it has 170 million people", "it is a country in africa"]
    assert types("what is the population of nigeria", people) == [[1, 0], [0, 0]]
    assert types("which percentage of the body is water", ["about 60 percent"]) == [[1, 0]]
    assert types("what is the literacy rate in cuba", ["it is 99.8 %"]) == [[1, 0]]
    assert types("what area code is 949", ["it was split from 714"]) == [[0, 0]]
    assert types("what is the population", people) == [[0, 0], [0, 0]]
    assert types("the population of nigeria", people) == [[0, 0], [0, 0]]  # no "what" or "which"
    # A year or a day of the month answers a date asked, not a number asked; a number beside it still does.
    assert types("how many people died in the bombing", ["it happened on april 19 , 1995", "it killed 168 people",
                                                         "168 people died in 1995", "on 19 april , 168 died"]
                 ) == [[0, 0], [1, 0], [1, 0], [1, 0]]
    assert types("how many people died in april", ["april 19 was the day"]) == [[0, 0]]  # the month shared
    assert types("when did the bombing happen", ["on april 19 , 1995"]) == [[0, 1]]
    assert types("how many days are in may", ["may has 31 days"]) == [[1, 0]]  # "31" is not beside the month
    # "One" is not a number given ("one of the worst"); another number beside it still is.
    assert types("how many people died", ["it was one of the worst", "one fire killed 87"]) == [[0, 0], [1, 0]]
    assert types("when did the war end", ["it ended in may", "on may 8 , 1945"]) == [[0, 1], [0, 1]]  # a month
    assert types("how many people died", ["it happened in 1995", "in 1995 , 168 died"]) == [[0, 0], [1, 0]]
    assert types("when did the war end", ["in 1945"]) == [[0, 1]]
    # Each rule turned off gives the feature of before, as the bench measures it.
    model.keywords.answer_type_rules = ANSWER_TYPE_RULES - {QUANTITY_NOUNS}  # type: ignore[union-attr]
    assert types("what is the population of nigeria", people) == [[0, 0], [0, 0]]
    model.keywords.answer_type_rules = ANSWER_TYPE_RULES - {YEARS_ARE_NOT_NUMBERS}  # type: ignore[union-attr]
    assert types("how many people died", ["it happened in 1995"]) == [[1, 0]]
    model.keywords.answer_type_rules = ANSWER_TYPE_RULES - {DAYS_ARE_NOT_NUMBERS}  # type: ignore[union-attr]
    assert types("how many people died", ["it happened on april 19"]) == [[1, 0]]
    model.keywords.answer_type_rules = ANSWER_TYPE_RULES - {ONE_IS_NOT_A_NUMBER}  # type: ignore[union-attr]
    assert types("how many people died", ["it was one of the worst"]) == [[1, 0]]
    model.keywords.answer_type_rules = ANSWER_TYPE_RULES  # type: ignore[union-attr]
    save_checkpoint(matcher, tmp_path / "types", {})
    loaded = load_checkpoint(tmp_path / "types", vectors)  # type: ignore[arg-type]
    for question, answer in (("when did the war end", "the war ended in 1945"),
                             ("what is the population of nigeria", people[0])):
        assert loaded.explain(question, [answer])[0].score == pytest.approx(
            matcher.explain(question, [answer])[0].score, abs=1e-6)


def test_a_checkpoint_saved_before_the_quantity_nouns_reads_them(vectors: object, tmp_path: Path) -> None:
    """The answer-type table follows the code's word kinds: a checkpoint saved with an older, smaller table
    (without "population", "of"...) is filled again when it loads, and its params say the new size."""
    from matching.models.base import answer_type_table
    from matching.models.blocks.keywords import OF, QUANTITY_NOUN, WHAT

    ids, flags = answer_type_table(vectors)  # type: ignore[arg-type]
    new_kinds = QUANTITY_NOUN | WHAT | OF
    before = (flags & ~new_kinds) != 0  # the words with a kind of before ("population" and "of" had none)
    old = answer_type_matcher(vectors)
    old.model.keywords.fill_answer_types(ids[before], flags[before] & ~new_kinds)  # type: ignore[union-attr]
    old.model.params = replace(old.params, answer_type_words=int(before.sum()))
    question, answers = "what is the population of nigeria", ["it has 170 million people"]
    assert old.explain(question, answers)[0].keyword_terms["number asked, number given"] == 0.0
    save_checkpoint(old, tmp_path / "old", {})
    loaded = load_checkpoint(tmp_path / "old", vectors)  # type: ignore[arg-type]
    assert loaded.params.answer_type_words == len(ids) > int(before.sum())
    # ... the very table a model trained today has (the checkpoint's number and date words, today's cue words).
    assert torch.equal(loaded.model.keywords.type_ids, ids.sort().values)  # type: ignore[union-attr]
    assert torch.equal(loaded.model.keywords.type_flags, flags[ids.argsort()])  # type: ignore[union-attr]
    assert loaded.explain(question, answers)[0].keyword_terms["number asked, number given"] == pytest.approx(2.0)


def echo_matcher(vectors: object, at_start: bool) -> Matcher:
    """A tiny MV-LSTM with all six keyword features, the echo one (anywhere, or `at_start`) weighted -4."""
    return keyword_matcher(vectors, "echo", [0.5, 0.5, 0.1, 2.0, 3.0, -4.0], keyword_answer_types=True,
                           keyword_echo=True, keyword_echo_at_start=at_start)


@pytest.mark.parametrize("at_start", [False, True], ids=["anywhere", "at-start"])
def test_the_echo_feature_finds_a_restated_question(vectors: object, tmp_path: Path, at_start: bool) -> None:
    from matching.explain.walkthrough import term_rows
    from matching.models.blocks.keywords import ANSWER_TYPE_FEATURES, ECHO_FEATURE

    with pytest.raises(ParamsError, match="needs keyword_answer_types"):
        MVLSTMParams(keywords=True, keyword_echo=True).validate()
    with pytest.raises(ParamsError, match="needs keyword_echo"):
        MVLSTMParams(keywords=True, keyword_answer_types=True, keyword_echo_at_start=True).validate()
    matcher = echo_matcher(vectors, at_start)

    def echoes(question: str, answers: list[str]) -> list[float]:
        found = matcher.explain(question, answers)
        for e in found:  # the split adds up with the sixth term, and the walkthrough reads its x and w
            assert list(e.keyword_terms) == [*KEYWORD_FEATURES, *ANSWER_TYPE_FEATURES, ECHO_FEATURE]
            assert e.learned_score + e.keyword_score == pytest.approx(e.score, abs=1e-5)
            row = next(r for r in term_rows(e) if r["term"] == ECHO_FEATURE)
            assert row["feature x"] * row["weight w"] == pytest.approx(row["value"], abs=1e-6)
        return [e.keyword_terms[ECHO_FEATURE] / -4.0 for e in found]

    question = "Who wrote the novel Frankenstein?"
    assert echoes(question, ["Who wrote the novel Frankenstein is a common quiz question.",
                             "Frankenstein was written by Mary Shelley.",
                             "The monster who the novel made famous wrote letters.",  # not side by side
                             question]) == [1, 0, 0, 1]
    # A real answer with the opening inside it (a clause): the feature anywhere fires on it, at the start not.
    assert echoes("Who won the Nobel Peace Prize in 1991?",
                  ["Aung San Suu Kyi, who won the Nobel Peace Prize in 1991, stayed under arrest."]) == [
        int(not at_start)]
    # The first wh-word; at the start, the words before it too ("in which").
    assert echoes("In which city is the Louvre?", ["Which city is the Louvre in, asks the guide.",
                                                   "In which city is the Louvre, asks the guide.",
                                                   "The Louvre is in Paris."]) == [int(not at_start), 1, 0]
    assert echoes("name the capital of japan", ["name the capital of japan"]) == [0]  # no wh-word: no opening
    assert echoes("what", ["what"]) == [0]  # a wh-word with no word after it
    save_checkpoint(matcher, tmp_path / "echo", {})
    loaded = load_checkpoint(tmp_path / "echo", vectors)  # type: ignore[arg-type]
    assert loaded.params.keyword_echo and loaded.params.keyword_echo_at_start == at_start
    assert loaded.explain(question, [question])[0].keyword_terms[ECHO_FEATURE] == pytest.approx(-4.0)


@pytest.mark.parametrize("at_start", [False, True], ids=["anywhere", "at-start"])
def test_the_echo_firing_count_reads_the_models_own_feature(vectors: object, tmp_path: Path, at_start: bool,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """bench/echoes.py --firing: where the echo feature fires on real candidates, right and wrong, scored by the
    model's own feature code, with the model's weights as they were afterwards."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import echoes

    from matching.text.data import RankingList, write_toks_folder

    folder = write_toks_folder(tmp_path / "dev", [
        RankingList("q1", "Who won the Nobel Peace Prize in 1991?",
                    ("Aung San Suu Kyi , who won the Nobel Peace Prize in 1991 , stayed under arrest .",
                     "Who won the Nobel Peace Prize in 1991 is a quiz question .", "The prize is given in Oslo ."),
                    (1, 0, 0)),
        RankingList("q2", "When did the war end?", ("The war ended in 1945 .", "It was long ."), (1, 0))])
    matcher = echo_matcher(vectors, at_start)
    weights = matcher.model.keywords.weights.detach().clone()  # type: ignore[union-attr]
    echoes.firing(matcher, folder)
    out = capsys.readouterr().out
    right = "1 of 2 right answers (50.00%)" if not at_start else "0 of 2 right answers (0.00%)"
    assert right in out and "1 of 3 wrong ones (33.33%)" in out, out
    assert ("right answer set back" in out) == (not at_start), out
    assert torch.equal(matcher.model.keywords.weights, weights)  # type: ignore[union-attr]


def test_the_answer_types_bench_measures_the_quantity_noun_rule(vectors: object, tmp_path: Path) -> None:
    """bench/answer_types.py scores with the rule off and on: only the question it asks a number of changes,
    and there the right answer (a number, no shared word) moves above a wrong one that repeats the question."""
    import subprocess
    import sys

    from conftest import write_toks_folder

    from matching.text.data import RankingList

    save_checkpoint(answer_type_matcher(vectors, (3.0, 0.0, 0.0, 5.0, 0.0)), tmp_path / "types", {})
    write_toks_folder(tmp_path / "dev", [
        RankingList("Q1", "what is the population of nigeria",
                    ("the population of nigeria is large", "it has 170 million people"), (0, 1)),
        RankingList("Q2", "what is the capital of nigeria", ("abuja is the capital of nigeria", "it is large"),
                    (1, 0))])
    printed = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "bench" / "answer_types.py"), "--rule",
                              QUANTITY_NOUNS, "--data", str(tmp_path / "dev"), "--", str(tmp_path / "types"),
                              str(tmp_path / "types")],
                             capture_output=True, text=True, check=True, timeout=300).stdout
    assert "questions changed   1 (1 with a right answer): 0.5000 -> 1.0000 (+0.5000); all 0.7500 -> 1.0000" in printed
    assert "over the 2 models: mean change +0.5000 on the questions changed, 2 gained, 0 lost" in printed
    assert "all questions, over the 2 models: 0.7500 ± 0.0000 -> 1.0000 ± 0.0000" in printed
    from matching.models.base import build_model

    plain = build_model(MVLSTMParams(hidden_size=4, k=2, mlp_hidden=4))  # no keyword term at all
    save_checkpoint(Matcher("plain", plain, vectors), tmp_path / "none", {})  # type: ignore[arg-type]
    refused = subprocess.run([sys.executable, str(Path(__file__).parents[1] / "bench" / "answer_types.py"), "--rule",
                              QUANTITY_NOUNS, "--data", str(tmp_path / "dev"), "--", str(tmp_path / "none")],
                             capture_output=True, text=True, check=False, timeout=300)
    assert refused.returncode == 1 and "no answer-type features, so nothing to measure" in refused.stderr


def test_the_place_feature_asks_where_and_reads_place_names(vectors: object, tmp_path: Path) -> None:
    """An ablation (configs/ablations/*-places.json): "where" asked, a place name given that the question lacks."""
    from matching.models.blocks.keywords import ECHO_FEATURE, PLACE_FEATURE, place_words

    assert {"paris", "japan", "texas", "tokyo"} <= place_words() and not {"new", "city"} & place_words()
    with pytest.raises(ParamsError, match="needs keyword_answer_types"):
        MVLSTMParams(keywords=True, keyword_places=True).validate()
    matcher = keyword_matcher(vectors, "places", [0.5, 0.5, 0.1, 2.0, 3.0, 4.0, -1.0], keyword_answer_types=True,
                              keyword_places=True, keyword_echo=True)
    assert matcher.model.keywords.names[-2:] == (PLACE_FEATURE, ECHO_FEATURE)  # type: ignore[union-attr]  # echo last

    def place(question: str, answers: list[str]) -> list[float]:
        found = matcher.explain(question, answers)
        for e in found:
            assert e.learned_score + e.keyword_score == pytest.approx(e.score, abs=1e-5)
        return [e.keyword_terms[PLACE_FEATURE] / 4.0 for e in found]

    assert place("where is the eiffel tower", ["it stands in paris", "it is made of iron"]) == [1, 0]
    assert place("where is paris", ["paris is on the seine"]) == [0]  # the place the question names answers nothing
    assert place("who built the eiffel tower", ["it stands in paris"]) == [0]  # nothing asked
    save_checkpoint(matcher, tmp_path / "places", {})
    loaded = load_checkpoint(tmp_path / "places", vectors)  # type: ignore[arg-type]
    assert loaded.explain("where is the eiffel tower", ["it stands in paris"])[0].keyword_terms[PLACE_FEATURE] == 4.0


def test_bm25_within_the_list_is_the_bm25_baseline_per_question_word_with_the_list_as_the_collection(
        vectors: object, tmp_path: Path) -> None:
    """The list feature's value is the BM25 baseline's score over the question's own candidates (per question word),
    on every path that scores: the traced pass, the scores-only pass in any order and batch, a training batch and a
    checkpoint loaded back; and the split into learned match and keywords stays exact."""
    from matching.models.blocks.keywords import ECHO_FEATURE, LIST_BM25_FEATURE
    from matching.text.baselines import bm25, bm25_within_lists
    from matching.text.tokens import tokenize

    with pytest.raises(ParamsError, match="needs keywords true"):
        MVLSTMParams(keyword_list_bm25=True).validate()
    matcher = keyword_matcher(vectors, "listed", [0.5, 0.5, 0.1, 2.0, 3.0, 1.5, -1.0], keyword_answer_types=True,
                              keyword_list_bm25=True, keyword_echo=True)
    assert matcher.model.keywords.names[-2:] == (LIST_BM25_FEATURE, ECHO_FEATURE)  # type: ignore[union-attr]
    question, candidates = tokenize(SECTION[0]), [tokenize(c) for c in SECTION[1]]
    expected = bm25(question, candidates) / len([t for t in question if any(ch.isalnum() for ch in t.key)])
    assert int(np.argmax(expected)) == 2  # the subject every sentence names counts for little
    explained = matcher.explain(*SECTION)
    for e, value in zip(explained, expected, strict=True):
        assert e.keyword_terms[LIST_BM25_FEATURE] / 1.5 == pytest.approx(value, rel=1e-5)
        assert e.learned_score + e.keyword_score == pytest.approx(e.score, abs=1e-5)
    assert_every_path_keeps_each_pairs_list(matcher, explained, tmp_path / "listed", vectors)  # type: ignore[arg-type]
    other = tokenize("where is susa")  # one object: the pairs given with it are one list
    assert bm25_within_lists([question, other] * 2, candidates)[[1, 3]] == pytest.approx(
        bm25(other, [candidates[1], candidates[3]]) / 3)
    # A batch without the values is refused, not scored as if the feature were 0.
    from matching.models.batching import make_token_batch

    with pytest.raises(ValueError, match="needs list_bm25"):
        matcher.model(make_token_batch(matcher.vectors, [question], [candidates[0]], 40, 60))


def test_a_model_with_the_list_feature_trains_and_its_batches_carry_each_candidates_list_value(
        toy_data: Path, vectors: object) -> None:
    from conftest import tiny_config, trained_with_a_batch

    from matching.text.baselines import bm25_within_lists

    config = tiny_config(name="listed", keywords=True, keyword_list_bm25=True)
    matcher, batch, lists, places = trained_with_a_batch(config, vectors)  # type: ignore[arg-type]
    assert matcher.params.keyword_list_bm25
    expected = [bm25_within_lists([lists[n].question] * len(lists[n].candidates), lists[n].candidates)[j]
                for n, j in places]
    assert batch.list_bm25 is not None and batch.list_bm25.tolist() == pytest.approx(expected)


def test_the_word_deletion_tools_score_an_edited_pair_in_its_list(vectors: object) -> None:
    """Deletion effects, the smallest flip and the deletion curves score an edited pair with its list around it (the
    candidates, the edited one in its place): unedited, the score is the ranking's; a deleted word scores as the
    list with that deletion would."""
    from matching.evaluation.sanity.curves import deletion_curves
    from matching.explain.deletion import deletion_effects, in_place, without
    from matching.explain.flips import smallest_flip
    from matching.text.data import RankingList
    from matching.text.tokens import tokenize

    matcher = keyword_matcher(vectors, "listed", [0.5, 0.5, 0.1, 2.0, 3.0, 1.5, -1.0], keyword_answer_types=True,
                              keyword_list_bm25=True, keyword_echo=True)
    question, candidates = tokenize(SECTION[0]), [tokenize(c) for c in SECTION[1]]
    scores = [e.score for e in matcher.explain_tokens(question, candidates)]
    effects = deletion_effects(matcher, question, candidates, chosen=[2])[2]
    assert effects.score == pytest.approx(scores[2], abs=1e-5)
    edited = without(candidates[2], {0})
    alone = [e.score for e in matcher.explain_tokens(question, in_place(candidates, 2, edited))][2]
    assert effects.answer[0].score_after == pytest.approx(alone, abs=1e-5)
    flip = smallest_flip(matcher, SECTION[0], question, list(SECTION[1]), candidates,
                         upper=int(np.argmax(scores)), lower=int(np.argmin(scores)))
    assert flip.gaps[0] == pytest.approx(max(scores) - min(scores), abs=1e-5)
    if flip.verified_gap is not None and flip.found:
        assert flip.verified_gap < 0
    curves = deletion_curves([RankingList("q", SECTION[0], tuple(SECTION[1]), (0, 0, 1, 0))], {"listed": matcher})
    assert curves.pairs == 4 and curves.points


def test_models_scored_one_after_another_share_each_lists_bm25_and_stems_and_score_as_alone(vectors: object) -> None:
    """Evaluation scores a chunk with one model after another over one `TextCache`: a list's BM25 within it and
    each text's stems are computed once (per stems setting), and every model scores as it does alone."""
    from matching.evaluation.dataset import model_scores
    from matching.models.batching import TextCache

    on_keys = keyword_matcher(vectors, "keys", [0.5, 0.5, 0.1, 2.0], keyword_list_bm25=True)
    on_stems = keyword_matcher(vectors, "stems", [0.5, 0.5, 0.1, 2.0], keyword_list_bm25=True, keyword_stems=True)
    tokenized, _ = tokenize_lists(toy_lists(0, 6))
    known = TextCache()
    shared = {m.name: model_scores(m, tokenized, batch_size=4, known=known) for m in (on_keys, on_stems, on_keys)}
    assert len(known.list_bm25) == 2 * len(tokenized)  # each list once with stems, once without
    assert len(known.stems) == sum(1 + len(t.candidates) for t in tokenized)  # every text's stems once
    for matcher in (on_keys, on_stems):
        alone = model_scores(matcher, tokenized, batch_size=4)
        for n in range(len(tokenized)):
            np.testing.assert_allclose(shared[matcher.name][n], alone[n], rtol=1e-6, atol=1e-6)
