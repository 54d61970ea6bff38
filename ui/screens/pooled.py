"""Pooled cells: the k cells each model kept, their values, and how much of the score each one made."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from matching.evaluation.tables import cell_rows, pooling_text, shared_cells, strongest, zero_cells_text
from matching.explain import charts, glossary
from matching.models.parts import Part
from ui.views import common, components, state

st.title(":material/filter_list: Pooled cells")
st.caption("Pooling keeps a few values of each matrix (k-max pooling: the k largest cells of each interaction "
           "matrix; dynamic pooling: the maximum of each convolution filter in each window of a fixed grid); the MLP "
           "turns "
           "them into the score. Each pooled value's contribution is gradient × value, so the learned match = sum of "
           "contributions + bias exactly (a keyword model adds its keyword term to that: said beside each score). "
           "Share = contribution / sum of the cells' |contributions| (green raises the score, red lowers it).")

components.glossary(["k-max pooling", "pooled cells", "interaction matrix", "MLP", "score", "contribution",
                     "gradient x value", "bias", "filler", "tensor interaction", "rank", *glossary.FAMILY_TERM_NAMES,
                     "convolution", "dynamic pooling", "cosine", "keyword term", "learned match"],
                    key="pooled_glossary")

COLUMNS = {
    # 106 px: "exact match #10" whole, and share and value still in sight with two models side by side at 1280 pixels.
    "cell": st.column_config.TextColumn("cell", width=106,
                                        help="The matrix (or convolution filter) and the pooling rank: cosine #1 is "
                                             "the largest cell of the cosine matrix. "
                                             + glossary.help_for("k-max pooling")),
    "window": st.column_config.TextColumn("window", help="The words the dynamic pooling window covers"),
    "pooling rank": st.column_config.NumberColumn("rank", help="Pooling rank: 1 = the largest cell of its matrix. "
                                                  + glossary.help_for("k-max pooling"),
                                                  width=48),  # at most two digits: room for the columns after it
    "question": st.column_config.TextColumn("question", help="Question word (its position)"),
    "answer": st.column_config.TextColumn("answer", help="Answer word (its position)"),
    # Share and value are a few characters: narrow, so that two models side by side show every column at 1280 pixels.
    "value": st.column_config.NumberColumn("value", format="%.3f", width=56),
    "share %": st.column_config.NumberColumn("share", format="%+.1f%%", width=56,
                                             help="Signed share of the cells' part of the score: contribution / "
                                                  "sum of the cells' |contributions|"),
}
SHOWN = ["question", "answer", "share %", "value"]  # the share first: narrow columns scroll
POOLED_ROWS_SHOWN = 11  # rows a table shows before it scrolls (the chart below it has them all)
PROJECTED_ROWS = 8  # rows a projector's table shows, in its large type, on one screen

def _cell_table(rows: list[dict]) -> pd.DataFrame:  # type: ignore[type-arg]
    """`cell_rows` as a table, each share also in percent (the column the tables show)."""
    table = pd.DataFrame(rows)
    table["share %"] = table["share"] * 100
    return table


found = common.explained_with("pooled", Part.POOLED_CELLS, "pooled cells")
if found is not None:
    ranking, pick, names = found
    attention = common.attending_models(ranking, pick)
    if state.presenting():  # one view at a time
        shown = [common.one_model(names, key="pooled_present_model")]
    else:
        shown = st.multiselect("Models side by side", names, default=charts.default_pair(names, attention),
                               key="pooled_models", help="Up to three per row.")
    explanations = {name: ranking.models[name].explanations[pick] for name in shown}
    for start in range(0, len(shown), 3):
        row = shown[start:start + 3]
        for column, name in zip(st.columns(len(row), gap="small"), row, strict=True):
            with column:
                explanation = explanations[name]
                every_row = cell_rows(explanation)
                total = sum(r["contribution"] for r in every_row)
                rows = strongest(every_row)
                st.subheader(name, divider="blue")
                st.caption(pooling_text(explanation))
                zeros = zero_cells_text(explanation)
                bias = explanation.bias_contribution
                keywords = (f" + keywords {explanation.keyword_score:+.4f}" if explanation.keyword_terms else "")
                st.metric("score", f"{explanation.score:+.4f}",
                          help=f"sum of cell contributions {total:+.4f}{keywords} + bias {bias:+.4f}\n\n"
                               + glossary.help_for("contribution", "gradient x value", "bias"))
                st.caption(f"{glossary.rank_of(int(ranking.models[name].ranks[pick]), len(ranking.candidates))} · "
                           f"cells {total:+.4f}{keywords} + bias {explanation.bias_contribution:+.4f}")
                if zeros:
                    st.caption(f":material/info: {zeros}")
                tensor = len({r["matrix"] for r in rows}) > 1
                windows = rows[0]["window"] is not None
                # Several matrices: one 'cell' column names the matrix and the rank ('cosine #1').
                order = (["cell"] if tensor else ["pooling rank"]) + SHOWN + (["window"] if windows else [])
                if state.presenting():  # the page's projector type, the largest |contribution|, one screen
                    if len(every_row) > PROJECTED_ROWS:
                        st.caption(f"The {PROJECTED_ROWS} of {len(every_row)} pooled values with the largest "
                                   "|contribution|; the chart below has more.")
                    components.small_table(_cell_table(strongest(every_row, PROJECTED_ROWS))[order],
                                           key=f"pooled_table_{name}",
                                           formats={"share %": "%+.1f", "value": "%.4f"})
                else:
                    if len(rows) < len(every_row):
                        st.caption(f"{len(every_row)} pooled values; the {len(rows)} with the largest |contribution| "
                                   "are listed (the sums above include them all; the table scrolls).")
                    elif len(rows) > POOLED_ROWS_SHOWN:
                        st.caption(f"{len(rows)} pooled values: scroll the table for every row.")
                    st.dataframe(_cell_table(rows), column_config=COLUMNS, hide_index=True, width="stretch",
                                 column_order=order,
                                 key=f"pooled_table_{name}", height=38 + 35 * min(len(rows), POOLED_ROWS_SHOWN))
                components.chart("share_chart", rows, "share of the score per cell", name,
                                 key=f"pooled_chart_{name}")
    if len(explanations) > 1:
        st.subheader("Cells pooled by more than one model", divider="gray")
        overlap = shared_cells(explanations)
        if overlap:
            st.caption("Same (question position, answer position) pair. Each model's column names the matrix "
                       "and the pooling rank it pooled the cell with ('cosine #2'; for dynamic pooling the filter "
                       "and the pooling window); empty: that model did not pool it.")
            st.dataframe(pd.DataFrame(overlap), hide_index=True, width="stretch", key="pooled_overlap")
        else:
            st.caption("No cell was pooled by more than one of these models.")
    if explanations and not state.presenting():
        shown_models = list(explanations)
        components.download("Explanation (JSON)",  # built on click
                            lambda: json.dumps(ranking.explanation_export(pick, shown_models), indent=1),
                            "matchlens-explanation.json", "application/json", key="pooled_export",
                            icon=":material/data_object:")
