"""The echo check, on dev only: does a model put a restated question above the answers?

Each dev question gets one more wrong candidate, the question restated as a statement (its words
without the question mark, then one of three tails: "... is a common quiz question."), the failure
the keyword issue found on text unlike the training data ("Who wrote the novel Frankenstein is a
common quiz question." ranked above the answer). Models trained with echo negatives saw the bare
question as a wrong candidate, never these tails. Prints, per dev set and model (and word overlap and
BM25, which put every echo first or tie it there), the MAP without and with the echo and the share of
questions whose echo is ranked first (a tie for first counts as its expected value, as the metrics do).

With --firing SPLIT ..., also where the echo feature fires on the real candidates of those splits (no
echo added), right answers and wrong ones, by the model's own feature code: a right answer it fires on (a
clause such as ", who won the Nobel Peace Prize in 1991") is one its negative weight sets back.

    python bench/echoes.py [--data ../shared/data/wikiqa ../shared/data/trecqa] [--models ...]
                           [--checkpoints FOLDER ...] [--firing train dev]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from common import ROOT

from matching.evaluation.dataset import model_scores
from matching.evaluation.metrics import mean_metrics, question_metrics
from matching.evaluation.studies import scored_alone
from matching.explain.matcher import Matcher
from matching.models.base import KEYWORDS
from matching.models.blocks.keywords import ECHO_FEATURE
from matching.text.baselines import baseline_scores
from matching.text.data import RankingList, read_toks_folder
from matching.text.tokenized import tokenize_lists
from matching.training.cards import default_models
from matching.training.checkpoint import load_all, load_checkpoint

TAILS = ("is a common quiz question.", "has been asked for a long time.", "is a question many people ask.")
BASELINES = ("word overlap", "BM25")


def restated(question: str, index: int) -> str:
    """The question as a statement about itself, as an echo is written."""
    words = question.strip().rstrip("?").strip()
    return f"{words[:1].upper()}{words[1:]} {TAILS[index % len(TAILS)]}"


def with_echo(lists: list[RankingList]) -> list[RankingList]:
    """Each list with its restated question as a last, wrong candidate."""
    return [replace(item, candidates=(*item.candidates, restated(item.question, index)),
                    labels=(*item.labels, 0)) for index, item in enumerate(lists)]


def echo_first(scores: np.ndarray) -> float:
    """1 where the last candidate (the echo) has the top score alone; 1/k where k candidates tie there."""
    top = scores.max()
    return float(scores[-1] == top) / int((scores == top).sum())


def figures(scores: list[np.ndarray], lists: list[RankingList]) -> tuple[float, float, float]:
    """(MAP without the echo, MAP with it, share of questions whose echo comes first)."""
    plain = mean_metrics([question_metrics(s[:-1], item.labels[:-1]) for s, item in zip(scores, lists, strict=True)])
    echoed = mean_metrics([question_metrics(s, item.labels) for s, item in zip(scores, lists, strict=True)])
    return plain["MAP"], echoed["MAP"], float(np.mean([echo_first(s) for s in scores]))


@contextmanager
def echo_feature_alone(matcher: Matcher) -> Iterator[None]:
    """Within the block the model scores its echo feature's value (0 or 1) alone: its own feature code, the
    keyword term scored alone with every weight 0 but the echo feature's, which is 1."""
    term = matcher.model.keywords
    saved = term.weights.detach().clone()
    with torch.no_grad():
        term.weights.copy_(torch.tensor([float(name == ECHO_FEATURE) for name in term.names]))
    try:
        with scored_alone(matcher, KEYWORDS):
            yield
    finally:
        with torch.no_grad():
            term.weights.copy_(saved)


