"""A ranking file cut into shards of whole questions, each read on its own from byte offsets.

What `open_ranking_file` reads in one pass, cut where one question ends and the next begins, at
the byte offsets of those rows in each file read (the four files of a .toks folder, or one
TSV/CSV file after its header), so that workers on other machines each read their shard alone,
seeking to it, instead of every worker reading the file from its start. A shard read gives the
lists `read_ranking_file` gives for those questions, parsed by the same row readers.

A shard is one chunk of `Chunking` (the questions `dataset.evaluate` reads and scores together),
so that a worker scores the very batches the one-process path scores; a file's chunks are of even
size (`ChunkCuts`), so that the workers sharing its shards finish together. A shard ends where its
chunk ends and the next row begins a line of bytes in every file (a text may also hold a lone
carriage return or another character `str.splitlines` cuts at, in which case that cut is skipped
and the shard holds the chunks up to the next one). A file whose rows of one question lie apart
cannot be cut: it is one shard, grouped as a whole.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from matching.text.data import (
    TOKS_FILES,
    RankingList,
    _consecutive,
    _decode,
    _file_rows,
    _group,
    _label,
    _ranking_rows,
    open_ranking_file,
)


@dataclass(frozen=True)
class Chunking:
    """How many questions `dataset.evaluate` reads and scores together, and a Ray shard holds: a chunk
    closes once it has `questions` questions or `pairs` pairs, whichever comes first (never inside a
    question: one question of more candidates is a chunk of its own). A file of known size is cut into
    as many chunks as these bounds need, of even size (`ChunkCuts`).

    512 questions are ~5,000 pairs of WikiQA-like lists (~10 candidates), enough that the Bi-LSTMs read
    long runs of answers of one length and few enough that scoring starts within a second. The pairs
    bound matters for long lists: MS MARCO's 1,000 candidates a question made 512,000 pairs a chunk,
    read whole before any was scored, and a Ray collection of them a few shards, too few to share
    among workers. 100 questions of 1,000 candidates, the three defaults: peak memory 1,348 MiB as one
    chunk, 822 MiB in chunks of 5,120 pairs (`python bench/evaluate_stream.py --candidates 1000`)."""

    questions: int = 512
    pairs: int = 5_120
    file: tuple[int, int] | None = None
    """The questions and pairs of the file being cut, where known (`for_file`): its chunks are then even."""

    def __post_init__(self) -> None:
        if self.questions < 1 or self.pairs < 1:
            raise ValueError(f"chunks of {self.questions} questions or {self.pairs} pairs: give at least 1 of each")

    def full(self, questions: int, pairs: int) -> bool:
        """Whether a chunk of `questions` whole questions and `pairs` pairs is closed by the bounds."""
        return questions >= self.questions or pairs >= self.pairs

    def for_file(self, questions: int, pairs: int) -> Chunking:
        """This rule for a file of `questions` questions and `pairs` pairs (kept where a file is already given)."""
        return self if self.file is not None else replace(self, file=(questions, pairs))


CHUNKING = Chunking()


class ChunkCuts:
    """Where a file's chunks close, fed its questions in order (`add`): the one rule behind `dataset.chunks`
    and the shards of `shard_ranking_file`.

    By the bounds alone a file is a run of full chunks and a remainder: 100,043 pairs made 19 chunks of about
    5,120 pairs and one of 1,140, and of two workers sharing them one sat idle for most of a shard's time at
    the end (0.8 to 1.4 s of a 33 s run, docs/deployment.md). Where the file's size is known
    (`Chunking.for_file`), it is cut into as many chunks, n, as the bounds need, of even size: a chunk closes
    where the file's pairs read cross the next of the n even shares of its pairs (or of its questions, if
    that bound needs more chunks). Each chunk is then within a question of the bound that set n; the other
    is kept at twice its size, for files that mix very short and very long lists. A cut depends only on
    what came before it, so a file read as it streams is cut as one read whole, and a shard resumes the
    cutting where it begins (`start`: the questions and pairs before it)."""

    def __init__(self, chunking: Chunking, start: tuple[int, int] = (0, 0)) -> None:
        self.chunking = chunking
        self.read = list(start)  # questions and pairs from the file's start
        self.questions = self.pairs = 0  # of the chunk being read
        questions, pairs = chunking.file or (0, 0)
        by_questions, by_pairs = questions / chunking.questions, pairs / chunking.pairs
        self.count = math.ceil(max(by_questions, by_pairs))
        self.evened = 1 if by_pairs >= by_questions else 0  # which of (questions, pairs) the shares divide
        self.total = (questions, pairs)[self.evened]
        self.share = self._next_share()

    def _next_share(self) -> int:
        return self.read[self.evened] * self.count // self.total + 1 if self.total else 0

    def add(self, candidates: int) -> bool:
        """Count one more question of `candidates` candidates; whether the chunk closes after it."""
        self.questions, self.pairs = self.questions + 1, self.pairs + candidates
        self.read[0], self.read[1] = self.read[0] + 1, self.read[1] + candidates
        if self.chunking.file is None or self.count < 2:
            closes = self.chunking.full(self.questions, self.pairs)
        else:
            closes = (self.read[self.evened] * self.count >= self.share * self.total
                      or self.questions >= 2 * self.chunking.questions or self.pairs >= 2 * self.chunking.pairs)
        if closes:
            self.questions = self.pairs = 0
            self.share = self._next_share()
        return closes


@dataclass(frozen=True)
class Shard:
    """Consecutive questions of a file: where they are among its questions, and where in its bytes."""

    index: int
    first: int
    """Position of its first question among the file's questions."""
    questions: int
    pairs: int
    before: tuple[int, int]
    """Questions and pairs of the file before it: where `ChunkCuts` resumes."""
    spans: tuple[tuple[int, int], ...]
    """(start, end) bytes of its rows in each file read (TOKS_FILES of a folder, or the one file);
    empty for the whole of a file that cannot be cut."""


