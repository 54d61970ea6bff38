"""Each model's traced pass over an input, shared by every caller that asks for the same exact input."""

from __future__ import annotations

import numpy as np
from conftest import MatcherFactory

from matching.explain.passes import PassCache
from matching.explain.ranking import rank_tokens
from matching.text.tokens import tokenize
from ui.views.cached import page_modules

QUESTION = "where is the eiffel tower"
CANDIDATES = ["the eiffel tower is in paris", "the river flows north", "paris is in france"]


def test_the_same_input_is_one_pass_and_another_input_is_its_own(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(family="amvlstm", attention="question", pool_directions=True)
    cache = PassCache()
    question, candidates = tokenize(QUESTION), [tokenize(c) for c in CANDIDATES]
    first = cache.traced("tiny", matcher, question, candidates)
    assert cache.traced("tiny", matcher, tokenize(QUESTION), [tokenize(c) for c in CANDIDATES]) is first
    assert (cache.hits, cache.misses, len(cache)) == (1, 1, 1)
    # One character more in one candidate: its own pass, never the other input's.
    other = cache.traced("tiny", matcher, question, [*candidates[:2], tokenize(CANDIDATES[2] + "s")])
    assert other is not first and len(cache) == 2
    assert other.answer_tokens[2][-1].text == "frances"
    np.testing.assert_array_equal(other.scores[:2], first.scores[:2])
    np.testing.assert_array_equal(other.scores, matcher.traced(question, [*candidates[:2],
                                                                         tokenize(CANDIDATES[2] + "s")]).scores)
    # Another model over the same words: its own pass.
    assert cache.traced("tiny-2", make_matcher(seed=1), question, candidates) is not first


def test_the_least_recently_used_pass_goes_first_past_the_bound(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher()
    question = tokenize(QUESTION)
    inputs = [[tokenize(f"the eiffel tower is in {city}")] for city in ("rome", "lyon", "nice")]  # one size each
    size = matcher.traced(question, inputs[0]).nbytes
    cache = PassCache(max_bytes=2 * size)
    kept = [cache.traced("tiny", matcher, question, candidates) for candidates in inputs[:2]]
    cache.traced("tiny", matcher, question, inputs[2])  # a third: the least recently used one goes
    assert len(cache) == 2 and cache.nbytes == 2 * size
    assert cache.traced("tiny", matcher, question, inputs[1]) is kept[1]
    assert cache.traced("tiny", matcher, question, inputs[0]) is not kept[0]


def test_a_ranking_from_kept_passes_is_the_ranking_without_them(make_matcher: MatcherFactory) -> None:
    models = {"a": make_matcher(seed=1, name="a"), "b": make_matcher(seed=2, name="b", family="mcan")}
    question, candidates = tokenize(QUESTION), [tokenize(c) for c in CANDIDATES]
    cache = PassCache()
    rank_tokens(QUESTION, question, CANDIDATES, candidates, {"a": models["a"]}, passes=cache)
    shared = rank_tokens(QUESTION, question, CANDIDATES, candidates, models, passes=cache)  # "a" kept, "b" new
    alone = rank_tokens(QUESTION, question, CANDIDATES, candidates, models)
    assert (cache.hits, cache.misses) == (1, 2)
    for name in models:
        np.testing.assert_array_equal(shared.models[name].scores, alone.models[name].scores)
        np.testing.assert_array_equal(shared.models[name].ranks, alone.models[name].ranks)


def test_the_warm_up_imports_what_the_pages_import() -> None:
    modules = page_modules()
    assert {"ui.views.steps", "ui.views.common", "matching.explain.charts", "pandas"} <= set(modules)
    assert "__future__" not in modules
