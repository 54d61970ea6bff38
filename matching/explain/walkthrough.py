"""The walkthrough: how one model turned one (question, answer) pair into its score, step by step.

Every number here is read off the `Explanation` of the forward pass that produced the score
(word vectors, gate logits, attention, LSTM states, matrices, pooled cells, the MLP's hidden
pre-activations, contributions). The only arithmetic done here is the arithmetic a teacher
shows on the board, on those traced numbers: the dot product and the lengths of one cosine
cell, and the running total of a waterfall. Tests check that each of them gives back the
traced value (to 1e-5).

Steps apply by family: MV-LSTM and aMV-LSTM go through all eight; MatchPyramid has no Bi-LSTM
(step 4 says so) and pools by convolution and dynamic pooling instead of k-max (step 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from matching.explain.explanation import Explanation, PooledCell, SideValues
from matching.text.tokens import Token

MVLSTM_FAMILIES = ("mvlstm", "amvlstm")
WATERFALL_BARS = 15
"""Cells drawn one by one in the waterfall; the rest are summed into one bar."""


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    lead: str
    """One or two plain sentences shown before the picture."""


STEPS: tuple[Step, ...] = (
    Step("words", "Words", "The text is cut into words. Each keeps its place in your text; words past the model's "
         "maximum length are kept on screen but never read."),
    Step("vectors", "Word vectors", "Each word becomes a list of 50 numbers from GloVe (one strip per word, "
         "blue below zero, red above). Every unknown word gets the same learned vector."),
    Step("gate", "The attention gate", "aMV-LSTM scores each word (V^T w_t), turns the scores into weights that "
         "add up to 1 (a softmax in the paper; sparse gates can give words exactly 0) and multiplies each word "
         "vector by its weight."),
    Step("bilstm", "The Bi-LSTM: positional vectors", "Two LSTMs read the words, one left to right and one right "
         "to left. Each position gets both states side by side: a vector of the word in its context."),
    Step("cell", "One interaction cell, then the matrix", "Every question position meets every answer position. "
         "Here is one cell worked out with your numbers, then all of them."),
    Step("pooling", "Pooling: what the network keeps", "Only a few cells go on: k-max pooling keeps the k largest "
         "of each matrix, in order."),
    Step("mlp", "The MLP: from pooled values to the score", "The pooled values go through one hidden layer of ReLU "
         "units to the score. Each cell's contribution (gradient x value) plus the bias adds up to the score."),
    Step("rank", "The rank", "The candidates are sorted by score: this is where yours lands."),
)
STEP_KEYS = tuple(step.key for step in STEPS)
WORD_MATCHING_LEADS = {
    "cell": "Every question word meets every answer word: each cell is the dot product of the two word vectors "
            "(unit length for cosine matching, after the gate). Here is one cell worked out, then all of them.",
    "pooling": "Convolution filters slide over the matrix; dynamic pooling cuts each filter's map into a fixed grid "
               "of windows and keeps each window's largest value, in window order.",
}
"""The steps whose text differs for a family that matches words directly (MatchPyramid)."""


def lead(explanation: Explanation, key: str) -> str:
    """The step's opening sentences, in the terms of this model's family."""
    if not is_mvlstm(explanation) and key in WORD_MATCHING_LEADS:
        return WORD_MATCHING_LEADS[key]
    return STEPS[STEP_KEYS.index(key)].lead


def step_index(step: int) -> int:
    """A step number from a link or a click, clamped to the steps that exist."""
    return min(max(int(step), 0), len(STEPS) - 1)


def is_mvlstm(explanation: Explanation) -> bool:
    return explanation.family in MVLSTM_FAMILIES


def family_note(explanation: Explanation, key: str) -> str | None:
    """What this family does at step `key` when it differs from MV-LSTM (None when it is the same)."""
    if is_mvlstm(explanation):
        if key == "gate" and explanation.question_attention is None and explanation.answer_attention is None:
            return ("MV-LSTM has no attention gate: every word is read at full weight (this step applies to the "
                    "aMV-LSTM models).")
        return None
    notes = {
        "bilstm": f"{explanation.family} has no Bi-LSTM: it matches the word vectors themselves, so there are no "
                  "positional vectors. This step does not apply; go on to the matching matrix.",
        "cell": f"{explanation.family} compares words, not LSTM positions: each cell matches one question word "
                "with one answer word (after the gate, if any).",
        "pooling": f"{explanation.family} reads the matrix with convolution filters and dynamic pooling: the matrix "
                   "is cut into a fixed grid of windows and each filter keeps the largest value of each window. "
                   "The cells below are those maxima.",
    }
    if key == "gate" and explanation.question_attention is None and explanation.answer_attention is None:
        return f"{explanation.family} has no attention gate: every word is read at full weight."
    return notes.get(key)


# ---------------------------------------------------------------- steps 1-2: words and vectors

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

def states(explanation: Explanation, side: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(forward, backward) LSTM states per seen position, or None for a family without an LSTM."""
    both = side_values(explanation, side).states
    if both is None:
        return None
    half = both.shape[1] // 2
    return both[:, :half], both[:, half:]


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
    """(question vectors, answer vectors, is a cosine) whose products make `matrix`, or None when the
    matrix is not a plain product of traced vectors (bilinear and tensor matrices have learned weights)."""
    q, a = explanation.steps.question, explanation.steps.answer
    if is_mvlstm(explanation):
        if q.states is None or a.states is None:
            return None
        half = q.states.shape[1] // 2
        if matrix == "cosine":
            return q.states, a.states, True
        if matrix == "forward":
            return q.states[:, :half], a.states[:, :half], True
        if matrix == "backward":
            return q.states[:, half:], a.states[:, half:], True
        return None
    if matrix == "word cosine":  # unit word vectors, reweighted by the gate: a plain dot product
        return q.gated_words, a.gated_words, False
    if matrix == "word dot":
        return q.gated_words, a.gated_words, False
    return None


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
    """The first real pooled cell (rank 1 of the first matrix): the cell worth working out."""
    return next((c for c in explanation.pooled_cells if not c.filler), None)


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
    """Plain warnings about this input that matter at step `key` (empty when there are none)."""
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
    if key == "bilstm" and is_mvlstm(explanation):
        for side, seen in (("question", q_seen), ("answer", a_seen)):
            if len(seen) == 1:
                found.append(f"The {side} has one word: each LSTM reads that one word only, so its forward and "
                             "backward states carry no context.")
    if key in ("cell", "pooling"):
        cells = len(q_seen) * len(a_seen)
        fillers = sum(c.filler for c in explanation.pooled_cells)
        if fillers:
            found.append(f"The matrix has only {len(q_seen)} × {len(a_seen)} = {cells} cells, fewer than the "
                         f"pooling keeps: {fillers} slot(s) hold the fixed filler value instead of a cell.")
    return found
