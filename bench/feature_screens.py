"""Keyword features screened before any training: would any help the defaults where today's do not reach?

- **soft overlap**: every keyword feature matches words exactly (or by stem). The soft overlap of a pair is the
  IDF-weighted mean, over the question's words (less a few function words), of each word's largest cosine with any
  answer word in GloVe: a question word meets its synonym or a near word ("car", "automobile") where word overlap
  sees nothing. The IDF is the training answers' (of the TRAIN folders), as a keyword term takes it.
- **defines the subject**: a third of WikiQA's questions ask "what is X" / "who was X", and their right answers
  are so often the sentence that defines X ("X (born ...) is an American actor"): 1 where the question is of that
  form and the answer has "is" / "are" / "was" / "were" within its first 12 words with a word of X before it.
- **bigram overlap**: every keyword feature counts single words, so an answer that has the question's words apart
  counts as much as one that has its phrases ("the Berlin Wall", "discovered penicillin"). The share of the question's
  word pairs (side by side, on Snowball stems, pairs of two function words left out) that the answer has side by side
  too.

For each feature it prints what the feature alone ranks (beside the baselines) on the --data dev splits and on the
section sets the project chooses on (A and C, `bench/section_collection.py`), and for each model its score + c x the
feature for a few c (0 is the model as shipped): whether the feature, added to the keyword term with a weight the
training would learn, could raise one kind of text without setting another back. For the definition feature, also
how often it fires on right and on wrong answers of the questions of its form, and each model's MAP on those
questions and on the others. An analysis on the dev splits and the choosing sets, not a shipped feature; no test
split is read.

    python bench/feature_screens.py [--models mvlstm-em-kw-all amvlstm-q-kw-all mcan-kw-all] \
        [--train ../shared/data/wikiqa/train ../shared/data/trecqa/train-all] \
        [--data ../shared/data/wikiqa ../shared/data/trecqa]
"""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np
from common import ROOT, mean_average_precision

from matching.text.data import RankingList, read_ranking_file, read_toks_folder

FUNCTION_WORDS = frozenset("the a an of in on to for and or is are was were what who which".split())
"""Left out of the question's side: they say what is asked, not what it is about."""
COPULAS = frozenset(("is", "are", "was", "were"))
DEFINITION_QUESTION = re.compile(r"^(what|who) (is|are|was|were) (?:an? |the )?(.+?)$")
DEFINITION_WINDOW = 12
"""How far into the answer its copula may stand: past a name's parentheses ("(born 4 August 1961)")."""
WEIGHTS = (0, 1, 2, 3, 4, 6, 8)


def answer_idf(train: Sequence[Path]) -> tuple[dict[str, int], int]:
    """Document frequency of each word over the training answers, and their number."""
    frequency: Counter[str] = Counter()
    answers = 0
    for folder in train:
        for item in read_toks_folder(folder):
            for candidate in item.candidates:
                answers += 1
                frequency.update(set(candidate.lower().split()))
    return dict(frequency), answers


def defined_subject(question: list[str]) -> set[str] | None:
    """The words of X in "what is X" / "who was X" (less function words); None for a question of another form."""
    found = DEFINITION_QUESTION.match(" ".join(w for w in question if any(ch.isalnum() for ch in w)))
    subject = set(found.group(3).split()) - FUNCTION_WORDS if found else set()
    return subject or None


def defines_subject(question: list[str], answer: list[str]) -> float:
    """1 where the question asks what X is and the answer's first copula, within its first words, has a word of X
    before it; 0 otherwise."""
    subject = defined_subject(question)
    if subject is None:
        return 0.0
    for place, word in enumerate(answer[:DEFINITION_WINDOW]):
        if word in COPULAS:
            return float(bool(subject & set(answer[:place])))
    return 0.0


def bigrams(words: list[str]) -> set[tuple[str, str]]:
    """The pairs of side-by-side words of a text, less pairs of two function words ("of the")."""
    return {(a, b) for a, b in pairwise(words) if not (a in FUNCTION_WORDS and b in FUNCTION_WORDS)}


