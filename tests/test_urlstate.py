"""The link codec: round trips, and every kind of tampered link gives a clear UrlStateError."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matching.explain import urlstate
from matching.explain.urlstate import SharedState, UrlStateError, decode, encode
from matching.text.inputs import join_candidates, split_candidates


def test_round_trip_keeps_everything() -> None:
    state = SharedState("Who wrote it?", ("Austen wrote it.", "東京 🔒 <script>"), gold=(0,), pick=1,
                        models=("mvlstm", "amvlstm-q"))
    params = encode(state)
    assert params is not None
    assert decode(params) == state


def test_compare_pair_round_trip_and_refusals() -> None:
    state = SharedState("q", ("a", "b", "c"), pair=(2, 0))
    params = encode(state)
    assert params is not None and params["pair"] == "3,1"
    assert decode(params) == state
    for bad in ("1,1", "1", "1,2,3", "0,2", "1,9", "a,b"):
        kept = decode({"q": "q", "c": '["a", "b", "c"]', "pair": bad})
        assert kept is not None and kept.pair is None and kept.question == "q"
        assert len(kept.ignored) == 1 and "pair" in kept.ignored[0]


def test_defaults_are_left_out_of_the_link() -> None:
    params = encode(SharedState("q", ("a", "b")))
    assert params is not None and set(params) == {"q", "c"}
    assert decode(params) == SharedState("q", ("a", "b"))


def test_no_state_is_none() -> None:
    assert decode({}) is None
    assert decode({"utm_source": "mail"}) is None


def test_repeated_single_key_is_refused() -> None:
    with pytest.raises(UrlStateError, match="once"):
        decode({"q": ["one", "two"], "c": '["a"]'})


def test_list_values_of_length_one_are_read() -> None:
    assert decode({"q": ["q"], "c": ['["a"]']}) == SharedState("q", ("a",))


@pytest.mark.parametrize(("params", "message"), [
    ({"q": "q"}, "needs both"),
    ({"c": '["a"]'}, "needs both"),
    ({"q": "q", "c": '["a"'}, "not valid JSON"),
    ({"q": "q", "c": '{"a": 1}'}, "JSON list of texts"),
    ({"q": "q", "c": "[1, 2]"}, "JSON list of texts"),
    ({"q": "q", "c": "[]"}, "empty"),
    ({"q": "q", "c": json.dumps(["a"] * 101)}, "limit is 100"),
    ({"q": "q", "c": json.dumps(["x" * 4001])}, "longer than"),
    ({"q": "x" * 2001, "c": '["a"]'}, "limit is 2,000"),
    ({"q": "q" * 1000, "c": json.dumps(["y" * 3000, "z" * 3000, "w" * 3000])}, "characters of state"),
])
def test_tampered_links_say_what_is_wrong(params: dict[str, str], message: str) -> None:
    with pytest.raises(UrlStateError, match=message):
        decode(params)


@pytest.mark.parametrize(("params", "message"), [
    ({"gold": "1;drop"}, "candidate numbers"),
    ({"gold": "2"}, "there are 1"),
    ({"pick": "0"}, "there are 1"),
    ({"pick": "99"}, "names candidate 99, but there are 1"),
    ({"pick": "__import__('os')"}, "candidate numbers"),
    ({"models": "mvlstm,<script>"}, "model names"),
])
def test_a_broken_secondary_part_keeps_the_input_and_says_what_was_ignored(params: dict[str, str],
                                                                         message: str) -> None:
    state = decode({"q": "q", "c": '["a"]', "gold": "1", "pick": "1", "models": "mvlstm", **params})
    assert state is not None and state.question == "q" and state.candidates == ("a",)
    assert len(state.ignored) == 1 and message in state.ignored[0]
    defaults = SharedState("q", ("a",))
    broken = next(iter(params))
    field = {"gold": "gold", "pick": "pick", "models": "models"}[broken]
    assert getattr(state, field) == getattr(defaults, field)  # the broken part only is left at its default
    kept = {"gold": (0,), "pick": 0, "models": ("mvlstm",)}
    assert all(getattr(state, f) == v for f, v in kept.items() if f != field)


def test_a_link_carries_every_shipped_model_and_a_count_past_the_limit_is_said_as_such() -> None:
    from matching.paths import pretrained_dir

    # "Select all" in the picker: the link the app writes for every checkpoint shipped opens with all of them.
    shipped = tuple(sorted(path.parent.name for path in pretrained_dir().glob("*/card.json")))
    assert len(shipped) > 16
    params = encode(SharedState("q", ("a",), models=shipped))
    assert params is not None
    state = decode(params)
    assert state is not None and state.models == shipped and state.ignored == ()
    too_many = tuple(f"model-{n}" for n in range(urlstate.MAX_MODELS + 1))
    assert encode(SharedState("q", ("a",), models=too_many)) is None  # never written, so never refused when read
    state = decode({"q": "q", "c": '["a"]', "models": ",".join(too_many)})
    assert state is not None and state.models is None
    assert state.ignored == (f"the link names {urlstate.MAX_MODELS + 1} models; the limit is {urlstate.MAX_MODELS}",)


def test_deeply_nested_json_is_refused_cleanly() -> None:
    with pytest.raises(UrlStateError):
        decode({"q": "q", "c": "[" * 5000 + "]" * 5000})


def test_too_large_state_is_not_encoded() -> None:
    assert encode(SharedState("q", ("x" * 5000,))) is None
    assert encode(SharedState("q", tuple(f"candidate {i}" * 20 for i in range(60)))) is None


def test_a_candidate_without_words_is_left_out_and_the_numbers_follow_theirs() -> None:
    """The page leaves out a blank candidate; a link's gold, pick and pair still name the candidates they named."""
    state = decode({"q": "Who wrote Frankenstein?", "gold": "2", "pick": "2", "pair": "3,2",
                    "c": json.dumps(["", "Mary Shelley wrote Frankenstein.", "Paris is in France."])})
    assert state is not None
    assert state.candidates == ("Mary Shelley wrote Frankenstein.", "Paris is in France.")
    assert (state.gold, state.pick, state.pair) == ((0,), 0, (1, 0))
    assert state.ignored == ("the link's candidate 1 has no words, so it was left out",)
    # Spaces and invisible characters count as no words; a number naming such a candidate is ignored, said so.
    state = decode({"q": "Who?", "c": json.dumps(["a", "\u200b", "  ", "b"]), "gold": "1,2", "pick": "4"})
    assert state is not None
    assert state.candidates == ("a", "b") and state.pick == 1 and state.gold == ()
    assert state.ignored == ("the link's candidates 2, 3 have no words, so they were left out",
                             "the link's 'gold' names candidate 2, which has no words")
    with pytest.raises(UrlStateError, match="have no words"):
        decode({"q": "Who?", "c": json.dumps([" ", "\u200b"])})


