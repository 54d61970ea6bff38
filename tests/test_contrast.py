"""The gap between two candidates splits exactly into cell terms and the bias difference."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import VARIANTS, MatcherFactory

from matching.explain.contrast import (
    agreement,
    contrast,
    contrasts,
    default_pair,
    describe,
    paired_views,
    shared_view_names,
    valid_pair,
)
from matching.explain.matcher import Matcher
from matching.explain.ranking import rank

QUESTION = "who wrote the novel pride and prejudice"
CANDIDATES = ["pride and prejudice is a novel by jane austen", "the novel is set in england",
              "austen also wrote emma", "the river flows north"]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_gap_decomposition_adds_up(make_matcher: MatcherFactory, variant: str) -> None:
    matcher = make_matcher(seed=3, name=variant, **VARIANTS[variant])
    ranking = rank(QUESTION, CANDIDATES, {variant: matcher})
    for a in range(len(CANDIDATES)):
        for b in range(len(CANDIDATES)):
            c = contrast(ranking, variant, a, b, matcher)
            assert abs(c.gap - (c.score_a - c.score_b)) < 1e-9
            assert abs(c.decomposed_gap - c.gap) < 1e-5
            # every term, summed with the bias difference, gives the gap back
            assert abs(sum(t.effect for t in c.terms) + c.bias_difference + c.residual_difference - c.gap) < 1e-5
            assert abs(sum(float(r["effect on gap"]) for r in c.rows()) - c.gap) < 1e-5  # type: ignore[arg-type]
            assert abs(sum(float(r["effect on gap"]) for r in c.rows(limit=3)) - c.gap) < 1e-5  # type: ignore[arg-type]
            assert [abs(t.effect) for t in c.terms] == sorted((abs(t.effect) for t in c.terms), reverse=True)
            assert c.above == ("A" if c.gap > 0 else "B" if c.gap < 0 else "tie")
            assert describe(c)


def test_leading_terms_push_the_way_the_gap_went(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=1)
    ranking = rank(QUESTION, CANDIDATES, {"tiny": matcher})
    c = contrast(ranking, "tiny", 0, 3)
    sign = 1 if c.gap > 0 else -1
    assert all(t.effect * sign > 0 for t in c.leading_terms(3))
    sentence = describe(c, "A (#1)", "B (#4)")
    assert ("A (#1) above B (#4)" if c.gap > 0 else "B (#4) above A (#1)") in sentence


def test_identical_candidates_tie(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=2)
    ranking = rank(QUESTION, ["austen wrote it", "austen wrote it"], {"tiny": matcher})
    c = contrast(ranking, "tiny", 0, 1)
    assert c.gap == 0 and c.above == "tie" and "tie" in describe(c)
    assert abs(c.decomposed_gap) < 1e-6


def test_default_pair_uses_the_correct_answer(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=4)
    ranking = rank(QUESTION, CANDIDATES, {"tiny": matcher})
    top = int(ranking.models["tiny"].scores.argmax())
    a, b = default_pair(ranking)
    assert a == top and b != top
    wrong = next(i for i in range(4) if i != top)
    labelled = rank(QUESTION, CANDIDATES, {"tiny": matcher}, labels=[int(i == wrong) for i in range(4)])
    assert default_pair(labelled) == (top, wrong)
    assert default_pair(rank(QUESTION, ["one answer"], {"tiny": matcher})) == (0, 0)


def test_default_pair_takes_the_ticked_candidate_and_never_a_copy_of_the_top(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=4)
    top = int(rank(QUESTION, CANDIDATES, {"tiny": matcher}).models["tiny"].scores.argmax())
    # The top answer pasted twice: its copy ties with it, so B is the best candidate of another text.
    doubled = rank(QUESTION, [*CANDIDATES, CANDIDATES[top]], {"tiny": matcher})
    a, b = default_pair(doubled)
    assert doubled.candidates[a] == CANDIDATES[top] and doubled.candidates[b] != CANDIDATES[top]
    assert a == top and default_pair(doubled, pick=4) == (a, b)  # a ticked copy of the top is not its pair either
    # The candidate being explained (ticked on Rank) is compared with the top, where it is not the top itself.
    ranking = rank(QUESTION, CANDIDATES, {"tiny": matcher})
    order = [int(i) for i in np.argsort(-ranking.models["tiny"].scores, kind="stable")]
    assert default_pair(ranking, pick=order[-1]) == (top, order[-1])
    assert default_pair(ranking, pick=top) == (top, order[1])  # the top ticked: the runner-up, as before
    # A marked correct answer below the top still comes first: that is the gap a researcher asks about.
    wrong = order[1]
    labelled = rank(QUESTION, CANDIDATES, {"tiny": matcher}, labels=[int(i == order[2]) for i in range(4)])
    assert default_pair(labelled, pick=wrong) == (top, order[2])
    # Every candidate of one text: the pair is the two copies, whose tie Compare says as such, with no reason for it.
    same = rank(QUESTION, ["austen wrote it", "austen wrote it"], {"tiny": matcher, "other": make_matcher(seed=5)})
    assert default_pair(same) == (0, 1)
    tie = agreement({name: contrast(same, name, 0, 1) for name in same.models})
    assert tie.tied == ("tiny", "other") and not tie.shared_words
    assert tie.sentence() == "2 of 2 put a tie (tiny, other)."


def test_agreement_and_shared_cells(make_matcher: MatcherFactory) -> None:
    models: dict[str, Matcher] = {f"m{s}": make_matcher(seed=s, name=f"m{s}") for s in range(3)}
    ranking = rank(QUESTION, CANDIDATES, models)
    by_model = contrasts(ranking, 0, 1)
    result = agreement(by_model)
    assert sorted(result.above_a + result.above_b + result.tied) == sorted(models)
    assert "of 3" in result.sentence()
    same = agreement(contrasts(rank(QUESTION, [CANDIDATES[0]] * 2, models), 0, 1))  # one text twice: all tie
    assert same.tied and "3 of 3 put a tie" in same.sentence() and "different cells" not in same.sentence()
    ea, eb = ranking.models["m0"].explanations[0], ranking.models["m0"].explanations[1]
    for view in shared_view_names(ea, eb):
        first, second, limit = paired_views(ea, eb, view)
        assert limit >= max(abs(first.matrix).max(), abs(second.matrix).max()) - 1e-12
        assert limit > 0


def test_valid_pair() -> None:
    assert valid_pair((0, 1), 2) == (0, 1)
    assert valid_pair((1, 1), 2) is None
    assert valid_pair((0, 5), 2) is None
    assert valid_pair(None, 2) is None


def test_a_keyword_feature_counts_once_over_the_pair(make_matcher: MatcherFactory) -> None:
    """A keyword feature is one question asked of both candidates: as a reason for the gap it is A's term less
    B's. Two candidates that answer alike (a date given in each) get the same keyword terms, which cancel, and
    the sentence names none of them (it named A's large term while B had the same, the review found)."""
    from matching.explain.contrast import PAIR

    matcher = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3,
                           keyword_answer_types=True)
    candidates = ["the berlin wall fell in 1989 .", "the berlin wall fell in 1990 .", "the river flows north ."]
    ranking = rank("when did the berlin wall fall ?", candidates, {"kw": matcher})
    alike = contrast(ranking, "kw", 0, 1)
    assert {t.side for t in alike.terms if t.what == "keyword feature"} == {"A", "B"}  # the exact split keeps both
    paired = [t for t in alike.reasons() if t.side == PAIR]
    assert paired and all(t.effect == 0.0 for t in paired)
    assert max(abs(t.contribution) for t in paired) > 0  # each side's own term is not 0
    if alike.gap != 0:
        assert "keyword feature" not in describe(alike)
    unlike = contrast(ranking, "kw", 0, 2)
    by_feature = {t.matrix.removeprefix("keywords: "): t for t in unlike.reasons() if t.side == PAIR}
    for feature, term in by_feature.items():
        a, b = ranking.models["kw"].explanations[0], ranking.models["kw"].explanations[2]
        assert term.effect == pytest.approx(a.keyword_terms[feature] - b.keyword_terms[feature], abs=1e-9)
    sign = 1 if unlike.gap > 0 else -1
    assert all(t.effect * sign > 0 for t in unlike.leading_terms(3))
    assert all(t.effect * sign < 0 for t in unlike.opposing_terms(3))
    # The reasons add up to the gap as the terms do.
    assert abs(sum(t.effect for t in unlike.reasons()) + unlike.bias_difference - unlike.gap) < 1e-5
