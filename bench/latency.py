"""Latency: rank + full explanation of one question against 20 candidates, all shipped models (or --models).

Prints the median and p95 over 100 runs (after 5 warm-up runs), then the same with every pooled cell of every
candidate read (a page reads those of the candidate it shows). Goals: ten models, median <= 60 ms; one model
(e.g. `--models mcan`), median <= 15 ms.
Run: python bench/latency.py [--models NAME ...] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from common import CANDIDATES, QUESTION, ROOT

from matching.explain.ranking import rank
from matching.training.checkpoint import load_all


def main(runs: int = 100, names: list[str] | None = None) -> None:
    torch.set_num_threads(1)  # as the app does (views/state.py): faster for these tiny batches
    models, errors = load_all(ROOT / "pretrained")
    if errors:
        print("load errors:", errors)
    if names:
        missing = sorted(set(names) - set(models))
        if missing:
            raise SystemExit(f"no shipped model {missing}; shipped: {sorted(models)}")
        models = {name: models[name] for name in names}

    def rank_and_explain(read_cells: bool = False) -> None:
        """The ranking and every candidate's explanation from every model (each cut from its trace);
        with `read_cells`, every pooled cell of every explanation read too (built when first read)."""
        ranking = rank(QUESTION, CANDIDATES, models)
        for result in ranking.models.values():
            for explanation in result.explanations:
                if read_cells:
                    list(explanation.pooled_cells)

    print(f"models: {', '.join(models)} ({len(models)}); candidates: {len(CANDIDATES)}; "
          f"torch threads: {torch.get_num_threads()}")
    for read_cells, what in ((False, "rank + every explanation"),
                             (True, "the same + every pooled cell of every candidate read (a page reads one's)")):
        for _ in range(5):
            rank_and_explain(read_cells)
        timings = []
        for _ in range(runs):
            start = time.perf_counter()
            rank_and_explain(read_cells)
            timings.append((time.perf_counter() - start) * 1000)
        timings.sort()
        p95 = timings[int(0.95 * (len(timings) - 1))]
        print(f"{what}, {runs} runs: median {statistics.median(timings):.1f} ms, "
              f"p95 {p95:.1f} ms, min {timings[0]:.1f} ms")
    for name, matcher in models.items():
        single = []
        for _ in range(30):
            start = time.perf_counter()
            matcher.explain(QUESTION, CANDIDATES)
            single.append((time.perf_counter() - start) * 1000)
        print(f"  {name}: median {statistics.median(single):.1f} ms per 20 candidates")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", help="shipped model names (default: all)")
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    main(args.runs, args.models)
