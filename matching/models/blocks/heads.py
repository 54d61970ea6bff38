"""The MLP head: pooled values in, a score out, and each value's exact share of the score."""

from __future__ import annotations

import torch
from torch import nn


class MLPHead(nn.Module):
    """r = ReLU(W_r q + b_r); s = w_s^T r + b_s."""

    def __init__(self, size: int, hidden: int) -> None:
        super().__init__()
        self.hidden = nn.Linear(size, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(pooled))).squeeze(-1)

    def contributions(self, pooled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Exact split of the score over the pooled slots: gradient x value.

        The head is piecewise linear: with D the 0/1 pattern of active hidden units,
        s = (w_s D W_r) q + (w_s D b_r + b_s). So g = w_s D W_r is the gradient of s
        with respect to q, the slot contributions g * q plus the bias term sum to s
        exactly, and no autograd pass is needed.
        """
        active = (self.hidden(pooled) > 0).to(pooled.dtype)  # (B, H)
        out_weight = self.out.weight[0]  # (H,)
        gradient = (active * out_weight) @ self.hidden.weight  # (B, P)
        bias = (active * out_weight) @ self.hidden.bias + self.out.bias[0]  # (B,)
        return gradient * pooled, bias
