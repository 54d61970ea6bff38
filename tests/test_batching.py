"""Padding policy: cut to the model's maximum lengths, pad to the batch maximum."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from matching.batching import make_batch
from matching.embeddings import EncodedText


def encoded(length: int, dim: int = 3, unknown_at: tuple[int, ...] = ()) -> EncodedText:
    vectors = np.arange(1, length * dim + 1, dtype=np.float32).reshape(length, dim)
    unknown = np.zeros(length, dtype=bool)
    unknown[list(unknown_at)] = True
    return EncodedText(vectors, unknown)


def test_batch_is_padded_to_the_longest_and_cut_to_the_maximum() -> None:
    batch = make_batch([encoded(2), encoded(9)], [encoded(1, unknown_at=(0,)), encoded(4, unknown_at=(3,))],
                       max_question_len=5, max_answer_len=10)
    assert batch.question_lengths.tolist() == [2, 5]
    assert batch.answer_lengths.tolist() == [1, 4]
    assert batch.question_vectors.shape == (2, 5, 3) and batch.answer_vectors.shape == (2, 4, 3)
    assert batch.question_vectors.dtype == torch.float32
    np.testing.assert_array_equal(batch.question_vectors[1].numpy(), encoded(9).vectors[:5])
    assert not batch.question_vectors[0, 2:].any() and not batch.answer_vectors[0, 1:].any()
    assert batch.answer_unknown.tolist() == [[True, False, False, False], [False, False, False, True]]


def test_a_text_without_words_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one word"):
        make_batch([encoded(2), encoded(0)], [encoded(1), encoded(1)], 5, 5)
