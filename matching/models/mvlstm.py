"""MV-LSTM (Wan et al., AAAI 2016).

Words -> shared Bi-LSTM -> positional interaction matrices between every question
position i and answer position j -> k-max pooling of each matrix -> MLP -> score.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ..blocks import (
    BiLSTMEncoder,
    MLPHead,
    Pooled,
    UnknownWordVector,
    cosine_matrix,
    kmax_pool,
    length_mask,
    make_interaction,
)
from ..params import MVLSTMParams


@dataclass(frozen=True)
class PairBatch:
    """Question/answer pairs, padded to the batch maximum, with real lengths."""

    question_vectors: torch.Tensor  # (B, m, d)
    question_unknown: torch.Tensor  # (B, m) bool
    question_lengths: torch.Tensor  # (B,) int64, each >= 1
    answer_vectors: torch.Tensor  # (B, n, d)
    answer_unknown: torch.Tensor  # (B, n) bool
    answer_lengths: torch.Tensor  # (B,)


@dataclass(frozen=True)
class ForwardTrace:
    """Everything one forward pass computed on the way to the score (batched tensors)."""

    score: torch.Tensor  # (B,)
    question_attention: torch.Tensor | None  # (B, m), zero on padding
    answer_attention: torch.Tensor | None  # (B, n)
    matrices: torch.Tensor  # (B, C, m, n) the interaction matrices that were pooled
    forward_cosine: torch.Tensor  # (B, m, n) cos(fwd_i, fwd_j), for display
    backward_cosine: torch.Tensor  # (B, m, n) cos(bwd_i, bwd_j), for display
    pooled: Pooled
    contributions: torch.Tensor  # (B, C * k) each pooled slot's share of the score
    bias_contribution: torch.Tensor  # (B,) the part of the score no slot accounts for


class MVLSTM(nn.Module):
    params: MVLSTMParams

    def __init__(self, params: MVLSTMParams) -> None:
        super().__init__()
        params.validate()
        self.params = params
        size = 2 * params.hidden_size
        self.unknown_word = UnknownWordVector(params.embedding_dim)
        self.encoder = BiLSTMEncoder(params.embedding_dim, params.hidden_size)
        self.interaction = make_interaction(params.interaction, size, params.tensor_slices)
        self.head = MLPHead(params.pooled_size, params.mlp_hidden)
        self.dropout = nn.Dropout(params.dropout)

    def attend(self, side: str, vectors: torch.Tensor, mask: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """MV-LSTM reads every word at full weight; aMV-LSTM overrides this."""
        return vectors, None

    def encode(self, side: str, vectors: torch.Tensor, unknown: torch.Tensor, lengths: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        mask = length_mask(lengths, vectors.shape[1])
        words, attention = self.attend(side, self.unknown_word(vectors, unknown), mask)
        forward_states, backward_states = self.encoder(words, lengths)
        return forward_states, backward_states, attention

    def forward(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        """Scores (B,), or with `trace` the full ForwardTrace of this same pass."""
        q_fwd, q_bwd, q_attention = self.encode(
            "question", batch.question_vectors, batch.question_unknown, batch.question_lengths)
        a_fwd, a_bwd, a_attention = self.encode(
            "answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths)
        q_positions = self.dropout(torch.cat([q_fwd, q_bwd], dim=-1))
        a_positions = self.dropout(torch.cat([a_fwd, a_bwd], dim=-1))
        matrices = self.interaction(q_positions, a_positions)
        forward_cosine, backward_cosine = cosine_matrix(q_fwd, a_fwd), cosine_matrix(q_bwd, a_bwd)
        if self.params.pool_directions:
            matrices = torch.cat([matrices, forward_cosine[:, None], backward_cosine[:, None]], dim=1)
        cell_mask = (length_mask(batch.question_lengths, matrices.shape[2])[:, :, None]
                     & length_mask(batch.answer_lengths, matrices.shape[3])[:, None, :])
        pooled = kmax_pool(matrices, cell_mask, self.params.k, self.params.filler_value)
        score = self.head(pooled.flat())
        if not trace:
            return score
        contributions, bias = self.head.contributions(pooled.flat())
        return ForwardTrace(
            score=score, question_attention=q_attention, answer_attention=a_attention,
            matrices=matrices, forward_cosine=forward_cosine,
            backward_cosine=backward_cosine, pooled=pooled,
            contributions=contributions, bias_contribution=bias)
