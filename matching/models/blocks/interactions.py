"""Interactions between positions: cosine, bilinear and tensor matrices, and the exact-match channel."""

from __future__ import annotations

import torch
from torch import nn

from matching.models.blocks.masks import COSINE_EPS, find_sorted
from matching.text.embeddings import plain_ids


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Each vector of the last dimension divided by its length (at least COSINE_EPS)."""
    return x / x.norm(dim=-1, keepdim=True).clamp_min(COSINE_EPS)


def cosine_matrix(q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """(B, m, e), (B, n, e) -> (B, m, n) cosine similarities."""
    return unit_rows(q) @ unit_rows(a).transpose(1, 2)


class Interaction(nn.Module):
    """Positional interaction (B, m, e) x (B, n, e) -> (B, C, m, n), in two steps: what each side
    brings on its own (`side`, computed once per text when many pairs share it), then the
    matrices where the two meet (`meet`)."""

    def side(self, states: torch.Tensor, side: str) -> torch.Tensor:
        return states

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.meet(self.side(q, "question"), self.side(a, "answer"))


class CosineInteraction(Interaction):
    """s_ij = cos(p_i, p_j): one matrix, no parameters. Each side is made unit length first."""

    def side(self, states: torch.Tensor, side: str) -> torch.Tensor:
        return unit_rows(states)

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return (q @ a.transpose(1, 2))[:, None]


class BilinearInteraction(Interaction):
    """s_ij = p_i^T M p_j + b: one matrix. The question side brings p_i^T M."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(size, size))
        self.bias = nn.Parameter(torch.zeros(1))
        nn.init.xavier_uniform_(self.weight)

    def side(self, states: torch.Tensor, side: str) -> torch.Tensor:
        return states @ self.weight if side == "question" else states

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return (q @ a.transpose(1, 2) + self.bias)[:, None]


class TensorInteraction(Interaction):
    """s^c_ij = ReLU(p_i^T M^c p_j + W^c [p_i ; p_j] + b^c): C matrices."""

    def __init__(self, size: int, slices: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(slices, size, size))
        self.linear_q = nn.Linear(size, slices, bias=True)  # W^c split as [W_q ; W_a]
        self.linear_a = nn.Linear(size, slices, bias=False)
        nn.init.xavier_uniform_(self.weight)

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        bilinear = torch.einsum("bmx,cxy,bny->bcmn", q, self.weight, a)
        linear = self.linear_q(q).permute(0, 2, 1)[..., None] + self.linear_a(a).permute(0, 2, 1)[:, :, None]
        return torch.relu(bilinear + linear)


def exact_match_matrix(question_ids: torch.Tensor, answer_ids: torch.Tensor,
                       question_weights: torch.Tensor | None = None,
                       answer_weights: torch.Tensor | None = None) -> torch.Tensor:
    """(B, m), (B, n) lookup-key ids -> (B, m, n): 1 where the two words have the same
    lookup key, else 0; times each side's word weight (IDF, attention) when given."""
    equal = (question_ids[:, :, None] == answer_ids[:, None, :]).float()
    if question_weights is not None:
        equal = equal * question_weights[:, :, None]
    if answer_weights is not None:
        equal = equal * answer_weights[:, None, :]
    return equal


class IdfTable(nn.Module):
    """Inverse document frequency by lookup-key id, kept as buffers in the checkpoint.

    Only the words of the training answers are stored (sorted ids and their IDF,
    divided by the largest possible IDF so values lie in (0, 1]); any other word gets
    `unseen`, the IDF of a word found in no training answer (1 after that division).
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.register_buffer("ids", torch.zeros(size, dtype=torch.int64))
        self.register_buffer("values", torch.zeros(size))
        self.register_buffer("unseen", torch.ones(()))

    @torch.no_grad()
    def fill(self, ids: torch.Tensor, values: torch.Tensor, unseen: float) -> None:
        ids = plain_ids(ids)  # keyed as earlier checkpoints are: an unknown number's id without its kind
        order = torch.argsort(ids)
        self.ids.copy_(ids[order])
        self.values.copy_(values[order])
        self.unseen.fill_(unseen)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if self.ids.numel() == 0:
            return self.unseen.expand(ids.shape).clone()
        place, found = find_sorted(self.ids, plain_ids(ids))
        return torch.where(found, self.values[place], self.unseen)


def make_interaction(kind: str, size: int, slices: int) -> Interaction:
    if kind == "cosine":
        return CosineInteraction()
    if kind == "bilinear":
        return BilinearInteraction(size)
    if kind == "tensor":
        return TensorInteraction(size, slices)
    raise ValueError(f"unknown interaction {kind!r}; known: cosine, bilinear, tensor")
