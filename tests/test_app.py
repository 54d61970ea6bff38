"""The Streamlit app through AppTest: every page renders, the widgets drive the views, bad input gets a message.

Models come from MATCHLENS_MODELS, else pretrained/ (the default, as in CI). The
corrupt-checkpoint tests copy those checkpoints into a temporary folder and break
two of them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from matching.explain.ranking import KeywordDecision
from matching.text.examples import BY_KEY, EXAMPLES, Example
from matching.text.inputs import join_candidates
from matching.training.cards import default_models
from ui.keys import PRESENT

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
MODELS = Path(os.environ.get("MATCHLENS_MODELS") or ROOT / "pretrained")
TIMEOUT = 90
PAGES = ["rank", "attention", "features", "interactions", "pooled", "compare", "sanity", "evaluate", "models"]
XSS = '<img src=x onerror="window.__xss=1"> and <script>alert(1)</script> **bold** [link](http://x)'


def checkpoints() -> list[str]:
    return sorted(p.name for p in MODELS.iterdir() if (p / "config.json").is_file()) if MODELS.is_dir() else []


if not checkpoints():  # pragma: no cover - a clean clone ships pretrained/
    raise RuntimeError(f"no checkpoints under {MODELS}: the app tests need the shipped models (pretrained/)")


def new_app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    return at.run()


def with_all_models(at: AppTest) -> AppTest:
    """The Rank page opens with a default subset; add the rest, as a person would."""
    return at.multiselect(key="rank_models").set_value(checkpoints()).run()


def page(at: AppTest, name: str) -> AppTest:
    return at.switch_page(f"ui/screens/{name}.py").run()


def plain(text: str) -> str:
    """Markdown as a reader sees it: the app backslash-escapes punctuation in user text."""
    return re.sub(r"\\(.)", r"\1", text)


def texts(at: AppTest, kind: str) -> list[str]:
    return [plain(str(element.value)) for element in at.get(kind)]


def all_text(at: AppTest) -> str:
    return "\n".join(texts(at, "markdown") + texts(at, "caption") + texts(at, "info") + texts(at, "warning")
                     + texts(at, "error") + texts(at, "success"))


def assert_clean(at: AppTest) -> None:
    """No exception element and no error box on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def set_input(at: AppTest, question: str | None = None, candidates: list[str] | str | None = None) -> AppTest:
    if question is not None:
        at.text_input(key="rank_question").input(question)
    if candidates is not None:
        text = candidates if isinstance(candidates, str) else "\n".join(candidates)
        at.text_area(key="rank_candidates").input(text)
    return at.run()


def table(at: AppTest) -> pd.DataFrame:
    return next(df for df in at.dataframe if df.key and df.key.startswith("rank_table")).value



def test_a_fresh_server_says_it_is_starting_before_the_slow_imports() -> None:
    """A fresh server's first run spends seconds importing torch and the package; app.py draws its
    "Starting MatchLens" message before that, so what it imports first must not pull either in."""
    first = "import sys, streamlit, ui.keys; print(sorted(m for m in ('torch', 'matching') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", first], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    assert source.index("Starting MatchLens") < source.index("from ui.views import") < source.index("_starting.empty()")


@pytest.fixture(scope="module")
def at() -> Iterator[AppTest]:
    """One app session shared by read-only tests (the first run loads the models)."""
    yield new_app()


# ---------------------------------------------------------------- every page renders

def test_rank_page_ranks_the_default_example(at: AppTest) -> None:
    assert_clean(at)
    frame = table(at)
    example = EXAMPLES[0]
    assert list(frame["candidate"]) == list(example.candidates)
    shown = default_models(checkpoints())
    assert not any(f"{name} rank" in frame.columns for name in set(checkpoints()) - set(shown))
    for name in shown:  # scores only once "Show scores" is on: the table carries just what it shows
        assert f"{name} rank" in frame.columns and f"{name} score" not in frame.columns
        assert sorted(frame[f"{name} rank"]) == sorted(frame[f"{name} rank"])
        assert set(frame[f"{name} rank"]) <= {1, 2, 3, 4}
    for baseline in ("original order", "word overlap", "BM25"):
        assert f"{baseline} rank" in frame.columns
    assert list(frame["correct"]) == [i in example.gold for i in range(len(example.candidates))]
    assert any("Top answer by model" in m for m in texts(at, "markdown"))
    assert len(at.get("vega_lite_chart")) == 1  # the rank-shift chart
    assert {b.label for b in at.get("download_button")} >= {"Ranking (CSV)",
                                                            "Explanation of the selected candidate (JSON)"}
    assert at.query_params["q"] == example.question
    assert json.loads(at.query_params["c"]) == list(example.candidates)


@pytest.mark.parametrize("name", PAGES[1:])
def test_every_page_renders(at: AppTest, name: str) -> None:
    page(at, name)
    assert_clean(at)
    assert at.title, "every page has a title"
    if name == "attention":
        assert at.get("html") and at.get("vega_lite_chart")
    if name == "interactions":
        assert len(at.get("plotly_chart")) == 2
    if name == "pooled":
        assert any("pooling rank" in df.value.columns for df in at.dataframe)
        assert at.get("vega_lite_chart")
    if name == "evaluate":
        assert at.get("file_uploader")
    if name == "models":
        labels = [plain(tab.label) for tab in at.tabs]
        assert all(any(model in label for label in labels) for model in checkpoints())
        assert len(at.get("vega_lite_chart")) >= 2
        # each overview table names its test split: WikiQA's, and TrecQA's for the models trained with TRAIN-ALL
        assert any("on the test split its table names (WikiQA, TrecQA)" in c for c in texts(at, "caption"))
        assert sum("test: TrecQA" in plain(m.value) for m in at.markdown) >= 2
        why = at.expander(key="models_why")  # why the defaults, a bullet each, from pretrained/defaults.json
        assert any("carry over to text unlike any one training set" in plain(m.value) for m in why.markdown)
        # the open card's known limits are its own: the first tab's model names its training data's size
        limits = [e for e in at.expander if plain(e.label) == "Known limits of this model"]
        assert len(limits) == 1 and "questions):" in plain(limits[0].markdown[0].value)
    # the input is kept in the link on every page
    assert "q" in at.query_params


