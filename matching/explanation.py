"""The one explanation object that flows from a model's forward pass to every view.

Every number in an `Explanation` is read off the `ForwardTrace` of the very pass
that produced its score: attention, matrices, pooled cells, contributions and the
intermediate steps are never recomputed afterwards. It is built the same way for
every model family (`matching.models.base`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np

from .models import ForwardTrace, SideSteps, family_of
from .params import ModelParams
from .text import Token


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


def _side_values(side: SideSteps, b: int, length: int) -> SideValues:
    def rows(values: Any) -> np.ndarray | None:
        return None if values is None else values[b, :length].detach().numpy()

    return SideValues(words=rows(side.words), gate_logits=rows(side.gate_logits),  # type: ignore[arg-type]
                      gated_words=rows(side.gated_words), states=rows(side.states))  # type: ignore[arg-type]


def explanations_from_trace(trace: ForwardTrace, model: str, params: ModelParams,
                            question_tokens: list[list[Token]], answer_tokens: list[list[Token]]
                            ) -> list[Explanation]:
    """Split a batched trace into one Explanation per pair, trimming the padding."""
    names, groups = trace.matrix_names, trace.pooled_groups
    score = trace.score.tolist()
    matrices = trace.matrices.detach().numpy()
    cell_contributions = trace.cell_contributions.detach().numpy()
    shown = {name: values.detach().numpy() for name, values in trace.display_matrices.items()}
    # Python lists: per-cell reads below would be ~10x slower as numpy scalars.
    values, rows, cols = (t.tolist() for t in (trace.pooled.values, trace.pooled.rows, trace.pooled.cols))
    filler = trace.pooled.filler.tolist()
    windows = None if trace.windows is None else trace.windows.tolist()
    contributions = trace.contributions.tolist()
    bias, cell_bias = trace.bias_contribution.tolist(), trace.cell_bias.tolist()
    hidden = trace.hidden.detach().numpy()
    features = None if trace.features is None else trace.features.detach().numpy()
    q_attention = None if trace.question_attention is None else trace.question_attention.detach().numpy()
    a_attention = None if trace.answer_attention is None else trace.answer_attention.detach().numpy()
    count = trace.pooled.values.shape[2]
    explanations = []
    for b, (q_tokens, a_tokens) in enumerate(zip(question_tokens, answer_tokens, strict=True)):
        m = sum(not t.truncated for t in q_tokens)
        n = sum(not t.truncated for t in a_tokens)
        cells = []
        for g, group in enumerate(groups):
            matrix = names[trace.pooled_matrix[g]]
            for r in range(count):
                is_filler = filler[b][g][r]
                slot = g * count + r
                cells.append(PooledCell(
                    slot=slot, group=group, matrix=matrix, rank=r + 1, value=values[b][g][r],
                    i=None if is_filler else rows[b][g][r], j=None if is_filler else cols[b][g][r],
                    filler=is_filler, contribution=contributions[b][slot],
                    window=None if windows is None else tuple(windows[b][r])))  # type: ignore[arg-type]
        explanations.append(Explanation(
            model=model, family=params.family, score=score[b],
            question_tokens=tuple(q_tokens), answer_tokens=tuple(a_tokens),
            question_attention=None if q_attention is None else q_attention[b, :m].copy(),
            answer_attention=None if a_attention is None else a_attention[b, :n].copy(),
            interaction_matrices={name: matrices[b, c, :m, :n].copy() for c, name in enumerate(names)},
            display_matrices={name: matrix[b, :m, :n].copy() for name, matrix in shown.items()},
            pooled_cells=tuple(cells), bias_contribution=bias[b],
            cell_contributions={name: cell_contributions[b, c, :m, :n].copy() for c, name in enumerate(names)},
            cell_bias=cell_bias[b],
            steps=Steps(question=_side_values(trace.question, b, m), answer=_side_values(trace.answer, b, n),
                        hidden=hidden[b], features=None if features is None else features[b, :, :m, :n])))
    return explanations
