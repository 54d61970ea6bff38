"""Checkpoints round-trip exactly; every kind of broken checkpoint is a clear CheckpointError."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import MatcherFactory

from matching.explain.matcher import Matcher
from matching.text.embeddings import WordVectors
from matching.text.tokens import tokenize
from matching.training.checkpoint import (
    CARD,
    CONFIG,
    WEIGHTS,
    CheckpointError,
    load_all,
    load_checkpoint,
    save_checkpoint,
)

QUESTION = "who wrote hamlet ?"
CANDIDATES = ["shakespeare wrote it", "a zzqxv play", "hamlet is a play by william shakespeare"]


def scores(matcher: Matcher) -> np.ndarray:
    return np.array([e.score for e in matcher.explain(QUESTION, CANDIDATES)])


def test_round_trip_gives_identical_scores(variant_matcher: Matcher, vectors: WordVectors, tmp_path: Path) -> None:
    card = {"name": variant_matcher.name, "metrics": {"dev": {"MAP": 0.5}}}
    save_checkpoint(variant_matcher, tmp_path / "model", card)
    assert {p.name for p in (tmp_path / "model").iterdir()} == {WEIGHTS, CONFIG, CARD}
    loaded = load_checkpoint(tmp_path / "model", vectors)
    assert loaded.name == variant_matcher.name
    assert loaded.params == variant_matcher.params
    assert loaded.card == card and loaded.path == tmp_path / "model"
    assert not loaded.model.training
    np.testing.assert_array_equal(scores(loaded), scores(variant_matcher))
    for key, value in variant_matcher.model.state_dict().items():
        assert torch.equal(loaded.model.state_dict()[key], value)


def test_without_card(make_matcher: MatcherFactory, vectors: WordVectors, tmp_path: Path) -> None:
    save_checkpoint(make_matcher(name="plain"), tmp_path / "plain")
    assert not (tmp_path / "plain" / CARD).exists()
    assert load_checkpoint(tmp_path / "plain", vectors).card == {}


SAVED_FAMILIES = {"mvlstm": {"family": "mvlstm"},
                  "matchpyramid-q": {"family": "matchpyramid", "attention": "question"}}


@pytest.fixture(params=list(SAVED_FAMILIES))
def saved(request: pytest.FixtureRequest, make_matcher: MatcherFactory, tmp_path: Path) -> Path:
    """A good tiny checkpoint of each family, with a card, ready to be damaged."""
    folder = tmp_path / "tiny"
    save_checkpoint(make_matcher(name="tiny", **SAVED_FAMILIES[request.param]), folder, {"name": "tiny"})
    return folder


def edit_config(folder: Path, change: Callable[[dict[str, Any]], None]) -> None:
    config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    change(config)
    (folder / CONFIG).write_text(json.dumps(config), encoding="utf-8")


def random_bytes(folder: Path) -> None:
    size = (folder / WEIGHTS).stat().st_size
    (folder / WEIGHTS).write_bytes(random.Random(0).randbytes(size))


def cut_in_half(folder: Path) -> None:
    raw = (folder / WEIGHTS).read_bytes()
    (folder / WEIGHTS).write_bytes(raw[: len(raw) // 2])


def wrong_weights_family(folder: Path) -> None:
    """A config that gains (mvlstm -> amvlstm) or loses (attention -> none) the gate's weights."""
    def change(config: dict[str, Any]) -> None:
        params = config["params"]
        params.update(family="amvlstm", attention="question") if params["family"] == "mvlstm" else params.update(
            attention="none")
    edit_config(folder, change)


def wrong_shape(folder: Path) -> None:
    edit_config(folder, lambda c: c["params"].update(
        hidden_size=8) if c["params"]["family"] == "mvlstm" else c["params"].update(kernel_count=5))


def non_finite_weights(folder: Path) -> None:
    from safetensors.torch import load_file, save_file

    weights = load_file(str(folder / WEIGHTS))
    weights["head.out.bias"] = torch.tensor([float("nan")])
    save_file(weights, str(folder / WEIGHTS))


