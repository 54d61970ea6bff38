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

    The products are taken with the weights on the left, W^T z^T: (C, 1 + K, D) @ (C, D, N), one row
    per output, where z W is (C, N, D) @ (C, D, 1 + K). The two are the same numbers, but a product
    with a handful of output columns runs 4-6x slower on CPU than one with as many output rows
    (measured with MKL, one thread: 640 against 148 microseconds for 4 casts of 2,000 words).
    The linear weight rides along as row 0 of the FM's factors, so each comparison is one product.

    One product over every input at once, (C, 8, 1 + K, D) @ (C, 8, D, N) (the three comparisons, the
    concatenation's two halves and their squares), was measured slower: stacking the 8 inputs copies
    them (37 ms for 256 pairs of 40 words, one thread) and the stacked product took 16 ms against 9 ms
    for the 8 products apart; keeping the stacked weights between passes and sending both texts of a
    batch through one call changed nothing measurable (MCAN, 20 and 1,000 pairs).
    """

    def __init__(self, kind: CompressionKind, size: int, casts: int, factors: int = 10) -> None:
        super().__init__(make_compression(kind, 2 * size if comparison == 2 else size, factors)
                         for _ in range(casts) for comparison in range(3))
        self.kind, self.size, self.casts = kind, size, casts

    def _stacked(self, comparison: int) -> list[nn.Module]:
        return [self[c * 3 + comparison] for c in range(self.casts)]

    def _rows(self, comparison: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(C, 1 + K, D') the linear weight then the factors, one row per output, and (C, K, D') the
        squared factors (None for NN); D' is 2D for the concatenation."""
        modules = self._stacked(comparison)
        linear = torch.stack([m.linear.weight for m in modules])  # (C, 1, D')
        if self.kind != "fm":
            return linear, None
        factors = torch.stack([m.factors for m in modules]).transpose(1, 2)  # (C, K, D')
        return torch.cat([linear, factors], dim=1), factors * factors

    def forward(self, product: torch.Tensor, difference: torch.Tensor, bars: torch.Tensor, words: torch.Tensor
                ) -> torch.Tensor:
        """product, difference, bars: (C, B, L, D), cast-major; words: (B, L, D) -> (B, L, C * 3), cast by cast."""
        casts, batch, length, size = bars.shape
        if self.kind == "sm":
            concatenation = bars.sum(-1) + words.sum(-1)
            found = torch.stack([product.sum(-1), difference.sum(-1), concatenation], dim=-1)
            return found.permute(1, 2, 0, 3).reshape(batch, length, casts * 3)

        def columns(z: torch.Tensor) -> torch.Tensor:  # (..., B, L, D) -> (..., D, B * L), a view
            return z.reshape(*z.shape[:-3], batch * length, z.shape[-1]).transpose(-1, -2)

        def compressed(outputs: torch.Tensor, squares: torch.Tensor | None) -> torch.Tensor:
            """(C, N), less the bias, from the rows [linear; summed factors] and the squares' rows."""
            if squares is None:
                return outputs[:, 0]
            summed = outputs[:, 1:]
            return outputs[:, 0] + 0.5 * (summed * summed - squares).sum(1)

        biases = torch.stack([torch.cat([m.linear.bias for m in self._stacked(k)]) for k in range(3)], dim=1)
        found = []
        for comparison, z in enumerate((product, difference)):
            rows, square_rows = self._rows(comparison)
            found.append(compressed(rows @ columns(z), None if square_rows is None else square_rows @ columns(z * z)))
        rows, square_rows = self._rows(2)
        outputs = rows[..., :size] @ columns(bars) + rows[..., size:] @ columns(words)
        squares = (None if square_rows is None else
                   square_rows[..., :size] @ columns(bars * bars) + square_rows[..., size:] @ columns(words * words))
        found.append(compressed(outputs, squares))
        linear = torch.stack(found, dim=1) + biases[..., None]  # (C, 3, N)
        if self.kind == "nn":
            linear = torch.relu(linear)
        return linear.view(casts, 3, batch, length).permute(2, 3, 0, 1).reshape(batch, length, casts * 3)
