"""Model cards: typed, rendered for people with every part of card.json."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from scipy.stats import ttest_ind

from matching.evaluation.studies import AttentionStudy, KeywordStudy
from matching.explain.matcher import Matcher
from matching.text.baselines import BASELINES
from matching.training.cards import (
    ECHO_LIMITS,
    KEYWORD_PUNCTUATION_LIMIT,
    KNOWN_LIMITS,
    PAPER_GROUP,
    READ_AT_ONCE,
    VARIANT_GROUP,
    ModelCard,
    SeedStudy,
    attention_verdict,
    data_name,
    description_parts,
    deviations,
    group_of,
    known_limits,
    metrics_rows,
    render_card,
    sentences,
    typed_card,
)
from matching.training.reporting import models_table, runs_table


def test_metrics_rows(trained: tuple[Matcher, ModelCard]) -> None:
    _, card = trained
    test_rows = metrics_rows(card, "test")
    assert [row["system"] for row in test_rows] == ["tiny", *BASELINES, "paper: paper model"]
    assert test_rows[0]["MAP"] == card.metrics["test"]["MAP"]
    assert test_rows[-1] == {"system": "paper: paper model", "MAP": 0.6, "MRR": 0.62}
    assert [row["system"] for row in metrics_rows(card, "dev")] == ["tiny", *BASELINES]


def test_render_card(trained: tuple[Matcher, ModelCard]) -> None:
    _, card = trained
    text = render_card(card)
    assert text.startswith("# Model card: tiny\n")
    for part in (card.architecture, card.command, card.vocabulary["fingerprint"],
                 card.data["train"]["fingerprint"], "| paper: paper model | 0.6000 | 0.6200 | - | - | - |",
                 "## Deviations from the paper", "k = 5 (paper: 5 for QA)", "## Is the difference real?",
                 "| word overlap | ", *known_limits(card)):
        assert part in text
    assert text.count(" kept |") == 1
    assert f"with MatchLens {card.code_version}, on {card.environment} (the same command" in text
    assert "Seed study" not in text and "Does the attention matter" not in text


def test_markdown_tables_align_numbers_right_and_text_left() -> None:
    from matching.training.cards import markdown_table

    table = markdown_table([{"model": "a", "MAP": 0.5, "data": "WikiQA", "seeds": 5, "paper MAP": None},
                            {"model": "b", "MAP": None, "data": "TrecQA", "seeds": 3, "paper MAP": None}])
    assert table.splitlines()[1] == "|---|---:|---|---:|---|"  # a column of only None is no number column
    assert table.splitlines()[3] == "| b | - | TrecQA | 3 | - |"


def test_a_paper_figure_sits_only_beside_a_test_on_its_own_data(trained: tuple[Matcher, ModelCard]) -> None:
    """The ECIR table's WikiQA figure beside a model tested on TrecQA read as if it were TrecQA's (report, Models)."""
    from matching.training.reporting import model_row

    _, card = trained
    ecir = replace(card, paper={"MAP": 0.6507, "table": "ECIR 2019 Table 1, WikiQA"},
                   data={**card.data, "test": {**card.data["test"], "source": "wikiqa"}})
    assert model_row(ecir)["paper MAP"] == 0.6507
    on_trecqa = replace(ecir, data={**ecir.data, "test": {**ecir.data["test"], "source": "trecqa"}})
    assert model_row(on_trecqa)["paper MAP"] is None
    mcan = replace(on_trecqa, paper={"MAP": 0.838, "table": "MCAN 2018 Table 2, TrecQA clean"})
    assert model_row(mcan)["paper MAP"] == 0.838


def test_a_combined_folders_card_names_its_test_and_dev_data(trained: tuple[Matcher, ModelCard]) -> None:
    """Trained on WikiQA + TrecQA, tested on WikiQA's test split (as `refresh` records it): the card's
    heading and the seed-spread label say which data each figure is on."""
    from matching.training.reporting import seed_spread_label

    _, card = trained
    combined = replace(card, data={**card.data, "source": "wikiqa+trecqa",
                                   "test": {**card.data["test"], "source": "wikiqa"}},
                       seed_study=SeedStudy([1, 2], [0.6, 0.4], [0.5, 0.7], 0.6, 0.1414))
    assert "## Metrics (test: WikiQA, dev: WikiQA+TrecQA; ties" in render_card(combined)
    assert seed_spread_label(combined) == "2-seed spread, WikiQA test (card)"
    unrecorded = replace(combined, data={**combined.data, "test": card.data["test"]})
    assert "## Metrics (WikiQA+TrecQA; ties" in render_card(unrecorded)
    assert seed_spread_label(unrecorded) == "2-seed spread, WikiQA+TrecQA test (card)"


def test_known_limits_name_the_cards_own_data(trained: tuple[Matcher, ModelCard]) -> None:
    """A card's known limits come from its data, not a fixed text: a TRAIN-ALL model does not claim
    WikiQA's 873 questions, and the dev count is its own."""
    _, card = trained
    train_all = replace(card, data={**card.data, "source": "wikiqa+trecqa-all",
                                    "train": {**card.data["train"], "questions": 2034},
                                    "dev": {**card.data["dev"], "questions": 191}})
    first, *shared, last = known_limits(train_all)
    assert first.startswith("Trained on WikiQA+TrecQA TRAIN-ALL (2,034 questions): Wikipedia-style")
    assert "newswire" in first and shared == KNOWN_LIMITS
    assert last == "Dev has 191 questions, so selection by dev MAP is noisy; see the seed study."
    assert all(line in render_card(train_all) for line in known_limits(train_all))
    fitted = replace(train_all, training={**card.training, "fit_on_dev": True})
    assert known_limits(fitted)[-1].startswith("Fitted on train + dev (191 dev questions)")
    assert known_limits(replace(card, data={}))[0] == "Its training data is not recorded in its card."
    # A model with the echo feature says where it can misfire: anywhere, on a right answer's clause; at the start,
    # it misses a restated question further in.
    for at_start, words in ((False, "also fires on a right answer"), (True, "is not caught")):
        echo = replace(train_all, params={**card.params, "keywords": True, "keyword_answer_types": True,
                                          "keyword_echo": True, "keyword_echo_at_start": at_start})
        limits = known_limits(echo)
        assert limits[:-1] == known_limits(train_all)[:-1] + [KEYWORD_PUNCTUATION_LIMIT, ECHO_LIMITS[at_start]]
        assert words in limits[-2]
    assert not any("echo" in line or "punctuation" in line for line in known_limits(train_all))


