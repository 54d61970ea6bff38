"""What a model may keep from its training texts: word statistics of the training answers.

A family that reads such statistics (an IDF-weighted exact-match channel, a keyword term) takes
them from here at training time and stores them with its weights, so a checkpoint never reads
dev or test text, and the app scores with the very statistics the model learned with.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from matching.text.embeddings import WordVectors, key_id
from matching.text.stems import stem
from matching.text.tokens import Token


@dataclass(frozen=True)
class Corpus:
    """The distinct training answers, as lookup keys, and the word vectors that give keys their ids."""

    answers: tuple[tuple[str, ...], ...]
    vectors: WordVectors

    @classmethod
    def of(cls, answers: Iterable[Sequence[Token]], vectors: WordVectors) -> Corpus:
        distinct = dict.fromkeys(tuple(t.key for t in answer) for answer in answers if answer)
        return cls(tuple(distinct), vectors)

    @property
    def mean_length(self) -> float:
        """The mean number of words of the distinct answers (BM25's average document length)."""
        return float(np.mean([len(answer) for answer in self.answers])) if self.answers else 1.0

    @cached_property
    def idf(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Key ids and IDF of every word of the distinct answers, IDF / log(N + 1).

        IDF = log((N + 1) / (df + 1)) over the N distinct answers; a word in no answer gets
        log(N + 1), so dividing by it puts every value in (0, 1] and unseen words at 1.
        """
        keys, values = self._idf(self.answers)
        return torch.from_numpy(self.vectors.key_ids(keys)), torch.from_numpy(values)

    @cached_property
    def stem_idf(self) -> tuple[torch.Tensor, torch.Tensor]:
        """`idf` of the answers' stems (`text.stems`), by stem id: what a keyword term on stems weighs words by."""
        keys, values = self._idf([[stem(key) for key in answer] for answer in self.answers])
        return torch.from_numpy(np.array([key_id(key, -1) for key in keys], dtype=np.int64)), torch.from_numpy(values)

    def idf_of(self, stems: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """`stem_idf` where a model matches stems, else `idf`: the table a keyword term or an exact-match matrix
        weighs words by."""
        return self.stem_idf if stems else self.idf

    def _idf(self, answers: Sequence[Sequence[str]]) -> tuple[list[str], np.ndarray]:
        frequency: dict[str, int] = {}
        for answer in answers:
            for key in set(answer):
                frequency[key] = frequency.get(key, 0) + 1
        keys = sorted(frequency)
        top = np.log(len(answers) + 1)
        values = np.array([np.log((len(answers) + 1) / (frequency[k] + 1)) / top for k in keys], dtype=np.float32)
        return keys, values