@dataclass(frozen=True)
class ShardedFile:
    path: Path
    questions: int
    pairs: int
    shards: tuple[Shard, ...]
    header_end: int
    """Bytes of a TSV/CSV file's header (read before each shard's rows); 0 for a .toks folder."""
    chunking: Chunking
    """The rule it was cut by, for this file (`Chunking.for_file`): a worker scores a shard's chunks by it."""


class _Lines:
    """The lines of a file from byte `start` to `end`, as the row readers of `data` cut them:
    with their endings as `open(newline="")` cuts them (`keep_ends`, for the csv reader), else as
    `str.splitlines` cuts each of those. `next_offset` is the byte offset of the next line when it
    begins a line of bytes (after b"\\n"), else None: only there can a shard begin."""

    def __init__(self, handle: BinaryIO, path: Path, start: int, end: int | None, keep_ends: bool) -> None:
        handle.seek(start)
        self.handle, self.path, self.end, self.keep_ends = handle, path, end, keep_ends
        self.next_offset: int | None = start

    def __iter__(self) -> Iterator[str]:
        offset = self.next_offset
        assert offset is not None
        for raw in self.handle:  # lines of bytes, each ending at b"\n": never inside a UTF-8 character
            if self.end is not None and offset >= self.end:
                return
            try:
                text = raw.decode("utf-8-sig" if offset == 0 else "utf-8")
            except UnicodeDecodeError:
                _decode(self.path.read_bytes(), str(self.path))  # raises, saying at which byte
                raise
            pieces = list(io.StringIO(text, newline="")) if self.keep_ends else text.splitlines()
            offset += len(raw)
            for n, piece in enumerate(pieces, 1):
                self.next_offset = offset if n == len(pieces) else None
                yield piece


