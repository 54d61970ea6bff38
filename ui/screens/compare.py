"""Compare: why does a model put candidate A above candidate B? The gap, split exactly, per model."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from matching.explain import charts, glossary
from matching.explain.attribution import STEPS
from matching.explain.contrast import (
    CompareView,
    ModelContrast,
    compare_view,
    default_pair,
    describe,
    pair_labels,
    paired_views,
    shared_view_names,
    summary_rows,
    valid_pair,
)
from matching.explain.deletion import DeletionEffects
from matching.explain.explanation import Explanation
from matching.explain.flips import RankFlip, flip_pair
from matching.explain.ranking import Ranking
from matching.explain.trust import candidate_warning
from ui.views import common, components, state

ss = st.session_state
FLIPS = "ml_compare_flips"

st.title(":material/compare_arrows: Compare two candidates")
st.caption("Why does a model put one candidate above another? Where a model's score is exactly the sum of its "
           "matrix cells' contributions (gradient × value) plus a bias term, the gap score(A) - score(B) splits "
           "exactly into A's cells, minus B's cells, plus the difference of the bias terms. Where it is not (e.g. "
           "an LSTM over casted attention), the gap is split over words by integrated gradients: approximate, "
           "with the completeness residual printed. A keyword term's features are always split exactly.")

components.glossary(["score", "rank", "contribution", "gradient x value", "bias", "interaction matrix", "cosine",
                     "forward and backward matrices", "tensor interaction", "k-max pooling",
                     *glossary.FAMILY_TERM_NAMES, "dynamic pooling", "alpha", "attention gate", "unknown word",
                     "Bi-LSTM", "cast", "integrated gradients", "completeness residual", "keyword term", "baseline",
                     "learned match"],
                    key="compare_glossary")

GAP_COLUMNS = {
    "candidate": st.column_config.TextColumn("cell of", width="small"),
    "matrix": st.column_config.TextColumn("matrix", width="medium"),  # "keywords: IDF-weighted overlap"
    "pooling rank": st.column_config.NumberColumn("rank", width="small", format="%d",  # a float column (None rows)
                                                  help="Pooling rank in its matrix"),
    "question word": st.column_config.TextColumn("question word"),
    "answer word": st.column_config.TextColumn("answer word"),
    "value": st.column_config.NumberColumn("value", format="%.3f", width="small"),
    # Signed columns are drawn by components.signed_columns (no -0.0000), so they take no format here.
    "contribution": st.column_config.NumberColumn("contribution", help="To its own candidate's score"),
    "effect on gap": st.column_config.NumberColumn("effect on gap",
                                                   help="A's cells add their contribution, B's subtract theirs"),
}
SIGNED_GAP_COLUMNS = ("contribution", "effect on gap")
SIGNED_SUMMARY_COLUMNS = ("gap", "cells A - cells B", "keywords A - keywords B", "bias difference", "residual")
SIGNED_EFFECT_COLUMNS = ("effect on A", "effect on B", "gap without it")


def _pair_changed(side: int) -> None:
    pair = list(ss.get(state.PAIR) or ss["compare_shown_pair"])
    pair[side] = int(ss[f"compare_{'ab'[side]}"])
    ss[state.PAIR] = pair


def _pickers(ranking: Ranking) -> tuple[int, int]:
    count = len(ranking.candidates)
    # The pair kept in the session (or the link); the same candidate twice is allowed here, and said so below.
    pair = valid_pair(ss.get(state.PAIR), count, distinct=False) or default_pair(ranking, state.pick_index(count))
    ss["compare_shown_pair"] = list(pair)
    ranks = {name: result.ranks for name, result in ranking.models.items()}
    options = components.candidate_options(ranking.candidates, ranks)
    columns = st.columns(2, gap="medium")
    for side, column in enumerate(columns):
        ss[f"compare_{'ab'[side]}"] = pair[side]
        column.selectbox(f"Candidate {'AB'[side]}", range(count), format_func=lambda i: options[i],
                         key=f"compare_{'ab'[side]}", on_change=_pair_changed, args=(side,),
                         help="Ranks in brackets: " + ", ".join(ranks) if ranks else None)
    return int(ss["compare_a"]), int(ss["compare_b"])


def _summary(view: CompareView, label_a: str, label_b: str) -> None:
    rows = summary_rows(view.contrasts, label_a, label_b)
    config = {
        "model": st.column_config.TextColumn("model", pinned=True),  # in view while a narrow window scrolls
        "gap": st.column_config.NumberColumn("gap A - B"),
        "cells A - cells B": st.column_config.NumberColumn(
            "cells A - cells B", help="Matrix cells (exact split) or words (integrated gradients)."),
        "keywords A - keywords B": st.column_config.NumberColumn(
            "keywords A - keywords B", help="The keyword term's difference (0 without one)."),
        "bias difference": st.column_config.NumberColumn(
            "bias difference", help="gap = cells + keywords + bias difference (+ residual)"),
        "residual": st.column_config.NumberColumn(
            "residual", help="What integrated gradients leave unexplained (0 for an exact split).")}
    if state.presenting():  # the page's projector type, not the dataframe's own small one, in a projector's width:
        # the gap's sign says which is above, and the split's first word says how
        frame = pd.DataFrame(rows).drop(columns="above")
        frame["split"] = [str(split).split(",")[0] for split in frame["split"]]
        frame["model"] = [glossary.short_name(str(name)) for name in frame["model"]]
        components.small_table(frame, "compare_summary", signed=SIGNED_SUMMARY_COLUMNS)
        components.model_names_legend(list(view.contrasts), key="compare_short_names")
        return
    st.dataframe(components.signed_columns(pd.DataFrame(rows), SIGNED_SUMMARY_COLUMNS), hide_index=True,
                 width="stretch", key="compare_summary", column_config=config)


def _question_effects(effects: dict[int, DeletionEffects], a: int, b: int) -> pd.DataFrame:
    ea, eb = effects[a], effects[b]
    rows = []
    for wa, wb in zip(ea.question, eb.question, strict=True):
        gap_after = None if wa.score_after is None or wb.score_after is None else wa.score_after - wb.score_after
        rows.append({"position": wa.position + 1, "word": wa.word, "effect on A": wa.effect(ea.score),
                     "effect on B": wb.effect(eb.score), "gap without it": gap_after})
    return pd.DataFrame(rows)


def _flip(name: str, ranking: Ranking, a: int, b: int, digest: str) -> None:
    key = f"{digest}:{name}:{min(a, b)}:{max(a, b)}"
    flips: dict[str, RankFlip] = ss.setdefault(FLIPS, {})
    if st.button("Find the smallest rank flip", key=f"compare_flip_{name}", icon=":material/swap_vert:",
                 help="Greedy: delete up to 5 words from the lower candidate or the question, one at a time, "
                      "until the lower one scores higher (stops after 2 s)."):
        flips[key] = flip_pair(state.models()[name], ranking, a, b)
    flip = flips.get(key)
    if flip is None:
        return
    text = components.md(flip.describe())
    if flip.found and flip.deletions:
        st.success(text, icon=":material/swap_vert:")
        steps = " → ".join(f"{g:+.3f}" for g in flip.gaps)
        st.caption(f"Gap score(#{flip.upper + 1}) - score(#{flip.lower + 1}) after each deletion: {steps}. "
                   + (f"Scoring the edited texts from scratch gives {flip.verified_gap:+.3f}."
                      if flip.verified_gap is not None else ""))
        if not flip.verified:
            st.warning("Re-tokenising the edited text changes it slightly, and from scratch the flip does not "
                       "hold; applying it shows the real ranks.", icon=":material/warning:")
        st.button("Apply as a counterfactual edit", key=f"compare_apply_{name}", icon=":material/edit:",
                  on_click=common.apply_edit, args=(flip.question, flip.lower, flip.lower_text),
                  help="Replaces the question and the lower candidate with the edited texts; the change "
                       "is listed at the top of the page.")
    else:
        st.info(text, icon=":material/info:")


def _details(name: str, c: ModelContrast, view: CompareView, ranking: Ranking, label_a: str, label_b: str,
             digest: str) -> None:
    a, b = view.a, view.b
    ea, eb = ranking.models[name].explanations[a], ranking.models[name].explanations[b]
    st.markdown(components.md(describe(c, label_a, label_b)))
    # The keyword term gets its own tile where the model has one, so the tiles add up as shown.
    has_keywords = bool(ea.keyword_terms or eb.keyword_terms)
    # "keywords A - B", not the table's "keywords A - keywords B": a tile is a fifth of the width, and at 1280 px x 1.5
    # on a projector the longer label was cut to "keywords A - keywo...".
    keywords = [("keywords A - B", f"{c.keyword_difference:+.4f}",
                 f"The keyword term ({', '.join(ea.keyword_terms or eb.keyword_terms)}) of A minus B's, exact; the "
                 "rest of the gap is the learned match.")] if has_keywords else []
    if c.exact:
        tiles = [("gap A - B", f"{c.gap:+.4f}", None), ("cells A - cells B", f"{c.cells_a - c.cells_b:+.4f}", None),
                 *keywords, ("bias difference", f"{c.bias_difference:+.4f}", None),
                 ("adds up to", f"{c.decomposed_gap:+.4f}", "cells A - cells B + keywords A - B + bias "
                  f"difference; differs from the gap by {abs(c.decomposed_gap - c.gap):.1e} (float rounding)")]
    else:
        st.caption(":material/info: Approximate split: this model's score does not split exactly over "
                   "anything it computes, so its words share the gap by integrated gradients; the completeness "
                   "residual is what that approximation leaves unexplained.")
        tiles = [("gap A - B", f"{c.gap:+.4f}", None), ("words A - words B", f"{c.cells_a - c.cells_b:+.4f}", None),
                 *keywords, ("baseline difference", f"{c.bias_difference:+.4f}",
                             "The two scores with every word vector 0, A minus B."),
                 ("completeness residual", f"{c.residual_difference:+.4f}",
                  "gap - (words A - words B) - keywords - baseline difference: what integrated "
                  f"gradients ({c.method}, {STEPS} steps) leave unexplained.")]
    for column, (label, value, help_text) in zip(st.columns(len(tiles)), tiles, strict=True):
        column.metric(label, value, help=help_text)
    views = shared_view_names(ea, eb) if ea.interaction_matrices else []
    if views:
        _matrices(name, views, ea, eb, label_a, label_b, (a, b))
    _attention(name, ea, eb, label_a, label_b, (a, b))
    last = "the bias difference" if c.exact else "the baseline difference and the completeness residual"
    st.markdown(f"**Every term of the gap**, largest first (the last rows are {last})")
    if state.presenting():  # the projector's type (a dataframe keeps its own small one): the 8 largest, the rest
        # summed, in a projector's width (the effect on the gap says what a B term's contribution says, with its sign)
        terms = pd.DataFrame(c.rows(limit=8)).drop(columns=["pooling rank", "contribution"])
        components.small_table(terms, f"compare_terms_{name}", signed=("effect on gap",), formats={"value": "%.4f"},
                               placeholder="")
    else:
        st.dataframe(components.signed_columns(pd.DataFrame(c.rows()), SIGNED_GAP_COLUMNS), hide_index=True,
                     width="stretch", column_config=GAP_COLUMNS, key=f"compare_terms_{name}", height=320,
                     placeholder="")
    effects = view.deletions.get(name)
    if effects:
        st.markdown("**Word deletion**: the score without each word, scored from scratch")
        st.caption("Both charts share one scale: equal bars are equal effects.")
        columns = st.columns(2, gap="medium")
        domain = charts.effect_domain(effects[a].rows("answer"), effects[b].rows("answer"))
        for column, label, index in ((columns[0], label_a, a), (columns[1], label_b, b)):
            with column:
                components.altair(charts.deletion_chart(effects[index].rows("answer"), f"{label}: its words", name,
                                                        domain), key=f"compare_deletion_{name}_{index}")
        if state.presenting():
            components.small_table(_question_effects(effects, a, b), f"compare_question_deletion_{name}",
                                   signed=SIGNED_EFFECT_COLUMNS, placeholder="")
        else:
            st.dataframe(components.signed_columns(_question_effects(effects, a, b), SIGNED_EFFECT_COLUMNS),
                         hide_index=True, width="stretch", key=f"compare_question_deletion_{name}", column_config={
                             "gap without it": st.column_config.NumberColumn(
                                 help="score(A) - score(B) with this question word deleted")})
    st.markdown("**Smallest rank flip**")
    _flip(name, ranking, a, b, digest)


def _matrices(name: str, views: list[str], ea: Explanation, eb: Explanation, label_a: str, label_b: str,
              pair: tuple[int, int]) -> None:
    """One matrix view of A and of B on one colour scale."""
    shown_view = views[0]
    if len(views) > 1:
        shown_view = st.radio("Matrix", views, horizontal=True, key=f"compare_matrix_{name}",
                              help="The matrices this model reads (and its cell contributions); both candidates "
                                   "on one colour scale.")
    view_a, view_b, limit = paired_views(ea, eb, shown_view)
    columns = st.columns(2, gap="medium")
    for column, explanation, shown, label, index in ((columns[0], ea, view_a, label_a, pair[0]),
                                                     (columns[1], eb, view_b, label_b, pair[1])):
        with column:
            components.plotly(charts.interaction_heatmap(
                shown.matrix, explanation.question_tokens, explanation.answer_tokens, shown.outlines,
                title=f"{label} · {name} · {shown_view}", zero_centered=shown.zero_centered, limit=limit),
                key=f"compare_heatmap_{name}_{index}")
    st.caption(components.md(view_a.caption) + " One colour scale for A and B.")


def _attention(name: str, ea: Explanation, eb: Explanation, label_a: str, label_b: str,
               pair: tuple[int, int]) -> None:
    """The attention gate's weights: the question's (one for A and B), each answer's."""
    if ea.question_attention is not None:
        components.altair(charts.attention_chart(ea.question_tokens, ea.question_attention,
                                                 "question attention", f"{name}; the same for A and B"),
                          key=f"compare_question_attention_{name}")
    if ea.answer_attention is not None and eb.answer_attention is not None:
        columns = st.columns(2, gap="medium")
        for column, explanation, label, index in ((columns[0], ea, label_a, pair[0]),
                                                  (columns[1], eb, label_b, pair[1])):
            with column:
                components.altair(charts.attention_chart(explanation.answer_tokens, explanation.answer_attention,
                                                         f"{label}: answer attention", name),
                                  key=f"compare_answer_attention_{name}_{index}")


