"""Ranking data: WikiQA's line-aligned folders, Microsoft's TSV, and plain CSV.

All readers return `RankingList`s: one question, its candidates in their original
order, and 0/1 labels. Files that are not UTF-8 or lack the expected columns raise
`DataError` with the file name and what is wrong. `open_ranking_file` reads a file on disk a
question at a time (for evaluating files of any size), the others read it whole.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from matching.text.tokens import MAX_TEXT_CHARS

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


PLAIN_LABELS = {"0": 0, "1": 1}
BOOLEAN_LABELS = {"true": 1, "false": 0}
"""A column of booleans (pandas writes True and False; a spreadsheet TRUE and FALSE) is labels too."""


def _label(value: str, where: str) -> int:
    if (plain := PLAIN_LABELS.get(value)) is not None:  # nearly every row: no float to parse
        return plain
    text = value.strip()
    if (boolean := BOOLEAN_LABELS.get(text.lower())) is not None:
        return boolean
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


def split_folders(root: Path) -> list[str]:
    """The names of `root`'s subfolders that are .toks folders (a data set's dev, test, train), sorted; none for a
    file or a folder without them."""
    return sorted(p.name for p in root.iterdir() if (p / TOKS_FILES[0]).is_file()) if root.is_dir() else []


def missing_toks_file(folder: Path, name: str) -> DataError:
    """A toks folder's file missing; a folder of ranking files instead (not a toks folder at all) said as such."""
    files = sorted(p.name for p in folder.glob("*") if p.suffix.lower() in (".csv", ".tsv")) if folder.is_dir() else []
    if files and not any((folder / toks).is_file() for toks in TOKS_FILES):
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        return DataError(f"{folder} is a folder of ranking files ({shown}), not a toks folder "
                         f"({', '.join(TOKS_FILES)}): give one of its files, e.g. {folder / files[0]}")
    return DataError(f"{folder / name}: file missing")


def read_toks_folder(folder: str | Path) -> list[RankingList]:
    """The line-aligned format of MODELS.md: a.toks, b.toks, id.txt, sim.txt."""
    folder = Path(folder)
    columns = []
    for name in TOKS_FILES:
        path = folder / name
        if not path.is_file():
            raise missing_toks_file(folder, name)
        columns.append(_decode(path.read_bytes(), str(path)).splitlines())
    lengths = {name: len(lines) for name, lines in zip(TOKS_FILES, columns, strict=True)}
    if len(set(lengths.values())) != 1:
        raise DataError(f"{folder}: files are not line-aligned ({lengths})")
    questions, answers, ids, labels = columns
    label_file = folder / "sim.txt"  # made once, not once a row: a path join costs more than the row's parse
    return _group((qid.strip(), q, a, _label(s, f"{label_file} line {n + 1}"))
                  for n, (q, a, qid, s) in enumerate(zip(questions, answers, ids, labels, strict=True)))


