"""Evaluate: upload a ranking file, score it with the chosen models, and find the questions worth a closer look."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from matching.evaluation.dataset import Evaluation, evaluate
from matching.evaluation.metrics import METRICS
from matching.evaluation.progress import EvaluationProgress
from matching.evaluation.slices import identical_word_share
from matching.evaluation.studies import keyword_rows
from matching.explain import glossary
from matching.explain.export import rows_to_csv
from matching.text.data import DataError, RankingList, content_key
from matching.text.datasets import built_in_dev_splits
from matching.text.inputs import MAX_CANDIDATES, join_candidates, past_the_limit
from matching.text.tokens import TextError
from matching.training.reporting import (
    chosen_note,
    chosen_on,
    fitted_note,
    fitted_on,
    paired_test_cells,
    paired_test_rows,
)
from ui.views import common, components, state

ss = st.session_state
RESULT = "ml_evaluation"
PAIRED_AT_ONCE = 1_000
"""Questions with a correct candidate up to which the paired tests run with the evaluation (above: on a click)."""

st.title(":material/fact_check: Evaluate")
st.caption("Upload a ranking file: WikiQA TSV (QuestionID, Question, ..., Sentence, Label) or CSV with the columns "
           "question, candidate, label (1 = correct); or pick a built-in data set: WikiQA or TrecQA, where this "
           "machine has them, or the section questions that ship with MatchLens. The chosen models and the "
           "baselines rank each question's candidates; ties count as the mean over their orders.")


components.glossary(["MAP", "MRR", "P@1", "nDCG", "tie rule", "baseline", "rank", "keyword term", "learned match",
                     *glossary.FAMILY_TERM_NAMES],
                    key="evaluate_glossary")


KEYWORD_QUESTIONS = 500
"""The keyword figures score every pair three times (whole, each part alone): a cap keeps that to seconds."""


def _run(chosen: common.RankingSource, names: list[str]) -> None:
    """Read and evaluate the chosen data with the chosen models; the result (or why not) is kept in the session."""
    name = chosen.name
    digest = content_key(chosen.key, *names)
    if ss.get(RESULT, {}).get("digest") == digest:
        return
    try:
        lists = chosen.read()
    except DataError as error:
        ss[RESULT] = {"digest": digest, "name": name, "error": str(error)}
        return
    loaded = state.models()
    matchers = {n: loaded[n] for n in names}
    # Reading the texts and scoring with each model advance side by side: the same fraction and text
    # as the command line's progress (`evaluation.progress`).
    bar = st.progress(0.0, text=f"Scoring {sum(len(x.candidates) for x in lists):,} pairs...")
    progress = EvaluationProgress(len(lists), sum(len(x.candidates) for x in lists), list(matchers),
                                  show=lambda fraction, text: bar.progress(fraction, text=text))
    try:
        evaluation = evaluate(lists, matchers, progress=progress)
    except TextError as error:
        bar.empty()
        ss[RESULT] = {"digest": digest, "name": name, "error": f"{name}: {error}"}
        return
    bar.empty()
    # Which models were fitted or chosen on this data (their dev split): found once an evaluation, not at every rerun.
    cards = {n: m.card for n, m in matchers.items()}
    ss[RESULT] = {"digest": digest, "name": name, "lists": lists, "evaluation": evaluation,
                  "fitted": fitted_on(len(lists), lambda: lists, cards),
                  "chosen": chosen_on(len(lists), lambda: lists, built_in_dev_splits(), cards)}


def _open_in_rank(item: RankingList) -> None:
    state.set_inputs(question=item.question, candidates=join_candidates(item.candidates),
                     gold=[i for i, label in enumerate(item.labels) if label], pick=0, remember=False)
    ss.pop("ml_example", None)
    # With its link: switched without one, the query was cleared and written back, two history entries.
    st.switch_page("ui/screens/rank.py", query_params=state.current_link())


evaluated_models = state.chosen_models()
st.caption(f":material/model_training: Models: {components.md(', '.join(evaluated_models) or 'none (baselines only)')}"
           " — the ones chosen on the Rank page; add or remove models there.")
chosen = common.ranking_file("evaluate")
if chosen is not None:
    _run(chosen, evaluated_models)

result = ss.get(RESULT)
if result is None:
    st.info("Upload a file, try the sample or pick a built-in data set to see how the models do on it.",
            icon=":material/upload_file:")
elif "error" in result:
    st.error(f"This file could not be read: {components.md(result['error'])}", icon=":material/error:")
elif not any(x.has_relevant for x in result["lists"]):
    st.warning(f"{components.md(Path(result['name']).name)}: no question has a correct candidate (label 1), so "
               "there is nothing to measure a ranking against. Mark each question's right answers with label 1.",
               icon=":material/warning:")
else:
    evaluation: Evaluation = result["evaluation"]
    lists: list[RankingList] = result["lists"]
    by_qid = {item.qid: item for item in lists}
    # The candidates of the questions evaluated: a skipped question's were counted beside a count that left it out.
    st.success(f"{components.md(Path(result['name']).name)}: {glossary.counted(evaluation.evaluated, 'question')}, "
               f"{glossary.counted(int(evaluation.candidates.sum()), 'candidate')}.",
               icon=":material/check_circle:")
    for reason in evaluation.skipped[:5]:
        st.warning(f"Left out: {components.md(reason)}", icon=":material/warning:")
    if len(evaluation.skipped) > 5:
        st.warning(f"... and {len(evaluation.skipped) - 5} more questions left out.", icon=":material/warning:")
    if note := evaluation.wordless_note():
        st.warning(note, icon=":material/warning:")
    if result["fitted"]:
        st.warning(components.md(fitted_note(result["fitted"])), icon=":material/school:")
    if result["chosen"]:
        st.caption(f":material/school: {components.md(chosen_note(result['chosen'], len(evaluation.models)))}")
    without = sum(not x.has_relevant for x in lists)
    if without:
        st.caption(f"{without} question(s) have no correct candidate; metrics leave them out.")

    st.subheader("Metrics", divider="gray")
    table = pd.DataFrame(evaluation.metric_rows())
    st.dataframe(table.style.highlight_max(subset=list(METRICS), color="#d1f2d9").format(
        {m: "{:.4f}" for m in METRICS}), hide_index=True, width="stretch", key="evaluate_metrics")
    if evaluation.overall["original order"]["MAP"] >= 1 - 1e-9:
        st.caption(":material/info: The original order is perfect here: the file lists every question's correct "
                   "answers first. That is how the file was written, not a ranking to beat; shuffle the candidates "
                   "of each question to compare the models with a fair baseline.")
    components.download("Metrics (CSV)", rows_to_csv(table.to_dict("records")), "matchlens-metrics.csv",
                        "text/csv", key="evaluate_metrics_export", icon=":material/download:")
    with st.expander("Is each model's lead over the baselines more than chance?", icon=":material/balance:",
                     expanded=True, key="evaluate_paired"):
        paired, answerable = ss.get("ml_paired"), int((evaluation.correct > 0).sum())
        if not (paired and paired["digest"] == result["digest"]):
            # 9,999 resamples a test: under a second for a dev split, 11 s for 4,000 questions and six models, so
            # a large file's run waits for a click, and every result is kept for the page's later reruns.
            if answerable > PAIRED_AT_ONCE and not st.button(
                    "Compute the paired tests", key="evaluate_paired_run", icon=":material/calculate:"):
                paired = None
            else:
                with st.spinner("Testing each model against each baseline..."):
                    loaded = state.models()
                    paired = ss["ml_paired"] = {"digest": result["digest"], "tests": paired_test_rows(
                        evaluation, {n: loaded[n].card for n in evaluation.models if n in loaded})}
        if paired is None:
            st.caption(f"Paired randomisation tests on per-question AP, each model against each baseline: "
                       f"{glossary.counted(answerable, 'question')} to resample, "
                       "some seconds a model.")
        else:
            sentence, tests = paired["tests"]
            st.caption(sentence)
            if tests:
                components.small_table(pd.DataFrame(paired_test_cells(tests)), key="evaluate_paired_tests")

    st.subheader("Slices", divider="gray")
    st.caption("MAP per group of questions: by question word, by the length of the correct answers (mean words), "
               "and by how many of the question's words the best-overlapping correct answer repeats. Small groups "
               "vary a lot; the count says how many questions each holds.")
    slice_tables = evaluation.slice_rows()
    slice_tabs = st.tabs([f"By {slicing}" for slicing in slice_tables])
    for tab, (slicing, rows) in zip(slice_tabs, slice_tables.items(), strict=True):
        with tab:
            slice_frame = pd.DataFrame(rows)
            st.dataframe(slice_frame, hide_index=True, width="stretch", key=f"evaluate_slice_{slicing}",
                         column_config={c: st.column_config.NumberColumn(c.removesuffix(" MAP"), format="%.3f")
                                        for c in slice_frame.columns if c.endswith(" MAP")})
    with st.expander("How much of each model's score comes from identical words?", icon=":material/join_inner:",
                     key="evaluate_identical"):
        st.caption("Share of all |pooled-cell contributions| coming from cells that join a question word with the "
                   "same word in the candidate (over every pair of the file, at most 200 questions). Word overlap "
                   "and BM25 score only such matches; a model near 0 reads meaning beyond exact words. A keyword "
                   "term is exact-word matching by design and not a pooled cell, so it is not in the share (the "
                   "expander below splits it off). A model without pooled cells (MCAN) has no share: -.")
        if st.button("Compute", key="evaluate_identical_run", icon=":material/calculate:"):
            bar = st.progress(0.0, text="Explaining every pair...")
            ss["ml_identical"] = {"digest": result["digest"], "rows": identical_word_share(
                lists, {n: state.models()[n] for n in evaluated_models}, max_questions=200,
                progress=lambda f, what: bar.progress(f, text=f"{what} done"))}
            bar.empty()
        identical = ss.get("ml_identical")
        if identical and identical["digest"] == result["digest"]:
            st.dataframe(pd.DataFrame(identical["rows"]), hide_index=True, width="stretch", placeholder="-",
                         key="evaluate_identical_table", column_config={"identical-word share": st.column_config.
                                                                        NumberColumn(format="percent")})
    with st.expander("Which part carries each model here: its learned match or its keyword term?",
                     icon=":material/call_split:", key="evaluate_keywords"):
        st.caption("For each model with a keyword term: MAP by its whole score, by its learned match alone and by its "
                   "keyword term alone, and in how many questions the keyword term changes the top answer (at most "
                   f"{KEYWORD_QUESTIONS} questions), as each card gives them for the dev sets. Where the keyword term "
                   "decides, the views of the network explain a part that alone ranks otherwise.")
        if st.button("Compute", key="evaluate_keywords_run", icon=":material/calculate:"):
            bar = st.progress(0.0, text="Scoring each part alone...")
            ss["ml_keyword_parts"] = {"digest": result["digest"], "rows": keyword_rows(
                lists, {n: state.models()[n] for n in evaluated_models}, max_questions=KEYWORD_QUESTIONS,
                progress=lambda f, what: bar.progress(f, text=f"{what} done"))}
            bar.empty()
        parts = ss.get("ml_keyword_parts")
        if parts and parts["digest"] == result["digest"]:
            if parts["rows"]:
                st.dataframe(pd.DataFrame(parts["rows"]), hide_index=True, width="stretch",
                             key="evaluate_keywords_table",
                             column_config={c: st.column_config.NumberColumn(format="%.4f")
                                            for c in ("MAP", "learned match alone", "keywords alone")})
            else:
                st.caption("None of the models evaluated has a keyword term: each score is its learned match.")

    st.subheader("Per question", divider="gray")
    st.caption("Tick the box at a row's left to open that question with its candidates and labels on the Rank "
               "page.")
    longer, cut_correct = past_the_limit(evaluation.evaluated_lists(lists))
    if longer:
        have = "have" if longer > 1 else "has"
        st.caption(f":material/content_cut: {glossary.counted(longer, 'question')} here {have}"
                   f" more than {MAX_CANDIDATES} candidates: the Rank page ranks the first {MAX_CANDIDATES} of each"
                   + (f", and {cut_correct} of them {'have' if cut_correct > 1 else 'has'} a correct candidate past "
                      f"#{MAX_CANDIDATES}, which it leaves out" if cut_correct else "")
                   + ". This table and the metrics count every candidate; in a notebook, "
                   "`matching.evaluate(...).ranking(question)` explains the whole list.")
    filters = st.columns([1, 1, 1], vertical_alignment="bottom")
    # Kept for the session: a researcher opening question after question from a filtered list comes back to it.
    disagree = filters[0].checkbox("Models disagree on the top answer", key="evaluate_disagree",
                                   persist_state="session")
    low = filters[1].checkbox("Correct answer ranked low", key="evaluate_low", persist_state="session",
                              help="Some model puts its best-placed correct answer at this rank or lower.")
    threshold = filters[2].number_input("Low means rank ≥", min_value=2, max_value=100, value=3,
                                        key="evaluate_threshold", persist_state="session")
    shown = st.segmented_control("Per model", ["first correct rank", "AP", "top answer"],
                                 default="first correct rank", key="evaluate_per_model", persist_state="session",
                                 help="One column per model, so every column fits the screen.") or "first correct rank"
    frame, columns = evaluation.question_table(lists, shown, disagree, low, int(threshold))
    model_names = evaluation.models
    # Each model's column under the model's name alone: "Per model" above says what they hold, and with the
    # long "mvlstm-em-kw-all 1st correct" headers the last model and "disagree" were out of sight at 1280 pixels.
    config = {c: st.column_config.NumberColumn(c.removesuffix(" first correct"), format="%d",
                                               help="Rank of the best-placed correct answer (1 = top)")
              for c in columns if c.endswith(" first correct")}
    config.update({f"{m} AP": st.column_config.NumberColumn(m, format="%.3f", help=f"{m}'s average precision")
                   for m in model_names})
    config.update({f"{m} top answer": st.column_config.TextColumn(m, help=f"{m}'s top answer", width="small")
                   for m in model_names})
    config["question"] = st.column_config.TextColumn("question", width="medium", pinned=True)
    config["candidates"] = st.column_config.NumberColumn("cands", width="small", help="Candidates")
    config["correct"] = st.column_config.NumberColumn("correct", width="small", help="Correct candidates")
    config["models disagree"] = st.column_config.CheckboxColumn("disagree", width="small",
                                                                help="The models disagree on the top answer")
    config["qid"] = st.column_config.TextColumn("qid", width="small")
    st.caption(f"{len(frame)} of {evaluation.evaluated} questions shown.")
    if frame.empty:
        st.info(components.md(evaluation.empty_filter_reason(disagree, low, int(threshold))),
                icon=":material/filter_alt_off:")
    # A question without a correct candidate has no first correct rank and no AP: said in its cells.
    selection = st.dataframe(frame[columns].reset_index(drop=True), column_config=config, hide_index=True,
                             width="stretch", key="evaluate_questions", on_select="rerun", placeholder="no correct",
                             selection_mode="single-row", height=min(38 + 35 * len(frame), 520))
    # Built on a click: the whole top answers are a second pass over the table, for the export alone.
    components.download("Per-question results (CSV)", lambda: rows_to_csv(evaluation.question_table(
        lists, shown, disagree, low, int(threshold), top_answer_chars=None)[0].to_dict("records")),
                        "matchlens-per-question.csv", "text/csv", key="evaluate_export", icon=":material/download:")
    rows = selection.selection.rows if selection is not None else []
    if rows:
        chosen = frame.reset_index(drop=True).iloc[int(rows[0])]
        item = by_qid.get(str(chosen["qid"]))
        if item is not None:
            _open_in_rank(item)
