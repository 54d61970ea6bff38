"""Which matrix a view shows, and which cells it outlines: the Interactions page's data.

Every family reads one or more matrices; a view is one of them (or a combination, or the
cell contributions) with the cells worth outlining. Built from the Explanation alone, so it
works for any registered family without knowing its layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .explanation import Explanation

CONTRIBUTIONS = "contributions"
COMBINED = "combined"
DIRECTIONS = ("forward", "backward")
TOP_CELLS = 10
"""Cells outlined on the contributions view: the ones with the largest |gradient x value|."""

VIEW_HELP = {
    COMBINED: "The matrix that was pooled (for the tensor model, the average of its slices, for orientation).",
    "forward": "Cosine of the forward-LSTM states only.",
    "backward": "Cosine of the backward-LSTM states only.",
    CONTRIBUTIONS: "Each cell's contribution to the score (gradient x value); they add up, with the bias, "
                   "to the score exactly.",
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
    """The matrices proper (cosine, bilinear, tensor slices, word matching), not the direction ones."""
    return [name for name in explanation.interaction_matrices if name not in DIRECTIONS]


def view_names(explanation: Explanation) -> list[str]:
    main = main_matrices(explanation)
    if len(main) > 1:
        first = [COMBINED, *main]
    else:
        first = main
    directions = [d for d in DIRECTIONS if d in explanation.interaction_matrices or d in explanation.display_matrices]
    return [*first, *directions, CONTRIBUTIONS]


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
    windows = any(cell.window is not None for cell in explanation.pooled_cells)
    pooled_word = ("each pooling window's maximum (numbered by window)" if windows
                   else "the pooled cells (numbered by rank)")
    if view == CONTRIBUTIONS:
        total = sum(explanation.cell_contributions.values())
        assert isinstance(total, np.ndarray)
        order = np.argsort(-np.abs(total), axis=None, kind="stable")[:TOP_CELLS]
        outlines = tuple(Outline(int(i), int(j), str(n + 1))
                         for n, (i, j) in enumerate(zip(*np.unravel_index(order, total.shape), strict=True))
                         if total[i, j] != 0)
        return MatrixView(view, total, outlines,
                          f"{VIEW_HELP[CONTRIBUTIONS]} Cells: {float(total.sum()):+.4f}, bias "
                          f"{explanation.cell_bias:+.4f}, score {explanation.score:+.4f}. Outlined: the "
                          f"{len(outlines)} cells with the largest |contribution|.")
    if view == COMBINED:
        stacked = np.stack([explanation.interaction_matrices[name] for name in main])
        return MatrixView(view, stacked.mean(axis=0), _pooled_outlines(explanation, main, True),
                          "Average of the tensor slices; labels are slice·rank.")
    if view in main:
        return MatrixView(view, explanation.interaction_matrices[view],
                          _pooled_outlines(explanation, [view], False),
                          f"The {view} matrix the network reads; outlined: {pooled_word}.")
    if view in explanation.interaction_matrices:  # a direction matrix this model pools too
        return MatrixView(view, explanation.interaction_matrices[view],
                          _pooled_outlines(explanation, [view], False),
                          VIEW_HELP[view] + " This model pools it: outlines are its own k cells.")
    if view in explanation.display_matrices:
        return MatrixView(view, explanation.display_matrices[view],
                          _pooled_outlines(explanation, main, len(main) > 1),
                          VIEW_HELP[view] + " Display only (not pooled); outlines: the cells pooled from the "
                          "main matrix.")
    raise KeyError(f"no view {view!r} for {explanation.model}; views: {view_names(explanation)}")