def test_a_default_models_card_opens_with_what_it_is_and_keeps_its_recipe_one_click_away() -> None:
    """The default models' descriptions are their recipes' histories (thousands of characters): the card leads with
    what the model is and lists the choices, one a line, in an expander."""
    at = page(new_app(), "models")
    name = "amvlstm-q-kw-all"
    at.session_state["models_tabs"] = next(t.label for t in at.tabs if plain(t.label).endswith(f" {name}"))
    at.run()
    assert_clean(at)
    recipe = [e for e in at.expander if plain(e.label).startswith("How this recipe was chosen")]
    assert len(recipe) == 1
    notes = plain(recipe[0].markdown[0].value).split("\n")
    assert len(notes) >= 5 and all(note.startswith("- ") for note in notes)
    assert any("Echo feature" in note for note in notes)
    lead = [plain(m.value) for m in at.markdown if plain(m.value).startswith("MatchLens variant with a keyword term")]
    assert len(lead) == 1 and len(lead[0]) < 800 and "seven keyword features" in lead[0]
    # Tested on TrecQA (its card's own test) and on WikiQA too: both, each beside its baselines.
    assert any("Test on another source: WikiQA (243 questions" in plain(m.value) for m in at.markdown)
    tables = [df.value for df in at.dataframe if "system" in df.value.columns and df.value["system"].iloc[0] == name]
    other = [frame for frame in tables if abs(frame["MAP"].iloc[0] - 0.7025) < 5e-5]
    assert len(other) == 1
    # Its paper's figure is of WikiQA: beside the WikiQA test, not beside TrecQA's (it stood there, 0.6507 by 0.7819).
    papers = [[s for s in frame["system"] if str(s).startswith("paper:")] for frame in tables]
    assert papers[[n for n, frame in enumerate(tables) if frame is other[0]][0]]
    trecqa = [n for n, frame in enumerate(tables) if abs(frame["MAP"].iloc[0] - 0.7819) < 5e-5]
    assert trecqa and not any(papers[n] for n in trecqa)
    assert any(plain(m.value).startswith("**Test: TrecQA**") for m in at.markdown)


# ---------------------------------------------------------------- widgets drive the views

def test_editing_the_question_reranks_and_shows_the_change() -> None:
    at = new_app()
    before = [c for c in texts(at, "caption") if "input " in c][0]
    set_input(at, question="Which author wrote the book Pride and Prejudice?")
    assert_clean(at)
    after = [c for c in texts(at, "caption") if "input " in c][0]
    assert before != after
    assert any("Since your last edit" in m for m in texts(at, "markdown"))
    assert any("question: 'wrote the novel' -> 'Which author wrote the book'" in c or "question:" in c
               for c in texts(at, "caption"))
    assert at.query_params["q"] == "Which author wrote the book Pride and Prejudice?"


def test_an_edit_past_a_counterfactual_s_size_is_said_not_listed() -> None:
    """A whole candidate rewritten re-ranked without a word, where the edit box promises the changes are listed."""
    at = set_input(new_app(), question="Which large river flows through the middle of Cairo in northern Egypt today?")
    assert_clean(at)
    assert not any("Since your last edit" in m for m in texts(at, "markdown"))
    assert any("changed more than a counterfactual's few words" in c for c in texts(at, "caption"))


def test_the_rank_split_leaves_out_the_features_that_add_nothing_and_still_adds_up() -> None:
    """A question that asks for no number or date: those features add exactly 0 for every default model, so the
    split names them instead of drawing columns of zeros (which pushed the last feature off a projector's width)."""
    at = set_input(new_app(), question="What were the provinces of the Achaemenid Empire called?",
                   candidates=["The Achaemenid Empire was founded by Cyrus the Great.",
                               "The empire was divided into provinces called satrapies."])
    assert_clean(at)
    split = next(df for df in at.dataframe if "learned match" in df.value.columns).value
    assert "number asked, number given" not in split.columns and "date asked, date given" not in split.columns
    assert any("Left out, as they add exactly 0 for every model here: number, date" in c for c in texts(at, "caption"))
    features = [c for c in split.columns if c not in {"model", "score", "learned match", "keywords"}]
    assert "word overlap" in features
    for _, row in split.iterrows():
        if row["keywords"] == row["keywords"]:  # a model with a keyword term
            assert row[features].fillna(0).sum() == pytest.approx(row["keywords"], abs=1e-5)
            assert row["learned match"] + row["keywords"] == pytest.approx(row["score"], abs=1e-5)


ACHAEMENID = ("What were the provinces of the Achaemenid Empire called?",
              ["The Achaemenid Empire was founded by Cyrus the Great.",
               "The empire was divided into provinces called satrapies.",
               "Its capital cities included Persepolis and Susa."])


def default_decisions(question: str, candidates: list[str]) -> list[KeywordDecision]:
    """What `ranking.keyword_decisions` says for the default models, ranked here outside the app."""
    from matching.explain.ranking import keyword_decisions, rank
    from matching.training.cards import default_models
    from matching.training.checkpoint import load_checkpoint

    names = default_models(checkpoints())
    decisions = keyword_decisions(rank(question, candidates, {name: load_checkpoint(MODELS / name) for name in names}))
    assert [decision.model for decision in decisions] == names  # every default has a keyword term
    return decisions


def test_the_rank_split_says_whether_the_keyword_term_changed_each_models_top_answer() -> None:
    """The note under the split says, for each default keyword model, whether its learned match alone would put
    another candidate first, as `keyword_decisions` reads it off the same models' pass."""
    question, candidates = ACHAEMENID
    at = set_input(new_app(), question=question, candidates=candidates)
    assert_clean(at)
    expected = default_decisions(question, candidates)
    notes = [c for c in texts(at, "caption") if "top answer here" in c or "decides the top answer" in c]
    assert len(notes) == 1
    note = notes[0].replace("\\", "")
    for answer in expected:
        said = f"{answer.model}: the keyword term decides the top answer" in note
        assert said == answer.keywords_decide
        if said:
            first = " and ".join(f"#{index + 1}" for index in answer.learned)
            assert f"{answer.model}: the keyword term decides the top answer; by its learned match alone {first} " \
                   "would be first" in note
    if any(answer.keywords_decide for answer in expected):
        same = [answer.model for answer in expected if not answer.keywords_decide]
        assert (f"{', '.join(same)}: the same candidate first either way." in note) == bool(same)
    else:
        assert "does not change the top answer here" in note


@pytest.mark.parametrize("question, candidates", [ACHAEMENID, (
    "What is the capital of Australia?", ["Canberra is the capital city of Australia.",
                                         "Sydney is the largest city in Australia."])], ids=["achaemenid", "canberra"])
def test_the_views_of_the_learned_match_say_where_a_keyword_term_decided(question: str, candidates: list[str]) -> None:
    """Interactions (a view of the learned match) repeats the note where a keyword term changed a top answer, and
    says nothing of it where none did."""
    decided = [d.model for d in default_decisions(question, candidates) if d.keywords_decide]
    at = page(set_input(new_app(), question=question, candidates=candidates), "interactions")
    assert_clean(at)
    notes = [c for c in texts(at, "caption") if "top answer" in c]
    assert all(f"{name}: the keyword term decides the top answer" in "".join(notes) for name in decided)
    assert len(notes) == (1 if decided else 0)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.key for e in EXAMPLES])
def test_gallery_loads_each_example(example: Example) -> None:
    at = new_app()
    at.button(key=f"example_{example.key}").click().run()
    assert_clean(at)
    assert at.text_input(key="rank_question").value == example.question
    assert list(table(at)["candidate"]) == list(example.candidates)
    assert at.multiselect(key="rank_gold").value == list(example.gold)


