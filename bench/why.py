"""'Why A over B' and the sanity checks: how long each takes with the shipped models.

Prints, each as a median over repeated runs (after a warm-up), with torch on one thread as in the app:
- the Compare view (contrasts + word deletion of A and B for every model) for 4 candidates x 5 models
  (goal <= 300 ms);
- word-deletion effects for a 15-word question and a 60-word candidate, per model (goal <= 150 ms);
- the cascading randomisation check on one example, per model (goal <= 1 s);
- deletion curves (and the attention-ablation MAP) on the 8-question sample file, all models (goal <= 20 s),
  with the AOPC of every word order.
Run: python bench/why.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch
from common import CANDIDATES, ROOT

from matching.evaluation.sanity import ablation_map, deletion_curves, randomisation_check
from matching.explain.contrast import compare_view
from matching.explain.deletion import deletion_effects
from matching.explain.ranking import rank
from matching.text.data import parse_ranking_file
from matching.text.tokens import tokenize
from matching.training.checkpoint import load_all

QUESTION_15 = "how did the western roman empire fall and which crises weakened it the most ?"
CANDIDATE_60 = " ".join(" ".join(CANDIDATES).replace(".", " ").replace(",", " ").split()[:60])


def median_ms(work: Callable[[], object], runs: int) -> float:
    work()
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        timings.append((time.perf_counter() - start) * 1000)
    return statistics.median(timings)


def main() -> None:
    torch.set_num_threads(1)
    models, errors = load_all(ROOT / "pretrained")
    if errors:
        print("load errors:", errors)
    print(f"models: {', '.join(models)} ({len(models)}); torch threads: {torch.get_num_threads()}")

    question = "how did the roman empire fall ?"
    ranking = rank(question, CANDIDATES[:4], models)
    compare = median_ms(lambda: compare_view(ranking, models, 0, 1), 20)
    print(f"compare view, 4 candidates x {len(models)} models (contrasts + word deletion of A and B): "
          f"median {compare:.1f} ms (goal <= 300 ms)")

    q_tokens, c_tokens = tokenize(QUESTION_15), tokenize(CANDIDATE_60)
    print(f"word deletion, {len(q_tokens)}-word question + {len(c_tokens)}-word candidate "
          f"({len(q_tokens) + len(c_tokens) + 1} pairs in one batch), per model (goal <= 150 ms):")
    for name, matcher in models.items():
        seconds = median_ms(lambda m=matcher: deletion_effects(m, q_tokens, [c_tokens]), 20)
        print(f"  {name}: median {seconds:.1f} ms")

    print("randomisation check on one example (4 candidates), per model (goal <= 1 s):")
    for name, matcher in models.items():
        seconds = median_ms(lambda m=matcher: randomisation_check(m, ranking.question_tokens,
                                                                  ranking.candidate_tokens, 0, seed=0), 5)
        print(f"  {name}: median {seconds:.0f} ms")

    lists = parse_ranking_file((ROOT / "samples" / "sample-ranking.csv").read_bytes(), "sample-ranking.csv")
    pairs = sum(len(x.candidates) for x in lists)
    for side in ("answer", "question"):
        start = time.perf_counter()
        curves = deletion_curves(lists, models, side=side)
        curve_s = time.perf_counter() - start
        print(f"deletion curves, {side} words, {len(lists)} questions / {pairs} pairs x {len(models)} models: "
              f"{curve_s:.2f} s (goal <= 20 s; {curves.pairs} pairs with 2+ words)")
        for row in curves.aopc:
            print(f"  {row['model']}, by {row['order']}: comprehensiveness AOPC {row['comprehensiveness AOPC']:+.3f}, "
                  f"sufficiency AOPC {row['sufficiency AOPC']:+.3f}")
    start = time.perf_counter()
    ablation_map(lists, models)
    print(f"attention-ablation MAP on the sample, every attending model: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
