"""Padding policy: turn texts into one padded, masked PairBatch.

Preprocessing (tokenize) is separate from this: here texts are cut to the model's
maximum lengths, looked up in the word vectors and padded to the longest text in the
batch. `make_token_batch` goes from tokens in one step (each distinct text looked up
once, one gather for the whole batch); `make_batch` pads texts already looked up.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import torch

from .embeddings import EncodedText, WordVectors, key_id
from .models import PairBatch
from .text import Token

PAD_ID = {"question": -(2**40), "answer": -(2**41)}
"""Lookup-key ids on padding: below every real id (>= -2**32), and different per side, so
padding never matches padding in an exact-match matrix."""


def _pad(texts: Sequence[EncodedText], max_len: int, side: str
         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    lengths = [min(len(t.unknown), max_len) for t in texts]
    if min(lengths) < 1:
        raise ValueError("every text in a batch needs at least one word")
    width, dim = max(lengths), texts[0].vectors.shape[1]
    vectors = np.zeros((len(texts), width, dim), dtype=np.float32)
    unknown = np.zeros((len(texts), width), dtype=bool)
    ids = np.full((len(texts), width), PAD_ID[side], dtype=np.int64)
    for row, (text, length) in enumerate(zip(texts, lengths, strict=True)):
        vectors[row, :length] = text.vectors[:length]
        unknown[row, :length] = text.unknown[:length]
        if text.ids is not None:
            ids[row, :length] = text.ids[:length]
    return (torch.from_numpy(vectors), torch.from_numpy(unknown), torch.tensor(lengths, dtype=torch.int64),
            torch.from_numpy(ids))


def make_batch(questions: Sequence[EncodedText], answers: Sequence[EncodedText],
               max_question_len: int, max_answer_len: int) -> PairBatch:
    q_vectors, q_unknown, q_lengths, q_ids = _pad(questions, max_question_len, "question")
    a_vectors, a_unknown, a_lengths, a_ids = _pad(answers, max_answer_len, "answer")
    return PairBatch(q_vectors, q_unknown, q_lengths, a_vectors, a_unknown, a_lengths, q_ids, a_ids)


RowCache = dict[tuple[int, int], list[int]]
"""(id(text), max_len) -> the text's rows in the vector table: kept by a caller that scores the
same text objects several times (evaluation, one model after another), for as long as those
objects live."""


def _lookup(vectors: WordVectors, texts: Sequence[Sequence[Token]], max_len: int, side: str,
            known: RowCache | None = None
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                       tuple[torch.Tensor, torch.Tensor] | None]:
    """(B, L, d) vectors (zero on unknown words and padding), (B, L) unknown, (B,) lengths,
    (B, L) lookup-key ids (`embeddings.key_id`: the vector row of a known word), and the groups
    of rows holding the same text object (see `PairBatch.question_groups`).

    The same text object repeated (a question with each of its candidates) is looked up
    once (once at all with `known`); the vectors of the whole batch come out of the table in
    one gather.
    """
    slot_of: dict[int, int] = {}
    distinct: list[list[int]] = []
    slots = []
    row = vectors.row_of.get
    for text in texts:
        slot = slot_of.get(id(text))
        if slot is None:
            slot = slot_of[id(text)] = len(distinct)
            rows = None if known is None else known.get((id(text), max_len))
            if rows is None:
                rows = [row(t.key, -1) for t in text[:max_len]]
                if rows and min(rows) < 0:  # most words are known: only the unknown ones need an id of their own
                    rows = [r if r >= 0 else key_id(t.key, r) for t, r in zip(text, rows, strict=False)]
                if known is not None:
                    known[(id(text), max_len)] = rows
            distinct.append(rows)
        slots.append(slot)
    lengths = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
    if lengths.min() < 1:
        raise ValueError("every text in a batch needs at least one word")
    table = np.full((len(distinct), int(lengths.max())), PAD_ID[side], dtype=np.int64)
    # Row-major order of the real positions is the order of the rows in `distinct`, concatenated.
    table[np.arange(table.shape[1])[None, :] < lengths[:, None]] = np.fromiter(
        itertools.chain.from_iterable(distinct), dtype=np.int64, count=int(lengths.sum()))
    inverse = np.asarray(slots)
    rows = table[inverse]
    found = rows >= 0
    words = vectors.matrix[np.where(found, rows, 0)]
    words[~found] = 0.0
    groups = None
    if len(distinct) < len(texts):
        first = np.zeros(len(distinct), dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(texts) - 1, -1, -1)  # the last write is the first occurrence
        groups = (torch.from_numpy(first), torch.from_numpy(inverse))
    unknown = (rows < 0) & (rows != PAD_ID[side])
    return (torch.from_numpy(words), torch.from_numpy(unknown), torch.from_numpy(lengths[inverse]),
            torch.from_numpy(rows), groups)


def make_token_batch(vectors: WordVectors, questions: Sequence[Sequence[Token]],
                     answers: Sequence[Sequence[Token]], max_question_len: int, max_answer_len: int,
                     known: RowCache | None = None) -> PairBatch:
    """The same batch as `make_batch` over `vectors.encode` of each text, built faster, and with
    the question groups set when a question object repeats."""
    q_vectors, q_unknown, q_lengths, q_ids, groups = _lookup(vectors, questions, max_question_len, "question", known)
    a_vectors, a_unknown, a_lengths, a_ids, _ = _lookup(vectors, answers, max_answer_len, "answer", known)
    return PairBatch(q_vectors, q_unknown, q_lengths, a_vectors, a_unknown, a_lengths, q_ids, a_ids,
                     question_groups=groups)
