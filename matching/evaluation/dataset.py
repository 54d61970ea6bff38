"""Evaluate models and the baselines on ranking lists: overall and per question, a chunk of questions at a time."""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from matching.evaluation import slices as slicing
from matching.evaluation.metrics import METRICS, question_metrics
from matching.evaluation.progress import READING, Progress
from matching.explain.matcher import Matcher
from matching.models.batching import TextCache
from matching.text.baselines import BASELINES, baseline_scores
from matching.text.data import RankingFile, RankingList
from matching.text.shards import CHUNKING, ChunkCuts, Chunking
from matching.text.tokenized import TokenizedList, tokenize_lists
from matching.text.tokens import collector_paused


@dataclass(frozen=True)
class SystemResults:
    """One system's results per evaluated question (arrays in question order)."""

    metrics: dict[str, np.ndarray]
    """metric -> its value per question (NaN for a question without a correct candidate)."""
    first_correct: np.ndarray
    """Pessimistic rank of the best-placed correct candidate (`first_correct_rank`); 0 when none."""
    top: np.ndarray
    """Position of the top candidate (the first of a tie, as np.argmax)."""


@dataclass(frozen=True)
class Evaluation:
    """What an evaluation keeps: per question, a few numbers per system (never the texts' words
    or every candidate's score), so that its size grows with the questions, not the pairs."""

    systems: list[str]
    """Models first, then the baselines."""
    models: list[str]
    """The systems that are models (the others are `BASELINES`)."""
    overall: dict[str, dict[str, float]]
    """system -> metric -> mean over the questions that have a relevant candidate."""
    results: dict[str, SystemResults]
    """system -> its results per question."""
    qids: list[str]
    questions: list[str]
    """Each evaluated question's text."""
    candidates: np.ndarray
    """Candidates per evaluated question."""
    correct: np.ndarray
    """Correct candidates per evaluated question."""
    positions: np.ndarray
    """Each evaluated question's position among the lists given (skipped ones included)."""
    skipped: list[str]
    """Questions left out, with why (no words, no candidates)."""
    slices: list[dict[str, str] | None] = field(default_factory=list)
    """Per evaluated question, its slice in each slicing (`slices.question_slices`), read from the
    words while they were at hand, so the views never tokenise the file again."""
    wordless: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Per evaluated question, its candidates without words: every model ranks them last (`model_scores`)."""

    def wordless_note(self) -> str | None:
        """What the tables do not show: candidates without words, ranked last by every model (a correct one among
        them lowers that question's AP); None where there are none."""
        count = int(self.wordless.sum())
        if not count:
            return None
        questions = int((self.wordless > 0).sum())
        return (f"{count} candidate{'s' if count != 1 else ''} without words (in {questions} "
                f"question{'s' if questions != 1 else ''}) {'are' if count != 1 else 'is'} ranked last by every "
                "model: no model can read them, and a correct one among them lowers its question's AP.")

    @property
    def evaluated(self) -> int:
        return len(self.qids)

    def ap(self, system: str) -> np.ndarray:
        """Each evaluated question's AP for `system` (NaN without a correct candidate)."""
        return self.results[system].metrics["MAP"]

    def first_correct(self, system: str) -> list[int | None]:
        return [int(rank) or None for rank in self.results[system].first_correct]

    def top(self, model: str) -> np.ndarray:
        """Each evaluated question's top candidate for `model` (its position in the question's list)."""
        return self.results[model].top

    @property
    def disagree(self) -> np.ndarray:
        """Per evaluated question: whether the models put different candidates on top."""
        if not self.models:
            return np.zeros(self.evaluated, dtype=bool)
        tops = np.stack([self.top(m) for m in self.models])
        return (tops != tops[0]).any(axis=0)

    def table(self) -> list[dict[str, object]]:
        return [{"system": s, **{m: self.overall[s][m] for m in METRICS}} for s in self.systems]

    def metric_rows(self) -> list[dict[str, object]]:
        """`table` with a 'kind' column after the system: 'model' or 'baseline'."""
        return [{"system": s, "kind": "model" if s in self.models else "baseline",
                 **{m: self.overall[s][m] for m in METRICS}} for s in self.systems]

    @property
    def per_question(self) -> list[dict[str, object]]:
        """One row per question (built when asked): qid, question, candidate and correct counts,
        each system's AP and rank of the first correct candidate, and whether the models
        disagree on the top answer. The rank is the worst case of a tie (the tied wrong ones counted
        above it), while AP is the expected value over the tie's orders (`metrics`): word overlap tying a
        right and a wrong answer at the top reads first correct 2 and AP 0.75."""
        columns: dict[str, list[object]] = {"qid": list(self.qids), "question": list(self.questions),
                                            "candidates": self.candidates.tolist(), "correct": self.correct.tolist()}
        for s in self.systems:
            columns[f"{s} AP"] = self.ap(s).tolist()
            columns[f"{s} first correct"] = self.first_correct(s)  # type: ignore[assignment]
        columns["models disagree"] = self.disagree.tolist()
        return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]

    def per_question_export(self) -> list[dict[str, object]]:
        """`per_question` with each model's top answer as its number in the question's list (from 1, as the app
        numbers candidates): what `evaluate --per-question` writes, on either engine (a Ray run's driver holds no
        candidate texts)."""
        tops = {model: self.top(model) for model in self.models}
        return [{**row, **{f"{model} top answer #": int(top[n]) + 1 for model, top in tops.items()}}
                for n, row in enumerate(self.per_question)]

    def evaluated_lists(self, lists: Sequence[RankingList]) -> list[RankingList]:
        """The evaluated lists among `lists` (those given to `evaluate`), in the order of the results."""
        return [lists[int(position)] for position in self.positions]

    def slice_rows(self) -> dict[str, list[dict[str, object]]]:
        """MAP per slice of questions (`slices.slice_rows`), from each question's AP."""
        return slicing.slice_rows(self.slices, {s: self.ap(s) for s in self.systems})

    def top_answers(self, lists: Sequence[RankingList],
                    limit: int | None = slicing.TOP_ANSWER_CHARS) -> list[dict[str, str]]:
        """Per evaluated question, each model's top answer (`slices.top_answers`); `lists`: those evaluated."""
        return slicing.top_answers(self.evaluated_lists(lists), {m: self.top(m) for m in self.models}, limit)

    def question_table(self, lists: Sequence[RankingList], shown: str = "first correct rank",
                       disagree: bool = False, low: bool = False, threshold: int = 3,
                       top_answer_chars: int | None = slicing.TOP_ANSWER_CHARS) -> tuple[pd.DataFrame, list[str]]:
        """The per-question table as the Evaluate page shows it, and its columns in order: the questions the
        filters keep (`disagree`: the models' top answers differ; `low`: some model's best-placed correct
        answer is at rank `threshold` or lower), one column per model of the `shown` kind ('first correct
        rank', 'AP' or 'top answer'), and the last baseline's first correct rank beside the first. Top
        answers are shortened to `top_answer_chars` for the screen (None: whole, for an export)."""
        frame = pd.DataFrame(self.per_question)
        first = [f"{m} first correct" for m in self.models]
        if disagree:
            frame = frame[frame["models disagree"]]
        if low and first:
            frame = frame[(frame[first] >= threshold).any(axis=1)]
        frame = frame.copy()
        tops = self.top_answers(lists, top_answer_chars)
        for model in self.models:
            frame[f"{model} top answer"] = [tops[int(n)][model] for n in frame.index]
        per_model = {"first correct rank": first, "AP": [f"{m} AP" for m in self.models],
                     "top answer": [f"{m} top answer" for m in self.models]}[shown]
        baseline = [f"{self.systems[-1]} first correct"] if shown == "first correct rank" else []
        columns = [c for c in ["qid", "question", "candidates", "correct", *per_model, "models disagree", *baseline]
                   if c in frame.columns]
        if all(str(qid) == str(question) for qid, question in zip(self.qids, self.questions, strict=True)):
            columns.remove("qid")  # CSV files have no ids: the question is its own id
        return frame, columns

    def empty_filter_reason(self, disagree: bool, low: bool, threshold: int) -> str:
        """Why the per-question filters leave no question (`slices.empty_filter_reason`)."""
        return slicing.empty_filter_reason(self.per_question, self.models, disagree, low, threshold)


