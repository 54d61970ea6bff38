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