def test_has_state() -> None:
    assert urlstate.has_state({"q": "x"})
    assert not urlstate.has_state({"other": "x"})


texts = st.text(min_size=1, max_size=60)
worded = texts.filter(lambda text: bool(split_candidates(join_candidates([text])).lines))
"""A candidate the page keeps: a link carries no other (one without words is left out: below)."""


@given(question=texts, candidates=st.lists(worded, min_size=1, max_size=8), data=st.data())
def test_any_small_state_round_trips(question: str, candidates: list[str], data: st.DataObject) -> None:
    gold = tuple(sorted(set(data.draw(st.lists(st.integers(0, len(candidates) - 1), max_size=3)))))
    pick = data.draw(st.integers(0, len(candidates) - 1))
    state = SharedState(question, tuple(candidates), gold=gold, pick=pick)
    params = encode(state)
    assert params is not None
    assert decode(params) == state


@given(st.dictionaries(st.sampled_from(urlstate.KEYS), st.text(max_size=200)))
def test_arbitrary_params_never_crash(params: dict[str, str]) -> None:
    try:
        decode(params)
    except UrlStateError:
        pass


# ---------------------------------------------------------------- the view: presentation mode and walkthrough step

def test_view_round_trip_and_defaults() -> None:
    view = urlstate.ViewState(present=True, step=4, model="amvlstm-q")
    params = urlstate.encode_view(view)
    assert params == {"present": "1", "step": "5", "model": "amvlstm-q"}
    assert urlstate.decode_view(params) == view
    assert urlstate.encode_view(urlstate.ViewState()) == {}
    assert urlstate.decode_view({}) == urlstate.ViewState()
    assert urlstate.decode_view({"present": "0"}) == urlstate.ViewState()
    shown = urlstate.ViewState(matrices=(("amvlstm-q-kw-all", "backward"), ("mcan", "exact match")))
    assert urlstate.encode_view(shown) == {"matrices": "amvlstm-q-kw-all:backward,mcan:exact match"}
    assert urlstate.decode_view(urlstate.encode_view(shown)) == shown
    chosen = urlstate.ViewState(data="section-questions-set-a")
    assert urlstate.encode_view(chosen) == {"data": "section-questions-set-a"}
    assert urlstate.decode_view(urlstate.encode_view(chosen)) == chosen


