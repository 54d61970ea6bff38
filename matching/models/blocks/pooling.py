"""Pooling a matrix into a few values that remember where they came from: k-max and dynamic max pooling."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Pooled:
    """k-max pooling output: values and where each came from, per matrix."""

    values: torch.Tensor  # (B, C, k), descending within each matrix
    rows: torch.Tensor  # (B, C, k) question position i (or -1 for filler)
    cols: torch.Tensor  # (B, C, k) answer position j (or -1 for filler)
    filler: torch.Tensor  # (B, C, k) bool

    def flat(self) -> torch.Tensor:
        """The MLP input q: the k values of matrix 1, then of matrix 2, ..."""
        return self.values.flatten(1)


_LOW_32 = (1 << 32) - 1


def _descending_reading_order_keys(flat: torch.Tensor) -> torch.Tensor:
    """One distinct int64 key per cell, ordered as (value descending, then reading order).

    The high 32 bits are the float32 value's bits made order-preserving as an integer
    (negative floats have their magnitude bits flipped; -0.0 is first turned into 0.0 so
    equal values give equal bits); the low 32 bits are (2^32 - 1 - cell index), so among
    equal values the earlier cell has the larger key. A plain `topk` on these keys is then
    the stable descending sort's first k, at a fraction of its cost.
    """
    bits = (flat.float() + 0.0).view(torch.int32)
    ordered = torch.where(bits < 0, bits ^ 0x7FFFFFFF, bits).to(torch.int64)
    cells = torch.arange(flat.shape[-1], device=flat.device)
    return (ordered << 32) | (_LOW_32 - cells)


def kmax_pool(matrices: torch.Tensor, cell_mask: torch.Tensor, k: int, filler_value: float) -> Pooled:
    """The k largest real cells of each (m, n) matrix, with their (i, j).

    Padding cells are set to -inf before pooling, so they can only be reached when a
    matrix has fewer than k real cells; those slots get `filler_value` and a flag.
    Ties are broken by (i, j) in reading order (as a stable sort on the row-major cells
    would), which does not depend on how much padding the batch added.
    """
    width = matrices.shape[-1]
    flat = _real_cells(matrices, cell_mask)
    k_eff = min(k, flat.shape[-1])
    top = torch.topk(_descending_reading_order_keys(flat), k_eff, dim=-1, sorted=True).values
    index = _to_k(_LOW_32 - (top & _LOW_32), k, 0)
    values = _to_k(flat.gather(-1, index[..., :k_eff]), k, float("-inf"))
    filler = torch.isinf(values) & (values < 0)
    values = torch.where(filler, torch.full_like(values, filler_value), values)
    rows = torch.where(filler, -1, index // width)
    cols = torch.where(filler, -1, index % width)
    return Pooled(values, rows, cols, filler)


def kmax_values(matrices: torch.Tensor, cell_mask: torch.Tensor, k: int, filler_value: float) -> torch.Tensor:
    """`kmax_pool(...).values` alone, for scoring: which of several equal cells is taken does not
    change the values, so a plain `topk` of the values does, without the reading-order keys."""
    flat = _real_cells(matrices, cell_mask)
    values = _to_k(torch.topk(flat, min(k, flat.shape[-1]), dim=-1, sorted=True).values, k, float("-inf"))
    return values.masked_fill(torch.isneginf(values), filler_value)


def _real_cells(matrices: torch.Tensor, cell_mask: torch.Tensor) -> torch.Tensor:
    """(B, C, m * n) the cells in reading order, -inf on padding."""
    return matrices.masked_fill(~cell_mask[:, None], float("-inf")).flatten(2)


def _to_k(top: torch.Tensor, k: int, value: float) -> torch.Tensor:
    """Pad the last dimension to k where the whole padded matrix has fewer than k cells."""
    return top if top.shape[-1] == k else torch.nn.functional.pad(top, (0, k - top.shape[-1]), value=value)



@dataclass(frozen=True)
class DynamicPooled:
    """Dynamic max pooling output: one value per window of a fixed grid, and where it came from."""

    pooled: Pooled  # (B, F, K) with K = grid rows x grid cols, never filler
    windows: torch.Tensor  # (B, K, 4) each window's [row0, row1, col0, col1) over the real cells


def dynamic_max_pool(features: torch.Tensor, row_lengths: torch.Tensor, col_lengths: torch.Tensor,
                     stretch: tuple[int, int], grid: tuple[int, int]) -> DynamicPooled:
    """MatchPyramid's dynamic pooling: split the *real* rows and columns of each feature map into a
    fixed grid of windows and keep each window's maximum, whatever the text lengths.

    As in MatchZoo, each map's real part is first stretched to a fixed `stretch` size by repeating
    rows and columns (index r -> floor(r * length / size)), then max-pooled adaptively to `grid`.
    Only real cells are ever read, so padding cannot be pooled and the result does not depend on
    how much padding the batch added. A text shorter than the grid repeats cells across windows.
    """
    batch, count = features.shape[:2]
    (rows, cols), (grid_rows, grid_cols) = stretch, grid
    row_index = (torch.arange(rows, device=features.device)[None, :] * row_lengths[:, None]) // rows  # (B, rows)
    col_index = (torch.arange(cols, device=features.device)[None, :] * col_lengths[:, None]) // cols  # (B, cols)
    stretched = torch.gather(features, 2, row_index[:, None, :, None].expand(batch, count, rows, features.shape[3]))
    stretched = torch.gather(stretched, 3, col_index[:, None, None, :].expand(batch, count, rows, cols))
    values, flat_index = torch.nn.functional.adaptive_max_pool2d(stretched, grid, return_indices=True)
    flat_index = flat_index.flatten(2)  # (B, F, K) into the stretched rows x cols
    i = torch.gather(row_index, 1, (flat_index // cols).flatten(1)).view_as(flat_index)
    j = torch.gather(col_index, 1, (flat_index % cols).flatten(1)).view_as(flat_index)
    # Window bounds of adaptive pooling, mapped back through the stretch to real rows and columns.
    row_starts = [(g * rows) // grid_rows for g in range(grid_rows)]
    row_ends = [-((-(g + 1) * rows) // grid_rows) for g in range(grid_rows)]
    col_starts = [(g * cols) // grid_cols for g in range(grid_cols)]
    col_ends = [-((-(g + 1) * cols) // grid_cols) for g in range(grid_cols)]
    windows = torch.stack([
        torch.stack([row_index[:, row_starts[r]], row_index[:, row_ends[r] - 1] + 1,
                     col_index[:, col_starts[c]], col_index[:, col_ends[c] - 1] + 1], dim=-1)
        for r in range(grid_rows) for c in range(grid_cols)], dim=1)
    pooled = Pooled(values.flatten(2), i, j, torch.zeros_like(i, dtype=torch.bool))
    return DynamicPooled(pooled, windows)
