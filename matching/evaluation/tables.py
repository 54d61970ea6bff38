"""Plain table rows the pages draw: pooled cells with their shares, and cells several models pooled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from matching.explain.explanation import Explanation
from matching.explain.ranking import rank_column

MAX_CELL_ROWS = 40
"""A family with many pooled slots (MatchPyramid: filters x windows) lists only the strongest."""


def _window_text(explanation: Explanation, window: tuple[int, int, int, int]) -> str:
    row0, row1, col0, col1 = window
    q, a = explanation.question_tokens, explanation.answer_tokens
    return f"q {row0 + 1}-{row1} ({q[row0].text}…) × a {col0 + 1}-{col1} ({a[col0].text}…)"


def cell_rows(explanation: Explanation) -> list[dict[str, Any]]:
    """The pooled cells as table rows, in MLP slot order, with each cell's share of the score.

    'matrix' is the pooled group (the matrix for MV-LSTM, the convolution filter for MatchPyramid);
    'pooling rank' the k-max rank or the window number; 'cell' the two as one label ('cosine #2'), as the
    share chart and the shared-cells table name a cell; 'window' the words a dynamic pooling window covers.
    'question' and 'answer' read 'word (position)' with 1-based positions, for compact tables.
    """
    shares = explanation.shares()
    rows = []
    for cell, share in zip(explanation.pooled_cells, shares, strict=True):
        question = "" if cell.i is None else explanation.question_tokens[cell.i].text
        answer = "" if cell.j is None else explanation.answer_tokens[cell.j].text
        rows.append({
            "matrix": cell.group, "pooling rank": cell.rank, "cell": f"{cell.group} #{cell.rank}", "value": cell.value,
            "window": None if cell.window is None else _window_text(explanation, cell.window),
            "question word": "(filler)" if cell.filler else question,
            "question position": None if cell.i is None else cell.i + 1,
            "answer word": "(filler)" if cell.filler else answer,
            "answer position": None if cell.j is None else cell.j + 1,
            "question": "(filler)" if cell.filler else f"{question} ({cell.i + 1})",  # type: ignore[operator]
            "answer": "(filler)" if cell.filler else f"{answer} ({cell.j + 1})",  # type: ignore[operator]
            "contribution": cell.contribution, "share": float(share)})
    return rows


def pooling_text(explanation: Explanation) -> str:
    """What this model's pooling kept, in the words of its family."""
    cells = explanation.pooled_cells
    if any(cell.window is not None for cell in cells):
        groups = len({cell.group for cell in cells})
        return (f"Dynamic pooling: each of {groups} convolution filters passes on its maximum in each of "
                f"{len(cells) // max(groups, 1)} windows ({len(cells)} values).")
    matrices = list(dict.fromkeys(cell.matrix for cell in cells))
    k = len(cells) // max(len(matrices), 1)
    each = "the matrix" if len(matrices) == 1 else f"each of {len(matrices)} matrices"
    return f"k-max pooling: the {k} largest cells of {each} ({', '.join(matrices)})."


def zero_cells_text(explanation: Explanation) -> str | None:
    """Said where k-max pooling kept cells that hold exactly 0 (an exact-match matrix with fewer matches than
    k): such a cell is listed with its two words, as the model pooled it, but the words are no match and the
    cell adds nothing (contribution = gradient x 0). None where there is no such cell."""
    zeros = [cell for cell in explanation.pooled_cells
             if not cell.filler and cell.window is None and cell.value == 0.0]
    if not zeros:
        return None
    matrices = ", ".join(dict.fromkeys(cell.matrix for cell in zeros))
    return (f"{len(zeros)} pooled cell{'' if len(zeros) == 1 else 's'} hold 0 ({matrices}): the matrix has fewer "
            "non-zero cells than k, so pooling kept zeros by their position. Their words are no match, and they "
            "add nothing to the score.")


def strongest(rows: list[dict[str, Any]], limit: int = MAX_CELL_ROWS) -> list[dict[str, Any]]:
    """All rows when they are few, else the `limit` with the largest |contribution|, in slot order."""
    if len(rows) <= limit:
        return rows
    keep = sorted(range(len(rows)), key=lambda n: -abs(rows[n]["contribution"]))[:limit]
    return [rows[n] for n in sorted(keep)]


def shared_cells(explanations: Mapping[str, Explanation]) -> list[dict[str, Any]]:
    """Cells (question position, answer position) pooled by more than one model.

    Across models the matrices differ, so a cell is matched by its positions. Each model's
    column says where that model pooled it: the matrix and the k-max rank ('cosine #2'), or
    the filter and the pooling window ('filter 1, window 3'), the best when several; it is
    empty ('') when that model did not pool the cell.

    A pooled value of exactly 0 is left out: it adds exactly 0 to the score (gradient x value), and k-max pooling
    of a sparse matrix (the exact-match one) keeps such cells only by their place ("Who x a", exact match #9).
    """
    best: dict[tuple[int, int], dict[str, tuple[int, str]]] = {}
    words: dict[tuple[int, int], tuple[str, str]] = {}
    for name, explanation in explanations.items():
        for cell in explanation.pooled_cells:
            if cell.filler or cell.i is None or cell.j is None or cell.value == 0:
                continue
            position = (cell.i, cell.j)
            where = (f"{cell.group}, window {cell.rank}" if cell.window is not None
                     else f"{cell.matrix} #{cell.rank}")
            ranks = best.setdefault(position, {})
            if name not in ranks or cell.rank < ranks[name][0]:
                ranks[name] = (cell.rank, where)
            words[position] = (explanation.question_tokens[cell.i].text, explanation.answer_tokens[cell.j].text)
    rows = []
    for (i, j), ranks in best.items():
        if len(ranks) < 2:
            continue
        row: dict[str, Any] = {"question word": words[(i, j)][0], "question position": i + 1,
                               "answer word": words[(i, j)][1], "answer position": j + 1, "models": len(ranks)}
        row.update({rank_column(name): ranks[name][1] if name in ranks else "" for name in explanations})
        rows.append(row)
    return sorted(rows, key=lambda r: (-r["models"], r["question position"], r["answer position"]))
