"""Evaluate models and the baselines on ranking lists: overall and per question."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from matching.evaluation.metrics import METRICS, mean_metrics, question_metrics
from matching.explain.matcher import Matcher
from matching.models.batching import RowCache
from matching.text.baselines import BASELINES, baseline_scores
from matching.text.data import RankingList
from matching.text.tokens import Token, collector_paused, tokenize

Progress = Callable[[int, int, str], None]
"""progress(done, total, what): called as work advances (CLI bar, app progress bar); `what` is a
model's name, or READING while the texts are tokenised."""
READING = "reading the texts"


@dataclass(frozen=True)
class TokenizedList:
    item: RankingList
    question: list[Token]
    candidates: list[list[Token]]


@dataclass(frozen=True)
class Evaluation:
    systems: list[str]
    """Models first, then the baselines."""
    overall: dict[str, dict[str, float]]
    """system -> metric -> mean over the questions that have a relevant candidate."""
    per_question: list[dict[str, object]]
    """One row per question: qid, question, candidate count, each system's AP and rank
    of the first correct candidate, and whether the models disagree on the top answer."""
    scores: dict[str, list[np.ndarray]]
    """system -> one score array per question (in `lists` order)."""
    skipped: list[str]
    """Questions left out, with why (no words, no candidates)."""
    evaluated: int
    lists: list[RankingList] = field(default_factory=list)
    """The evaluated lists, in the order of `per_question` and `scores`."""
    slices: list[dict[str, str] | None] = field(default_factory=list)
    """Per evaluated list, its slice in each slicing (`slices.question_slices`), read from the words
    while they were at hand, so the views never tokenise the file again."""

    def table(self) -> list[dict[str, object]]:
        return [{"system": s, **{m: self.overall[s][m] for m in METRICS}} for s in self.systems]


def tokenize_lists(lists: Sequence[RankingList], progress: Progress | None = None
                   ) -> tuple[list[TokenizedList], list[str]]:
    kept, skipped = [], []
    with collector_paused:
        for number, item in enumerate(lists, 1):
            question = tokenize(item.question)
            if not question:
                skipped.append(f"{item.qid}: the question has no words")
            elif not item.candidates:
                skipped.append(f"{item.qid}: no candidates")
            else:
                kept.append(TokenizedList(item, question, [tokenize(c) for c in item.candidates]))
            if progress and (number % 100 == 0 or number == len(lists)):
                progress(number, len(lists), READING)
            # Let threads waiting for the GIL in (scoring threads between two torch ops) have it now:
            # otherwise each waits out the interpreter's 5 ms switch interval, and scoring all but
            # stops while the texts are read (an upload then took ~2 s longer).
            time.sleep(0)
    return kept, skipped


def bucketed_pairs(lists: Sequence[TokenizedList], max_answer_len: int) -> list[tuple[int, int]]:
    """(list, candidate) of every candidate with words, by answer words read, then by question."""
    pairs = [(n, j) for n, lst in enumerate(lists) for j, c in enumerate(lst.candidates) if c]
    read = np.fromiter((min(len(lists[n].candidates[j]), max_answer_len) for n, j in pairs), np.int64, len(pairs))
    return [pairs[i] for i in np.argsort(read, kind="stable").tolist()]  # stable: by question within a length


def model_scores(matcher: Matcher, lists: Sequence[TokenizedList], batch_size: int = 256,
                 progress: Progress | None = None, workers: int = 1,
                 known: RowCache | None = None) -> list[np.ndarray]:
    """Score every candidate of every list in large batches, on `workers` threads.

    Pairs are bucketed by how many answer words the model reads (then by question), so a
    batch pads little; each question is read once for all its pairs (`Matcher.score_tokens`),
    and each score goes back to its place. The forward passes release the GIL, so batches run
    side by side on several cores; progress is reported from the calling thread, in order.
    A candidate with no words cannot be read by a model; it gets -inf, i.e. it is
    ranked last (and tied with any other such candidate). `known` keeps each text's word rows
    for the next model with the same vectors (see `batching.RowCache`).
    """
    pairs = bucketed_pairs(lists, matcher.params.max_answer_len)
    flat = matcher.score_tokens(
        [lists[n].question for n, _ in pairs], [lists[n].candidates[j] for n, j in pairs], batch_size,
        known, workers,
        None if progress is None else lambda done: progress(done, len(pairs), matcher.name))
    scores = [np.full(len(lst.candidates), -np.inf) for lst in lists]
    for (n, j), value in zip(pairs, flat, strict=True):
        scores[n][j] = value
    return scores


