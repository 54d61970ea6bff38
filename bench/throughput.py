"""Throughput: (question, answer) pairs scored per second at batch 256, per model.

Scores only (no explanation), as evaluation does. Run: python bench/throughput.py
"""

from __future__ import annotations

import time

import torch
from common import CANDIDATES, QUESTION, ROOT

from matching.checkpoint import load_all
from matching.text import tokenize


def main(pairs: int = 2048, batch_size: int = 256) -> None:
    models, _ = load_all(ROOT / "pretrained")
    question = tokenize(QUESTION)
    answers = [tokenize(c) for c in CANDIDATES]
    questions = [question] * pairs
    batch = [answers[i % len(answers)] for i in range(pairs)]
    print(f"{pairs} pairs, batch {batch_size}, torch threads {torch.get_num_threads()}")
    for name, matcher in models.items():
        matcher.score_tokens(questions[:batch_size], batch[:batch_size], batch_size)  # warm-up
        start = time.perf_counter()
        matcher.score_tokens(questions, batch, batch_size)
        elapsed = time.perf_counter() - start
        print(f"  {name}: {pairs / elapsed:,.0f} pairs/s")


if __name__ == "__main__":
    main()