def bucketed_pairs(lists: Sequence[TokenizedList], max_answer_len: int) -> np.ndarray:
    """(P,) the place of every candidate with words among all candidates (list after list), by answer
    words read, then by place (so by question within a length)."""
    words = np.fromiter(map(len, itertools.chain.from_iterable(lst.candidates for lst in lists)), np.int64)
    has_words = np.flatnonzero(words)
    return has_words[np.argsort(np.minimum(words[has_words], max_answer_len), kind="stable")]


def model_scores(matcher: Matcher, lists: Sequence[TokenizedList], batch_size: int = 256,
                 progress: Progress | None = None, workers: int = 1,
                 known: TextCache | None = None) -> list[np.ndarray]:
    """Score every candidate of every list in large batches, on `workers` threads.

    Pairs are bucketed by how many answer words the model reads (then by question), so a
    batch pads little; each question is read once for all its pairs (`Matcher.score_tokens`),
    and each score goes back to its place. The forward passes release the GIL, so batches run
    side by side on several cores; progress is reported from the calling thread, in order.
    A candidate with no words cannot be read by a model; it gets -inf, i.e. it is
    ranked last (and tied with any other such candidate). `known` keeps each text's word rows,
    stems and list BM25 for the next model with the same vectors (see `batching.TextCache`).
    """
    places = bucketed_pairs(lists, matcher.params.max_answer_len)
    sizes = [len(lst.candidates) for lst in lists]
    list_of = np.repeat(np.arange(len(lists)), sizes)
    candidates = list(itertools.chain.from_iterable(lst.candidates for lst in lists))
    order = places.tolist()
    flat = matcher.score_tokens(
        [lists[n].question for n in list_of[places].tolist()], [candidates[p] for p in order], batch_size,
        known, workers,
        None if progress is None else lambda done: progress(done, len(order), matcher.name))
    scores = np.full(len(candidates), -np.inf)
    scores[places] = flat
    return np.split(scores, np.cumsum(sizes)[:-1]) if lists else []


