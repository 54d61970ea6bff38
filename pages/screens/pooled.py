"""Pooled cells: the k cells each model kept, their values, and how much of the score each one made."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from pages.views import charts, common, components

st.title(":material/filter_list: Pooled cells")
st.caption("k-max pooling keeps the k largest cells of each interaction matrix; the MLP turns them into the score. "
           "Each cell's contribution is gradient × value, so score = sum of contributions + bias exactly. "
           "Share = contribution / sum of |contributions| (green raises the score, red lowers it).")

COLUMNS = {
    "matrix": st.column_config.TextColumn("matrix", width="small"),
    "pooling rank": st.column_config.NumberColumn("rank", help="Pooling rank: 1 = the largest cell of its matrix",
                                                  width="small"),
    "question": st.column_config.TextColumn("question", help="Question word (its position)"),
    "answer": st.column_config.TextColumn("answer", help="Answer word (its position)"),
    "value": st.column_config.NumberColumn("value", format="%.3f", width="small"),
    "share %": st.column_config.NumberColumn("share", format="%+.1f%%", width="small",
                                             help="Signed share of the score: contribution / sum of |contributions|"),
}
SHOWN = ["pooling rank", "question", "answer", "value", "share %"]

found = common.explained_candidate("pooled")
if found is not None:
    ranking, pick = found
    names = list(ranking.models)
    attention = common.attending_models(ranking, pick)
    shown = st.multiselect("Models side by side", names, default=charts.default_pair(names, attention),
                           key="pooled_models", help="Up to three per row.")
    explanations = {name: ranking.models[name].explanations[pick] for name in shown}
    for start in range(0, len(shown), 3):
        row = shown[start:start + 3]
        for column, name in zip(st.columns(len(row), gap="medium"), row, strict=True):
            with column:
                explanation = explanations[name]
                rows = charts.cell_rows(explanation)
                total = sum(r["contribution"] for r in rows)
                st.subheader(name, divider="blue")
                bias = explanation.bias_contribution
                st.metric("score", f"{explanation.score:+.4f}",
                          help=f"sum of cell contributions {total:+.4f} + bias {bias:+.4f}")
                st.caption(f"rank {int(ranking.models[name].ranks[pick])} of {len(ranking.candidates)} · "
                           f"cells {total:+.4f} + bias {explanation.bias_contribution:+.4f}")
                tensor = len({r["matrix"] for r in rows}) > 1
                table = pd.DataFrame(rows)
                table["share %"] = table["share"] * 100
                st.dataframe(table, column_config=COLUMNS, hide_index=True, width="stretch",
                             column_order=(["matrix"] if tensor else []) + SHOWN,
                             key=f"pooled_table_{name}", height=min(38 + 35 * len(rows), 420))
                components.altair(charts.share_chart(rows, f"{name}: share of the score per cell"),
                                  key=f"pooled_chart_{name}")
    if len(explanations) > 1:
        st.subheader("Cells pooled by more than one model", divider="gray")
        overlap = charts.shared_cells(explanations)
        if overlap:
            st.caption("Same (question position, answer position) pair, with each model's pooling rank "
                       "(blank: that model did not pool it).")
            st.dataframe(pd.DataFrame(overlap), hide_index=True, width="stretch", key="pooled_overlap")
        else:
            st.caption("No cell was pooled by more than one of these models.")
    if explanations:
        export = {"question": ranking.question, "candidate": ranking.candidates[pick],
                  "candidate_number": pick + 1, "models": {n: e.to_dict() for n, e in explanations.items()}}
        components.download("Explanation (JSON)", json.dumps(export, indent=1), "matchlens-explanation.json",
                            "application/json", key="pooled_export", icon=":material/data_object:")
