"""Highway layers (Srivastava et al. 2015), as MCAN uses them to project words and to read the pair."""

from __future__ import annotations

import torch
from torch import nn


class Highway(nn.Module):
    """y = H(x) * T(x) + (1 - T(x)) * x, with H = ReLU(W_H x + b_H) and the transform gate
    T = sigmoid(W_T x + b_T). Where the output size differs from the input's, x is first
    projected by a ReLU layer (MCAN, section 2.1.1: "an additional nonlinear transform")."""

    def __init__(self, size_in: int, size_out: int) -> None:
        super().__init__()
        self.project = nn.Linear(size_in, size_out) if size_in != size_out else None
        self.transform = nn.Linear(size_out, size_out)
        self.gate = nn.Linear(size_out, size_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.project is not None:
            x = torch.relu(self.project(x))
        carry = torch.sigmoid(self.gate(x))
        return torch.relu(self.transform(x)) * carry + (1 - carry) * x
