"""Reading a matching map as an image, as MatchPyramid and ARC-II do, and the exact splits it allows.

A map (B, C, m, n) over (question position, answer position), exactly zero on padding, is read by a
2D convolution with ReLU (padding 'same': the feature at (i, j) is centred on cell (i, j)), dynamic
max pooling keeps the largest value of each window of a fixed grid over the real cells, and an MLP
gives the score. All of it is piecewise linear in the map, so the gradient of the score times the
map splits the score exactly over the map's cells (one bias term for what no cell accounts for), and
the MLP splits it exactly over the pooled values. A family that reads a map this way holds `conv`,
`head` and `dropout` and calls these two functions; its own file builds the map.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch import nn

from matching.models.base import PairBatch
from matching.models.blocks import DynamicPooled, MLPHead, Pooled, dynamic_max_pool
from matching.models.parts import PooledCells


class GridParams(Protocol):
    max_question_len: int
    max_answer_len: int
    kernel_count: int
    pool_rows: int
    pool_cols: int


class MapReader(Protocol):
    params: GridParams  # type: ignore[assignment]
    conv: nn.Conv2d
    head: MLPHead
    dropout: nn.Module


def read_map(model: MapReader, matching: torch.Tensor, batch: PairBatch
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DynamicPooled]:
    """(score, pooled input of the MLP, feature maps, dynamic pooling) from the masked map (B, C, m, n)."""
    params = model.params
    features = torch.relu(model.conv(matching))
    dynamic = dynamic_max_pool(features, batch.question_lengths, batch.answer_lengths,
                               (params.max_question_len, params.max_answer_len), (params.pool_rows, params.pool_cols))
    flat = dynamic.pooled.flat()
    return model.head(model.dropout(flat)), flat, features, dynamic


def traced_read(model: MapReader, matching: torch.Tensor, batch: PairBatch
                ) -> tuple[torch.Tensor, torch.Tensor, PooledCells]:
    """The same pass, from a leaf copy of the map so that its gradient can be read (also under no_grad):
    (score, each cell's contribution gradient x value (B, C, m, n), the pooled cells with their shares)."""
    with torch.inference_mode(False), torch.enable_grad():
        leaf = matching.detach().clone().requires_grad_(True)
        score, flat, features, dynamic = read_map(model, leaf, batch)
        (gradient,) = torch.autograd.grad(score.sum(), leaf)
    score, flat, features = score.detach(), flat.detach(), features.detach()
    contributions, bias = model.head.contributions(flat)
    pooled, filters = dynamic.pooled, model.params.kernel_count
    return score, gradient * matching, PooledCells(
        Pooled(pooled.values.detach(), pooled.rows, pooled.cols, pooled.filler),
        groups=tuple(f"filter {f + 1}" for f in range(filters)), group_matrix=(0,) * filters,
        windows=dynamic.windows, contributions=contributions, bias=bias, hidden=model.head.hidden(flat),
        features=features)