found = common.ranking_or_note()
if found is not None:
    ranking, _ = found
    common.changes(ranking, key="compare_changes")
    if len(ranking.candidates) < 2:
        st.info("Compare needs at least two candidates: add another line on the Rank page.", icon=":material/info:")
    elif not ranking.models:
        st.info("No model chosen: choose models on the Rank page.", icon=":material/info:")
    else:
        a, b = _pickers(ranking)
        label_a, label_b = pair_labels(ranking, a, b)
        note = candidate_warning(ranking, [a, b])
        if note:
            st.warning(note, icon=":material/help:")
        if a == b:
            st.warning("A and B are the same candidate: pick two different ones.", icon=":material/warning:")
        else:
            if ranking.candidates[a] == ranking.candidates[b]:
                st.info("A and B have the same text, so every model gives them the same score: the gap is 0.",
                        icon=":material/info:")
            start = time.perf_counter()
            view = compare_view(ranking, state.models(), a, b)
            seconds = time.perf_counter() - start
            st.subheader("Across models", divider="gray")
            st.markdown(components.md(view.agreement.sentence(label_a, label_b)))
            _summary(view, label_a, label_b)
            for c in view.contrasts.values():
                st.caption(components.md(describe(c, label_a, label_b)))
            st.caption(f":material/timer: Contrasts and word deletions for {len(view.contrasts)} model(s) in "
                       f"{seconds * 1000:.0f} ms.")
            st.subheader("One model in detail", divider="gray")
            names = list(view.contrasts)
            if ss.get("compare_model") not in names:
                ss.pop("compare_model", None)
            chosen = st.segmented_control("Model", names, default=names[0], key="compare_model") or names[0]
            _details(chosen, view.contrasts[chosen], view, ranking, label_a, label_b, state.current_request().digest)
