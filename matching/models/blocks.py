"""Reusable building blocks of MV-LSTM and aMV-LSTM, each masked against padding.

Shapes: B batch, m / n question / answer lengths (padded to the batch maximum),
d word-vector size, h LSTM hidden size per direction, C interaction matrices.
Masks are boolean, True on real tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

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
        self.override_generator: torch.Generator | None = None

    def forward(self, vectors: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = self.v(vectors).squeeze(-1) / self.temperature
        alpha = self.gate(logits, mask)
        if self.override is not None:
            alpha = self.overridden(alpha, mask)
        return vectors * self.weights(alpha, mask)[..., None], alpha, logits.masked_fill(~mask, float("-inf"))

    def weights(self, alpha: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The factor each word vector is multiplied by: alpha, or alpha x length."""
        return alpha * mask.sum(-1, keepdim=True) if self.scaling == "length" else alpha

    def overridden(self, alpha: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.override == "uniform":
            return mask / mask.sum(-1, keepdim=True).clamp_min(1)
        if self.override == "permuted":
            shuffled = torch.zeros_like(alpha)
            for row, length in enumerate(mask.sum(-1).tolist()):
                order = torch.randperm(length, generator=self.override_generator)
                shuffled[row, :length] = alpha[row, :length][order]
            return shuffled
        raise ValueError(f"unknown attention override {self.override!r}")


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
        in_order = bool((order == torch.arange(batch)).all())
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


def cosine_matrix(q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """(B, m, e), (B, n, e) -> (B, m, n) cosine similarities."""
    q_unit = q / q.norm(dim=-1, keepdim=True).clamp_min(COSINE_EPS)
    a_unit = a / a.norm(dim=-1, keepdim=True).clamp_min(COSINE_EPS)
    return q_unit @ a_unit.transpose(1, 2)


class Interaction(nn.Module):
    """Positional interaction (B, m, e) x (B, n, e) -> (B, C, m, n), in two steps: what each side
    brings on its own (`side`, computed once per text when many pairs share it), then the
    matrices where the two meet (`meet`)."""

    def side(self, states: torch.Tensor, side: str) -> torch.Tensor:
        return states

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return self.meet(self.side(q, "question"), self.side(a, "answer"))


class CosineInteraction(Interaction):
    """s_ij = cos(p_i, p_j): one matrix, no parameters. Each side is made unit length first."""

    def side(self, states: torch.Tensor, side: str) -> torch.Tensor:
        return states / states.norm(dim=-1, keepdim=True).clamp_min(COSINE_EPS)

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return (q @ a.transpose(1, 2))[:, None]


class BilinearInteraction(Interaction):
    """s_ij = p_i^T M p_j + b: one matrix. The question side brings p_i^T M."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(size, size))
        self.bias = nn.Parameter(torch.zeros(1))
        nn.init.xavier_uniform_(self.weight)

    def side(self, states: torch.Tensor, side: str) -> torch.Tensor:
        return states @ self.weight if side == "question" else states

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return (q @ a.transpose(1, 2) + self.bias)[:, None]


class TensorInteraction(Interaction):
    """s^c_ij = ReLU(p_i^T M^c p_j + W^c [p_i ; p_j] + b^c): C matrices."""

    def __init__(self, size: int, slices: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(slices, size, size))
        self.linear_q = nn.Linear(size, slices, bias=True)  # W^c split as [W_q ; W_a]
        self.linear_a = nn.Linear(size, slices, bias=False)
        nn.init.xavier_uniform_(self.weight)

    def meet(self, q: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        bilinear = torch.einsum("bmx,cxy,bny->bcmn", q, self.weight, a)
        linear = self.linear_q(q).permute(0, 2, 1)[..., None] + self.linear_a(a).permute(0, 2, 1)[:, :, None]
        return torch.relu(bilinear + linear)


def exact_match_matrix(question_ids: torch.Tensor, answer_ids: torch.Tensor,
                       question_weights: torch.Tensor | None = None,
                       answer_weights: torch.Tensor | None = None) -> torch.Tensor:
    """(B, m), (B, n) lookup-key ids -> (B, m, n): 1 where the two words have the same
    lookup key, else 0; times each side's word weight (IDF, attention) when given."""
    equal = (question_ids[:, :, None] == answer_ids[:, None, :]).float()
    if question_weights is not None:
        equal = equal * question_weights[:, :, None]
    if answer_weights is not None:
        equal = equal * answer_weights[:, None, :]
    return equal


class IdfTable(nn.Module):
    """Inverse document frequency by lookup-key id, kept as buffers in the checkpoint.

    Only the words of the training answers are stored (sorted ids and their IDF,
    divided by the largest possible IDF so values lie in (0, 1]); any other word gets
    `unseen`, the IDF of a word found in no training answer (1 after that division).
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.register_buffer("ids", torch.zeros(size, dtype=torch.int64))
        self.register_buffer("values", torch.zeros(size))
        self.register_buffer("unseen", torch.ones(()))

    @torch.no_grad()
    def fill(self, ids: torch.Tensor, values: torch.Tensor, unseen: float) -> None:
        order = torch.argsort(ids)
        self.ids.copy_(ids[order])
        self.values.copy_(values[order])
        self.unseen.fill_(unseen)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if self.ids.numel() == 0:
            return self.unseen.expand(ids.shape).clone()
        place = torch.searchsorted(self.ids, ids.contiguous()).clamp_max(self.ids.numel() - 1)
        return torch.where(self.ids[place] == ids, self.values[place], self.unseen)


def make_interaction(kind: str, size: int, slices: int) -> Interaction:
    if kind == "cosine":
        return CosineInteraction()
    if kind == "bilinear":
        return BilinearInteraction(size)
    if kind == "tensor":
        return TensorInteraction(size, slices)
    raise ValueError(f"unknown interaction {kind!r}; known: cosine, bilinear, tensor")


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
    row_index = (torch.arange(rows)[None, :] * row_lengths[:, None]) // rows  # (B, rows)
    col_index = (torch.arange(cols)[None, :] * col_lengths[:, None]) // cols  # (B, cols)
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