def test_choosing_models_and_gold() -> None:
    at = new_app()
    first = checkpoints()[0]
    at.multiselect(key="rank_models").set_value([first]).run()
    frame = table(at)
    assert f"{first} rank" in frame.columns
    assert not any(f"{other} rank" in frame.columns for other in checkpoints()[1:])
    at.multiselect(key="rank_gold").set_value([1, 2]).run()
    assert list(table(at)["correct"]) == [False, True, True, False]
    assert at.query_params["gold"] == "2,3"
    at.multiselect(key="rank_models").set_value(checkpoints()).run()  # the rest can be added
    assert all(f"{name} rank" in table(at).columns for name in checkpoints())
    at.multiselect(key="rank_models").set_value([]).run()
    assert_clean(at)
    assert any("only the baselines" in i for i in texts(at, "info"))
    assert "BM25 rank" in table(at).columns


def test_show_scores_toggle_keeps_ranks() -> None:
    at = new_app()
    at.toggle(key="rank_scores").set_value(True).run()
    assert_clean(at)
    frame = table(at)
    for name in default_models(checkpoints()):
        assert f"{name} rank" in frame.columns and f"{name} score" in frame.columns


def test_picked_candidate_carries_across_pages() -> None:
    at = new_app()
    page(at, "attention")
    at.selectbox(key="attention_pick").select(2).run()
    assert_clean(at)
    page(at, "pooled")
    assert at.selectbox(key="pooled_pick").value == 2
    page(at, "interactions")
    assert at.selectbox(key="interactions_pick").value == 2
    assert "#3" in at.get("plotly_chart")[0].proto.spec  # the heatmap title names the candidate
    page(at, "rank")
    assert any("Explaining candidate #3" in m for m in texts(at, "markdown"))
    assert at.query_params["pick"] == "3"


def test_counterfactual_edit_from_an_explanation_page() -> None:
    at = new_app()
    page(at, "pooled")
    at.text_input(key="pooled_edit_question").input("Who wrote the famous book Pride and Prejudice?").run()
    assert_clean(at)
    assert any("Since your last edit" in m for m in texts(at, "markdown"))
    assert any("rank" in df.value.columns and "score change" in df.value.columns for df in at.dataframe)
    at.text_area(key="pooled_edit_candidate").input("Pride and Prejudice is a book by Jane Austen.").run()
    assert_clean(at)
    page(at, "rank")
    assert table(at)["candidate"][0] == "Pride and Prejudice is a book by Jane Austen."


def test_interaction_views_and_tensor_slices() -> None:
    at = new_app()
    page(at, "interactions")
    names = at.selectbox(key="interactions_model_0").options
    for name in names:
        at.selectbox(key="interactions_model_0").select(name).run()
        radio = at.radio(key=f"interactions_view_0_{name}")
        for view in radio.options:
            radio.set_value(view)
            at.run()
            assert_clean(at)
            radio = at.radio(key=f"interactions_view_0_{name}")
        if name == "mvlstm-tensor":
            assert {"slice 1", "slice 2", "slice 3"} <= set(radio.options)


PYRAMIDS = "matchpyramid,matchpyramid-q"


@pytest.mark.parametrize("name", ["rank", "attention", "interactions", "pooled", "compare", "walkthrough", "sanity",
                                  "evaluate"])
def test_matchpyramid_side_by_side_with_mvlstm_on_every_page(name: str) -> None:
    """Both families through the same pages: the link picks MatchPyramid, MatchPyramid.omega and MV-LSTM."""
    example = BY_KEY["paraphrase"]
    at = new_app(q=example.question, c=json.dumps(list(example.candidates)), models=f"mvlstm,{PYRAMIDS}")
    if name != "rank":
        page(at, name)
    assert_clean(at)
    if name == "rank":
        assert {"mvlstm rank", "matchpyramid rank", "matchpyramid-q rank"} <= set(table(at).columns)
    if name == "attention":  # MatchPyramid.omega (Q) has attention bars; plain MatchPyramid has none
        assert at.get("vega_lite_chart")
        assert any("mvlstm, matchpyramid: no attention" in c for c in texts(at, "caption"))
        assert [h.value for h in at.subheader] == ["matchpyramid-q"]
    if name == "interactions":
        for side in (0, 1):
            at.selectbox(key=f"interactions_model_{side}").select("matchpyramid-q").run()
        radio = at.radio(key="interactions_view_0_matchpyramid-q")
        assert radio.options == ["word cosine x word weights", "windows", "contributions"]
        for view in radio.options:
            at.radio(key="interactions_view_0_matchpyramid-q").set_value(view).run()
            assert_clean(at)
            assert len(at.get("plotly_chart")) == 2
    if name == "evaluate":
        at.button(key="evaluate_sample").click().run()
        assert_clean(at)
    if name in ("compare", "walkthrough", "sanity", "evaluate"):
        assert "matchpyramid-q" in all_text(at) + " ".join(str(s.value) for s in at.get("selectbox")) + " ".join(
            str(df.value.to_string()) for df in at.dataframe)
    if name == "pooled":
        at.multiselect(key="pooled_models").set_value(["mvlstm", "matchpyramid-q"]).run()
        assert_clean(at)
        frames = [df.value for df in at.dataframe if "pooling rank" in df.value.columns]
        assert len(frames) == 2 and "window" in frames[1].columns and len(frames[1]) == 40
        assert any("largest |contribution|" in c for c in texts(at, "caption"))


def test_attention_side_filter() -> None:
    at = with_all_models(new_app())
    page(at, "attention")
    count = len(at.get("html"))
    at.button_group(key="attention_sides").set_value(["question"]).run()
    assert_clean(at)
    assert 0 < len(at.get("html")) < count


# ---------------------------------------------------------------- bad input gets a clear message

def test_empty_question() -> None:
    at = set_input(new_app(), question="   ")
    assert not at.exception
    assert any("Type a question" in i for i in texts(at, "info"))
    page(at, "attention")
    assert not at.exception and any("Type a question" in i for i in texts(at, "info"))


def test_no_candidate_and_one_candidate() -> None:
    at = set_input(new_app(), candidates="\n  \n")
    assert not at.exception
    assert any("at least one candidate" in i for i in texts(at, "info"))
    set_input(at, candidates=["Jane Austen wrote it."])
    assert_clean(at)
    assert any("Only one candidate" in i for i in texts(at, "info"))
    assert len(table(at)) == 1


def test_more_than_the_cap() -> None:
    at = set_input(new_app(), candidates=[f"Answer number {i} about a novel." for i in range(130)])
    assert_clean(at)
    assert any("130 candidates" in w and "first 100" in w for w in texts(at, "warning"))
    assert len(table(at)) == 100
    assert at.query_params.get("c") is None or len(json.loads(at.query_params["c"])) == 100


