"""A trained model ready to score and explain: the model, its vectors and its card."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .batching import RowCache, make_token_batch
from .embeddings import WordVectors
from .explanation import Explanation, TracedExplanations
from .models import ForwardTrace, MatchingModel
from .params import ModelParams
from .text import TextError, Token, tokenize


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

    @property
    def params(self) -> ModelParams:
        return self.model.params

    def _batch_pass(self, question_tokens: Sequence[Sequence[Token]], answer_tokens: Sequence[Sequence[Token]],
                    trace: bool, known: RowCache | None = None) -> torch.Tensor | ForwardTrace:
        params = self.params
        # The same question object repeated for each candidate is looked up (and encoded) once.
        batch = make_token_batch(self.vectors, question_tokens, answer_tokens,
                                 params.max_question_len, params.max_answer_len, known)
        with torch.no_grad():  # not inference_mode: a family may read a gradient inside its trace
            return self.model(batch, trace=trace)

    def explain_tokens(self, question: Sequence[Token], candidates: Sequence[Sequence[Token]]
                       ) -> list[Explanation]:
        """One batched forward pass over all candidates, with its full trace, every explanation built."""
        return list(self.traced(question, candidates))

    def traced(self, question: Sequence[Token], candidates: Sequence[Sequence[Token]]) -> TracedExplanations:
        """One batched forward pass over all candidates, with its full trace; each candidate's
        explanation is cut from the trace when first asked for."""
        require_words(question, "the question")
        for index, candidate in enumerate(candidates):
            require_words(candidate, f"candidate {index + 1}")
        params = self.params
        q_tokens = flag_tokens(question, self.vectors, params.max_question_len)
        a_tokens = [flag_tokens(a, self.vectors, params.max_answer_len) for a in candidates]
        trace = self._batch_pass([q_tokens] * len(a_tokens), a_tokens, trace=True)
        assert isinstance(trace, ForwardTrace)
        return TracedExplanations(trace, self.name, params, [q_tokens] * len(a_tokens), a_tokens)

    def explain(self, question: str, candidates: Sequence[str]) -> list[Explanation]:
        return self.explain_tokens(tokenize(question), [tokenize(c) for c in candidates])

    def score_tokens(self, questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
                     batch_size: int = 256, known: RowCache | None = None) -> np.ndarray:
        """Scores only (no trace), for evaluation over many pairs (`known`: see `batching.RowCache`)."""
        scores = []
        for start in range(0, len(questions), batch_size):
            stop = start + batch_size
            result = self._batch_pass(questions[start:stop], answers[start:stop], trace=False, known=known)
            assert isinstance(result, torch.Tensor)
            scores.append(result.numpy())
        return np.concatenate(scores) if scores else np.zeros(0, dtype=np.float32)
