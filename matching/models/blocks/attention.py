"""Word attention: the gate omega (softmax, sparsemax or 1.5-entmax over real tokens) and its entropy."""

from __future__ import annotations

import zlib

import torch
from torch import nn

from matching.models.blocks.masks import length_mask

MASKED_LOGIT = -1e4
"""Stands in for -inf on padding in the sparse gates (their sort-based thresholds need
finite values); logits are shifted so the largest real one is 0 first, so padding sorts
last and never enters the support."""


def sparsemax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Sparsemax (Martins & Astudillo 2016) over the real tokens of each row.

    The Euclidean projection of the logits onto the simplex: p = max(z - tau, 0),
    with tau chosen so the weights sum to 1; low-scoring words get exactly 0.
    """
    z = _shifted(logits, mask)
    sorted_z, _ = torch.sort(z, dim=-1, descending=True)
    ranks = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    cumulative = sorted_z.cumsum(-1)
    support = ((1 + ranks * sorted_z > cumulative) & _sorted_mask(mask)).sum(-1, keepdim=True)
    tau = (cumulative.gather(-1, support - 1) - 1) / support.to(z.dtype)
    return torch.clamp(z - tau, min=0) * mask


def entmax15(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """1.5-entmax (Peters, Niculae & Martins 2019), exact sort-based threshold.

    p = max(z/2 - tau, 0)^2 with tau such that the weights sum to 1: between softmax
    (dense) and sparsemax (sparser), still exactly 0 for low-scoring words.
    """
    z = _shifted(logits, mask) / 2
    sorted_z, _ = torch.sort(z, dim=-1, descending=True)
    ranks = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    mean = sorted_z.cumsum(-1) / ranks
    mean_square = (sorted_z ** 2).cumsum(-1) / ranks
    delta = (1 - ranks * (mean_square - mean ** 2)) / ranks
    tau = mean - torch.sqrt(torch.clamp(delta, min=0))
    support = ((tau <= sorted_z) & _sorted_mask(mask)).sum(-1, keepdim=True)
    tau_star = tau.gather(-1, support - 1)
    return torch.clamp(z - tau_star, min=0) ** 2 * mask


def _shifted(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Largest real logit moved to 0 (both sparse maps are shift-invariant), padding far below."""
    top = logits.masked_fill(~mask, float("-inf")).amax(-1, keepdim=True).detach()
    return (logits - top).masked_fill(~mask, MASKED_LOGIT)


def _sorted_mask(mask: torch.Tensor) -> torch.Tensor:
    """After a descending sort the real tokens come first: True on the first `length` places."""
    return length_mask(mask.sum(-1), mask.shape[-1])


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    alpha = torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=-1)
    # A row with no real token would be all NaN; such rows are refused upstream,
    # this keeps padding exactly zero regardless.
    return torch.nan_to_num(alpha, nan=0.0) * mask


GATES = {"softmax": masked_softmax, "sparsemax": sparsemax, "entmax15": entmax15}
"""The attention maps a gate can use: the paper's softmax and two sparse ones."""


def normalised_entropy(alpha: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """H(alpha) / log(n) per row, over the n real tokens (0 for one-word rows); 1 is uniform."""
    entropy = -(alpha * torch.log(alpha.clamp_min(1e-12))).masked_fill(~mask, 0.0).sum(-1)
    count = mask.sum(-1).to(alpha.dtype)
    return torch.where(count > 1, entropy / torch.log(count.clamp_min(2)), torch.zeros_like(entropy))


class AttentionGate(nn.Module):
    """aMV-LSTM word attention: alpha_t = gate_t(V^T w_t / T) over real tokens only.

    `gate` is `softmax` (the paper), `sparsemax` or `entmax15`; T the temperature.
    Returns the reweighted vectors w'_t = alpha_t * w_t (scaling `none`, the paper)
    or alpha_t * m * w_t (scaling `length`, so the mean weight is 1), alpha, and the
    logits V^T w_t / T (-inf on padding) that the gate read.
    `override` replaces alpha at inference for the attention studies: `uniform`
    (1/n on every real token) or `permuted` (alpha shuffled among the real tokens
    with the seeded `override_generator`).
    """

    def __init__(self, dim: int, scaling: str, gate: str = "softmax", temperature: float = 1.0,
                 init: str = "default") -> None:
        super().__init__()
        self.v = nn.Linear(dim, 1, bias=False)  # a bias would cancel in the gate (shift-invariant)
        if init == "zero":
            nn.init.zeros_(self.v.weight)  # uniform attention at the start; the data has to earn the peaks
        self.scaling = scaling
        self.gate = GATES[gate]
        self.temperature = temperature
        self.override: str | None = None
        self.override_seed = 0
        """The seed of the 'permuted' override (see `shuffled_positions`)."""

    def forward(self, vectors: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = self.v(vectors).squeeze(-1) / self.temperature
        alpha = self.gate(logits, mask)
        if self.override is not None:
            alpha = self.overridden(alpha, mask, vectors)
        return vectors * self.weights(alpha, mask)[..., None], alpha, logits.masked_fill(~mask, float("-inf"))

    def weights(self, alpha: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The factor each word vector is multiplied by: alpha, or alpha x length."""
        return alpha * mask.sum(-1, keepdim=True) if self.scaling == "length" else alpha

    def overridden(self, alpha: torch.Tensor, mask: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
        """Uniform weights over the real words, or each text's own weights shuffled over them."""
        if self.override == "uniform":
            return mask / mask.sum(-1, keepdim=True).clamp_min(1)
        if self.override == "permuted":
            shuffled = torch.zeros_like(alpha)
            for row, length in enumerate(mask.sum(-1).tolist()):
                shuffled[row, :length] = alpha[row, :length][shuffled_positions(vectors[row, :length],
                                                                                self.override_seed)]
            return shuffled
        raise ValueError(f"unknown attention override {self.override!r}")


def shuffled_positions(words: torch.Tensor, seed: int) -> torch.Tensor:
    """A permutation of a text's positions (L,) drawn from `seed` and the text's own word vectors
    (L, d): the same for the same text and seed, whatever else is scored and in whatever order.
    (One random stream shared by the texts gave another shuffle on every run, since scoring runs
    blocks of texts on several threads in no fixed order.)"""
    digest = zlib.crc32(words.detach().cpu().contiguous().numpy().tobytes())
    return torch.randperm(words.shape[0], generator=torch.Generator().manual_seed(seed * 2**32 + digest)
                          ).to(words.device)
