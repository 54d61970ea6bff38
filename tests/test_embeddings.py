"""GloVe lookup: known rows, zero rows and flags for unknown words, a stable fingerprint."""

from __future__ import annotations

import numpy as np
import pytest

from matching.embeddings import SOURCE, VectorsError, WordVectors, load_glove
from matching.text import tokenize


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
