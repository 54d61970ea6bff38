"""A trained model ready to score and explain: the model, its vectors and its card."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from matching.explain.explanation import Explanation, TracedExplanations
from matching.models import ForwardTrace, MatchingModel, TextEncoding
from matching.models.base import trace_parts_of
from matching.models.batching import ListStatistics, TextCache, TextTable, lookup_texts, pair_batch
from matching.models.params import ModelParams
from matching.models.parts import Part
from matching.text.embeddings import WordVectors
from matching.text.tokens import TextError, Token, tokenize


def flag_tokens(tokens: Sequence[Token], vectors: WordVectors, max_len: int) -> list[Token]:
    """Mark which tokens have no vector and which lie past `max_len` (see `mark_truncated`)."""
    # Built directly rather than with dataclasses.replace: this runs for every token of
    # every candidate for every model, and replace() was a third of the ranking time.
    return [Token(t.text, t.start, t.end, t.key, unknown=not vectors.is_known(t.key), truncated=i >= max_len)
            for i, t in enumerate(tokens)]


def require_words(tokens: Sequence[Token], what: str) -> None:
    if not tokens:
        raise TextError(f"{what} has no words")


@dataclass
class Matcher:
    """Scores and explains (question, candidate) pairs with one model."""

    name: str
    model: MatchingModel
    vectors: WordVectors
    card: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def __post_init__(self) -> None:
        self.model.eval()

    def __repr__(self) -> str:  # the dataclass's would print the whole card and the network: pages of a notebook
        where = f", from {self.path}" if self.path else ""
        return f"Matcher({self.name!r}, family {self.model.params.family!r}{where})"

    @property
    def device(self) -> torch.device:
        """Where the model's weights are (`to`): each batch is moved there after its words are looked up."""
        return next(self.model.parameters()).device

    def to(self, device: torch.device | str) -> Matcher:
        """This matcher with its model on `device` (`choose_device`); scores and explanations come back on the CPU."""
        self.model.to(device)
        return self

    @property
    def params(self) -> ModelParams:
        return self.model.params

    @property
    def trained_on(self) -> str:
        """The data folder its card says it learned from ("wikiqa", "trecqa-all"...; "" without a card)."""
        data = self.card.get("data")
        return str(data.get("source", "")) if isinstance(data, dict) else ""

    @property
    def parts(self) -> frozenset[Part]:
        """The parts this model's explanations carry (`models.parts.Part`)."""
        return trace_parts_of(self.params)

    def _texts(self, side: str, texts: Sequence[Sequence[Token]], trace: bool, known: TextCache | None = None
               ) -> SideTexts:
        """The distinct text objects of one side looked up, and encoded where the family can, once."""
        max_len = self.params.max_question_len if side == "question" else self.params.max_answer_len
        table, rows = lookup_texts(self.vectors, texts, max_len, side, known)
        table, rows = table.to(self.device), rows.to(self.device)  # no copy on the CPU
        with _grad_mode(trace):
            return SideTexts(table, rows, self.model.encode_texts(side, table.vectors, table.unknown, table.lengths,
                                                                  table.ids, trace=trace))

    def _pass(self, questions: SideTexts, answers: SideTexts, pairs: torch.Tensor | None, trace: bool,
              lists: ListStatistics | None = None) -> torch.Tensor | ForwardTrace:
        """One forward pass over the pairs at `pairs` (all of them when None) of the two sides; `lists`: what the
        model reads from every pair's list, for a model that reads any (`ListStatistics`)."""
        if lists is not None:
            lists = (lists if pairs is None else lists.pick(pairs)).to(self.device)
        with _grad_mode(trace):
            return self.model(pair_batch(*questions.pick(pairs), *answers.pick(pairs), lists=lists), trace=trace)

    def listed(self, questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
               collections: Sequence[Sequence[Sequence[Token]]] | None = None,
               known: TextCache | None = None) -> ListStatistics | None:
        """What the model reads from each pair's list (`collections[p]`, or the pairs given with the same question
        object): BM25 within it for the keyword feature, the question words' IDF within it for MV-LSTM's exact match
        over the list; None where it reads neither."""
        return ListStatistics.of(self.params, questions, answers, collections, known)

    def explain_tokens(self, question: Sequence[Token], candidates: Sequence[Sequence[Token]]
                       ) -> list[Explanation]:
        """One batched forward pass over all candidates, with its full trace, every explanation built."""
        return list(self.traced(question, candidates))

    def traced(self, question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> TracedExplanations:
        """One batched forward pass over all candidates, with its full trace; each candidate's
        explanation is cut from the trace when first asked for."""
        require_words(question, "the question")
        for index, candidate in enumerate(candidates):
            require_words(candidate, f"candidate #{index + 1}")
        params = self.params
        q_tokens = flag_tokens(question, self.vectors, params.max_question_len)
        a_tokens = [flag_tokens(a, self.vectors, params.max_answer_len) for a in candidates]
        # A candidate the model reads word for word as an earlier one (the same lookup keys) is that one's row of
        # the pass: scored in other rows of one batch, copies differed by float noise (2e-6) and took ranks 1 and 2.
        row_of_keys: dict[tuple[str, ...], int] = {}
        rows = [row_of_keys.setdefault(tuple(t.key for t in a), len(row_of_keys)) for a in a_tokens]
        firsts = [rows.index(row) for row in range(len(row_of_keys))]
        questions = [q_tokens] * len(a_tokens)
        lists = self.listed(questions, a_tokens)  # each pair's list is the whole list, copies included
        distinct = [a_tokens[index] for index in firsts]
        trace = self._pass(self._texts("question", questions[: len(distinct)], trace=True),
                           self._texts("answer", distinct, trace=True), None, trace=True,
                           lists=None if lists is None else lists.pick(torch.tensor(firsts)))
        assert isinstance(trace, ForwardTrace)
        return TracedExplanations(trace, self.name, params, questions, a_tokens, rows=rows)

    def explain(self, question: str, candidates: Sequence[str]) -> list[Explanation]:
        return self.explain_tokens(tokenize(question), [tokenize(c) for c in candidates])

    def score_tokens(self, questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
                     batch_size: int = 256, known: TextCache | None = None, workers: int = 1,
                     progress: Callable[[int], None] | None = None,
                     collections: Sequence[Sequence[Sequence[Token]]] | None = None) -> np.ndarray:
        """Scores only (no trace), for evaluation over many pairs (`known`: see `batching.TextCache`).

        A model with the keyword feature "BM25 within the list" reads each pair's list: `collections[p]` (the
        question's candidates, an edited one in its place), or without it the answers given with the same
        question object, as `evaluation.model_scores` gives them.

        Each distinct question is looked up and encoded once for all pairs. The answers are then
        looked up and encoded a block at a time (at most ENCODED_TOGETHER), so the Bi-LSTM reads
        long runs of texts of one length, and their pairs meet in batches of `batch_size`, in the
        order given: given in order of answer length (as `evaluation.model_scores` does), a batch
        pads little, and its answers are consecutive rows of the block, read in place.

        The blocks run side by side on max(`workers`, torch's thread count) threads, each running
        its torch operations on one thread (`single_threaded_workers`): the Bi-LSTM's runs are
        too small to gain much from splitting each operation over threads, and whole blocks
        overlap their Python work too. `progress(pairs scored)` comes from the calling thread.
        """
        scores = np.zeros(len(questions), dtype=np.float32)
        if not questions:
            return scores
        threads = max(workers, torch.get_num_threads())
        # About four blocks a thread, so that the threads finish together; each a whole number of
        # batches (the batches are those of one block of ENCODED_TOGETHER: the same pairs meet).
        per_block = ENCODED_TOGETHER // batch_size
        if threads > 1:
            per_block = min(per_block, len(answers) // (4 * threads * batch_size))
        block = min(ENCODED_TOGETHER, batch_size * max(1, per_block))

        # Over every pair, before they are cut into blocks.
        listed = self.listed(questions, answers, collections, known)

        def score_block(first: int) -> np.ndarray:
            part = slice(first, first + block)
            listed_here = None if listed is None else listed.pick(part)
            answer_texts = self._texts("answer", answers[part], trace=False, known=known)
            question_texts = questions_read.result()
            questions_here = SideTexts(question_texts.table, question_texts.rows[part], question_texts.encoded)
            values = []
            for pairs in torch.arange(len(answer_texts.rows), device=answer_texts.rows.device).split(batch_size):
                result = self._pass(questions_here, answer_texts, pairs, trace=False, lists=listed_here)
                assert isinstance(result, torch.Tensor)
                values.append(result.cpu().numpy())
            return np.concatenate(values)

        firsts = list(range(0, len(answers), block))
        with single_threaded_workers(min(threads, len(firsts))) as pool:
            if pool:
                # The blocks with the most words first: the Bi-LSTM's time goes with the words, and
                # answers given by length make the last blocks the longest; run last, one of them
                # would keep a worker busy while the others have nothing left (longest job first).
                max_len = self.params.max_answer_len
                read = np.fromiter((min(len(a), max_len) for a in answers), np.int64, len(answers))
                firsts.sort(key=lambda first: -int(read[first: first + block].sum()))
            # The questions are read by the first free worker while the others read answers: it is
            # queued first, so no block waits for it without a worker on it.
            questions_read: Future[SideTexts] = (pool or _InPlace()).submit(self._texts, "question", questions,
                                                                             trace=False, known=known)
            done = 0
            for first, values in zip(firsts, pool.map(score_block, firsts) if pool else map(score_block, firsts),
                                     strict=True):
                scores[first: first + len(values)] = values
                done += len(values)
                if progress:
                    progress(done)
        return scores


def choose_device(name: str = "cpu") -> torch.device:
    """The device named on the command line: 'cpu', 'cuda', or 'auto' (cuda where this machine has it).
    Chosen once, where a matcher or a trainer is built; the models read it from their tensors."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name not in ("cpu", "cuda"):
        raise ValueError(f"device {name!r}: choose cpu, cuda or auto")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda': torch sees no CUDA device on this machine (use cpu or auto)")
    if name == "cuda":
        # Full float32 in convolutions too (cuDNN would use TF32 on Ampere and later, about 1e-3 off): a score
        # on the GPU is then the CPU's score to float32 rounding, and its explanation the same one.
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    return torch.device(name)


ENCODED_TOGETHER = 512
"""Answers encoded in one go when scoring many pairs: enough that most lengths come in runs the
Bi-LSTM reads unpadded, few enough that their states stay small (about 25 MB)."""


@contextmanager
def single_threaded_workers(count: int) -> Iterator[ThreadPoolExecutor | None]:
    """`count` threads whose torch operations each run on one thread (None when `count` <= 1).

    Torch's thread count is per thread under OpenMP: a thread takes the process-wide count the
    first time it runs an operation, and `torch.set_num_threads` sets both its own and the
    process-wide one. Each worker sets its own to 1 once it has started, and the process-wide
    count is put back as soon as they all have, so the caller's and later threads' are unchanged.
    Other parallel backends keep one pool for the process: there the workers run as they are.
    """
    if count <= 1:
        yield None
        return
    caller_threads = torch.get_num_threads()
    started = threading.Barrier(count)

    def one_thread(_: int) -> None:
        torch.get_num_threads()  # take the process-wide count first, so that what follows is kept
        if _OPENMP:
            torch.set_num_threads(1)
        started.wait()  # each worker runs one of these: all threads started

    with ThreadPoolExecutor(count) as pool:
        try:
            list(pool.map(one_thread, range(count)))
        finally:
            if _OPENMP:
                torch.set_num_threads(caller_threads)
        yield pool


_OPENMP = "parallel backend: OpenMP" in torch.__config__.parallel_info()


class _InPlace(Executor):
    """Runs what is submitted at once, in the calling thread."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        done.set_result(fn(*args, **kwargs))
        return done


@dataclass(frozen=True)
class SideTexts:
    """One side's texts looked up once, their encoding where the family makes one, and each pair's row."""

    table: TextTable
    rows: torch.Tensor  # (P,) each pair's row in `table`
    encoded: TextEncoding | None

    def pick(self, pairs: torch.Tensor | None) -> tuple[TextTable, TextEncoding | None]:
        """The rows of the pairs at `pairs` (all when None), as wide as their longest text."""
        rows = self.rows if pairs is None else self.rows.index_select(0, pairs)
        table = self.table.rows(rows)
        return table, None if self.encoded is None else self.encoded.rows(rows, table.vectors.shape[1])


def _grad_mode(trace: bool) -> torch.autograd.grad_mode.no_grad | torch.inference_mode:
    """inference_mode to score; no_grad to trace, as a family may read a gradient inside its trace."""
    return torch.no_grad() if trace else torch.inference_mode()
