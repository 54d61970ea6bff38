"""A model taught by the mean score of other checkpoints (`TrainingSettings.teachers`, knowledge distillation)."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import tiny_config, toy_lists

from matching.__main__ import main
from matching.evaluation.dataset import model_scores
from matching.models.params import params_to_dict
from matching.text.embeddings import WordVectors
from matching.text.tokenized import tokenize_lists
from matching.training import score_cache, trainer
from matching.training.cards import ModelCard
from matching.training.checkpoint import CheckpointError, load_checkpoint
from matching.training.trainer import (
    TrainingSettings,
    _Batches,
    load_config,
    recipe_differences,
    save_trained,
    teacher_scores,
    train,
    train_and_card,
)


def listwise(seed: int, **settings: object):  # type: ignore[no-untyped-def]
    config = tiny_config(seed=seed, keywords=True)
    return replace(config, settings=replace(config.settings, loss="listwise", max_epochs=1, batch_size=2,
                                            learning_rate=0.01, **settings))


@pytest.fixture(scope="module")
def teachers(tmp_path_factory: pytest.TempPathFactory, toy_data: Path, vectors: WordVectors) -> tuple[str, ...]:
    """Two checkpoints of the tiny keyword model, seeds 1 and 2, trained on the toy data."""
    root = tmp_path_factory.mktemp("teachers")
    folders = []
    for seed in (1, 2):
        matcher, card = train_and_card(listwise(seed), toy_data, vectors, show_progress=False)
        save_trained(matcher, card, root / f"seed-{seed}")
        folders.append(str(root / f"seed-{seed}"))
    return tuple(folders)


def test_the_teachers_score_is_the_mean_of_their_scores(teachers: tuple[str, ...], vectors: WordVectors) -> None:
    lists = tokenize_lists(toy_lists(0, 8))[0]
    each = [model_scores(load_checkpoint(Path(folder), vectors), lists) for folder in teachers]
    mean = teacher_scores(teachers, lists, vectors, show_progress=False)
    assert len(mean) == len(lists)
    for n, scores in enumerate(mean):
        np.testing.assert_allclose(scores, (each[0][n] + each[1][n]) / 2, rtol=0, atol=1e-12)
    assert not np.allclose(np.concatenate(each[0]), np.concatenate(each[1]))  # two different teachers


def test_the_taught_term_is_the_cross_entropy_with_the_teachers_softmax_over_the_kept_rows(
        vectors: WordVectors) -> None:
    """Per question: -sum softmax(t / T) log softmax(s / T) over its kept rows, times T squared; the mean over the
    questions with two kept rows or more (one kept row has nothing to rank)."""
    config = listwise(1, teacher_temperature=2.0)
    lists = tokenize_lists(toy_lists(0, 3))[0]
    questions = [t.question for t in lists]
    answers = [list(t.candidates) for t in lists]
    batches = _Batches(lists, questions, answers, config.settings, config.params, vectors)
    generator = np.random.default_rng(0)
    batches.teacher = [generator.normal(size=len(t.candidates)) for t in lists]
    chunk = batches.units[:3]
    rows = sum(len(js) for _, js in chunk)
    scores = torch.tensor(generator.normal(size=rows))
    kept = torch.ones(rows, dtype=torch.bool)
    kept[0] = False  # the first question loses one row
    sizes = [len(js) for _, js in chunk]
    kept[sizes[0]: sizes[0] + sizes[1] - 1] = False  # the second keeps one row only: it adds nothing
    expected, start = [], 0
    for (n, js), size in zip(chunk, sizes, strict=True):
        keep = kept[start: start + size].numpy()
        if keep.sum() >= 2:
            teacher = np.array([batches.teacher[n][j] for j in js])[keep] / 2.0
            student = scores[start: start + size].numpy()[keep] / 2.0
            target = np.exp(teacher - teacher.max()) / np.exp(teacher - teacher.max()).sum()
            log_student = student - student.max() - np.log(np.exp(student - student.max()).sum())
            expected.append(-(target * log_student).sum() * 4.0)
        start += size
    assert len(expected) == 2
    assert float(batches.taught(chunk, scores, kept)) == pytest.approx(np.mean(expected), abs=1e-9)
    assert float(batches.taught(chunk, scores, torch.zeros(rows, dtype=torch.bool))) == 0.0


def test_teachers_at_weight_zero_change_nothing_and_at_weight_one_move_the_model(
        teachers: tuple[str, ...], vectors: WordVectors) -> None:
    def trained(**settings: object) -> dict[str, torch.Tensor]:
        return train(listwise(3, keyword_solo=0.3, **settings), toy_lists(0, 8), toy_lists(8, 10), vectors,
                     show_progress=False)[0].model.state_dict()

    plain, silent, taught = trained(), trained(teachers=teachers, teacher_weight=0.0), trained(teachers=teachers)
    floats = [key for key, value in plain.items() if value.is_floating_point()]
    for key in floats:
        torch.testing.assert_close(silent[key], plain[key], rtol=0, atol=0)
    assert any(not torch.allclose(taught[key], plain[key]) for key in floats)


def test_a_teachers_scores_are_kept_and_read_back_instead_of_scored_again(
        teachers: tuple[str, ...], vectors: WordVectors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other seeds of a taught setting read each teacher's scores from the cache: the same numbers, bit for bit,
    with no teacher loaded. Other lists, another checkpoint or other scoring code are another key."""
    lists = tokenize_lists(toy_lists(0, 8))[0]
    scored = teacher_scores(teachers, lists, vectors, show_progress=False, cache=tmp_path)
    assert len(list((tmp_path / "teacher-scores").glob("*.npz"))) == len(teachers)

    def no_loading(*args: object, **kwargs: object) -> None:
        raise AssertionError("a teacher was loaded: its scores were not read from the cache")

    monkeypatch.setattr(trainer, "load_checkpoint", no_loading)
    kept = teacher_scores(teachers, lists, vectors, show_progress=False, cache=tmp_path)
    for first, again in zip(scored, kept, strict=True):
        np.testing.assert_array_equal(again, first)
    with pytest.raises(AssertionError, match="not read from the cache"):  # other lists: scored
        teacher_scores(teachers, tokenize_lists(toy_lists(0, 7))[0], vectors, show_progress=False, cache=tmp_path)
    monkeypatch.setattr(score_cache, "source_fingerprint", lambda: "other code")
    with pytest.raises(AssertionError, match="not read from the cache"):  # other scoring code: scored
        teacher_scores(teachers, lists, vectors, show_progress=False, cache=tmp_path)


