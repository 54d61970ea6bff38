"""The walkthrough: how one model turned one (question, answer) pair into its score, step by step.

Every number here is read off the `Explanation` of the forward pass that produced the score
(word vectors, gate logits, attention, LSTM states, matrices, pooled cells, the MLP's hidden
pre-activations, contributions). The only arithmetic done here is the arithmetic a teacher
shows on the board, on those traced numbers: the dot product and the lengths of one cosine
cell, and the running total of a waterfall. Tests check that each of them gives back the
traced value (to 1e-5).

The steps are the family's own (its `Descriptor.steps`), each drawn by a generic view that
reads one part of the explanation; a step whose part a model lacks is left out for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from matching.explain.explanation import Explanation, PooledCell, SideValues
from matching.explain.trust import is_word
from matching.models.base import KEYWORD_VALUES, KEYWORD_WEIGHTS, SCORE_BIAS, SCORE_TERMS
from matching.models.blocks.keywords import ALL_KEYWORD_FEATURES
from matching.models.parts import TERMS_STEP, VIEW_NEEDS, Part, Step, View
from matching.text.tokens import Token

WATERFALL_BARS = 15
"""Cells drawn one by one in the waterfall; the rest are summed into one bar."""


def applies(explanation: Explanation, step: Step) -> bool:
    """Whether this explanation has what the step's view reads (the gate step needs a gate, not just any weights)."""
    if step.view == View.GATE:
        return explanation.question_attention is not None or explanation.answer_attention is not None
    needed = VIEW_NEEDS[step.view]
    return needed is None or explanation.has(needed)


def steps_for(explanation: Explanation) -> tuple[Step, ...]:
    """This model's walkthrough: its family's steps, less those whose part this model lacks, with the
    score terms (a keyword term beside the learned match) just before the rank where the model has them."""
    steps = [step for step in explanation.descriptor.steps if applies(explanation, step)]
    if explanation.has(Part.TERMS) and all(step.view != View.TERMS for step in steps):
        steps.insert(len(steps) - 1 if steps and steps[-1].view == View.RANK else len(steps), TERMS_STEP)
    return tuple(steps)


def term_rows(explanation: Explanation) -> list[dict[str, Any]]:
    """The score's terms, each with its feature value and weight where it is a keyword feature (term = w x);
    they add up to the score. A model without keyword features has no such columns (DUET's local and
    distributed terms are not a weight times a feature)."""
    features = explanation.steps.vectors.get(KEYWORD_VALUES)
    weights = explanation.steps.vectors.get(KEYWORD_WEIGHTS)
    keyword = features is not None and weights is not None
    keyword_names = [name for name in explanation.terms if name in ALL_KEYWORD_FEATURES]
    rows = []
    for name, value in explanation.terms.items():
        row: dict[str, Any] = {"term": name, "value": value}
        if keyword:
            row["feature x"] = row["weight w"] = None
        if name in ALL_KEYWORD_FEATURES and keyword:
            k = keyword_names.index(name)  # the model's own features, in its order
            row["feature x"], row["weight w"] = float(features[k]), float(weights[k])
        rows.append(row)
    return rows


def terms_waterfall(explanation: Explanation) -> list[dict[str, Any]]:
    """Bars from 0 to the score, one per term."""
    bars, total = [], 0.0
    for name, amount in explanation.terms.items():
        bars.append({"part": name, "start": total, "end": total + amount, "amount": amount})
        total += amount
    return bars


def step_index(step: int, explanation: Explanation) -> int:
    """A step number from a link or a click, clamped to the steps this model's walkthrough has."""
    return min(max(int(step), 0), len(steps_for(explanation)) - 1)


# ---------------------------------------------------------------- steps 1-2: words and vectors

def pair_vector_names(explanation: Explanation, shows: tuple[str, ...] = ()) -> list[str]:
    """The pair vectors a step draws, one strip each (`shows`, or all), in order; the score bias is a
    number, said beside the strips (`score_layer`), not drawn."""
    found = explanation.steps.vectors
    return [name for name in (shows or tuple(found)) if name in found and name != SCORE_BIAS]


def score_layer(explanation: Explanation) -> tuple[float, float] | None:
    """(sum of the score layer's traced terms w_i h_i, its bias) where the family traces them; the two
    add up to the learned match."""
    found = explanation.steps.vectors
    if SCORE_TERMS not in found or SCORE_BIAS not in found:
        return None
    return float(found[SCORE_TERMS].sum()), float(found[SCORE_BIAS][0])