def test_long_candidate_is_truncated_and_shown() -> None:
    long = " ".join(["Austen"] + ["word"] * 2500)[:10_000]
    at = set_input(with_all_models(new_app()), candidates=["Jane Austen wrote it.", long])
    assert_clean(at)
    assert any("Candidate #2" in w and "only the first 60" in w for w in texts(at, "warning"))
    assert any("too large to share" in c for c in texts(at, "caption"))
    at.session_state["ml_pick"] = 1
    for name in ("attention", "features", "interactions", "pooled", "compare", "sanity"):
        page(at, name)
        assert_clean(at)
        # Said on every page that explains, not on Rank alone (a visitor may open a shared link on any of them).
        assert [w for w in texts(at, "warning") if "Candidate #2" in w and "only the first 60" in w], name
    page(at, "walkthrough")  # once, at its words step, not again above it
    assert len([w for w in texts(at, "warning") if "only the first 60" in w]) == 1
    page(at, "attention")
    assert any("not seen" in h.value for h in at.get("html"))


def test_too_long_line_is_left_out() -> None:
    at = set_input(new_app(), candidates=["Jane Austen wrote it.", "x" * 20_001, "Another answer."])
    assert_clean(at)
    assert any("Line 2" in w and "left out" in w for w in texts(at, "warning"))
    assert len(table(at)) == 2


def test_unicode_text_and_unknown_words() -> None:
    at = set_input(new_app(), question="Who wrote \u200bthe novel? \u0645\u0646 \u0643\u062a\u0628",
                   candidates=["Jane Austen wrote it \U0001F4DA.", "\u6771\u4eac is a city.",
                               "zero\u200bwidth and \u05e9\u05dc\u05d5\u05dd"])
    assert_clean(at)
    assert len(table(at)) == 3
    expander = [e for e in at.expander if "Unknown words" in e.label]
    assert expander, "unknown words are listed"
    for name in ("attention", "interactions", "pooled"):
        page(at, name)
        assert_clean(at)


def test_markup_is_shown_as_text_never_rendered() -> None:
    at = set_input(new_app(), question="What does <b>this</b> tag do?", candidates=[XSS, "A plain answer."])
    assert_clean(at)
    assert table(at)["candidate"][0] == XSS  # data, not markup
    (said,) = [w for w in at.warning if "hold markup" in plain(w.value)]  # named, as typed, never rendered
    assert plain(said.value).startswith("The question and line 1 hold markup") and "\\<b\\>" in said.value
    for name in PAGES[:4]:
        at.session_state["ml_pick"] = 0
        page(at, name)
        assert_clean(at)
        for element in at.get("markdown") + at.get("caption"):
            assert not element.proto.allow_html, element.value
            # user text in Markdown has every '<' escaped (shown as a literal '<')
            assert not re.search(r"(?<!\\)<(img|script|b>)", element.value), element.value
        for element in at.get("html"):
            assert "<img" not in element.value and "<script" not in element.value and "<b>" not in element.value
            if "onerror" in element.value:  # the markup is there as escaped text
                assert "&lt;" in element.value and "&gt;" in element.value
        for chart in at.get("plotly_chart"):
            assert "<img" not in chart.proto.spec and "<script" not in chart.proto.spec


def test_user_text_in_markdown_makes_no_link() -> None:
    """Markdown turns a bare URL, 'www.' or an e-mail address into a link even with its punctuation
    escaped; the text shown keeps its characters, with an invisible word joiner that breaks the link."""
    from ui.views.components import md

    shown = md("See https://example.com/x or WWW.foo.org, mail a.b@c.com")
    assert "https\u2060\\:" in shown and "WWW\u2060\\." in shown and "\u2060\\@" in shown
    assert shown.replace("\u2060", "").replace("\\", "") == "See https://example.com/x or WWW.foo.org, mail a.b@c.com"
    assert md("a plain answer") == "a plain answer"


def test_bad_uploads() -> None:
    at = page(new_app(), "evaluate")
    at.file_uploader(key="evaluate_upload").upload("bad.csv", b"text,answer\nq,a\n", "text/csv")
    at.run()
    assert not at.exception
    assert any("missing column" in e for e in texts(at, "error"))
    at.file_uploader(key="evaluate_upload").set_value(("latin.csv", "question,candidate,label\ncaf\xe9,x,1\n"
                                                        .encode("latin-1"), "text/csv"))
    at.run()
    assert not at.exception
    assert any("not UTF-8" in e for e in texts(at, "error"))
    at.file_uploader(key="evaluate_upload").set_value(("labels.csv", b"question,candidate,label\nq,a,yes\n",
                                                        "text/csv"))
    at.run()
    assert any("not a number" in e for e in texts(at, "error"))


def test_evaluate_scores_with_the_models_chosen_on_rank() -> None:
    at = new_app()
    at.multiselect(key="rank_models").set_value(["mvlstm", "matchpyramid"]).run()
    page(at, "evaluate")
    at.button(key="evaluate_sample").click().run()
    assert_clean(at)
    metrics = next(df for df in at.dataframe if "system" in df.value.columns).value
    assert list(metrics["system"]) == ["mvlstm", "matchpyramid", "original order", "word overlap", "BM25"]
    assert any("mvlstm, matchpyramid" in c for c in texts(at, "caption"))


def test_evaluate_offers_the_built_in_data_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where $MATCHLENS_DATA holds WikiQA and TrecQA, the page offers their test and dev splits and
    evaluates the one picked; the sample file then takes over again when chosen."""
    from matching.text.data import RankingList, write_toks_folder

    for folder, words in (("wikiqa", "river"), ("trecqa", "mountain")):
        for split in ("train", "dev", "test"):
            write_toks_folder(tmp_path / folder / split, [
                RankingList(f"{folder}-{split}-{n}", f"how long is the {words} number {n}",
                            (f"the {words} number {n} is long", "a cat sat"), (1, 0)) for n in range(3)])
    monkeypatch.setenv("MATCHLENS_DATA", str(tmp_path))
    at = page(new_app(), "evaluate")
    assert at.selectbox(key="evaluate_builtin").options == ["WikiQA test", "WikiQA dev", "TrecQA test", "TrecQA dev",
                                                            "Section questions, set A", "Section questions, set B",
                                                            "Section questions, set C"]
    at.selectbox(key="evaluate_builtin").set_value("TrecQA test").run()
    assert_clean(at)
    assert any("TrecQA test: 3 questions, 6 candidates" in plain(s.value) for s in at.success)
    questions = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    assert all("mountain" in q for q in questions["question"])
    at.button(key="evaluate_sample").click().run()
    assert any("sample-ranking.csv" in plain(s.value) for s in at.success)
    assert at.selectbox(key="evaluate_builtin").value is None


def test_the_link_keeps_the_evaluate_data_set_and_a_shared_link_opens_on_it(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A researcher's link to an evaluation opened an empty Evaluate page: the data set chosen was not in it."""
    monkeypatch.setenv("MATCHLENS_DATA", str(tmp_path / "no-data"))  # a machine without WikiQA and TrecQA
    at = page(new_app(), "evaluate")
    at.selectbox(key="evaluate_builtin").set_value("Section questions, set B").run()
    assert at.query_params["data"] == "section-questions-set-b"
    link = dict(at.query_params)
    shared = page(new_app(**link), "evaluate")
    assert_clean(shared)
    assert shared.selectbox(key="evaluate_builtin").value == "Section questions, set B"
    assert any("Section questions, set B: 75 questions, 543 candidates" in plain(s.value) for s in shared.success)
    shared.button(key="evaluate_sample").click().run()
    assert shared.query_params["data"] == "sample-ranking-csv"
    assert any("sample-ranking.csv" in plain(s.value) for s in shared.success)
    # Not on this machine, or not a data set's name at all: said, and nothing else of the page lost.
    missing = page(new_app(data="wikiqa-test", present="1"), "evaluate")
    assert any("data set wikiqa-test is not on this machine" in plain(w.value) for w in missing.warning)
    assert not missing.exception and not missing.success
    tampered = new_app(data="<b>x</b>")  # said on the page the link opens
    assert "the link's 'data' should name a data set" in all_text(tampered)
    assert not tampered.exception and not page(tampered, "evaluate").exception


