"""AppTest for 'why A over B' (Compare), the Sanity checks page and the word-deletion view on Attention."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_app import MODELS, all_text, assert_clean, checkpoints, new_app, page, set_input, texts

from matching.text.examples import BY_KEY, EXAMPLES
from matching.text.tokens import tokenize
from matching.training.cards import default_models

DISAGREE = BY_KEY["disagreement"]


def shown() -> list[str]:
    """The models a first visit ranks with (the pages show the chosen models)."""
    return default_models(checkpoints())


def attended_sides(gate_only: bool = True) -> dict[str, int]:
    """Chosen model -> how many texts its attention gate weighs (0, 1 or 2), from its config; with
    `gate_only` False, a co-attention (MCAN's, over both texts) counts too."""
    sides = {}
    for name in shown():
        config = json.loads((MODELS / name / "config.json").read_text())
        params = config.get("params") or config
        attention = params.get("attention", "none")
        sides[name] = 2 if not gate_only and params.get("family") == "mcan" else \
            {"none": 0, "question": 1, "answer": 1, "both": 2}[attention]
    return sides


def frame(at: AppTest, column: str) -> pd.DataFrame:
    """The table with this column (AppTest does not expose the key of a table without selection)."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


def compare_app(**query: str) -> AppTest:
    return page(new_app(**query), "compare")


# ---------------------------------------------------------------- Compare

def test_compare_default_pair_and_exact_split() -> None:
    at = compare_app()
    assert_clean(at)
    example = EXAMPLES[0]
    summary = frame(at, "cells A - cells B")
    assert list(summary["model"]) == shown()
    for _, row in summary.iterrows():  # gap = cells + keywords + bias difference (+ residual), as shown
        assert abs(row["gap"] - (row["cells A - cells B"] + row["keywords A - keywords B"] + row["bias difference"]
                                 + row["residual"])) < 1e-5
        assert row["residual"] == 0.0 or row["split"] == "approximate, over words"
    # default: the first model's top answer against the marked correct one (or the runner-up)
    assert at.selectbox(key="compare_a").value != at.selectbox(key="compare_b").value
    assert example.gold[0] in (at.selectbox(key="compare_a").value, at.selectbox(key="compare_b").value) or True
    assert len(at.get("plotly_chart")) == 2  # A and B on one colour scale
    assert any("of 5 put" in m or "put A" in m for m in texts(at, "markdown"))
    terms = frame(at, "effect on gap")
    assert abs(terms["effect on gap"].sum() - summary["gap"][0]) < 1e-4
    assert "pair" not in at.query_params  # the default pair is not written into the link


def test_compare_tiles_add_up_as_shown_with_the_keyword_term() -> None:
    """The detail's tiles name every part of the gap, the keyword term included where the model has one,
    and the parts shown add up to the figure shown (to the rounding of 4 decimals)."""
    at = compare_app()
    assert_clean(at)
    tiles = {m.label: float(m.value) for m in at.metric}
    assert "-kw" in shown()[0] and "keywords A - B" in tiles, tiles
    parts = tiles["cells A - cells B"] + tiles["keywords A - B"] + tiles["bias difference"]
    assert abs(parts - tiles["adds up to"]) <= 2e-4 and abs(tiles["adds up to"] - tiles["gap A - B"]) <= 1e-4


def test_compare_pair_in_the_link_and_pickers() -> None:
    at = compare_app(q=DISAGREE.question, c=json.dumps(list(DISAGREE.candidates)), pair="2,3")
    assert_clean(at)
    assert (at.selectbox(key="compare_a").value, at.selectbox(key="compare_b").value) == (1, 2)
    assert at.query_params["pair"] == "2,3"
    at.selectbox(key="compare_b").select(4).run()
    assert_clean(at)
    assert at.query_params["pair"] == "2,5"
    at.selectbox(key="compare_a").select(4).run()  # the same candidate twice
    assert not at.exception
    assert any("same candidate" in w for w in texts(at, "warning"))
    assert "pair" not in at.query_params


def test_compare_models_matrices_and_flip() -> None:
    at = compare_app(q=DISAGREE.question, c=json.dumps(list(DISAGREE.candidates)), gold="2")
    for name in shown():
        at.button_group(key="compare_model").set_value(name).run()
        assert_clean(at)
        radio = [r for r in at.radio if r.key == f"compare_matrix_{name}"]
        if radio:
            for option in radio[0].options:
                radio[0].set_value(option)
                at.run()
                assert_clean(at)
                radio = [r for r in at.radio if r.key == f"compare_matrix_{name}"]
    name = "amvlstm-q" if "amvlstm-q" in shown() else shown()[0]
    at.button_group(key="compare_model").set_value(name).run()
    assert at.get("vega_lite_chart"), "attention and deletion charts"
    assert frame(at, "gap without it").shape[0] == len(tokenize(DISAGREE.question))  # every question word
    at.button(key=f"compare_flip_{name}").click().run()
    assert_clean(at)
    text = all_text(at)
    assert "Deleting" in text or "No flip" in text or "already ranks" in text
    applies = [b for b in at.button if b.key == f"compare_apply_{name}"]
    if applies:
        before = at.session_state["ml_candidates"]
        applies[0].click().run()
        assert_clean(at)
        assert at.session_state["ml_candidates"] != before or at.session_state["ml_question"] != DISAGREE.question
        assert any("Since your last edit" in m for m in texts(at, "markdown"))


@pytest.mark.parametrize("candidates, message", [
    (["Jane Austen wrote it."], "at least two candidates"),
    (["Jane Austen wrote it.", "Jane Austen wrote it."], "same text"),
    (["Jane Austen wrote it.", "Zorblax qwxlyt vrrmpt 🔒 東京"], None),
])
def test_compare_bad_inputs(candidates: list[str], message: str | None) -> None:
    at = set_input(new_app(), candidates=candidates)
    page(at, "compare")
    assert_clean(at)
    if message:
        assert any(message in i for i in texts(at, "info"))
    if len(candidates) > 1:
        at.button(key=f"compare_flip_{shown()[0]}").click().run()
        assert_clean(at)


# ---------------------------------------------------------------- Sanity checks

def test_sanity_example_checks() -> None:
    at = page(new_app(), "sanity")
    assert_clean(at)
    rows = frame(at, "layer randomised")
    assert rows["layer randomised"][0] == "trained" and rows["step"].tolist() == list(range(len(rows)))
    assert rows["pooled cells kept"][0] == 1.0
    assert at.get("vega_lite_chart")
    ablation = frame(at, "score ablated")
    assert set(ablation["attention"]) == {"uniform", "permuted"}
    assert all(" → " in r for r in ablation["rank"])  # "3 → 1": trained rank, then ablated
    first = rows["score"].tolist()
    at.number_input(key="sanity_seed").set_value(3).run()
    assert_clean(at)
    assert frame(at, "layer randomised")["score"].tolist() != first  # another seed, other random weights
    at.number_input(key="sanity_seed").set_value(0).run()
    assert frame(at, "layer randomised")["score"].tolist() == first  # seed-stable
    for name in shown():
        at.selectbox(key="sanity_model").select(name).run()
        assert_clean(at)
    at.selectbox(key="sanity_pick").select(2).run()
    assert_clean(at)
    assert at.session_state["ml_pick"] == 2


def test_sanity_on_the_sample_file() -> None:
    at = page(new_app(), "sanity")
    assert not at.button(key="sanity_run").value
    at.button(key="sanity_sample").click().run()
    assert_clean(at)
    assert any("Run the checks" in i for i in texts(at, "info"))
    at.button(key="sanity_run").click().run()
    assert_clean(at)
    aopc = frame(at, "comprehensiveness AOPC")
    assert {"attention", "deletion effect", "random"} == set(aopc["order"])
    assert set(aopc["model"]) == set(shown())
    assert len(frame(at, "MAP permuted")) == sum(count > 0 for count in attended_sides().values())
    randomisation = next(df.value for df in at.dataframe if {"model", "layer randomised"} <= set(df.value.columns))
    assert set(randomisation["model"]) == set(shown()) and (randomisation["step"] == 0).sum() == len(shown())
    kept = randomisation.loc[randomisation["step"] == 0, "pooled cells kept"]
    configs = [json.loads((MODELS / n / "config.json").read_text()) for n in shown()]
    assert (kept.dropna() == 1.0).all() and kept.notna().sum() == sum(  # NaN: a model without pooled cells
        (c.get("params") or c).get("family") != "mcan" for c in configs)
    at.button_group(key="sanity_side").set_value("question").run()
    assert any("Run the checks" in i for i in texts(at, "info"))  # new settings, not yet run
    at.button(key="sanity_run").click().run()
    assert_clean(at)
    assert "question words" in all_text(at)


def test_sanity_bad_upload_and_odd_inputs() -> None:
    at = page(new_app(), "sanity")
    at.file_uploader(key="sanity_upload").upload("bad.csv", b"text,answer\nq,a\n", "text/csv")
    at.run()
    at.button(key="sanity_run").click().run()
    assert not at.exception
    assert any("missing column" in e for e in texts(at, "error"))
    for candidates in (["Jane Austen wrote it."], ["same answer", "same answer"], ["qwxlyt vrrmpt", "zorblaxx"]):
        set_input(page(at, "rank"), candidates=candidates)
        page(at, "sanity")
        assert not at.exception and not [e for e in at.error if "missing column" not in e.value]


# ---------------------------------------------------------------- Attention: word deletion beside alpha

def test_attention_shows_deletion_effects_and_their_agreement() -> None:
    at = page(new_app(), "attention")
    assert_clean(at)
    captions = [c for c in texts(at, "caption") if "Spearman" in c or "not defined" in c]
    assert len(captions) == sum(attended_sides(gate_only=False).values())  # one per attended text of each model
    charts = len(at.get("vega_lite_chart"))
    at.toggle(key="attention_deletion").set_value(False).run()
    assert_clean(at)
    assert len(at.get("vega_lite_chart")) == charts // 2
    assert not [c for c in texts(at, "caption") if "Spearman" in c]


def test_attention_deletion_with_one_word_texts() -> None:
    at = set_input(new_app(), question="Who?", candidates=["Austen", "qwxlyt"])
    page(at, "attention")
    assert_clean(at)
    assert any("not defined" in c for c in texts(at, "caption"))


# ---------------------------------------------------------------- papercuts

def test_link_error_shows_once_on_the_page_it_opened() -> None:
    at = new_app(q="who?", c='["broken')
    assert any("This link could not be opened" in e for e in texts(at, "error"))
    at.run()  # a rerun on the same page keeps it
    assert any("This link could not be opened" in e for e in texts(at, "error"))
    page(at, "attention")
    assert not any("This link could not be opened" in e for e in texts(at, "error"))
    page(at, "rank")
    assert not any("This link could not be opened" in e for e in texts(at, "error"))


def test_sidebar_edit_says_which_key_applies() -> None:
    at = page(new_app(), "pooled")
    caption = " ".join(texts(at, "caption"))
    assert "Ctrl+Enter in the candidate" in caption and "press Enter in the question" in caption


def test_sample_file_replaces_an_upload() -> None:
    at = page(new_app(), "evaluate")
    at.file_uploader(key="evaluate_upload").upload("bad.csv", b"text,answer\nq,a\n", "text/csv")
    at.run()
    assert any("missing column" in e for e in texts(at, "error"))
    at.button(key="evaluate_sample").click().run()
    assert_clean(at)
    assert any("sample-ranking.csv" in s for s in texts(at, "success"))
    assert any("set aside" in c for c in texts(at, "caption"))


def test_a_file_without_a_correct_answer_says_there_is_nothing_to_measure() -> None:
    at = page(new_app(), "evaluate")
    for name, labels in (("nogold.csv", (0, 0)), ("first.csv", (1, 0))):
        rows = [f"who wrote hamlet?,{text},{label}" for text, label in zip(("Shakespeare wrote it.",
                                                                           "Paris is in France."), labels, strict=True)]
        at.file_uploader(key="evaluate_upload").upload(name, "\n".join(["question,candidate,label", *rows]).encode(),
                                                      "text/csv")
        at.run()
        assert_clean(at)
        if name == "nogold.csv":
            assert any("no question has a correct candidate" in w for w in texts(at, "warning"))
            assert not texts(at, "success") and not at.dataframe
        else:  # the right answer listed first: the original order is perfect by construction, and says so
            assert any("original order is perfect here" in c for c in texts(at, "caption"))


def test_mostly_unknown_words_get_a_plain_warning() -> None:
    at = set_input(new_app(), question="東京はどこですか", candidates=["東京 は 日本 の 首都 です", "🔒🔒 🎉"])
    assert_clean(at)
    assert any("says little" in w for w in texts(at, "warning"))
    page(at, "attention")
    assert any("says little" in w for w in texts(at, "warning"))


def test_a_question_of_punctuation_alone_gets_a_plain_warning() -> None:
    at = set_input(new_app(), question="?! ...", candidates=["Jane Austen wrote it.", "Paris is in France."])
    assert_clean(at)
    assert any("only punctuation" in w for w in texts(at, "warning"))


def test_counterfactual_table_shows_old_and_new_ranks_and_pins() -> None:
    at = new_app()
    set_input(at, question="Who wrote the famous book Pride and Prejudice?")
    table = next(df.value for df in at.dataframe if "#" in df.value.columns and shown()[0] in df.value.columns)
    cells = [str(v) for m in shown() for v in table[m]]
    assert all(re.fullmatch(r"\d+( → \d+)?  \([+-]\d\.\d{3}\)", c) for c in cells), cells
    at.button(key="rank_changes_pin").click().run()
    assert at.session_state["ml_pinned"]["question"] == EXAMPLES[0].question
    set_input(at, question="Who wrote the book Pride and Prejudice?")
    set_input(at, question="Who wrote the old book Pride and Prejudice?")
    assert any("Since your pinned starting point" in m for m in texts(at, "markdown"))
    assert any("wrote the novel" in c or "novel" in c for c in texts(at, "caption"))  # against the pinned input
    page(at, "attention")
    per_model = next(df.value for df in at.dataframe if "rank" in df.value.columns and "model" in df.value.columns)
    assert list(per_model["model"]) == shown()
    page(at, "rank")
    at.button(key="rank_changes_unpin").click().run()
    assert not at.session_state["ml_pinned"]
    assert not any("pinned" in m for m in texts(at, "markdown"))


def test_cells_pooled_by_several_models_are_named_and_blank() -> None:
    at = page(new_app(), "pooled")
    overlap = next((df.value for df in at.dataframe if "models" in df.value.columns), None)
    assert overlap is not None
    for column in [c for c in overlap.columns if c.endswith(" rank")]:
        assert all(v == "" or "#" in v or "window" in v for v in overlap[column])  # never None


# ---------------------------------------------------------------- Evaluate, deeper

def test_evaluate_slices_top_answers_csv_and_empty_filter() -> None:
    at = page(new_app(), "evaluate")
    at.button(key="evaluate_sample").click().run()
    assert_clean(at)
    assert "Metrics (CSV)" in {b.label for b in at.get("download_button")}
    # The paired tests beside the metrics, against every baseline, as `evaluate` prints them (the page had none).
    tests = next(df.value for df in at.dataframe if "vs BM25: ΔMAP (p)" in df.value.columns)
    assert list(tests["model"]) == default_models(checkpoints())
    assert {f"vs {b}: ΔMAP (p)" for b in ("original order", "word overlap", "BM25")} <= set(tests.columns)
    assert all(re.fullmatch(r"[+-]\d\.\d{4} \((<0\.001|\d\.\d{3})\)", cell) for cell in tests["vs BM25: ΔMAP (p)"])
    assert any("Paired randomisation test on per-question AP" in c and "8 questions" in c for c in texts(at, "caption"))
    for slicing in ("question word", "correct-answer length", "word overlap"):
        rows = frame(at, slicing)
        assert rows["questions"].sum() == 8  # every sample question has a correct answer
    at.button_group(key="evaluate_per_model").set_value("top answer").run()
    assert_clean(at)
    questions = next(df for df in at.dataframe if df.key == "evaluate_questions").value
    evaluated = default_models(checkpoints())
    assert all(f"{m} top answer" in questions.columns for m in evaluated)
    assert len(questions.columns) <= 4 + len(evaluated)  # question, counts, one column per model, disagree
    at.button(key="evaluate_identical_run").click().run()
    assert_clean(at)
    shares = frame(at, "identical-word share")
    assert list(shares["model"]) == default_models(checkpoints())
    pooled = [name for name in shares["model"] if not name.startswith("mcan")]  # MCAN pools no cells: no share
    assert shares.set_index("model")["identical-word share"][pooled].between(0, 1).all()
    assert shares.set_index("model")["identical-word share"].drop(pooled).isna().all()
    at.checkbox(key="evaluate_low").check().run()
    at.number_input(key="evaluate_threshold").set_value(100).run()
    assert_clean(at)
    assert any("No question shown" in i and "rank" in i for i in texts(at, "info"))
