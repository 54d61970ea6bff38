"""The one explanation object that flows from a model's forward pass to every view.

Every number in an `Explanation` is read off the `ForwardTrace` of the very pass
that produced its score: attention, matrices, pooled cells, contributions and the
intermediate steps are never recomputed afterwards. It is built the same way for
every model family (`matching.models.base`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple, overload

import numpy as np

from matching.models import ForwardTrace, SideSteps, family_of
from matching.models.params import ModelParams
from matching.text.tokens import Token


class PooledCell(NamedTuple):
    """One value the network pooled from a matrix, and what it did to the score.

    A NamedTuple rather than a frozen dataclass: a MatchPyramid ranking builds tens of thousands
    of these (filters x windows x candidates), and a NamedTuple is built about four times faster.
    """

    slot: int
    """Position in the MLP input (0-based): group index * K + rank - 1."""
    group: str
    """The pooled feature group it belongs to: the matrix itself (MV-LSTM) or a convolution filter."""
    matrix: str
    """Name of the matrix its (i, j) refers to (see `matrix_names`)."""
    rank: int
    """1-based: the pooling rank within its matrix (k-max, 1 = largest) or the window number."""
    value: float
    i: int | None
    """Question position (index into the question tokens); None for a filler."""
    j: int | None
    """Answer position; None for a filler."""
    filler: bool
    """The matrix had fewer than k real cells; this slot holds the fixed filler value."""
    contribution: float
    """Gradient x value of this slot in the MLP (see `blocks.MLPHead.contributions`)."""
    window: tuple[int, int, int, int] | None = None
    """Dynamic pooling: the window [row0, row1) x [col0, col1) this value is the maximum of."""


@dataclass(frozen=True)
class SideValues:
    """One text's intermediate values in the pass (the walkthrough's material), seen tokens only."""

    words: np.ndarray
    """(length, d) the word vectors read; unknown words carry the model's unknown-word vector."""
    gate_logits: np.ndarray | None
    """(length,) V^T w_t, or None without an attention gate."""
    gated_words: np.ndarray
    """(length, d) the vectors after the gate (the same as `words` without one)."""
    states: np.ndarray | None
    """(length, 2h) [forward ; backward] Bi-LSTM states, or None for a family without an LSTM."""


@dataclass(frozen=True)
class Steps:
    question: SideValues
    answer: SideValues
    hidden: np.ndarray
    """(H,) the MLP's hidden pre-activations; the active units are those > 0."""
    features: np.ndarray | None
    """(F, m, n) convolution feature maps before pooling (MatchPyramid), else None."""


