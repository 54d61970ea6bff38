"""Paper tables: the paper's rows beside the checkpoints that stand for them, with paired tests and verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from matching.evaluation.paper_tables import (
    ECIR_TABLE1_WIKIQA,
    ORIGINAL,
    SEEDS_COLUMN,
    PaperTable,
    Reference,
    against_original,
    paper_table,
    settings_of,
)

REFERENCE = {"table": "T1", "source": "a paper", "metrics": ["MRR", "MAP"], "missing": "no second data set here",
             "rows": [{"row": "Net", "setting": "Original", "MRR": 0.5, "MAP": 0.4},
                      {"row": "Net", "setting": "(Q)", "MRR": 0.6, "MAP": 0.5},
                      {"row": "Other", "setting": "Original", "MRR": 0.3, "MAP": 0.2},
                      {"row": "Other", "setting": "(Q)", "MRR": 0.2, "MAP": 0.1}]}


def write(folder: Path, name: str, paper: dict[str, str]) -> None:
    (folder / f"{name}.json").write_text(json.dumps({"name": name, "paper": paper}), encoding="utf-8")


def test_settings_come_from_the_configs_that_name_the_table(tmp_path: Path) -> None:
    write(tmp_path, "net", {"table": "T1", "row": "Net", "setting": ORIGINAL})
    write(tmp_path, "net-q", {"table": "T1", "row": "Net", "setting": "(Q)"})
    write(tmp_path, "elsewhere", {"table": "T2", "row": "Net", "setting": "(Q)"})
    (tmp_path / "not-a-config.txt").write_text("x", encoding="utf-8")
    assert settings_of(tmp_path, "T1") == {"net": ("Net", ORIGINAL), "net-q": ("Net", "(Q)")}


def test_rows_paired_tests_and_verdicts(tmp_path: Path) -> None:
    reference = Reference(**{**REFERENCE, "metrics": tuple(REFERENCE["metrics"]), "rows": tuple(REFERENCE["rows"])})
    settings = {"net": ("Net", ORIGINAL), "net-q": ("Net", "(Q)")}
    rng = np.random.default_rng(0)
    original = rng.uniform(0.2, 0.6, 60)
    aps = {"net": original, "net-q": np.clip(original + 0.3, 0, 1)}  # (Q) far above the Original everywhere
    tests = against_original(aps, settings)
    assert list(tests) == ["net-q"] and tests["net-q"].baseline == "net" and tests["net-q"].p_value < 0.01
    assert tests["net-q"].difference == pytest.approx(float(np.mean(aps["net-q"] - original)))
    test = {"net": {"MRR": 0.55, "MAP": float(original.mean())},
            "net-q": {"MRR": 0.8, "MAP": float(aps["net-q"].mean())}}
    table = paper_table(reference, settings, test, {"net-q": "0.7 ± 0.01"}, tests)
    rows = {(r["row"], r["setting"]): r for r in table.rows}
    assert rows[("Net", "(Q)")]["model"] == "net-q" and rows[("Net", "(Q)")]["paper MAP"] == 0.5
    assert rows[("Net", "(Q)")][SEEDS_COLUMN] == "0.7 ± 0.01"
    assert rows[("Other", ORIGINAL)]["model"] == "not trained here" and rows[("Other", ORIGINAL)]["ours MAP"] is None
    assert table.verdicts[0].startswith("Net: (Q) beats the Original here, significantly")
    assert table.verdicts[1].startswith("Other: not checked here yet") and "(Q) 0.1000 against Original 0.2000" in \
        table.verdicts[1]
    # A row whose paper has (Q) below its Original makes no claim to confirm (it read "the claim is not confirmed").
    other = {"other": ("Other", ORIGINAL), "other-q": ("Other", "(Q)")}
    other_aps = {"other": original, "other-q": np.clip(original + 0.01 * rng.standard_normal(60), 0, 1)}
    checked = paper_table(reference, other, {n: {"MAP": float(a.mean())} for n, a in other_aps.items()}, {},
                          against_original(other_aps, other))
    said = next(v for v in checked.verdicts if v.startswith("Other:"))
    assert "the paper's own row has (Q) below its Original" in said and "claim is not confirmed" not in said
    path = tmp_path / "tables.json"
    path.write_text(table.to_json(), encoding="utf-8")
    again = PaperTable.read(path)
    assert again.rows == table.rows and again.verdicts == table.verdicts and again.reference.missing


def test_the_shipped_table_names_every_row_of_the_paper_and_its_checkpoints() -> None:
    root = Path(__file__).resolve().parent.parent
    reference = Reference.read(ECIR_TABLE1_WIKIQA)
    assert len(reference.rows) == 20 and {r["setting"] for r in reference.rows} == {ORIGINAL, "(Q)", "(A)", "(Q+A)"}
    shipped = PaperTable.read(root / "pretrained" / "paper-tables.json")
    assert [(r["row"], r["setting"]) for r in shipped.rows] == [(r["row"], r["setting"]) for r in reference.rows]
    for name, (row, setting) in settings_of(root / "configs", reference.table).items():
        assert (root / "pretrained" / name).is_dir()
        found = next(r for r in shipped.rows if (r["row"], r["setting"]) == (row, setting))
        card = json.loads((root / "pretrained" / name / "card.json").read_text(encoding="utf-8"))
        assert found["model"] == name and found["ours MAP"] == round(card["metrics"]["test"]["MAP"], 4)


def test_the_trecqa_table_reads_and_has_no_settings_to_compare() -> None:
    from matching.evaluation.paper_tables import MCAN_TABLE2_TRECQA

    reference = Reference.read(MCAN_TABLE2_TRECQA)
    assert reference.test.startswith("TrecQA") and ("MCAN (FM)", "TRAIN-ALL") in {(r["row"], r["setting"])
                                                                                 for r in reference.rows}
    mcan = next(r for r in reference.rows if r["row"] == "MCAN (FM)")
    assert (mcan["MAP"], mcan["MRR"]) == (0.838, 0.904)
    table = paper_table(reference, {"ours": ("MCAN (FM)", "TRAIN-ALL")}, {"ours": {"MAP": 0.7, "MRR": 0.8}},
                        {"ours": "0.7000 ± 0.0100 (n=3)"}, {})
    row = next(r for r in table.rows if r["model"] == "ours")
    assert row["ours MAP"] == 0.7 and row[SEEDS_COLUMN].endswith("(n=3)") and "vs Original: p" not in row
    assert table.verdicts == []
    unreported = next(r for r in table.rows if r["row"] == "MV-LSTM")
    assert unreported["paper MAP"] is None and unreported["model"] == "not trained here"