def test_evaluate_says_which_part_carries_each_model_on_the_file() -> None:
    """The Evaluate page's keyword figures on a shipped collection are `keyword_rows` for the models evaluated."""
    from matching.evaluation.studies import keyword_rows
    from matching.text.datasets import shipped_collections
    from matching.training.checkpoint import load_checkpoint

    at = page(new_app(), "evaluate")
    at.selectbox(key="evaluate_builtin").set_value("Section questions, set A").run()
    assert_clean(at)
    at.button(key="evaluate_keywords_run").click().run()
    assert_clean(at)
    shown = next(df.value for df in at.dataframe if "learned match alone" in df.value.columns)
    collection = next(c for c in shipped_collections() if c.label == "Section questions, set A")
    names = default_models(checkpoints())
    expected = keyword_rows(collection.read(), {name: load_checkpoint(MODELS / name) for name in names})
    assert list(shown["model"]) == names and len(expected) == len(names)
    for (_, row), want in zip(shown.iterrows(), expected, strict=True):
        assert row["MAP"] == pytest.approx(want["MAP"], abs=1e-9)
        assert row["learned match alone"] == pytest.approx(want["learned match alone"], abs=1e-9)
        assert row["keywords alone"] == pytest.approx(want["keywords alone"], abs=1e-9)
        assert (row["top answer changed"], row["questions"]) == (want["top answer changed"], 75)


def test_evaluate_says_where_to_put_the_data_sets_when_none_are_here(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATCHLENS_DATA", str(tmp_path / "no-data"))
    at = page(new_app(), "evaluate")
    box = at.selectbox(key="evaluate_builtin")
    # The section collection ships with MatchLens, so it is offered on a machine without WikiQA and TrecQA.
    assert not box.disabled and box.options == ["Section questions, set A", "Section questions, set B",
                                                    "Section questions, set C"]
    assert "MATCHLENS_DATA" in box.help and "do not ship" in box.help
    assert_clean(at)
    at.selectbox(key="evaluate_builtin").set_value("Section questions, set B").run()
    assert_clean(at)
    assert any("Section questions, set B: 75 questions, 543 candidates" in plain(s.value) for s in at.success)
    questions = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    assert len(questions) == 75


def test_evaluate_sample_and_open_a_question() -> None:
    at = page(new_app(), "evaluate")
    at.button(key="evaluate_sample").click().run()
    assert_clean(at)
    metrics = next(df for df in at.dataframe if "system" in df.value.columns).value
    # The models chosen on Rank (the default set on a first visit), then the baselines.
    assert set(default_models(checkpoints())) | {"original order", "word overlap", "BM25"} == set(metrics["system"])
    questions = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    assert len(questions) == 8
    at.checkbox(key="evaluate_low").check().run()
    assert_clean(at)
    low = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    assert len(low) <= 8
    at.checkbox(key="evaluate_low").uncheck().run()
    at.checkbox(key="evaluate_disagree").check().run()
    assert_clean(at)
    # open the first listed question on the Rank page (what a click on its row does)
    at.checkbox(key="evaluate_disagree").uncheck().run()
    shown = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    at.session_state["evaluate_questions"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert_clean(at)
    assert at.text_input(key="rank_question").value == shown["question"][1]
    frame = table(at)
    assert list(frame["correct"]) == [bool(x) for x in frame["correct"]] and frame["correct"].any()


def test_evaluate_keeps_its_filters_while_questions_are_opened_from_it() -> None:
    """A researcher working through a filtered list opened a question, came back, and found every filter reset."""
    at = page(new_app(), "evaluate")
    at.button(key="evaluate_sample").click().run()
    at.checkbox(key="evaluate_low").check().run()
    at.number_input(key="evaluate_threshold").set_value(2).run()
    at.button_group(key="evaluate_per_model").set_value("AP").run()
    shown = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    page(at, "compare")
    page(at, "evaluate")
    assert_clean(at)
    assert at.checkbox(key="evaluate_low").value and at.number_input(key="evaluate_threshold").value == 2
    assert at.button_group(key="evaluate_per_model").value == "AP"
    assert next(df for df in at.dataframe if df.key == "evaluate_questions").value.equals(shown)


def test_shared_link_reopens_the_view() -> None:
    example = BY_KEY["paraphrase"]
    at = new_app(q=example.question, c=json.dumps(list(example.candidates)), gold="1,3", pick="3")
    assert_clean(at)
    assert at.text_input(key="rank_question").value == example.question
    assert at.text_area(key="rank_candidates").value == join_candidates(example.candidates)
    assert at.multiselect(key="rank_gold").value == [0, 2]
    assert any("Explaining candidate #3" in m for m in texts(at, "markdown"))


@pytest.mark.parametrize("query", [
    {"q": "who?", "c": '["unterminated'},
    {"q": "who?", "c": '{"not": "a list"}'},
    {"c": '["a"]'},
])
def test_tampered_link_gives_a_message_and_the_app_works(query: dict[str, str]) -> None:
    at = new_app(**query)
    assert not at.exception
    assert any("This link could not be opened" in e for e in texts(at, "error"))
    assert len(table(at)) == len(EXAMPLES[0].candidates)  # the default example still ranks


@pytest.mark.parametrize("query", [
    {"q": "who?", "c": '["a"]', "pick": "7"},
    {"q": "who?", "c": '["a"]', "gold": "1);import os"},
])
def test_a_tampered_secondary_part_is_ignored_with_a_note(query: dict[str, str]) -> None:
    at = new_app(**query)
    assert_clean(at)
    assert not texts(at, "error")
    assert any("Part of this link was ignored" in w for w in texts(at, "warning"))
    assert len(table(at)) == 1 and at.text_input(key="rank_question").value == "who?"


@pytest.mark.parametrize("step", ["0", "abc"])
def test_a_bad_step_keeps_presentation_mode(step: str) -> None:
    """The link's bad step was said, and took presentation mode with it: the class saw the page in small grey type."""
    at = new_app(step=step, present="1")
    assert any("Part of this link was ignored" in w and "'step'" in w for w in texts(at, "warning"))
    page(at, "walkthrough")
    assert_clean(at)
    assert at.session_state[PRESENT] and at.query_params["present"] == "1"


def test_a_link_reopens_the_interactions_view() -> None:
    """The model and matrix of each side stayed out of the link: a shared Interactions view opened the defaults."""
    chosen = default_models(checkpoints())
    at = page(new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote Hamlet.", "A dog."]'), "interactions")
    at.selectbox(key="interactions_model_0").select(chosen[1]).run()
    at.radio(key=f"interactions_view_0_{chosen[1]}").set_value("backward").run()
    assert_clean(at)
    assert at.query_params["matrices"].startswith(f"{chosen[1]}:backward,")
    shared = page(new_app(**{k: at.query_params[k] for k in ("q", "c", "matrices")}), "interactions")
    assert_clean(shared)
    assert shared.selectbox(key="interactions_model_0").value == chosen[1]
    assert shared.radio(key=f"interactions_view_0_{chosen[1]}").value == "backward"
    # A view the model cannot show falls back to its first, without an error.
    odd = page(new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote Hamlet.", "A dog."]',
                       matrices=f"{chosen[2]}:backward"), "interactions")
    assert_clean(odd)
    assert odd.radio(key=f"interactions_view_0_{chosen[2]}").value != "backward"
    # ... and says so, where the link asked for it (it was silent: the reader saw the defaults with no word why).
    assert any("Part of this link was ignored" in w and "backward" in w for w in texts(odd, "warning"))
    odd.run()
    assert not any("backward" in w for w in texts(odd, "warning"))  # said once
    # A model that is not available here is named; one not among the chosen is added to them.
    gone = page(new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote Hamlet.", "A dog."]',
                        matrices="nosuchmodel:combined"), "interactions")
    assert_clean(gone)
    assert any("not available here: nosuchmodel" in w for w in texts(new_app(
        q="Who wrote Hamlet?", c='["Shakespeare wrote Hamlet.", "A dog."]', matrices="nosuchmodel:combined"),
        "warning"))  # said on the page the link opens
    other = next(name for name in ("mvlstm", "matchpyramid") if name not in chosen)
    added = page(new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote Hamlet.", "A dog."]',
                         matrices=f"{other}:combined"), "interactions")
    assert_clean(added)
    assert added.selectbox(key="interactions_model_0").value == other


