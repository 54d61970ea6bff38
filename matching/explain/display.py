"""HTML for people: the shaded words the app draws, and the rich display of explanations in Jupyter.

`Explanation`, `Ranking` and `ModelContrast` show themselves in a notebook (`_repr_html_`)
through the functions here. Every piece of user text (questions, candidates, words, model
names) reaches the HTML only through `html.escape` (directly, or through pandas' `to_html`,
which escapes every cell and label); the markup around it is fixed, and numbers are numbers.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from matching.text.tokens import Token

if TYPE_CHECKING:  # only for annotations: the classes import this module lazily, never the other way
    import pandas as pd

    from matching.explain.contrast import ModelContrast
    from matching.explain.explanation import Explanation
    from matching.explain.ranking import Ranking

MAX_TAIL_CHARS = 300
"""Unseen text shown after the last seen word in the shaded view (the rest is counted)."""
LARGEST_SHOWN = 8
"""Rows of the largest cells (or gap terms) in a rich display; the objects hold all of them."""
GAP_TERMS_DRAWN = 10
"""Gap terms drawn one by one in the gap waterfall; the rest are summed into one bar."""


# ---------------------------------------------------------------- shaded text

def shaded_html(text: str, tokens: Sequence[Token], weights: np.ndarray | None, label: str) -> str:
    """The original text with each seen word shaded by its attention weight.

    Built only from html.escape()d pieces of `text` and fixed markup; weights are numbers.
    Truncated words are grey and struck through; unknown words are underlined.
    """
    seen = 0 if weights is None else len(weights)
    top = float(np.max(weights)) if weights is not None and seen else 1.0
    uniform = 1.0 / seen if seen else 0.0
    parts = [f"<div class='ml-shaded' style='line-height:2.1;font-size:1.05rem;overflow-wrap:anywhere;'>"
             f"<span style='font-weight:600;margin-right:.5rem'>{html.escape(label)}</span>"]
    position = 0
    for index, token in enumerate(tokens):
        if token.start < position:
            continue
        if index >= seen and token.truncated:
            tail = text[token.start:]
            shown = tail[:MAX_TAIL_CHARS]
            parts.append(html.escape(text[position:token.start]))
            parts.append(f"<span style='color:#6b7280;text-decoration:line-through' dir='auto' "
                         f"title='not seen: past the model&#39;s maximum length'>{html.escape(shown)}</span>")
            if len(tail) > len(shown):
                parts.append(f"<span style='color:#6b7280'> … {len(tail) - len(shown):,} more characters "
                             "not seen</span>")
            position = len(text)
            break
        parts.append(html.escape(text[position:token.start]))
        word = html.escape(text[token.start:token.end])
        if weights is not None and index < seen:
            weight = float(weights[index])
            alpha = 0.06 + 0.8 * (weight / top if top > 0 else 0.0)
            title = f"{weight:.3f} ({weight / uniform:.2f} x uniform)" if uniform else f"{weight:.3f}"
        else:
            alpha, title = 0.0, "not attended"
        style = f"background:rgba(31,111,235,{alpha:.3f});padding:.1rem .15rem;border-radius:.25rem;"
        if token.unknown:
            style += "text-decoration:underline dotted #d97706 2px;"
            title += "; unknown word"
        parts.append(f"<span style='{style}' title='{html.escape(title)}' dir='auto'>{word}</span>")
        position = token.end
    parts.append(html.escape(text[position:]))
    parts.append("</div>")
    return "".join(parts)


def text_of(tokens: Sequence[Token]) -> str:
    """A text with every token at its own offsets (what lay between two tokens becomes spaces).

    An `Explanation` keeps its tokens, not the text they were read from; this is enough for
    `shaded_html`, which reads each word at its offsets.
    """
    parts: list[str] = []
    length = 0
    for token in tokens:
        if token.start >= length:
            parts.append(" " * (token.start - length) + token.text)
            length = token.start + len(token.text)
    return "".join(parts)


# ---------------------------------------------------------------- building blocks

def _table(frame: pd.DataFrame, float_format: str = "{:+.4f}") -> str:
    """A DataFrame as an HTML table; pandas escapes every cell and label (escape=True)."""
    return frame.to_html(index=False, escape=True, border=0, na_rep="",
                         float_format=float_format.format, classes="ml-table")


def _heading(text: str) -> str:
    return f"<div style='font-weight:600;margin:.4rem 0 .2rem'>{html.escape(text)}</div>"


def _box(*parts: str) -> str:
    return "<div class='matchlens' style='max-width:60rem'>" + "".join(parts) + "</div>"


# ---------------------------------------------------------------- Explanation

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
        parts.append(_heading(f"Word weights: {name}"))
        parts.append(shaded_html(text_of(question), question, on_question, "Q"))
        parts.append(shaded_html(text_of(answer), answer, on_answer, "A"))
    if not weighted:
        parts.append(_heading("This model weighs no words; the pair as it read it"))
        parts.append(shaded_html(text_of(question), question, None, "Q"))
        parts.append(shaded_html(text_of(answer), answer, None, "A"))
    if explanation.terms:
        parts.append(_heading("The score, term by term (the terms add up to the score)"))
        parts.append(_table(pd.DataFrame([{"term": k, "value": v} for k, v in explanation.terms.items()])))
    cells = _largest_cells(explanation, count)
    if cells:
        bias = (explanation.bias_contribution if explanation.pooled_cells else explanation.cell_bias)
        split = "" if bias is None else f" (score = all cells' contributions + bias {bias:+.4f}, exactly)"
        parts.append(_heading(f"The {len(cells)} cells with the largest contributions{split}"))
        parts.append(_table(pd.DataFrame(cells)))
    return _box(*parts)


# ---------------------------------------------------------------- Ranking

def ranking_html(ranking: Ranking) -> str:
    """The question and a table of the candidates with every model's and baseline's rank."""
    from matching.explain.ranking import rank_column

    frame = ranking.to_frame()
    systems = [*ranking.models, *ranking.baselines]
    shown = frame[[c for c in ("candidate", "correct") if c in frame] + [rank_column(s) for s in systems]]
    shown.insert(0, "index", frame.index)
    notes = "".join(f"<div style='color:#6b7280'>{html.escape(note)}</div>" for note in ranking.truncation_notes())
    return _box(f"<div style='font-size:1.1rem'>Q: <b>{html.escape(ranking.question)}</b></div>", notes,
                _heading(f"Ranks (1 = best) of {len(ranking.candidates)} candidates; scores in .to_frame()"),
                _table(shown, "{:.4f}"))


# ---------------------------------------------------------------- ModelContrast

def contrast_html(contrast: ModelContrast, count: int = LARGEST_SHOWN) -> str:
    """The gap between A and B, the sentence that says what carries it, and its largest terms."""
    import pandas as pd

    from matching.explain.contrast import describe

    c = contrast
    split = "exactly over matrix cells" if c.exact else f"approximately over words ({c.method})"
    summary = (f"gap score(A) − score(B) = {c.gap:+.4f}: A (#{c.a + 1}, index {c.a}) {c.score_a:+.4f}, rank "
               f"{c.rank_a}; B (#{c.b + 1}, index {c.b}) {c.score_b:+.4f}, rank {c.rank_b}. Split {split}: "
               f"A − B {c.cells_a - c.cells_b:+.4f}, bias difference {c.bias_difference:+.4f}"
               + ("" if c.exact else f", residual {c.residual_difference:+.4f}")
               + f"; adds up to {c.decomposed_gap:+.4f}.")
    return _box(f"<div style='font-size:1.1rem'>{html.escape(describe(c))}</div>",
                f"<div style='color:#374151;margin:.3rem 0'>{html.escape(summary)}</div>",
                _heading(f"The gap's {min(count, len(c.terms))} largest terms (the last rows sum the rest)"),
                _table(pd.DataFrame(c.rows(limit=count)).drop(columns=["pooling rank"])))


def gap_waterfall(contrast: ModelContrast, count: int = GAP_TERMS_DRAWN) -> list[dict[str, Any]]:
    """The gap as waterfall rows (part, start, end, amount) for `charts.waterfall_chart`: the `count`
    largest terms, the rest summed, the bias (or baseline) difference and, for an approximate
    split, the residual; the last row ends at the gap (to float rounding)."""
    rows, total = [], 0.0
    for number, row in enumerate(contrast.rows(limit=count), 1):
        amount = float(row["effect on gap"])  # type: ignore[arg-type]
        if row["question word"] or row["answer word"]:
            words = (f"{row['question word']} × {row['answer word']}" if row["question word"] and row["answer word"]
                     else str(row["question word"] or row["answer word"]))
            part = f"{number}. {row['candidate']}: {words} ({row['matrix']})"  # numbered: a word pair can recur
        else:
            part = f"{number}. {row['candidate']}: {row['matrix']}"
        rows.append({"part": part, "start": total, "end": total + amount, "amount": amount})
        total += amount
    return rows
