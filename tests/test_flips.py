"""The greedy rank flip really flips the ranks, checked by scoring the edited texts from scratch."""

from __future__ import annotations

import numpy as np
from conftest import MatcherFactory

from matching.explain.flips import flip_pair, smallest_flip
from matching.explain.ranking import rank

QUESTION = "who wrote the novel pride and prejudice"
CANDIDATES = ["pride and prejudice is a novel by jane austen", "the novel is set in england",
              "austen also wrote emma", "the river flows north through the valley"]


def test_found_flips_really_flip(make_matcher: MatcherFactory) -> None:
    found = 0
    for seed in range(6):
        matcher = make_matcher(seed=seed)
        ranking = rank(QUESTION, CANDIDATES, {"tiny": matcher})
        scores = ranking.models["tiny"].scores
        for a, b in ((0, 1), (0, 3), (2, 1)):
            flip = flip_pair(matcher, ranking, a, b)
            assert {flip.upper, flip.lower} == {a, b} and scores[flip.upper] >= scores[flip.lower]
            assert len(flip.deletions) <= 5
            assert len(flip.gaps) == len(flip.deletions) + 1
            if not flip.found:
                assert flip.note
                continue
            found += 1
            assert flip.gaps[-1] < 0 and all(g >= 0 for g in flip.gaps[:-1])
            # from scratch: rank the edited texts as the app would
            edited = list(CANDIDATES)
            edited[flip.lower] = flip.lower_text
            after = rank(flip.question, edited, {"tiny": matcher}).models["tiny"]
            assert after.ranks[flip.lower] < after.ranks[flip.upper]
            assert flip.verified and abs(float(after.scores[flip.upper] - after.scores[flip.lower])
                                         - flip.verified_gap) < 1e-5
            assert flip.describe().startswith("Deleting")
    assert found > 0, "no flip found on any seed: the test would not test anything"


def test_flip_respects_the_budget(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=0)
    ranking = rank(QUESTION, CANDIDATES, {"tiny": matcher})
    scores = ranking.models["tiny"].scores
    upper, lower = int(np.argmax(scores)), int(np.argmin(scores))
    flip = smallest_flip(matcher, ranking.question, ranking.question_tokens, ranking.candidates,
                         ranking.candidate_tokens, upper, lower, max_deletions=1)
    assert len(flip.deletions) <= 1
    if not flip.found:
        assert "within 1 deletions" in flip.note


def test_one_word_texts_stop_cleanly(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=0)
    ranking = rank("who", ["austen", "emma"], {"tiny": matcher})
    flip = flip_pair(matcher, ranking, 0, 1)
    assert flip.found or "Nothing left to delete" in flip.note