def side_tokens(explanation: Explanation, side: str) -> tuple[Token, ...]:
    return explanation.question_tokens if side == "question" else explanation.answer_tokens


def side_values(explanation: Explanation, side: str) -> SideValues:
    return explanation.steps.question if side == "question" else explanation.steps.answer


def word_rows(explanation: Explanation, side: str) -> list[dict[str, Any]]:
    """One row per token: position, the word, its characters in the text, and how the model saw it."""
    return [{"position": index + 1, "word": token.text, "characters": f"{token.start}-{token.end}",
             "seen": "no (past the maximum length)" if token.truncated else "yes",
             "vector": "unknown-word vector" if token.unknown else "GloVe"}
            for index, token in enumerate(side_tokens(explanation, side))]


def vector_labels(explanation: Explanation, side: str) -> list[str]:
    """'3. word' for each seen token, '(unknown)' appended for unknown words."""
    seen = [t for t in side_tokens(explanation, side) if not t.truncated]
    return [f"{i + 1}. {t.text}" + (" (unknown)" if t.unknown else "") for i, t in enumerate(seen)]


def unknown_share(explanation: Explanation, side: str) -> float:
    seen = [t for t in side_tokens(explanation, side) if not t.truncated]
    return sum(t.unknown for t in seen) / max(len(seen), 1)


# ---------------------------------------------------------------- step 3: the gate

def gate_rows(explanation: Explanation, side: str, length_scaled: bool) -> list[dict[str, Any]] | None:
    """Per seen word: V^T w_t, alpha_t and the factor its vector was multiplied by (alpha_t, or alpha_t x the
    number of words when the model scales by the sentence length); None without a gate on this side."""
    values = side_values(explanation, side)
    attention = explanation.question_attention if side == "question" else explanation.answer_attention
    if values.gate_logits is None or attention is None:
        return None
    labels = vector_labels(explanation, side)
    scale = len(attention) if length_scaled else 1
    return [{"word": label, "V^T w": float(logit), "alpha": float(alpha), "weight applied": float(alpha) * scale}
            for label, logit, alpha in zip(labels, values.gate_logits, attention, strict=True)]


GATE_FORMULAS = {
    "softmax": "alpha_t = exp(V^T w_t) / sum of exp(V^T w) over the {n} words",
    "sparsemax": "alpha = sparsemax(V^T w) over the {n} words: the closest weights to the scores that add up to 1, "
                 "so low-scoring words get exactly 0",
    "entmax15": "alpha = 1.5-entmax(V^T w) over the {n} words: between softmax and sparsemax, low-scoring words "
                "can get exactly 0",
}
"""How each gate turns the scores V^T w_t into weights, in words for the board."""


def gate_formula(gate: str, words: int) -> str:
    return GATE_FORMULAS.get(gate, GATE_FORMULAS["softmax"]).format(n=words)


def softmax_check(rows: Sequence[dict[str, Any]], gate: str = "softmax") -> float:
    """The largest gap between the traced alpha and the gate recomputed from the traced logits:
    exp(logit)/sum exp(logits) for the softmax on the board, or the model's sparse gate."""
    logits = np.array([r["V^T w"] for r in rows], dtype=np.float64)
    alpha = np.array([r["alpha"] for r in rows], dtype=np.float64)
    if gate != "softmax":
        import torch

        from matching.models.blocks import GATES

        row = torch.from_numpy(logits)[None]
        board = GATES[gate](row, torch.ones_like(row, dtype=torch.bool))[0].numpy()
        return float(np.abs(board - alpha).max())
    board = np.exp(logits - logits.max())
    return float(np.abs(board / board.sum() - alpha).max())


# ---------------------------------------------------------------- step 4: the Bi-LSTM

def states(explanation: Explanation, side: str) -> dict[str, np.ndarray] | None:
    """The LSTM states per seen position of each direction the family's LSTM reads (a Bi-LSTM: forward,
    then backward), or None for a family without an LSTM."""
    found = side_values(explanation, side).states
    if found is None:
        return None
    directions = explanation.descriptor.state_directions
    return dict(zip(directions, np.split(found, len(directions), axis=1), strict=True))


