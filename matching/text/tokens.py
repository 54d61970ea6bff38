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
import gc
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

# Characters with no visible width. They survive spaCy tokenisation glued to a
# word ("world\u200b"), which would make a known word look unknown.
ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)

MAX_TEXT_CHARS = 20_000
"""Texts longer than this are refused before tokenising (a clear error, not a hang)."""


class TextError(ValueError):
    """A text that cannot be matched (empty, only whitespace, far too long)."""


@dataclass(frozen=True, slots=True)  # slots: an upload holds a million of them (half the time to make, 2/3 the memory)
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


NON_SPACE = re.compile(r"\S+")  # \S is "not str.isspace()", the test spaCy splits on


@functools.lru_cache(maxsize=200_000)
def _words_of_chunk(chunk: str) -> tuple[tuple[int, str, str], ...]:
    """(offset in the chunk, word, lookup key) of each word spaCy finds in one whitespace-free chunk.

    spaCy's tokenizer splits the text at whitespace first and then reads each chunk on its own
    (its own cache is keyed by the chunk), so a chunk's words do not depend on the text around it.
    """
    words = []
    for spacy_token in _tokenizer()(chunk):
        key = _word_key(spacy_token.text)
        if key and not spacy_token.is_space:
            words.append((spacy_token.idx, spacy_token.text, key))
    return tuple(words)  # shared by every text the chunk occurs in: immutable


class Tokens(list[Token]):
    """A text's tokens, and their lookup keys side by side (`keys`, made as the tokens are).

    Scoring a large file looks up every word's key: read from one tuple per text, the keys cost a
    sixth of reading an attribute of each of a million token objects scattered in memory.
    """

    __slots__ = ("keys",)

    def __init__(self, tokens: Iterable[Token] = (), keys: tuple[str, ...] | None = None) -> None:
        super().__init__(tokens)
        self.keys = tuple(t.key for t in self) if keys is None else keys
        if len(self.keys) != len(self):
            raise ValueError(f"{len(self.keys)} keys for {len(self)} tokens")

    def __reduce__(self) -> tuple[type[Tokens], tuple[list[Token], tuple[str, ...]]]:
        return Tokens, (list(self), self.keys)


def token_keys(tokens: Sequence[Token]) -> Sequence[str]:
    """The lookup key of each token (kept with the tokens when they are `Tokens`)."""
    return tokens.keys if isinstance(tokens, Tokens) else [t.key for t in tokens]


def tokenize(text: str) -> Tokens:
    """Split `text` into word tokens with their character offsets.

    Whitespace and zero-width-only tokens are not words and are left out; all
    other tokens are kept, however long the text. Chunks between whitespace repeat (words do),
    so each distinct one is read by spaCy once.
    """
    if not isinstance(text, str):
        raise TextError(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        raise TextError(f"text has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    tokens, keys = [], []
    for match in NON_SPACE.finditer(text):
        base = match.start()
        for offset, word, key in _words_of_chunk(match.group()):  # a plain loop: most chunks hold one word
            tokens.append(Token(word, base + offset, base + offset + len(word), key))
            keys.append(key)
    return Tokens(tokens, tuple(keys))


class _CollectorPause:
    """`with collector_paused:` pauses Python's cyclic garbage collector while many long-lived
    objects are made, for as long as any thread is inside, and restores it as it was after.

    Tokenising a ranking file makes a million tokens, none of them part of a cycle; the collector
    would scan the growing pile again and again (it more than doubled tokenising time).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._was_enabled = True

    def __enter__(self) -> None:
        with self._lock:
            if self._inside == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._inside += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._was_enabled:
                gc.enable()


collector_paused = _CollectorPause()


def mark_truncated(tokens: list[Token], max_len: int) -> list[Token]:
    """Flag (never drop) the tokens a model with `max_len` positions does not see."""
    return [replace(t, truncated=True) if i >= max_len else t for i, t in enumerate(tokens)]
