"""What a rule of the answer-type features changes, one rule at a time (`models.blocks.keywords`, since 2026-11-28):

- R = "quantity nouns": "what is the population of Nigeria" asks for a number as "how many people live in
  Nigeria" does;
- R = "years are not numbers given": a year in an answer ("... in 1995") does not answer "how many died";
- R = "days of the month are not numbers given": nor does "19" in "on April 19";
- R = "'one' is not a number given": nor does "one" ("one of the worst disasters").

Each model scores each data set twice, with the rule off and on (the other rules on), with the same weights: a rule
changes what the feature says, not what a model learned. Prints per model the MAP of both over the questions whose
scores the rule changes and over all, and per data set the mean and how many models gained. Give the models that did
not see the data, e.g. those trained on WikiQA alone on TRAIN-ALL, those trained on TRAIN-ALL alone on WikiQA train,
and the defaults on both dev sets:

    python bench/answer_types.py --rule R --data ../shared/data/trecqa/train-all -- runs/cross/NAME-wikiqa-to-trecqa-*
    python bench/answer_types.py --rule R --data ../shared/data/wikiqa/train -- runs/cross/NAME-trecqa-all-to-wikiqa-*
    python bench/answer_types.py --rule R --data ../shared/data/wikiqa/dev ../shared/data/trecqa/dev -- pretrained/NAME

--data names split folders (a.toks, b.toks...); test splits are read to report, never to choose."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import fmean, stdev

import numpy as np
import torch
from common import mean_average_precision  # (puts the checkout on sys.path)

from matching.evaluation.dataset import model_scores  # noqa: E402
from matching.explain.matcher import Matcher  # noqa: E402
from matching.models.blocks.keywords import ANSWER_TYPE_RULES  # noqa: E402
from matching.text.data import read_toks_folder  # noqa: E402
from matching.text.embeddings import load_glove  # noqa: E402
from matching.text.tokenized import TokenizedList, tokenize_lists  # noqa: E402
from matching.training.checkpoint import load_checkpoint  # noqa: E402


def scores_with_rule(matcher: Matcher, lists: list[TokenizedList], rule: str, on: bool) -> list[np.ndarray]:
    keywords = matcher.model.keywords
    assert keywords is not None  # main() keeps the models with answer-type features only
    keywords.answer_type_rules = ANSWER_TYPE_RULES if on else ANSWER_TYPE_RULES - {rule}
    try:
        return model_scores(matcher, lists)
    finally:
        keywords.answer_type_rules = ANSWER_TYPE_RULES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rule", required=True, choices=sorted(ANSWER_TYPE_RULES), help="the rule to turn off and on")
    parser.add_argument("--data", nargs="+", required=True, type=Path, help="split folders")
    parser.add_argument("folders", nargs="+", type=Path, help="model folders with answer-type features")
    args = parser.parse_args()
    torch.set_num_threads(1)
    vectors = load_glove()
    models = [load_checkpoint(folder, vectors) for folder in args.folders]
    without = [str(folder) for folder, matcher in zip(args.folders, models, strict=True)
               if matcher.model.keywords is None or not matcher.model.keywords.answer_types]
    if without:
        sys.exit(f"error: no answer-type features, so nothing to measure: {', '.join(without)}")
    for data in args.data:
        lists, _ = tokenize_lists(read_toks_folder(data))
        print(f"{data} ({len(lists)} questions), the rule '{args.rule}' off -> on")
        gains, wholes = [], []
        for folder, matcher in zip(args.folders, models, strict=True):
            before, after = (scores_with_rule(matcher, lists, args.rule, on) for on in (False, True))
            changed = [n for n, (b, a) in enumerate(zip(before, after, strict=True)) if not np.array_equal(b, a)]
            answerable = [n for n in changed if any(lists[n].item.labels)]
            if answerable:
                pick = [lists[n] for n in answerable]
                subset = (mean_average_precision([before[n] for n in answerable], pick),
                          mean_average_precision([after[n] for n in answerable], pick))
                gains.append(subset[1] - subset[0])
                where = f"{subset[0]:.4f} -> {subset[1]:.4f} ({subset[1] - subset[0]:+.4f})"
            else:
                where = "none with a right answer"
            whole = mean_average_precision(before, lists), mean_average_precision(after, lists)
            wholes.append(whole)
            print(f"  {str(folder):<62} questions changed {len(changed):>3} ({len(answerable)} with a right answer): "
                  f"{where}; all {whole[0]:.4f} -> {whole[1]:.4f} ({whole[1] - whole[0]:+.4f})")
        if gains:
            print(f"  over the {len(gains)} models: mean change {fmean(gains):+.4f} on the questions changed, "
                  f"{sum(g > 0 for g in gains)} gained, {sum(g < 0 for g in gains)} lost")
        if len(wholes) > 1:  # e.g. the seeds of one recipe: their MAP over all questions, mean ± sd, off and on
            spread = [f"{fmean(w):.4f} ± {stdev(w):.4f}" for w in zip(*wholes, strict=True)]
            print(f"  all questions, over the {len(wholes)} models: {spread[0]} -> {spread[1]}")


if __name__ == "__main__":
    main()
