"""Teaching features through AppTest: the glossary on every page, presentation mode, the walkthrough."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import build_matcher
from streamlit.testing.v1 import AppTest
from test_app import PAGES, assert_clean, checkpoints, new_app, page, plain, texts

from matching.explain import glossary
from matching.models import AMVLSTM, MatchPyramid
from matching.text.embeddings import WordVectors
from matching.text.examples import EXAMPLES
from matching.training.cards import default_models
from matching.training.checkpoint import save_checkpoint


def popover_terms(at: AppTest) -> set[str]:
    """The term names listed in the page's glossary popover ('**name**: plain line')."""
    box = next(p for p in at.main.get("popover") if p.proto.popover.label == "Terms on this page")
    return {plain(str(m.value)).split("**")[1] for m in box.get("markdown")}


def shown_text(at: AppTest) -> str:
    """Everything the page writes outside the popovers and the sidebar."""
    inside = {id(m) for p in at.get("popover") for m in p.get("markdown")}
    kinds = ("markdown", "caption", "info", "warning", "subheader", "title", "header")
    return "\n".join(plain(str(e.value)) for kind in kinds for e in at.main.get(kind) if id(e) not in inside)


@pytest.fixture(scope="module")
def app() -> AppTest:
    return new_app()


@pytest.mark.parametrize("name", PAGES)
def test_every_term_a_page_uses_is_explained_on_that_page(app: AppTest, name: str) -> None:
    page(app, name)
    assert_clean(app)
    listed = popover_terms(app)
    used = set(glossary.mentioned_in(shown_text(app)))
    assert used <= listed, f"{name}: explain {sorted(used - listed)} in its glossary popover"
    assert listed, name


def step_count(at: AppTest) -> int:
    """The number of steps of the model being walked through, as its progress bar says ("Step i of N: ...")."""
    text = next(str(p.proto.text) for p in at.main.get("progress") if "Step " in str(p.proto.text))
    return int(text.split(" of ")[1].split(":")[0])


def test_every_term_a_walkthrough_step_uses_is_explained_there(app: AppTest) -> None:
    app.switch_page("ui/screens/walkthrough.py").run()
    for number in range(step_count(app)):
        app.session_state["ml_step"] = number
        app.run()
        assert_clean(app)
        used = set(glossary.mentioned_in(shown_text(app)))
        assert used <= popover_terms(app), f"step {number + 1}: explain {sorted(used - popover_terms(app))}"
    app.session_state["ml_step"] = 0


def test_the_sidebar_glossary_lists_every_term(app: AppTest) -> None:
    box = next(p for p in app.sidebar.get("popover"))
    assert len(box.get("markdown")) == len(glossary.TERMS)


# ---------------------------------------------------------------- presentation mode

def test_presentation_mode_from_the_link_survives_the_link_rewrite() -> None:
    at = new_app(present="1")
    assert_clean(at)
    assert at.query_params["present"] == "1" and "q" in at.query_params  # input added, flag kept
    assert at.toggle(key="sidebar_present").value is True
    assert not at.get("text_area") and not at.get("multiselect"), "no editing controls"
    assert not at.get("download_button")
    captions = [c.value for c in at.get("caption")]
    assert not any(" ms · input " in c for c in captions), "no timing or input id on the projector"
    columns = [plain(c) for c in at.get("table")[0].value.columns]  # Markdown-escaped (st.table reads Markdown)
    short = [glossary.short_name(n) for n in default_models(checkpoints())]  # the Rank page's opening subset
    assert set(short) <= set(columns) and "BM25" not in columns  # baselines behind the toggle
    at.toggle(key="rank_baselines").set_value(True).run()
    assert "BM25" in at.get("table")[0].value.columns
    for name in PAGES[1:]:
        page(at, name)
        assert_clean(at)
        assert at.query_params["present"] == "1", name
        assert not at.get("text_area"), f"{name}: no counterfactual edit box"
    at.toggle(key="sidebar_present").set_value(False).run()
    assert "present" not in at.query_params


