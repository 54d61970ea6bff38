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


class CastCompressions(nn.ModuleList):
    """The compression functions of every (cast, comparison), applied at once.

    Module c * 3 + k compresses comparison k of cast c: k = 0 the product x_bar * x, 1 the difference
    x_bar - x, 2 the concatenation [x_bar; x] (each its own parameters: nothing is shared across casts).
    Applying the 12 functions one by one costs 24 small matrix products per text; here the casts go
    through each comparison's function together (one batched product over the casts), and the
    concatenation's function reads x_bar and x apart (its weights split in two), so [x_bar; x] is never
    built. Exactly each module's own function (tested against it), up to float rounding.
    """

    def __init__(self, kind: CompressionKind, size: int, casts: int, factors: int = 10) -> None:
        super().__init__(make_compression(kind, 2 * size if comparison == 2 else size, factors)
                         for _ in range(casts) for comparison in range(3))
        self.kind, self.size, self.casts = kind, size, casts

    def _stacked(self, comparison: int) -> list[nn.Module]:
        return [self[c * 3 + comparison] for c in range(self.casts)]

    def forward(self, product: torch.Tensor, difference: torch.Tensor, bars: torch.Tensor, words: torch.Tensor
                ) -> torch.Tensor:
        """product, difference, bars: (C, B, L, D), cast-major; words: (B, L, D) -> (B, L, C * 3), cast by cast."""
        casts, batch, length, size = bars.shape
        if self.kind == "sm":
            concatenation = bars.sum(-1) + words.sum(-1)
            found = torch.stack([product.sum(-1), difference.sum(-1), concatenation], dim=-1)
            return found.permute(1, 2, 0, 3).reshape(batch, length, casts * 3)

        def rows(z: torch.Tensor) -> torch.Tensor:  # (C, B, L, D) -> (C, B * L, D), a view
            return z.reshape(casts, batch * length, z.shape[-1])

        def through(z: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:  # (C, N, D) @ (C, D, K) -> (C, N, K)
            return torch.bmm(z, weights)

        linear_weights = [torch.stack([m.linear.weight[0] for m in self._stacked(k)])[..., None] for k in range(3)]
        biases = torch.stack([torch.cat([m.linear.bias for m in self._stacked(k)]) for k in range(3)], dim=-1)
        flat_words = words.reshape(1, batch * length, size)
        p, d, b = rows(product), rows(difference), rows(bars)
        concatenation = through(b, linear_weights[2][:, :size]) + flat_words @ linear_weights[2][:, size:]
        linear = torch.cat([through(p, linear_weights[0]), through(d, linear_weights[1]), concatenation],
                           dim=-1) + biases[:, None, :]  # (C, N, 3)
        if self.kind == "fm":
            factors = [torch.stack([m.factors for m in self._stacked(k)]) for k in range(3)]  # (C, D or 2D, K)

            def pairwise(summed: torch.Tensor, squares: torch.Tensor) -> torch.Tensor:
                return 0.5 * (summed * summed - squares).sum(-1, keepdim=True)

            bar_part, word_part = factors[2][:, :size], factors[2][:, size:]
            linear = linear + torch.cat([
                pairwise(through(p, factors[0]), through(p * p, factors[0] * factors[0])),
                pairwise(through(d, factors[1]), through(d * d, factors[1] * factors[1])),
                pairwise(through(b, bar_part) + flat_words @ word_part,
                         through(b * b, bar_part * bar_part) + (flat_words * flat_words) @ (word_part * word_part))],
                dim=-1)
        else:
            linear = torch.relu(linear)
        return linear.view(casts, batch, length, 3).permute(1, 2, 0, 3).reshape(batch, length, casts * 3)