def test_view_keys_alone_carry_no_input() -> None:
    assert decode({"present": "1", "step": "3"}) is None


@pytest.mark.parametrize(("params", "message"), [
    ({"present": "yes"}, "present"), ({"step": "0"}, "step"), ({"step": "-1"}, "step"), ({"step": "1e3"}, "step"),
    ({"step": "100"}, "step"), ({"model": "<script>"}, "model"), ({"present": ["1", "1"]}, "once"),
    ({"matrices": "mcan"}, "matrices"), ({"matrices": "a:b,c:d,e:f"}, "matrices"),
    ({"matrices": "mcan:<b>"}, "matrices"), ({"matrices": "<script>:cosine"}, "matrices"),
    ({"data": "<b>x</b>"}, "data"), ({"data": "WikiQA test"}, "data"), ({"data": "x" * 65}, "data"),
])
def test_tampered_view_is_refused_with_a_message(params: dict[str, str], message: str) -> None:
    with pytest.raises(UrlStateError, match=message):
        urlstate.decode_view(params)


def test_a_long_value_is_quoted_cut_short_with_what_is_left_out_and_a_short_one_whole() -> None:
    """A message must not quote as the link's value a number the link does not hold (24 digits shown as 20)."""
    with pytest.raises(UrlStateError) as long_value:
        urlstate.decode_view({"step": "1" + "0" * 23})
    assert str(long_value.value).endswith(f"got '{'1' + '0' * 19}' and 4 more characters")
    with pytest.raises(UrlStateError) as short_value:
        urlstate.decode_view({"step": "abc"})
    assert str(short_value.value).endswith("got 'abc'")


def test_keys_nothing_reads_are_named_in_order_and_the_read_ones_are_not() -> None:
    params = {"q": "x", "candidate": "y", "present": "1", "embed": "true", "Q": "z", "models": "mcan"}
    assert urlstate.unread_keys(params) == ["candidate", "Q"]
    assert urlstate.unread_keys({key: "1" for key in (*urlstate.KEYS, *urlstate.VIEW_KEYS)}) == []
    note = urlstate.unread_note(["candidate", "Q"])
    assert note.startswith("This link's 'candidate', 'Q' are not read by MatchLens (it reads q, c, gold")
    many = urlstate.unread_note([f"k{n}" for n in range(8)] + ["x" * 100])
    assert "'k4' and 4 more are not read" in many and "x" * 25 not in many
    assert "'a' is not read" in urlstate.unread_note(["a"])


def test_no_model_chosen_round_trips_and_commas_alone_are_refused() -> None:
    # Every model unticked (the baselines alone) wrote "models=", which reopened with the default models.
    params = encode(SharedState("q", ("a",), models=()))
    assert params is not None and params["models"] == ""
    state = decode(params)
    assert state is not None and state.models == () and state.ignored == ()
    assert urlstate.decode_models({"models": ""}) == ()
    with pytest.raises(UrlStateError, match="names no model"):
        urlstate.decode_models({"models": ",,"})
    broken = decode({"q": "q", "c": '["a"]', "models": ",,"})
    assert broken is not None and broken.models is None and "names no model" in broken.ignored[0]


def test_every_problem_of_a_view_is_said() -> None:
    with pytest.raises(UrlStateError) as said:
        urlstate.decode_view({"present": "yes", "step": "abc"})
    assert "'present' should be 1 or 0" in str(said.value) and "'step' should be" in str(said.value)


def test_an_address_naming_no_page_is_found_and_the_known_ones_are_not() -> None:
    known = {"", "attention", "rank-at-root", "rank"}
    assert urlstate.unknown_page("http://127.0.0.1:8501/nosuchpage?q=x", "", known) == "nosuchpage"
    assert urlstate.unknown_page("http://127.0.0.1:8501/attention?q=x", "", known) is None
    assert urlstate.unknown_page("http://127.0.0.1:8501/", "", known) is None
    assert urlstate.unknown_page(None, "", known) is None
    # Behind a base path (server.baseUrlPath): the part after it is the page.
    assert urlstate.unknown_page("http://h/ml/nosuch", "/ml", known) == "nosuch"
    assert urlstate.unknown_page("http://h/ml/attention", "ml", known) is None
    assert urlstate.unknown_page("http://h/ml", "ml", known) is None
    assert urlstate.unknown_page("http://h/a%20b", "", known) == "a b"
