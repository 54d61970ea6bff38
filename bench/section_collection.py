"""The section collection: 150 questions of the issue's held-out kind, against word overlap and BM25.

Issue 29's held-out collection (not on this machine) holds questions a person wrote from one sentence of an
encyclopedia section, every sentence of the section a candidate; there BM25 (0.831) beats word overlap (0.788),
and the goal is every default above word overlap and the best above BM25. `samples/section-questions-a.csv` and
`-b.csv` are 25 sections each (history, geography, biology, physical sciences, sport; arts, popular culture,
economics, politics, computing), three questions a section, each answered by a different sentence, the candidates
all of the section's sentences in their order: written by hand for this project on 2026-11-28, before any model
was run on them. `-c.csv` (2026-11-29, written the same way before any model was run on it: food and agriculture,
music, architecture and transport, religion and philosophy, travel) makes the collection a choice reads twice as large:
sets A and C are for looking at errors and choosing; set B is read to report.

For each set, then for sets A + C and for all three together, it prints each system's MAP and P@1, its difference
from BM25 and from word overlap with the paired randomisation test's p (`evaluation.studies.paired_tests`), and how
often it puts the section's first sentence first where another sentence answers (the first sentence names the
subject, as WikiQA's answers so often do).

With --mix it also prints what BM25 over the question's own candidates (the BM25 baseline, whose IDF comes from
the list: a word every sentence of the section has counts for little) would add to a model's score, score +
c x BM25, for a few c: on the two sets and, with --data, on those dev splits. An analysis, not a shipped model:
the models' keyword features take their IDF from the training answers, never from the list.

With --features TRAIN ..., it prints instead what the lexical evidence alone ranks, on the two sets and the --data dev
splits: word overlap, the IDF-weighted overlap with the IDF of the training answers (of the TRAIN folders, as a
model's keyword term takes it) and with the IDF of the question's own candidates, and BM25 within the list. Where the
list's IDF wins and where the training answers' does tells which text a keyword weight learned on the training data
will favour.

With --seeds, models named NAME-S (a recipe's seed runs) are also summed up per recipe: each set's MAP over the
seeds, and sets A + C's, mean ± sd, and Welch's t-test against the first recipe named.

With --together (and --seeds), each recipe's seeds also count as one system, the mean of their scores, on each set
and on the --data dev splits: a measurement of what the seeds give together, not a model the app explains.

With --parts, each keyword model's whole score is printed beside its learned match alone and its keywords alone on
each set (the split a card's keyword study gives for the dev sets): which part carries the model on this kind of text.

With --scales, each keyword model's learned match + c x its keyword term, for a few c (1 is the model as shipped), on
the two sets and, with --data, on those dev splits: whether one weight of the keyword term against the learned match
would suit both kinds of text. An analysis, as --mix is.

    python bench/section_collection.py [--models ...] [--mix] [--parts] [--scales] \
        [--data ../shared/data/wikiqa ../shared/data/trecqa]
    python bench/section_collection.py --pretrained runs/cross --seeds --models A-1 A-2 A-3 B-1 B-2 B-3
    python bench/section_collection.py --pretrained DIR --seeds --together --models A-1 ... A-5 \
        --data ../shared/data/wikiqa ../shared/data/trecqa
    python bench/section_collection.py --features ../shared/data/wikiqa/train ../shared/data/trecqa/train-all \
        --data ../shared/data/wikiqa ../shared/data/trecqa
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from statistics import fmean, stdev

import numpy as np
from common import ROOT  # (puts the checkout on sys.path)

from matching.evaluation.dataset import model_scores  # noqa: E402
from matching.evaluation.metrics import question_metrics  # noqa: E402
from matching.evaluation.studies import keyword_study, paired_tests, part_scores  # noqa: E402
from matching.explain.matcher import Matcher  # noqa: E402
from matching.text.baselines import BASELINES, baseline_scores, bm25, overlap_words, word_overlap  # noqa: E402
from matching.text.data import read_ranking_file, read_toks_folder  # noqa: E402
from matching.text.tokenized import TokenizedList, tokenize_lists  # noqa: E402
from matching.training.checkpoint import load_checkpoint  # noqa: E402

SETS = {name: ROOT / "samples" / f"section-questions-{name.lower()}.csv" for name in ("A", "B", "C")}
CHOOSING_SETS = ("A", "C")
"""The sets a choice reads; set B is read only to report. Each set's table is followed by the sets together."""
MIX = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
SCALES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def answerable(lists: list[TokenizedList]) -> list[TokenizedList]:
    """The questions with a right and a wrong candidate: the ones that can rank well or badly."""
    return [t for t in lists if 0 < sum(t.item.labels) < len(t.item.labels)]


