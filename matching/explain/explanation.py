"""The one explanation object that flows from a model's forward pass to every view.

Every number in an `Explanation` is read off the `ForwardTrace` of the very pass
that produced its score: attention, matrices, pooled cells, contributions and the
intermediate steps are never recomputed afterwards. It is built the same way for
every model family (`matching.models.base`).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, overload

import numpy as np

from matching.explain.display import box_html, heading_html, shaded_html, table_html, text_of
from matching.models import ForwardTrace, SideSteps, family_of
from matching.models.blocks.keywords import ALL_KEYWORD_FEATURES
from matching.models.params import ModelParams
from matching.models.parts import Descriptor, Part
from matching.text.tokens import Token

GATE = "attention gate"
"""The name the attention gate omega goes by among an explanation's word weights."""


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


class PooledCellTable(Sequence[PooledCell]):
    """One candidate's pooled cells, kept as the trace's arrays; each `PooledCell` is built when first read.

    A MatchPyramid or ARC-II candidate has 480 pooled cells (filters x windows): building them all for
    every candidate of every model took most of a ranking's time, while a page reads the cells of the
    one candidate it shows. Reads as the tuple of cells it stands for (equal to it, too).
    """

    EMPTY: PooledCellTable

    def __init__(self, groups: Sequence[str], group_matrix: Sequence[str], values: np.ndarray, rows: np.ndarray,
                 cols: np.ndarray, filler: np.ndarray, contributions: np.ndarray, windows: np.ndarray | None) -> None:
        self._groups, self._group_matrix = tuple(groups), tuple(group_matrix)
        self._values, self._rows, self._cols, self._filler = values, rows, cols, filler  # (groups, K) each
        self.contributions = contributions
        """(groups x K,) float: each slot's contribution, in slot order (the cells' `contribution`)."""
        self._windows = windows  # (K, 4) or None
        self._cells: tuple[PooledCell, ...] | None = None

    @property
    def values(self) -> np.ndarray:
        """(groups x K,) float: each slot's value, in slot order, as the MLP received them."""
        return self._values.reshape(-1)

    def _built(self) -> tuple[PooledCell, ...]:
        if self._cells is None:
            # Python lists: per-cell reads below would be ~10x slower as numpy scalars.
            values, rows, cols = self._values.tolist(), self._rows.tolist(), self._cols.tolist()
            filler, contributions = self._filler.tolist(), self.contributions.tolist()
            windows = None if self._windows is None else self._windows.tolist()
            count = len(values[0]) if values else 0
            self._cells = tuple(
                PooledCell(slot=g * count + r, group=group, matrix=matrix, rank=r + 1, value=values[g][r],
                           i=None if filler[g][r] else rows[g][r], j=None if filler[g][r] else cols[g][r],
                           filler=filler[g][r], contribution=contributions[g * count + r],
                           window=None if windows is None else tuple(windows[r]))
                for g, (group, matrix) in enumerate(zip(self._groups, self._group_matrix, strict=True))
                for r in range(count))
        return self._cells

    def __len__(self) -> int:
        return int(self._values.size)

    @overload
    def __getitem__(self, index: int) -> PooledCell: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[PooledCell, ...]: ...

    def __getitem__(self, index: int | slice) -> PooledCell | tuple[PooledCell, ...]:
        return self._built()[index]

    def __iter__(self) -> Iterator[PooledCell]:
        return iter(self._built())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PooledCellTable | tuple | list):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PooledCellTable({len(self)} cells)"


_NONE = np.zeros((0, 0), np.int64)
PooledCellTable.EMPTY = PooledCellTable((), (), np.zeros((0, 0)), _NONE, _NONE, np.zeros((0, 0), bool), np.zeros(0),
                                        None)


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
    hidden: np.ndarray | None
    """(H,) the hidden pre-activations of the MLP over the pooled cells (active units > 0); None
    without pooled cells."""
    features: np.ndarray | None
    """(F, m, n) convolution feature maps before pooling, where a family has them, else None."""
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    """Named vectors of the pair on the way to the score (sentence vectors, highway layers)."""


@dataclass(frozen=True)
class ChannelValues:
    """Named per-word feature channels (seen tokens only): (m, F) and (n, F) in `names` order."""

    names: tuple[str, ...]
    question: np.ndarray
    answer: np.ndarray


