"""Keyword evidence that can decide: the keyword-alone training questions, the keyword study and its card."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import MatcherFactory, tiny_config, toy_lists

from matching.evaluation.dataset import model_scores
from matching.evaluation.studies import KeywordStudy, keyword_study, scored_alone
from matching.models.base import KEYWORDS, LEARNED_MATCH
from matching.text.data import RankingList, write_toks_folder
from matching.text.embeddings import WordVectors
from matching.text.tokenized import tokenize_lists
from matching.training.cards import ModelCard, keyword_verdict, render_card
from matching.training.trainer import TrainingSettings, by_source, keywords_alone_where, train, train_and_card


def test_the_two_parts_alone_add_up_to_the_whole_score(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3)
    lists = tokenize_lists(toy_lists(0, 6))[0]
    whole = np.concatenate(model_scores(matcher, lists))
    with scored_alone(matcher, LEARNED_MATCH):
        learned = np.concatenate(model_scores(matcher, lists))
    with scored_alone(matcher, KEYWORDS):
        keywords = np.concatenate(model_scores(matcher, lists))
    assert matcher.model.scored_alone is None  # the switch is put back
    np.testing.assert_allclose(learned + keywords, whole, atol=1e-5)
    assert np.abs(keywords).max() > 1e-3 and np.abs(learned - whole).max() > 1e-3
    # The parts equal the trace's own split, the one the Rank page shows.
    explained = matcher.explain_tokens(lists[0].question, lists[0].candidates)
    np.testing.assert_allclose([e.keyword_score for e in explained], keywords[: len(explained)], atol=1e-5)
    np.testing.assert_allclose([e.learned_score for e in explained], learned[: len(explained)], atol=1e-5)


def test_the_study_counts_changed_top_answers(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3)
    lists = tokenize_lists(toy_lists(0, 8))[0]
    quiet = keyword_study(matcher, lists)
    assert isinstance(quiet, KeywordStudy) and quiet.questions == 8
    with torch.no_grad():
        matcher.model.keywords.weights.mul_(1000.0)  # keywords now decide every ranking
    loud = keyword_study(matcher, lists)
    assert loud is not None and loud.MAP == pytest.approx(loud.keywords_MAP)
    assert loud.keywords_spread > 100 * quiet.keywords_spread
    assert loud.learned_MAP == pytest.approx(quiet.learned_MAP)
    learned_top = [int(np.argmax(s)) for s in model_scores_alone(matcher, lists, LEARNED_MATCH)]
    whole_top = [int(np.argmax(s)) for s in model_scores(matcher, lists)]
    assert loud.top_changed == sum(a != b for a, b in zip(learned_top, whole_top, strict=True))
    assert keyword_study(make_matcher(seed=2, family="mvlstm"), lists) is None  # no keyword term, no study


def test_the_collection_rows_are_the_study_of_each_keyword_model(make_matcher: MatcherFactory) -> None:
    """`keyword_rows` (the Evaluate page's "which part carries each model"): for each model with a keyword term, the
    keyword study on the file's first questions; a model without one has no row."""
    from matching.evaluation.studies import keyword_rows

    matcher = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3)
    raw = toy_lists(0, 8)
    seen: list[tuple[float, str]] = []
    rows = keyword_rows(raw, {"kw": matcher, "plain": make_matcher(seed=2, family="mvlstm")}, max_questions=5,
                        progress=lambda done, name: seen.append((done, name)))
    study = keyword_study(matcher, tokenize_lists(raw)[0][:5])
    assert study is not None and study.questions == 5
    assert rows == [{"model": "kw", "MAP": study.MAP, "learned match alone": study.learned_MAP,
                     "keywords alone": study.keywords_MAP, "top answer changed": study.top_changed,
                     "questions": 5}]
    assert seen == [(0.5, "kw"), (1.0, "plain")]
    assert keyword_rows(raw, {"kw": matcher})[0]["questions"] == 8  # no cap: every question


def model_scores_alone(matcher, lists, part):  # type: ignore[no-untyped-def]
    with scored_alone(matcher, part):
        return model_scores(matcher, lists)