def firing(matcher: Matcher, folder: Path, shown: int = 3) -> None:
    """Where the echo feature fires on real candidates (no echo added): right and wrong answers, and a few of
    the right ones it fires on, which its negative weight sets back."""
    lists = read_toks_folder(folder)
    tokens, _ = tokenize_lists(lists)
    with echo_feature_alone(matcher):
        values = model_scores(matcher, tokens)
    pairs = [(value > 0.5, label, item.question, candidate) for scores, item in zip(values, lists, strict=True)
             for value, label, candidate in zip(scores, item.labels, item.candidates, strict=True)]
    right = [fires for fires, label, *_ in pairs if label]
    wrong = [fires for fires, label, *_ in pairs if not label]
    print(f"  {folder}: fires on {sum(right)} of {len(right):,} right answers ({np.mean(right):.2%}) and "
          f"{sum(wrong)} of {len(wrong):,} wrong ones ({np.mean(wrong):.2%})")
    for _, _, question, candidate in [pair for pair in pairs if pair[0] and pair[1]][:shown]:
        print(f"    right answer set back: {question!r} -> {candidate[:110]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", nargs="+", default=[str(ROOT.parent / "shared/data/wikiqa"),
                                                       str(ROOT.parent / "shared/data/trecqa")])
    parser.add_argument("--pretrained", default=str(ROOT / "pretrained"))
    parser.add_argument("--models", nargs="*", help="names in --pretrained (default: the default models)")
    parser.add_argument("--checkpoints", nargs="*", default=[], help="checkpoint folders, beside --models")
    parser.add_argument("--firing", nargs="*", default=[], metavar="SPLIT",
                        help="also where the echo feature fires on the real candidates of these splits of each "
                             "--data (e.g. train dev; TRAIN-ALL: --data runs/data/trecqa-all), once for each "
                             "definition of it among the models (anywhere, at the answer start)")
    args = parser.parse_args()
    models, _ = load_all(args.pretrained)
    if args.models is None:
        args.models = default_models(list(models))
    missing = [name for name in args.models if name not in models]
    if missing:
        parser.error(f"no checkpoint {', '.join(missing)} in {args.pretrained} (give its folder with --checkpoints)")
    chosen = {name: models[name] for name in args.models}
    vectors = next(iter(models.values())).vectors
    for folder in args.checkpoints:
        path = Path(folder).resolve()
        chosen[str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)] = load_checkpoint(path, vectors)
    for data in args.data:
        lists = [item for item in with_echo(read_toks_folder(Path(data) / "dev")) if item.has_relevant]
        tokens, _ = tokenize_lists(lists)
        print(f"{Path(data).name} dev, {len(lists)} questions with a correct answer, each with its echo")
        print(f"  {'system':<44} {'MAP':>7} {'with echo':>10} {'echo first':>11}")
        rows = {name: figures(model_scores(matcher, tokens), lists) for name, matcher in chosen.items()}
        for baseline in BASELINES:
            rows[baseline] = figures([baseline_scores(t.question, t.candidates)[baseline] for t in tokens], lists)
        for name, (plain, echoed, first) in rows.items():
            print(f"  {name:<44} {plain:>7.4f} {echoed:>10.4f} {first:>10.1%}")
    if args.firing:
        firing_all(chosen, [Path(data) for data in args.data], args.firing)


def firing_all(chosen: dict[str, Matcher], folders: list[Path], splits: list[str]) -> None:
    """`firing` on each split of each folder, once per definition of the echo feature among `chosen`."""
    definitions: dict[bool, tuple[str, Matcher]] = {}  # one model per definition of the feature (where it fires)
    for name, matcher in chosen.items():
        if matcher.model.keywords is not None and ECHO_FEATURE in matcher.model.keywords.names:
            definitions.setdefault(matcher.params.keyword_echo_at_start, (name, matcher))
    for at_start, (name, matcher) in definitions.items():
        print(f"the echo feature {'at the answer start' if at_start else 'anywhere in the answer'} on real "
              f"candidates ({name}'s own feature code)")
        for folder in folders:
            for split in splits:
                firing(matcher, folder / split)


if __name__ == "__main__":
    main()