@dataclass(frozen=True)
class ScoreSplit:
    """A score and its named terms (sum == score exactly; empty without): the learned match and the keyword
    term apart, as the Rank page shows them."""

    score: float
    terms: Mapping[str, float]

    @property
    def keyword_terms(self) -> dict[str, float]:
        return {name: value for name, value in self.terms.items() if name in ALL_KEYWORD_FEATURES}

    @property
    def keyword_score(self) -> float:
        return float(sum(self.keyword_terms.values()))

    @property
    def learned_score(self) -> float:
        return float(sum(v for name, v in self.terms.items() if name not in ALL_KEYWORD_FEATURES)) if self.terms \
            else self.score


@dataclass(frozen=True)
class Explanation:
    """Why one model gave one (question, answer) pair its score, read off the forward pass that gave it.

    `score`, and its exact splits: `terms` (named terms that sum to it), the pooled cells (`pooled_cells`, each with
    its `value` and `contribution`, plus `bias_contribution`; `matching.cells(explanation)` as a table with the
    words), every cell of the matrices read (`cell_contributions` plus `cell_bias`), and, with a keyword term,
    `learned_score` + `keyword_score`. The words as the model saw them (`question_tokens`, `answer_tokens`, each
    with `unknown` and `truncated`), the attention gate (`question_attention`, `answer_attention`) and other word
    weightings (`word_weights`), and the matrices (`interaction_matrices`, `display_matrices`). `to_dict()` gives
    it all as plain data; `parts` says which of these the family has."""

    model: str
    family: str
    score: float
    question_tokens: tuple[Token, ...]
    answer_tokens: tuple[Token, ...]
    question_attention: np.ndarray | None
    """alpha over the question tokens the model saw (sums to 1), or None without attention."""
    answer_attention: np.ndarray | None
    interaction_matrices: dict[str, np.ndarray]
    """The matrices the network read, each (seen question tokens, seen answer tokens); empty without."""
    display_matrices: dict[str, np.ndarray]
    """Matrices computed in the same pass for display only (never read by the network)."""
    pooled_cells: PooledCellTable
    """Empty for a family without pooled cells (read as a tuple of cells)."""
    bias_contribution: float | None
    """score = sum of pooled-cell contributions + bias_contribution (+ the keyword term, `keyword_score`, where the
    model has one), exactly (None without pooled cells)."""
    cell_contributions: dict[str, np.ndarray]
    """Per read matrix, (m, n): gradient x value of every cell; empty where the score does not split over cells."""
    cell_bias: float | None
    """score = sum of all cell contributions + cell_bias (+ `keyword_score`), exactly (None without cell
    contributions)."""
    steps: Steps
    parts: frozenset[Part] = frozenset()
    """The parts of the trace this explanation carries (`models.parts.Part`)."""
    word_weights: dict[str, tuple[np.ndarray | None, np.ndarray | None]] = field(default_factory=dict)
    """Named (question, answer) word weights besides the attention gate (e.g. co-attention); None for
    a side a mechanism does not weigh."""
    channels: ChannelValues | None = None
    terms: dict[str, float] = field(default_factory=dict)
    """The score split into named terms (sum == score exactly); empty without."""
    matrix_products: dict[str, tuple[np.ndarray, np.ndarray, bool]] = field(default_factory=dict)
    """Per matrix that is a plain product of traced vectors: (question vectors (m, D), answer vectors
    (n, D), is a cosine)."""

    @property
    def keyword_terms(self) -> dict[str, float]:
        """What each keyword feature adds to the score (w_k x_k; `blocks.keywords`), empty without a keyword term."""
        return ScoreSplit(self.score, self.terms).keyword_terms

    @property
    def keyword_score(self) -> float:
        """The keyword term's share of the score (0 without one): score = learned match + this, exactly."""
        return ScoreSplit(self.score, self.terms).keyword_score

    @property
    def learned_score(self) -> float:
        """The score less the keyword term: what the family's own network gave, read off the trace."""
        return ScoreSplit(self.score, self.terms).learned_score

    def has(self, *parts: Part) -> bool:
        """True when this explanation carries every part named."""
        return all(part in self.parts for part in parts)

    @property
    def descriptor(self) -> Descriptor:
        return family_of(self.family).descriptor

    @property
    def all_word_weights(self) -> dict[str, tuple[np.ndarray | None, np.ndarray | None]]:
        """Every named word weighting, the attention gate first (as "attention gate") where there is one."""
        gate = ({GATE: (self.question_attention, self.answer_attention)}
                if self.question_attention is not None or self.answer_attention is not None else {})
        return {**gate, **self.word_weights}

    @property
    def seen_question_tokens(self) -> tuple[Token, ...]:
        return tuple(t for t in self.question_tokens if not t.truncated)

    @property
    def seen_answer_tokens(self) -> tuple[Token, ...]:
        return tuple(t for t in self.answer_tokens if not t.truncated)

    @property
    def mlp_input(self) -> np.ndarray:
        """The pooled vector q exactly as the MLP received it."""
        return self.pooled_cells.values.astype(np.float32)

    def shares(self) -> np.ndarray:
        """Each cell's contribution as a signed share of all |contributions| (sums of |.| to 1)."""
        contributions = self.pooled_cells.contributions.astype(np.float64)
        total = np.abs(contributions).sum()
        return contributions / total if total > 0 else np.zeros_like(contributions)

    def __repr__(self) -> str:  # the arrays are for the views and to_dict(); a plain print() shows the score's split
        split = (f" = learned match {self.learned_score:+.4f} + keywords {self.keyword_score:+.4f}"
                 if self.keyword_terms else "")
        answer = " ".join(token.text for token in self.answer_tokens)
        answer = answer if len(answer) <= 50 else answer[:47] + "..."
        return (f"Explanation({self.model!r} ({self.family}), answer {answer!r}: score {self.score:+.4f}{split}; "
                f"{len(self.pooled_cells)} pooled cells, parts {sorted(part.value for part in self.parts)})")

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the score, the word weights as shaded words and the largest
        contributions (`explanation_html`)."""
        return explanation_html(self)

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
            "parts": sorted(str(part) for part in self.parts),
            "word_weights": {k: [array(q), array(a)] for k, (q, a) in self.word_weights.items()},
            "channels": None if self.channels is None else {
                "names": list(self.channels.names), "question": array(self.channels.question),
                "answer": array(self.channels.answer)},
            "terms": self.terms,
        }


LARGEST_SHOWN = 8
"""Rows of the largest cells in an explanation's rich display; the object holds all of them."""


