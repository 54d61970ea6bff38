"""Padding policy: turn encoded texts into one padded, masked PairBatch.

Preprocessing (tokenize, look up vectors) is separate from this: here texts are
cut to the model's maximum lengths and padded to the longest text in the batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .embeddings import EncodedText
from .models import PairBatch


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