@dataclass(frozen=True)
class SameWord:
    """One word at two positions: what 'positional' means, read off the traced matrix when it can be."""

    word: str
    first: tuple[str, int]
    """(side, 0-based position)"""
    second: tuple[str, int]
    cosine: float | None
    """cos(p_first, p_second) from the traced cosine matrix (question word vs answer word), else None."""


def same_word(explanation: Explanation) -> SameWord | None:
    """A word that appears twice: in the question and the answer (its cosine is a traced matrix cell),
    else twice in one text; None when no word repeats."""
    q_seen = [t for t in explanation.question_tokens if not t.truncated]
    a_seen = [t for t in explanation.answer_tokens if not t.truncated]
    cosine = explanation.interaction_matrices.get("cosine")
    for i, q in enumerate(q_seen):
        for j, a in enumerate(a_seen):
            if q.key == a.key and q.key.isalnum():
                return SameWord(q.text, ("question", i), ("answer", j),
                                None if cosine is None else float(cosine[i, j]))
    for side, seen in (("question", q_seen), ("answer", a_seen)):
        first: dict[str, int] = {}
        for index, token in enumerate(seen):
            if token.key in first and token.key.isalnum():
                return SameWord(token.text, (side, first[token.key]), (side, index), None)
            first.setdefault(token.key, index)
    return None


# ---------------------------------------------------------------- step 5: one cell

@dataclass(frozen=True)
class CellMath:
    """One matrix cell on the board: value = dot / (|left| |right|) for a cosine, dot for a dot product."""

    matrix: str
    i: int
    j: int
    left: np.ndarray
    right: np.ndarray
    dot: float
    left_norm: float
    right_norm: float
    board: float
    """The value worked out from the traced vectors."""
    traced: float
    """The value the network read (the matrix cell of the trace)."""
    cosine: bool


def cell_vectors(explanation: Explanation, matrix: str) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """(question vectors, answer vectors, is a cosine) whose products make `matrix`, as the family traced
    them, or None where the matrix is not a plain product of vectors (learned weights in between)."""
    return explanation.matrix_products.get(matrix)


def cell_math(explanation: Explanation, matrix: str, i: int, j: int) -> CellMath | None:
    """Cell (i, j) of `matrix` worked out from the traced vectors, or None (see `cell_vectors`)."""
    found = cell_vectors(explanation, matrix)
    values = explanation.interaction_matrices.get(matrix, explanation.display_matrices.get(matrix))
    if found is None or values is None:
        return None
    left_all, right_all, cosine = found
    left = left_all[i].astype(np.float64)
    right = right_all[j].astype(np.float64)
    dot = float(left @ right)
    left_norm, right_norm = float(np.linalg.norm(left)), float(np.linalg.norm(right))
    board = dot / (max(left_norm, 1e-8) * max(right_norm, 1e-8)) if cosine else dot
    return CellMath(matrix, i, j, left_all[i], right_all[j], dot, left_norm, right_norm, board,
                    float(values[i, j]), cosine)


def first_pooled(explanation: Explanation) -> PooledCell | None:
    """The cell worth working out: the first real pooled cell (rank 1 of the first matrix) of two words, not
    punctuation ("? x ." taught nothing on a projector); the first real one where every one has a mark."""
    real = [c for c in explanation.pooled_cells if not c.filler]
    worded = (c for c in real if c.i is not None and c.j is not None and is_word(explanation.question_tokens[c.i])
              and is_word(explanation.answer_tokens[c.j]))
    return next(worded, real[0] if real else None)


# ---------------------------------------------------------------- step 6: pooling

def pooling_rows(explanation: Explanation, group: str) -> list[dict[str, Any]]:
    """The pooled cells of one group in pooling order, each with the running list of values so far."""
    cells = [c for c in explanation.pooled_cells if c.group == group]
    rows, running = [], []
    for cell in cells:
        running.append(cell.value)
        question = "(filler)" if cell.filler else f"{explanation.question_tokens[cell.i].text} ({cell.i + 1})"  # type: ignore[index,operator]
        answer = "(filler)" if cell.filler else f"{explanation.answer_tokens[cell.j].text} ({cell.j + 1})"  # type: ignore[index,operator]
        rows.append({"order": cell.rank, "question": question, "answer": answer, "value": cell.value,
                     "filler": cell.filler, "i": cell.i, "j": cell.j,
                     "kept so far": ", ".join(f"{v:.3f}" for v in running)})
    return rows