def _largest_cells(explanation: Explanation, count: int) -> list[dict[str, Any]]:
    """The `count` matrix cells with the largest |contribution| to the score, largest first."""
    q, a = explanation.question_tokens, explanation.answer_tokens
    if explanation.pooled_cells:
        cells = sorted((c for c in explanation.pooled_cells if not c.filler), key=lambda c: -abs(c.contribution))
        return [{"pooled from": c.group, "pooling rank": c.rank, "question word": q[c.i].text,  # type: ignore[index]
                 "answer word": a[c.j].text, "value": c.value, "contribution": c.contribution}  # type: ignore[index]
                for c in cells[:count]]
    rows = []
    for name, contributions in explanation.cell_contributions.items():
        for i, j in zip(*np.nonzero(contributions), strict=True):
            rows.append({"matrix": name, "question word": q[int(i)].text, "answer word": a[int(j)].text,
                         "value": float(explanation.interaction_matrices[name][i, j]),
                         "contribution": float(contributions[i, j])})
    return sorted(rows, key=lambda r: -abs(r["contribution"]))[:count]


def explanation_html(explanation: Explanation, count: int = LARGEST_SHOWN) -> str:
    """One pair's explanation: its score, its word weights as shaded words, and what the score is made of."""
    import pandas as pd

    question, answer = explanation.question_tokens, explanation.answer_tokens
    parts = [f"<div style='font-size:1.1rem'><b>{html.escape(explanation.model)}</b> scores this pair "
             f"<b>{explanation.score:+.4f}</b></div>"]
    weighted = {name: sides for name, sides in explanation.all_word_weights.items()
                if sides[0] is not None or sides[1] is not None}
    for name, (on_question, on_answer) in weighted.items():  # a side the mechanism does not weigh: plain
        parts.append(heading_html(f"Word weights: {name}"))
        parts.append(shaded_html(text_of(question), question, on_question, "Q"))
        parts.append(shaded_html(text_of(answer), answer, on_answer, "A"))
    if not weighted:
        parts.append(heading_html("This model weighs no words; the pair as it read it"))
        parts.append(shaded_html(text_of(question), question, None, "Q"))
        parts.append(shaded_html(text_of(answer), answer, None, "A"))
    if explanation.terms:
        parts.append(heading_html("The score, term by term (the terms add up to the score)"))
        parts.append(table_html(pd.DataFrame([{"term": k, "value": v} for k, v in explanation.terms.items()])))
    cells = _largest_cells(explanation, count)
    if cells:
        bias = (explanation.bias_contribution if explanation.pooled_cells else explanation.cell_bias)
        keywords = f" + keywords {explanation.keyword_score:+.4f}" if explanation.keyword_terms else ""
        split = "" if bias is None else f" (score = all cells' contributions{keywords} + bias {bias:+.4f}, exactly)"
        parts.append(heading_html(f"The {len(cells)} cells with the largest contributions{split}"))
        parts.append(table_html(pd.DataFrame(cells)))
    return box_html(*parts)