def per_question(scores: list[np.ndarray], lists: list[TokenizedList], metric: str = "MAP") -> np.ndarray:
    return np.array([question_metrics(s, t.item.labels)[metric] for s, t in zip(scores, lists, strict=True)])


def lead_picked(scores: list[np.ndarray], lists: list[TokenizedList]) -> tuple[int, int]:
    """(questions whose first sentence does not answer, of them those where the system ranks it first alone)."""
    others = [(s, t) for s, t in zip(scores, lists, strict=True) if t.item.labels[0] == 0]
    return len(others), sum(int(s[0] > np.delete(s, 0).max()) for s, _ in others)


def report(name: str, lists: list[TokenizedList], systems: dict[str, list[np.ndarray]]) -> None:
    aps = {system: per_question(scores, lists) for system, scores in systems.items()}
    against = ("BM25", "word overlap")
    tested = [system for system in systems if system not in BASELINES]
    tests = paired_tests([aps[s] for s in tested for _ in against], [aps[b] for _ in tested for b in against],
                         [b for _ in tested for b in against])
    print(f"\nset {name}: {len(lists)} questions")
    print("| system | MAP | P@1 | vs BM25: ΔMAP (p) | vs word overlap: ΔMAP (p) | first sentence put first wrongly |")
    print("|---|---:|---:|---:|---:|---:|")
    for system in systems:
        p1 = per_question(systems[system], lists, "P@1").mean()
        wrong, picked = lead_picked(systems[system], lists)
        cells = ["", ""]
        if system in tested:
            row = tested.index(system) * len(against)
            cells = [f"{t.difference:+.4f} ({t.p_value:.3f})" for t in tests[row: row + len(against)]]
        print(f"| {system} | {aps[system].mean():.4f} | {p1:.4f} | {cells[0]} | {cells[1]} | {picked} of {wrong} |")


def mix_table(name: str, lists: list[TokenizedList], systems: dict[str, list[np.ndarray]], models: list[str]) -> None:
    bm25 = systems["BM25"]
    print(f"\n{name}: model score + c x BM25 over the question's candidates, MAP "
          f"(BM25 alone {per_question(bm25, lists).mean():.4f})")
    print("| model | " + " | ".join(f"c = {c:g}" for c in MIX) + " |")
    print("|---|" + "---:|" * len(MIX))
    for model in models:
        row = [per_question([s + c * b for s, b in zip(systems[model], bm25, strict=True)], lists).mean() for c in MIX]
        print(f"| {model} | " + " | ".join(f"{value:.4f}" for value in row) + " |")


def parts_table(name: str, lists: list[TokenizedList], matchers: dict[str, Matcher]) -> None:
    """--parts: each keyword model's whole score against its two parts alone (`evaluation.studies.keyword_study`, the
    figures a card gives for the dev sets), so that one sees which part carries a model on this kind of text."""
    studies = {model: keyword_study(matcher, lists) for model, matcher in matchers.items()}
    print(f"\nset {name}: the whole score and its parts alone, MAP")
    print("| model | whole | learned match alone | keywords alone | top answer changed by the keywords |")
    print("|---|---:|---:|---:|---:|")
    for model, study in studies.items():
        if study is not None:
            print(f"| {model} | {study.MAP:.4f} | {study.learned_MAP:.4f} | {study.keywords_MAP:.4f} | "
                  f"{study.top_changed} of {study.questions} |")


def scales_table(name: str, lists: list[TokenizedList], matchers: dict[str, Matcher]) -> None:
    """--scales: learned match + c x keyword term, from the parts' own scores (their sum at c = 1 is the model's)."""
    print(f"\n{name}: learned match + c x keyword term, MAP (c = 1: the model as it is)")
    print("| model | " + " | ".join(f"c = {c:g}" for c in SCALES) + " |")
    print("|---|" + "---:|" * len(SCALES))
    for model, matcher in matchers.items():
        if matcher.model.keywords is None:
            continue
        learned, keywords = part_scores(matcher, lists)
        row = [per_question([a + c * b for a, b in zip(learned, keywords, strict=True)], lists).mean() for c in SCALES]
        print(f"| {model} | " + " | ".join(f"{value:.4f}" for value in row) + " |")


