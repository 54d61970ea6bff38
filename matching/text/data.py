"""Ranking data: WikiQA's line-aligned folders, Microsoft's TSV, and plain CSV.

All readers return `RankingList`s: one question, its candidates in their original
order, and 0/1 labels. Files that are not UTF-8 or lack the expected columns raise
`DataError` with the file name and what is wrong.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TOKS_FILES = ("a.toks", "b.toks", "id.txt", "sim.txt")
TSV_COLUMNS = ("QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label")
CSV_COLUMNS = ("question", "candidate", "label")


class DataError(ValueError):
    """A ranking file that cannot be read; the message says which and why."""


@dataclass(frozen=True)
class RankingList:
    qid: str
    question: str
    candidates: tuple[str, ...]
    labels: tuple[int, ...]

    @property
    def has_relevant(self) -> bool:
        return any(self.labels)


def _group(rows: Iterable[tuple[str, str, str, int]]) -> list[RankingList]:
    """(qid, question, candidate, label) rows -> lists, keeping first-seen order."""
    grouped: dict[str, tuple[str, list[str], list[int]]] = {}
    for qid, question, candidate, label in rows:
        grouped.setdefault(qid, (question, [], []))
        grouped[qid][1].append(candidate)
        grouped[qid][2].append(label)
    return [RankingList(qid, q, tuple(c), tuple(lab)) for qid, (q, c, lab) in grouped.items()]


def _label(value: str, where: str) -> int:
    text = value.strip()
    try:
        number = float(text)
    except ValueError:
        raise DataError(f"{where}: label {text!r} is not a number") from None
    if number not in (0.0, 1.0):
        raise DataError(f"{where}: label {text!r} is not 0 or 1")
    return int(number)


def _decode(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(f"{name}: not UTF-8 text (byte {error.start}); save it as UTF-8") from None


def read_toks_folder(folder: str | Path) -> list[RankingList]:
    """The line-aligned format of MODELS.md: a.toks, b.toks, id.txt, sim.txt."""
    folder = Path(folder)
    columns = []
    for name in TOKS_FILES:
        path = folder / name
        if not path.is_file():
            raise DataError(f"{path}: file missing")
        columns.append(_decode(path.read_bytes(), str(path)).splitlines())
    lengths = {name: len(lines) for name, lines in zip(TOKS_FILES, columns, strict=True)}
    if len(set(lengths.values())) != 1:
        raise DataError(f"{folder}: files are not line-aligned ({lengths})")
    questions, answers, ids, labels = columns
    return _group((qid.strip(), q, a, _label(s, f"{folder / 'sim.txt'} line {n + 1}"))
                  for n, (q, a, qid, s) in enumerate(zip(questions, answers, ids, labels, strict=True)))


def _table_rows(text: str, name: str, delimiter: str, required: tuple[str, ...]) -> list[dict[str, str]]:
    # QUOTE_NONE for TSV: WikiQA sentences contain bare double quotes.
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    header = [h.strip() for h in (reader.fieldnames or [])]
    lowered = {h.lower(): h for h in header}
    missing = [c for c in required if c.lower() not in lowered]
    if missing:
        raise DataError(f"{name}: missing column(s) {missing}; found {header}")
    reader.fieldnames = header
    rows = []
    for row in reader:
        if None in row or any(row.get(lowered[c.lower()]) is None for c in required):
            raise DataError(f"{name} line {reader.line_num}: wrong number of fields")
        rows.append({c: row[lowered[c.lower()]] for c in required})
    if not rows:
        raise DataError(f"{name}: no rows")
    return rows


def parse_ranking_file(raw: bytes, name: str) -> list[RankingList]:
    """An uploaded file: WikiQA TSV (by its header) or CSV with question, candidate, label."""
    text = _decode(raw, name)
    first_line = text.split("\n", 1)[0]
    if "\t" in first_line:
        rows = _table_rows(text, name, "\t", TSV_COLUMNS)
        return _group((r["QuestionID"], r["Question"], r["Sentence"],
                       _label(r["Label"], f"{name} question {r['QuestionID']}")) for r in rows)
    rows = _table_rows(text, name, ",", CSV_COLUMNS)
    # CSV has no question id: the question text is the id.
    return _group((r["question"], r["question"], r["candidate"], _label(r["label"], f"{name}"))
                  for r in rows)


def read_ranking_file(path: str | Path) -> list[RankingList]:
    path = Path(path)
    if path.is_dir():
        return read_toks_folder(path)
    if not path.is_file():
        raise DataError(f"{path}: file missing")
    return parse_ranking_file(path.read_bytes(), str(path))


def content_key(raw: bytes | str, *settings: object, length: int = 16) -> str:
    """A short hash of some content and the settings it was read with: the key under which a page
    keeps what it computed from an upload (a new file or new settings get a new key)."""
    digest = hashlib.sha256(raw.encode("utf-8") if isinstance(raw, str) else raw)
    for setting in settings:
        digest.update(b"\x00" + str(setting).encode("utf-8"))
    return digest.hexdigest()[:length]


def fingerprint(lists: Iterable[RankingList]) -> str:
    """A short hash of the data itself, recorded in model cards."""
    digest = hashlib.sha256()
    for item in lists:
        for part in (item.qid, item.question, *item.candidates, *map(str, item.labels)):
            digest.update(part.encode("utf-8") + b"\x00")
    return "sha256:" + digest.hexdigest()[:16]
