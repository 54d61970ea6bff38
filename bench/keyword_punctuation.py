"""The keyword term's punctuation: what the '?' and ',' a question and an answer share add to a model's ranking.

Every keyword model was trained with its lexical features (word overlap, IDF-weighted overlap, BM25, and on stems)
matching every token, punctuation marks included: a '?' or ',' the two texts share counts as a shared word, where the
word overlap and BM25 baselines leave punctuation out. For each model this prints MAP with the term as trained and
with punctuation never matching (`KeywordTerm.unmatched_ids`: the word vectors' rows of the keys without a letter or
digit; the weights as trained), on the dev split of each --data folder and on the section sets A and C (what a
choice reads), then on set B and the test splits, read only to report; and how many dev pairs share a punctuation
mark. Changing what the features count changes what the weights were trained for: this measures, it chooses nothing.

    python bench/keyword_punctuation.py [--data ../shared/data/wikiqa ../shared/data/trecqa] [--models ...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from common import ROOT
from section_collection import SETS

from matching.evaluation.dataset import evaluate
from matching.text.baselines import overlap_words
from matching.text.data import RankingList, read_ranking_file, read_toks_folder
from matching.text.embeddings import load_glove
from matching.text.tokenized import tokenize_lists
from matching.training.checkpoint import load_checkpoint

DEFAULTS = ["mvlstm-em-kw-all", "amvlstm-q-kw-all", "mcan-kw-all"]


def shared_marks(lists: list[RankingList]) -> tuple[int, int]:
    """(pairs whose question and answer share a punctuation mark, pairs)."""
    tokenized, _ = tokenize_lists(lists)
    shared = total = 0
    for item in tokenized:
        marks = {t.key for t in item.question} - set(overlap_words(item.question))
        for answer in item.candidates:
            total += 1
            shared += bool(marks & {t.key for t in answer})
    return shared, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", type=Path,
                        default=[ROOT.parent / "shared" / "data" / name for name in ("wikiqa", "trecqa")])
    parser.add_argument("--models", nargs="+", default=DEFAULTS)
    parser.add_argument("--pretrained", type=Path, default=ROOT / "pretrained")
    args = parser.parse_args()
    vectors = load_glove()
    marks = torch.tensor(sorted(row for key, row in vectors.row_of.items() if not any(c.isalnum() for c in key)))
    models = {name: load_checkpoint(args.pretrained / name, vectors) for name in args.models}
    choosing = {f"{folder.name} dev": read_toks_folder(folder / "dev") for folder in args.data}
    choosing |= {f"set {name}": read_ranking_file(SETS[name]) for name in ("A", "C")}
    reported = {"set B (read to report)": read_ranking_file(SETS["B"])}
    reported |= {f"{folder.name} test (read to report)": read_toks_folder(folder / "test") for folder in args.data}
    print(f"{len(marks)} punctuation marks among the word vectors' keys; models: {', '.join(models)}")
    for folder in args.data:
        shared, total = shared_marks(choosing[f"{folder.name} dev"])
        print(f"{folder.name} dev: {shared:,} of {total:,} pairs share a punctuation mark with their question")
    print("| data | " + " | ".join(f"{name}: as trained -> marks unmatched" for name in models) + " |")
    print("|---|" + "---|" * len(models))
    for label, lists in (choosing | reported).items():
        figures = []
        for unmatched in (None, marks):
            for matcher in models.values():
                assert matcher.model.keywords is not None, f"{matcher.name} has no keyword term"
                matcher.model.keywords.unmatched_ids = unmatched
            figures.append(evaluate(lists, models).overall)
        print(f"| {label} | " + " | ".join(f"{figures[0][name]['MAP']:.4f} -> {figures[1][name]['MAP']:.4f}"
                                           for name in models) + " |")


if __name__ == "__main__":
    main()