def test_a_damaged_cache_file_is_scored_again(teachers: tuple[str, ...], vectors: WordVectors, tmp_path: Path) -> None:
    lists = tokenize_lists(toy_lists(0, 8))[0]
    scored = teacher_scores(teachers[:1], lists, vectors, show_progress=False, cache=tmp_path)
    (kept,) = (tmp_path / "teacher-scores").glob("*.npz")
    kept.write_bytes(kept.read_bytes()[:40])  # cut short, as by a full disk
    again = teacher_scores(teachers[:1], lists, vectors, show_progress=False, cache=tmp_path)
    np.testing.assert_array_equal(np.concatenate(again), np.concatenate(scored))
    assert score_cache._read(kept, [len(t.candidates) for t in lists]) is not None  # written whole again


def test_a_model_taught_from_the_cache_trains_as_one_taught_from_its_teachers(
        teachers: tuple[str, ...], vectors: WordVectors, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def trained() -> dict[str, torch.Tensor]:
        return train(listwise(3, keyword_solo=0.3, teachers=teachers), toy_lists(0, 8), toy_lists(8, 10), vectors,
                     show_progress=False)[0].model.state_dict()

    monkeypatch.setenv(score_cache.CACHE_VARIABLE, str(tmp_path))
    first = trained()  # scores the teachers and keeps their scores
    assert len(list((tmp_path / "teacher-scores").glob("*.npz"))) == len(teachers)
    second = trained()  # reads them
    for key, value in first.items():
        torch.testing.assert_close(second[key], value, rtol=0, atol=0)


def test_teachers_are_validated() -> None:
    with pytest.raises(ValueError, match="listwise"):
        TrainingSettings(loss="hinge", teachers=("somewhere",)).validate()
    with pytest.raises(ValueError, match="teacher_temperature"):
        TrainingSettings(loss="listwise", teachers=("somewhere",), teacher_temperature=0.0).validate()
    with pytest.raises(ValueError, match="teacher_weight"):
        TrainingSettings(loss="listwise", teachers=("somewhere",), teacher_weight=-1.0).validate()


def test_a_missing_teacher_is_named(vectors: WordVectors, tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="teacher checkpoint folder.*nowhere.*train the teachers first"):
        train(listwise(3, teachers=(str(tmp_path / "nowhere"),)), toy_lists(0, 8), toy_lists(8, 10), vectors,
              show_progress=False)


def test_train_takes_the_teachers_from_the_config_or_the_command_line(
        teachers: tuple[str, ...], toy_data: Path, tmp_path: Path) -> None:
    """A config's JSON list of teachers loads as the settings' tuple, `--teachers` replaces it, the card's command
    names them, and a card read back differs from its own config in nothing."""
    config = listwise(2, teachers=teachers[:1])
    raw = {"name": "taught-tiny", "description": "", "model": params_to_dict(config.params),
           "training": asdict(config.settings), "paper": {}}
    path = tmp_path / "taught-tiny.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    loaded = load_config(path)
    assert loaded.settings.teachers == teachers[:1]
    main(["train", "--config", str(path), "--data", str(toy_data), "--out", str(tmp_path / "run"),
          "--teachers", *teachers])
    card = ModelCard.from_dict(json.loads((tmp_path / "run" / "card.json").read_text(encoding="utf-8")))
    assert card.training["teachers"] == list(teachers)
    assert card.command.endswith(f"--teachers {' '.join(teachers)}")
    assert any("taught by the mean score of 2 trained checkpoint(s)" in line for line in card.deviations)
    assert recipe_differences(card, replace(loaded, settings=replace(loaded.settings, teachers=teachers))) == []
    assert recipe_differences(card, loaded) == ["training.teachers"]