def test_presentation_mode_shows_one_view_at_a_time() -> None:
    at = new_app(present="1")
    page(at, "interactions")
    assert len(at.get("plotly_chart")) == 1
    page(at, "pooled")
    # One model's cells, in the page's type: a 'cell' column where it pools several matrices ('cosine #1')
    assert len([t for t in at.table if {"pooling rank", "cell"} & set(t.value.columns)]) == 1
    assert len(at.get("vega_lite_chart")) == 1
    page(at, "attention")
    names = at.button_group(key="attention_present_model").options
    assert len(names) >= 2
    charts = len(at.get("vega_lite_chart"))
    at.button_group(key="attention_present_model").set_value(names[0]).run()
    assert_clean(at)
    assert len(at.get("vega_lite_chart")) <= charts and at.get("vega_lite_chart")


def test_a_tampered_presentation_flag_is_ignored_with_a_note() -> None:
    example = EXAMPLES[0]
    at = new_app(q=example.question, c=json.dumps(list(example.candidates)), present="please")
    assert not at.exception
    assert any("ignored" in str(w.value) for w in at.warning)
    assert "present" not in at.query_params


# ---------------------------------------------------------------- the walkthrough

def walk(at: AppTest) -> AppTest:
    return at.switch_page("ui/screens/walkthrough.py").run()


def step_heading(at: AppTest) -> str:
    return next(str(s.value) for s in at.main.get("subheader") if str(s.value)[:1].isdigit())


def test_every_step_renders_for_every_shipped_model() -> None:
    at = walk(new_app())
    assert_clean(at)
    defaulted = at.selectbox(key="walkthrough_model").value  # the input's default: the link leaves it out
    assert at.query_params.get("model") is None
    for model in default_models(checkpoints()):  # the models the walkthrough offers: the chosen ones
        at.selectbox(key="walkthrough_model").select(model).run()
        defaulted = defaulted if model == defaulted else None  # chosen by a person from here on
        for number in range(1, step_count(at) + 1):
            at.session_state["ml_step"] = number - 1
            at.run()
            assert_clean(at)
            assert step_heading(at).startswith(f"{number}. "), (model, number)
            assert at.query_params.get("model") == (None if model == defaulted else model)
            assert (at.query_params.get("step") or "1") == str(number)
        assert at.get("vega_lite_chart"), f"{model}: the rank step draws the scores"


def test_next_back_and_the_link_restore_the_step() -> None:
    example = EXAMPLES[0]
    at = walk(new_app(q=example.question, c=json.dumps(list(example.candidates)), step="5", model="amvlstm-q",
                      present="1"))
    assert_clean(at)
    assert step_heading(at).startswith("5. ") and at.selectbox(key="walkthrough_model").value == "amvlstm-q"
    assert any("cos(p_" in m for m in texts(at, "markdown")), "step 5 works one cosine cell out"
    at.button(key="walkthrough_next").click().run()
    assert step_heading(at).startswith("6. ") and at.query_params["step"] == "6"
    assert at.query_params["present"] == "1" and at.query_params["model"] == "amvlstm-q"
    at.button(key="walkthrough_back").click().run()
    at.button(key="walkthrough_back").click().run()
    assert step_heading(at).startswith("4. ") and at.query_params["step"] == "4"
    at.session_state["ml_step"] = 0
    at.run()
    assert at.button(key="walkthrough_back").disabled and "step" not in at.query_params
    at.session_state["ml_step"] = step_count(at) - 1
    at.run()
    assert at.button(key="walkthrough_next").disabled


def test_a_link_to_a_missing_model_or_a_step_too_far_still_walks() -> None:
    example = EXAMPLES[0]
    opened = new_app(q=example.question, c=json.dumps(list(example.candidates)), step="42", model="nosuch")
    # Said on the page the link opens, as every part of a link that cannot be kept (it was a caption inside the
    # walkthrough's expander, gone by the time a browser opening the walkthrough itself had drawn it).
    assert any("walks through a model that is not available here: nosuch" in w for w in texts(opened, "warning"))
    at = walk(opened)
    assert_clean(at)
    assert step_heading(at).startswith(f"{step_count(at)}. ")
    # the link names the step drawn, not the one asked for, and no model: the default drawn, which it opens again
    assert at.query_params["step"] == str(step_count(at)) and at.query_params.get("model") is None