def matrix_names(params: ModelParams) -> list[str]:
    """Names of the matrices a model reads, in trace order."""
    return family_of(params).matrix_names(params)


def _numpy(values: Any) -> np.ndarray | None:
    return None if values is None else values.detach().cpu().numpy()


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
                 question_tokens: Sequence[Sequence[Token]], answer_tokens: Sequence[Sequence[Token]],
                 rows: Sequence[int] | None = None) -> None:
        """`rows[b]`: the row of the pass that pair b is (pairs the model reads alike share one); b's own by default."""
        rows = range(trace.score.shape[0]) if rows is None else rows
        if len(question_tokens) != len(answer_tokens) or len(answer_tokens) != len(rows) or not all(
                0 <= row < trace.score.shape[0] for row in rows):
            raise ValueError("one question and one answer per pair, each of a row of the trace")
        self.model, self.params = model, params
        self.question_tokens = [tuple(t) for t in question_tokens]
        self.answer_tokens = [tuple(t) for t in answer_tokens]
        self._row_of = list(rows)
        self.scores = trace.score.detach().cpu().numpy().astype(np.float64)[self._row_of]
        self._parts = trace.parts
        matrices, pooled = trace.matrices, trace.pooled
        self._names = () if matrices is None else matrices.names
        self._matrices = None if matrices is None else _numpy(matrices.read)
        self._cells = None if matrices is None else _numpy(matrices.cell_contributions)
        self._cell_bias = None if matrices is None else _numpy(matrices.cell_bias)
        self._shown = {} if matrices is None else {name: _numpy(values) for name, values in matrices.shown.items()}
        self._groups = () if pooled is None else pooled.groups
        self._group_matrix = [] if pooled is None else [self._names[m] for m in pooled.group_matrix]
        self._values = self._rows = self._cols = self._filler = None
        if pooled is not None:
            self._values, self._rows, self._cols, self._filler = (
                _numpy(t) for t in (pooled.pooled.values, pooled.pooled.rows, pooled.pooled.cols,
                                    pooled.pooled.filler))
        self._windows = None if pooled is None else _numpy(pooled.windows)
        self._contributions = None if pooled is None else _numpy(pooled.contributions)
        self._bias = None if pooled is None else _numpy(pooled.bias)
        self._hidden = None if pooled is None else _numpy(pooled.hidden)
        self._features = None if pooled is None else _numpy(pooled.features)
        self._attention = (_numpy(trace.question_attention), _numpy(trace.answer_attention))
        self._weights = {name: (_numpy(w.question), _numpy(w.answer)) for name, w in trace.weights.items()}
        channels = trace.channels
        self._channels = None if channels is None else (channels.names, _numpy(channels.question),
                                                        _numpy(channels.answer))
        self._terms = None if trace.terms is None else (trace.terms.names, _numpy(trace.terms.values))
        self._vectors = {name: _numpy(values) for name, values in trace.vectors.items()}
        self._products = {} if matrices is None else {
            name: (_numpy(p.question), _numpy(p.answer), p.cosine) for name, p in matrices.products.items()}
        self._sides = (_SideArrays.of(trace.question), _SideArrays.of(trace.answer))
        self._built: dict[int, Explanation] = {}

    def __len__(self) -> int:
        return len(self.answer_tokens)

    @property
    def nbytes(self) -> int:
        """The bytes of the pass's arrays (an upper bound: an array that is a view of another counts again);
        the explanations built from them add copies of one candidate's rows each."""
        arrays = [self.scores, self._matrices, self._cells, self._cell_bias, *self._shown.values(), self._values,
                  self._rows, self._cols, self._filler, self._windows, self._contributions, self._bias, self._hidden,
                  self._features, *self._attention, *(a for pair in self._weights.values() for a in pair),
                  *(self._channels[1:] if self._channels else ()), self._terms[1] if self._terms else None,
                  *self._vectors.values(), *(a for q, a, _ in self._products.values() for a in (q, a)),
                  *(getattr(side, name) for side in self._sides for name in ("words", "gate_logits", "gated_words",
                                                                             "states"))]
        return sum(a.nbytes for a in arrays if a is not None)

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

    def score_split(self, b: int) -> ScoreSplit:
        """Pair b's score and its terms, read off the pass without building its explanation."""
        b = range(len(self))[b]
        row = self._row_of[b]
        terms = {} if self._terms is None else dict(zip(self._terms[0], self._terms[1][row].tolist(), strict=True))
        return ScoreSplit(float(self.scores[b]), terms)

    def _explain(self, pair: int) -> Explanation:
        q_tokens, a_tokens = self.question_tokens[pair], self.answer_tokens[pair]
        m = sum(not t.truncated for t in q_tokens)
        n = sum(not t.truncated for t in a_tokens)
        b = self._row_of[pair]  # the pass's row: every array below is read there
        cells = self._pooled_cells(b)

        def side(values: np.ndarray | None, length: int) -> np.ndarray | None:
            return None if values is None else values[b, :length].copy()

        q_attention, a_attention = self._attention
        channels = None if self._channels is None else ChannelValues(
            self._channels[0], self._channels[1][b, :m].copy(), self._channels[2][b, :n].copy())
        split = self.score_split(pair)
        return Explanation(
            model=self.model, family=self.params.family, score=split.score,
            question_tokens=q_tokens, answer_tokens=a_tokens,
            question_attention=side(q_attention, m), answer_attention=side(a_attention, n),
            interaction_matrices=({} if self._matrices is None else
                                  {name: self._matrices[b, c, :m, :n].copy() for c, name in enumerate(self._names)}),
            display_matrices={name: matrix[b, :m, :n].copy() for name, matrix in self._shown.items()},
            pooled_cells=cells, bias_contribution=None if self._bias is None else float(self._bias[b]),
            cell_contributions=({} if self._cells is None else
                                {name: self._cells[b, c, :m, :n].copy() for c, name in enumerate(self._names)}),
            cell_bias=None if self._cell_bias is None else float(self._cell_bias[b]),
            steps=Steps(question=self._sides[0].values(b, m), answer=self._sides[1].values(b, n),
                        hidden=None if self._hidden is None else self._hidden[b].copy(),
                        features=None if self._features is None else self._features[b, :, :m, :n].copy(),
                        vectors={name: values[b].copy() for name, values in self._vectors.items()}),
            parts=self._parts,
            word_weights={name: (side(q, m), side(a, n)) for name, (q, a) in self._weights.items()},
            channels=channels, terms=dict(split.terms),
            matrix_products={name: (q[b, :m].copy(), a[b, :n].copy(), cosine)  # type: ignore[index]
                             for name, (q, a, cosine) in self._products.items()})

    def _pooled_cells(self, b: int) -> PooledCellTable:
        if self._values is None:
            return PooledCellTable.EMPTY
        assert self._rows is not None and self._cols is not None and self._filler is not None
        assert self._contributions is not None
        return PooledCellTable(self._groups, self._group_matrix, self._values[b].copy(), self._rows[b].copy(),
                               self._cols[b].copy(), self._filler[b].copy(), self._contributions[b].copy(),
                               None if self._windows is None else self._windows[b].copy())
