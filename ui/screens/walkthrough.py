"""Walkthrough: how one model built the score of one candidate, one step per screen, on your own input."""

from __future__ import annotations

import streamlit as st

from matching.explain import glossary
from matching.explain import walkthrough as walk
from matching.models.parts import Step, View
from ui.keys import WALK_DEFAULTED
from ui.views import common, components, state, steps

ss = st.session_state

st.title(":material/footprint: Walkthrough")
if not state.presenting():  # on a projector the first screen is kept for the step itself
    st.caption("From your words to the score, one step at a time, with the numbers of the very pass that produced "
               "the score. Next / Back (or the → and ← keys) move between steps; the step is kept in the link.")
GLOSSARY_TERMS = ["word vector", "unknown word", "truncated", "attention gate", "gate logit", "softmax", "alpha",
                     "Bi-LSTM", "LSTM state", "positional vector", "cosine", "interaction matrix", "k-max pooling",
                     "filler", "MLP", "hidden unit", "contribution", "gradient x value", "bias", "waterfall",
                     "score", "rank", *glossary.FAMILY_TERM_NAMES, "convolution", "dynamic pooling", "keyword term",
                     "baseline", "learned match", "co-attention", "affinity matrix", "alignment", "intra-attention",
                     "cast", "compression", "highway layer", "MeanMax"]


def _go(step: int) -> None:
    ss[state.STEP] = step  # clamped to the model's steps when drawn


SHOWN_VIEW, WANTED_VIEW = "ml_walk_shown_view", "ml_walk_wanted_view"
"""The kind of step drawn last (pooling, the gate, the rank...), and the one another model is to open at."""


def _model_changed() -> None:
    ss[state.WALK_MODEL] = ss["walkthrough_model"]
    ss[WALK_DEFAULTED] = False  # chosen: it goes in the link, and stays when the input changes
    # Another model has other steps (step 6 of one is not step 6 of another): it opens at the step of the same kind,
    # so a teacher compares two models' pooling, and at its first step where it has none.
    ss[state.STEP] = 0
    ss[WANTED_VIEW] = ss.get(SHOWN_VIEW)


def _choose_model(names: list[str], attending: list[str]) -> str:
    if ss.get(state.WALK_MODEL) not in names or ss.get(WALK_DEFAULTED):
        # A model not available here was named by a link, and said with the link's notes (`link.read_link_once`).
        if ss.get(state.WALK_MODEL) in state.models() and not ss.get(WALK_DEFAULTED):
            st.caption(f":material/info: The model {components.md(str(ss[state.WALK_MODEL]))} is not among the "
                       "models chosen on the Rank page; showing another chosen model instead.")
        # The default for this input, chosen again whenever the input changes, as a link without a model opens it.
        ss[state.WALK_MODEL] = attending[0] if attending else names[0]  # a gated model goes through every step
        ss[WALK_DEFAULTED] = True
    ss["walkthrough_model"] = ss[state.WALK_MODEL]
    return str(st.selectbox("Model", names, key="walkthrough_model", on_change=_model_changed,
                            help="The walkthrough follows one model; the others take the same input."))


def _navigation(step: int, steps: tuple[Step, ...]) -> None:
    back, where, forward = st.columns([1, 3, 1], vertical_alignment="center")
    back.button("Back", icon=":material/arrow_back:", key="walkthrough_back", shortcut="Left",
                disabled=step == 0, on_click=_go, args=(step - 1,), width="stretch")
    where.progress((step + 1) / len(steps), text=f"Step {step + 1} of {len(steps)}: {steps[step].title}")
    forward.button("Next", icon=":material/arrow_forward:", key="walkthrough_next", shortcut="Right",
                   disabled=step == len(steps) - 1, on_click=_go, args=(step + 1,), width="stretch")


found = common.ranking_or_note(truncation=False)  # said at the words step, where it matters (`walk.problems`)
if found is None or not found[0].models:
    components.glossary(GLOSSARY_TERMS, key="walkthrough_glossary")
if found is not None and not found[0].models:
    st.info("No model chosen: choose models on the Rank page.", icon=":material/info:")
elif found is not None:
    ranking, pick = found
    if not state.presenting():
        common.edit_sidebar(ranking, pick, key="walkthrough_edit")
    linked = (ss.get(state.STEP), state.view().model)  # as the link written before this page drew
    terms, choices = st.columns([1, 3], vertical_alignment="top")
    with terms:
        components.glossary(GLOSSARY_TERMS, key="walkthrough_glossary")
    with choices, st.expander("Candidate and model", icon=":material/tune:", expanded=not state.presenting()):
        pick = common.candidate_picker(ranking, key="walkthrough_pick")
        model = _choose_model(list(ranking.models), common.attending_models(ranking, pick))
    common.changes_for_pick(ranking, pick, key="walkthrough_changes")
    explanation = ranking.models[model].explanations[pick]
    params = state.models()[model].params
    walk_steps = walk.steps_for(explanation)
    wanted = ss.pop(WANTED_VIEW, None)
    same = next((n for n, kind in enumerate(walk_steps) if wanted is not None and kind.view == wanted), None)
    if same is not None:
        ss[state.STEP] = same
    step = walk.step_index(ss.get(state.STEP) or 0, explanation)
    ss[state.STEP] = step
    # A step past the end, or a model not chosen: the link says what is drawn, not what was asked. The default model
    # stays out of it (`view`): written in, it added a second history entry to the page change that opened the
    # walkthrough (Back's first press stayed on it), and a third on the next page, whose link came without it.
    if (step, state.view().model) != linked:
        state.write_link()
    if isinstance(linked[0], int) and linked[0] > step:  # said, as the link's other parts that cannot be kept are
        st.info(f"Step {linked[0] + 1} was asked for; {model}'s walkthrough has {len(walk_steps)} steps: showing "
                "the last.", icon=":material/info:")
    current = walk_steps[step]
    ss[SHOWN_VIEW] = current.view
    _navigation(step, walk_steps)
    if wanted is not None and same is None:
        st.caption(f":material/info: {components.md(model)}'s walkthrough has no {wanted} step: it starts here.")

    st.subheader(f"{step + 1}. {current.title}")
    st.markdown(f"{components.md(current.lead)} *({components.md(model)}, candidate #{pick + 1}, score "
                f"{explanation.score:+.4f})*")
    key = f"walkthrough_{current.key}"
    texts = {"question": ranking.question, "answer": ranking.candidates[pick]}
    match current.view:
        case View.WORDS:
            steps.words(explanation, texts, key)
        case View.VECTORS:
            steps.vectors(explanation, key)
        case View.PROJECTION:
            steps.projection(explanation, key)
        case View.GATE:
            steps.gate(explanation, getattr(params, "attention_scaling", "none") == "length", key,
                       getattr(params, "attention_gate", "softmax"))
        case View.STATES:
            steps.states(explanation, key)
        case View.CELL:
            steps.cell(explanation, key, current.shows)
        case View.MATRIX:
            steps.matrix(explanation, key, current.shows)
        case View.POOLING:
            steps.pooling(explanation, key)
        case View.MLP:
            steps.mlp(explanation, key)
        case View.WEIGHTS:
            steps.weights(explanation, key, current.shows)
        case View.CHANNELS:
            steps.channels(explanation, key, current.shows)
        case View.PAIR_VECTORS:
            steps.pair_vectors(explanation, key, current.shows)
        case View.TERMS:
            steps.terms(explanation, key)
        case _:
            steps.rank(ranking, model, pick, key)