def shard_ranking_file(path: str | Path, chunking: Chunking = CHUNKING) -> ShardedFile:
    """Check and count a ranking file as `open_ranking_file` does, then cut it into shards of one
    chunk each (see the module's docstring), reading it once more."""
    checked = open_ranking_file(path)
    path = checked.path
    chunking = chunking.for_file(checked.questions, checked.pairs)
    whole = (Shard(0, 0, checked.questions, checked.pairs, (0, 0), ()),)
    if not checked.grouped:
        return ShardedFile(path, checked.questions, checked.pairs, whole, 0, chunking)
    with ExitStack() as stack:
        if path.is_dir():
            files = [path / name for name in TOKS_FILES]
            readers = [_Lines(stack.enter_context(file.open("rb")), file, 0, None, keep_ends=False) for file in files]
            lines = zip(*readers, strict=True)  # the files are line-aligned: `open_ranking_file` checked them
            rows: Iterator[str] = (row[2].strip() for row in lines)
            header_end = 0
        else:
            header_end = _header_end(path)
            if header_end < 0:  # a header that does not end a line of bytes: no offset to read it by
                return ShardedFile(path, checked.questions, checked.pairs, whole, 0, chunking)
            readers = [_Lines(stack.enter_context(path.open("rb")), path, 0, None, keep_ends=True)]
            header = _header(path, header_end)
            rows = (qid for qid, *_ in _ranking_rows(itertools.chain(header, _skip(readers[0], header_end)),
                                                     _first_line(header), str(path)))
        shards: list[Shard] = []
        cuts = ChunkCuts(chunking)
        position = pairs = question_start = 0
        before = (0, 0)  # where the shard being read begins (it may hold several chunks)
        starts: tuple[int | None, ...] = tuple(reader.next_offset for reader in readers)
        current: str | None = None
        begun = starts
        for qid in rows:
            if qid != current:
                if current is not None:
                    position += 1
                    if cuts.add(pairs - question_start) and None not in starts:
                        shards.append(_shard(len(shards), before, position, pairs, begun, starts))
                        before, begun = (position, pairs), starts
                current, question_start = qid, pairs
            pairs += 1
            starts = tuple(reader.next_offset for reader in readers)
        ends = tuple(file.stat().st_size for file in (files if path.is_dir() else [path]))
        shards.append(_shard(len(shards), before, checked.questions, pairs, begun, ends))
    return ShardedFile(path, checked.questions, checked.pairs, tuple(shards), header_end, chunking)


def _shard(index: int, before: tuple[int, int], stop: int, pairs: int, begun: tuple[int | None, ...],
           ends: tuple[int | None, ...]) -> Shard:
    spans = tuple((int(start), int(end)) for start, end in zip(begun, ends, strict=True))  # type: ignore[arg-type]
    first, pairs_before = before
    return Shard(index, first, stop - first, pairs - pairs_before, before, spans)


def _header_end(path: Path) -> int:
    """Bytes of a TSV/CSV file's header record, or -1 when it does not end a line of bytes."""
    import csv

    with path.open("rb") as handle:
        lines = _Lines(handle, path, 0, None, keep_ends=True)
        next(csv.reader(iter(lines)), None)
        return -1 if lines.next_offset is None else lines.next_offset


def _header(path: Path, header_end: int) -> list[str]:
    with path.open("rb") as handle:
        return list(_Lines(handle, path, 0, header_end, keep_ends=True))


def _first_line(header: list[str]) -> str:
    """The file's first line up to b"\\n", by which `data` tells TSV (a tab) from CSV."""
    return "".join(header).split("\n", 1)[0]


def _skip(lines: _Lines, start: int) -> Iterator[str]:
    """`lines` from byte `start` on (a shard's rows after the header read apart)."""
    lines.handle.seek(start)
    lines.next_offset = start
    return iter(lines)


def read_shard(sharded: ShardedFile, shard: Shard) -> list[RankingList]:
    """The lists of one shard, as `read_ranking_file` gives them, reading only its bytes."""
    path = sharded.path
    with ExitStack() as stack:
        if not shard.spans:  # a file that cannot be cut: read and grouped whole
            return _group(_file_rows(path, stack))
        if path.is_dir():
            columns = [_Lines(stack.enter_context((path / name).open("rb")), path / name, start, end, keep_ends=False)
                       for name, (start, end) in zip(TOKS_FILES, shard.spans, strict=True)]
            label_file = path / "sim.txt"
            rows = ((qid.strip(), question, answer, _label(label, f"{label_file} (shard {shard.index})"))
                    for question, answer, qid, label in zip(*columns, strict=True))
            return list(_consecutive(rows))
        header = _header(path, sharded.header_end)
        (start, end), = shard.spans
        body = _Lines(stack.enter_context(path.open("rb")), path, start, end, keep_ends=True)
        return list(_consecutive(_ranking_rows(itertools.chain(header, body), _first_line(header), str(path))))