def test_card_round_trips_through_json(trained: tuple[Matcher, ModelCard]) -> None:
    _, card = trained
    card = replace(card, seed_study=SeedStudy([1, 2], [0.6, 0.4], [0.5, 0.7], 0.6, 0.1414),
                   attention=AttentionStudy(0.7, 2.5, 0.66, 0.62, 0.6))
    assert ModelCard.from_dict(json.loads(json.dumps(card.to_dict()))) == card
    text = render_card(card)
    assert "## Seed study" in text and "0.5000 0.7000 -> mean 0.6000 ± 0.1414" in text
    assert "## Does the attention matter?" in text
    assert "| test MAP, alpha replaced by uniform weights | 0.6200 |" in text
    assert "costs 0.0400 MAP: the bars carry part of the score" in text


def test_older_cards_still_read() -> None:
    card = ModelCard.from_dict({"name": "old", "best_epoch": 3, "seed_study": {
        "seeds": [1], "dev_MAP": [0.7], "test_MAP": [0.6], "mean": 0.6, "std": 0.0}, "unknown part": 1})
    assert card.kept_epochs == [3] and card.seed_study is not None and card.significance == []


def test_flat_attention_is_called_untrustworthy() -> None:
    flat = ModelCard(name="x", attention=AttentionStudy(0.98, 1.4, 0.644, 0.653, 0.649))
    assert "deserve little trust" in attention_verdict(flat)
    assert "uniform weights raises MAP by 0.0090" in attention_verdict(flat)  # a gain is not called a cost
    sharp = ModelCard(name="y", attention=AttentionStudy(0.5, 1.4, 0.644, 0.653, 0.649))
    assert attention_verdict(sharp) == ("Replacing alpha by uniform weights raises MAP by 0.0090: the bars do not "
                                        "help the score.")