def bigram_overlap(question: list[str], answer: list[str]) -> float:
    """The share of the question's word pairs (of its stems, `baselines.stemmed_words`) that the answer has side by
    side too; 0 for a question of fewer than two words."""
    asked = bigrams(question)
    return len(asked & bigrams(answer)) / len(asked) if asked else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    shared = ROOT.parent / "shared" / "data"
    parser.add_argument("--models", nargs="+", default=["mvlstm-em-kw-all", "amvlstm-q-kw-all", "mcan-kw-all"])
    parser.add_argument("--pretrained", type=Path, default=ROOT / "pretrained")
    parser.add_argument("--train", nargs="+", type=Path, default=[shared / "wikiqa" / "train",
                                                                  shared / "trecqa" / "train-all"])
    parser.add_argument("--data", nargs="*", type=Path, default=[shared / "wikiqa", shared / "trecqa"])
    args = parser.parse_args()

    from matching.evaluation.dataset import model_scores
    from matching.text.baselines import baseline_scores, stemmed_words
    from matching.text.embeddings import load_glove
    from matching.text.tokenized import tokenize_lists
    from matching.training.checkpoint import load_checkpoint

    vectors = load_glove()
    unit = vectors.matrix / np.maximum(np.linalg.norm(vectors.matrix, axis=1, keepdims=True), 1e-9)
    frequency, answers = answer_idf(args.train)

    def soft_overlap(question: list[str], answer: list[str]) -> float:
        asked = [w for w in question if w not in FUNCTION_WORDS and w in vectors.row_of]
        given = [w for w in answer if w in vectors.row_of]
        if not asked or not given:
            return 0.0
        cosines = (unit[[vectors.row_of[w] for w in asked]] @ unit[[vectors.row_of[w] for w in given]].T).max(1)
        idf = np.array([math.log((answers + 1) / (frequency.get(w, 0) + 1)) for w in asked])
        return float((cosines * idf).sum() / idf.sum())

    sets: dict[str, list[RankingList]] = {f"{folder.name} dev": read_toks_folder(folder / "dev")
                                          for folder in args.data}
    sets["sections A + C"] = [*read_ranking_file(ROOT / "samples" / "section-questions-a.csv"),
                              *read_ranking_file(ROOT / "samples" / "section-questions-c.csv")]
    models = {name: load_checkpoint(args.pretrained / name) for name in args.models}
    for label, raw in sets.items():
        lists, _ = tokenize_lists(raw)
        keys = [([t.key for t in lst.question], [[t.key for t in c] for c in lst.candidates]) for lst in lists]
        baselines = [baseline_scores(lst.question, lst.candidates) for lst in lists]
        alone = ", ".join(f"{name} {mean_average_precision([b[name] for b in baselines], lists):.4f}"
                          for name in baselines[0])
        print(f"{label}: {len(lists)} questions; {alone}")
        scores = {name: model_scores(model, lists) for name, model in models.items()}
        stems = [(stemmed_words(lst.question), [stemmed_words(c) for c in lst.candidates]) for lst in lists]
        for feature_name, feature, texts in (("soft overlap", soft_overlap, keys),
                                             ("defines the subject", defines_subject, keys),
                                             ("bigram overlap", bigram_overlap, stems)):
            values = [np.array([feature(question, answer) for answer in candidates]) for question, candidates in texts]
            print(f"  {feature_name} alone {mean_average_precision(values, lists):.4f}")
            if feature is defines_subject:
                asked = [(v, lst.item.labels) for v, (q, _), lst in zip(values, keys, lists, strict=True)
                         if defined_subject(q)]
                right = [x for v, labels in asked for x, y in zip(v, labels, strict=True) if y]
                wrong = [x for v, labels in asked for x, y in zip(v, labels, strict=True) if not y]
                print(f"    {len(asked)} questions of its form; it fires on {np.mean(right or [0]):.0%} of their "
                      f"right answers, {np.mean(wrong or [0]):.0%} of their wrong ones")
                form = [defined_subject(q) is not None for q, _ in keys]
                for name, model_values in scores.items():
                    on_form, other = ([[s for s, f in zip(model_values, form, strict=True) if f is wanted],
                                       [t for t, f in zip(lists, form, strict=True) if f is wanted]]
                                      for wanted in (True, False))
                    print(f"    {name} as shipped: MAP {mean_average_precision(*on_form):.4f} on those questions, "
                          f"{mean_average_precision(*other):.4f} on the others")
            for name, model_values in scores.items():
                mixed = {c: mean_average_precision([s + c * f for s, f in zip(model_values, values, strict=True)],
                                                   lists)
                         for c in WEIGHTS}
                row = "  ".join(f"c={c}: {value:.4f}" for c, value in mixed.items())
                print(f"    {name} + c x {feature_name}: {row}")


if __name__ == "__main__":
    main()
