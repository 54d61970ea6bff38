"""Padding policy: turn texts into one padded, masked PairBatch.

Preprocessing (tokenize) is separate from this: here texts are cut to the model's
maximum lengths, looked up in the word vectors and padded to the longest text in the
batch. `make_token_batch` goes from tokens in one step (each distinct text looked up
once, one gather for the whole batch); `make_batch` pads texts already looked up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .embeddings import EncodedText, WordVectors
from .models import PairBatch
from .text import Token

_UNKNOWN, _PADDING = -1, -2


def _pad(texts: Sequence[EncodedText], max_len: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    lengths = [min(len(t.unknown), max_len) for t in texts]
    if min(lengths) < 1:
        raise ValueError("every text in a batch needs at least one word")
    width, dim = max(lengths), texts[0].vectors.shape[1]
    vectors = np.zeros((len(texts), width, dim), dtype=np.float32)
    unknown = np.zeros((len(texts), width), dtype=bool)
    for row, (text, length) in enumerate(zip(texts, lengths, strict=True)):
        vectors[row, :length] = text.vectors[:length]
        unknown[row, :length] = text.unknown[:length]
    return torch.from_numpy(vectors), torch.from_numpy(unknown), torch.tensor(lengths, dtype=torch.int64)


def make_batch(questions: Sequence[EncodedText], answers: Sequence[EncodedText],
               max_question_len: int, max_answer_len: int) -> PairBatch:
    q_vectors, q_unknown, q_lengths = _pad(questions, max_question_len)
    a_vectors, a_unknown, a_lengths = _pad(answers, max_answer_len)
    return PairBatch(q_vectors, q_unknown, q_lengths, a_vectors, a_unknown, a_lengths)


def _lookup(vectors: WordVectors, texts: Sequence[Sequence[Token]], max_len: int
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(B, L, d) vectors (zero on unknown words and padding), (B, L) unknown, (B,) lengths.

    The same text object repeated (a question with each of its candidates) is looked up
    once; the vectors of the whole batch come out of the table in one gather.
    """
    slot_of: dict[int, int] = {}
    distinct: list[list[int]] = []
    slots = []
    row_of = vectors.row_of
    for text in texts:
        slot = slot_of.get(id(text))
        if slot is None:
            slot = slot_of[id(text)] = len(distinct)
            distinct.append([row_of.get(t.key, _UNKNOWN) for t in text[:max_len]])
        slots.append(slot)
    lengths = np.array([len(rows) for rows in distinct], dtype=np.int64)
    if lengths.min() < 1:
        raise ValueError("every text in a batch needs at least one word")
    table = np.full((len(distinct), int(lengths.max())), _PADDING, dtype=np.int64)
    for slot, rows in enumerate(distinct):
        table[slot, : len(rows)] = rows
    rows = table[np.asarray(slots)]
    found = rows >= 0
    words = vectors.matrix[np.where(found, rows, 0)]
    words[~found] = 0.0
    return (torch.from_numpy(words), torch.from_numpy(rows == _UNKNOWN),
            torch.from_numpy(lengths[np.asarray(slots)]))


def make_token_batch(vectors: WordVectors, questions: Sequence[Sequence[Token]],
                     answers: Sequence[Sequence[Token]], max_question_len: int, max_answer_len: int) -> PairBatch:
    """The same batch as `make_batch` over `vectors.encode` of each text, built faster."""
    return PairBatch(*_lookup(vectors, questions, max_question_len), *_lookup(vectors, answers, max_answer_len))
