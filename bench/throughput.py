"""Throughput: the project's scoring path against a MatchZoo-py-style MVLSTM, same pairs, same run.

The reference is written here in plain PyTorch and does what MatchZoo-py's `MVLSTM` does:
word ids padded 'pre' to a fixed 10 (question) / 40 (answer) tokens, a frozen GloVe
embedding, one bidirectional `nn.LSTM` per side over the padded ids, cosine matching by
normalise + einsum, `topk` of the flattened matrix, an MLP and a linear score; no masks
(padding enters the LSTM states and the matrix). Same sizes as the shipped MV-LSTM: hidden
50 per direction, k 10, MLP 32, GloVe 50d.

The project's path is what `python -m matching evaluate` and the Evaluate page run:
`evaluation.model_scores` over tokenised ranking lists (word lookup; each distinct question
and each block of answers encoded once, unpadded; masked batches where the two sides meet).
Both start from the same tokens; tokenisation is not timed. A second figure per model times
the same scoring with every text's word ids already known, as for the second and later
models of an upload.

Pairs: the WikiQA test split (`--data`, default ../shared/data/wikiqa/test) when present,
else WikiQA-like pairs generated here (same question/answer length profile, GloVe words).

Run: python bench/throughput.py [--data DIR] [--threads 1] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from common import ROOT, wikiqa_like
from torch import nn

from matching.evaluation.dataset import TokenizedList, model_scores, tokenize_lists
from matching.explain.matcher import Matcher
from matching.models.batching import TextCache
from matching.text.data import DataError, read_toks_folder
from matching.text.embeddings import WordVectors
from matching.training.checkpoint import load_all

REFERENCE_QUESTION_LEN, REFERENCE_ANSWER_LEN = 10, 40
BATCH_SIZE = 256


# ---------------------------------------------------------------- pairs

def load_pairs(data: Path, vectors: WordVectors) -> tuple[list[TokenizedList], str]:
    try:
        lists, source = read_toks_folder(data), f"WikiQA {data}"
    except DataError:
        lists, source = wikiqa_like(vectors), f"generated WikiQA-like pairs ({data} not found)"
    tokenized, _ = tokenize_lists(lists)
    return tokenized, source


# ---------------------------------------------------------------- the MatchZoo-py-style reference

class ReferenceMVLSTM(nn.Module):
    """MatchZoo-py's MVLSTM forward pass: fixed padding, no masks."""

    def __init__(self, embedding: np.ndarray, hidden: int = 50, k: int = 10, mlp: int = 32) -> None:
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(torch.from_numpy(np.array(embedding)), freeze=True)
        dim = embedding.shape[1]
        self.left_bilstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.right_bilstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.k = k
        self.mlp = nn.Sequential(nn.Linear(k, mlp), nn.ReLU())
        self.out = nn.Linear(mlp, 1)

    def forward(self, query: torch.Tensor, doc: torch.Tensor) -> torch.Tensor:
        query_states, _ = self.left_bilstm(self.embedding(query))
        doc_states, _ = self.right_bilstm(self.embedding(doc))
        query_unit = nn.functional.normalize(query_states, p=2, dim=-1)
        doc_unit = nn.functional.normalize(doc_states, p=2, dim=-1)
        matching = torch.einsum("bld,brd->blr", query_unit, doc_unit)
        top = torch.topk(matching.flatten(1), k=self.k, dim=-1, sorted=True)[0]
        return self.out(self.mlp(top)).squeeze(-1)


def pad_pre(ids: Sequence[int], length: int, pad: int) -> list[int]:
    """MatchZoo's 'pre' padding and truncation: keep the first `length` ids, pad in front."""
    ids = list(ids[:length])
    return [pad] * (length - len(ids)) + ids


