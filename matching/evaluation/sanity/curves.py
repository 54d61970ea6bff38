"""Deletion curves (comprehensiveness and sufficiency, DeYoung et al., ERASER 2020): words ordered by
attention, by their deletion effect or at random; deleting the top k% should lower the score a lot
(comprehensiveness) and keeping only them should keep it (sufficiency, small is good). AOPC is the
mean over the k% steps.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from matching.evaluation.sanity.common import Progress, usable
from matching.explain.deletion import in_place, seen_positions, without
from matching.explain.explanation import Explanation
from matching.explain.matcher import Matcher
from matching.text.data import RankingList
from matching.text.tokens import Token

FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
ORDERS = ("attention", "deletion effect", "random")


@dataclass(frozen=True)
class DeletionCurves:
    side: str
    fractions: tuple[float, ...]
    points: tuple[dict[str, object], ...]
    """model, order, fraction, comprehensiveness, sufficiency (means over the pairs)."""
    aopc: tuple[dict[str, object], ...]
    """model, order, comprehensiveness AOPC, sufficiency AOPC, pairs."""
    pairs: int
    notes: tuple[str, ...]


def _words_to_cut(count: int, fraction: float) -> int:
    """At least one word, and never every seen word."""
    return min(count - 1, max(1, math.ceil(fraction * count)))


def side_weights(explanation: Explanation, side: str) -> np.ndarray | None:
    """The weights a model puts on the words of `side`: its attention gate's where it has one there, else the
    first other word weighting that covers the side (a co-attention); None where nothing weighs that side."""
    for question, answer in explanation.all_word_weights.values():
        weights = question if side == "question" else answer
        if weights is not None:
            return weights
    return None


def deletion_curves(lists: Sequence[RankingList], matchers: Mapping[str, Matcher], side: str = "answer",
                    fractions: Sequence[float] = FRACTIONS, seed: int = 0, max_questions: int | None = None,
                    progress: Progress | None = None) -> DeletionCurves:
    """Comprehensiveness, sufficiency and AOPC per model and word order, over every usable pair.

    Pairs whose `side` has fewer than two seen words are left out (nothing to order).
    The 'attention' order exists only for models that weigh the words of `side` (`side_weights`).
    """
    if side not in ("question", "answer"):
        raise ValueError("side must be 'question' or 'answer'")
    kept, notes = usable(lists, max_questions)
    points: list[dict[str, object]] = []
    aopc: list[dict[str, object]] = []
    pairs_used = 0
    names = list(matchers)
    for model_index, name in enumerate(names):
        matcher = matchers[name]
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])  # the same whatever else is loaded
        limit = matcher.params.max_question_len if side == "question" else matcher.params.max_answer_len
        # 1. one traced pass per question: scores and attention
        base: list[tuple[Sequence[Token], Sequence[Token], float, np.ndarray | None, int]] = []
        places: list[tuple[Sequence[Sequence[Token]], int]] = []  # each pair's list and place in it
        for t in kept:
            for index, (explanation, candidate) in enumerate(zip(matcher.explain_tokens(t.question, t.candidates),
                                                                 t.candidates, strict=True)):
                words = t.question if side == "question" else candidate
                seen = len(seen_positions(words, limit))
                if seen < 2:
                    continue
                alpha = side_weights(explanation, side)
                base.append((t.question, candidate, explanation.score, alpha, seen))
                places.append((t.candidates, index))

        def in_its_list(pair: int, answer: Sequence[Token], places: list[tuple[Sequence[Sequence[Token]], int]] = places
                        ) -> Sequence[Sequence[Token]]:
            """The edited pair's list: its candidates, the edited answer in its place (a keyword feature may read
            the list: `Matcher.score_tokens`' collections)."""
            return in_place(places[pair][0], places[pair][1], answer)
        pairs_used = len(base)
        if progress:
            progress((model_index + 0.3) / len(names), f"{name}: deletion effects")

        def edit(question: Sequence[Token], candidate: Sequence[Token], drop: set[int]
                 ) -> tuple[Sequence[Token], Sequence[Token]]:
            if side == "question":
                return without(question, drop), candidate
            return question, without(candidate, drop)

        # 2. every single-word deletion, in one batched pass
        questions: list[Sequence[Token]] = []
        answers: list[Sequence[Token]] = []
        collections: list[Sequence[Sequence[Token]]] = []
        for pair, (question, candidate, _, _, seen) in enumerate(base):
            for p in range(seen):
                q, a = edit(question, candidate, {p})
                questions.append(q)
                answers.append(a)
                collections.append(in_its_list(pair, a))
        single = matcher.score_tokens(questions, answers, collections=collections) if questions else np.zeros(0)
        orders: list[dict[str, np.ndarray]] = []
        offset = 0
        for _, _, score, alpha, seen in base:
            effects = score - single[offset:offset + seen]
            offset += seen
            order = {"deletion effect": np.argsort(-effects, kind="stable"), "random": rng.permutation(seen)}
            if alpha is not None:
                order["attention"] = np.argsort(-np.asarray(alpha[:seen]), kind="stable")
            orders.append(order)
        if progress:
            progress((model_index + 0.6) / len(names), f"{name}: curves")
        # 3. comprehensiveness and sufficiency edits, in one batched pass
        questions, answers, keys, collections = [], [], [], []
        for pair, ((question, candidate, _, _, seen), order) in enumerate(zip(base, orders, strict=True)):
            words = question if side == "question" else candidate
            for kind, ranked in order.items():
                for fraction in fractions:
                    top = {int(p) for p in ranked[:_words_to_cut(seen, fraction)]}
                    rest = set(range(len(words))) - top
                    for what, drop in (("comprehensiveness", top), ("sufficiency", rest)):
                        q, a = edit(question, candidate, drop)
                        questions.append(q)
                        answers.append(a)
                        collections.append(in_its_list(pair, a))
                        keys.append((pair, kind, fraction, what))
        edited = matcher.score_tokens(questions, answers, collections=collections) if questions else np.zeros(0)
        sums: dict[tuple[str, float, str], list[float]] = {}
        for (pair, kind, fraction, what), value in zip(keys, edited, strict=True):
            sums.setdefault((kind, fraction, what), []).append(base[pair][2] - float(value))
        for kind in ORDERS:
            if (kind, fractions[0], "comprehensiveness") not in sums:
                continue
            curve = []
            for fraction in fractions:
                comp = float(np.mean(sums[(kind, fraction, "comprehensiveness")]))
                suff = float(np.mean(sums[(kind, fraction, "sufficiency")]))
                curve.append((comp, suff))
                points.append({"model": name, "order": kind, "fraction": fraction, "comprehensiveness": comp,
                               "sufficiency": suff})
            aopc.append({"model": name, "order": kind, "comprehensiveness AOPC": float(np.mean([c for c, _ in curve])),
                         "sufficiency AOPC": float(np.mean([s for _, s in curve])),
                         "pairs": len(sums[(kind, fractions[0], "comprehensiveness")])})
        if progress:
            progress((model_index + 1) / len(names), f"{name}: done")
    return DeletionCurves(side=side, fractions=tuple(fractions), points=tuple(points), aopc=tuple(aopc),
                          pairs=pairs_used, notes=tuple(notes))
