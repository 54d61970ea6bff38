"""An uploaded ranking file of 40,000 pairs, evaluated as the Evaluate page does (goal: <= 20 s).

Writes a CSV (question, candidate, label) of WikiQA-like lists (the generator of
bench/throughput.py: ~10 candidates per question, answers of ~25 words), then times what the
page runs on upload: parsing the file, then `evaluation.evaluate` with the models the page
evaluates by default (the Rank page's default set; `--all-models` for every shipped one) and
the baselines, with a progress callback as the page's progress bar uses. torch on one thread
per scoring thread, as in the app.

Run: python bench/evaluate_upload.py [--pairs 40000] [--all-models]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import time

import torch
from common import ROOT, wikiqa_like

from matching.evaluation import dataset as evaluation_module
from matching.text.data import parse_ranking_file
from matching.training.cards import default_models
from matching.training.checkpoint import load_all


def ranking_csv(pairs: int, vectors: object) -> bytes:
    lists = wikiqa_like(vectors, questions=pairs // 9, seed=1)  # type: ignore[arg-type]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["question", "candidate", "label"])
    written = 0
    for item in lists:
        for candidate, label in zip(item.candidates, item.labels, strict=True):
            if written == pairs:
                break
            writer.writerow([item.question, candidate, label])
            written += 1
    while written < pairs:  # top up with one more list's worth, reusing the first question
        writer.writerow([lists[0].question, lists[0].candidates[written % len(lists[0].candidates)], 0])
        written += 1
    return buffer.getvalue().encode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=40_000)
    parser.add_argument("--all-models", action="store_true", help="every shipped model, not the default set")
    args = parser.parse_args()
    torch.set_num_threads(1)
    models, errors = load_all(ROOT / "pretrained")
    if errors:
        print("load errors:", errors)
    if not args.all_models:
        models = {name: models[name] for name in default_models(list(models))}
    raw = ranking_csv(args.pairs, next(iter(models.values())).vectors)
    updates: list[float] = []

    def progress(done: int, total: int, what: str) -> None:
        updates.append(time.perf_counter())

    start, start_cpu = time.perf_counter(), time.process_time()
    lists = parse_ranking_file(raw, "bench.csv")
    parsed = time.perf_counter()
    result = evaluation_module.evaluate(lists, models, progress=progress)
    done, cpu = time.perf_counter(), time.process_time() - start_cpu
    pairs = sum(len(item.candidates) for item in lists)
    gaps = [b - a for a, b in zip([parsed, *updates], updates, strict=False)]
    print(f"{pairs:,} pairs in {len(lists):,} questions ({len(raw) / 1e6:.1f} MB CSV); models: {', '.join(models)}")
    threads = getattr(evaluation_module, "default_workers", lambda: 1)()  # 1 before threads came in
    print(f"parse {parsed - start:.1f} s; evaluate (tokenise, {len(models)} models, baselines, metrics) "
          f"{done - parsed:.1f} s; total {done - start:.1f} s (goal <= 20 s); CPU {cpu:.1f} s on "
          f"{threads} scoring thread(s); load average now {os.getloadavg()[0]:.1f}")
    print(f"progress updates: {len(updates)}, longest gap between two {max(gaps, default=0):.2f} s; "
          f"{result.evaluated:,} questions evaluated")


if __name__ == "__main__":
    main()