def test_a_link_to_one_side_s_matrices_shows_another_model_beside_it_and_is_rewritten_as_shown() -> None:
    """`matrices=mcan:cosine` showed mcan on both sides (the attending model the page's default puts on the right),
    and kept the view it could not show in the link, so every reload and shared copy said so again."""
    odd = page(new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote Hamlet.", "A dog."]',
                       matrices="mcan:cosine"), "interactions")
    assert_clean(odd)
    left, right = (odd.selectbox(key=f"interactions_model_{side}").value for side in (0, 1))
    assert left == "mcan" and right != "mcan"
    assert odd.query_params["matrices"].startswith("mcan:") and "mcan:cosine" not in odd.query_params["matrices"]


def test_a_link_with_no_model_chosen_reopens_with_the_baselines_alone() -> None:
    at = new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote it.", "A dog."]', models="")
    assert_clean(at)
    assert at.multiselect(key="rank_models").value == []
    assert any("No model chosen" in i for i in texts(at, "info"))
    commas = new_app(models=",,")
    assert any("names no model" in e for e in texts(commas, "error") + texts(commas, "warning"))


def test_link_with_unknown_model_names() -> None:
    at = new_app(q="who?", c='["Jane Austen.", "A dog."]', models="nosuchmodel")
    assert not at.exception
    assert any("not available" in w for w in texts(at, "warning"))
    assert len(table(at)) == 2


def test_a_link_with_keys_nothing_reads_says_so_and_opens_the_rest() -> None:
    # A hand-edited link's `candidate=` was dropped without a word: the reader saw a question and no hint why its
    # candidate was not there.
    at = new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote it.", "A dog."]', candidate="Marlowe wrote it.")
    assert_clean(at)
    assert any("'candidate' is not read by MatchLens" in w for w in texts(at, "warning")), texts(at, "warning")
    assert at.text_input(key="rank_question").value == "Who wrote Hamlet?" and len(table(at)) == 2
    assert "candidate" not in at.query_params  # the link written back holds what was read
    at.run()
    assert not any("not read by MatchLens" in w for w in texts(at, "warning"))  # said once
    assert not any("not read" in w for w in texts(new_app(q="Who wrote Hamlet?", c='["A.", "B."]', embed="true"),
                                                    "warning"))  # Streamlit's own key


def test_a_link_with_a_bad_pick_keeps_its_question_and_candidates() -> None:
    at = new_app(q="Who wrote Hamlet?", c='["Shakespeare wrote it.", "A dog."]', pick="99", gold="1")
    assert_clean(at)
    assert not texts(at, "error")
    assert any("Part of this link was ignored" in w and "99" in w for w in texts(at, "warning"))
    assert at.text_input(key="rank_question").value == "Who wrote Hamlet?" and len(table(at)) == 2
    assert at.multiselect(key="rank_gold").value == [0]  # the rest of the link still applies


def test_a_link_that_names_models_alone_opens_the_default_example_with_them() -> None:
    at = new_app(models="mcan,arcii-q")
    assert_clean(at)
    assert at.multiselect(key="rank_models").value == ["mcan", "arcii-q"]
    assert len(table(at)) == len(EXAMPLES[0].candidates)
    assert any("mcan" in str(column) for column in table(at).columns), list(table(at).columns)
    unknown_only = new_app(models="nosuchmodel")
    assert any("not available here: nosuchmodel. The default models are shown instead." in w
               for w in texts(unknown_only, "warning"))
    assert not unknown_only.exception and len(table(unknown_only)) == len(EXAMPLES[0].candidates)


# ---------------------------------------------------------------- broken checkpoints

@pytest.fixture
def broken_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, list[str]]:
    """A copy of the models folder with one corrupt weights file and one missing config."""
    names = checkpoints()
    for name in names:
        shutil.copytree(MODELS / name, tmp_path / name)
    corrupt, missing = names[0], names[1]
    weights = tmp_path / corrupt / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    (tmp_path / missing / "config.json").unlink()
    monkeypatch.setenv("MATCHLENS_MODELS", str(tmp_path))
    return corrupt, missing, [n for n in names if n not in (corrupt, missing)]


