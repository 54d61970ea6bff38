"""The README's tables, built from the shipped cards and the run folders (never typed by hand)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import ttest_ind

from matching.evaluation.dataset import Evaluation
from matching.evaluation.studies import p_text, paired_tests
from matching.text.data import RankingList, fingerprint
from matching.text.datasets import BUILT_IN
from matching.training.cards import (
    PAPER_GROUP,
    ModelCard,
    data_name,
    markdown_table,
    mean_over_sources,
    paper_data,
    seed_line,
    trained_on_dev,
)

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
        row[f"vs {baseline}: ΔMAP (p)"] = f"{found.difference:+.4f} ({p_text(found.p_value)})" if found else None
    row["entropy"] = attention.entropy if attention else None
    row["top-weight ratio"] = attention.top_weight_ratio if attention else None
    row["uniform-α MAP"] = attention.uniform_MAP if attention else None
    row["permuted-α MAP"] = attention.permuted_MAP if attention else None
    # Beside a test MAP only on the data it was reported on (a WikiQA figure sat beside TrecQA test MAP).
    row["paper MAP"] = card.paper.get("MAP") if paper_data(card) == data_name(card, "test") else None
    row["train s"] = round(card.training_seconds) if card.training_seconds else None
    return row


def by_test_set(cards: Iterable[ModelCard]) -> dict[tuple[str, str], dict[str, list[ModelCard]]]:
    """Cards by the test set of their figures (WikiQA first) and the data their dev figure is on, then by group (as
    in the paper first), by name: a figure on one test set never sits in a column beside one on another, nor a dev
    MAP beside baselines on another dev set (a keyword model's dev is the combined dev of what it trained on)."""
    def order(card: ModelCard) -> tuple[bool, str, str, bool, str]:
        test = data_name(card, "test")
        return test != "WikiQA", test, data_name(card), card.group != PAPER_GROUP, card.name

    found: dict[tuple[str, str], dict[str, list[ModelCard]]] = {}
    for card in sorted(cards, key=order):
        found.setdefault((data_name(card, "test"), data_name(card)), {}).setdefault(card.group, []).append(card)
    return found


def models_table(raw_cards: Iterable[Mapping[str, Any]]) -> str:
    """Shipped models grouped by the test set of their figures (WikiQA first) and the data of their dev figure, then
    as in the paper before MatchLens variants, each test and dev set with its own baselines."""
    cards = [ModelCard.from_dict(dict(c)) for c in raw_cards]
    tests = by_test_set(cards)
    sections = []
    for (test, dev), groups in tests.items():
        where = f"test: {test}, dev: {dev}"
        for group, in_group in groups.items():
            heading = f"**{group}**" if len(tests) == 1 else f"**{group}, {where}**"
            sections.append(f"{heading}\n\n" + markdown_table([model_row(c) for c in in_group]))
        first = next(iter(groups.values()))[0]
        baselines = [{"baseline": name, "test MAP": values.get("MAP"),
                      "dev MAP": first.baselines.get("dev", {}).get(name, {}).get("MAP"),
                      "test MRR": values.get("MRR"), "test P@1": values.get("P@1")}
                     for name, values in first.baselines.get("test", {}).items()]
        what = "" if len(tests) == 1 else f", {where}"
        sections.append(f"**baselines** (same tie rule{what})\n\n" + markdown_table(baselines))
    if other := other_tests_table(cards):
        sections.append(other)
    seconds = [c.training_seconds for c in cards if c.training_seconds]
    if seconds:
        sections.append(f"Training time of the shipped runs: {sum(seconds) / 60:.0f} min for {len(seconds)} runs "
                        f"(longest {max(seconds) / 60:.1f} min); a 5-seed study of every configuration is "
                        f"about 5 x that: {5 * sum(seconds) / 3600:.1f} h on the machine and load they ran on.")
    return "\n\n".join(sections)


def other_tests_table(cards: Iterable[ModelCard]) -> str:
    """The models measured on another source's test split than their own (`refresh --other-test`), beside that
    split's baselines: one table a source; "" where no card has one."""
    by_source: dict[str, list[ModelCard]] = {}
    for card in sorted(cards, key=lambda c: c.name):
        for source in card.other_tests:
            by_source.setdefault(source, []).append(card)
    sections = []
    for source, tested in by_source.items():
        def figures(values: Mapping[str, float]) -> dict[str, float | None]:
            return {f"test {m}": values.get(m) for m in ("MAP", "MRR", "P@1")}

        first = tested[0].other_tests[source]
        rows = [{"model": c.name, "own test": data_name(c, "test"), **figures(c.other_tests[source].metrics)}
                for c in tested]
        rows += [{"model": name, "own test": "(baseline)", **figures(values)}
                 for name, values in first.baselines.items()]
        sections.append(f"**On another source's test: {BUILT_IN.get(source, source)}** ({first.questions} questions, "
                        f"same tie rule; read to report only, never to choose)\n\n" + markdown_table(rows))
    return "\n\n".join(sections)


def runs_table(works: Sequence[Path], against: str | None = None) -> str:
    """Every configuration trained under the `works` folders: dev and test MAP per seed, their means
    (± std), and with `against` (a configuration's name) Welch's t-test of each configuration's dev
    MAP over its seeds against that one's: whether a training choice changed the dev figure by more
    than the seeds do. Dev, not test, as choices are made on dev. Runs whose cards hold a dev MAP per
    source (a keyword model trained on several sources) also get the mean of those, each source counting the
    same (the measure `ship_rule: best mean over dev sources` and the default models are chosen by), and its
    Welch test."""
    missing = [str(work) for work in works if not work.is_dir()]
    if missing:
        raise ValueError(f"no such folder: {', '.join(missing)} (a sweep's --work folder)")
    # At any depth (runs/exp/NAME/seed-N as well as a sweep's runs/NAME/seed-N), named by the configuration's folder,
    # and by its parent too where two folders of one name hold runs.
    folders = sorted({card.parent.parent for work in works for card in work.rglob("seed-*/card.json")},
                     key=lambda p: (p.name, str(p)))
    repeated = {name for name, count in Counter(f.name for f in folders).items() if count > 1}
    studies = {}
    for folder in folders:
        cards = [ModelCard.from_dict(json.loads(c.read_text(encoding="utf-8")))
                 for c in sorted(folder.glob("seed-*/card.json"))]
        studies[f"{folder.parent.name}/{folder.name}" if folder.name in repeated else folder.name] = cards
    if not studies:
        raise ValueError(f"no seed runs (seed-*/card.json) under {', '.join(map(str, works))}")
    if against is not None and against not in studies:
        raise ValueError(f"--against {against}: no configuration of that name; there are {', '.join(studies)}")

    def dev_of(cards: list[ModelCard]) -> list[float] | None:
        return None if any(trained_on_dev(c) for c in cards) else [c.metrics["dev"]["MAP"] for c in cards]

    def per_source_of(cards: list[ModelCard]) -> list[float] | None:
        keyed = dev_of(cards) is not None and all(len(c.keywords) > 1 for c in cards)
        return [mean_over_sources(c) for c in cards] if keyed else None

    reference = dev_of(studies[against]) if against else None
    reference_sources = per_source_of(studies[against]) if against else None
    by_source = any(per_source_of(cards) for cards in studies.values())
    rows = []
    for name, cards in studies.items():
        test, dev = [c.metrics["test"]["MAP"] for c in cards], dev_of(cards)
        attention = [c.attention for c in cards if c.attention]
        row: dict[str, Any] = {
            "configuration": name, "seeds": " ".join(str(c.seed) for c in cards),
            "dev MAP per seed": " ".join(f"{x:.4f}" for x in dev) if dev else None,
            "dev MAP mean": float(np.mean(dev)) if dev else None,
            "test MAP per seed": " ".join(f"{x:.4f}" for x in test),
            "test MAP mean ± std": f"{np.mean(test):.4f} ± {np.std(test, ddof=1):.4f}" if len(test) > 1
            else f"{test[0]:.4f}",
            "entropy mean": float(np.mean([a.entropy for a in attention])) if attention else None,
            "uniform-α MAP mean": float(np.mean([a.uniform_MAP for a in attention])) if attention else None}
        if against:
            row[f"dev vs {against}: Δ mean (Welch p)"] = welch_text(name != against, dev, reference)
        if by_source:
            sources = per_source_of(cards)
            row["mean of the dev sources per seed"] = " ".join(f"{x:.4f}" for x in sources) if sources else None
            row["its mean"] = float(np.mean(sources)) if sources else None
            if against:
                row[f"vs {against}: Δ (Welch p)"] = welch_text(name != against, sources, reference_sources)
        rows.append(row)
    return markdown_table(rows)


def welch_text(compared: bool, values: Sequence[float] | None, reference: Sequence[float] | None) -> str | None:
    """'+0.0114 (0.072)': the difference of the means and Welch's p, where both sides have two seeds or more."""
    if not (compared and values and reference and len(values) > 1 and len(reference) > 1):
        return None
    p = ttest_ind(values, reference, equal_var=False).pvalue
    return f"{np.mean(values) - np.mean(reference):+.4f} ({p_text(p)})"


def seed_spread_label(card: ModelCard) -> str | None:
    """What a card's seed spread is, e.g. '5-seed spread, WikiQA test (card)'; None without a seed study."""
    if card.seed_study is None:
        return None
    return f"{len(card.seed_study.seeds)}-seed spread, {data_name(card, 'test')} test (card)"


def test_data_names(cards: Iterable[ModelCard]) -> str:
    """The data sets the cards' test figures were measured on, e.g. 'WikiQA' or 'WikiQA, TrecQA'."""
    return ", ".join(sorted({data_name(card, "test") for card in cards}))


def paired_test_rows(result: Evaluation, cards: Mapping[str, Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Beside an evaluation's metric table (`evaluate`, the Evaluate page): paired randomisation tests on this data's
    per-question AP against every baseline, and each model's seed spread from its card, labelled with the data it
    was measured on (the card's test split, whatever file was evaluated). The sentence that heads them, and a row
    per model (none where fewer than two questions have a correct candidate: the sentence says so)."""
    answerable = result.correct > 0
    if answerable.sum() < 2:  # a file of one question (or none answerable): its table is all there is to say
        return (f"No paired test against the baselines: it needs at least two questions with a correct candidate, "
                f"and this file has {int(answerable.sum())}.", [])
    parsed = {name: ModelCard.from_dict({"name": name, **raw}) for name, raw in cards.items()}
    baselines = [system for system in result.systems if system not in result.models]
    pairs = [(name, baseline) for name in parsed for baseline in baselines]
    tests = dict(zip(pairs, paired_tests([result.ap(name)[answerable] for name, _ in pairs],
                                         [result.ap(baseline)[answerable] for _, baseline in pairs],
                                         [baseline for _, baseline in pairs]), strict=True)) if pairs else {}
    labels = {label for card in parsed.values() if (label := seed_spread_label(card))}
    # One label for the column when every card's spread was measured alike; else each cell says its own.
    shared = next(iter(labels)) if len(labels) == 1 else None
    column = shared or "seed spread (card): test MAP mean ± sd"
    rows = []
    for name, card in parsed.items():
        label = seed_spread_label(card)
        row: dict[str, Any] = {"model": name,
                               column: seed_line(card) if shared or label is None else f"{seed_line(card)}, {label}"}
        for baseline in baselines:
            row[f"vs {baseline}: ΔMAP"] = tests[(name, baseline)].difference
            row[f"vs {baseline}: p"] = tests[(name, baseline)].p_value
        rows.append(row)
    return (f"Paired randomisation test on per-question AP (two-sided), on this file's {int(answerable.sum())} "
            "questions with a correct candidate; the seed spread is each model's card figure, measured on the "
            "test split of the data it was trained on:", rows)


def paired_test_cells(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`paired_test_rows`' rows with each baseline's ΔMAP and p in one cell, "+0.1385 (<0.001)", as the Models
    page's overview gives them: a column per baseline instead of two, so that the table fits a screen's width."""
    cells = []
    for row in rows:
        cell = {key: value for key, value in row.items() if not key.startswith("vs ")}
        for key, value in row.items():
            if key.endswith(": ΔMAP"):
                baseline = key.removesuffix(": ΔMAP")
                cell[f"{baseline}: ΔMAP (p)"] = f"{value:+.4f} ({p_text(row[f'{baseline}: p'])})"
        cells.append(cell)
    return cells


def evaluation_notes(result: Evaluation, cards: Mapping[str, Mapping[str, Any]]) -> str:
    """`paired_test_rows` as `evaluate` prints them: p as the cards give it (below 0.001: '<0.001')."""
    sentence, rows = paired_test_rows(result, cards)
    shown = [{key: p_text(value) if key.endswith(": p") else f"{value:+.4f}" if key.endswith(": ΔMAP") else value
              for key, value in row.items()} for row in rows]
    return sentence + ("\n\n" + markdown_table(shown) if shown else "")


def fitted_on(questions: int, read: Callable[[], Sequence[RankingList]],
              cards: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """The models among `cards` fitted on train + dev whose dev split is the data of `questions` questions that `read`
    gives (its questions, then its fingerprint, as their cards record them): on it their figures are training figures,
    not held out, and they top a dev table."""
    fitted = {name: card["data"]["dev"] for name, card in cards.items() if card and card.get("training", {}).get(
        "fit_on_dev") and isinstance(card.get("data", {}).get("dev"), dict)}
    sized = {name: dev for name, dev in fitted.items() if dev.get("questions") == questions}
    if not sized:  # read no further: a collection is not read again for models it cannot be the dev split of
        return []
    found = fingerprint(read())
    return [name for name, dev in sized.items() if dev.get("fingerprint") == found]


def fitted_note(names: Sequence[str]) -> str:
    """What `fitted_on`'s models' figures on their own dev split are, in a sentence."""
    return (f"{', '.join(names)} {'was' if len(names) == 1 else 'were'} fitted on this data (train + dev, as "
            f"{'its card says' if len(names) == 1 else 'their cards say'}): {'its' if len(names) == 1 else 'their'} "
            "figures here are training figures, not held out, and not comparable with the other models'.")


def chosen_on(questions: int, read: Callable[[], Sequence[RankingList]],
              dev_splits: Mapping[str, Sequence[RankingList]], cards: Mapping[str, Mapping[str, Any] | None]
              ) -> list[str]:
    """The models among `cards` that were chosen (their epoch; a default also its seed and recipe) on the data of
    `questions` questions that `read` gives, where that is the dev split of a built-in data set (`dev_splits`: its
    folder name, "wikiqa", -> its dev split's lists): their card's data source names that data set, and their dev split
    has as many questions as the dev splits of the built-in sets the source names (a model of "wikiqa+trecqa-all"
    chose on the two dev splits together). Their figures there lean optimistic; models fitted on dev are
    `fitted_on`'s, not these."""
    if questions not in {len(lists) for lists in dev_splits.values()}:  # a collection is not read again for nothing
        return []
    found = fingerprint(read())
    here = [name for name, lists in dev_splits.items() if fingerprint(lists) == found]
    if not here:
        return []
    sizes = {name: len(lists) for name, lists in dev_splits.items()}
    chosen = []
    for name, card in cards.items():
        data = (card or {}).get("data", {})
        if (card or {}).get("training", {}).get("fit_on_dev") or not isinstance(data.get("dev"), dict):
            continue
        sources = {part.split("-")[0] for part in str(data.get("source", "")).split("+")} & sizes.keys()
        if here[0] in sources and data["dev"].get("questions") == sum(sizes[source] for source in sources):
            chosen.append(name)
    return chosen


NAMES_IN_A_NOTE = 6
"""Most model names `chosen_note` lists; past it, it counts them."""


def chosen_note(names: Sequence[str], models: int) -> str:
    """What `chosen_on`'s models' figures on that dev split are, in a sentence (`models`: how many were evaluated)."""
    if len(names) == models > 1:
        who = "Every model here was"
    elif len(names) > NAMES_IN_A_NOTE:  # a list of 31 names hid the sentence it stood in
        who = f"{len(names)} of the {models} models here were"
    else:
        who = f"{', '.join(names)} {'was' if len(names) == 1 else 'were'}"
    whose = "its" if len(names) == 1 or who.startswith("Every") else "their"
    return (f"{who} chosen on this data, {whose} dev split (the epoch kept; for "
            "a default also its seed and recipe): figures here lean optimistic; the test split is the held-out "
            "measure.")
