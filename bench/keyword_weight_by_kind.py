"""Which weight of the keyword term suits which question: learned match + c x keyword term, by kind of question.

`bench/section_collection.py --scales` found that no one weight c of the keyword term against the learned match suits
both WikiQA dev (best near c = 0.25) and set A of the section collection (best at c = 3 or more). A mix that reads
the question or its list could set c per question, if something there told which c suits it. This prints, for each
set and each way of sorting its questions into four bins, the MAP at each c (the parts' own scores, averaged over
the runs given) and the best c: a feature that could drive such a mix would want the same c in a bin on every set.

The features, each read before any label:
- learned gap: the learned match's top score less its second (how sure the learned match is of its first);
- learned top share: the softmax share of the learned match's top candidate;
- word overlap gap: the share of the question's words in the candidate with most of them, less the runner-up's
  (how clearly the words point at one candidate);
- best word overlap: that share for the candidate with most of them;
- wh-word: the question's first wh-word ("how many" and "how much" apart from "how").

The bins are the quartiles of a feature over every set and run pooled, so that a bin means the same on every set;
a bin of a feature of the learned match holds different questions for each run, and its count is their mean.
Set A only (set B is read to report, never to choose), and the dev splits of --data.

    python bench/keyword_weight_by_kind.py runs/exp/mcan-kw-all-learned-alone/seed-* \\
        --data ../shared/data/wikiqa ../shared/data/trecqa
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
from section_collection import SETS, answerable, per_question

from matching.evaluation.studies import part_scores  # noqa: E402
from matching.text.baselines import overlap_words, word_overlap  # noqa: E402
from matching.text.data import read_ranking_file, read_toks_folder  # noqa: E402
from matching.text.tokenized import TokenizedList, tokenize_lists  # noqa: E402
from matching.training.checkpoint import load_checkpoint  # noqa: E402

SCALES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0)
WH_WORDS = ("how many", "how much", "how", "who", "when", "where", "why", "which", "what")
Parts = tuple[np.ndarray, np.ndarray]
"""One question's learned match and keyword term, each (candidates,)."""


def coverage(item: TokenizedList) -> np.ndarray:
    """Each candidate's share of the question's distinct words (the word overlap baseline over their count)."""
    return word_overlap(item.question, item.candidates) / max(1, len(set(overlap_words(item.question))))


def top_gap(values: np.ndarray) -> float:
    ordered = np.sort(values)[::-1]
    return float(ordered[0] - ordered[1]) if len(ordered) > 1 else 0.0


def top_share(values: np.ndarray) -> float:
    shares = np.exp(values - values.max())
    return float(shares.max() / shares.sum())


def wh_word(item: TokenizedList) -> str:
    words = [t.key for t in item.question]
    for wh in WH_WORDS:
        first, *rest = wh.split()
        for i, word in enumerate(words):
            if word == first and words[i + 1: i + 1 + len(rest)] == rest:
                return wh
    return "none"


FEATURES: dict[str, Callable[[TokenizedList, Parts], float]] = {
    "learned gap": lambda item, parts: top_gap(parts[0]),
    "learned top share": lambda item, parts: top_share(parts[0]),
    "word overlap gap": lambda item, parts: top_gap(coverage(item)),
    "best word overlap": lambda item, parts: float(coverage(item).max()),
}


def scaled_maps(lists: list[TokenizedList], parts: list[Parts]) -> np.ndarray:
    """(questions, c): each question's AP at each c."""
    return np.stack([per_question([learned + c * keywords for learned, keywords in parts], lists)
                     for c in SCALES], axis=1)


def table(title: str, rows: list[tuple[str, str, int, np.ndarray]]) -> None:
    print(f"\n{title}: MAP of learned match + c x keyword term, mean over the runs")
    print("| set | bin | questions | " + " | ".join(f"c = {c:g}" for c in SCALES) + " | best c |")
    print("|---|---|---:|" + "---:|" * len(SCALES) + "---:|")
    for name, label, count, maps in rows:
        best = SCALES[int(np.argmax(maps))]
        print(f"| {name} | {label} | {count} | " + " | ".join(f"{v:.4f}" for v in maps) + f" | {best:g} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="checkpoint folders of keyword models (a recipe's seeds)")
    parser.add_argument("--data", nargs="*", type=Path, default=[], help="data folders whose dev split is shown too")
    args = parser.parse_args()

    collections = {"set A": read_ranking_file(SETS["A"])}
    collections |= {f"{folder.name} dev": read_toks_folder(folder / "dev") for folder in args.data}
    lists = {name: answerable(tokenize_lists(raw)[0]) for name, raw in collections.items()}
    parts: dict[tuple[int, str], list[Parts]] = {}
    for run, folder in enumerate(args.runs):
        matcher = load_checkpoint(folder)
        if matcher.model.keywords is None:
            raise SystemExit(f"{folder} has no keyword term")
        for name, items in lists.items():
            parts[run, name] = list(zip(*part_scores(matcher, items), strict=True))
    maps = {key: scaled_maps(lists[key[1]], value) for key, value in parts.items()}
    runs = range(len(args.runs))

    table("All questions", [(name, "all", len(items), np.mean([maps[r, name].mean(0) for r in runs], axis=0))
                            for name, items in lists.items()])
    for feature, read in FEATURES.items():
        values = {key: np.array([read(item, p) for item, p in zip(lists[key[1]], value, strict=True)])
                  for key, value in parts.items()}
        cuts = np.quantile(np.concatenate(list(values.values())), [0.25, 0.5, 0.75])
        rows = []
        for name in lists:
            for b in range(len(cuts) + 1):
                chosen = [(maps[r, name][np.digitize(values[r, name], cuts) == b]) for r in runs]
                if any(len(c) for c in chosen):
                    label = (f"below {cuts[0]:.3g}" if b == 0 else f"{cuts[-1]:.3g} and above" if b == len(cuts)
                             else f"{cuts[b - 1]:.3g} to {cuts[b]:.3g}")
                    rows.append((name, label, round(np.mean([len(c) for c in chosen])),
                                 np.mean([c.mean(0) for c in chosen if len(c)], axis=0)))
        table(f"By {feature} (quartiles)", rows)
    rows = []
    for name, items in lists.items():
        kinds = np.array([wh_word(item) for item in items])
        for kind in WH_WORDS + ("none",):
            if (kinds == kind).any():
                rows.append((name, kind, int((kinds == kind).sum()),
                             np.mean([maps[r, name][kinds == kind].mean(0) for r in runs], axis=0)))
    table("By wh-word", rows)


if __name__ == "__main__":
    main()
