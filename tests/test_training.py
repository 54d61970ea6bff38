"""A tiny training run: a per-epoch log, one selected epoch, reproducible from its seed."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import tiny_config, tiny_params, toy_lists

from matching.evaluation.metrics import METRICS
from matching.explain.matcher import Matcher
from matching.models import build_model
from matching.models.blocks import normalised_entropy
from matching.models.params import params_to_dict
from matching.text.baselines import BASELINES
from matching.text.corpus import Corpus
from matching.text.data import RankingList, fingerprint
from matching.text.embeddings import WordVectors
from matching.text.tokenized import tokenize_lists
from matching.training.cards import ModelCard
from matching.training.checkpoint import load_checkpoint
from matching.training.trainer import (
    TrainingConfig,
    TrainingSettings,
    architecture_text,
    average_states,
    dev_map,
    drop_words,
    load_config,
    make_optimizer,
    save_trained,
    train,
    training_pairs,
    with_echo_negatives,
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


def test_progress_in_a_log_is_one_plain_line_an_epoch(vectors: WordVectors,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Written to a file or a pipe (not a terminal), training says one line an epoch, no bars."""
    _, log = train(tiny_config(), TRAIN, DEV, vectors, show_progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(log)
    assert all(line.startswith(f"{tiny_config().name} (seed ") and "dev MAP" in line for line in lines)
    assert not any(control in line for line in lines for control in ("\r", "\x1b"))


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


def test_hard_negatives_repeat_the_pairs_of_the_most_overlapping_wrong_candidates() -> None:
    lists = [RankingList("A", "who wrote the novel frankenstein",
                         ("mary shelley wrote it", "the novel frankenstein is famous", "a cat", "who wrote the novel"),
                         (1, 0, 0, 0))]
    tokenized, _ = tokenize_lists(lists)
    plain = training_pairs(tokenized)
    assert plain == [(0, 0, 1), (0, 0, 2), (0, 0, 3)]
    # Overlap with the question: "who wrote the novel" 4, "the novel frankenstein is famous" 3, "a cat" 0.
    assert training_pairs(tokenized, hard_negative_copies=2) == [*plain, (0, 0, 3), (0, 0, 1), (0, 0, 3), (0, 0, 1)]


def test_hinge_negatives_draw_that_many_wrong_candidates_of_the_question_per_correct_one() -> None:
    lists = [RankingList("A", "who", ("x", "y", "z", "w", "v"), (1, 0, 1, 0, 0)),
             RankingList("B", "what", ("u", "t"), (1, 0))]
    tokenized, _ = tokenize_lists(lists)
    every = set(training_pairs(tokenized))
    drawn = training_pairs(tokenized, negatives_each=2, draw=random.Random(3))
    assert set(drawn) <= every  # only pairs of one question, correct with wrong
    assert [sum(1 for n, p, _ in drawn if (n, p) == key) for key in ((0, 0), (0, 2), (1, 0))] == [2, 2, 1]
    assert all(len({q for n, p, q in drawn if (n, p) == key}) == count for key, count in (((0, 0), 2), ((0, 2), 2)))
    assert drawn == training_pairs(tokenized, negatives_each=2, draw=random.Random(3))  # seeded
    draws = {tuple(training_pairs(tokenized, negatives_each=1, draw=random.Random(seed))) for seed in range(8)}
    assert len(draws) > 1  # drawn afresh, not always the same ones


def test_echo_negatives_add_the_question_as_a_wrong_candidate() -> None:
    tokenized, _ = tokenize_lists(toy_lists(0, 2))
    echoed = with_echo_negatives(tokenized)
    for before, after in zip(tokenized, echoed, strict=True):
        assert after.item.candidates == (*before.item.candidates, before.item.question)
        assert after.item.labels == (*before.item.labels, 0)
        assert [t.key for t in after.candidates[-1]] == [t.key for t in before.question]
        assert after.candidates[:-1] == before.candidates


def test_word_dropout_marks_real_words_only_and_is_seeded(vectors: WordVectors) -> None:
    from matching.models.batching import make_batch

    texts = [vectors.encode(tokenize_lists([item])[0][0].question) for item in toy_lists(0, 6)]
    batch = make_batch(texts, texts[::-1], 40, 60)
    same = drop_words(batch, 0.0, torch.Generator().manual_seed(1))
    assert torch.equal(same.question_unknown, batch.question_unknown)
    dropped = drop_words(batch, 0.5, torch.Generator().manual_seed(1))
    for unknown, before, lengths in ((dropped.question_unknown, batch.question_unknown, batch.question_lengths),
                                     (dropped.answer_unknown, batch.answer_unknown, batch.answer_lengths)):
        real = torch.arange(unknown.shape[1])[None, :] < lengths[:, None]
        assert not (unknown & ~real).any()  # padding stays padding
        assert (unknown & ~before).any()  # some real words now read as unknown
        assert (unknown | ~before).all()  # none that was unknown becomes known
    again = drop_words(batch, 0.5, torch.Generator().manual_seed(1))
    assert torch.equal(again.answer_unknown, dropped.answer_unknown)
    assert torch.equal(dropped.answer_ids, batch.answer_ids)  # exact match still sees the words


def test_training_options_train_and_are_checked(vectors: WordVectors) -> None:
    for options in ({"word_dropout": 0.2}, {"echo_negatives": True}, {"hard_negative_copies": 1},
                    {"hinge_negatives": 1}):
        config = tiny_config()
        config = replace(config, settings=replace(config.settings, **options))
        matcher, log = train(config, TRAIN, DEV, vectors, show_progress=False)
        assert all(math.isfinite(entry["train_loss"]) for entry in log)
    with pytest.raises(ValueError, match="word_dropout"):
        train(replace(tiny_config(), settings=replace(tiny_config().settings, word_dropout=1.0)), TRAIN, DEV, vectors,
              show_progress=False)
    with pytest.raises(ValueError, match="needs the hinge loss"):
        train(replace(tiny_config(), settings=replace(tiny_config().settings, hard_negative_copies=1,
                                                      loss="listwise")), TRAIN, DEV, vectors, show_progress=False)
    for options, message in (({"hinge_negatives": 1, "loss": "listwise"}, "needs the hinge loss"),
                             ({"hinge_negatives": -1}, "hinge_negatives must be"),
                             ({"hinge_negatives": 1, "hard_negative_copies": 1}, "choose one")):
        with pytest.raises(ValueError, match=message):
            train(replace(tiny_config(), settings=replace(tiny_config().settings, **options)), TRAIN, DEV, vectors,
                  show_progress=False)


def test_no_training_pair_is_an_error(vectors: WordVectors) -> None:
    only_wrong = [RankingList("A", "who wrote hamlet", ("nobody", "someone"), (0, 0))]
    with pytest.raises(ValueError, match="no \\(correct, wrong\\) candidate pair"):
        train(tiny_config(), only_wrong, DEV, vectors, show_progress=False)


def test_shipped_configs_load() -> None:
    configs = sorted((REPO / "configs").glob("**/*.json"))
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


def test_train_and_card(trained: tuple[Matcher, ModelCard], toy_data: Path, vectors: WordVectors,
                        tmp_path: Path) -> None:
    matcher, card = trained
    assert card.name == "tiny" and card.params == params_to_dict(matcher.params)
    assert card.seed == 3 and card.epochs_run == len(card.log) == 2
    assert sum(entry["selected"] for entry in card.log) == 1
    assert card.kept_epochs == [next(e["epoch"] for e in card.log if e["selected"])]
    for split in ("dev", "test"):
        assert set(card.metrics[split]) == set(METRICS)
        assert list(card.baselines[split]) == list(BASELINES)
    assert card.metrics["dev"]["MAP"] == pytest.approx(card.log[card.kept_epochs[0] - 1]["dev_MAP"])
    assert card.data["train"] == {"fingerprint": fingerprint(TRAIN), "questions": 8, "pairs": 32}
    assert card.data["test"]["questions"] == 2
    assert card.vocabulary == vectors.describe()
    assert "--seed 3" in card.command
    assert card.environment.startswith(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), cpu: ")
    # The CPU's vector instructions decide the float rounding, so two cards tell whether their runs could match.
    assert card.environment.endswith(f"{torch.backends.cpu.get_cpu_capability()})")
    assert [t.baseline for t in card.significance] == list(BASELINES)
    assert all(0 < t.p_value <= 1 and t.questions == 2 for t in card.significance)
    assert card.attention is None and card.group == "as in the paper"
    json.dumps(card.to_dict())  # card.json must be plain JSON
    save_trained(matcher, card, tmp_path / "tiny")
    assert (tmp_path / "tiny" / "README.md").read_text(encoding="utf-8").startswith("# Model card: tiny")
    loaded = load_checkpoint(tmp_path / "tiny", vectors)
    assert ModelCard.from_dict(loaded.card) == card
    np.testing.assert_array_equal(scores_on_test(loaded), scores_on_test(matcher))


def test_dev_without_a_correct_candidate_is_an_error(vectors: WordVectors) -> None:
    # Otherwise every dev MAP is NaN, no epoch is ever selected and the untrained model is returned.
    no_answers = [RankingList(item.qid, item.question, item.candidates, (0,) * len(item.labels)) for item in DEV]
    with pytest.raises(ValueError, match="dev data has no question with a correct candidate"):
        train(tiny_config(), TRAIN, no_answers, vectors, show_progress=False)


def settings_config(seed: int = 3, settings: dict[str, Any] | None = None, **overrides: object) -> TrainingConfig:
    base = tiny_config(seed, **overrides)
    return replace(base, settings=replace(base.settings, **(settings or {})))


def test_listwise_loss_with_weight_averaging(vectors: WordVectors) -> None:
    config = settings_config(settings={"loss": "listwise", "batch_size": 3, "max_epochs": 3, "average_epochs": 2})
    matcher, log = train(config, TRAIN, DEV, vectors, show_progress=False)
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert [e["selected"] for e in log] == [False, True, True]
    assert all(math.isfinite(e["train_loss"]) and e["train_loss"] > 0 for e in log)
    assert log[-1]["averaged_dev_MAP"] == pytest.approx(dev_map(matcher, tokenize_lists(DEV)[0]))
    again, _ = train(config, TRAIN, DEV, vectors, show_progress=False)
    np.testing.assert_array_equal(scores_on_test(matcher), scores_on_test(again))


def test_one_run_gives_the_dev_map_of_every_averaging_window(vectors: WordVectors) -> None:
    # Two sources, as in a combined folder: each question's id starts with its source's name.
    dev = [RankingList(f"{'a' if n % 2 else 'b'}:{item.qid}", item.question, item.candidates, item.labels)
           for n, item in enumerate(DEV)]
    fixed = {"loss": "listwise", "batch_size": 3, "max_epochs": 3}
    _, log = train(settings_config(settings={**fixed, "average_epochs": 3}), TRAIN, dev, vectors, show_progress=False)
    windows = log[-1]["dev_MAP_averaging_the_last"]
    assert sorted(windows) == ["1", "2", "3"] and all(sorted(w) == ["a", "b", "dev"] for w in windows.values())
    assert windows["3"]["dev"] == pytest.approx(log[-1]["averaged_dev_MAP"], abs=1e-12)
    assert windows["1"]["dev"] == pytest.approx(log[-1]["dev_MAP"], abs=1e-12)  # the last epoch's own weights
    # The window of 2 is what average_epochs 2 ships from the same run (same seed, so the same epochs).
    shorter, log_2 = train(settings_config(settings={**fixed, "average_epochs": 2}), TRAIN, dev, vectors,
                           show_progress=False)
    assert windows["2"]["dev"] == pytest.approx(log_2[-1]["averaged_dev_MAP"], abs=1e-12)
    by_source = {source: [t for t in tokenize_lists(dev)[0] if t.item.qid.startswith(f"{source}:")] for source in "ab"}
    for source, lists in by_source.items():
        assert windows["2"][source] == pytest.approx(dev_map(shorter, lists), abs=1e-12)
    assert sorted(log_2[-1]["dev_MAP_averaging_the_last"]) == ["1", "2"]


def test_average_states_is_the_mean_of_the_weights() -> None:
    states = [{"w": torch.tensor([1.0, 3.0]), "ids": torch.tensor([1])},
              {"w": torch.tensor([3.0, 5.0]), "ids": torch.tensor([2])}]
    averaged = average_states(states)
    assert averaged["w"].tolist() == [2.0, 4.0] and averaged["ids"].tolist() == [2]


def test_listwise_loss_needs_a_question_with_both_labels(vectors: WordVectors) -> None:
    only_wrong = [RankingList("A", "who wrote hamlet", ("nobody", "someone"), (0, 0))]
    with pytest.raises(ValueError, match="both correct and wrong"):
        train(settings_config(settings={"loss": "listwise"}), only_wrong, DEV, vectors, show_progress=False)
    with pytest.raises(ValueError, match="unknown loss"):
        train(settings_config(settings={"loss": "pointwise"}), TRAIN, DEV, vectors, show_progress=False)


def test_entropy_penalty_sharpens_attention(vectors: WordVectors) -> None:
    def entropy(penalty: float) -> float:
        config = settings_config(settings={"entropy_penalty": penalty, "max_epochs": 2, "patience": 9},
                                 family="amvlstm", attention="question")
        matcher, _ = train(config, TRAIN, DEV, vectors, show_progress=False)
        explanations = [e for t in tokenize_lists(TEST)[0] for e in matcher.explain_tokens(t.question, t.candidates)]
        alphas = [torch.from_numpy(e.question_attention)[None] for e in explanations]
        return float(torch.cat([normalised_entropy(a, torch.ones_like(a, dtype=torch.bool)) for a in alphas]).mean())

    assert entropy(50.0) < entropy(0.0)


def test_attention_vectors_can_skip_weight_decay() -> None:
    model = build_model(tiny_params("amvlstm", attention="both"))
    decayed = make_optimizer(model, TrainingSettings(weight_decay=0.1))
    assert len(decayed.param_groups) == 1
    spared = make_optimizer(model, TrainingSettings(weight_decay=0.1, attention_weight_decay=False))
    gate_weights = {id(gate.v.weight) for gate in model.gates.values()}  # type: ignore[union-attr]
    assert {id(p) for p in spared.param_groups[1]["params"]} == gate_weights
    assert spared.param_groups[1]["weight_decay"] == 0.0 and spared.param_groups[0]["weight_decay"] == 0.1


def test_idf_table_from_the_training_answers(vectors: WordVectors) -> None:
    tokenized, _ = tokenize_lists(TRAIN)
    ids, values = Corpus.of((c for t in tokenized for c in t.candidates if c), vectors).idf
    by_id = dict(zip(ids.tolist(), values.tolist(), strict=True))
    the, tower = vectors.key_ids(["the", "tower"]).tolist()
    assert 0 < by_id[the] < by_id[tower] <= 1
    config = settings_config(exact_match="idf")
    matcher, _ = train(config, TRAIN, DEV, vectors, show_progress=False)
    assert matcher.params.idf_words == len(ids)
    assert matcher.model.idf is not None
    torch.testing.assert_close(matcher.model.idf(torch.tensor([the, -5])), torch.tensor([by_id[the], 1.0]))


def test_fit_on_dev_trains_on_train_and_dev_with_a_fixed_schedule(vectors: WordVectors) -> None:
    """Dev joins the training data only with a schedule that needs no dev (weight averaging)."""
    with pytest.raises(ValueError, match="fixed schedule"):
        train(settings_config(settings={"fit_on_dev": True}), TRAIN, DEV, vectors, show_progress=False)
    fixed = {"loss": "listwise", "batch_size": 3, "max_epochs": 2, "average_epochs": 2}
    on_train, _ = train(settings_config(settings=fixed), TRAIN, DEV, vectors, show_progress=False)
    on_both, _ = train(settings_config(settings={**fixed, "fit_on_dev": True}), TRAIN, DEV, vectors,
                       show_progress=False)
    # Same seed and schedule: only the extra dev questions can make the two models differ.
    assert not np.array_equal(scores_on_test(on_train), scores_on_test(on_both))
    just_dev_added, _ = train(settings_config(settings=fixed), [*TRAIN, *DEV], DEV, vectors, show_progress=False)
    np.testing.assert_array_equal(scores_on_test(on_both), scores_on_test(just_dev_added))


def test_a_sweep_fitted_on_dev_ships_the_seed_fixed_in_its_config(toy_data: Path, vectors: WordVectors,
                                                                  tmp_path: Path) -> None:
    from matching.training.trainer import seed_study

    fixed = {"loss": "listwise", "batch_size": 3, "max_epochs": 2, "average_epochs": 2, "fit_on_dev": True}
    config = settings_config(seed=2, settings=fixed)
    run, card = seed_study(config, toy_data, [1, 2], tmp_path, vectors=vectors, show_progress=False)
    assert run == tmp_path / config.name / "seed-2" and card.seed == 2
    assert card.seed_study is not None and card.seed_study.selection.startswith("seed 2, fixed in the config")
    assert any("train + dev" in line for line in card.deviations)
    with pytest.raises(ValueError, match="not among"):
        seed_study(settings_config(seed=7, settings=fixed), toy_data, [1, 2], tmp_path, vectors=vectors,
                   show_progress=False)


def test_a_sweep_adopts_an_ablations_runs_only_where_their_recipe_is_the_configs(toy_data: Path, vectors: WordVectors,
                                                                                 tmp_path: Path) -> None:
    """An ablation measured and adopted: its seed runs, moved under the config's name, ship under that name and
    description; a run whose recipe differs in anything but the seed is refused."""
    from matching.training.checkpoint import load_checkpoint
    from matching.training.trainer import seed_study, ship

    fixed = {"batch_size": 3, "max_epochs": 1}
    ablation = replace(settings_config(seed=1, settings=fixed, keywords=True), name="tiny-with-keywords")
    seed_study(ablation, toy_data, [1], tmp_path, vectors=vectors, show_progress=False)
    (tmp_path / "tiny").mkdir()
    (tmp_path / ablation.name / "seed-1").rename(tmp_path / "tiny" / "seed-1")
    adopted = replace(ablation, name="tiny", description="the variant, with keywords")
    run, card = seed_study(adopted, toy_data, [1], tmp_path, vectors=vectors, show_progress=False)
    assert run == tmp_path / "tiny" / "seed-1"
    assert card.name == "tiny" and card.description == "the variant, with keywords"
    ship(run, card, tmp_path / "shipped" / "tiny", vectors)
    assert load_checkpoint(tmp_path / "shipped" / "tiny", vectors).name == "tiny"
    with pytest.raises(ValueError, match=r"was trained as tiny-with-keywords, whose recipe differs .*\(keywords\)"):
        seed_study(settings_config(seed=1, settings=fixed), toy_data, [1], tmp_path, vectors=vectors,
                   show_progress=False)
    # Runs of the config's own name trained with another recipe (the recipe changed since) are refused too.
    own = settings_config(seed=1, settings=fixed)
    seed_study(own, toy_data, [1], tmp_path / "own", vectors=vectors, show_progress=False)
    with pytest.raises(ValueError, match=rf"with a recipe that differs from {own.name}'s .*\(training.max_epochs\)"):
        seed_study(replace(own, settings=replace(own.settings, max_epochs=2)), toy_data, [1], tmp_path / "own",
                   vectors=vectors, show_progress=False)


def test_the_keyword_weights_can_have_their_own_learning_rate(make_matcher) -> None:  # type: ignore[no-untyped-def]
    from matching.training.trainer import TrainingSettings, make_optimizer

    model = make_matcher(family="mvlstm", keywords=True, keyword_words=3).model
    groups = make_optimizer(model, TrainingSettings(learning_rate=1e-3, keyword_learning_rate=0.05)).param_groups
    assert [g["lr"] for g in groups] == [1e-3, 0.05] and groups[1]["params"] == [model.keywords.weights]
    assert len(make_optimizer(model, TrainingSettings(learning_rate=1e-3)).param_groups) == 1


def test_the_tuned_word_offsets_can_have_their_own_learning_rate(make_matcher) -> None:  # type: ignore[no-untyped-def]
    from matching.training.trainer import TrainingSettings, make_optimizer

    model = make_matcher(family="mvlstm", keywords=True, keyword_words=3, tune_vectors=True, tuned_words=4).model
    settings = TrainingSettings(learning_rate=1e-3, keyword_learning_rate=0.05, tuned_vectors_learning_rate=1e-4)
    groups = make_optimizer(model, settings).param_groups
    assert [g["lr"] for g in groups] == [1e-3, 0.05, 1e-4]
    assert groups[1]["params"] == [model.keywords.weights] and groups[2]["params"] == [model.tuned_words.offsets]
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))  # each parameter once
