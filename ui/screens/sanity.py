"""Sanity checks: does an explanation depend on the learned weights, and does the model use what it attends to?"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from matching.evaluation.sanity import (
    MEASURES,
    ablation_map,
    attention_ablation,
    deletion_curves,
    has_attention,
    randomisation_check,
    randomisation_on_data,
)
from matching.explain import charts
from matching.text.data import DataError, content_key
from ui.views import common, components, state

ss = st.session_state
RESULT = "ml_sanity_result"

st.title(":material/rule: Sanity checks")
st.caption("Checks that an explanation deserves trust. Model randomisation (Adebayo et al., 2018): if the "
           "explanation barely changes when the weights are random, it says little about the model. Attention "
           "ablation: how much the score needs the learned attention. Deletion curves (ERASER): do the words an "
           "order puts first carry the score?")

components.glossary(["score", "rank", "alpha", "attention gate", "uniform weight 1/n", "word vector",
                     "unknown word", "MLP", "Bi-LSTM", "interaction matrix", "k-max pooling", "contribution",
                     "MAP"], key="sanity_glossary")

RHO = st.column_config.NumberColumn(format="%+.2f")


def _example() -> None:
    found = common.ranking_or_note()
    if found is None:
        return
    ranking, _ = found
    if not ranking.models:
        st.info("No model chosen: choose models on the Rank page.", icon=":material/info:")
        return
    pick = common.candidate_picker(ranking, key="sanity_pick")
    names = list(ranking.models)
    controls = st.columns([2, 1], vertical_alignment="bottom")
    if ss.get("sanity_model") not in names:
        ss["sanity_model"] = names[0]
    name = controls[0].selectbox("Model", names, key="sanity_model")
    seed = int(controls[1].number_input("Seed", min_value=0, max_value=1_000_000, value=0, step=1, key="sanity_seed",
                                        help="The same seed gives the same random weights."))
    matcher = state.models()[name]
    st.subheader("Model randomisation, cascading from the top", divider="gray")
    check = randomisation_check(matcher, ranking.question_tokens, ranking.candidate_tokens, pick, seed)
    st.caption("Step by step, one more layer is re-initialised (the one nearest the score first) and the same "
               f"candidate #{pick + 1} is explained again. Each value is a Spearman rank correlation with the "
               "trained model's explanation (1 = unchanged, 0 = unrelated); 'pooled cells kept' is the share of the "
               "trained model's pooled cells still pooled. Not defined: no attention on that side, a constant "
               "vector, or fewer than 3 candidates.")
    st.markdown(components.md(check.verdict()))
    components.altair(charts.randomisation_chart(check.long_rows(), "explanation vs the trained model's", name),
                      key="sanity_randomisation_chart")
    randomised = components.without_undefined_columns(
        pd.DataFrame(check.rows()), f"Not defined for {name} at any step, so not shown: {{}}.")
    st.dataframe(randomised, hide_index=True, width="stretch", key="sanity_randomisation", placeholder="not defined",
                 column_config=components.fit_headers(randomised, {
                     # The layers are listed in their order, as the chart numbers them: a step column
                     # pushed 'pooled cells kept' out of sight at 1280 pixels zoomed to 150%.
                     "step": None,
                     "score": st.column_config.NumberColumn(format="%+.3f"),
                     **{c: RHO for c in ("candidate scores", "question attention", "answer attention",
                                         "interaction matrices", "cell contributions")},
                     "pooled cells kept": st.column_config.NumberColumn(format="%.2f")}))
    st.subheader("Attention ablation on this example", divider="gray")
    attending = [n for n in names if has_attention(state.models()[n])]
    if not attending:
        st.info("None of the chosen models has attention.", icon=":material/visibility_off:")
        return
    rows = [row for n in attending for row in attention_ablation(state.models()[n], ranking.question_tokens,
                                                                    ranking.candidate_tokens, seed)
            if row["#"] == pick + 1]
    frame = pd.DataFrame(rows)
    frame["rank"] = [f"{r} → {a}" for r, a in zip(frame["rank"], frame["rank ablated"], strict=True)]
    st.caption(f"Candidate #{pick + 1}: its score and rank when every attention weight is replaced by 1/n "
               "(uniform) or by the model's own weights shuffled over the words (permuted, seeded).")
    st.dataframe(frame[["model", "attention", "score", "score ablated", "score change", "rank"]], hide_index=True,
                 width="stretch", key="sanity_ablation", column_config={
                     "score": st.column_config.NumberColumn(format="%+.3f"),
                     "score ablated": st.column_config.NumberColumn(format="%+.3f"),
                     "score change": st.column_config.NumberColumn(format="%+.3f"),
                     "rank": st.column_config.TextColumn("rank: trained → ablated")})


def _dataset() -> None:
    st.caption("Deletion curves over every (question, candidate) pair of a ranking file: words ordered by attention, "
               "by their own deletion effect, or at random. Comprehensiveness: the score drop when the top k% words "
               "are deleted (higher = those words carry the score). Sufficiency: the drop when only they are kept "
               "(lower = they suffice). AOPC: the mean over k = 10% ... 50%. Scores are raw model scores.")
    chosen = common.ranking_file("sanity")
    controls = st.columns([2, 1, 1], vertical_alignment="bottom")
    side = controls[0].segmented_control("Words to order", ["answer", "question"], default="answer",
                                         key="sanity_side") or "answer"
    # 25 by default: the deletion curves score every pair again for each share of its words deleted, in three
    # orders, with every chosen model; 100 questions of WikiQA test kept a first-time visitor waiting two minutes.
    limit = int(controls[1].number_input("Questions (at most)", min_value=1, max_value=2000, value=25,
                                         key="sanity_limit", help="Larger files are cut to their first questions. "
                                         "The checks score every pair dozens of times: a few hundred questions take "
                                         "minutes."))
    seed = int(ss.get("sanity_seed", 0) or 0)
    run = controls[2].button("Run the checks", key="sanity_run", icon=":material/play_arrow:", type="primary",
                             disabled=chosen is None, width="stretch")
    if chosen is None:
        st.info("Upload a ranking file or try the sample, then run the checks.", icon=":material/upload_file:")
        return
    file_name = chosen.name
    key = content_key(chosen.key, side, limit, seed, *state.chosen_models())
    if not run and (ss.get(RESULT) or {}).get("key") != key:
        # Which file the checks will read, before they run (as the Evaluate page says at once what it read); not
        # above their results once they have run (it stayed there, asking to run what had run).
        st.caption(f":material/description: Ready: {components.md(chosen.name)}. Run the checks to score it.")
    if run:
        try:
            lists = chosen.read()
        except DataError as error:
            ss[RESULT] = {"key": key, "error": str(error)}
        else:
            matchers = {n: state.models()[n] for n in state.chosen_models()}
            bar = st.progress(0.0, text="Attention ablation...")

            def progress(fraction: float, what: str) -> None:
                bar.progress(min(max(fraction, 0.0), 1.0), text=what)

            ablation = ablation_map(lists, matchers, seed, max_questions=limit,
                                    progress=lambda f, w: progress(0.2 * f, f"attention ablation: {w}"))
            curves = deletion_curves(lists, matchers, side, seed=seed, max_questions=limit,
                                     progress=lambda f, w: progress(0.2 + 0.6 * f, f"deletion curves: {w}"))
            randomisation = randomisation_on_data(
                lists, matchers, seed, max_questions=limit,
                progress=lambda f, w: progress(0.8 + 0.2 * f, f"model randomisation: {w}"))
            bar.empty()
            ss[RESULT] = {"key": key, "name": file_name, "ablation": ablation, "curves": curves,
                          "randomisation": randomisation}
    result = ss.get(RESULT)
    if result is None or result["key"] != key:
        st.info("Press **Run the checks** to compute them for this file and these settings.",
                icon=":material/play_arrow:")
        return
    if "error" in result:
        st.error(f"This file could not be read: {components.md(result['error'])}", icon=":material/error:")
        return
    curves = result["curves"]
    for note in curves.notes:
        st.caption(f":material/info: {components.md(note)}.")
    if not curves.points:
        st.warning(f"No pair has two or more {side} words the models read, so there is nothing to order.",
                   icon=":material/warning:")
    else:
        st.markdown(f"**{curves.pairs} pairs** from {components.md(result['name'])}, {side} words.")
        # Before the charts: the charts' own legend has the colours only (see charts.curves_chart).
        st.caption("Solid lines: comprehensiveness (higher: the first words carry the score). Dashed lines: "
                   "sufficiency (lower: the first words alone keep it).")
        names = list(dict.fromkeys(str(p["model"]) for p in curves.points))
        for start in range(0, len(names), 3):
            row = names[start:start + 3]
            for column, name in zip(st.columns(3, gap="medium"), row, strict=False):
                with column:
                    components.altair(charts.curves_chart(curves.points, name), key=f"sanity_curves_{name}")
        st.dataframe(pd.DataFrame(curves.aopc), hide_index=True, width="stretch", key="sanity_aopc",
                     height=38 + 35 * len(curves.aopc), column_config={
            "comprehensiveness AOPC": st.column_config.NumberColumn(format="%+.3f", help="Higher is better"),
            "sufficiency AOPC": st.column_config.NumberColumn(format="%+.3f", help="Lower is better")})
    st.markdown("**Attention ablation on the file** (MAP with the learned, uniform and permuted attention)")
    if result["ablation"]:
        st.dataframe(pd.DataFrame(result["ablation"]), hide_index=True, width="stretch", key="sanity_ablation_map",
                     column_config={c: st.column_config.NumberColumn(format="%+.4f" if c.startswith("change")
                                                                     else "%.4f")
                                    for c in ("MAP", "MAP uniform", "change uniform", "MAP permuted",
                                              "change permuted")})
    else:
        st.caption("None of the chosen models has attention.")
    st.markdown("**Model randomisation on the file** (each step re-initialises one more layer, from the top; "
                "each measure is the mean over the questions of the rank correlation with the trained model's "
                "explanation of the question's first candidate; not defined where the model has no such part)")
    randomised = components.without_undefined_columns(
        pd.DataFrame(result["randomisation"]), "Not defined for any of these models, so not shown: {}.")
    if state.presenting():  # the page's type, in a projector's width (the dataframe scrolled sideways at 1280)
        components.small_table(randomised, key="sanity_randomisation_data", formats={"MAP": "%.3f"},
                               placeholder="not defined",
                               signed=[c for c in MEASURES.values() if c in randomised.columns])
        return
    # Signed like the example's correlations (a mean just below 0 read "-0.000"), to 3 decimals on a file.
    st.dataframe(components.signed_columns(randomised, list(MEASURES.values()), 3, missing="not defined"),
                 hide_index=True, width="stretch", key="sanity_randomisation_data", placeholder="not defined",
                 column_config=components.fit_headers(
                     randomised, {"MAP": st.column_config.NumberColumn(format="%.3f")}))


example_tab, dataset_tab = st.tabs([":material/science: This example", ":material/dataset: On a data set"])
with example_tab:
    _example()
with dataset_tab:
    _dataset()
