"""Word features: the named features some models attach to every word before reading the sentence."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from matching.explain import charts, glossary
from matching.explain import walkthrough as walk
from matching.models.parts import Part
from ui.views import common, components, state

st.title(":material/view_column: Word features")
st.caption("Some models attach a few named numbers to every word before they read the sentence. Casted attention "
           "runs several attention mechanisms (co-attention with the other text, pooled by max, mean or alignment, "
           "and attention within the word's own sentence), compares the word with what each one attends to "
           "(concatenation, product, difference) and compresses each comparison to one number. Each strip is a "
           "word, each cell one feature (blue below zero, red above, one colour scale for both texts); question and "
           "answer side by side. Hover for exact values.")

components.glossary(["cast", "attention gate", "co-attention", "alignment", "intra-attention", "compression",
                     "word vector", "unknown word", "truncated", *glossary.FAMILY_TERM_NAMES, "score", "rank",
                     "learned match", "keyword term"],
                    key="features_glossary")

found = common.explained_with("features", Part.CHANNELS, "word features (casted attention)")
if found is not None:
    ranking, pick, names = found
    name = common.one_model(names, key="features_model") if len(names) > 1 or state.presenting() else names[0]
    explanation = ranking.models[name].explanations[pick]
    channels = explanation.channels
    assert channels is not None
    result = ranking.models[name]
    st.subheader(name, divider="blue")
    place = glossary.rank_of(int(result.ranks[pick]), len(ranking.candidates))
    st.caption(f"Score {explanation.score:+.3f} · {place} · {len(channels.names)} features per word")
    groups = list(dict.fromkeys(label.split(",")[0] for label in channels.names))
    picked = st.segmented_control("Features", groups, selection_mode="multi", default=groups,
                                  key="features_groups", help="Which attention mechanisms' features to show.")
    columns = [c for c, label in enumerate(channels.names) if label.split(",")[0] in (picked or groups)]
    shown = [channels.names[c] for c in columns]
    areas = [st.container()] if state.presenting() else st.columns(2, gap="large")
    limit = charts.shared_limit(channels.question[:, columns], channels.answer[:, columns])
    for area, side, values in zip(areas * 2 if len(areas) == 1 else areas, ("question", "answer"),
                                  (channels.question, channels.answer), strict=True):
        with area:
            components.altair(charts.vector_strips(values[:, columns], walk.vector_labels(explanation, side),
                                                   f"{side}: {len(shown)} features per word", columns=shown,
                                                   limit=limit),
                              key=f"features_{side}")
    spread = float(np.ptp(np.concatenate([channels.question.ravel(), channels.answer.ravel()])))
    if spread < 1e-3:
        st.warning("Every feature has nearly the same value on every word: they say little about this pair.",
                   icon=":material/help:")
    with st.expander("The numbers", icon=":material/table:"):
        for side, values in (("question", channels.question), ("answer", channels.answer)):
            frame = pd.DataFrame(values[:, columns], columns=shown, index=walk.vector_labels(explanation, side))
            st.dataframe(frame, width="stretch", key=f"features_{side}_table",
                         column_config={c: st.column_config.NumberColumn(c, format="%+.3f") for c in shown})