def test_keywords_alone_where_replaces_only_the_chosen_rows(make_matcher: MatcherFactory) -> None:
    from matching.models.batching import make_batch

    matcher = make_matcher(seed=2, family="mvlstm", keywords=True, keyword_words=3)
    lists = tokenize_lists(toy_lists(0, 1))[0]
    vectors = matcher.vectors
    questions = [vectors.encode(lists[0].question)] * len(lists[0].candidates)
    answers = [vectors.encode(c) for c in lists[0].candidates]
    batch = make_batch(questions, answers, 40, 60)
    scores = matcher.model(batch)
    solo = torch.tensor([True, False] * (len(answers) // 2) + [True] * (len(answers) % 2))
    mixed = keywords_alone_where(matcher.model, batch, scores, solo)
    with scored_alone(matcher, KEYWORDS):
        keywords = matcher.model(batch)
    torch.testing.assert_close(mixed[solo], keywords[solo])
    torch.testing.assert_close(mixed[~solo], scores[~solo])


def test_keyword_solo_is_validated_and_needs_a_keyword_term(toy_data: Path, vectors: WordVectors) -> None:
    with pytest.raises(ValueError, match="keyword_solo"):
        TrainingSettings(keyword_solo=1.0).validate()
    config = tiny_config()
    config = replace(config, settings=replace(config.settings, keyword_solo=0.5, loss="listwise"))
    lists = toy_lists(0, 8)
    with pytest.raises(ValueError, match="needs keywords"):
        train(config, lists, toy_lists(8, 10), vectors, show_progress=False)


def test_keyword_solo_training_grows_the_keyword_weights(vectors: WordVectors) -> None:
    """The same seed and data, with and without keyword-alone questions: with them the keyword weights
    must rank on their own, and end larger."""
    base = tiny_config(keywords=True)
    base = replace(base, settings=replace(base.settings, loss="listwise", max_epochs=3, learning_rate=0.01))
    sizes = []
    for solo in (0.0, 0.6):
        config = replace(base, settings=replace(base.settings, keyword_solo=solo))
        matcher, _ = train(config, toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)
        sizes.append(float(matcher.model.keywords.weights.detach().abs().sum()))
    assert sizes[1] > sizes[0] > 0


def test_a_card_reports_the_study_for_each_dev_source(tmp_path: Path, vectors: WordVectors) -> None:
    root = tmp_path / "combined"
    train_lists = [replace(item, qid=f"one:{item.qid}") for item in toy_lists(0, 8)]
    dev = [replace(item, qid=f"{source}:{item.qid}") for source, item in zip(("one", "two"), toy_lists(8, 10),
                                                                              strict=True)]
    write_toks_folder(root / "train", train_lists)
    write_toks_folder(root / "dev", dev)
    write_toks_folder(root / "test", toy_lists(10, 12))
    assert list(by_source(dev, "x")) == ["one", "two"]
    assert list(by_source([RankingList("Q1", "q", ("a",), (1,))], "x")) == ["x"]
    _, card = train_and_card(tiny_config(keywords=True), root, vectors, show_progress=False)
    assert list(card.keywords) == ["one", "two"] and card.keywords["one"].questions == 1
    again = ModelCard.from_dict(json.loads(json.dumps(card.to_dict())))
    assert again.keywords == card.keywords
    text = render_card(card)
    assert "## Does the keyword term decide?" in text and keyword_verdict(card) in text
    _, plain = train_and_card(tiny_config(), root, vectors, show_progress=False)
    assert plain.keywords == {} and "Does the keyword term decide" not in render_card(plain)


def test_an_echo_is_never_scored_by_the_keywords_alone(vectors: WordVectors) -> None:
    from matching.training.trainer import _Batches, with_echo_negatives

    tokens = with_echo_negatives(tokenize_lists(toy_lists(0, 3))[0])
    answers = [[list(c) for c in t.candidates] for t in tokens]
    questions = [list(t.question) for t in tokens]
    for loss in ("listwise", "hinge"):
        settings = TrainingSettings(loss=loss, echo_negatives=True, keyword_solo=0.5)
        batches = _Batches(tokens, questions, answers, settings, tiny_config().params, vectors)
        chunk = batches.units[:4]
        echo = batches.echo_rows(chunk)
        assert echo.shape == batches.unit_rows(chunk).shape and echo.any()
        batch, _ = batches.batch(chunk)
        rows = [list(map(int, batch.answer_ids[r][: int(batch.answer_lengths[r])])) for r in range(len(echo))]
        asked = [list(map(int, batch.question_ids[r][: int(batch.question_lengths[r])])) for r in range(len(echo))]
        assert [row == question for row, question in zip(rows, asked, strict=True)] == echo.tolist()


def test_an_echo_left_out_of_a_keyword_alone_question_adds_nothing_to_its_loss(vectors: WordVectors) -> None:
    from matching.training.trainer import _Batches, solo_scores, with_echo_negatives

    plain = tokenize_lists(toy_lists(0, 3))[0]
    echoed = with_echo_negatives(plain)
    matcher = train(tiny_config(keywords=True), toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)[0]
    model = matcher.model
    with torch.no_grad():
        model.keywords.weights.copy_(torch.tensor([1.0, -0.5, 2.0]))
    losses = {}
    for name, tokens in (("plain", plain), ("echoed", echoed)):
        settings = TrainingSettings(loss="listwise", echo_negatives=name == "echoed", keyword_solo=0.5,
                                    solo_echoes="left out")
        batches = _Batches(tokens, [list(t.question) for t in tokens],
                           [[list(c) for c in t.candidates] for t in tokens], settings, model.params, vectors)
        chunk = [unit for unit in batches.units if unit[0] == 0]  # the first question, whole
        batch, loss_of = batches.batch(chunk)
        solo = torch.ones(len(batches.unit_rows(chunk)), dtype=torch.bool)
        with torch.no_grad():
            for key, where in ((name, solo), (f"{name}, not solo", ~solo)):
                scores = solo_scores(model, batch, model(batch), where, batches.echo_rows(chunk), settings.solo_echoes)
                losses[key] = float(loss_of(scores))
    assert abs(losses["echoed"] - losses["plain"]) < 1e-5  # the echo left the keyword-alone question's loss
    assert losses["echoed, not solo"] > losses["plain, not solo"]  # and stays a wrong candidate elsewhere
    with pytest.raises(ValueError, match="solo_echoes"):
        TrainingSettings(solo_echoes="dropped").validate()


def test_with_the_echo_feature_the_keywords_alone_score_the_echo_too(vectors: WordVectors) -> None:
    from dataclasses import replace

    from matching.training.trainer import LEFT_OUT, _Batches, solo_scores, with_echo_negatives

    echoed = with_echo_negatives(tokenize_lists(toy_lists(0, 3))[0])
    config = tiny_config(keywords=True, keyword_answer_types=True, keyword_echo=True)
    settings = replace(config.settings, echo_negatives=True, keyword_solo=0.5, solo_echoes="keywords alone")
    matcher = train(replace(config, settings=settings), toy_lists(0, 8), toy_lists(8, 10), vectors,
                    show_progress=False)[0]
    model = matcher.model
    batches = _Batches(echoed, [list(t.question) for t in echoed], [[list(c) for c in t.candidates] for t in echoed],
                       settings, model.params, vectors)
    chunk = [unit for unit in batches.units if unit[0] == 0]
    batch, _ = batches.batch(chunk)
    echoes = batches.echo_rows(chunk)
    solo = torch.ones(len(echoes), dtype=torch.bool)
    with torch.no_grad():
        keywords = model.keywords(batch.question_ids, batch.answer_ids, batch.question_lengths,
                                  batch.answer_lengths)
        scores = solo_scores(model, batch, model(batch), solo, echoes, settings.solo_echoes)
    torch.testing.assert_close(scores, keywords.sum(-1))  # every row, the echo's too, by the keywords alone
    assert float(keywords[echoes, -1].abs().min()) > 0  # and the echo's own feature fires there
    with torch.no_grad():  # keywords only: the same in a keyword-alone question; elsewhere the echo leaves the loss
        learned = model(batch)
        only = solo_scores(model, batch, learned, solo, echoes, "keywords only")
        elsewhere = solo_scores(model, batch, learned, ~solo, echoes, "keywords only")
    torch.testing.assert_close(only, keywords.sum(-1))
    assert bool((elsewhere[echoes] == LEFT_OUT).all())
    torch.testing.assert_close(elsewhere[~echoes], learned[~echoes])
    # echo weight only: the same scores, and an echo's loss moves the echo feature's weight alone
    model.zero_grad()
    weighted = solo_scores(model, batch, model(batch), solo, echoes, "echo weight only")
    torch.testing.assert_close(weighted.detach(), keywords.sum(-1))
    weighted[echoes].sum().backward()
    grad = model.keywords.weights.grad
    assert grad is not None and bool((grad[:-1] == 0).all()) and float(grad[-1]) != 0
    assert all(p.grad is None or bool((p.grad == 0).all()) for n, p in model.named_parameters() if "keywords" not in n)
    without = tiny_config(keywords=True, keyword_answer_types=True)
    with pytest.raises(ValueError, match="keyword_echo"):
        train(replace(without, settings=settings), toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)


def test_the_sources_rule_ships_the_seed_with_the_best_mean_over_dev_sources() -> None:
    from matching.training.trainer import choose_seed

    def card(seed: int, dev: float, wiki: float, trec: float) -> ModelCard:
        studies = {"wikiqa": KeywordStudy(wiki, 0.7, 0.6, 1, 10, 1.0, 1.0),
                   "trecqa": KeywordStudy(trec, 0.7, 0.75, 1, 10, 1.0, 1.0)}
        return replace(ModelCard.from_dict({"name": "kw", "seed": seed, "metrics": {"dev": {"MAP": dev}}}),
                       keywords=studies)

    # Seed 1 is best over the pooled questions (more of them from wikiqa), seed 2 over the two sources alike.
    cards = [card(1, 0.74, 0.72, 0.78), card(2, 0.73, 0.70, 0.81), card(3, 0.72, 0.70, 0.79)]
    assert choose_seed(cards, "best dev MAP")[0].seed == 1
    chosen, words = choose_seed(cards, "best mean over dev sources")
    assert chosen.seed == 2 and "MAP: wikiqa, trecqa" in words
    plain = [replace(c, keywords={}) for c in cards]
    fallback, words = choose_seed(plain, "best mean over dev sources")
    assert fallback.seed == 1 and "no dev MAP per source" in words
    with pytest.raises(ValueError, match="ship_rule"):
        TrainingSettings(ship_rule="best test MAP").validate()


def test_a_keyword_solo_source_puts_every_list_of_it_to_the_keywords_alone(vectors: WordVectors) -> None:
    from matching.training.trainer import _Batches

    lists = [replace(item, qid=f"{'made' if n % 2 else 'real'}:{item.qid}") for n, item in enumerate(toy_lists(0, 6))]
    tokens = tokenize_lists(lists)[0]
    questions, answers = [list(t.question) for t in tokens], [[list(c) for c in t.candidates] for t in tokens]
    for loss in ("listwise", "hinge"):
        marked = _Batches(tokens, questions, answers, TrainingSettings(loss=loss, keyword_solo_source="made"),
                          tiny_config().params, vectors)
        plain = _Batches(tokens, questions, answers, TrainingSettings(loss=loss), tiny_config().params, vectors)
        chunk = marked.units
        made = torch.tensor([unit[0] % 2 == 1 for unit in chunk])[marked.unit_rows(chunk)]
        # With no draw, exactly the rows of the source's lists; with one, those and the drawn ones, where a run
        # without the source draws the same rows.
        assert marked.solo_rows(chunk, 0.0, torch.Generator().manual_seed(1)).tolist() == made.tolist()
        drawn = plain.solo_rows(chunk, 0.3, torch.Generator().manual_seed(1))
        both = marked.solo_rows(chunk, 0.3, torch.Generator().manual_seed(1))
        assert both.tolist() == (drawn | made).tolist() and 0 < int(drawn.sum()) < len(drawn)
    with pytest.raises(ValueError, match="no training question of that source.*made, real"):
        _Batches(tokens, questions, answers, TrainingSettings(keyword_solo_source="mad"), tiny_config().params, vectors)


def test_lists_of_a_keyword_solo_source_train_the_keyword_weights_alone(vectors: WordVectors) -> None:
    """Every training list of the source, no draw: the learned match gets no gradient (its weights stay as built,
    as in a run with no training step at all), and the keyword weights move."""
    base = tiny_config(keywords=True)
    base = replace(base, settings=replace(base.settings, loss="listwise", max_epochs=2, learning_rate=0.01,
                                          weight_decay=0.0))
    lists = [replace(item, qid=f"made:{item.qid}") for item in toy_lists(0, 8)]
    solo = replace(base, settings=replace(base.settings, keyword_solo_source="made"))
    still = replace(base, settings=replace(base.settings, learning_rate=0.0, keyword_learning_rate=0.0))
    trained = {name: train(config, lists, toy_lists(8, 10), vectors, show_progress=False)[0].model
               for name, config in (("solo", solo), ("still", still), ("whole", base))}
    learned = [key for key in trained["solo"].state_dict() if not key.startswith("keywords.")]
    assert learned
    for key in learned:
        torch.testing.assert_close(trained["solo"].state_dict()[key], trained["still"].state_dict()[key])
    assert any(not torch.equal(trained["whole"].state_dict()[key], trained["still"].state_dict()[key])
               for key in learned)
    assert not torch.equal(trained["solo"].keywords.weights, trained["still"].keywords.weights)


def test_learned_match_alone_trains_the_learned_match_as_a_model_without_keywords(vectors: WordVectors) -> None:
    """With `learned_match_alone` the learned match gets exactly the gradients of a model with no keyword term (same
    seed, same batches, one epoch so that no epoch is chosen by a dev score), while the keyword weights move; trained
    beside the keyword term as by default it ends elsewhere."""
    def trained(keywords: bool, alone: bool) -> torch.nn.Module:
        config = tiny_config(keywords=keywords)
        config = replace(config, settings=replace(config.settings, loss="listwise", max_epochs=1, batch_size=2,
                                                  learning_rate=0.01, learned_match_alone=alone))
        return train(config, toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)[0].model

    alone, plain, beside = trained(True, True), trained(False, False), trained(True, False)
    learned = [key for key in plain.state_dict() if not key.startswith("keywords.")]
    assert learned and all(key in alone.state_dict() for key in learned)
    for key in learned:
        torch.testing.assert_close(alone.state_dict()[key], plain.state_dict()[key])
    assert any(not torch.allclose(beside.state_dict()[key], plain.state_dict()[key]) for key in learned)
    assert alone.keywords.weights.detach().abs().sum() > 0
    built = tiny_config(keywords=True)
    still = train(replace(built, settings=replace(built.settings, max_epochs=1, learning_rate=0.0,
                                                  keyword_learning_rate=0.0)),
                  toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)[0].model
    assert not torch.equal(alone.keywords.weights, still.keywords.weights)


def test_learned_match_held_splits_the_scores_and_their_gradients(make_matcher: MatcherFactory) -> None:
    """The learned match's own scores and the whole with it held: their values are the model's parts and its whole
    score (echo rows out of the learned match's loss); the first's gradient reaches the learned match alone, the
    second's the keyword weights alone."""
    from matching.models.batching import make_batch
    from matching.training.trainer import LEFT_OUT, learned_match_held

    matcher = make_matcher(seed=2, family="mvlstm", keywords=True, keyword_words=3)
    lists = tokenize_lists(toy_lists(0, 1))[0]
    vectors = matcher.vectors
    questions = [vectors.encode(lists[0].question)] * len(lists[0].candidates)
    batch = make_batch(questions, [vectors.encode(c) for c in lists[0].candidates], 40, 60)
    echoes = torch.zeros(len(questions), dtype=torch.bool)
    echoes[-1] = True
    model = matcher.model
    scores = model(batch)
    learned, held = learned_match_held(model, batch, scores, echoes)
    with scored_alone(matcher, LEARNED_MATCH):
        alone = matcher.model(batch)
    torch.testing.assert_close(held, scores)
    torch.testing.assert_close(learned[:-1], alone[:-1])
    assert float(learned[-1].detach()) == LEFT_OUT
    for part, reaches_learned in ((learned[:-1].sum(), True), (held.sum(), False)):
        model.zero_grad()
        part.backward(retain_graph=True)
        moved = {name.startswith("keywords.") for name, parameter in model.named_parameters()
                 if parameter.grad is not None and float(parameter.grad.abs().sum()) > 0}
        assert moved == ({False} if reaches_learned else {True})  # {False}: the learned match; {True}: the keywords
    model.zero_grad()


def test_learned_match_alone_needs_a_keyword_term(vectors: WordVectors) -> None:
    config = tiny_config()
    config = replace(config, settings=replace(config.settings, learned_match_alone=True))
    with pytest.raises(ValueError, match="learned_match_alone.*needs keywords"):
        train(config, toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)


def test_learned_match_own_loss_adds_a_loss_and_keeps_the_whole_scores_gradient(vectors: WordVectors) -> None:
    """With `learned_match_own_loss` the learned match learns from its own score and from the whole: it ends neither
    where `learned_match_alone` (its own loss only) nor where the recipe (the whole score only) leaves it, from the
    same seed and batches; the keyword weights move; and the two settings together are refused."""
    def trained(**setting: bool) -> torch.nn.Module:
        config = tiny_config(keywords=True)
        config = replace(config, settings=replace(config.settings, loss="listwise", max_epochs=1, batch_size=2,
                                                  learning_rate=0.01, **setting))
        return train(config, toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)[0].model

    both, alone, beside = trained(learned_match_own_loss=True), trained(learned_match_alone=True), trained()
    learned = [key for key in both.state_dict() if not key.startswith("keywords.") and
               both.state_dict()[key].is_floating_point()]
    for other in (alone, beside):
        assert any(not torch.allclose(both.state_dict()[key], other.state_dict()[key]) for key in learned)
    assert both.keywords.weights.detach().abs().sum() > 0
    with pytest.raises(ValueError, match="choose one"):
        TrainingSettings(learned_match_alone=True, learned_match_own_loss=True).validate()
    config = tiny_config()
    config = replace(config, settings=replace(config.settings, learned_match_own_loss=True))
    with pytest.raises(ValueError, match="learned_match_own_loss.*needs keywords"):
        train(config, toy_lists(0, 8), toy_lists(8, 10), vectors, show_progress=False)


def test_the_section_bench_scales_the_keyword_term_from_the_parts_own_scores(make_matcher: MatcherFactory,
                                                                                tmp_path: Path) -> None:
    """`bench/section_collection.py --scales`: at c = 0 the learned match alone and at c = 1 the whole model, as
    `--parts` prints them, on each set."""
    import subprocess
    import sys

    from matching.training.checkpoint import save_checkpoint

    save_checkpoint(make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3),
                    tmp_path / "kw", {"name": "kw"})
    bench = Path(__file__).resolve().parents[1] / "bench" / "section_collection.py"
    printed = subprocess.run([sys.executable, str(bench), "--pretrained", str(tmp_path), "--models", "kw", "--parts",
                              "--scales", "--seeds"], capture_output=True, text=True, check=True, timeout=600).stdout
    def first_cells(title: str, system: str) -> tuple[int, float]:
        """The question count in a set's title, and the system's MAP in the table under it."""
        table = printed[printed.index(f"\nset {title}") + 1:]
        questions = int(table.split(": ", 1)[1].split(" questions", 1)[0])
        return questions, float(table.split(f"| {system} | ", 1)[1].split(" | ", 1)[0])

    # The sets together: every question of each set once, so their MAP is the sets' MAPs weighed by their questions.
    for system in ("kw", "BM25"):
        for pooled, names in (("A + C (the sets a choice reads)", "AC"), ("A + B + C", "ABC")):
            parts = [first_cells(f"{name}: ", system) for name in names]
            count, value = first_cells(f"{pooled}: ", system)
            assert count == sum(n for n, _ in parts) == 75 * len(names)
            assert value == pytest.approx(sum(n * v for n, v in parts) / count, abs=2e-4)
    # --seeds sums up each recipe per set and over the sets a choice reads, from the same scores.
    header, _, row = printed[printed.index("\n| recipe |") + 1:].splitlines()[:3]
    columns = [cell.strip() for cell in header.strip("| ").split("|")]
    cells = [cell.strip() for cell in row.strip("| ").split("|")]
    together = cells[next(n for n, c in enumerate(columns) if c.startswith("set A + C"))]
    pooled = first_cells("A + C (the sets a choice reads): ", "kw")[1]
    assert float(together.rsplit(": ", 1)[1]) == pytest.approx(pooled, abs=1e-4)
    for name in ("A", "B", "C"):
        part = printed[printed.index(f"set {name}: the whole score"):]
        whole, learned = (float(cell) for cell in part.split("| kw | ", 1)[1].split(" | ")[:2])
        scaled = printed[printed.index(f"set {name}: learned match + c x keyword term"):]
        header = [cell.strip() for cell in scaled.splitlines()[1].strip("| ").split("|")]
        row = [float(cell) for cell in scaled.split("| kw | ", 1)[1].split("\n", 1)[0].strip(" |").split(" | ")]
        assert len(row) == len(header) - 1
        assert row[header.index("c = 0") - 1] == pytest.approx(learned, abs=1e-4)
        assert row[header.index("c = 1") - 1] == pytest.approx(whole, abs=1e-4)


def test_the_weight_by_kind_bench_bins_every_question_once(make_matcher: MatcherFactory, tmp_path: Path) -> None:
    """`bench/keyword_weight_by_kind.py`: on set A, every table's bins hold each of its questions once, the whole set
    at c = 1 is the model's own MAP, and each row's best c is the c of its highest MAP."""
    import subprocess
    import sys

    from matching.evaluation.metrics import question_metrics
    from matching.text.data import read_ranking_file
    from matching.training.checkpoint import save_checkpoint

    bench = Path(__file__).resolve().parents[1] / "bench"
    matcher = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3)
    save_checkpoint(matcher, tmp_path / "kw", {"name": "kw"})
    printed = subprocess.run([sys.executable, str(bench / "keyword_weight_by_kind.py"), str(tmp_path / "kw")],
                             capture_output=True, text=True, check=True, timeout=600).stdout
    lists = [t for t in tokenize_lists(read_ranking_file(bench.parent / "samples" / "section-questions-a.csv"))[0]
             if 0 < sum(t.item.labels) < len(t.item.labels)]
    whole = np.mean([question_metrics(s, t.item.labels)["MAP"] for s, t in zip(model_scores(matcher, lists), lists,
                                                                                strict=True)])
    tables = printed.strip().split("\n\n")
    assert len(tables) == 6  # all questions, four features, the wh-word
    for text in tables:
        header = [cell.strip() for cell in text.splitlines()[1].strip("| ").split("|")]
        rows = [[cell.strip() for cell in line.strip("| ").split("|")] for line in text.splitlines()[3:]]
        assert sum(int(row[header.index("questions")]) for row in rows) == len(lists)
        for row in rows:
            maps = [float(row[header.index(f"c = {c}")]) for c in ("0", "0.25", "0.5", "1", "1.5", "2", "3", "5")]
            assert float(row[-1]) == [0, 0.25, 0.5, 1, 1.5, 2, 3, 5][int(np.argmax(maps))]
    header = [cell.strip() for cell in tables[0].splitlines()[1].strip("| ").split("|")]
    all_questions = [cell.strip() for cell in tables[0].splitlines()[3].strip("| ").split("|")]
    assert float(all_questions[header.index("c = 1")]) == pytest.approx(whole, abs=1e-4)