def default_workers() -> int:
    """Threads for scoring a large file: the cores there are, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


CHUNK_QUESTIONS = 512
"""Questions read per step of `evaluate`'s pipeline: few enough that scoring starts within a
second, many enough that each model scores ~5,000 pairs at a time, so the Bi-LSTM reads long
runs of answers of one length (an upload of 40,000 pairs took 10 % less than with 128)."""


def evaluate(lists: Sequence[RankingList], models: Mapping[str, Matcher],
             progress: Progress | None = None, workers: int | None = None) -> Evaluation:
    """Every model and baseline on every list, with the metrics per question and overall.

    A pipeline: this thread reads (tokenises) the texts a chunk of questions at a time and
    scores the chunk with the baselines, while `workers` threads score the chunks already read
    with each model (the forward passes release the GIL, tokenising does not: the two overlap).
    `progress(done, total, what)` comes from this thread: `READING` counts questions read, each
    model's name counts its pairs scored; the stages advance side by side.
    """
    from matching.evaluation.slices import question_slices  # slices reads Evaluations: imported here, not at the top

    workers = default_workers() if workers is None else workers
    systems = [*models, *BASELINES]
    tokenized: list[TokenizedList] = []
    skipped: list[str] = []
    slices: list[dict[str, str] | None] = []
    # Each text's words are looked up once per vector table, not once per model; `tokenized` holds the
    # texts (and so their ids) until the last model is done.
    known: dict[int, RowCache] = {}
    pending: list[tuple[str, list[TokenizedList], int, Future[list[np.ndarray]]]] = []
    # Per system, in question order: scores, metrics and first correct rank, each chunk's added as it
    # comes in, so this thread works on them while the models score the next chunks.
    scores: dict[str, list[np.ndarray]] = {s: [] for s in systems}
    per_system: dict[str, list[dict[str, float]]] = {s: [] for s in systems}
    first_correct: dict[str, list[int | None]] = {s: [] for s in systems}
    total_pairs = sum(len(item.candidates) for item in lists)
    scored = dict.fromkeys(models, 0)

    def record(system: str, read: list[TokenizedList], values: list[np.ndarray]) -> None:
        scores[system] += values
        per_system[system] += [question_metrics(v, t.item.labels) for v, t in zip(values, read, strict=True)]
        first_correct[system] += [first_correct_rank(v, t.item.labels) for v, t in zip(values, read, strict=True)]

    def collect(block: bool) -> None:
        """Take the finished chunks in order (all of them when `block`), reporting progress."""
        while pending and (block or pending[0][3].done()):
            name, read, pairs, future = pending.pop(0)
            record(name, read, future.result())
            scored[name] += pairs
            if progress:
                progress(scored[name], total_pairs, name)

    # The collector stays paused for the whole run: it holds a million tokens, and scores, metrics
    # and rows for every question, none of them in a cycle (see `text.collector_paused`).
    with collector_paused, ThreadPoolExecutor(max(1, workers)) as pool:
        for start in range(0, len(lists), CHUNK_QUESTIONS):
            chunk = lists[start: start + CHUNK_QUESTIONS]
            read, left_out = tokenize_lists(chunk)
            tokenized += read
            skipped += left_out
            pairs = sum(len(item.candidates) for item in chunk)  # progress units: every candidate
            for name, matcher in models.items():
                cache = known.setdefault(id(matcher.vectors), {})
                pending.append((name, read, pairs, pool.submit(model_scores, matcher, read, known=cache)))
            baselines = [baseline_scores(t.question, t.candidates) for t in read]
            for name in BASELINES:
                record(name, read, [b[name] for b in baselines])
            slices += [question_slices(t) for t in read]
            if progress:
                progress(min(start + CHUNK_QUESTIONS, len(lists)), len(lists), READING)
            collect(block=False)
        collect(block=True)
    rows = []
    for n, t in enumerate(tokenized):
        row: dict[str, object] = {"qid": t.item.qid, "question": t.item.question,
                                  "candidates": len(t.item.candidates), "correct": sum(t.item.labels)}
        for s in systems:
            row[f"{s} AP"] = per_system[s][n]["MAP"]
            row[f"{s} first correct"] = first_correct[s][n]
        row["models disagree"] = len({int(np.argmax(scores[s][n])) for s in models}) > 1
        rows.append(row)
    return Evaluation(systems=systems, overall={s: mean_metrics(per_system[s]) for s in systems},
                      per_question=rows, scores=scores, skipped=skipped, evaluated=len(tokenized),
                      lists=[t.item for t in tokenized], slices=slices)


def first_correct_rank(scores: np.ndarray, labels: Sequence[int]) -> int | None:
    """Pessimistic rank (1 = top) of the best-placed correct candidate, ties counted against it."""
    correct = [s for s, label in zip(scores, labels, strict=True) if label]
    if not correct:
        return None
    best = max(correct)
    return int((np.asarray(scores) >= best).sum())


def format_table(evaluation: Evaluation, extra: Mapping[str, Mapping[str, float]] | None = None) -> str:
    """A Markdown table of the overall metrics (models, then baselines, then `extra`)."""
    lines = ["| system | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    for system in evaluation.systems:
        lines.append(f"| {system} | " + " | ".join(f"{evaluation.overall[system][m]:.4f}" for m in METRICS) + " |")
    for system, values in (extra or {}).items():
        lines.append(f"| {system} | " + " | ".join(
            f"{values[m]:.4f}" if m in values else "-" for m in METRICS) + " |")
    return "\n".join(lines)
