"""HTML for people: the shaded words the app draws, and the pieces the rich displays are built from.

`Explanation`, `Ranking` and `ModelContrast` show themselves in a notebook (`_repr_html_`, each
in its own module) with the pieces here; this module knows none of them, so it sits below them.
Every piece of user text (questions, candidates, words, model names) reaches the HTML only
through `html.escape` (directly, or through pandas' `to_html`, which escapes every cell and
label); the markup around it is fixed, and numbers are numbers.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from matching.text.tokens import Token

if TYPE_CHECKING:
    import pandas as pd

MAX_TAIL_CHARS = 300
"""Unseen text shown after the last seen word in the shaded view (the rest is counted)."""
LARGEST_SHOWN = 8
"""Rows of the largest cells (or gap terms) in a rich display; the objects hold all of them."""


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

def table_html(frame: pd.DataFrame, float_format: str = "{:+.4f}") -> str:
    """A DataFrame as an HTML table; pandas escapes every cell and label (escape=True)."""
    return frame.to_html(index=False, escape=True, border=0, na_rep="",
                         float_format=float_format.format, classes="ml-table")


def heading_html(text: str) -> str:
    return f"<div style='font-weight:600;margin:.4rem 0 .2rem'>{html.escape(text)}</div>"


def box_html(*parts: str) -> str:
    return "<div class='matchlens' style='max-width:60rem'>" + "".join(parts) + "</div>"