def test_broken_checkpoints_disable_only_themselves(broken_models: tuple[str, str, list[str]]) -> None:
    corrupt, missing, working = broken_models
    at = new_app()
    at.multiselect(key="rank_models").set_value(working).run()
    assert not at.exception
    errors = texts(at, "error")
    assert any(corrupt in e and "corrupt or truncated" in e for e in errors)
    assert any(missing in e and "file missing" in e for e in errors)
    frame = table(at)
    assert all(f"{name} rank" in frame.columns for name in working)
    assert f"{corrupt} rank" not in frame.columns and f"{missing} rank" not in frame.columns
    for name in PAGES[1:]:
        page(at, name)
        assert not at.exception
    labels = [plain(tab.label) for tab in at.tabs]
    assert any(corrupt in label and "block" in label for label in labels)
    assert any("is disabled" in e and missing in e for e in texts(at, "error"))


def test_missing_models_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATCHLENS_MODELS", str(tmp_path / "nothing-here"))
    at = new_app()
    assert not at.exception
    assert any("No model could be loaded" in e for e in texts(at, "error"))
    assert "BM25 rank" in table(at).columns  # baselines still rank
    for name in PAGES[1:]:
        page(at, name)
        assert not at.exception


def test_an_unexpected_error_gives_a_message_not_a_traceback() -> None:
    at = new_app()
    at.session_state["ml_pick"] = "not a number"  # corrupt state: the page code raises ValueError
    page(at, "attention")
    assert not at.exception  # no traceback element
    assert any("unexpected problem" in e for e in texts(at, "error"))
    at.session_state["ml_pick"] = 0
    page(at, "rank")
    assert_clean(at)  # the app recovers


def test_fit_headers_leaves_room_for_headers_and_text_cells() -> None:
    import pandas as pd
    import streamlit as st

    from ui.views.components import HEADER_PADDING_PX, HEADER_PX_PER_CHAR, TEXT_CHARS_SHOWN, fit_headers

    def px(chars: int) -> int:
        return HEADER_PADDING_PX + HEADER_PX_PER_CHAR * chars

    frame = pd.DataFrame({"matchpyramid-q rank": [1, 2], "model": ["amvlstm-q-kw-echo", "mcan"],
                          "text": ["x" * 200, "y"], "#": [1, 2], "hidden": [0, 0]})
    fitted = fit_headers(frame, {"#": {"label": "#", "width": "small"}, "hidden": None,
                                 "model": st.column_config.TextColumn("model")})
    assert fitted["matchpyramid-q rank"]["width"] == px(len("matchpyramid-q rank"))  # the header, not "1"
    assert fitted["model"]["width"] == px(len("amvlstm-q-kw-echo"))  # the longest name, not "model"
    assert fitted["text"]["width"] == px(TEXT_CHARS_SHOWN)  # long text: capped, the rest scrolls
    assert fitted["#"]["width"] == "small" and fitted["hidden"] is None  # what a page set stays


def test_signed_columns_never_draw_a_negative_zero_and_keep_the_data() -> None:
    """Compare's gap and Sanity's correlations: a tiny negative is drawn +0.0000 (it pushes nothing down), a
    missing value as the text given; the data under the drawing stays exact, so its sums still add up."""
    import pandas as pd

    from ui.views.components import signed_columns

    frame = pd.DataFrame({"bias difference": [-0.00001, 0.25, None], "model": ["a", "b", "c"], "MAP": [0.5, 0.6, 0.7]})
    styled = signed_columns(frame, ["bias difference", "not a column"], missing="not defined")
    drawn = styled.to_string(delimiter="|").splitlines()[1:]
    assert [line.split("|")[1] for line in drawn] == ["+0.0000", "+0.2500", "not defined"]
    assert [line.split("|")[3] for line in drawn] == ["0.500000", "0.600000", "0.700000"]  # other columns as they are
    assert styled.data["bias difference"].iloc[0] == -0.00001  # the data stays exact


def test_a_linked_step_past_the_walkthrough_end_is_said() -> None:
    """step=50 in a link: the last step is drawn and the page says why, as for the link's other parts."""
    at = new_app(step="50")
    page(at, "walkthrough")
    assert_clean(at)
    notes = texts(at, "info")
    assert any("Step 50 was asked for" in n and "showing the last" in n for n in notes), notes
    # The link now says the step drawn: the next run has nothing to say.
    at.run()
    assert not any("was asked for" in n for n in texts(at, "info"))


def test_sanity_leaves_out_the_columns_a_model_never_defines() -> None:
    """A model without attention has no attention to correlate: those columns are named in a caption, not drawn
    as rows of 'not defined' that pushed the defined columns out of sight."""
    at = new_app()
    chosen = at.multiselect(key="rank_models").value
    page(at, "sanity")
    assert_clean(at)
    name = at.selectbox(key="sanity_model").value
    frame = next(df.value for df in at.dataframe if "layer randomised" in df.value.columns)
    from matching.evaluation.sanity.ablation import has_attention
    from matching.training.checkpoint import load_checkpoint

    attends = has_attention(load_checkpoint(MODELS / name))
    assert ("question attention" in frame.columns) == attends, (name, chosen, list(frame.columns))
    assert "interaction matrices" in frame.columns
    said = [c for c in texts(at, "caption") if c.startswith(f"Not defined for {name} at any step")]
    assert bool(said) != attends and (attends or "question attention, answer attention" in said[0])


def test_an_explained_candidate_of_unknown_words_is_flagged_on_the_pages_that_explain_it() -> None:
    """One candidate of made-up words among known answers: its cells were listed with their shares ("Dracula x
    quintle") on Pooled cells, Attention, Interactions and Compare, and only the walkthrough said to distrust them."""
    candidates = ["Bram Stoker wrote Dracula.", "zxqv blorf quintle"]
    at = new_app(q="Who wrote Dracula?", c=json.dumps(candidates), pick="2", pair="1,2")
    for name in ("pooled", "attention", "interactions", "compare"):
        page(at, name)
        assert_clean(at)
        warned = [w for w in texts(at, "warning") if "no word vector for all 3 words of candidate #2" in w]
        assert len(warned) == 1, (name, texts(at, "warning"))
    at = new_app(q="Who wrote Dracula?", c=json.dumps(candidates), pick="1")
    page(at, "pooled")
    assert not [w for w in texts(at, "warning") if "candidate #" in w]  # the known answer explained: nothing to say


def test_direction_controls_are_left_out_of_the_link_as_of_the_ranking() -> None:
    """The note said the invisible direction controls "were removed", but the question's link kept them (the
    candidates' did not): a shared link then showed other text than was ranked."""
    at = new_app(q="Who wrote Dracula \u202e?", c=json.dumps(["Bram Stoker wrote it", "\u202eevil override"]))
    assert_clean(at)
    assert at.query_params["q"] == "Who wrote Dracula ?"
    assert json.loads(at.query_params["c"]) == ["Bram Stoker wrote it", "evil override"]
    notes = [n for n in all_text(at).splitlines() if "direction-control" in n]
    assert notes and all("left out of the ranking, its tables and its link" in n for n in notes)


