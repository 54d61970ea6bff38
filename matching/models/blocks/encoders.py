"""The Bi-LSTM encoder: positional vectors [forward ; backward] at every real position."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class BiLSTMEncoder(nn.Module):
    """The shared Bi-LSTM, exact on padded batches without packing.

    The forward direction reads each row left to right, so its states at real positions
    never see the padding that follows them. The backward direction reads each row
    reversed *within its own length* (the real tokens reversed, padding still at the end),
    and its states are put back in place. Both are exactly the states of the sequence
    alone, and cheaper than pack/unpack (the padded steps are few once rows are grouped
    by length). The weights are those of one `nn.LSTM(bidirectional=True)`.

    Returns the positional states p_t = [fwd_t ; bwd_t], (B, L, 2h), zero on padding.
    """

    def __init__(self, dim: int, hidden: int, rows_per_run: int = 64, uniform_rows: int = 16) -> None:
        super().__init__()
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.hidden = hidden
        self.rows_per_run = rows_per_run
        """Larger batches run in groups of this many rows of similar length, each only as wide
        as its longest row (fewer padded steps; the groups cost a little overhead each)."""
        self.uniform_rows = uniform_rows
        """In a larger batch, the rows of one length that are at least this many run together,
        unpadded (one bidirectional pass, no reversal needed)."""

    def _lstm(self, vectors: torch.Tensor, weights: list[torch.Tensor], bidirectional: bool) -> torch.Tensor:
        # torch.lstm is the op nn.LSTM itself calls (without its per-call Python checks, which held
        # the GIL for longer than some runs take); given one direction's weights it runs that one.
        zeros = vectors.new_zeros(2 if bidirectional else 1, vectors.shape[0], self.hidden)
        states, _, _ = torch.lstm(vectors, (zeros, zeros), weights, True, 1, 0.0, self.training, bidirectional,
                                  True)
        return states

    def _run(self, vectors: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        batch, width = vectors.shape[:2]
        if int(lengths.min()) == width:  # no padding at all: both directions in one pass
            return self._lstm(vectors, self.lstm._flat_weights, bidirectional=True)
        positions = torch.arange(width, device=vectors.device)[None, :]
        mask = positions < lengths[:, None]
        # Row-major position of (b, t) -> of (b, length - 1 - t) on real positions, itself on
        # padding; the map is its own inverse, so it also puts the backward states back.
        reverse = torch.where(mask, lengths[:, None] - 1 - positions, positions)
        reverse = (reverse + torch.arange(batch, device=vectors.device)[:, None] * width).flatten()

        def reversed_rows(tensor: torch.Tensor) -> torch.Tensor:
            return tensor.flatten(0, 1).index_select(0, reverse).view_as(tensor)

        weights = self.lstm._flat_weights
        forward = self._lstm(vectors, weights[:4], bidirectional=False)
        backward = reversed_rows(self._lstm(reversed_rows(vectors), weights[4:], bidirectional=False))
        return torch.cat([forward, backward], dim=-1) * mask[..., None].to(forward.dtype)

    def forward(self, vectors: torch.Tensor, lengths: torch.Tensor,
                then: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
        """`then`, when given, maps each position's states on (position by position, zero to zero):
        applied to each run as it comes out, so the states themselves are never kept."""
        batch, width = vectors.shape[:2]
        if batch <= self.rows_per_run:
            states = self._run(vectors, lengths)
            return states if then is None else then(states)
        # Sorted by length, each run is a slice of consecutive rows: read and written in place
        # (views, no gathers), then one gather puts the rows back in their order.
        order = torch.argsort(lengths, stable=True)
        in_order = bool((order == torch.arange(batch, device=order.device)).all())
        if not in_order:
            vectors, lengths = vectors.index_select(0, order), lengths.index_select(0, order)
        states: torch.Tensor | None = None
        for start, stop in self._runs(lengths):
            run_width = int(lengths[stop - 1])
            run = self._run(vectors[start:stop, :run_width], lengths[start:stop])
            run = run if then is None else then(run)
            if states is None:
                states = run.new_empty(batch, width, run.shape[-1])
            states[start:stop, :run_width] = run
            states[start:stop, run_width:] = 0.0
        assert states is not None
        return states if in_order else states.index_select(0, torch.argsort(order))

    def _runs(self, lengths: torch.Tensor) -> list[tuple[int, int]]:
        """[start, stop) of each run over rows sorted by length: each length with at least
        `uniform_rows` rows on its own, the rows of rarer lengths together, `rows_per_run` at most."""
        _, counts = torch.unique_consecutive(lengths, return_counts=True)
        runs: list[tuple[int, int]] = []
        mixed_start = start = 0
        for count in counts.tolist():
            if count >= self.uniform_rows:
                if mixed_start < start:
                    runs.append((mixed_start, start))
                runs.append((start, start + count))
                mixed_start = start + count
            elif start + count - mixed_start > self.rows_per_run and mixed_start < start:
                runs.append((mixed_start, start))
                mixed_start = start
            start += count
        if mixed_start < start:
            runs.append((mixed_start, start))
        return runs
