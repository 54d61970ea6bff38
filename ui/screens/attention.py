"""Attention: what each model that weighs words (an attention gate, a co-attention) weighs, word by word."""

from __future__ import annotations

import streamlit as st

from matching.explain import glossary
from matching.explain.deletion import DeletionEffects, attention_agreement, deletion_effects
from matching.explain.explanation import Explanation
from matching.models.parts import Part
from ui.views import common, components, state

st.title(":material/visibility: Attention")
st.caption("Some models weigh every word: an attention gate (omega) reweights each word vector before the model "
           "reads it; a co-attention weighs each word by how it matches the other text. "
           "Bars show each word's weight; the dashed line is the uniform weight 1/n (a word above it counts "
           "more than average). The same weights shade the original text. Below them: what deleting each word does "
           "to the score (scored from scratch), and the rank correlation between the two. Hover for exact values.")

def _agreement_text(rho: float | None) -> str:
    if rho is None:
        return ("Rank correlation of attention and |deletion effect|: not defined here (fewer than 3 words, or "
                "one of them constant).")
    reading = ("the model's score moves most where it attends most" if rho >= 0.5 else
               "attention and what moves the score only loosely agree" if rho >= 0.2 else
               "what the model attends to is not what moves its score")
    return f"Spearman ρ(attention, |deletion effect|) = {rho:+.2f}: {reading}."


components.glossary(["attention gate", "co-attention", "gate logit", "softmax", "alpha", "uniform weight 1/n",
                     "word vector",
                     "unknown word", "truncated", "Bi-LSTM", *glossary.FAMILY_TERM_NAMES, "score", "rank",
                     "learned match", "keyword term"],
                    key="attention_glossary")

found = common.explained_candidate("attention")
if found is not None:
    ranking, pick = found
    attending = {name: ranking.models[name].explanations[pick] for name in common.attending_models(ranking, pick)}
    plain = [name for name in ranking.models if name not in attending]
    if not attending:
        common.lacking_part_note(Part.WORD_WEIGHTS, "word weights (an attention gate or a co-attention)",
                                 key="attention_lacking")
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
            found = explanation.all_word_weights
            weighing = st.selectbox("Weights", list(found), key=f"{column_key}_weights") if len(found) > 1 else (
                next(iter(found)))
            attended = [side for side, weights in zip(("question", "answer"), found[weighing], strict=True)
                        if weights is not None]
            place = glossary.rank_of(int(result.ranks[pick]), len(ranking.candidates))
            st.caption(f"{components.md(weighing).capitalize()} on the {' and the '.join(attended)} · score "
                       f"{explanation.score:+.3f} · {place}")
            for side in sides:
                weights = found[weighing][0 if side == "question" else 1]
                tokens = explanation.question_tokens if side == "question" else explanation.answer_tokens
                text = ranking.question if side == "question" else ranking.candidates[pick]
                if weights is None:
                    st.caption(f"The {side} is not weighed by this mechanism (every word has weight 1).")
                    continue
                components.shaded_text(text, tokens, weights, label=side.capitalize(),
                                       key=f"{column_key}_{side}_text")
                components.chart("attention_chart", tokens, weights, f"{side}: {weighing}", name,
                                 key=f"{column_key}_{side}_bars")
                if show_deletion:
                    effects = deletions[name]
                    rho = attention_agreement(weights, effects, side)
                    components.chart("deletion_chart", effects.rows(side), "each word deleted", name,
                                     key=f"{column_key}_{side}_deletion")
                    st.caption(_agreement_text(rho))
                if any(t.truncated for t in tokens):
                    unseen = sum(t.truncated for t in tokens)
                    st.caption(f":material/content_cut: {unseen:,} word(s) past the model's maximum length are "
                               "not seen (struck through above).")

        show_deletion = st.toggle("Word deletion beside attention", value=True, key="attention_deletion",
                                  help="Delete each word in turn and score the edited text from scratch.")
        deletions: dict[str, DeletionEffects] = {}
        if show_deletion:
            deletions = {name: deletion_effects(state.models()[name], ranking.question_tokens,
                                                ranking.candidate_tokens, [pick])[pick] for name in attending}
        names = list(attending)
        if state.presenting():
            names = [common.one_model(names, key="attention_present_model", default=names[-1])]
        for start in range(0, len(names), 3):
            row = names[start:start + 3]
            for column, name in zip(st.columns(len(row), gap="medium"), row, strict=True):
                with column:
                    draw(name, attending[name], f"attention_{start}_{name}")
