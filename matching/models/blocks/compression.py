"""Compression functions: a vector in, one scalar out (MCAN, section 2.3.2: SM, NN and FM)."""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

CompressionKind = Literal["fm", "nn", "sm"]
COMPRESSIONS: tuple[CompressionKind, ...] = ("fm", "nn", "sm")


class SumCompression(nn.Module):
    """SM: F(x) = sum_i x_i (no parameters)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(-1)


class DenseCompression(nn.Module):
    """NN: F(x) = ReLU(W_c x + b_c), one unit."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.linear = nn.Linear(size, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x)).squeeze(-1)


class FactorizationMachine(nn.Module):
    """FM (Rendle 2010): F(x) = w_0 + sum_i w_i x_i + sum_{i<j} <v_i, v_j> x_i x_j, with k factors.

    The pairwise term is computed in O(n k) as 1/2 sum_f [(sum_i v_if x_i)^2 - sum_i v_if^2 x_i^2].
    """

    def __init__(self, size: int, factors: int) -> None:
        super().__init__()
        self.linear = nn.Linear(size, 1)
        # Small factors: the pairwise term starts near zero, so early training reads the linear part.
        self.factors = nn.Parameter(torch.randn(size, factors) * 0.01)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        summed = x @ self.factors
        squares = (x * x) @ (self.factors * self.factors)
        return self.linear(x).squeeze(-1) + 0.5 * (summed * summed - squares).sum(-1)


def make_compression(kind: CompressionKind, size: int, factors: int = 10) -> nn.Module:
    if kind == "fm":
        return FactorizationMachine(size, factors)
    if kind == "nn":
        return DenseCompression(size)
    if kind == "sm":
        return SumCompression()
    raise ValueError(f"unknown compression {kind!r}; known: {COMPRESSIONS}")
