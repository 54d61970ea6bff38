"""Exports people open in spreadsheets: CSV with user text made inert."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping

# A cell starting with one of these is run as a formula by spreadsheet programs.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def inert_cell(value: object) -> object:
    """Text that a spreadsheet would evaluate gets a leading apostrophe; numbers pass as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def rows_to_csv(rows: Iterable[Mapping[str, object]]) -> bytes:
    """UTF-8 CSV of plain rows (the header from the first row), every text cell made inert."""
    rows = list(rows)
    if not rows:
        return b""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: inert_cell(value) for key, value in row.items()})
    return buffer.getvalue().encode("utf-8")
