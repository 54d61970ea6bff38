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

# Word kinds, as bit flags (a year is a number and a date): what the answer-type keyword features ask
# and give. Read from the lookup key, so a number the word vectors do not know ('29,029') is one too.
NUMBER, DATE = 1, 2
NUMBER_WORD = re.compile(r"^[+-]?\d[\d,.]*%?$|^(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                         r"twenty|thirty|forty|fifty|hundred|hundreds|thousand|thousands|million|millions|billion|"
                         r"billions|dozen|dozens|half)$")
DATE_WORD = re.compile(r"^(1[0-9]|20)\d\d$|^\d{3,4}s$|^(january|february|march|april|may|june|july|august|"
                       r"september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|"
                       r"sunday|century|centuries)$")


def word_kind(key: str) -> int:
    """The NUMBER and DATE flags of a lookup key (0 for neither)."""
    return (NUMBER if NUMBER_WORD.match(key) else 0) | (DATE if DATE_WORD.match(key) else 0)


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


class KeyCodes:
    """A small whole number for each lookup key, the same for the life of the process.

    A text keeps its words' codes as one array (`Tokens.codes`), so a vocabulary maps a whole
    block of texts to its ids with one array lookup (`WordVectors.ids_of_codes`) instead of one
    dictionary lookup per word. At most `capacity` keys get a code (a bound on memory for a
    long-running app): a key past it gets none, and its text is looked up key by key.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.code_of: dict[str, int] = {}
        self.keys: list[str] = []  # by code
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.keys)

    def code(self, key: str) -> int:
        """The key's code; NO_CODE once `capacity` keys have one."""
        code = self.code_of.get(key)
        if code is not None:
            return code
        with self._lock:  # a key is given one code, whichever thread asks first
            code = self.code_of.get(key)
            if code is None:
                if len(self.keys) >= self.capacity:
                    return NO_CODE
                code = len(self.keys)
                self.keys.append(key)  # before it is published in code_of: a code always has its key
                self.code_of[key] = code
            return code


NO_CODE = -1
KEY_CODES = KeyCodes(capacity=1_000_000)


PLAIN_CHUNK = re.compile(r"[A-Za-z]+|[0-9]+")
"""A run of ASCII letters, or of digits: one word to spaCy's English tokenizer unless it is one of its special
cases ("cannot", "Im", "gonna"). Its prefix, suffix and infix rules need a character of another kind to match
(tests/test_text.py checks every 50th such word of GloVe's vocabulary in three casings, and numbers)."""


@functools.lru_cache(maxsize=1)
def special_cases() -> frozenset[str]:
    """The chunks spaCy's tokenizer splits by its table of exceptions ("cannot", "don't"), not by its rules."""
    return frozenset(_tokenizer().rules)


@functools.lru_cache(maxsize=200_000)
def _words_of_chunk(chunk: str) -> tuple[tuple[int, str, str, int], ...]:
    """(offset in the chunk, word, lookup key, its code) of each word spaCy finds in one
    whitespace-free chunk.

    spaCy's tokenizer splits the text at whitespace first and then reads each chunk on its own
    (its own cache is keyed by the chunk), so a chunk's words do not depend on the text around it.
    A plain chunk (`PLAIN_CHUNK`) is its own one word without asking spaCy: most chunks are, and a
    process meeting a collection's words for the first time spent about half of its tokenising in
    spaCy's first reading of each (its affix rules, a new vocabulary entry): a Ray worker's first
    shard, an upload's first read (`bench/tokenizing.py`).
    """
    if PLAIN_CHUNK.fullmatch(chunk) and chunk not in special_cases():
        key = _word_key(chunk)
        return ((0, chunk, key, KEY_CODES.code(key)),)
    words = []
    for spacy_token in _tokenizer()(chunk):
        key = _word_key(spacy_token.text)
        if key and not spacy_token.is_space:
            words.append((spacy_token.idx, spacy_token.text, key, KEY_CODES.code(key)))
    return tuple(words)  # shared by every text the chunk occurs in: immutable


class Tokens(list[Token]):
    """A text's tokens, with the codes of their lookup keys side by side (`codes`, see `KeyCodes`,
    made as the tokens are; None when a key has none).

    Scoring a large file looks up every word's key: from the codes, a whole block of texts is one
    array lookup, instead of an attribute of each of a million token objects scattered in memory,
    then a dictionary lookup of each key.
    """

    __slots__ = ("codes",)

    def __init__(self, tokens: Iterable[Token] = (), codes: Sequence[int] | None = None) -> None:
        super().__init__(tokens)
        if codes is None:
            codes = [KEY_CODES.code(t.key) for t in self]
        elif len(codes) != len(self):
            raise ValueError(f"{len(codes)} codes for {len(self)} tokens")
        self.codes: tuple[int, ...] | None = None if NO_CODE in codes else tuple(codes)

    def __reduce__(self) -> tuple[type[Tokens], tuple[list[Token]]]:
        # Without the codes: they belong to this process, and are given afresh where it is loaded.
        return Tokens, (list(self),)


def token_codes(tokens: Sequence[Token]) -> tuple[int, ...] | None:
    """The code of each token's key (`KeyCodes`), when the tokens are `Tokens` that have them."""
    return tokens.codes if isinstance(tokens, Tokens) else None


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
    tokens, codes = [], []
    for match in NON_SPACE.finditer(text):
        base = match.start()
        for offset, word, key, code in _words_of_chunk(match.group()):  # a plain loop: most chunks hold one word
            tokens.append(Token(word, base + offset, base + offset + len(word), key))
            codes.append(code)
    return Tokens(tokens, codes)


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