DAMAGES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    # name: (damage, file the message must name, what it must say)
    "random bytes": (random_bytes, WEIGHTS, "corrupt or truncated"),
    "truncated": (cut_in_half, WEIGHTS, "corrupt or truncated"),
    "empty weights": (lambda f: (f / WEIGHTS).write_bytes(b""), WEIGHTS, "corrupt or truncated"),
    "missing weights": (lambda f: (f / WEIGHTS).unlink(), WEIGHTS, "missing"),
    "missing config": (lambda f: (f / CONFIG).unlink(), CONFIG, "missing"),
    "wrong shape": (wrong_shape, WEIGHTS, "wrong shapes"),
    "missing weights keys": (wrong_weights_family, WEIGHTS, "do not match the config"),
    "non-finite weights": (non_finite_weights, WEIGHTS, "non-finite"),
    "unknown format version": (lambda f: edit_config(f, lambda c: c.update(format_version=2)), CONFIG,
                               "unknown format version 2"),
    "not matchlens": (lambda f: edit_config(f, lambda c: c.update(format="other")), CONFIG,
                      "not a MatchLens checkpoint"),
    "wrong vocabulary": (lambda f: edit_config(f, lambda c: c["vocabulary"].update(fingerprint="sha256:0")),
                         CONFIG, "vocabulary"),
    "vocabulary not an object": (lambda f: edit_config(f, lambda c: c.update(vocabulary="glove")), CONFIG,
                                 "vocabulary"),
    "invalid JSON": (lambda f: (f / CONFIG).write_text("{\"format\": ", encoding="utf-8"), CONFIG,
                     "not valid JSON"),
    "config not UTF-8": (lambda f: (f / CONFIG).write_bytes(b"\xff\xfe{}"), CONFIG, "not valid JSON"),
    "config is a list": (lambda f: (f / CONFIG).write_text("[1, 2]", encoding="utf-8"), CONFIG,
                         "JSON object"),
    "unknown param": (lambda f: edit_config(f, lambda c: c["params"].update(temperature=2.0)), CONFIG,
                      "unknown parameters"),
    "mistyped param": (lambda f: edit_config(f, lambda c: c["params"].update(dropout="high")), CONFIG,
                       "dropout"),
    "unknown family": (lambda f: edit_config(f, lambda c: c["params"].update(family="bert")), CONFIG,
                       "unknown model family"),
    "invalid card": (lambda f: (f / CARD).write_text("not json", encoding="utf-8"), CARD, "not valid JSON"),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_broken_checkpoint_is_a_clear_error(saved: Path, vectors: WordVectors, damage: str) -> None:
    apply, file_name, message = DAMAGES[damage]
    apply(saved)
    with pytest.raises(CheckpointError, match=message) as caught:
        load_checkpoint(saved, vectors)
    assert str(saved / file_name) in str(caught.value)


def test_missing_folder(vectors: WordVectors, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="not found") as caught:
        load_checkpoint(tmp_path / "nowhere", vectors)
    assert str(tmp_path / "nowhere") in str(caught.value)


def test_load_all_skips_a_broken_checkpoint(make_matcher: MatcherFactory, vectors: WordVectors,
                                            tmp_path: Path) -> None:
    good = make_matcher(seed=1, name="good-model")
    save_checkpoint(good, tmp_path / "good")
    save_checkpoint(make_matcher(seed=2, name="bad-model"), tmp_path / "bad")
    cut_in_half(tmp_path / "bad")
    save_checkpoint(make_matcher(seed=3, name="hidden"), tmp_path / ".hidden")
    (tmp_path / "notes.txt").write_text("not a checkpoint", encoding="utf-8")
    loaded, errors = load_all(tmp_path, vectors)
    assert list(loaded) == ["good-model"]
    assert list(errors) == ["bad"] and str(tmp_path / "bad" / WEIGHTS) in errors["bad"]
    np.testing.assert_array_equal(scores(loaded["good-model"]), scores(good))


def test_load_all_names_a_repeated_name_by_its_folder(make_matcher: MatcherFactory, vectors: WordVectors,
                                                      tmp_path: Path) -> None:
    for seed in (1, 2):  # the seeds of one configuration carry the configuration's name
        save_checkpoint(make_matcher(seed=seed, name="same"), tmp_path / f"same-seed-{seed}")
    loaded, errors = load_all(tmp_path, vectors)
    assert list(loaded) == ["same", "same-seed-2"] and not errors
    assert not np.array_equal(scores(loaded["same"]), scores(loaded["same-seed-2"]))


def test_load_all_without_a_folder(vectors: WordVectors, tmp_path: Path) -> None:
    loaded, errors = load_all(tmp_path / "missing", vectors)
    assert loaded == {} and "not found" in errors[str(tmp_path / "missing")]


def test_loaded_model_scores_tokens(saved: Path, vectors: WordVectors) -> None:
    matcher = load_checkpoint(saved, vectors)
    values = matcher.score_tokens([tokenize(QUESTION)] * 3, [tokenize(c) for c in CANDIDATES])
    np.testing.assert_allclose(values, scores(matcher), atol=1e-5, rtol=0)
