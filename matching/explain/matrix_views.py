"""Which matrix a view shows, and which cells it outlines: the Interactions page's data.

Every family reads one or more matrices; a view is one of them (or a combination, or the
cell contributions) with the cells worth outlining. Built from the Explanation alone, so it
works for any registered family without knowing its layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from matching.explain.explanation import Explanation
from matching.models.parts import EXACT_MATCH, LIST_EXACT_MATCH

CONTRIBUTIONS = "contributions"
COMBINED = "combined"
WINDOWS = "windows"
DIRECTIONS = ("forward", "backward")
EXACT_MATCHES = (EXACT_MATCH, LIST_EXACT_MATCH)
"""The exact-match channels: matrices of no negative values, each with a view of its own."""
TOP_CELLS = 10
"""Cells outlined on the contributions view: the ones with the largest |gradient x value|."""

VIEW_HELP = {
    COMBINED: "The matrix that was pooled (for the tensor model, the average of its slices, for orientation).",
    "forward": "Cosine of the forward-LSTM states only.",
    "backward": "Cosine of the backward-LSTM states only.",
    EXACT_MATCH: "1 where the question word and the answer word have the same lookup key, or the same stem where "
                 "the model matches stems ('founded' and 'founding'; see the model's card), times the question "
                 "word's IDF, or both words' attention weights, where the model says so; 0 elsewhere.",
    LIST_EXACT_MATCH: "The question word's IDF within this list (the question's own candidates) where the two words "
                      "have the same lookup key, 0 elsewhere: a word every candidate has weighs 0.",
    CONTRIBUTIONS: "Each cell's contribution to the score (gradient x value); they add up, with the bias, "
                   "to the score exactly.",
    WINDOWS: "Dynamic pooling splits the real rows and columns into a fixed grid of windows; each filter "
             "passes on the maximum of each window. Outlined: per window, the cell whose passed-on values "
             "weigh most in the score (numbered by window, row by row).",
}


@dataclass(frozen=True)
class Outline:
    i: int
    j: int
    label: str


@dataclass(frozen=True)
class MatrixView:
    name: str
    matrix: np.ndarray
    outlines: tuple[Outline, ...]
    caption: str
    zero_centered: bool = True


def main_matrices(explanation: Explanation) -> list[str]:
    """The matrices proper (cosine, bilinear, tensor slices, word matching), not the direction ones
    nor the exact-match channel (each has its own view)."""
    return [name for name in explanation.interaction_matrices if name not in (*DIRECTIONS, *EXACT_MATCHES)]


def view_names(explanation: Explanation) -> list[str]:
    main = main_matrices(explanation)
    if len(main) > 1:
        first = [COMBINED, *main]
    else:
        first = main
    directions = [d for d in DIRECTIONS if d in explanation.interaction_matrices or d in explanation.display_matrices]
    windows = [WINDOWS] if _has_windows(explanation) else []
    exact = [name for name in EXACT_MATCHES if name in explanation.interaction_matrices]
    shown = [name for name in explanation.display_matrices if name not in DIRECTIONS]
    contributions = [CONTRIBUTIONS] if explanation.cell_contributions else []
    return [*first, *windows, *directions, *exact, *shown, *contributions]


def _has_windows(explanation: Explanation) -> bool:
    return any(cell.window is not None for cell in explanation.pooled_cells)


def _top_contribution_outlines(contributions: np.ndarray) -> tuple[Outline, ...]:
    """The TOP_CELLS cells with the largest |contribution|, numbered 1 = largest."""
    order = np.argsort(-np.abs(contributions), axis=None, kind="stable")[:TOP_CELLS]
    return tuple(Outline(int(i), int(j), str(n + 1))
                 for n, (i, j) in enumerate(zip(*np.unravel_index(order, contributions.shape), strict=True))
                 if contributions[i, j] != 0)


def _window_outlines(explanation: Explanation) -> tuple[Outline, ...]:
    """Per pooling window, the cell its passed-on values weigh most for (sum of |slot contributions|)."""
    weight: dict[tuple[int, int, int, int], dict[tuple[int, int], float]] = {}
    numbers: dict[tuple[int, int, int, int], int] = {}
    for cell in explanation.pooled_cells:
        if cell.window is None or cell.i is None or cell.j is None:
            continue
        cells = weight.setdefault(cell.window, {})
        cells[(cell.i, cell.j)] = cells.get((cell.i, cell.j), 0.0) + abs(cell.contribution)
        numbers.setdefault(cell.window, cell.rank)
    labels: dict[tuple[int, int], list[str]] = {}
    for window, cells in weight.items():
        best = max(cells, key=lambda position: cells[position])
        labels.setdefault(best, []).append(str(numbers[window]))
    return tuple(Outline(i, j, ",".join(sorted(label, key=int)[:2]))
                 for (i, j), label in labels.items())


def _pooled_outlines(explanation: Explanation, matrices: list[str], by_matrix: bool) -> tuple[Outline, ...]:
    """One outline per distinct pooled cell, labelled by its best pooling rank or window number."""
    labels: dict[tuple[int, int], str] = {}
    for cell in explanation.pooled_cells:
        if cell.filler or cell.i is None or cell.j is None or cell.matrix not in matrices:
            continue
        label = f"{cell.matrix.replace('slice ', 's')}·{cell.rank}" if by_matrix else str(cell.rank)
        labels.setdefault((cell.i, cell.j), label)
    return tuple(Outline(i, j, label) for (i, j), label in labels.items())


def matrix_view(explanation: Explanation, view: str) -> MatrixView:
    """The matrix of one view and the cells to outline on it."""
    main = main_matrices(explanation)
    windows = _has_windows(explanation)
    if view == CONTRIBUTIONS:
        total = sum(explanation.cell_contributions.values())
        assert isinstance(total, np.ndarray)
        outlines = _top_contribution_outlines(total)
        return MatrixView(view, total, outlines,
                          f"{VIEW_HELP[CONTRIBUTIONS]} Cells: {float(total.sum()):+.4f}, bias "
                          f"{explanation.cell_bias:+.4f}"
                          + (f", keywords {explanation.keyword_score:+.4f}" if explanation.keyword_terms else "")
                          + f", score {explanation.score:+.4f}. Outlined: the "
                          f"{len(outlines)} cells with the largest |contribution|.")
    if view == COMBINED:
        stacked = np.stack([explanation.interaction_matrices[name] for name in main])
        return MatrixView(view, stacked.mean(axis=0), _pooled_outlines(explanation, main, True),
                          "Average of the tensor slices; labels are slice·rank.")
    if view == WINDOWS and windows:
        return MatrixView(view, explanation.interaction_matrices[main[0]], _window_outlines(explanation),
                          VIEW_HELP[WINDOWS])
    if view in main and windows:  # every cell feeds some window: outline the cells that carry the score
        return MatrixView(view, explanation.interaction_matrices[view],
                          _top_contribution_outlines(explanation.cell_contributions[view]),
                          f"The {view} matrix the network reads; outlined: the {TOP_CELLS} cells that carry the "
                          "most score (largest |gradient x value|, 1 = largest).")
    if view in main and not explanation.pooled_cells:
        return MatrixView(view, explanation.interaction_matrices[view], (),
                          f"The {view} matrix the network reads (it pools no cells of it).")
    if view in main:
        return MatrixView(view, explanation.interaction_matrices[view],
                          _pooled_outlines(explanation, [view], False),
                          f"The {view} matrix the network reads; outlined: the pooled cells (numbered by rank).")
    if view in EXACT_MATCHES and view in explanation.interaction_matrices:
        outlines = _pooled_outlines(explanation, [view], False)
        return MatrixView(view, explanation.interaction_matrices[view], outlines, VIEW_HELP[view] + (
                          " The network pools it like the others; outlined: its own k cells." if outlines else
                          " The network reads it whole (it pools no cells of it, so none is outlined)."),
                          zero_centered=False)
    if view in explanation.interaction_matrices:  # a direction matrix this model pools too
        return MatrixView(view, explanation.interaction_matrices[view],
                          _pooled_outlines(explanation, [view], False),
                          VIEW_HELP[view] + " This model pools it: outlines are its own k cells.")
    if view in explanation.display_matrices and not explanation.pooled_cells:
        return MatrixView(view, explanation.display_matrices[view], (),
                          VIEW_HELP.get(view, f"{view}: computed in the same pass that gave the score."),
                          zero_centered=False)
    if view in explanation.display_matrices:
        return MatrixView(view, explanation.display_matrices[view],
                          _pooled_outlines(explanation, main, len(main) > 1),
                          VIEW_HELP.get(view, view) + " Display only (not pooled); outlines: the cells pooled from "
                          "the main matrix.")
    raise KeyError(f"no view {view!r} for {explanation.model}; views: {view_names(explanation)}")
