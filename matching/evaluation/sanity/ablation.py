"""Attention ablation: every attention gate's weights are replaced by uniform weights or by the same
weights shuffled over the real words (seeded); the score, the rank and the MAP on a data set show how
much the model relies on its attention.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from matching.evaluation.sanity.common import Progress, map_of, scores_of, usable
from matching.evaluation.studies import gate_override, gates
from matching.explain.matcher import Matcher
from matching.text.data import RankingList
from matching.text.tokens import Token

ABLATIONS = ("uniform", "permuted")


def has_attention(matcher: Matcher) -> bool:
    return bool(gates(matcher))


@contextmanager
def ablated_attention(matcher: Matcher, mode: str, seed: int = 0) -> Iterator[None]:
    """Within the block, every attention gate of the model uses uniform or shuffled weights.

    'uniform': 1/n over the real words; 'permuted': the gate's own weights shuffled over
    the real words of each text (`blocks.attention.shuffled_positions`: the same shuffle for the
    same text and seed). Padding stays at zero either way. The trace shows the weights used.
    """
    if mode not in ABLATIONS:
        raise ValueError(f"unknown attention ablation {mode!r}; choose one of {', '.join(ABLATIONS)}")
    with gate_override(matcher, mode, seed):
        yield


def _ranks(scores: np.ndarray) -> np.ndarray:
    return np.array([1 + int((scores > s).sum()) for s in scores])


def attention_ablation(matcher: Matcher, question: Sequence[Token], candidates: Sequence[Sequence[Token]],
                       seed: int = 0) -> list[dict[str, object]]:
    """Per ablation and candidate: score and rank with the trained attention and with the ablated one."""
    pairs = ([question] * len(candidates), list(candidates))
    trained = matcher.score_tokens(*pairs).astype(np.float64)
    trained_ranks = _ranks(trained)
    rows: list[dict[str, object]] = []
    for mode in ABLATIONS:
        with ablated_attention(matcher, mode, seed):
            ablated = matcher.score_tokens(*pairs).astype(np.float64)
        ablated_ranks = _ranks(ablated)
        for index in range(len(candidates)):
            rows.append({"model": matcher.name, "attention": mode, "#": index + 1,
                         "score": trained[index], "score ablated": ablated[index],
                         "score change": ablated[index] - trained[index],
                         "rank": int(trained_ranks[index]), "rank ablated": int(ablated_ranks[index])})
    return rows


def ablation_map(lists: Sequence[RankingList], matchers: Mapping[str, Matcher], seed: int = 0,
                 max_questions: int | None = None, progress: Progress | None = None) -> list[dict[str, object]]:
    """Per attending model: MAP with its attention, with uniform and with permuted attention."""
    kept, _ = usable(lists, max_questions)
    attending = [m for m in matchers.values() if has_attention(m)]
    rows: list[dict[str, object]] = []
    for done, matcher in enumerate(attending):
        if progress:
            progress(done / max(len(attending), 1), matcher.name)
        row: dict[str, object] = {"model": matcher.name, "questions": len(kept),
                                  "MAP": map_of(kept, scores_of(matcher, kept))}
        for mode in ABLATIONS:
            with ablated_attention(matcher, mode, seed):
                row[f"MAP {mode}"] = map_of(kept, scores_of(matcher, kept))
            row[f"change {mode}"] = float(row[f"MAP {mode}"]) - float(row["MAP"])  # type: ignore[arg-type]
        rows.append(row)
    if progress:
        progress(1.0, "done")
    return rows