def test_a_link_to_a_loaded_model_that_is_not_chosen_walks_that_model() -> None:
    example = EXAMPLES[0]
    assert "duet" not in default_models(checkpoints())
    at = walk(new_app(q=example.question, c=json.dumps(list(example.candidates)), model="duet"))
    assert_clean(at)
    assert at.selectbox(key="walkthrough_model").value == "duet" and at.query_params["model"] == "duet"
    assert "duet" in at.query_params["models"].split(",")  # added to the chosen models, so the link keeps it
    assert not any("not available" in c for c in texts(at, "caption"))


def test_another_model_opens_at_the_step_of_the_same_kind() -> None:
    """Switching model jumped to step 1, whatever the step: a teacher comparing two models' pooling started over."""
    at = walk(new_app())
    first, second, mcan = default_models(checkpoints())  # MV-LSTM, aMV-LSTM (a gate step more), MCAN (no pooling)
    at.selectbox(key="walkthrough_model").select(first).run()
    at.session_state["ml_step"] = 4
    at.run()
    assert step_heading(at) == "5. Pooling: what the network keeps"
    at.selectbox(key="walkthrough_model").select(second).run()
    assert_clean(at)
    assert step_heading(at) == "6. Pooling: what the network keeps" and at.query_params["step"] == "6"
    at.selectbox(key="walkthrough_model").select(mcan).run()
    assert step_heading(at).startswith("1. ") and "step" not in at.query_params
    assert any(f"{mcan}'s walkthrough has no pooling step" in plain(c) for c in texts(at, "caption"))
    at.session_state["ml_step"] = step_count(at) - 1  # MCAN's rank step
    at.run()
    at.selectbox(key="walkthrough_model").select(first).run()
    assert "The rank" in step_heading(at)


@pytest.mark.parametrize(("question", "candidates", "step", "message"), [
    ("Austen", ["Jane Austen wrote it.", "It is a novel."], "gate", "one word"),
    ("Austen", ["Jane Austen wrote it.", "It is a novel."], "bilstm", "one word"),
    ("Who wrote it?", ["Jane Austen " + "wrote a very long novel " * 20, "No."], "words", "reads only the first"),
    ("zqxv wvqz", ["qqzx vzvw", "xzzq"], "vectors", "Every word of the question is unknown"),
], ids=["one-word-gate", "one-word-lstm", "too-long", "all-unknown"])
def test_bad_inputs_get_a_message_at_the_step_where_they_matter(question: str, candidates: list[str], step: str,
                                                               message: str) -> None:
    at = walk(new_app(q=question, c=json.dumps(candidates), model="amvlstm-qa"))
    assert_clean(at)
    keys = [s.key for s in AMVLSTM.descriptor.steps]  # a gate on both sides: every step applies
    index = keys.index(step)
    at.session_state["ml_step"] = index
    at.run()
    assert_clean(at)
    assert any(message in w for w in texts(at, "warning")), (step, texts(at, "warning"))
    at.session_state["ml_step"] = (index + 1) % len(keys)  # and only there (or where it applies)
    at.run()
    assert_clean(at)


def test_the_walkthrough_of_a_matchpyramid_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 vectors: WordVectors) -> None:
    """A family without a Bi-LSTM: every step of its own walkthrough renders (none for LSTM states), the
    cell step works a word-matching cell out, the pooling step shows the dynamic-pooling maxima."""
    for name, overrides in (("tiny-pyramid-q", {"family": "matchpyramid", "attention": "question",
                                                "matching": "cosine"}),
                            ("tiny-mvlstm", {"family": "mvlstm"})):
        save_checkpoint(build_matcher(vectors, 3, name, **overrides), tmp_path / name)
    monkeypatch.setenv("MATCHLENS_MODELS", str(tmp_path))
    at = walk(new_app(model="tiny-pyramid-q"))
    assert_clean(at)
    keys = [s.key for s in MatchPyramid.descriptor.steps]  # a gate on the question: every step applies
    assert step_count(at) == len(keys) and "bilstm" not in keys
    for number, key in enumerate(keys):
        at.session_state["ml_step"] = number
        at.run()
        assert_clean(at)
        assert step_heading(at).startswith(f"{number + 1}. ")
        if key == "cell":
            assert any("the network read" in m for m in texts(at, "markdown"))
        if key == "pooling":
            assert any("dynamic pooling" in m for m in texts(at, "markdown"))
