"""Co-attention over an affinity matrix, masked against padding (MCAN, section 2.2).

s (B, m, n) scores every question word i against every answer word j. Each function returns
weights that are exactly 0 on padding and never lets a padding word take any share. Masked
scores use a large finite value rather than -inf, so that rows with no real word (padding
rows) give zeros and finite gradients.
"""

from __future__ import annotations

from typing import Literal

import torch

from matching.models.blocks.attention import MASKED_LOGIT

Pooling = Literal["max", "mean"]


def softmax_over(scores: torch.Tensor, mask: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax along `dim` over the real entries of `mask` (broadcastable to scores); 0 elsewhere."""
    weights = torch.softmax(scores.masked_fill(~mask, MASKED_LOGIT), dim=dim)
    return weights * mask


def pooled_coattention(affinity: torch.Tensor, cells: torch.Tensor, question_mask: torch.Tensor,
                       answer_mask: torch.Tensor, pooling: Pooling) -> tuple[torch.Tensor, torch.Tensor]:
    """Extractive co-attention (eq. 3 and 4): each question word weighted by the softmax of its
    maximum (or mean) affinity over the answer's words, and each answer word likewise over the
    question's. Returns the weights (B, m) and (B, n), each summing to 1 over real words."""
    if pooling == "max":
        masked = affinity.masked_fill(~cells, MASKED_LOGIT)
        question_scores, answer_scores = masked.amax(2), masked.amax(1)
    else:
        kept = affinity * cells
        question_scores = kept.sum(2) / cells.sum(2).clamp_min(1)
        answer_scores = kept.sum(1) / cells.sum(1).clamp_min(1)
    return softmax_over(question_scores, question_mask), softmax_over(answer_scores, answer_mask)


def alignment(affinity: torch.Tensor, cells: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Alignment pooling (eq. 5): for each question word, the softmax of its row over the answer's
    words (B, m, n, rows sum to 1); for each answer word, the softmax of its column over the
    question's words (B, m, n, columns sum to 1)."""
    return softmax_over(affinity, cells, dim=2), softmax_over(affinity, cells, dim=1)


def self_alignment(affinity: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Intra-attention (eq. 6): each word's softmax over the words of its own text, (B, L, L)."""
    return softmax_over(affinity, mask[:, :, None] & mask[:, None, :], dim=2)
