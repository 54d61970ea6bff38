"""ARC-II (Hu et al., NIPS 2014), and ARC-II.omega (ECIR 2019).

Each text's word windows first pass a 1D convolution (n-gram features, one vector per position); every
question window then meets every answer window: their features are added (MatchZoo-py's "plus"
matching), which gives a matching map of `ngram_filters` channels over (question position, answer
position). A 2D convolution with ReLU reads the map, dynamic max pooling keeps the largest value of
each window of a fixed grid over the real cells, and an MLP gives the score.

Everything after the map is piecewise linear in it (convolution, ReLU, max pooling, the MLP's ReLU
layer), so gradient x value splits the score exactly over the map's cells (one bias term for what
no cell accounts for), and over the pooled values (the MLP's contributions), as for MatchPyramid.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from matching.models.base import ForwardTrace, MatchingModel, PairBatch, ecir_deviations, gate_text, register
from matching.models.blocks import MLPHead, length_mask
from matching.models.map_reading import read_map, traced_read
from matching.models.params import ARCIIParams, ModelParams
from matching.models.parts import (
    GATE_STEP,
    RANK_STEP,
    VECTORS_STEP,
    WORDS_STEP,
    Descriptor,
    Matrices,
    Part,
    Step,
    View,
)

MEAN_MAP = "n-gram match, mean of the channels"

MAP_STEP = Step("map", View.MATRIX, "N-gram features meet: the matching map", "A convolution gives every window of "
                "words a vector of n-gram features; each question window meets each answer window by adding the two "
                "vectors. The map has one channel per feature; here is their mean.", shows=(MEAN_MAP,))
POOLING_STEP = Step("pooling", View.POOLING, "2D convolution and dynamic pooling: what the network keeps",
                    "Filters slide over the map; dynamic pooling cuts each filter's output into a fixed grid of "
                    "windows and keeps each window's largest value.")
MLP_STEP = Step("mlp", View.MLP, "The MLP: from pooled values to the score", "One hidden layer of ReLU units gives the "
                "score; each pooled value's contribution (gradient x value) plus the bias adds up to it.")


@register
class ARCII(MatchingModel):
    family = "arcii"
    params_type = ARCIIParams
    params: ARCIIParams
    descriptor = Descriptor(
        title="ARC-II", short_name="A2", paper="Hu et al., NIPS 2014; omega: Belkacem et al., ECIR 2019",
        steps=(WORDS_STEP, VECTORS_STEP, GATE_STEP, MAP_STEP, POOLING_STEP, MLP_STEP, RANK_STEP),
        terms=(("ARC-II", "Hu et al. 2014: n-gram features of both texts meet in a 2D map, read by convolution "
                          "and pooling, then an MLP.", "ARCII", "ARC-II.omega"),))

    def __init__(self, params: ARCIIParams) -> None:
        super().__init__(params)
        k = params.ngram_size
        self.question_ngrams = nn.Conv1d(params.embedding_dim, params.ngram_filters, k)
        self.answer_ngrams = nn.Conv1d(params.embedding_dim, params.ngram_filters, k)
        self.conv = nn.Conv2d(params.ngram_filters, params.kernel_count, (params.kernel_rows, params.kernel_cols),
                              padding=(params.kernel_rows // 2, params.kernel_cols // 2))
        self.head = MLPHead(params.pooled_size, params.mlp_hidden)

    def ngrams(self, conv: nn.Conv1d, words: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """(B, L, C): the features of the window starting at each real position (zeros past the text's end
        are read as MatchZoo-py reads them), 0 at padding."""
        padded = nn.functional.pad(words.transpose(1, 2), (0, self.params.ngram_size - 1))
        return (conv(padded) * length_mask(lengths, words.shape[1])[:, None, :]).transpose(1, 2)

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        question = self.read("question", batch.question_vectors, batch.question_unknown, batch.question_lengths,
                             batch.question_ids)
        answer = self.read("answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths, batch.answer_ids)
        q = self.ngrams(self.question_ngrams, question.gated_words, batch.question_lengths)
        a = self.ngrams(self.answer_ngrams, answer.gated_words, batch.answer_lengths)
        # "plus" matching: (B, C, m, n), zero wherever either position is padding.
        matching = (q.transpose(1, 2)[:, :, :, None] + a.transpose(1, 2)[:, :, None, :]) * batch.cell_mask()[:, None]
        if not trace:
            return read_map(self, matching, batch)[0]
        score, cells, pooled = traced_read(self, matching, batch)
        # One matrix for the eye (the channels' mean); the exact split is over every channel's cells, summed.
        cells = cells.sum(1, keepdim=True)
        return ForwardTrace(
            score=score, question=question, answer=answer,
            matrices=Matrices((MEAN_MAP,), matching.mean(1, keepdim=True), cell_contributions=cells,
                              cell_bias=score - cells.flatten(1).sum(-1)),
            pooled=pooled)

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.MATRICES, Part.POOLED_CELLS})

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        return [MEAN_MAP]

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        return ecir_deviations(params, training, [
            f"{params.get('ngram_filters')} n-gram filters of {params.get('ngram_size')} words, "
            f"{params.get('kernel_count')} 2D kernels of {params.get('kernel_rows')}x{params.get('kernel_cols')}",
            f"dynamic max pooling of the real cells to a {params.get('pool_rows')}x{params.get('pool_cols')} grid, "
            f"then an MLP of {params.get('mlp_hidden')} (MatchZoo-py: fixed 2x2 pooling over padded texts, "
            "then one linear layer)"])

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        assert isinstance(params, ARCIIParams)
        parts = ["GloVe 6B 50d word vectors (frozen; one learned vector for unknown words)"]
        parts += [gate_text(params)] if params.attended_sides else []
        parts += [f"1D convolution per text: {params.ngram_filters} filters of {params.ngram_size} words",
                  f"matching map: question and answer n-gram features added ({params.ngram_filters} channels)",
                  f"2D convolution: {params.kernel_count} kernels of {params.kernel_rows}x{params.kernel_cols}, ReLU",
                  f"dynamic max pooling of the real cells to a {params.pool_rows}x{params.pool_cols} grid",
                  f"MLP: ReLU layer of {params.mlp_hidden} units, then a linear score"]
        return " -> ".join(parts)


__all__ = ["ARCII"]
