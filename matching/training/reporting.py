"""The README's tables, built from the shipped cards and the run folders (never typed by hand)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from matching.evaluation.dataset import Evaluation
from matching.evaluation.studies import paired_test
from matching.training.cards import PAPER_GROUP, ModelCard, markdown_table, seed_line, trained_on_dev

TESTED_AGAINST = ("original order", "word overlap")
"""The baselines every model's paired test is reported against in the tables."""


def model_row(card: ModelCard) -> dict[str, Any]:
    """One model's line: test metrics, seed spread, paired tests, attention figures."""
    test = card.metrics.get("test", {})
    tests = {t.baseline: t for t in card.significance}
    attention = card.attention
    row: dict[str, Any] = {"model": card.name, "test MAP": test.get("MAP"), "seeds: mean ± sd": seed_line(card),
                           # fitted on train + dev: its dev MAP is a training figure, not shown as a result
                           "dev MAP": None if trained_on_dev(card) else card.metrics.get("dev", {}).get("MAP"),
                           "test MRR": test.get("MRR"),
                           "test P@1": test.get("P@1")}
    for baseline in TESTED_AGAINST:
        found = tests.get(baseline)
        row[f"vs {baseline}: ΔMAP (p)"] = f"{found.difference:+.4f} ({found.p_value:.3f})" if found else None
    row["entropy"] = attention.entropy if attention else None
    row["top-weight ratio"] = attention.top_weight_ratio if attention else None
    row["uniform-α MAP"] = attention.uniform_MAP if attention else None
    row["permuted-α MAP"] = attention.permuted_MAP if attention else None
    row["paper MAP"] = card.paper.get("MAP")
    row["train s"] = round(card.training_seconds) if card.training_seconds else None
    return row


def models_table(raw_cards: Iterable[Mapping[str, Any]]) -> str:
    """Shipped models grouped (as in the paper, then MatchLens variants), then the baselines."""
    cards = sorted((ModelCard.from_dict(dict(c)) for c in raw_cards), key=lambda c: (c.group != PAPER_GROUP, c.name))
    sections = []
    for group in dict.fromkeys(c.group for c in cards):
        sections.append(f"**{group}**\n\n" + markdown_table([model_row(c) for c in cards if c.group == group]))
    if cards:
        first = cards[0]
        baselines = [{"baseline": name, "test MAP": values.get("MAP"), "dev MAP": first.baselines["dev"][name]["MAP"],
                      "test MRR": values.get("MRR"), "test P@1": values.get("P@1")}
                     for name, values in first.baselines.get("test", {}).items()]
        sections.append("**baselines** (same tie rule)\n\n" + markdown_table(baselines))
        seconds = [c.training_seconds for c in cards if c.training_seconds]
        if seconds:
            sections.append(f"Training time of the shipped runs: {sum(seconds) / 60:.0f} min for {len(seconds)} runs "
                            f"(longest {max(seconds) / 60:.1f} min); a 5-seed study of every configuration is "
                            f"about 5 x that: {5 * sum(seconds) / 3600:.1f} h on the machine and load they ran on.")
    return "\n\n".join(sections)


def runs_table(work: Path) -> str:
    """Every configuration trained under `work`: test MAP per seed, mean ± std, dev MAP mean."""
    rows = []
    for folder in sorted(p for p in work.iterdir() if p.is_dir()):
        cards = [ModelCard.from_dict(json.loads(c.read_text(encoding="utf-8")))
                 for c in sorted(folder.glob("seed-*/card.json"))]
        if not cards:
            continue
        test = [c.metrics["test"]["MAP"] for c in cards]
        dev = [c.metrics["dev"]["MAP"] for c in cards]
        attention = [c.attention for c in cards if c.attention]
        rows.append({"configuration": folder.name, "seeds": " ".join(str(c.seed) for c in cards),
                     "test MAP per seed": " ".join(f"{x:.4f}" for x in test),
                     "test MAP mean ± std": f"{np.mean(test):.4f} ± {np.std(test, ddof=1):.4f}" if len(test) > 1
                     else f"{test[0]:.4f}",
                     "dev MAP mean": None if any(trained_on_dev(c) for c in cards) else float(np.mean(dev)),
                     "entropy mean": float(np.mean([a.entropy for a in attention])) if attention else None,
                     "uniform-α MAP mean": float(np.mean([a.uniform_MAP for a in attention])) if attention else None})
    return markdown_table(rows)


def evaluation_notes(result: Evaluation, cards: Mapping[str, Mapping[str, Any]]) -> str:
    """Beside `evaluate`'s metric table: each model's seed spread (from its card) and paired
    randomisation tests on this data's per-question AP against the baselines."""
    rows = [row for row in result.per_question if row["correct"]]
    lines = []
    for name, raw in cards.items():
        card = ModelCard.from_dict({"name": name, **raw})
        row: dict[str, Any] = {"model": name, "seeds (card): test MAP mean ± sd": seed_line(card)}
        for baseline in TESTED_AGAINST:
            test = paired_test([float(r[f"{name} AP"]) for r in rows],  # type: ignore[arg-type]
                               [float(r[f"{baseline} AP"]) for r in rows], baseline)  # type: ignore[arg-type]
            row[f"vs {baseline}: ΔMAP"] = test.difference
            row[f"vs {baseline}: p"] = test.p_value
        lines.append(row)
    return ("Paired randomisation test on per-question AP (two-sided); seed spread from each model's card:\n\n"
            + markdown_table(lines))
