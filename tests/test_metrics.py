"""Metrics agree with ir_measures (trec_eval) without ties, and with brute force over tie orders."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import ir_measures
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_measures import AP, RR, P, nDCG

from matching.evaluation.metrics import METRICS, mean_metrics, question_metrics, tie_groups

IR_MEASURES = {"MAP": AP, "MRR": RR, "P@1": P @ 1, "nDCG@3": nDCG @ 3, "nDCG@5": nDCG @ 5}


@st.composite
def ranking_lists(draw: st.DrawFn, max_size: int = 12, tied: bool = False) -> tuple[list[float], list[int]]:
    """Scores (untied, or from a few values so ties are common) and 0/1 labels with a relevant one."""
    size = draw(st.integers(1, max_size))
    if tied:
        scores = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    else:
        scores = draw(st.lists(st.integers(-1000, 1000), min_size=size, max_size=size, unique=True))
    labels = draw(st.lists(st.integers(0, 1), min_size=size, max_size=size).filter(any))
    return [float(s) for s in scores], labels


def ir_measures_values(lists: Sequence[tuple[list[float], list[int]]]) -> tuple[dict[str, dict[str, float]],
                                                                                 dict[str, float]]:
    qrels = [ir_measures.Qrel(f"q{n}", f"d{j}", label) for n, (_, labels) in enumerate(lists)
             for j, label in enumerate(labels)]
    run = [ir_measures.ScoredDoc(f"q{n}", f"d{j}", score) for n, (scores, _) in enumerate(lists)
           for j, score in enumerate(scores)]
    names = {measure: name for name, measure in IR_MEASURES.items()}
    per_query: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(list(IR_MEASURES.values()), qrels, run):
        per_query.setdefault(metric.query_id, {})[names[metric.measure]] = metric.value
    aggregate = ir_measures.calc_aggregate(list(IR_MEASURES.values()), qrels, run)
    return per_query, {names[measure]: value for measure, value in aggregate.items()}


@settings(max_examples=60)
@given(st.lists(ranking_lists(), min_size=1, max_size=4))
def test_untied_metrics_match_ir_measures(lists: list[tuple[list[float], list[int]]]) -> None:
    per_query, aggregate = ir_measures_values(lists)
    ours = [question_metrics(scores, labels) for scores, labels in lists]
    for n, values in enumerate(ours):
        for name in METRICS:
            assert values[name] == pytest.approx(per_query[f"q{n}"][name], abs=1e-9), name
    mean = mean_metrics(ours)
    for name in METRICS:
        assert mean[name] == pytest.approx(aggregate[name], abs=1e-9), name


def strict_order_metrics(ranked_labels: Sequence[int]) -> dict[str, float]:
    """Textbook metrics of one strict order (labels listed best first)."""
    relevant_positions = [rank for rank, label in enumerate(ranked_labels, 1) if label]
    total = len(relevant_positions)
    ap = sum(found / rank for found, rank in enumerate(relevant_positions, 1)) / total

    def ndcg(cutoff: int) -> float:
        dcg = sum(1 / math.log2(rank + 1) for rank in relevant_positions if rank <= cutoff)
        return dcg / sum(1 / math.log2(rank + 1) for rank in range(1, min(total, cutoff) + 1))

    return {"MAP": ap, "MRR": 1 / relevant_positions[0], "P@1": float(ranked_labels[0]),
            "nDCG@3": ndcg(3), "nDCG@5": ndcg(5)}


def brute_force_expectation(scores: Sequence[float], labels: Sequence[int]) -> dict[str, float]:
    """Mean over every order of every group of tied candidates (each order equally likely)."""
    groups = [[labels[j] for j in range(len(scores)) if scores[j] == value]
              for value in sorted(set(scores), reverse=True)]
    totals = dict.fromkeys(METRICS, 0.0)
    count = 0
    for orders in itertools.product(*(itertools.permutations(group) for group in groups)):
        for name, value in strict_order_metrics([label for order in orders for label in order]).items():
            totals[name] += value
        count += 1
    return {name: total / count for name, total in totals.items()}


@settings(max_examples=150)
@given(ranking_lists(max_size=7, tied=True))
def test_tie_rule_is_the_expectation_over_tie_orders(ranking: tuple[list[float], list[int]]) -> None:
    scores, labels = ranking
    ours = question_metrics(scores, labels)
    expected = brute_force_expectation(scores, labels)
    for name in METRICS:
        assert ours[name] == pytest.approx(expected[name], abs=1e-9), name


def test_a_long_tie_gives_the_sums_over_every_count_of_relevant_ones_ahead() -> None:
    """The closed forms on MS MARCO's length (1,000 candidates, 996 tied at 0, 4 of them relevant) against the
    tie rule's sums written out in exact fractions: the chance of each offset of the first relevant one (MRR) and,
    for AP, of each count x of the other relevant ones ahead of one at offset p (hypergeometric)."""
    scores = [3.0, 2.0, 1.5, 1.0] + [0.0] * 996
    labels = [0, 1, 0, 1] + [0] * 500 + [1, 0, 1, 1] + [0] * 492
    t, r, before, relevant_before = 996, 3, 4, 2
    mrr = Fraction(1, 2)  # the first relevant one is untied, at rank 2
    ap = Fraction(1, 2) + Fraction(2, 4)
    for p in range(1, t + 1):
        for x in range(min(r - 1, p - 1) + 1):
            chance = Fraction(math.comb(r - 1, x) * math.comb(t - r, p - 1 - x), math.comb(t - 1, p - 1))
            ap += Fraction(r, t) * chance * Fraction(relevant_before + x + 1, before + p)
    ap /= relevant_before + r
    values = question_metrics(scores, labels)
    assert values["MAP"] == pytest.approx(float(ap), abs=1e-12) and values["MRR"] == float(mrr)
    # A tie that holds the first relevant one: MRR by the chance of each offset, C(t - p, r - 1) / C(t, r).
    tied = question_metrics([0.0] * 1000, [1 if n % 250 == 7 else 0 for n in range(1000)])
    exact = sum(Fraction(math.comb(1000 - p, 3), math.comb(1000, 4)) / p for p in range(1, 998))
    assert tied["MRR"] == pytest.approx(float(exact), abs=1e-12)


@pytest.mark.parametrize("size", [1, 2, 5, 10, 30])
def test_constant_scores_get_the_random_order_expectation(size: int) -> None:
    labels = [1] + [0] * (size - 1)  # input order would put the answer first
    values = question_metrics([0.5] * size, labels)
    harmonic = sum(1 / r for r in range(1, size + 1))
    assert values["MRR"] == pytest.approx(harmonic / size)
    assert values["MAP"] == pytest.approx(harmonic / size)  # one relevant: AP = 1 / rank
    assert values["P@1"] == pytest.approx(1 / size)
    expected_ndcg3 = sum(1 / math.log2(r + 1) for r in range(1, min(size, 3) + 1)) / size
    assert values["nDCG@3"] == pytest.approx(expected_ndcg3)
    if size > 1:
        assert values["MRR"] < question_metrics(-np.arange(size), labels)["MRR"] == 1.0


def test_constant_scores_with_several_relevant() -> None:
    # 2 relevant among 4: P@1 = 1/2 whatever the input order.
    assert question_metrics([1.0] * 4, [0, 0, 1, 1])["P@1"] == question_metrics([1.0] * 4, [1, 1, 0, 0])["P@1"] == 0.5
    assert question_metrics([1.0] * 4, [1, 1, 0, 0]) == question_metrics([1.0] * 4, [0, 1, 0, 1])


def test_no_relevant_candidate_is_left_out_of_the_mean() -> None:
    empty = question_metrics([0.3, 0.1], [0, 0])
    assert all(math.isnan(v) for v in empty.values())
    perfect = question_metrics([0.3, 0.1], [1, 0])
    assert mean_metrics([empty, perfect]) == {name: 1.0 for name in METRICS}
    assert all(math.isnan(v) for v in mean_metrics([empty]).values())


def test_tie_groups() -> None:
    groups = tie_groups([0.2, 0.9, 0.2, 0.5, 0.2], [1, 0, 0, 1, 1])
    assert [(g.size, g.relevant, g.before, g.relevant_before) for g in groups] == [
        (1, 0, 0, 0), (1, 1, 1, 0), (3, 2, 2, 1)]


def test_minus_infinity_ranks_last() -> None:
    values = question_metrics([-math.inf, 0.1, -math.inf], [1, 0, 0])
    assert values["MRR"] == pytest.approx((1 / 2 + 1 / 3) / 2)
