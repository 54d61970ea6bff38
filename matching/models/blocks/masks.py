"""Masks against padding, the shared unknown-word vector, and reading rows of a batch in place."""

from __future__ import annotations

import torch
from torch import nn

from matching.text.embeddings import plain_ids

COSINE_EPS = 1e-8


def length_mask(lengths: torch.Tensor, max_len: int) -> torch.Tensor:
    """(B,) lengths -> (B, max_len) mask, True on real positions."""
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def consecutive(index: torch.Tensor) -> tuple[int, int] | None:
    """(start, stop) when `index` is start, start + 1, ..., stop - 1, else None."""
    if len(index) == 0:
        return None
    start, stop = int(index[0]), int(index[-1]) + 1
    return (start, stop) if stop - start == len(index) and bool((index.diff() == 1).all()) else None


def take_rows(tensor: torch.Tensor, index: torch.Tensor, span: tuple[int, int] | None,
              width: int | None = None) -> torch.Tensor:
    """tensor[index][:, :width], as a view when the rows are consecutive (`span`, see `consecutive`)."""
    rows = tensor[span[0]:span[1]] if span else tensor.index_select(0, index)
    return rows if width is None else rows[:, :width]


class UnknownWordVector(nn.Module):
    """Puts one shared, learned vector in place of every word GloVe does not know."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.vector = nn.Parameter(torch.zeros(dim))

    def forward(self, vectors: torch.Tensor, unknown: torch.Tensor) -> torch.Tensor:
        return torch.where(unknown[..., None], self.vector.expand_as(vectors), vectors)


def find_sorted(table: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Where each of `ids` sits in the sorted 1-D `table` (clamped to its last place), and whether it is
    there: the lookup of the per-word tables a checkpoint keeps by lookup-key id (IDF, tuned offsets)."""
    place = torch.searchsorted(table, ids.contiguous()).clamp_max(table.numel() - 1)
    return place, table[place] == ids


class TunedWords(nn.Module):
    """Fine-tuned word vectors, kept apart from GloVe: w' = w + offset[word] for the words of the
    training answers (their lookup-key ids a sorted buffer), w itself for every other word.

    The offsets start at zero, so training starts from GloVe; the 400,000-row matrix is never
    copied into a checkpoint, only the offsets of the words training saw.
    """

    def __init__(self, size: int, dim: int) -> None:
        super().__init__()
        self.register_buffer("ids", torch.zeros(size, dtype=torch.int64))
        self.offsets = nn.Parameter(torch.zeros(size, dim))

    @torch.no_grad()
    def fill(self, ids: torch.Tensor) -> None:
        self.ids.copy_(torch.sort(plain_ids(ids)).values)

    def forward(self, vectors: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        if self.ids.numel() == 0:
            return vectors
        place, tuned = find_sorted(self.ids, plain_ids(ids))  # padding ids are below every real id: never tuned
        return vectors + torch.where(tuned[..., None], self.offsets[place], 0.0)
