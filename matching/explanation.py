"""The one explanation object that flows from a model's forward pass to every view.

Every number in an `Explanation` is read off the `ForwardTrace` of the very pass
that produced its score: attention, interaction matrices, pooled cells and their
contributions are never recomputed afterwards.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .models import ForwardTrace
from .params import MVLSTMParams
from .text import Token


@dataclass(frozen=True)
class PooledCell:
    """One value chosen by k-max pooling, and what it did to the score."""

    slot: int
    """Position in the MLP input (0-based): matrix index * k + rank - 1."""
    matrix: str
    """Name of the interaction matrix it was pooled from (see `matrix_names`)."""
    rank: int
    """1-based pooling rank within its matrix (1 = largest cell)."""
    value: float
    i: int | None
    """Question position (index into the question tokens); None for a filler."""
    j: int | None
    """Answer position; None for a filler."""
    filler: bool
    """The matrix had fewer than k real cells; this slot holds the fixed filler value."""
    contribution: float
    """Gradient x value of this slot in the MLP (see `blocks.MLPHead.contributions`)."""


@dataclass(frozen=True)
class Explanation:
    """Why one model gave one (question, answer) pair its score."""

    model: str
    score: float
    question_tokens: tuple[Token, ...]
    answer_tokens: tuple[Token, ...]
    question_attention: np.ndarray | None
    """alpha over the question tokens the model saw (sums to 1), or None without attention."""
    answer_attention: np.ndarray | None
    interaction_matrices: dict[str, np.ndarray]
    """The matrices that were pooled, each (seen question tokens, seen answer tokens)."""
    direction_matrices: dict[str, np.ndarray]
    """Cosine of forward-only and backward-only LSTM states, for display; not pooled."""
    pooled_cells: tuple[PooledCell, ...]
    bias_contribution: float
    """score = sum of cell contributions + bias_contribution, exactly."""

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
            "score": self.score,
            "question_tokens": [asdict(t) for t in self.question_tokens],
            "answer_tokens": [asdict(t) for t in self.answer_tokens],
            "question_attention": array(self.question_attention),
            "answer_attention": array(self.answer_attention),
            "interaction_matrices": {k: array(v) for k, v in self.interaction_matrices.items()},
            "direction_matrices": {k: array(v) for k, v in self.direction_matrices.items()},
            "pooled_cells": [asdict(c) for c in self.pooled_cells],
            "bias_contribution": self.bias_contribution,
        }


def matrix_names(params: MVLSTMParams) -> list[str]:
    """Names of the pooled matrices, in MLP-input order."""
    names = ([f"slice {c + 1}" for c in range(params.tensor_slices)] if params.interaction == "tensor"
             else [params.interaction])
    return names + (["forward", "backward"] if params.pool_directions else [])


def explanations_from_trace(trace: ForwardTrace, model: str, params: MVLSTMParams,
                            question_tokens: list[list[Token]], answer_tokens: list[list[Token]]
                            ) -> list[Explanation]:
    """Split a batched trace into one Explanation per pair, trimming the padding."""
    names = matrix_names(params)
    score = trace.score.tolist()
    matrices = trace.matrices.detach().numpy()
    forward, backward = trace.forward_cosine.detach().numpy(), trace.backward_cosine.detach().numpy()
    # Python lists: per-cell reads below would be ~10x slower as numpy scalars.
    values, rows, cols = (t.tolist() for t in (trace.pooled.values, trace.pooled.rows, trace.pooled.cols))
    filler = trace.pooled.filler.tolist()
    contributions = trace.contributions.tolist()
    bias = trace.bias_contribution.tolist()
    q_attention = None if trace.question_attention is None else trace.question_attention.detach().numpy()
    a_attention = None if trace.answer_attention is None else trace.answer_attention.detach().numpy()
    explanations = []
    for b, (q_tokens, a_tokens) in enumerate(zip(question_tokens, answer_tokens, strict=True)):
        m = sum(not t.truncated for t in q_tokens)
        n = sum(not t.truncated for t in a_tokens)
        cells = []
        for c, name in enumerate(names):
            for r in range(params.k):
                is_filler = filler[b][c][r]
                slot = c * params.k + r
                cells.append(PooledCell(
                    slot=slot, matrix=name, rank=r + 1, value=values[b][c][r],
                    i=None if is_filler else rows[b][c][r], j=None if is_filler else cols[b][c][r],
                    filler=is_filler, contribution=contributions[b][slot]))
        explanations.append(Explanation(
            model=model, score=score[b],
            question_tokens=tuple(q_tokens), answer_tokens=tuple(a_tokens),
            question_attention=None if q_attention is None else q_attention[b, :m].copy(),
            answer_attention=None if a_attention is None else a_attention[b, :n].copy(),
            interaction_matrices={name: matrices[b, c, :m, :n].copy() for c, name in enumerate(names)},
            direction_matrices={"forward": forward[b, :m, :n].copy(), "backward": backward[b, :m, :n].copy()},
            pooled_cells=tuple(cells), bias_contribution=bias[b]))
    return explanations
