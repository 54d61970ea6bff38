"""Interactions: the positional interaction matrix of one candidate, two models side by side."""

from __future__ import annotations

import streamlit as st

from matching.explain import charts, glossary
from matching.explain.matrix_views import matrix_view, view_names
from matching.models.parts import Part
from ui.views import common, components, state

ss = st.session_state

st.title(":material/grid_on: Interactions")
st.caption("Every question position (rows) meets every answer position (columns): some models compare Bi-LSTM "
           "positions, others the words themselves or their projections. Where a model pools cells, they are "
           "outlined (k-max: numbered by pooling rank; dynamic pooling: by the window whose maximum they are). Grey "
           "rows and columns are words past the model's maximum length (not seen). Hover a cell for its words and "
           "value.")

components.glossary(["interaction matrix", "positional vector", "cosine", "tensor interaction",
                     "forward and backward matrices", "k-max pooling", "filler", "truncated", "Bi-LSTM", "rank",
                     *glossary.FAMILY_TERM_NAMES, "dynamic pooling", "contribution", "gradient x value", "score",
                     "affinity matrix", "alignment", "learned match", "keyword term", "list match"],
                    key="interactions_glossary")

found = common.explained_with("interactions", Part.MATRICES, "interaction matrices")
if found is not None:
    ranking, pick, names = found
    show_cells = st.toggle("Outline the pooled cells", value=True, key="interactions_outline",
                           help=glossary.help_for("k-max pooling"))
    attention = common.attending_models(ranking, pick)
    pair = charts.side_models(names, attention, [ss.get(state.matrix_keys(side)) for side in (0, 1)])
    first = ranking.models[names[0]].explanations[pick]
    shown_columns = len(first.seen_answer_tokens) + min(
        len(first.answer_tokens) - len(first.seen_answer_tokens), charts.MAX_TRUNCATED_SHOWN)
    wide = shown_columns > charts.MAX_SIDE_BY_SIDE_COLUMNS
    if wide and not state.presenting():
        st.caption(f":material/view_agenda: The answer has {shown_columns} columns to draw, so the two models are "
                   "stacked (full width) instead of side by side.")
    if state.presenting():  # one view at a time
        areas = [st.container()]
    else:
        areas = [st.container(), st.container()] if wide else st.columns(2, gap="large")
    corrected = False  # a link's view this candidate cannot show: the link is rewritten with the view shown
    for side, column in enumerate(areas):
        with column:
            # A link's choice where this ranking can show it (`link.read_link_once`), else the page's default.
            if ss.get(state.matrix_keys(side)) not in names:
                ss[state.matrix_keys(side)] = pair[min(side, len(pair) - 1)]
            name = st.selectbox("Model", names, key=state.matrix_keys(side))
            explanation = ranking.models[name].explanations[pick]
            asked = ss.get(state.matrix_keys(side, name))
            if asked not in view_names(explanation):
                ss.pop(state.matrix_keys(side, name), None)
                if (side, name, asked) in ss.get(state.LINKED_VIEWS, set()):  # said once, where the link asked it
                    ss[state.LINKED_VIEWS].discard((side, name, asked))
                    corrected = True
                    st.warning(f"Part of this link was ignored: {name} has no matrix view "
                               f"{components.md(repr(asked))} for this candidate (its views: "
                               f"{', '.join(view_names(explanation))}).", icon=":material/link:")
            view = st.radio("View", view_names(explanation), horizontal=True, key=state.matrix_keys(side, name),
                            help="The matrix the model reads (combined: the pooled matrix or the average of the "
                                 "tensor slices; slice n: one tensor matrix); forward/backward: one LSTM "
                                 "direction; exact match: where the two texts share a word; list match: the same, each "
                                 "question word weighted by its IDF within this list; contributions: "
                                 "each cell's gradient x value.")
            shown = matrix_view(explanation, view)
            figure = charts.interaction_heatmap(
                shown.matrix, explanation.question_tokens, explanation.answer_tokens, shown.outlines,
                title=f"{name} · {view} · candidate #{pick + 1}", show_cells=show_cells,
                zero_centered=shown.zero_centered)
            components.plotly(figure, key=f"interactions_heatmap_{side}")
            st.caption(shown.caption)
            fillers = sum(c.filler for c in explanation.pooled_cells)
            if fillers:
                st.caption(f":material/info: {fillers} pooled slot(s) hold the filler value: the matrix has "
                           "fewer real cells than k.")
            hidden_q = len(explanation.question_tokens) - len(explanation.seen_question_tokens)
            hidden_a = len(explanation.answer_tokens) - len(explanation.seen_answer_tokens)
            if hidden_q > charts.MAX_TRUNCATED_SHOWN or hidden_a > charts.MAX_TRUNCATED_SHOWN:
                st.caption(f":material/content_cut: Not seen by the model: {hidden_q:,} question and "
                           f"{hidden_a:,} answer word(s); the first {charts.MAX_TRUNCATED_SHOWN} of each are "
                           "drawn in grey.")
    if corrected:  # the link was written before the page drew, with the view it could not show: now the one shown
        state.write_link()