def default_workers() -> int:
    """Models scored side by side on a large file: enough to fill the cores (at most 4), counting
    that each model's scoring already runs on torch's thread count of threads
    (`Matcher.score_tokens`): on two cores 2 in the app (one torch thread), 1 on the command line.
    More would only hold more models' batches in memory at once, for no speed.

    Where torch runs more than two threads (a machine of many cores, each a thread by default), four
    single-threaded workers instead: most of a model's scoring is CPU work around its forward pass
    (tokens, keyword features, batches) that torch's threads do not share. On 16 cores the three
    default models scored 100,000 pairs in 63 s this way against 76 s as one worker of 16 threads,
    and in 40 s with OMP_NUM_THREADS=1 (docs/deployment.md, the fifth GPU lease)."""
    threads, cores = torch.get_num_threads(), os.cpu_count() or 1
    if threads > 2:
        return min(4, cores)
    return max(1, min(4, cores) // threads)


PAIRS_PER_BATCH = 64
"""Pairs per forward pass where the two sides meet. The texts are encoded a block at a time
whatever this is (`Matcher.score_tokens`); only the interaction matrices and what is computed
from them scale with it, and a MatchPyramid batch of 256 held ~40 MB of convolution maps per
thread at once (peak memory of an evaluation with the ten shipped models: 870 MB at 256, 680
MB at 64, in the same time; the scores are the same)."""

CHUNKS_AHEAD = 2
"""Chunks read and tokenised while the models still score earlier ones: enough that the
models never wait for the reader, few enough that memory holds the words of at most
1 + CHUNKS_AHEAD chunks, whatever the size of the file."""


def chunks(lists: Iterable[RankingList], chunking: Chunking = CHUNKING,
           start: tuple[int, int] = (0, 0)) -> Iterator[tuple[int, list[RankingList]]]:
    """(position of the first, lists) of consecutive runs of lists, each closed as `chunking` says
    (`text.shards.ChunkCuts`: the shards of `text.shards` are cut by the same rule, so both paths score
    the same batches). `start`: where in the file `lists` begin (a shard's `before`)."""
    cuts = ChunkCuts(chunking, start)
    chunk: list[RankingList] = []
    first = 0
    for position, item in enumerate(lists, start[0]):
        if not chunk:
            first = position
        chunk.append(item)
        if cuts.add(len(item.candidates)):
            yield first, chunk
            chunk = []
    if chunk:
        yield first, chunk


def system_results(scores: Sequence[np.ndarray], labels: Sequence[Sequence[int]]) -> SystemResults:
    """One system's results on consecutive questions, from its scores of each question's candidates."""
    values = [question_metrics(s, item_labels) for s, item_labels in zip(scores, labels, strict=True)]
    return SystemResults({m: np.array([v[m] for v in values], dtype=np.float64) for m in METRICS},
                         np.array([first_correct_rank(s, item_labels) or 0 for s, item_labels
                                   in zip(scores, labels, strict=True)], dtype=np.int64),
                         np.array([int(np.argmax(s)) for s in scores], dtype=np.int64))


def question_results(first: int, lists: Sequence[RankingList], read: Sequence[TokenizedList], skipped: list[str],
                     scores: Mapping[str, Sequence[np.ndarray]]) -> Evaluation:
    """The evaluation of a run of consecutive lists, `lists` (at positions `first`, `first` + 1, ...):
    `read` are those tokenised (`tokenize_lists`), `skipped` why the others are left out, and `scores`
    each model's scores of `read` (`model_scores`); the baselines are scored here. What one chunk of
    `evaluate`'s pipeline, and one shard of the Ray engine (`ray_engine`), each come to; `assemble`
    joins them."""
    labels = [t.item.labels for t in read]
    baselines = [baseline_scores(t.question, t.candidates) for t in read]
    every = {**scores, **{name: [b[name] for b in baselines] for name in BASELINES}}
    place = {id(item): first + n for n, item in enumerate(lists)}
    results = {name: system_results(values, labels) for name, values in every.items()}
    return Evaluation(
        systems=list(every), models=list(scores), results=results,
        overall={name: mean_over_answerable(values) for name, values in results.items()},
        qids=[t.item.qid for t in read], questions=[t.item.question for t in read],
        candidates=np.array([len(t.item.candidates) for t in read], dtype=np.int64),
        correct=np.array([sum(t.item.labels) for t in read], dtype=np.int64),
        positions=np.array([place[id(t.item)] for t in read], dtype=np.int64),
        skipped=skipped, slices=[slicing.question_slices(t) for t in read],
        wordless=np.array([sum(not words for words in t.candidates) for t in read], dtype=np.int64))


def score_lists(first: int, lists: Sequence[RankingList], models: Mapping[str, Matcher]) -> Evaluation:
    """`question_results` of `lists` (at positions `first`, ...), read and scored by every model in turn
    on this thread: what `evaluate`'s pipeline does with one chunk, spread over threads there."""
    with collector_paused:
        read, skipped = tokenize_lists(lists)
        known: dict[int, TextCache] = {}
        scores = {name: model_scores(matcher, read, PAIRS_PER_BATCH,
                                     known=known.setdefault(id(matcher.vectors), TextCache()))
                  for name, matcher in models.items()}
        return question_results(first, lists, read, skipped, scores)


def assemble(models: Sequence[str], parts: Sequence[Evaluation]) -> Evaluation:
    """One `Evaluation` from those of consecutive runs of lists (`question_results`), in the order of `parts`."""
    systems = [*models, *BASELINES]

    def joined(arrays: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)

    results = {s: SystemResults({m: joined([p.results[s].metrics[m] for p in parts], np.float64) for m in METRICS},
                                joined([p.results[s].first_correct for p in parts], np.int64),
                                joined([p.results[s].top for p in parts], np.int64)) for s in systems}
    return Evaluation(systems=systems, models=list(models), results=results,
                      qids=[q for p in parts for q in p.qids], questions=[q for p in parts for q in p.questions],
                      overall={s: mean_over_answerable(results[s]) for s in systems},
                      candidates=joined([p.candidates for p in parts], np.int64),
                      correct=joined([p.correct for p in parts], np.int64),
                      positions=joined([p.positions for p in parts], np.int64),
                      skipped=[reason for p in parts for reason in p.skipped],
                      slices=[item for p in parts for item in p.slices],
                      wordless=joined([p.wordless for p in parts], np.int64))


def mean_over_answerable(results: SystemResults) -> dict[str, float]:
    """Each metric's mean over the questions that have a relevant candidate (`metrics.mean_metrics`)."""
    kept = ~np.isnan(results.metrics["MAP"])
    return {m: float(np.mean(results.metrics[m][kept])) if kept.any() else float("nan") for m in METRICS}


def evaluate(lists: Sequence[RankingList] | RankingFile, models: Mapping[str, Matcher],
             progress: Progress | None = None, workers: int | None = None,
             chunking: Chunking = CHUNKING) -> Evaluation:
    """Every model and baseline on every list, with the metrics per question and overall.

    A pipeline over chunks of questions (`chunking`: 512 questions or 5,120 pairs, whichever first, of even
    size over the whole of `lists`):
    this thread reads (tokenises) a chunk, while `workers` threads score the chunks already read with
    each model (the forward passes release the GIL, tokenising does not: the two overlap). Once every
    model has scored a chunk, its baselines and metrics per question are kept (`question_results`) and
    its words and scores let go; reading waits while CHUNKS_AHEAD chunks are not done, so memory stays bounded
    whatever the size of `lists` (a `RankingFile` is read as it goes).
    `progress(done, total, what)` comes from this thread: `READING` counts questions read, each
    model's name counts its pairs scored; the stages advance side by side.
    """
    workers = default_workers() if workers is None else workers
    if isinstance(lists, RankingFile):
        total_questions, total_pairs = lists.questions, lists.pairs
    else:
        total_questions, total_pairs = len(lists), sum(len(item.candidates) for item in lists)
    chunking = chunking.for_file(total_questions, total_pairs)
    parts: list[Evaluation] = []
    read_questions = 0
    scored = dict.fromkeys(models, 0)
    # Per chunk still scored: its first position, its lists, those tokenised and why the others were
    # left out, and per model (its pairs, its scores to come).
    in_flight: deque[tuple[int, list[RankingList], list[TokenizedList], list[str],
                           dict[str, tuple[int, Future[list[np.ndarray]]]]]] = deque()

    def finish(block: bool) -> None:
        """Keep the results of the chunks every model has scored, oldest first (waiting for the
        oldest when `block`, not for the next ones), and report each model's progress."""
        while in_flight:
            first, chunk, read, skipped, futures = in_flight[0]
            if not block and not all(future.done() for _, future in futures.values()):
                return
            scores = {}
            for name, (pairs, future) in futures.items():
                scores[name] = future.result()
                scored[name] += pairs
                if progress:
                    progress(scored[name], total_pairs, name)
            parts.append(question_results(first, chunk, read, skipped, scores))
            in_flight.popleft()
            block = False

    # The collector stays paused for the whole run: a chunk's tokens, and the scores and metrics of
    # every question, are many objects in no cycle (see `text.collector_paused`).
    with collector_paused, ThreadPoolExecutor(max(1, workers)) as pool:
        for first, chunk in chunks(lists, chunking):
            while len(in_flight) >= CHUNKS_AHEAD:
                finish(block=True)
            read, skipped = tokenize_lists(chunk)
            # Each text's words are looked up once per vector table, not once per model; the cache
            # lives as long as the chunk's texts (it is keyed by their ids).
            known: dict[int, TextCache] = {}
            futures = {}
            for name, matcher in models.items():
                pairs = sum(len(t.candidates) for t in read)
                cache = known.setdefault(id(matcher.vectors), TextCache())
                futures[name] = (pairs, pool.submit(model_scores, matcher, read, PAIRS_PER_BATCH, known=cache))
            in_flight.append((first, chunk, read, skipped, futures))
            # Scores of skipped lists' candidates count as done, so every stage ends at its total.
            for name in models:
                scored[name] += sum(len(item.candidates) for item in chunk) - futures[name][0]
            read_questions += len(chunk)
            if progress:
                progress(read_questions, total_questions, READING)
            finish(block=False)
        while in_flight:
            finish(block=True)
    return assemble(list(models), parts)


def first_correct_rank(scores: np.ndarray, labels: Sequence[int]) -> int | None:
    """Pessimistic rank (1 = top) of the best-placed correct candidate, ties with wrong candidates counted against it:
    below every higher score and every wrong candidate of its score. Correct candidates tied with it are not counted
    (in any order of the tie, one of them comes first: two tied at ranks 3 and 4 put the first correct answer at 3)."""
    values, correct = np.asarray(scores), np.asarray(labels, dtype=bool)
    if not correct.any():
        return None
    best = values[correct].max()
    return int((values > best).sum() + ((values == best) & ~correct).sum() + 1)


def format_table(evaluation: Evaluation, extra: Mapping[str, Mapping[str, float]] | None = None) -> str:
    """A Markdown table of the overall metrics (models, then baselines, then `extra`)."""
    lines = ["| system | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    for system in evaluation.systems:
        lines.append(f"| {system} | " + " | ".join(f"{evaluation.overall[system][m]:.4f}" for m in METRICS) + " |")
    for system, values in (extra or {}).items():
        lines.append(f"| {system} | " + " | ".join(
            f"{values[m]:.4f}" if m in values else "-" for m in METRICS) + " |")
    return "\n".join(lines)
