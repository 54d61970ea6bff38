"""Padding policy: cut to the model's maximum lengths, pad to the batch maximum."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from matching.models.batching import TextCache, make_batch, make_token_batch
from matching.text.embeddings import EncodedText, WordVectors
from matching.text.tokens import tokenize


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


def test_token_batch_equals_padding_the_looked_up_texts(vectors: WordVectors) -> None:
    question = tokenize("who wrote zzqxjvtk hamlet ?")
    answers = [tokenize("Hamlet is a tragedy by Shakespeare, blorptastic."), tokenize("Paris"),
               tokenize("word " * 12), question]
    questions = [question, question, tokenize("who wrote hamlet ?"), question]
    fast = make_token_batch(vectors, questions, answers, max_question_len=4, max_answer_len=9)
    slow = make_batch([vectors.encode(q[:4]) for q in questions], [vectors.encode(a[:9]) for a in answers],
                      max_question_len=4, max_answer_len=9)
    for name in ("question_vectors", "question_unknown", "question_lengths",
                 "answer_vectors", "answer_unknown", "answer_lengths"):
        assert torch.equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.answer_unknown[0].tolist()[-2:] == [True, False] and fast.answer_lengths.tolist() == [9, 1, 9, 5]


@pytest.mark.parametrize("known", [None, TextCache()], ids=["new texts", "with a text cache"])
def test_token_batch_from_key_codes_equals_from_keys(vectors: WordVectors, known: TextCache | None) -> None:
    """Texts with codes (`Tokens`), plain token lists (no codes) and a mix give the same batch."""
    questions = [tokenize("who wrote zzqxjvtk hamlet ?"), tokenize("who wrote hamlet ?")] * 2
    answers = [tokenize("Hamlet is a tragedy by Shakespeare, blorptastic."), tokenize("Paris"),
               tokenize("word " * 12), tokenize("zzqxjvtk")]
    with_codes = make_token_batch(vectors, questions, answers, 4, 9, known)
    plain = make_token_batch(vectors, [list(q) for q in questions], [list(a) for a in answers], 4, 9)
    mixed = make_token_batch(vectors, questions, [list(answers[0]), *answers[1:]], 4, 9)
    for name in ("question_vectors", "question_unknown", "question_lengths", "question_ids",
                 "answer_vectors", "answer_unknown", "answer_lengths", "answer_ids"):
        assert torch.equal(getattr(with_codes, name), getattr(plain, name)), name
        assert torch.equal(getattr(mixed, name), getattr(plain, name)), name


def test_token_batch_refuses_a_text_without_words(vectors: WordVectors) -> None:
    with pytest.raises(ValueError, match="at least one word"):
        make_token_batch(vectors, [tokenize("who")] * 2, [tokenize("a"), []], 5, 5)