def test_groups_and_deviations() -> None:
    paper = {"family": "amvlstm", "k": 10, "attention_scaling": "length", "pool_directions": True}
    training = {"optimizer": "adam", "learning_rate": 0.001, "batch_size": 64, "max_epochs": 15}
    assert group_of(paper, training) == PAPER_GROUP
    assert group_of({**paper, "attention_gate": "sparsemax"}, training) == VARIANT_GROUP
    assert group_of({**paper, "exact_match": "idf"}, training) == VARIANT_GROUP
    assert group_of({**paper, "keywords": True}, training) == VARIANT_GROUP
    assert any("keyword term" in line for line in deviations({**paper, "keywords": True}, training))
    assert not any("keyword term" in line for line in deviations(paper, training))
    assert any("BM25 within the list" in line
               for line in deviations({**paper, "keywords": True, "keyword_list_bm25": True}, training))
    assert not any("within the list" in line for line in deviations({**paper, "keywords": True}, training))
    listed = deviations({**paper, "exact_match": "idf"}, {**training, "loss": "listwise", "average_epochs": 3})
    assert "words weighted by alpha_t x sentence length, mean weight 1 (paper: alpha_t)" in listed
    assert "listwise loss (paper: pairwise hinge)" in listed
    assert any("exact-match" in line for line in listed) and any("last 3 epochs" in line for line in listed)


def test_an_mcan_card_names_its_loss_against_the_papers_whichever_it_is() -> None:
    mcan = {"family": "mcan", "hidden_size": 100, "projection_size": 50, "highway_size": 100}
    drawn = deviations(mcan, {"loss": "hinge", "margin": 1.0, "hinge_negatives": 2})
    assert "pairwise hinge loss, margin 1.0 (paper: cross entropy over (question, answer) labels)" in drawn
    assert any("paired with 2 of its question's wrong candidates an epoch" in line for line in drawn)
    listwise = deviations(mcan, {"loss": "listwise"})
    assert "listwise loss (paper: cross entropy over (question, answer) labels)" in listwise
    assert not any("wrong candidates an epoch" in line for line in deviations(mcan, {"loss": "hinge"}))


def test_a_card_names_the_data_it_was_trained_on_against_the_papers() -> None:
    mcan = {"family": "mcan", "hidden_size": 100, "projection_size": 50, "highway_size": 100}
    mvlstm = {"family": "mvlstm", "k": 5}
    on_wikiqa = deviations(mcan, {}, "wikiqa")
    assert on_wikiqa[0].startswith("trained on WikiQA's standard split") and on_wikiqa == deviations(mcan, {})
    own = deviations(mcan, {}, "trecqa-all")  # the MCAN paper's own TrecQA training data: no deviation
    assert not any("WikiQA" in line or line.startswith("trained on") for line in own)
    assert own == on_wikiqa[1:]
    both = deviations(mcan, {}, "wikiqa+trecqa-all")
    assert both[0] == ("trained on WikiQA train + TrecQA TRAIN-ALL (paper: TrecQA TRAIN-ALL, as for Ubuntu, "
                       "QatarLiving and Tweets each its own training set)")
    assert deviations(mvlstm, {}, "trecqa-all")[0].startswith("trained on TrecQA TRAIN-ALL (paper: WikiQA")
    assert deviations(mvlstm, {}, "mine")[0].startswith("trained on the data folder mine (paper: ")
    assert deviations(mvlstm, {}, "wikiqa")[0].startswith("WikiQA's standard split")


def test_runs_table_tests_the_mean_of_the_dev_sources_where_cards_have_one(tmp_path: Path) -> None:
    """Keyword models trained on two sources are chosen by the mean of each dev source's MAP: `runs` shows it per
    seed and tests it against --against's, beside the pooled dev MAP; configurations without it leave it empty."""
    def study(value: float) -> KeywordStudy:
        return KeywordStudy(MAP=value, learned_MAP=0.5, keywords_MAP=0.5, top_changed=0, questions=10,
                            learned_spread=1.0, keywords_spread=1.0)

    sources = {"base": [(0.70, 0.80), (0.71, 0.81), (0.69, 0.79)], "new": [(0.72, 0.84), (0.73, 0.83), (0.72, 0.85)]}
    for name, pairs in sources.items():
        for seed, (wikiqa, trecqa) in enumerate(pairs, start=1):
            folder = tmp_path / "w" / name / f"seed-{seed}"
            folder.mkdir(parents=True)
            card = ModelCard(name=name, seed=seed, metrics={"dev": {"MAP": 0.74 + seed / 100}, "test": {"MAP": 0.7}},
                             keywords={"wikiqa": study(wikiqa), "trecqa-all": study(trecqa)})
            (folder / "card.json").write_text(json.dumps(card.to_dict()), encoding="utf-8")
    folder = tmp_path / "w" / "pooled-only" / "seed-1"
    folder.mkdir(parents=True)
    (folder / "card.json").write_text(json.dumps(ModelCard(
        name="pooled-only", seed=1, metrics={"dev": {"MAP": 0.7}, "test": {"MAP": 0.7}}).to_dict()), encoding="utf-8")
    table = runs_table([tmp_path / "w"], against="base")
    header = [cell.strip() for cell in table.splitlines()[0].split("|")]
    rows = {line.split("|")[1].strip(): [cell.strip() for cell in line.split("|")] for line in table.splitlines()[2:]}
    means = {name: [(a + b) / 2 for a, b in pairs] for name, pairs in sources.items()}
    p = ttest_ind(means["new"], means["base"], equal_var=False).pvalue
    new = dict(zip(header, rows["new"], strict=True))
    assert new["mean of the dev sources per seed"] == "0.7800 0.7800 0.7850"
    assert new["vs base: Δ (Welch p)"] == f"+0.0317 ({p:.3f})" and p < 0.05
    assert new["dev vs base: Δ mean (Welch p)"] == "+0.0000 (1.000)"  # the pooled dev MAP does not see it
    assert dict(zip(header, rows["pooled-only"], strict=True))["mean of the dev sources per seed"] in ("", "-")