def reference_scores(model: ReferenceMVLSTM, vectors: WordVectors, lists: Sequence[TokenizedList]) -> np.ndarray:
    """End to end from tokens: ids, fixed padding, batches of 256, forward."""
    pad = 0  # MatchZoo maps padding and unknown words to a reserved row; row 0 stands in for it here
    pairs = [(lst.question, candidate) for lst in lists for candidate in lst.candidates if candidate]
    scores = []
    with torch.inference_mode():
        for start in range(0, len(pairs), BATCH_SIZE):
            chunk = pairs[start:start + BATCH_SIZE]
            query = torch.tensor([pad_pre([vectors.row_of.get(t.key, pad) for t in q], REFERENCE_QUESTION_LEN, pad)
                                  for q, _ in chunk])
            doc = torch.tensor([pad_pre([vectors.row_of.get(t.key, pad) for t in a], REFERENCE_ANSWER_LEN, pad)
                                for _, a in chunk])
            scores.append(model(query, doc).numpy())
    return np.concatenate(scores)


# ---------------------------------------------------------------- timing

def ids_known(matcher: Matcher, lists: Sequence[TokenizedList]) -> Callable[[], object]:
    """The same scoring with every text's lookup-key ids already known (the shared `known` cache
    an upload fills for its first model), so the GloVe word lookups are not timed."""
    known = TextCache()
    model_scores(matcher, lists, BATCH_SIZE, known=known)
    return lambda: model_scores(matcher, lists, BATCH_SIZE, known=known)


def interleaved_rates(work: dict[str, Callable[[], object]], pairs: int, repeats: int
                      ) -> dict[str, tuple[float, float]]:
    """(best, median) pairs per second of each piece of work over `repeats` runs taken in turn,
    after a warm-up round. Taking turns makes a busy moment on a shared machine hit every system
    alike; the best run (timeit's rule) is the one least disturbed by other processes."""
    rates: dict[str, list[float]] = {name: [] for name in work}
    for round_number in range(repeats + 1):
        for name, run in work.items():
            start = time.perf_counter()
            run()
            if round_number:
                rates[name].append(pairs / (time.perf_counter() - start))
    return {name: (max(values), statistics.median(values)) for name, values in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wikiqa" / "test")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app uses 1)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=None, help="shipped models to time (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    models, errors = load_all(ROOT / "pretrained")
    if errors:
        print("load errors:", errors)
    chosen = {name: m for name, m in models.items() if not args.models or name in args.models}
    if not chosen:
        print("no model could be loaded; nothing to time")
        return
    vectors = next(iter(chosen.values())).vectors
    lists, source = load_pairs(args.data, vectors)
    pairs = sum(1 for lst in lists for c in lst.candidates if c)
    print(f"{pairs:,} pairs ({source}), {len(lists)} questions; batch {BATCH_SIZE}; "
          f"torch threads {torch.get_num_threads()}; best of {args.repeats} interleaved runs")

    reference = ReferenceMVLSTM(vectors.matrix).eval()
    work: dict[str, Callable[[], object]] = {"reference": lambda: reference_scores(reference, vectors, lists)}
    for name, matcher in chosen.items():
        work[name] = lambda m=matcher: model_scores(m, lists, BATCH_SIZE)
        work[f"{name} ids known"] = ids_known(matcher, lists)
    rates = interleaved_rates(work, pairs, args.repeats)
    ref_best, ref_median = rates["reference"]
    print(f"  reference (MatchZoo-py MVLSTM, pre-padded {REFERENCE_QUESTION_LEN}/{REFERENCE_ANSWER_LEN}, "
          f"no masks): {ref_best:,.0f} pairs/s end to end (median {ref_median:,.0f})")
    for name in chosen:
        best, median = rates[name]
        known_best, _ = rates[f"{name} ids known"]
        print(f"  {name}: {best:,.0f} pairs/s end to end (median {median:,.0f}), with the word ids already "
              f"looked up {known_best:,.0f}; {best / ref_best:.2f}x the reference end to end "
              f"({median / ref_median:.2f}x on the medians)")

if __name__ == "__main__":
    main()