def write_toks_folder(folder: str | Path, lists: Sequence[RankingList]) -> Path:
    """`lists` in the line-aligned format `read_toks_folder` reads: a.toks, b.toks, id.txt, sim.txt."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    columns: dict[str, list[str]] = {name: [] for name in TOKS_FILES}
    for item in lists:
        for candidate, label in zip(item.candidates, item.labels, strict=True):
            for name, value in zip(TOKS_FILES, (item.question, candidate, item.qid, str(label)), strict=True):
                columns[name].append(value)
    for name, lines in columns.items():
        (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return folder


def combine_data(sources: Sequence[str | Path], test: str | Path, out: str | Path,
                 train_copies: Mapping[str, int] | None = None,
                 dev: Sequence[str | Path] | None = None) -> dict[str, int]:
    """One data folder from several: out/train and out/dev hold every source's train and dev (question ids
    prefixed with the source folder's name, so none collide), out/test is `test`'s test split alone, so the
    figures stay comparable with models trained on that data set. Returns the questions per split.

    `train_copies` (source folder name -> n) puts a small source's training questions in n times
    (ids suffixed #2, #3, ...), so that it weighs more in each epoch; dev is never copied, so
    selection still weighs each dev question once.

    `dev` (folders) takes out/dev from these folders' dev splits instead of the sources': a cross-source
    check, a model trained on one data set whose every epoch is measured on another's dev questions."""
    out = Path(out)
    copies = dict(train_copies or {})
    unknown = set(copies) - {Path(source).name for source in sources}
    if unknown or any(n < 1 for n in copies.values()):
        raise DataError(f"train copies {copies}: each must name a source folder ({', '.join(map(str, sources))}) "
                        "and be at least 1")
    counts = {}
    for split in ("train", "dev"):
        lists = []
        for source in (dev if split == "dev" and dev else sources):
            name = Path(source).name
            items = read_toks_folder(Path(source) / split)
            for copy in range(1, (copies.get(name, 1) if split == "train" else 1) + 1):
                suffix = f"#{copy}" if copy > 1 else ""
                lists += [replace(item, qid=f"{name}:{item.qid}{suffix}") for item in items]
        write_toks_folder(out / split, lists)
        counts[split] = len(lists)
    tests = read_toks_folder(Path(test) / "test")
    write_toks_folder(out / "test", tests)
    counts["test"] = len(tests)
    return counts


FIELD_LIMIT = 1 << 26
"""The longest field the csv module reads here (64 MiB, more than an upload): at its default (131,072 characters) one
long text stopped the whole file, where a text past the models' limit (`MAX_TEXT_CHARS`) skips its own question."""
csv.field_size_limit(max(csv.field_size_limit(), FIELD_LIMIT))


def _table_rows(stream: Iterable[str], name: str, delimiter: str, required: tuple[str, ...]
                ) -> Iterator[dict[str, str]]:
    """The `required` columns of each row of a table read from `stream` (opened with newline="")."""
    # QUOTE_NONE for TSV: WikiQA sentences contain bare double quotes.
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.DictReader(stream, delimiter=delimiter, quoting=quoting)
    try:
        yield from _checked_rows(reader, name, required)
    except csv.Error as error:  # e.g. a field past the csv module's limit: said as the rest of a file's faults are
        raise DataError(f"{name}: {error}, after line {reader.line_num}; the models read a text of up to "
                        f"{MAX_TEXT_CHARS:,} characters") from None


def _format_hint(header: list[str], required: tuple[str, ...]) -> str:
    """Why a header lacks the columns of its format, where the header itself says: question, candidate, label
    separated by tabs (read as WikiQA's TSV, by the tab), or one column holding another separator."""
    if required == TSV_COLUMNS and {c.lower() for c in header} >= set(CSV_COLUMNS):
        return (" (a file with tabs is read as WikiQA's TSV; question, candidate and label are read from a CSV: "
                "save it separated by commas)")
    if header and header[0].lstrip().startswith(("{", "[")):
        return " (this looks like JSON; a ranking file here is a CSV or WikiQA's TSV)"
    if required == CSV_COLUMNS and len(header) == 1 and (found := next((c for c in ";|" if c in header[0]), None)):
        return f" (a CSV here is separated by commas; this header is separated by '{found}')"
    return ""


def _checked_rows(reader: csv.DictReader, name: str, required: tuple[str, ...]) -> Iterator[dict[str, str]]:
    header = [h.strip() for h in (reader.fieldnames or [])]
    lowered = {h.lower(): h for h in header}
    missing = [c for c in required if c.lower() not in lowered]
    if not header:
        raise DataError(f"{name}: the file is empty; it needs a header line ({', '.join(required)}) and rows")
    if missing:
        raise DataError(f"{name}: missing column(s) {missing}; found {header}{_format_hint(header, required)}")
    reader.fieldnames = header
    rows = 0
    for row in reader:
        if None in row or any(row.get(lowered[c.lower()]) is None for c in required):
            raise DataError(f"{name} line {reader.line_num}: wrong number of fields")
        rows += 1
        yield {c: row[lowered[c.lower()]] for c in required} | {LINE: str(reader.line_num)}
    if not rows:
        raise DataError(f"{name}: no rows")


LINE = "line number"
"""The key of a table row's line number in the file, beside its required columns (`_checked_rows`)."""


def _ranking_rows(stream: Iterable[str], first_line: str, name: str) -> Iterator[tuple[str, str, str, int]]:
    """(qid, question, candidate, label) of each row: WikiQA TSV when the first line holds a tab, else CSV."""
    if "\t" in first_line:
        return ((r["QuestionID"], r["Question"], r["Sentence"],
                 _label(r["Label"], f"{name} question {r['QuestionID']}"))
                for r in _table_rows(stream, name, "\t", TSV_COLUMNS))
    # CSV has no question id: the question text is the id.
    return ((r["question"], r["question"], r["candidate"],
             _label(r["label"], f"{name} line {r[LINE]} (question {r['question'][:60]!r})"))
            for r in _table_rows(stream, name, ",", CSV_COLUMNS))


def parse_ranking_file(raw: bytes, name: str) -> list[RankingList]:
    """An uploaded file: WikiQA TSV (by its header) or CSV with question, candidate, label."""
    text = _decode(raw, name)
    return _group(_ranking_rows(io.StringIO(text, newline=""), text.split("\n", 1)[0], name))


def read_ranking_file(path: str | Path) -> list[RankingList]:
    path = Path(path)
    if path.is_dir():
        return read_toks_folder(path)
    if not path.is_file():
        raise DataError(f"{path}: file missing")
    return parse_ranking_file(path.read_bytes(), str(path))


def _lines(handle: IO[str], path: Path) -> Iterator[str]:
    """The lines of a text file as `str.splitlines` cuts the whole text, read a line at a time;
    a byte that is not UTF-8 raises the `DataError` reading the file whole raises."""
    try:
        for line in handle:  # opened with newline="": cut at \n, \r or \r\n, nothing translated
            yield from line.splitlines()
    except UnicodeDecodeError:
        _decode(path.read_bytes(), str(path))  # raises, saying at which byte
        raise


def _toks_rows(folder: Path, stack: ExitStack) -> Iterator[tuple[str, str, str, int]]:
    """The rows of a .toks folder (see `read_toks_folder`), read a line of each file at a time."""
    paths = [folder / name for name in TOKS_FILES]
    for path in paths:
        if not path.is_file():
            raise missing_toks_file(folder, path.name)
    columns = [_lines(stack.enter_context(path.open(encoding="utf-8-sig", newline="")), path) for path in paths]
    number, label_file = 0, paths[-1]  # sim.txt; joined once, not once a row (a third of a 100,000-pair pass)
    for number, row in enumerate(itertools.zip_longest(*columns), 1):
        if None in row:  # one file ended before the others: count what each holds, as the whole-file reader says
            lengths = {name: number - 1 + (line is not None) + sum(1 for _ in column)
                       for name, line, column in zip(TOKS_FILES, row, columns, strict=True)}
            raise DataError(f"{folder}: files are not line-aligned ({lengths})")
        question, answer, qid, label = row
        yield qid.strip(), question, answer, _label(label, f"{label_file} line {number}")  # type: ignore[union-attr, arg-type]


def _file_rows(path: Path, stack: ExitStack) -> Iterator[tuple[str, str, str, int]]:
    """(qid, question, candidate, label) of each row of a ranking file or .toks folder, read as they come."""
    if path.is_dir():
        return _toks_rows(path, stack)
    if not path.is_file():
        raise DataError(f"{path}: file missing")
    # The format is told by the first line up to "\n", as `parse_ranking_file` tells it.
    with path.open(encoding="utf-8-sig", newline="\n") as head:
        try:
            first_line = head.readline()
        except UnicodeDecodeError:
            _decode(path.read_bytes(), str(path))
            raise
    return _ranking_rows(_lines_kept(stack.enter_context(path.open(encoding="utf-8-sig", newline="")), path),
                         first_line, str(path))


def _lines_kept(handle: IO[str], path: Path) -> Iterator[str]:
    """The lines of a text file with their endings (for the csv reader); UTF-8 errors as `_lines` raises them."""
    try:
        yield from handle
    except UnicodeDecodeError:
        _decode(path.read_bytes(), str(path))
        raise


def _consecutive(rows: Iterable[tuple[str, str, str, int]]) -> Iterator[RankingList]:
    """Rows -> lists, each question's rows being together (see `RankingFile.grouped`)."""
    for qid, group in itertools.groupby(rows, key=lambda row: row[0]):
        members = list(group)
        yield RankingList(qid, members[0][1], tuple(row[2] for row in members), tuple(row[3] for row in members))


@dataclass(frozen=True)
class RankingFile:
    """A ranking file (or .toks folder) on disk, read a question at a time each time it is iterated.

    Made by `open_ranking_file`, which reads it once through to check it and count it, so that a
    bad row is reported before any work starts. Iterating gives the lists `read_ranking_file`
    gives, in the same order; only the lists being used are in memory, when every question's
    rows are together in the file (`grouped`; WikiQA's files and most exports are). A file whose
    rows of one question lie apart is grouped in memory as a whole, as `read_ranking_file` does.
    """

    path: Path
    questions: int
    pairs: int
    grouped: bool

    def __len__(self) -> int:
        return self.questions

    def __iter__(self) -> Iterator[RankingList]:
        with ExitStack() as stack:
            rows = _file_rows(self.path, stack)
            yield from _consecutive(rows) if self.grouped else _group(rows)


def open_ranking_file(path: str | Path) -> RankingFile:
    """Check a ranking file (as `read_ranking_file` reads it) and count its questions and pairs,
    keeping none of it in memory; iterate the result to read its lists."""
    path = Path(path)
    pairs = 0
    seen: set[str] = set()
    grouped, current = True, None
    with ExitStack() as stack:
        for qid, *_ in _file_rows(path, stack):
            pairs += 1
            if qid != current:
                if qid in seen:
                    grouped = False
                seen.add(qid)
                current = qid
    return RankingFile(path, len(seen), pairs, grouped)


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
