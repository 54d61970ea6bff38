"""Latency: rank + full explanation of one question against 20 candidates, all shipped models.

Prints the median and p95 over 100 runs (after 5 warm-up runs). Goal: median <= 50 ms.
Run: python bench/latency.py
"""

from __future__ import annotations

import statistics
import time

import torch
from common import CANDIDATES, QUESTION, ROOT

from matching.explain.ranking import rank
from matching.training.checkpoint import load_all


def main(runs: int = 100) -> None:
    torch.set_num_threads(1)  # as the app does (views/state.py): faster for these tiny batches
    models, errors = load_all(ROOT / "pretrained")
    if errors:
        print("load errors:", errors)
    for _ in range(5):
        rank(QUESTION, CANDIDATES, models)
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        rank(QUESTION, CANDIDATES, models)
        timings.append((time.perf_counter() - start) * 1000)
    timings.sort()
    p95 = timings[int(0.95 * (len(timings) - 1))]
    print(f"models: {', '.join(models)} ({len(models)}); candidates: {len(CANDIDATES)}; "
          f"torch threads: {torch.get_num_threads()}")
    print(f"rank + explanations, {runs} runs: median {statistics.median(timings):.1f} ms, "
          f"p95 {p95:.1f} ms, min {timings[0]:.1f} ms")
    for name, matcher in models.items():
        single = []
        for _ in range(30):
            start = time.perf_counter()
            matcher.explain(QUESTION, CANDIDATES)
            single.append((time.perf_counter() - start) * 1000)
        print(f"  {name}: median {statistics.median(single):.1f} ms per 20 candidates")


if __name__ == "__main__":
    main()
