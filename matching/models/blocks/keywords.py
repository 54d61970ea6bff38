"""The keyword term: a learned linear term over lexical features of a pair, beside any family's learned match.

As the WikiQA paper's CNN-Cnt and Severyn and Moschitti's feature-augmented CNN do, the score is
learned match + sum_k w_k x_k over a few keyword features x of the pair:

- word overlap: the share of the question's words whose lookup key occurs in the answer;
- IDF-weighted overlap: the same, each question word weighed by its IDF;
- BM25: Okapi BM25 of the answer for the question (k1 = 1.2, b = 0.75), per question word.

IDF and the mean answer length come from the training answers only and are kept as buffers in
the checkpoint, so scoring reads no other text. The term has no bias of its own (the learned
part has one), so each feature's share w_k x_k is exactly what it adds to the score.
"""

from __future__ import annotations

import torch
from torch import nn

from matching.models.blocks.interactions import IdfTable
from matching.models.blocks.masks import length_mask

KEYWORD_FEATURES = ("word overlap", "IDF-weighted overlap", "BM25")
BM25_K1 = 1.2
BM25_B = 0.75


class KeywordTerm(nn.Module):
    """x (B, 3) keyword features of each pair from the lookup-key ids, and w_k x_k, each feature's term."""

    def __init__(self, idf_words: int) -> None:
        super().__init__()
        self.idf = IdfTable(idf_words)
        self.register_buffer("mean_answer_length", torch.ones(()))
        # Zero: training starts from the learned match alone and gives keywords the weight they earn.
        self.weights = nn.Parameter(torch.zeros(len(KEYWORD_FEATURES)))

    @torch.no_grad()
    def fill(self, ids: torch.Tensor, idf: torch.Tensor, mean_answer_length: float) -> None:
        self.idf.fill(ids, idf, 1.0)
        self.mean_answer_length.fill_(mean_answer_length)

    def features(self, question_ids: torch.Tensor, answer_ids: torch.Tensor, question_lengths: torch.Tensor,
                 answer_lengths: torch.Tensor) -> torch.Tensor:
        """(B, 3): word overlap, IDF-weighted overlap, BM25 per question word. Padding ids differ per
        side and from every real id, so padding never matches."""
        q_mask = length_mask(question_lengths, question_ids.shape[1])
        same = question_ids[:, :, None] == answer_ids[:, None, :]  # (B, m, n)
        found = same.any(-1) & q_mask
        words = question_lengths.to(torch.float32)
        idf = self.idf(question_ids) * q_mask
        overlap = found.sum(-1) / words
        weighted = (idf * found).sum(-1) / idf.sum(-1).clamp_min(1e-6)
        frequency = same.sum(-1).to(torch.float32)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * answer_lengths.to(torch.float32) / self.mean_answer_length)
        bm25 = (idf * frequency * (BM25_K1 + 1) / (frequency + norm[:, None])).sum(-1) / words
        return torch.stack([overlap, weighted, bm25], dim=-1)

    def forward(self, question_ids: torch.Tensor, answer_ids: torch.Tensor, question_lengths: torch.Tensor,
                answer_lengths: torch.Tensor) -> torch.Tensor:
        """(B, 3): each feature's term w_k x_k (their sum is what keywords add to the score)."""
        return self.features(question_ids, answer_ids, question_lengths, answer_lengths) * self.weights
