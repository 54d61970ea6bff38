"""Text in: spaCy tokenisation that keeps the user's own text and offsets.

The app highlights words in the text the person typed, so every token keeps its
original spelling and character span. Lowercasing (and Unicode normalisation) is
done only to build the key used to look a word up in the vectors.

Truncation is a padding *policy*, not preprocessing: `tokenize` never drops a
token, and `mark_truncated` flags the ones past a model's maximum length so the
views can grey them out instead of silently losing them.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass, replace

# Characters with no visible width. They survive spaCy tokenisation glued to a
# word ("world\u200b"), which would make a known word look unknown.
ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)

MAX_TEXT_CHARS = 20_000
"""Texts longer than this are refused before tokenising (a clear error, not a hang)."""


class TextError(ValueError):
    """A text that cannot be matched (empty, only whitespace, far too long)."""


@dataclass(frozen=True)
class Token:
    """One word as the person wrote it, and how the models saw it."""

    text: str
    start: int
    end: int
    key: str
    """Lowercased, NFKC-normalised, zero-width-free form used for the vector lookup."""
    unknown: bool = False
    """No word vector exists for `key`: the model saw its shared unknown vector."""
    truncated: bool = False
    """Past the model's maximum length: kept for display, not seen by the model."""


@functools.lru_cache(maxsize=1)
def _tokenizer():  # type: ignore[no-untyped-def]
    import spacy  # imported lazily: spaCy costs ~0.3 s and most callers never tokenize

    return spacy.blank("en").tokenizer


def lookup_key(text: str) -> str:
    """The form of a word used to find its GloVe vector (GloVe 6B is lowercased)."""
    return unicodedata.normalize("NFKC", text).translate(ZERO_WIDTH).lower()


@functools.lru_cache(maxsize=100_000)
def _word_key(word: str) -> str:
    """`lookup_key` of one spaCy token, stripped; words repeat, so each is normalised once."""
    return lookup_key(word).strip()


def tokenize(text: str) -> list[Token]:
    """Split `text` into word tokens with their character offsets.

    Whitespace and zero-width-only tokens are not words and are left out; all
    other tokens are kept, however long the text.
    """
    if not isinstance(text, str):
        raise TextError(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise TextError(f"text has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    tokens = []
    for spacy_token in _tokenizer()(text):
        word = spacy_token.text
        key = _word_key(word)
        if not key or spacy_token.is_space:
            continue
        start = spacy_token.idx
        tokens.append(Token(word, start, start + len(word), key))
    return tokens


def mark_truncated(tokens: list[Token], max_len: int) -> list[Token]:
    """Flag (never drop) the tokens a model with `max_len` positions does not see."""
    return [replace(t, truncated=True) if i >= max_len else t for i, t in enumerate(tokens)]