@dataclass(frozen=True)
class Explanation:
    """Why one model gave one (question, answer) pair its score."""

    model: str
    family: str
    score: float
    question_tokens: tuple[Token, ...]
    answer_tokens: tuple[Token, ...]
    question_attention: np.ndarray | None
    """alpha over the question tokens the model saw (sums to 1), or None without attention."""
    answer_attention: np.ndarray | None
    interaction_matrices: dict[str, np.ndarray]
    """The matrices the network read, each (seen question tokens, seen answer tokens)."""
    display_matrices: dict[str, np.ndarray]
    """Matrices computed in the same pass for display only (never read by the network)."""
    pooled_cells: tuple[PooledCell, ...]
    bias_contribution: float
    """score = sum of pooled-cell contributions + bias_contribution, exactly."""
    cell_contributions: dict[str, np.ndarray]
    """Per read matrix, (m, n): gradient x value of every cell."""
    cell_bias: float
    """score = sum of all cell contributions + cell_bias, exactly."""
    steps: Steps

    @property
    def seen_question_tokens(self) -> tuple[Token, ...]:
        return tuple(t for t in self.question_tokens if not t.truncated)

    @property
    def seen_answer_tokens(self) -> tuple[Token, ...]:
        return tuple(t for t in self.answer_tokens if not t.truncated)

    @property
    def mlp_input(self) -> np.ndarray:
        """The pooled vector q exactly as the MLP received it."""
        return np.array([c.value for c in sorted(self.pooled_cells, key=lambda c: c.slot)],
                        dtype=np.float32)

    def shares(self) -> np.ndarray:
        """Each cell's contribution as a signed share of all |contributions| (sums of |.| to 1)."""
        contributions = np.array([c.contribution for c in self.pooled_cells], dtype=np.float64)
        total = np.abs(contributions).sum()
        return contributions / total if total > 0 else np.zeros_like(contributions)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (the app's explanation export)."""
        def array(values: np.ndarray | None) -> list[Any] | None:
            return None if values is None else np.asarray(values, dtype=float).round(6).tolist()

        return {
            "model": self.model,
            "family": self.family,
            "score": self.score,
            "question_tokens": [asdict(t) for t in self.question_tokens],
            "answer_tokens": [asdict(t) for t in self.answer_tokens],
            "question_attention": array(self.question_attention),
            "answer_attention": array(self.answer_attention),
            "interaction_matrices": {k: array(v) for k, v in self.interaction_matrices.items()},
            "display_matrices": {k: array(v) for k, v in self.display_matrices.items()},
            "pooled_cells": [c._asdict() for c in self.pooled_cells],
            "bias_contribution": self.bias_contribution,
            "cell_contributions": {k: array(v) for k, v in self.cell_contributions.items()},
            "cell_bias": self.cell_bias,
        }


def matrix_names(params: ModelParams) -> list[str]:
    """Names of the matrices a model reads, in trace order."""
    return family_of(params).matrix_names(params)


def _numpy(values: Any) -> np.ndarray | None:
    return None if values is None else values.detach().numpy()


@dataclass(frozen=True)
class _SideArrays:
    """One side of a batched trace as numpy arrays, (batch, length, ...)."""

    words: np.ndarray
    gate_logits: np.ndarray | None
    gated_words: np.ndarray
    states: np.ndarray | None

    @classmethod
    def of(cls, side: SideSteps) -> _SideArrays:
        return cls(words=_numpy(side.words), gate_logits=_numpy(side.gate_logits),  # type: ignore[arg-type]
                   gated_words=_numpy(side.gated_words), states=_numpy(side.states))  # type: ignore[arg-type]

    def values(self, b: int, length: int) -> SideValues:
        def rows(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[b, :length].copy()

        return SideValues(words=rows(self.words), gate_logits=rows(self.gate_logits),  # type: ignore[arg-type]
                          gated_words=rows(self.gated_words), states=rows(self.states))  # type: ignore[arg-type]


class TracedExplanations(Sequence[Explanation]):
    """The explanations of one batched pass, each cut from the pass's trace when first asked for.

    The trace is read into numpy once; the Explanation of pair b is built from it on first
    access and kept. A page that shows one candidate builds one explanation, not one per
    candidate, and every value still comes from the pass that produced the scores.
    Sharing across threads is safe: building is deterministic, so a race builds the same object twice.
    """

    def __init__(self, trace: ForwardTrace, model: str, params: ModelParams,
                 question_tokens: Sequence[Sequence[Token]], answer_tokens: Sequence[Sequence[Token]]) -> None:
        if len(question_tokens) != len(answer_tokens) or len(answer_tokens) != trace.score.shape[0]:
            raise ValueError("one question and one answer per pair of the trace")
        self.model, self.params = model, params
        self.question_tokens = [tuple(t) for t in question_tokens]
        self.answer_tokens = [tuple(t) for t in answer_tokens]
        self.scores = trace.score.detach().numpy().astype(np.float64)
        self._names, self._groups = trace.matrix_names, trace.pooled_groups
        self._group_matrix = [trace.matrix_names[m] for m in trace.pooled_matrix]
        self._matrices = _numpy(trace.matrices)
        self._cells = _numpy(trace.cell_contributions)
        self._shown = {name: _numpy(values) for name, values in trace.display_matrices.items()}
        pooled = trace.pooled
        self._values, self._rows, self._cols, self._filler = (
            _numpy(t) for t in (pooled.values, pooled.rows, pooled.cols, pooled.filler))
        self._windows = _numpy(trace.windows)
        self._contributions = _numpy(trace.contributions)
        self._bias, self._cell_bias = _numpy(trace.bias_contribution), _numpy(trace.cell_bias)
        self._hidden, self._features = _numpy(trace.hidden), _numpy(trace.features)
        self._attention = (_numpy(trace.question_attention), _numpy(trace.answer_attention))
        self._sides = (_SideArrays.of(trace.question), _SideArrays.of(trace.answer))
        self._built: dict[int, Explanation] = {}

    def __len__(self) -> int:
        return len(self.answer_tokens)

    @overload
    def __getitem__(self, index: int) -> Explanation: ...

    @overload
    def __getitem__(self, index: slice) -> list[Explanation]: ...

    def __getitem__(self, index: int | slice) -> Explanation | list[Explanation]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        b = range(len(self))[index]  # negative indices and IndexError as a list gives them
        built = self._built.get(b)
        if built is None:
            built = self._built[b] = self._explain(b)
        return built

    def _explain(self, b: int) -> Explanation:
        q_tokens, a_tokens = self.question_tokens[b], self.answer_tokens[b]
        m = sum(not t.truncated for t in q_tokens)
        n = sum(not t.truncated for t in a_tokens)
        # Python lists: per-cell reads below would be ~10x slower as numpy scalars.
        values, rows, cols = self._values[b].tolist(), self._rows[b].tolist(), self._cols[b].tolist()
        filler, contributions = self._filler[b].tolist(), self._contributions[b].tolist()
        windows = None if self._windows is None else self._windows[b].tolist()
        count = len(values[0]) if values else 0
        cells = []
        for g, (group, matrix) in enumerate(zip(self._groups, self._group_matrix, strict=True)):
            for r in range(count):
                is_filler = filler[g][r]
                slot = g * count + r
                cells.append(PooledCell(
                    slot=slot, group=group, matrix=matrix, rank=r + 1, value=values[g][r],
                    i=None if is_filler else rows[g][r], j=None if is_filler else cols[g][r],
                    filler=is_filler, contribution=contributions[slot],
                    window=None if windows is None else tuple(windows[r])))
        q_attention, a_attention = self._attention
        return Explanation(
            model=self.model, family=self.params.family, score=float(self.scores[b]),
            question_tokens=q_tokens, answer_tokens=a_tokens,
            question_attention=None if q_attention is None else q_attention[b, :m].copy(),
            answer_attention=None if a_attention is None else a_attention[b, :n].copy(),
            interaction_matrices={name: self._matrices[b, c, :m, :n].copy() for c, name in enumerate(self._names)},
            display_matrices={name: matrix[b, :m, :n].copy() for name, matrix in self._shown.items()},
            pooled_cells=tuple(cells), bias_contribution=float(self._bias[b]),
            cell_contributions={name: self._cells[b, c, :m, :n].copy() for c, name in enumerate(self._names)},
            cell_bias=float(self._cell_bias[b]),
            steps=Steps(question=self._sides[0].values(b, m), answer=self._sides[1].values(b, n),
                        hidden=self._hidden[b].copy(),
                        features=None if self._features is None else self._features[b, :, :m, :n].copy()))
