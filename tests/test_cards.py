"""Model cards render every part of card.json for people."""

from __future__ import annotations

import copy
from typing import Any

from matching.baselines import BASELINES
from matching.cards import KNOWN_LIMITS, metrics_rows, render_card
from matching.matcher import Matcher


def test_metrics_rows(trained: tuple[Matcher, dict[str, Any]]) -> None:
    _, card = trained
    test_rows = metrics_rows(card, "test")
    assert [row["system"] for row in test_rows] == ["tiny", *BASELINES, "paper: paper model"]
    assert test_rows[0]["MAP"] == card["metrics"]["test"]["MAP"]
    assert test_rows[-1] == {"system": "paper: paper model", "MAP": 0.6, "MRR": 0.62}
    assert [row["system"] for row in metrics_rows(card, "dev")] == ["tiny", *BASELINES]


def test_render_card(trained: tuple[Matcher, dict[str, Any]]) -> None:
    _, card = trained
    text = render_card(card)
    assert text.startswith("# Model card: tiny\n")
    for part in (card["architecture"], card["command"], card["vocabulary"]["fingerprint"],
                 card["data"]["train"]["fingerprint"], "| paper: paper model | 0.6000 | 0.6200 | - | - | - |",
                 *KNOWN_LIMITS):
        assert part in text
    assert text.count(" selected |") == 1
    assert "Seed study" not in text


def test_render_card_with_seed_study(trained: tuple[Matcher, dict[str, Any]]) -> None:
    card = copy.deepcopy(trained[1])
    card["seed_study"] = {"seeds": [1, 2], "test_MAP": [0.5, 0.7], "dev_MAP": [0.6, 0.4], "mean": 0.6, "std": 0.1414}
    text = render_card(card)
    assert "## Seed study" in text and "0.5000 0.7000 -> mean 0.6000 ± 0.1414" in text