def test_a_card_fitted_on_dev_never_shows_dev_as_a_held_out_figure(trained: tuple[Matcher, ModelCard]) -> None:
    from matching.training.cards import dev_role, render_card, trained_on_dev
    from matching.training.reporting import model_row

    _, card = trained
    assert not trained_on_dev(card) and dev_role(card) == "used for selection"
    assert model_row(card)["dev MAP"] == card.metrics["dev"]["MAP"]
    fitted = replace(card, training={**card.training, "fit_on_dev": True})
    assert trained_on_dev(fitted) and model_row(fitted)["dev MAP"] is None
    text = render_card(fitted)
    assert "### Dev (part of the training data: not a held-out figure)" in text
    assert "used for selection" not in text


def test_runs_table_tests_each_configuration_dev_against_one(tmp_path: Path) -> None:
    """`python -m matching runs --against NAME`: each configuration's dev MAP over its seeds against
    NAME's, by Welch's t-test, over several sweeps' folders."""
    devs = {"base": [0.70, 0.71, 0.72], "better": [0.74, 0.75, 0.73], "same": [0.70, 0.72, 0.71]}
    for work, (name, dev) in zip(("a", "b", "b"), devs.items(), strict=True):
        for seed, value in enumerate(dev, start=1):
            folder = tmp_path / work / name / f"seed-{seed}"
            folder.mkdir(parents=True)
            card = ModelCard(name=name, seed=seed, metrics={"dev": {"MAP": value}, "test": {"MAP": value - 0.01}})
            (folder / "card.json").write_text(json.dumps(card.to_dict()), encoding="utf-8")
    table = runs_table([tmp_path / "a", tmp_path / "b"], against="base")
    rows = {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}
    assert set(rows) == {"base", "better", "same"}
    p = ttest_ind(devs["better"], devs["base"], equal_var=False).pvalue
    assert f"| +0.0300 ({p:.3f}) |" in rows["better"] and p < 0.05
    assert "0.7400 0.7500 0.7300" in rows["better"] and "(1.000)" in rows["same"]
    with pytest.raises(ValueError, match="no configuration of that name"):
        runs_table([tmp_path / "a"], against="better")
    with pytest.raises(ValueError, match="no such folder"):
        runs_table([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no seed runs"):
        runs_table([tmp_path / "empty"])


def test_sentences_cut_at_full_stops_outside_brackets() -> None:
    text = ("Five epochs (back since 2026-11-26. Eight fell). Weights averaged over 5 epochs; p 0.04. "
            "\"Echo\" feature at the answer's start. 3.5 stays one number. Last without a stop")
    assert sentences(text) == ["Five epochs (back since 2026-11-26. Eight fell).",
                               "Weights averaged over 5 epochs; p 0.04.",
                               "\"Echo\" feature at the answer's start. 3.5 stays one number.",
                               "Last without a stop"]
    assert sentences("") == []


def test_a_long_description_is_its_lead_then_its_choices_and_nothing_is_lost() -> None:
    short = "MCAN (FM): four casts of attention. Trained on WikiQA."
    assert description_parts(short) == (short, [])
    choices = [f"Choice {i} since 2026-11-2{i} (without it: configs/ablations/x-{i}.json): 0.7{i}00 to 0.7{i}10."
               for i in range(9)]
    long = " ".join(["A keyword model: a learned match plus seven keyword features.", *choices * 2])
    assert len(long) > READ_AT_ONCE
    lead, rest = description_parts(long)
    assert lead == "A keyword model: a learned match plus seven keyword features."
    assert rest == choices * 2 and " ".join([lead, *rest]) == long


@pytest.mark.parametrize("name", json.loads((Path(__file__).parents[1] / "pretrained" / "defaults.json")
                                            .read_text(encoding="utf-8"))["models"])
def test_a_default_models_card_leads_with_what_it_is(name: str) -> None:
    """The default models' descriptions carry their recipes' histories; their lead says what the model is, with
    every keyword feature it has."""
    raw = json.loads((Path(__file__).parents[1] / "pretrained" / name / "card.json").read_text(encoding="utf-8"))
    lead, choices = description_parts(raw["description"])
    assert choices and len(lead) < READ_AT_ONCE
    assert "seven keyword features" in lead and "BM25 within the list" in lead and "echo" in lead
    assert " ".join([lead, *choices]) == raw["description"]


def test_a_card_whose_text_is_not_text_does_not_read_as_a_card() -> None:
    """A hand-edited card.json with a number for its description: the page says the card is unreadable (the model
    still ranks) instead of failing where it draws the text."""
    assert typed_card("edited", {"description": 123, "architecture": "x"}) is None
    assert typed_card("edited", {"description": "A model.", "architecture": "x"}).description == "A model."


def test_the_models_table_puts_each_dev_map_beside_baselines_on_the_same_dev_set() -> None:
    """Two shipped models tested on TrecQA, one chosen on TrecQA dev and one on the combined dev of what it trained on:
    each gets its own block and baselines. Under one block, the keyword models' dev MAP (0.76 to 0.78, the combined
    dev) sat beside baselines on TrecQA dev (word overlap 0.7029), which the models' own TrecQA dev MAP (0.83 to 0.84)
    is to be read against."""
    shipped = Path(__file__).resolve().parents[1] / "pretrained"
    raw = [json.loads((shipped / name / "card.json").read_text(encoding="utf-8"))
           for name in ("mcan-trecqa", "mcan-kw-all")]
    table = models_table(raw)
    blocks = table.split("**baselines**")
    assert len(blocks) == 3  # two blocks of models, each followed by its baselines
    for card, block, after in zip(raw, blocks[:2], blocks[1:], strict=True):
        dev = ModelCard.from_dict(card)
        assert f"| {dev.name} |" in block and f"dev: {data_name(dev)}**" in block
        overlap = card["baselines"]["dev"]["word overlap"]["MAP"]
        assert f"| word overlap | {card['baselines']['test']['word overlap']['MAP']:.4f} | {overlap:.4f} |" in after


def test_a_card_keeps_another_sources_test_and_an_older_card_reads_without_one() -> None:
    from matching.training.cards import OtherTest, other_test_heading, other_test_rows

    tested = OtherTest(questions=243, pairs=2351, fingerprint="sha256:0", metrics={"MAP": 0.71, "MRR": 0.72},
                       baselines={"BM25": {"MAP": 0.59, "MRR": 0.6}})
    card = ModelCard(name="m", metrics={"test": {"MAP": 0.8}}, other_tests={"wikiqa": tested})
    again = ModelCard.from_dict(json.loads(json.dumps(card.to_dict())))
    assert again.other_tests == {"wikiqa": tested}
    assert other_test_rows(again, "wikiqa") == [{"system": "m", "MAP": 0.71, "MRR": 0.72},
                                                {"system": "BM25", "MAP": 0.59, "MRR": 0.6}]
    assert other_test_heading(again, "wikiqa").startswith("Test on another source: WikiQA (243 questions, 2,351 pairs")
    assert ModelCard.from_dict({"name": "old"}).other_tests == {}


def test_a_paper_figure_stands_beside_the_test_of_its_own_data_set_only() -> None:
    from matching.training.cards import OtherTest, other_test_rows

    # A default model: tested on TrecQA, with WikiQA's test as another source, and its paper's WikiQA figure.
    tested = OtherTest(questions=243, pairs=2351, fingerprint="sha256:0", metrics={"MAP": 0.71}, baselines={})
    card = ModelCard(name="m", metrics={"test": {"MAP": 0.79}, "dev": {"MAP": 0.8}}, baselines={"test": {}, "dev": {}},
                     data={"source": "wikiqa+trecqa-all",
                           "test": {"source": "trecqa", "questions": 68, "pairs": 1442, "fingerprint": "sha256:1"}},
                     paper={"system": "MV-LSTM (ECIR 2019)", "MAP": 0.6046, "table": "ECIR 2019 Table 1, WikiQA"},
                     other_tests={"wikiqa": tested})
    assert [row["system"] for row in metrics_rows(card, "test")] == ["m"]
    assert other_test_rows(card, "wikiqa")[-1] == {"system": "paper: MV-LSTM (ECIR 2019)", "MAP": 0.6046}
    assert "0.6046" not in render_card(card).split("### Test on another source")[0]
    # A paper figure of TrecQA beside a TrecQA test.
    trecqa = ModelCard(name="t", metrics={"test": {"MAP": 0.79}}, baselines={"test": {}},
                       data={"source": "trecqa-all", "test": {"source": "trecqa"}},
                       paper={"system": "MCAN", "MAP": 0.838, "table": "MCAN 2018 Table 2, TrecQA clean"})
    assert metrics_rows(trecqa, "test")[-1] == {"system": "paper: MCAN", "MAP": 0.838}


def test_models_fitted_on_dev_are_named_where_their_dev_split_is_evaluated() -> None:
    """`evaluate --split dev` put two models fitted on train + dev at the top of WikiQA dev's table (0.8675 and
    0.7917 among 0.66-0.75) with nothing saying their figures there are training figures."""
    from matching.text.data import RankingList, fingerprint
    from matching.training.reporting import fitted_note, fitted_on

    dev = [RankingList(f"q{n}", f"question {n}", ("an answer", "another"), (1, 0)) for n in range(3)]
    other = [RankingList(f"q{n}", f"question {n}", ("an answer", "another"), (0, 1)) for n in range(3)]

    def card(fit: bool) -> dict[str, object]:
        return {"training": {"fit_on_dev": fit},
                "data": {"dev": {"questions": 3, "pairs": 6, "fingerprint": fingerprint(dev)}}}

    cards = {"fitted": card(True), "held out": card(False), "no card": None}
    assert fitted_on(3, lambda: dev, cards) == ["fitted"]
    assert fitted_on(3, lambda: other, cards) == []  # the same size, other data

    def unread() -> list[RankingList]:
        raise AssertionError("a file of another size is not read again")

    assert fitted_on(4, unread, cards) == []
    assert fitted_note(["fitted"]).startswith("fitted was fitted on this data (train + dev, as its card says)")


def test_models_chosen_on_a_built_in_dev_split_are_named_where_it_is_evaluated() -> None:
    """The Evaluate page put WikiQA dev's figures beside the Models page's "selected on both dev sets" with no word
    that the models had chosen their epochs (the defaults their seeds and recipe) on that very split."""
    from matching.text.data import RankingList
    from matching.training.reporting import chosen_note, chosen_on

    def questions(prefix: str, count: int) -> list[RankingList]:
        return [RankingList(f"{prefix}{n}", f"{prefix} question {n}", ("an answer", "another"), (1, 0))
                for n in range(count)]

    devs = {"wikiqa": questions("w", 3), "trecqa": questions("t", 2)}

    def card(source: str, dev_questions: int, fit: bool = False) -> dict[str, object]:
        return {"training": {"fit_on_dev": fit}, "data": {"source": source, "dev": {"questions": dev_questions}}}

    cards = {"wikiqa model": card("wikiqa", 3), "both": card("wikiqa+trecqa-all+pseudo-subject-half", 5),
             "trecqa model": card("trecqa-all", 2), "fitted": card("wikiqa", 3, fit=True), "no card": None,
             "other dev": card("wikiqa", 4)}
    assert chosen_on(3, lambda: devs["wikiqa"], devs, cards) == ["wikiqa model", "both"]
    assert chosen_on(2, lambda: devs["trecqa"], devs, cards) == ["both", "trecqa model"]
    assert chosen_on(3, lambda: questions("x", 3), devs, cards) == []  # the same size, other data

    def unread() -> list[RankingList]:
        raise AssertionError("a file of no dev split's size is not read again")

    assert chosen_on(7, unread, devs, cards) == []
    assert chosen_note(["both"], 3).startswith("both was chosen on this data, its dev split")
    assert chosen_note(["a", "b"], 2).startswith("Every model here was chosen on this data, its dev split")
    assert chosen_note([f"m{n}" for n in range(31)], 36).startswith("31 of the 36 models here were chosen")
