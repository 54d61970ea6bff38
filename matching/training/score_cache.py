"""Teachers' scores kept on disk, so that the seeds of a taught setting score their training lists once.

Every seed of a taught setting (`TrainingSettings.teachers`) needs the same thing before its first epoch: each
teacher's score of every training candidate. Five seeds trained side by side computed it five times (fifteen
teachers over 66,000 pairs took each of five MCAN runs 26 minutes). The scores depend on three things, so they are
kept under a key made of all three: the teacher checkpoint's files, the training lists (`data.fingerprint`), and the
code that scores (every source file of the package, so that a fix to the tokenizer or a model is never served stale
scores, and torch's version).

Runs started together wait for one another on a lock per key (`filelock`), so a teacher is scored by one of them and
read by the rest. A file that cannot be read back whole is scored again; a cache that cannot be written (a read-only
home) leaves the scores computed and says so.
"""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import torch
from filelock import FileLock

from matching.text.data import fingerprint
from matching.text.tokenized import TokenizedList

CACHE_VARIABLE = "MATCHLENS_CACHE"
"""Environment variable naming the cache folder (else $XDG_CACHE_HOME/matchlens, else ~/.cache/matchlens)."""

PACKAGE = Path(__file__).resolve().parents[1]


def cache_root() -> Path:
    if chosen := os.environ.get(CACHE_VARIABLE):
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "matchlens"


def files_digest(root: Path, paths: list[Path]) -> str:
    """A hash of files under `root`: each one's path relative to it and its bytes, in the order given."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(root)).encode("utf-8") + b"\x00" + path.read_bytes() + b"\x00")
    return digest.hexdigest()


@cache
def source_fingerprint() -> str:
    """A hash of every Python file of the package: what scores a candidate."""
    return files_digest(PACKAGE, sorted(PACKAGE.rglob("*.py")))


def checkpoint_fingerprint(folder: Path) -> str:
    """A hash of every file of a checkpoint folder (a retrained or refreshed checkpoint gets another key)."""
    return files_digest(folder, sorted(p for p in folder.rglob("*") if p.is_file()))


def cache_key(folder: Path, lists: list[TokenizedList]) -> str:
    # torch's version too: another build may sum a score's floats in another order
    parts = (checkpoint_fingerprint(folder), fingerprint(t.item for t in lists), source_fingerprint(),
             f"torch {torch.__version__}")
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:32]


def _read(path: Path, sizes: list[int]) -> list[np.ndarray] | None:
    """The kept scores, or None where the file is missing or not whole (a kill mid-write, a truncated disk)."""
    try:
        with np.load(path) as kept:
            scores, stored = kept["scores"], kept["sizes"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if stored.tolist() != sizes or len(scores) != sum(sizes):
        return None
    return np.split(scores, np.cumsum(sizes)[:-1])


def cached_scores(folder: Path, lists: list[TokenizedList], score: Callable[[], list[np.ndarray]],
                  root: Path | None = None, show_progress: bool = True) -> list[np.ndarray]:
    """`score()` (one teacher's scores of every list), read from the cache where a run has kept them, else
    computed and kept. One run at a time computes a given key; the others wait for it and read its file."""
    if not lists:
        return score()
    sizes = [len(t.candidates) for t in lists]
    path = (root or cache_root()) / "teacher-scores" / f"{cache_key(folder, lists)}.npz"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path.with_suffix(".lock")))
        lock.acquire()
    except OSError as error:
        if show_progress:
            print(f"  (no cache for the teachers' scores: {error})", file=sys.stderr, flush=True)
        return score()
    try:
        if (kept := _read(path, sizes)) is not None:
            if show_progress:
                print(f"  read from the cache ({path})", file=sys.stderr, flush=True)
            return kept
        scores = score()
        partial = path.with_name(f".{path.stem}.{os.getpid()}.partial.npz")
        try:
            np.savez(partial, scores=np.concatenate(scores), sizes=np.asarray(sizes, dtype=np.int64))
            os.replace(partial, path)
        except OSError as error:
            if show_progress:
                print(f"  (the teachers' scores were not kept: {error})", file=sys.stderr, flush=True)
        return scores
    finally:
        lock.release()
