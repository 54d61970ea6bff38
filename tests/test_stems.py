"""A keyword term on stems: its lexical features match "founded" with "founding", on every path that scores (traced,
scores only, training, a checkpoint), and its split stays exact."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import SECTION, assert_every_path_keeps_each_pairs_list, tiny_params

from matching.models.base import fit_to_corpus
from matching.models.batching import PAD_ID, ListStatistics, make_token_batch
from matching.models.blocks.keywords import KEYWORD_FEATURES
from matching.models.params import ParamsError
from matching.text.baselines import _bm25, bm25_within_lists, overlap_words, stemmed_words
from matching.text.corpus import Corpus
from matching.text.embeddings import key_id, unknown_kinds
from matching.text.stems import stem, stem_id, stem_ids
from matching.text.tokens import DATE, NUMBER, tokenize
from matching.training.cards import deviations

QUESTION = "when was the club founded"
ANSWERS = ["the founding of the club came in 1902", "the club plays in red", "a city was built in 1902", "it rained"]


def test_a_stem_joins_the_forms_of_a_word_and_its_id_is_equal_exactly_when_the_stems_are() -> None:
    assert stem("founded") == stem("founding") == stem("founds") == "found"
    assert stem("inventor") != stem("invented")  # a different word, kept apart
    assert stem("1995") == "1995" and stem("?") == "?"  # no letter: as it is
    assert stem_id("founded") == stem_id("founding") == key_id("found", -1)
    assert stem_id("founded") != stem_id("club")
    assert int(unknown_kinds(torch.tensor([stem_id("1995")]))) == NUMBER | DATE  # a year keeps its kind
    question, other = tokenize("who founded it"), tokenize("founding")
    ids = stem_ids([question, question, other], max_len=2)
    assert ids[0] is ids[1] and ids[0].tolist() == [stem_id("who"), stem_id("founded")]  # stemmed once, cut
    assert ids[2].tolist() == [stem_id("founding")]
    assert stemmed_words(tokenize("Founded, in 1902!")) == ["found", "in", "1902"]  # the words overlap counts


def test_bm25_within_the_list_on_stems_counts_another_form_of_a_question_word() -> None:
    question, answers = tokenize(QUESTION), [tokenize(a) for a in ANSWERS]
    keys = bm25_within_lists([question] * 4, answers)
    stems = bm25_within_lists([question] * 4, answers, stems=True)
    words = stemmed_words(question)
    expected = _bm25(words, [stemmed_words(a) for a in answers]) / len(words)
    assert stems.tolist() == pytest.approx(expected.tolist(), abs=1e-6)
    assert stems[0] > keys[0]  # "founding" answers "founded" on stems only
    assert overlap_words(question) != words


def test_the_stems_are_carried_with_every_pair_and_fit_the_batch(vectors: object) -> None:
    params = tiny_params(keywords=True, keyword_words=3, keyword_stems=True)
    assert ListStatistics.of(tiny_params(keywords=True, keyword_words=3), [tokenize("a")], [tokenize("b")]) is None
    short, long = tokenize("who founded it"), tokenize("when was the club founded in the end")
    answers = [tokenize("the founding"), tokenize("founders of a club"), tokenize("x")]
    stats = ListStatistics.of(params, [short, long, short], answers)
    assert stats is not None and stats.bm25 is None and stats.question_stems is not None
    assert stats.question_stems.shape == (3, 8) and stats.question_stems[0, 3:].eq(PAD_ID["question"]).all()
    assert stats.answer_stems is not None and stats.answer_stems[2, 1:].eq(PAD_ID["answer"]).all()
    fields = stats.pick(torch.tensor([2, 0])).batch_fields(3, 5)
    assert fields["question_stems"].shape == (2, 3) and fields["answer_stems"].shape == (2, 5)  # type: ignore[union-attr]
    assert fields["answer_stems"][0, 1:].eq(PAD_ID["answer"]).all()  # type: ignore[index]
    stacked = ListStatistics.rows([stats, stats.pick(slice(0, 1))], [(1, 0), (0, 1)])
    assert stacked.question_stems is not None and stacked.question_stems.shape == (2, 8)
    assert stacked.question_stems[0, :3].tolist() == stats.question_stems[0, :3].tolist()
    batch = make_token_batch(vectors, [short, short], answers[:2], 40, 60, lists_for=params)  # type: ignore[arg-type]
    assert batch.question_stems is not None and batch.question_stems.shape == batch.question_ids.shape  # type: ignore[union-attr]
    assert batch.answer_stems is not None and batch.answer_stems.shape == batch.answer_ids.shape  # type: ignore[union-attr]


def test_the_lexical_features_match_stems_and_the_answer_types_still_read_the_words(make_matcher: object) -> None:
    keys = make_matcher(keywords=True, keyword_words=3)  # type: ignore[operator]
    stems = make_matcher(keywords=True, keyword_words=3, keyword_stems=True)  # type: ignore[operator]
    question, answers = tokenize(QUESTION), [tokenize(a) for a in ANSWERS]
    found = {}
    for name, matcher in (("keys", keys), ("stems", stems)):
        batch = make_token_batch(matcher.vectors, [question] * 4, answers, 40, 60, lists_for=matcher.params)
        found[name] = matcher.model.keyword_features(batch)
    overlap = KEYWORD_FEATURES.index("word overlap")
    assert found["keys"][0, overlap] == pytest.approx(2 / 5)  # "the", "club"
    assert found["stems"][0, overlap] == pytest.approx(3 / 5)  # and "founding" for "founded"
    assert found["stems"][1, overlap] == found["keys"][1, overlap]  # no other form: no change
    with pytest.raises(ValueError, match="stem ids"):  # refused, not scored as if no word matched
        stems.model(make_token_batch(stems.vectors, [question], [answers[0]], 40, 60))
    with pytest.raises(ParamsError, match="keyword_stems"):
        tiny_params(keyword_stems=True).validate()
    assert any("Snowball stems" in line for line in deviations({"family": "mvlstm", "keywords": True,
                                                                 "keyword_stems": True}, {}))


def test_a_model_on_stems_splits_exactly_and_keeps_its_scores_on_every_path(
        make_matcher: object, vectors: object, tmp_path: Path) -> None:
    matcher = make_matcher(keywords=True, keyword_words=3, keyword_stems=True)  # type: ignore[operator]
    explained = matcher.explain(*SECTION)
    for e in explained:
        assert e.learned_score + e.keyword_score == pytest.approx(e.score, abs=1e-5)
        assert sum(e.keyword_terms.values()) == pytest.approx(e.keyword_score, abs=1e-5)
    loaded = assert_every_path_keeps_each_pairs_list(matcher, explained, tmp_path / "stems", vectors)  # type: ignore[arg-type]
    assert loaded.params.keyword_stems


def test_the_keyword_idf_of_a_model_on_stems_is_the_stems(make_matcher: object, vectors: object) -> None:
    matcher = make_matcher(keywords=True, keyword_words=3, keyword_stems=True)  # type: ignore[operator]
    corpus = Corpus.of([tokenize("it was founded"), tokenize("the founding"), tokenize("a club")], vectors)  # type: ignore[arg-type]
    ids, values = corpus.stem_idf
    assert len(ids) == len(set(ids.tolist())) == 6  # it was found the a club: two forms, one stem
    found = dict(zip(ids.tolist(), values.tolist(), strict=True))
    assert found[stem_id("founded")] < found[stem_id("club")]  # in two answers of three, against one
    matcher.model.keywords = type(matcher.model.keywords)(len(ids), stems=True)
    fit_to_corpus(matcher.model, corpus)
    looked_up = matcher.model.keywords.idf(torch.tensor([stem_id("founding"), stem_id("club")]))
    assert looked_up.tolist() == pytest.approx([found[stem_id("founded")], found[stem_id("club")]])


def test_a_model_on_stems_trains_and_its_batches_carry_each_pairs_stems(toy_data: Path, vectors: object) -> None:
    from conftest import tiny_config, trained_with_a_batch

    config = tiny_config(name="stems", keywords=True, keyword_stems=True, keyword_list_bm25=True)
    matcher, batch, lists, places = trained_with_a_batch(config, vectors)  # type: ignore[arg-type]
    assert matcher.params.keyword_stems and matcher.model.keywords.stems  # type: ignore[union-attr]
    assert batch.question_stems is not None and batch.question_stems.shape == batch.question_ids.shape  # type: ignore[union-attr]
    for row, (n, j) in enumerate(places):
        question, answer = lists[n].question[:40], lists[n].candidates[j][:60]
        assert batch.question_stems[row, :len(question)].tolist() == [stem_id(t.key) for t in question]
        assert batch.answer_stems[row, :len(answer)].tolist() == [stem_id(t.key) for t in answer]  # type: ignore[index]
    ids = matcher.model.keywords.idf.ids.tolist()  # type: ignore[union-attr]
    assert ids and all(i < 0 for i in ids)  # keyed by stem ids, none a word vector's row


def test_mv_lstms_exact_match_matrix_on_stems_matches_another_form_and_splits_exactly(
        make_matcher: object, vectors: object, tmp_path: Path) -> None:
    keys = make_matcher(exact_match="binary")  # type: ignore[operator]
    stems = make_matcher(exact_match="binary", exact_match_stems=True)  # type: ignore[operator]
    question, answer = "when was the club founded", "the founding of the club"
    on_keys, on_stems = (m.explain(question, [answer])[0].interaction_matrices["exact match"] for m in (keys, stems))
    founded, founding = 4, 1
    assert on_keys[founded, founding] == 0 and on_stems[founded, founding] == 1
    assert (on_stems >= on_keys).all() and on_stems[3, 4] == on_keys[3, 4] == 1  # "club" either way
    explained = stems.explain(*SECTION)
    for e in explained:  # the cells and the bias add up to the score, as on keys
        assert sum(c.contribution for c in e.pooled_cells) + e.bias_contribution == pytest.approx(e.score, abs=1e-5)
    loaded = assert_every_path_keeps_each_pairs_list(stems, explained, tmp_path / "em-stems", vectors)  # type: ignore[arg-type]
    assert loaded.params.exact_match_stems
    with pytest.raises(ValueError, match="stem ids"):  # refused, not matched on the keys instead
        stems.model(make_token_batch(stems.vectors, [tokenize(question)], [tokenize(answer)], 40, 60))
    with pytest.raises(ParamsError, match="exact_match_stems"):
        tiny_params(exact_match_stems=True).validate()
    assert "Snowball stems" in stems.model.architecture_text(stems.params)
    assert any("Snowball stems" in line for line in deviations({"family": "mvlstm", "exact_match": "idf",
                                                                 "exact_match_stems": True}, {}))


def test_the_exact_match_idf_of_a_model_on_stems_is_the_stems(vectors: object) -> None:
    from matching.models.base import build_model, sized_for_corpus

    corpus = Corpus.of([tokenize("it was founded"), tokenize("the founding"), tokenize("a club")], vectors)  # type: ignore[arg-type]
    params = sized_for_corpus(tiny_params(exact_match="idf", exact_match_stems=True), corpus)
    assert params.idf_words == len(corpus.stem_idf[0]) == 6  # type: ignore[attr-defined]
    model = build_model(params)
    fit_to_corpus(model, corpus)
    found = dict(zip(*(t.tolist() for t in corpus.stem_idf), strict=True))
    looked_up = model.idf(torch.tensor([stem_id("founding"), stem_id("club")]))  # type: ignore[operator]
    assert looked_up.tolist() == pytest.approx([found[stem_id("founded")], found[stem_id("club")]])


def test_a_model_with_its_exact_match_on_stems_trains_on_batches_that_carry_them(vectors: object) -> None:
    from conftest import tiny_config, trained_with_a_batch

    config = tiny_config(name="em-stems", exact_match="idf", exact_match_stems=True)
    matcher, batch, _, _ = trained_with_a_batch(config, vectors)  # type: ignore[arg-type]
    assert matcher.params.exact_match_stems and batch.question_stems is not None  # type: ignore[attr-defined]
    ids = matcher.model.idf.ids.tolist()  # type: ignore[union-attr]
    assert ids and all(i < 0 for i in ids)  # the IDF table keyed by stem ids, none a word vector's row


def test_threads_stemming_side_by_side_get_each_word_its_own_stem() -> None:
    """Models are scored on threads side by side (`evaluation.dataset.evaluate`): with one Snowball stemmer shared
    by them, words mixed (some stems wrong, some calls raising IndexError). Each thread has its own now."""
    import itertools
    import threading

    import snowballstemmer

    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(w) + "ing" for w in itertools.product(letters, repeat=3)]
    reference = snowballstemmer.stemmer("english")
    expected = {word: reference.stemWord(word) for word in words}
    stem.cache_clear()  # every word stemmed afresh, by the threads
    wrong: list[str] = []

    def stem_all() -> None:
        try:
            wrong.extend(word for word in words if stem(word) != expected[word])
        except IndexError as error:
            wrong.append(repr(error))

    threads = [threading.Thread(target=stem_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
