"""Attention: what each model with an attention gate (aMV-LSTM, MatchPyramid.omega) weighs, word by word."""

from __future__ import annotations

import streamlit as st

from matching.explanation import Explanation
from pages.views import common, components, state

st.title(":material/visibility: Attention")
st.caption("aMV-LSTM and MatchPyramid.omega reweight every word vector by an attention coefficient before the "
           "model reads it (the Bi-LSTM, or the word matching matrix). "
           "Bars show each word's weight; the dashed line is the uniform weight 1/n (a word above it counts "
           "more than average). The same weights shade the original text. Hover for exact values.")

components.glossary(["attention gate", "gate logit", "softmax", "alpha", "uniform weight 1/n", "word vector",
                     "unknown word", "truncated", "Bi-LSTM", "MV-LSTM", "MatchPyramid", "score", "rank"],
                    key="attention_glossary")

found = common.explained_candidate("attention")
if found is not None:
    ranking, pick = found
    attending = {name: ranking.models[name].explanations[pick] for name in common.attending_models(ranking, pick)}
    plain = [name for name in ranking.models if name not in attending]
    if not attending:
        st.info("None of the chosen models has attention. Choose a model with an attention gate (aMV-LSTM: "
                "amvlstm-q, amvlstm-a, amvlstm-qa; MatchPyramid.omega: matchpyramid-q) on the Rank page.",
                icon=":material/visibility_off:")
    else:
        if plain:
            st.caption(f"{', '.join(plain)}: no attention (every word is read at full weight).")
        sides = st.segmented_control("Show", ["question", "answer"], selection_mode="multi",
                                     default=["question", "answer"], key="attention_sides",
                                     help="Which texts to show; each model shows only the side(s) it attends.")
        sides = sides or ["question", "answer"]

        def draw(name: str, explanation: Explanation, column_key: str) -> None:
            result = ranking.models[name]
            st.subheader(name, divider="blue")
            attended = [side for side, weights in (("question", explanation.question_attention),
                                                    ("answer", explanation.answer_attention)) if weights is not None]
            st.caption(f"Attends to the {' and the '.join(attended)} · score {explanation.score:+.3f} · "
                       f"rank {int(result.ranks[pick])} of {len(ranking.candidates)}")
            for side in sides:
                weights = explanation.question_attention if side == "question" else explanation.answer_attention
                tokens = explanation.question_tokens if side == "question" else explanation.answer_tokens
                text = ranking.question if side == "question" else ranking.candidates[pick]
                if weights is None:
                    st.caption(f"The {side} is not attended by this variant (every word has weight 1).")
                    continue
                components.shaded_text(text, tokens, weights, label=side.capitalize(),
                                       key=f"{column_key}_{side}_text")
                components.chart("attention_chart", tokens, weights, f"{side} attention", name,
                                 key=f"{column_key}_{side}_bars")
                if any(t.truncated for t in tokens):
                    unseen = sum(t.truncated for t in tokens)
                    st.caption(f":material/content_cut: {unseen:,} word(s) past the model's maximum length are "
                               "not seen (struck through above).")

        names = list(attending)
        if state.presenting():
            names = [common.one_model(names, key="attention_present_model", default=names[-1])]
        for start in range(0, len(names), 3):
            row = names[start:start + 3]
            for column, name in zip(st.columns(len(row), gap="medium"), row, strict=True):
                with column:
                    draw(name, attending[name], f"attention_{start}_{name}")
