"""CSV exports: spreadsheet formulas in user text are made inert, numbers stay numbers."""

from __future__ import annotations

import csv
import io

from matching.explain.export import inert_cell, rows_to_csv


def test_formula_cells_get_an_apostrophe() -> None:
    assert inert_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert inert_cell("+1") == "'+1" and inert_cell("@SUM(A1)") == "'@SUM(A1)" and inert_cell("-2+3") == "'-2+3"
    assert inert_cell("plain text") == "plain text"
    assert inert_cell(-1.5) == -1.5 and inert_cell(3) == 3 and inert_cell(None) is None


def test_rows_to_csv_round_trip() -> None:
    rows = [{"#": 1, "candidate": "=cmd|' /C calc'!A0", "score": -0.25},
            {"#": 2, "candidate": "Hamlet, by \"Shakespeare\"", "score": 1.0}]
    parsed = list(csv.DictReader(io.StringIO(rows_to_csv(rows).decode("utf-8"))))
    assert parsed[0]["candidate"] == "'=cmd|' /C calc'!A0" and parsed[0]["score"] == "-0.25"
    assert parsed[1]["candidate"] == "Hamlet, by \"Shakespeare\""
    assert rows_to_csv([]) == b""
