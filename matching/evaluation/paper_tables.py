"""Paper tables: a paper's table, row by row, beside MatchLens's figures for the same setting.

The paper's figures are reference data (`papers/*.json` beside this file, each naming its source); which
shipped checkpoint stands for which row and setting is recorded in that checkpoint's training config
(`paper.table`, `paper.row`, `paper.setting`). MatchLens's figures come from the cards (test metrics
and the 5-seed spread) and from one evaluation of the test split (each setting's paired test against
its row's Original), made by `python -m matching paper-tables`, which writes the result as JSON
(the app's view) and CSV (the export). Nothing here is typed in but the paper's own numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from matching.evaluation.studies import PairedTest, p_text, paired_tests

ECIR_TABLE1_WIKIQA = Path(__file__).resolve().parent / "papers" / "ecir2019-table1-wikiqa.json"
"""The WikiQA half of the ECIR 2019 paper's Table 1, as printed there (reference data, its source named inside)."""
MCAN_TABLE2_TRECQA = Path(__file__).resolve().parent / "papers" / "mcan2018-table2-trecqa.json"
"""The MCAN paper's Table 2 (TrecQA clean, every system trained on TRAIN-ALL), as printed there."""
ORIGINAL = "Original"
SEEDS_COLUMN = "ours MAP over seeds"
SETTINGS = (ORIGINAL, "(Q)", "(A)", "(Q+A)")
"""The settings of the ECIR paper's table: no omega, omega on the question, on the answer, on both."""


@dataclass(frozen=True)
class Reference:
    """A paper's table: its name, source, metric columns, what is left out, and its rows."""

    table: str
    source: str
    metrics: tuple[str, ...]
    missing: str
    rows: tuple[dict[str, Any], ...]
    test: str = "WikiQA's standard test split"
    """The test split our figures beside the paper's are on."""

    @classmethod
    def read(cls, path: str | Path) -> Reference:
        return cls.of(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Reference:
        return cls(raw["table"], raw["source"], tuple(raw["metrics"]), raw.get("missing", ""), tuple(raw["rows"]),
                   raw.get("test", cls.test))


def settings_of(configs: str | Path, table: str) -> dict[str, tuple[str, str]]:
    """Checkpoint name -> (row, setting) for every training config whose paper entry names `table`."""
    found = {}
    for path in sorted(Path(configs).glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        paper = raw.get("paper", {})
        if paper.get("table") == table:
            found[raw["name"]] = (paper["row"], paper["setting"])
    return found


def against_original(aps: Mapping[str, np.ndarray], settings: Mapping[str, tuple[str, str]]) -> dict[str, PairedTest]:
    """Each setting's paired test (per-question AP, the same questions) against its row's Original."""
    originals = {row: name for name, (row, setting) in settings.items() if setting == ORIGINAL and name in aps}
    pairs = [(name, originals[row]) for name, (row, setting) in settings.items()
             if setting != ORIGINAL and name in aps and row in originals]
    if not pairs:
        return {}
    tests = paired_tests([aps[name] for name, _ in pairs], [aps[original] for _, original in pairs],
                         [original for _, original in pairs])
    return {name: test for (name, _), test in zip(pairs, tests, strict=True)}


@dataclass(frozen=True)
class PaperTable:
    """The paper's rows beside ours, and a verdict per row of the paper (family)."""

    reference: Reference
    rows: list[dict[str, Any]]
    verdicts: list[str] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)

    def to_json(self) -> str:
        return json.dumps({"reference": asdict(self.reference), "rows": self.rows, "verdicts": self.verdicts},
                          indent=1)

    @classmethod
    def read(cls, path: str | Path) -> PaperTable:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(Reference.of(raw["reference"]), raw["rows"], raw["verdicts"])


def paper_table(reference: Reference, settings: Mapping[str, tuple[str, str]], test: Mapping[str, Mapping[str, float]],
                spread: Mapping[str, str], tests: Mapping[str, PairedTest]) -> PaperTable:
    """Every row of the paper's table beside ours (`test`: each checkpoint's test metrics from its card;
    `spread`: its test MAP over seeds, mean ± sd (n); `tests`: its paired test against its row's Original)."""
    ours = {setting: name for name, setting in settings.items() if name in test}
    compares_settings = any(r["setting"] == ORIGINAL for r in reference.rows)
    rows = []
    for paper_row in reference.rows:
        key = (paper_row["row"], paper_row["setting"])
        name = ours.get(key)
        row: dict[str, Any] = {"row": key[0], "setting": key[1], "model": name or "not trained here"}
        for metric in reference.metrics:
            row[f"paper {metric}"] = paper_row[metric]
            row[f"ours {metric}"] = None if name is None or metric not in test[name] else \
                round(float(test[name][metric]), 4)
        row[SEEDS_COLUMN] = spread.get(name, "") if name else ""
        if compares_settings:  # a table of omega settings: each one's paired test against its row's Original
            paired = tests.get(name) if name else None
            row["vs Original: ΔMAP"] = None if paired is None else round(paired.difference, 4)
            row["vs Original: p"] = None if paired is None else round(paired.p_value, 4)
        rows.append(row)
    return PaperTable(reference, rows, verdicts(rows))


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """For each row of the paper: does omega on the question, (Q), beat the Original here, as the paper claims?"""
    found = []
    for family in dict.fromkeys(r["row"] for r in rows):
        by_setting = {r["setting"]: r for r in rows if r["row"] == family}
        original, question = by_setting.get(ORIGINAL), by_setting.get("(Q)")
        if original is None or question is None:
            continue
        claim = (f"the paper: (Q) {question['paper MAP']:.4f} against Original {original['paper MAP']:.4f} MAP "
                 f"({question['paper MAP'] - original['paper MAP']:+.4f})")
        if original["ours MAP"] is None or question["ours MAP"] is None:
            missing = [s for s, r in ((ORIGINAL, original), ("(Q)", question)) if r["ours MAP"] is None]
            found.append(f"{family}: not checked here yet, no checkpoint for {' and '.join(missing)}; {claim}.")
            continue
        difference, p = question["vs Original: ΔMAP"], question["vs Original: p"]
        if question["paper MAP"] <= original["paper MAP"]:  # the paper's own row puts (Q) below: no claim to confirm
            reading = (f"(Q) is {'above' if difference > 0 else 'not above'} the Original here"
                       f"{', significantly' if p < 0.05 else ''}; the paper's own row has (Q) below its Original, so "
                       "this row makes no claim for (Q) to check")
        elif difference > 0 and p < 0.05:
            reading = "(Q) beats the Original here, significantly: the paper's claim holds"
        elif difference > 0:
            reading = "(Q) is above the Original here, but not significantly: the claim is not confirmed"
        else:
            reading = "(Q) does not beat the Original here: the claim does not hold on this split"
        found.append(f"{family}: {reading} ({question['ours MAP']:.4f} against {original['ours MAP']:.4f} MAP, "
                     f"{difference:+.4f}, p = {p_text(p)}); {claim}.")
    return found
