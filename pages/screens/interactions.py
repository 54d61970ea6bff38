"""Interactions: the positional interaction matrix of one candidate, two models side by side."""

from __future__ import annotations

import numpy as np
import streamlit as st

from matching.explanation import Explanation, PooledCell
from pages.views import charts, common, components

st.title(":material/grid_on: Interactions")
st.caption("Every question position (rows) meets every answer position (columns). The model pools the k "
           "largest cells of each pooled matrix; they are outlined and numbered by pooling rank. Grey rows and "
           "columns are words past the model's maximum length (not seen). Hover a cell for its words and value.")

VIEW_HELP = {
    "combined": "The matrix that was pooled: interaction of the full Bi-LSTM states (for the tensor model, "
                "the average of its slices, for orientation).",
    "forward": "Cosine of the forward-LSTM states only.",
    "backward": "Cosine of the backward-LSTM states only.",
}
DIRECTIONS = ("forward", "backward")


def main_matrices(explanation: Explanation) -> list[str]:
    """The pooled interaction matrices proper (cosine, bilinear or the tensor slices), not the directions."""
    return [name for name in explanation.interaction_matrices if name not in DIRECTIONS]


def views_for(explanation: Explanation) -> list[str]:
    slices = [name for name in main_matrices(explanation) if name.startswith("slice")]
    return ["combined", *slices, *DIRECTIONS]


def matrix_for(explanation: Explanation, view: str) -> tuple[np.ndarray, list[PooledCell], bool, str]:
    """(matrix, cells to outline, label cells with their matrix, caption) for one view."""
    real = [c for c in explanation.pooled_cells if not c.filler]
    main = main_matrices(explanation)
    main_cells = [c for c in real if c.matrix in main]
    if view == "combined":
        if len(main) > 1:
            stacked = np.stack([explanation.interaction_matrices[name] for name in main])
            return stacked.mean(axis=0), main_cells, True, "Average of the tensor slices; labels are slice·rank."
        return explanation.interaction_matrices[main[0]], main_cells, False, f"The pooled {main[0]} matrix."
    if view.startswith("slice"):
        return (explanation.interaction_matrices[view], [c for c in real if c.matrix == view], False,
                f"Tensor {view}: pooled on its own (k cells).")
    if view in explanation.interaction_matrices:  # this model pools the directions too
        return (explanation.interaction_matrices[view], [c for c in real if c.matrix == view], False,
                VIEW_HELP[view] + " This model pools it: outlines are its own k cells.")
    return (explanation.display_matrices[view], main_cells, len(main) > 1,
            VIEW_HELP[view] + " Display only (not pooled); outlines: the cells pooled from the main matrix.")


found = common.explained_candidate("interactions")
if found is not None:
    ranking, pick = found
    names = list(ranking.models)
    show_cells = st.toggle("Outline the pooled cells", value=True, key="interactions_outline")
    attention = common.attending_models(ranking, pick)
    pair = charts.default_pair(names, attention)
    first = ranking.models[names[0]].explanations[pick]
    shown_columns = len(first.seen_answer_tokens) + min(
        len(first.answer_tokens) - len(first.seen_answer_tokens), charts.MAX_TRUNCATED_SHOWN)
    wide = shown_columns > 24
    if wide:
        st.caption(f":material/view_agenda: The answer has {shown_columns} columns to draw, so the two models are "
                   "stacked (full width) instead of side by side.")
    areas = [st.container(), st.container()] if wide else st.columns(2, gap="large")
    for side, column in enumerate(areas):
        with column:
            default = names.index(pair[min(side, len(pair) - 1)])
            name = st.selectbox("Model", names, index=default, key=f"interactions_model_{side}")
            explanation = ranking.models[name].explanations[pick]
            view = st.radio("View", views_for(explanation), horizontal=True, key=f"interactions_view_{side}_{name}",
                            help="combined: the pooled matrix; forward/backward: one LSTM direction; "
                                 "slice n: one matrix of the tensor interaction.")
            matrix, cells, label_slices, caption = matrix_for(explanation, view)
            figure = charts.interaction_heatmap(
                matrix, explanation.question_tokens, explanation.answer_tokens, cells,
                title=f"{name} · {view} · candidate #{pick + 1}", show_cells=show_cells,
                label_slices=label_slices)
            components.plotly(figure, key=f"interactions_heatmap_{side}")
            st.caption(caption)
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
