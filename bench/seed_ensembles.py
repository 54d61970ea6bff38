"""What the seeds of one setting give together: dev MAP of each seed, of the mean of their scores, and of the model
whose weights are the mean of theirs.

The mean of the scores is a measurement, not a shipped model: the app explains one forward pass per model, and a
mean of five models has five of them. The mean of the weights (a "soup") is one model with one forward pass, printed
with its keyword split where it has a keyword term (the learned match alone, the keywords alone). It asks whether
the seeds' disagreement is noise a model could lose (the mean ranks better than the seeds do) and where: in the
source the models trained on, or on the source not seen. Give the folders of one setting, e.g. the runs on WikiQA +
TRAIN-ALL with both dev sets, or those trained on WikiQA alone with TrecQA dev:

    python bench/seed_ensembles.py --data ../shared/data/wikiqa ../shared/data/trecqa -- runs/exp/NAME/seed-*
    python bench/seed_ensembles.py --data ../shared/data/trecqa -- runs/cross/NAME-wikiqa-to-trecqa-*

Prints per data set each seed's MAP, their mean and sample sd, the MAP of the mean of the seeds' scores (ties by the
metrics' rule) and that of the mean of their weights (seeds of one architecture only). Dev splits only (--split):
the test splits are read to report, never to choose."""

from __future__ import annotations

import argparse
from pathlib import Path
from statistics import fmean, stdev

import numpy as np
import torch
from common import mean_average_precision  # (puts the checkout on sys.path)

from matching.evaluation.dataset import model_scores  # noqa: E402
from matching.evaluation.studies import keyword_study  # noqa: E402
from matching.explain.matcher import Matcher  # noqa: E402
from matching.text.data import read_toks_folder  # noqa: E402
from matching.text.embeddings import WordVectors, load_glove  # noqa: E402
from matching.text.tokenized import tokenize_lists  # noqa: E402
from matching.training.checkpoint import load_checkpoint  # noqa: E402
from matching.training.trainer import average_states  # noqa: E402


def mean_of_weights(folders: list[Path], models: list[Matcher], vectors: WordVectors) -> Matcher | None:
    """One model whose every weight is the mean of the seeds' (the first seed's model, its weights replaced);
    None where the seeds differ in architecture. The seeds of one setting trained on one data set share the
    tables fitted to it (the IDF of the training answers), so those come out as they were."""
    if any(model.params != models[0].params for model in models[1:]):
        return None
    soup = load_checkpoint(folders[0], vectors)  # a fresh copy: the first seed's own model stays as it is
    soup.model.load_state_dict(average_states([model.model.state_dict() for model in models]))
    soup.model.eval()
    return soup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", required=True, type=Path, help="data folders with a --split folder")
    parser.add_argument("--split", default="dev")
    parser.add_argument("folders", nargs="+", type=Path, help="model folders of one setting, one per seed")
    args = parser.parse_args()
    torch.set_num_threads(1)
    vectors = load_glove()
    models = [load_checkpoint(folder, vectors) for folder in args.folders]
    soup = mean_of_weights(args.folders, models, vectors)
    for data in args.data:
        lists, _ = tokenize_lists(read_toks_folder(data / args.split))
        per_seed = [model_scores(model, lists) for model in models]
        maps = [mean_average_precision(scores, lists) for scores in per_seed]
        together = [np.mean(seeds, axis=0) for seeds in zip(*per_seed, strict=True)]
        print(f"{data.name} {args.split} ({len(lists)} questions)")
        for folder, value in zip(args.folders, maps, strict=True):
            print(f"  {str(folder):<60} {value:.4f}")
        spread = f", sd {stdev(maps):.4f}" if len(maps) > 1 else ""
        print(f"  seeds: mean {fmean(maps):.4f}{spread}, best {max(maps):.4f}")
        joint = mean_average_precision(together, lists)
        print(f"  mean of the {len(maps)} seeds' scores: {joint:.4f} "
              f"({joint - fmean(maps):+.4f} against the seeds' mean)")
        if soup is None:
            print("  mean of the seeds' weights: not one architecture")
            continue
        souped = mean_average_precision(model_scores(soup, lists), lists)
        study = keyword_study(soup, lists)
        seed_studies = [seed_study for model in models if (seed_study := keyword_study(model, lists))]
        split = (f"; learned match alone {study.learned_MAP:.4f}, keywords alone {study.keywords_MAP:.4f}; the "
                 f"keywords change its top answer in {study.top_changed} of {study.questions} questions (the seeds: "
                 f"{', '.join(str(seed.top_changed) for seed in seed_studies)}; their learned match alone "
                 f"{fmean(seed.learned_MAP for seed in seed_studies):.4f} on average)" if study is not None else "")
        print(f"  mean of the {len(maps)} seeds' weights (one model): {souped:.4f} "
              f"({souped - fmean(maps):+.4f} against the seeds' mean){split}")


if __name__ == "__main__":
    main()