def pooled_groups(explanation: Explanation) -> list[str]:
    return list(dict.fromkeys(c.group for c in explanation.pooled_cells))


# ---------------------------------------------------------------- step 7: the MLP

@dataclass(frozen=True)
class MLPStep:
    inputs: np.ndarray
    """The pooled vector q as the MLP read it."""
    hidden: np.ndarray
    """Pre-activations W_r q + b_r of the hidden units."""
    active: np.ndarray
    """ReLU: the units with a positive pre-activation pass it on; the others give 0."""
    score: float
    bias: float
    waterfall: list[dict[str, Any]]
    """Bars from 0 to the score: the cells with the largest |contribution|, the rest, the bias."""


def mlp_step(explanation: Explanation, bars: int = WATERFALL_BARS) -> MLPStep:
    cells = sorted(explanation.pooled_cells, key=lambda c: -abs(c.contribution))
    shown, rest = cells[:bars], cells[bars:]
    items: list[tuple[str, float]] = []
    for cell in shown:
        where = ("filler" if cell.filler else
                 f"{explanation.question_tokens[cell.i].text} × {explanation.answer_tokens[cell.j].text}")  # type: ignore[index]
        items.append((f"{cell.group} #{cell.rank}: {where}", cell.contribution))
    if rest:
        items.append((f"{len(rest)} other cells", float(sum(c.contribution for c in rest))))
    items += [(f"keywords: {name}", value) for name, value in explanation.keyword_terms.items()]
    items.append(("bias", explanation.bias_contribution))
    waterfall, total = [], 0.0
    for label, amount in items:
        waterfall.append({"part": label, "start": total, "end": total + amount, "amount": amount})
        total += amount
    hidden = np.asarray(explanation.steps.hidden, dtype=np.float64)
    return MLPStep(explanation.mlp_input, hidden, hidden > 0, explanation.score, explanation.bias_contribution,
                   waterfall)


# ---------------------------------------------------------------- input problems, at the step where they matter

def problems(explanation: Explanation, key: str, max_answer_len: int | None = None) -> list[str]:
    """Plain warnings about this input that matter at a step drawn by view `key` (empty when there are none)."""
    found: list[str] = []
    q_seen = [t for t in explanation.question_tokens if not t.truncated]
    a_seen = [t for t in explanation.answer_tokens if not t.truncated]
    if key == "words":
        for side, tokens, seen in (("question", explanation.question_tokens, q_seen),
                                   ("candidate", explanation.answer_tokens, a_seen)):
            if len(tokens) > len(seen):
                found.append(f"The {side} has {len(tokens):,} words; the model reads only the first {len(seen)} "
                             f"(its maximum length). The other {len(tokens) - len(seen):,} are marked, never read.")
    if key == "vectors":
        for side in ("question", "answer"):
            share = unknown_share(explanation, side)
            if share == 1.0:
                found.append(f"Every word of the {side} is unknown to GloVe: the model sees one and the same vector "
                             "for each of them, so this explanation deserves little trust.")
            elif share >= 0.5:
                found.append(f"{share:.0%} of the {side}'s words are unknown (one shared vector): this explanation "
                             "deserves little trust.")
    if key == "gate":
        for side, seen, weights in (("question", q_seen, explanation.question_attention),
                                    ("answer", a_seen, explanation.answer_attention)):
            if weights is not None and len(seen) == 1:
                found.append(f"The {side} has one word: the softmax over one word gives alpha = 1, so the gate "
                             "changes nothing here.")
            elif weights is not None and len(seen) > 1 and float(np.ptp(weights)) < 0.05 / len(seen):
                found.append(f"The {side}'s attention is almost flat (every word near 1/n): it says little about "
                             "which words matter.")
    if key == View.STATES:
        for side, seen in (("question", q_seen), ("answer", a_seen)):
            if len(seen) == 1:
                found.append(f"The {side} has one word: the LSTM reads that one word only, so its states carry "
                             "no context.")
    if key in ("cell", "pooling"):
        cells = len(q_seen) * len(a_seen)
        fillers = sum(c.filler for c in explanation.pooled_cells)
        if fillers:
            found.append(f"The matrix has only {len(q_seen)} × {len(a_seen)} = {cells} cells, fewer than the "
                         f"pooling keeps: {fillers} slot(s) hold the fixed filler value instead of a cell.")
    return found