def weighted_overlap(question: list[str], candidates: list[list[str]], idf: dict[str, float] | None) -> np.ndarray:
    """The share of the question words' IDF that each candidate holds; IDF from `idf` (a word it lacks gets the
    largest) or, without it, from the candidates themselves: log((N + 1) / (df + 0.5))."""
    if idf is None:
        frequency = Counter(word for candidate in candidates for word in set(candidate))
        idf = {word: math.log((len(candidates) + 1) / (frequency[word] + 0.5)) for word in question}
    top = max(idf.values(), default=1.0)
    # In the question's order, not a set's: a sum's float rounding, and so which candidates tie, must not depend on
    # the process's string hashing.
    weight = {word: idf.get(word, top) for word in dict.fromkeys(question)}
    total = sum(weight.values()) or 1.0
    return np.array([sum(weight[w] for w in weight if w in held) / total for held in map(set, candidates)])


def features_table(collections: dict[str, list], train: list[Path]) -> None:
    """--features: each lexical feature alone as a ranker, MAP on each collection."""
    answers = {tuple(overlap_words(c)) for folder in train for t in tokenize_lists(read_toks_folder(folder))[0]
               for c in t.candidates}
    frequency = Counter(word for answer in answers for word in set(answer))
    idf = {word: math.log((len(answers) + 1) / (count + 1)) for word, count in frequency.items()}
    def overlap(idf_of: dict[str, float] | None) -> Callable[[TokenizedList], np.ndarray]:
        return lambda t: weighted_overlap(overlap_words(t.question), [overlap_words(c) for c in t.candidates], idf_of)

    rankers = {"word overlap (the baseline)": lambda t: word_overlap(t.question, t.candidates),
               "IDF-weighted overlap, the training answers' IDF": overlap(idf),
               "IDF-weighted overlap, the list's IDF": overlap(None),
               "BM25 within the list (the baseline)": lambda t: bm25(t.question, t.candidates)}
    print(f"\nThe lexical evidence alone, MAP (IDF of {len(answers):,} distinct training answers)")
    print("| feature | " + " | ".join(collections) + " |")
    print("|---|" + "---:|" * len(collections))
    lists = {name: [t for t in answerable(tokenize_lists(raw)[0]) if overlap_words(t.question)]
             for name, raw in collections.items()}
    for feature, rank in rankers.items():
        row = [per_question([rank(t) for t in ls], ls).mean() for ls in lists.values()]
        print(f"| {feature} | " + " | ".join(f"{value:.4f}" for value in row) + " |")


def recipe_groups(models: list[str]) -> dict[str, list[str]]:
    """Models named NAME-S grouped by recipe NAME, in the order first named."""
    recipes: dict[str, list[str]] = {}
    for model in models:
        recipes.setdefault(re.sub(r"-\d+$", "", model), []).append(model)
    return recipes


def together(recipes: dict[str, list[str]], systems: dict[str, list[np.ndarray]]) -> dict[str, list[np.ndarray]]:
    """--together: each recipe of two seeds or more as one more system, the mean of its seeds' scores (a measurement:
    the app explains one forward pass, and this is one per seed)."""
    return {f"{recipe} (mean of {len(members)} seeds' scores)": [np.mean(scores, axis=0) for scores in
                                                                 zip(*(systems[m] for m in members), strict=True)]
            for recipe, members in recipes.items() if len(members) > 1}


def dev_line(name: str, lists: list[TokenizedList], systems: dict[str, list[np.ndarray]],
             recipes: dict[str, list[str]]) -> None:
    """--together on a --data dev split: each recipe's seeds and the mean of their scores, beside the baselines."""
    value = {system: float(per_question(scores, lists).mean()) for system, scores in systems.items()}
    print(f"\n{name} ({len(lists)} questions): " + "; ".join(f"{b} {value[b]:.4f}" for b in ("word overlap", "BM25")))
    for recipe, members in recipes.items():
        seeds = [value[m] for m in members]
        joint = value.get(f"{recipe} (mean of {len(members)} seeds' scores)")
        print(f"  {recipe}: seeds {' '.join(f'{v:.4f}' for v in seeds)}, mean {fmean(seeds):.4f}"
              + (f"; the mean of their scores {joint:.4f} ({joint - fmean(seeds):+.4f})" if joint is not None else ""))