def test_copies_of_one_answer_tie_on_rank_and_compare() -> None:
    """The same answer three times took ranks 2, 1, 2 and "The models disagree on the top answer" (float noise of
    2e-6 between rows of one batch). Copies now tie, and Compare splits a gap of exactly 0 without a division."""
    answer = "Bram Stoker wrote Dracula."
    at = new_app(q="Who wrote Dracula?", c=json.dumps([answer, answer, "Paris is in France.", answer]), pair="1,2")
    assert_clean(at)
    ranks = table(at)[[c for c in table(at).columns if c.startswith("rank")]]
    assert not [text for text in all_text(at).splitlines() if "disagree on the top answer" in text]
    models = [c for c in ranks.columns if ranks[c].iloc[2] != 1 and "overlap" not in c and "BM25" not in c]
    assert models and all(ranks[c].iloc[0] == ranks[c].iloc[1] == ranks[c].iloc[3] for c in models)
    page(at, "compare")
    assert_clean(at)
    assert any("exactly the same score" in text for text in all_text(at).splitlines())


def test_the_walkthrough_tables_are_in_the_pages_type_on_a_projector() -> None:
    """A dataframe draws its cells on a canvas in its own small type: on a projector the walkthrough's word and gate
    tables read smaller than the 22 px around them. There they are HTML tables, user words escaped."""
    candidates = ["Pride and **Prejudice** is a novel by Jane Austen.", "Paris is in France."]
    for step, tables in (("1", 2), ("3", 1)):
        at = new_app(q="Who wrote <b>Pride</b> and Prejudice?", c=json.dumps(candidates), step=step, present="1")
        page(at, "walkthrough")
        assert_clean(at)
        assert len(at.table) >= tables and not at.dataframe, step
        cells = [str(v) for t in at.table for v in t.value.to_numpy().ravel()]
        assert all("\\" in cell for cell in cells if "<" in cell or "**" in cell)  # Markdown-escaped, never HTML
        at = new_app(q="Who wrote Pride and Prejudice?", c=json.dumps(candidates), step=step)
        page(at, "walkthrough")
        assert_clean(at)
        assert len(at.dataframe) >= tables and not at.table, step


def test_compares_summary_is_in_the_pages_type_on_a_projector() -> None:
    candidates = ["Pride and Prejudice is a novel by Jane Austen.", "Paris is in France."]
    at = new_app(q="Who wrote Pride and Prejudice?", c=json.dumps(candidates), pair="1,2", present="1")
    page(at, "compare")
    assert_clean(at)
    summary = at.table[0].value
    assert "gap" in summary.columns and "above" not in summary.columns  # the gap's sign says it, in a projector's width
    assert all(str(v).startswith(("+", "-", "\\+", "\\-")) for v in summary["gap"])  # signed, as off a projector
    assert list(summary["split"]) == ["exact", "exact", "approximate"]
    # Every term of the gap too (a 14 px canvas table among projector type): the 8 largest, the rest summed, the bias.
    terms = [t.value for t in at.table if "effect on gap" in t.value.columns]
    assert terms and not [d for d in at.dataframe if "effect on gap" in d.value.columns]
    effects = [float(plain(str(v)).replace("+", "")) for v in terms[0]["effect on gap"]]
    assert len(effects) <= 10 and "bias" in plain(str(terms[0]["matrix"].iloc[-1]))
    assert sum(effects) == pytest.approx(float(plain(str(summary["gap"].iloc[0])).replace("+", "")), abs=2e-3)


def test_the_split_and_the_pooled_cells_are_in_the_pages_type_on_a_projector() -> None:
    """The keyword split the teaching guide points at, and the pooled cells, stayed 14 px canvas tables on a
    projector; there they are HTML tables, the pooled cells the 8 largest of 40 on one screen."""
    example = BY_KEY["echo"]
    at = new_app(q=example.question, c=json.dumps(list(example.candidates)), present="1")
    assert_clean(at)
    split = [t.value for t in at.table if "learned match" in t.value.columns]
    assert len(split) == 1 and "echo" in split[0].columns and not [
        d for d in at.dataframe if "learned match" in d.value.columns]
    assert all(str(v).startswith(("\\+", "\\-", "+", "-")) for v in split[0]["echo"])
    page(at, "pooled")
    assert_clean(at)
    cells = [t.value for t in at.table if "share \\%" in t.value.columns]  # headers Markdown-escaped
    assert len(cells) == 1 and len(cells[0]) == 8 and not [d for d in at.dataframe if "share %" in d.value.columns]
    assert any("The 8 of 40 pooled values with the largest |contribution|" in c for c in texts(at, "caption"))


def test_the_models_overview_fits_a_projector() -> None:
    """Fifteen columns in a canvas dataframe cut their headers on a projector ('dev MAF', 'top-weight rat'); there
    the overview is an HTML table of the columns that fit, and says where the others are."""
    at = page(new_app(present="1"), "models")
    assert_clean(at)
    overviews = [t.value.rename(columns=lambda c: plain(c).replace("\u2060", "")) for t in at.table]
    overviews = [t for t in overviews if "seeds: mean ± sd" in t.columns]
    assert len(overviews) >= 2 and not [d for d in at.dataframe if "seeds: mean ± sd" in d.value.columns]
    assert all(list(t.columns) == ["model", "test MAP", "seeds: mean ± sd", "dev MAP", "test MRR", "test P@1",
                                   "paper MAP"] for t in overviews)
    shown = {plain(str(name)) for t in overviews for name in t["model"]}
    assert set(checkpoints()) <= shown
    papers = [str(cell) for t in overviews for cell in t["paper MAP"]]
    assert "\\-" in papers and "-" not in papers  # a missing figure escaped: "-" alone drew an empty bullet
    assert any("without presentation mode shows them" in c for c in texts(at, "caption"))
    papers = [t.value for t in at.table if "ours MAP" in t.value.columns]  # the paper tables' MAP columns alone
    assert papers and all("vs Original: p" not in t.columns and "ours MRR" not in t.columns for t in papers)
    at = page(new_app(), "models")
    assert len([d for d in at.dataframe if "seeds: mean ± sd" in d.value.columns]) >= 2
    # The default models' cards first: 36 tabs in name order put them out of sight of a strip that scrolls.
    opening = default_models(checkpoints())
    assert [plain(tab.label).split()[-1] for tab in at.tabs[:len(opening)]] == opening


def test_the_sanity_data_set_says_which_file_it_will_read_before_it_runs() -> None:
    """"Try the sample file" changed nothing in sight until the checks ran; the Evaluate page says at once."""
    at = new_app()
    page(at, "sanity")
    assert not [c for c in texts(at, "caption") if c.startswith(":material/description: Ready:")]
    at.button(key="sanity_sample").click().run()
    assert_clean(at)
    ready = [c for c in texts(at, "caption") if "Ready:" in c]
    assert len(ready) == 1 and "sample" in ready[0] and "Run the checks" in ready[0]
    # Once they have run, it no longer asks to run them above their results.
    at.number_input(key="sanity_limit").set_value(2).run()
    at.button(key="sanity_run").click().run()
    assert_clean(at)
    assert not [c for c in texts(at, "caption") if "Ready:" in c]
    assert any("Model randomisation on the file" in m for m in texts(at, "markdown"))
