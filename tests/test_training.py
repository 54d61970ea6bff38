"""A tiny training run: a per-epoch log, one selected epoch, reproducible from its seed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import tiny_config, toy_lists

from matching.baselines import BASELINES
from matching.checkpoint import load_checkpoint
from matching.data import RankingList, fingerprint
from matching.embeddings import WordVectors
from matching.evaluation import tokenize_lists
from matching.matcher import Matcher
from matching.metrics import METRICS
from matching.params import params_to_dict
from matching.training import (
    architecture_text,
    dev_map,
    load_config,
    save_trained,
    train,
    training_pairs,
)

TRAIN, DEV, TEST = toy_lists(0, 8), toy_lists(8, 10), toy_lists(10, 12)
REPO = Path(__file__).resolve().parent.parent


def scores_on_test(matcher: Matcher) -> np.ndarray:
    tokenized, _ = tokenize_lists(TEST)
    return np.concatenate([matcher.score_tokens([t.question] * len(t.candidates), t.candidates) for t in tokenized])


def test_train_logs_every_epoch_and_selects_one(vectors: WordVectors) -> None:
    seen: list[dict[str, float]] = []
    matcher, log = train(tiny_config(), TRAIN, DEV, vectors, on_epoch=seen.append, show_progress=False)
    assert [entry["epoch"] for entry in log] == [1, 2]
    assert seen == log
    for entry in log:
        assert set(entry) == {"epoch", "train_loss", "dev_MAP", "seconds", "selected"}
        assert math.isfinite(entry["train_loss"]) and entry["train_loss"] >= 0
        assert 0.0 < entry["dev_MAP"] <= 1.0
    selected = [entry for entry in log if entry["selected"]]
    assert len(selected) == 1
    best = max(entry["dev_MAP"] for entry in log)
    assert selected[0]["epoch"] == next(entry["epoch"] for entry in log if entry["dev_MAP"] == best)
    # The returned model is the selected epoch's, in eval mode.
    assert not matcher.model.training
    assert dev_map(matcher, tokenize_lists(DEV)[0]) == pytest.approx(selected[0]["dev_MAP"])


def test_same_seed_same_model(vectors: WordVectors) -> None:
    first, log_1 = train(tiny_config(seed=4), TRAIN, DEV, vectors, show_progress=False)
    second, log_2 = train(tiny_config(seed=4), TRAIN, DEV, vectors, show_progress=False)
    other, _ = train(tiny_config(seed=5), TRAIN, DEV, vectors, show_progress=False)
    np.testing.assert_array_equal(scores_on_test(first), scores_on_test(second))
    strip = [{k: v for k, v in entry.items() if k != "seconds"} for entry in log_1]
    assert strip == [{k: v for k, v in entry.items() if k != "seconds"} for entry in log_2]
    assert not np.array_equal(scores_on_test(first), scores_on_test(other))


def test_training_pairs_are_correct_wrong_pairs_of_one_question() -> None:
    lists = [RankingList("A", "who", ("x", "y", "z", " "), (1, 0, 1, 0)),
             RankingList("B", "what", ("u", "v"), (0, 0))]
    tokenized, _ = tokenize_lists(lists)
    assert training_pairs(tokenized) == [(0, 0, 1), (0, 2, 1)]  # the wordless candidate is left out


def test_no_training_pair_is_an_error(vectors: WordVectors) -> None:
    only_wrong = [RankingList("A", "who wrote hamlet", ("nobody", "someone"), (0, 0))]
    with pytest.raises(ValueError, match="no \\(correct, wrong\\) candidate pair"):
        train(tiny_config(), only_wrong, DEV, vectors, show_progress=False)


def test_shipped_configs_load() -> None:
    configs = sorted((REPO / "configs").glob("*.json"))
    assert configs
    for path in configs:
        config = load_config(path)
        assert config.name == path.stem
        assert config.settings.max_epochs >= 1


def test_load_config(tmp_path: Path) -> None:
    raw = {"name": "mine", "model": {"family": "amvlstm", "hidden_size": 4, "attention": "answer"},
           "training": {"seed": 9, "max_epochs": 1}}
    (tmp_path / "mine.json").write_text(json.dumps(raw), encoding="utf-8")
    config = load_config(tmp_path / "mine.json")
    assert config.params.family == "amvlstm" and config.params.hidden_size == 4
    assert config.settings.seed == 9 and config.settings.max_epochs == 1 and config.paper == {}


def test_architecture_text_names_the_parts() -> None:
    text = architecture_text(tiny_config(family="amvlstm", attention="both", interaction="tensor").params)
    for part in ("attention gate on the question and answer sides", "tensor layer with 2 slices", "k = 5",
                 "4 hidden units"):
        assert part in text
    assert "attention" not in architecture_text(tiny_config().params)


def test_train_and_card(trained: tuple[Matcher, dict[str, Any]], toy_data: Path, vectors: WordVectors,
                        tmp_path: Path) -> None:
    matcher, card = trained
    assert card["name"] == "tiny" and card["params"] == params_to_dict(matcher.params)
    assert card["seed"] == 3 and card["epochs_run"] == len(card["log"]) == 2
    assert sum(entry["selected"] for entry in card["log"]) == 1
    assert card["best_epoch"] == next(e["epoch"] for e in card["log"] if e["selected"])
    for split in ("dev", "test"):
        assert set(card["metrics"][split]) == set(METRICS)
        assert list(card["baselines"][split]) == list(BASELINES)
    assert card["metrics"]["dev"]["MAP"] == pytest.approx(card["log"][card["best_epoch"] - 1]["dev_MAP"])
    assert card["data"]["train"] == {"fingerprint": fingerprint(TRAIN), "questions": 8, "pairs": 32}
    assert card["data"]["test"]["questions"] == 2
    assert card["vocabulary"] == vectors.describe()
    assert "--seed 3" in card["command"]
    json.dumps(card)  # card.json must be plain JSON
    save_trained(matcher, card, tmp_path / "tiny")
    assert (tmp_path / "tiny" / "README.md").read_text(encoding="utf-8").startswith("# Model card: tiny")
    loaded = load_checkpoint(tmp_path / "tiny", vectors)
    assert loaded.card == json.loads(json.dumps(card))
    np.testing.assert_array_equal(scores_on_test(loaded), scores_on_test(matcher))


def test_dev_without_a_correct_candidate_is_an_error(vectors: WordVectors) -> None:
    # Otherwise every dev MAP is NaN, no epoch is ever selected and the untrained model is returned.
    no_answers = [RankingList(item.qid, item.question, item.candidates, (0,) * len(item.labels)) for item in DEV]
    with pytest.raises(ValueError, match="dev data has no question with a correct candidate"):
        train(tiny_config(), TRAIN, no_answers, vectors, show_progress=False)
