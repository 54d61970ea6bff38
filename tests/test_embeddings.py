"""GloVe lookup: known rows, zero rows and flags for unknown words, a stable fingerprint."""

from __future__ import annotations

import numpy as np
import pytest

from matching.text.embeddings import SOURCE, VectorsError, WordVectors, load_glove
from matching.text.tokens import tokenize


def test_glove_is_loaded_once_and_described(vectors: WordVectors) -> None:
    assert load_glove() is vectors
    assert vectors.dim == 50
    description = vectors.describe()
    assert description == {"source": SOURCE, "fingerprint": vectors.fingerprint, "dim": 50,
                           "size": vectors.matrix.shape[0]}
    assert vectors.fingerprint.startswith("sha256:")
    assert vectors.fingerprint.endswith(f":{vectors.matrix.shape[0]}x50")


def test_encode_known_and_unknown_words(vectors: WordVectors) -> None:
    tokens = tokenize("Paris zzqxjvtk 東京zzq")
    encoded = vectors.encode(tokens)
    assert encoded.vectors.shape == (3, 50) and encoded.vectors.dtype == np.float32
    assert encoded.unknown.tolist() == [False, True, True]
    np.testing.assert_array_equal(encoded.vectors[0], vectors.matrix[vectors.row_of["paris"]])
    assert not encoded.vectors[1:].any()


def test_encode_nothing(vectors: WordVectors) -> None:
    encoded = vectors.encode([])
    assert encoded.vectors.shape == (0, 50) and encoded.unknown.shape == (0,)


def test_mismatched_table_is_refused() -> None:
    with pytest.raises(VectorsError, match="2 vectors for 3 words"):
        WordVectors(np.zeros((2, 4), dtype=np.float32), ["a", "b", "c"], "test", "fp")


def test_key_ids_from_the_table_of_seen_words_equal_a_fresh_lookup(vectors: WordVectors,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from matching.text import embeddings

    keys = ["the", "zzqxjvtk", "tower", "the", "blorptastic", "zzqxjvtk"]
    expected = [embeddings.key_id(k, vectors.row_of.get(k, -1)) for k in keys]
    assert vectors.key_ids(keys).tolist() == expected  # first time: looked up in the full table
    assert vectors.key_ids(keys).tolist() == expected  # then from the words seen
    assert expected[1] == expected[5] < 0 and expected[0] >= 0  # an unknown word keeps one id of its own
    monkeypatch.setattr(embeddings, "SEEN_WORDS", 1)  # over the bound: the table starts afresh
    assert vectors.key_ids(keys).tolist() == expected
    assert len(vectors._seen) <= len(set(keys))


def test_vectors_at_gathers_rows_and_zeros_from_the_table_of_rows_read(vectors: WordVectors,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from matching.text import embeddings

    monkeypatch.setattr(embeddings, "ROWS_READ_AT_FIRST", 2)  # a fresh table that has to grow twice
    fresh = WordVectors(vectors.matrix, list(vectors.row_of), "test", "fp")
    rows = [fresh.row_of[w] for w in ("the", "tower", "paris", "river", "of")]
    ids = np.array([[rows[0], rows[1], -5, -(2**40)], [rows[2], rows[3], rows[4], rows[0]]], dtype=np.int64)
    expected = np.zeros((2, 4, 50), dtype=np.float32)
    for (r, c), value in np.ndenumerate(ids):
        if value >= 0:
            expected[r, c] = vectors.matrix[value]
    for _ in range(2):  # the second time every row is read from the table alone
        got = fresh.vectors_at(ids)
        assert got.shape == (2, 4, 50)
        np.testing.assert_array_equal(got.numpy(), expected)
    assert fresh._rows_filled == 1 + len(set(rows))  # each row copied once, slot 0 the zeros
    assert fresh.vectors_at(np.zeros((0, 3), dtype=np.int64)).shape == (0, 3, 50)


def test_vectors_at_from_several_threads_equals_one_thread(vectors: WordVectors) -> None:
    from concurrent.futures import ThreadPoolExecutor

    fresh = WordVectors(vectors.matrix, list(vectors.row_of), "test", "fp")
    generator = np.random.default_rng(0)
    tables = [generator.integers(-3, vectors.matrix.shape[0], size=(64, 20)) for _ in range(16)]
    with ThreadPoolExecutor(4) as pool:
        gathered = list(pool.map(fresh.vectors_at, tables))
    for table, got in zip(tables, gathered, strict=True):
        expected = np.where((table >= 0)[..., None], vectors.matrix[np.maximum(table, 0)], 0.0)
        np.testing.assert_array_equal(got.numpy(), expected)


def test_ids_of_codes_equal_key_ids_and_grow_with_new_keys(vectors: WordVectors) -> None:
    import numpy as np

    from matching.text.tokens import KEY_CODES

    fresh = WordVectors(vectors.matrix, list(vectors.row_of), "test", "fp")
    keys = ["the", "zzqxjvtk-codes", "tower", "the"]
    codes = np.array([KEY_CODES.code(k) for k in keys])
    assert fresh.ids_of_codes(codes).tolist() == vectors.key_ids(keys).tolist()
    later = ["blorptastic-codes", "paris"]  # keys given codes after the table was made
    later_codes = np.array([KEY_CODES.code(k) for k in later])
    assert fresh.ids_of_codes(later_codes).tolist() == vectors.key_ids(later).tolist()
    assert len(fresh._id_of_code) == len(KEY_CODES)
    assert fresh.ids_of_codes(np.zeros(0, dtype=np.int64)).shape == (0,)


def test_an_unknown_number_or_date_carries_its_kind_in_its_id(vectors: WordVectors) -> None:
    """'29,029' is no GloVe word, so no table of the vectors' words can say it is a number: its id does.
    Without the kind the id is the one the word had before (the IDF tables of earlier checkpoints use it)."""
    import zlib

    import torch

    from matching.models.batching import PAD_ID
    from matching.text.embeddings import key_id, plain_ids, unknown_kinds
    from matching.text.tokens import DATE, NUMBER

    keys = ["29,029", "1776s", "zzqxjvtk", "paris", "1945"]
    assert not vectors.is_known("29,029") and not vectors.is_known("1776s") and vectors.is_known("1945")
    ids = torch.from_numpy(vectors.key_ids(keys))
    assert unknown_kinds(ids).tolist() == [NUMBER, DATE, 0, 0, 0]  # a known year's kind is in the keyword table
    before = [-1 - zlib.crc32(k.encode("utf-8")) for k in keys[:3]]
    assert plain_ids(ids).tolist() == [*before, vectors.row_of["paris"], vectors.row_of["1945"]]
    assert ids.tolist() == [key_id(k, vectors.row_of.get(k, -1)) for k in keys]
    # An IDF table keyed as an earlier checkpoint's (the ids before the kind) reads the tagged ids.
    from matching.models.blocks.interactions import IdfTable

    table = IdfTable(3)
    table.fill(torch.tensor(before), torch.tensor([7.0, 8.0, 9.0]), 1.0)
    assert table(ids[:3]).tolist() == [7.0, 8.0, 9.0] and table(torch.tensor(before)).tolist() == [7.0, 8.0, 9.0]
    padding = torch.tensor(list(PAD_ID.values()))
    assert unknown_kinds(padding).tolist() == [0, 0] and bool((padding < ids.min()).all())
