"""MV-LSTM's exact-match matrix over the list: each question word weighted by its IDF within the question's own
candidates, carried with every pair on every path that scores (traced, scores only, training, a checkpoint)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import SECTION, assert_every_path_keeps_each_pairs_list

from matching.explain.matrix_views import matrix_view, view_names
from matching.models.batching import ListStatistics, make_token_batch
from matching.models.mvlstm import MVLSTM
from matching.models.params import MVLSTMParams, ParamsError
from matching.models.parts import LIST_EXACT_MATCH
from matching.text.baselines import idf_within_lists
from matching.text.tokens import tokenize


def expected_weights(question: list, candidates: list[list]) -> list[float]:
    count = len(candidates)
    return [math.log((count + 1) / (sum(t.key in {c.key for c in cand} for cand in candidates) + 1))
            / math.log(count + 1) for t in question]


def test_the_idf_within_a_list_weighs_a_word_every_candidate_has_zero_and_a_word_none_has_one() -> None:
    question, candidates = tokenize(SECTION[0]), [tokenize(c) for c in SECTION[1]]
    (weights, *others) = idf_within_lists([question] * 4, candidates, max_len=40)
    assert all(o is weights for o in others)  # one list: the same weights for each of its pairs
    by_word = dict(zip([t.key for t in question], weights.tolist(), strict=True))
    assert by_word["the"] == 0.0  # in all four
    assert by_word["who"] == pytest.approx(1.0)  # in none
    assert by_word["achaemenid"] == pytest.approx(math.log(5 / 4) / math.log(5))  # in three of four
    assert by_word["conquered"] == pytest.approx(math.log(5 / 2) / math.log(5))  # in one
    assert weights.tolist() == pytest.approx(expected_weights(question, candidates))
    assert len(idf_within_lists([question], [candidates[0]], max_len=3)[0]) == 3  # cut as the model reads it
    # With collections, each pair's list is the one given, an edited candidate in its place.
    edited = tokenize("Alexander conquered the empire.")
    collection = [candidates[0], edited]
    (found,) = idf_within_lists([question], [edited], 40, collections=[collection])
    assert found.tolist() == pytest.approx(expected_weights(question, collection))


def test_list_statistics_pick_rows_and_fit_the_batch_width() -> None:
    params = MVLSTMParams(exact_match_list=True)
    assert params.reads_list_idf and params.matrix_count == 2 and not MVLSTMParams().reads_list_idf
    with pytest.raises(ParamsError, match="exact_match_list must be true or false"):
        MVLSTMParams(exact_match_list=1).validate()  # type: ignore[arg-type]
    assert ListStatistics.of(MVLSTMParams(), [tokenize("who")], [tokenize("a")]) is None
    assert "IDF within its list" in MVLSTM.architecture_text(params)  # the card says what the model reads
    assert any("IDF within the list" in line for line in MVLSTM.deviations({"exact_match_list": True}, {}))
    assert MVLSTM.matrix_names(params)[-1] == LIST_EXACT_MATCH
    short, long = tokenize("who won"), tokenize("who won the cup in 1966")
    answers = [tokenize("England won the cup"), tokenize("in 1966 it rained"), tokenize("a cup")]
    stats = ListStatistics.of(params, [short, short, long], answers)
    assert stats is not None and stats.bm25 is None and stats.idf is not None
    assert stats.idf.shape == (3, 6) and stats.idf[0, 2:].eq(0).all()  # padded past the short question's words
    picked = stats.pick(torch.tensor([2, 0]))
    assert picked.idf is not None and picked.idf[1].tolist() == stats.idf[0].tolist()
    fields = picked.batch_fields(4, 6)
    assert fields["list_idf"] is not None and fields["list_idf"].shape == (2, 4)
    assert stats.pick(slice(0, 2)).batch_fields(8, 8)["list_idf"].shape == (2, 8)  # type: ignore[union-attr]
    stacked = ListStatistics.rows([stats, picked], [(1, 1), (0, 2)])
    assert stacked.idf is not None and stacked.idf.tolist() == [stats.idf[0].tolist(), stats.idf[2].tolist()]


def test_the_list_matrix_is_traced_pooled_and_split_exactly_on_every_path(
        make_matcher: object, vectors: object, tmp_path: Path) -> None:
    matcher = make_matcher(name="listed", exact_match="idf", exact_match_list=True)  # type: ignore[operator]
    question, candidates = tokenize(SECTION[0]), [tokenize(c) for c in SECTION[1]]
    explained = matcher.explain(*SECTION)
    weights = expected_weights(question, candidates)
    for e in explained:
        matrix = e.interaction_matrices[LIST_EXACT_MATCH]
        same = e.interaction_matrices["exact match"]  # IDF 1 for every word here (an empty table): 1 where equal
        assert set(np.unique(same)) == {0.0, 1.0}
        assert matrix == pytest.approx(same * np.array(weights)[:, None], abs=1e-6)
        assert sum(float(c.sum()) for c in e.cell_contributions.values()) + e.cell_bias == pytest.approx(
            e.score, abs=1e-5)
        assert any(cell.matrix == LIST_EXACT_MATCH for cell in e.pooled_cells)
    view = matrix_view(explained[2], LIST_EXACT_MATCH)
    assert LIST_EXACT_MATCH in view_names(explained[2]) and not view.zero_centered
    assert "within this list" in view.caption
    loaded = assert_every_path_keeps_each_pairs_list(matcher, explained, tmp_path / "listed", vectors)  # type: ignore[arg-type]
    assert loaded.params.reads_list_idf
    with pytest.raises(ValueError, match="list_idf"):  # refused, not scored as if every weight were 0
        matcher.model(make_token_batch(matcher.vectors, [question], [candidates[0]], 40, 60))


def test_a_model_with_the_list_matrix_trains_and_its_batches_carry_each_lists_weights(
        toy_data: Path, vectors: object) -> None:
    from conftest import tiny_config, trained_with_a_batch

    config = tiny_config(name="listed", exact_match="idf", exact_match_list=True)
    matcher, batch, lists, places = trained_with_a_batch(config, vectors)  # type: ignore[arg-type]
    assert matcher.params.reads_list_idf
    assert batch.list_idf is not None and batch.list_idf.shape == batch.question_ids.shape  # type: ignore[union-attr]
    for row, (n, _) in enumerate(places):
        weights = expected_weights(lists[n].question[:40], lists[n].candidates)
        assert batch.list_idf[row, :len(weights)].tolist() == pytest.approx(weights, abs=1e-6)