def recipes_table(maps: dict[str, dict[str, float]]) -> None:
    """Each recipe's (models named NAME-S) MAP over its seeds on each set, against the first recipe."""
    from scipy.stats import ttest_ind

    recipes = recipe_groups(list(maps))
    sets = list(next(iter(maps.values())))
    first = next(iter(recipes))
    heads = [f"set {name}: MAP, mean ± sd (Welch p against the first)" for name in sets]
    print("\n| recipe | seeds | " + " | ".join(heads) + " |")
    print("|---|---:|" + "---|" * len(sets))
    for recipe, models in recipes.items():
        cells = []
        for name in sets:
            values = [maps[m][name] for m in models]
            spread = f" ± {stdev(values):.4f}" if len(values) > 1 else ""
            against = [maps[m][name] for m in recipes[first]]
            p = (f" ({float(ttest_ind(values, against, equal_var=False).pvalue):.2f})"
                 if recipe != first and len(values) > 1 and len(against) > 1 else "")
            cells.append(f"{' '.join(f'{v:.4f}' for v in values)}: {fmean(values):.4f}{spread}{p}")
        print(f"| {recipe} | {len(models)} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+")
    parser.add_argument("--pretrained", type=Path, default=ROOT / "pretrained")
    parser.add_argument("--mix", action="store_true", help="also print score + c x BM25 over the list")
    parser.add_argument("--data", nargs="*", type=Path, default=[], help="with --mix or --features: data folders "
                        "whose dev split is shown too")
    parser.add_argument("--features", nargs="+", type=Path, metavar="TRAIN", help="print what each lexical feature "
                        "alone ranks instead, with IDF from the answers of these training folders")
    parser.add_argument("--seeds", action="store_true", help="also sum up models named NAME-S per recipe NAME")
    parser.add_argument("--together", action="store_true", help="with --seeds: also each recipe's mean of its seeds' "
                        "scores as a system, on the sets and the --data dev splits")
    parser.add_argument("--parts", action="store_true", help="also print each keyword model's learned match and "
                        "keywords alone on each set")
    parser.add_argument("--scales", action="store_true", help="also print each keyword model's learned match + c x "
                        "its keyword term for a few c, on the sets and the --data dev splits")
    args = parser.parse_args()

    if args.features:
        sets = {f"set {name}": read_ranking_file(path) for name, path in SETS.items()}
        features_table(sets | {f"{folder.name} dev": read_toks_folder(folder / "dev") for folder in args.data},
                       args.features)
        return
    models = args.models or json.loads((args.pretrained / "defaults.json").read_text(encoding="utf-8"))["models"]
    matchers = {name: load_checkpoint(args.pretrained / name) for name in models}
    collections = {f"set {name}": read_ranking_file(path) for name, path in SETS.items()}
    recipes = recipe_groups(models) if args.together else {}
    if args.mix or args.scales or args.together:
        collections |= {f"{folder.name} dev": read_toks_folder(folder / "dev") for folder in args.data}
    maps: dict[str, dict[str, float]] = {model: {} for model in models}
    scored: dict[str, tuple[list[TokenizedList], dict[str, list[np.ndarray]]]] = {}
    for name, raw in collections.items():
        lists = answerable(tokenize_lists(raw)[0])
        systems = {model: model_scores(matcher, lists) for model, matcher in matchers.items()}
        systems |= together(recipes, systems)
        baselines = [baseline_scores(t.question, t.candidates) for t in lists]
        systems |= {baseline: [b[baseline] for b in baselines] for baseline in BASELINES}
        if name.startswith("set "):
            scored[name.removeprefix("set ")] = lists, systems
            report(name.removeprefix("set "), lists, systems)
            if args.parts:
                parts_table(name.removeprefix("set "), lists, matchers)
            for model in models:
                maps[model][name.removeprefix("set ")] = float(per_question(systems[model], lists).mean())
        elif recipes:
            dev_line(name, lists, systems, recipes)
        if args.mix:
            mix_table(name, lists, systems, models)
        if args.scales:
            scales_table(name, lists, matchers)
    for pooled in (CHOOSING_SETS, tuple(SETS)):
        if all(name in scored for name in pooled):
            lists = [t for name in pooled for t in scored[name][0]]
            systems = {system: [s for name in pooled for s in scored[name][1][system]]
                       for system in scored[pooled[0]][1]}
            title = " + ".join(pooled) + (" (the sets a choice reads)" if pooled == CHOOSING_SETS else "")
            report(title, lists, systems)
            if pooled == CHOOSING_SETS:  # --seeds sums it up per recipe too: what a rule on the choosing sets reads
                for model in models:
                    maps[model][" + ".join(pooled)] = float(per_question(systems[model], lists).mean())
    if args.seeds:
        recipes_table(maps)


if __name__ == "__main__":
    main()
