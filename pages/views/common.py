"""Pieces shared by the explanation pages (Attention, Interactions, Pooled cells).

Each page needs the same three things: the current ranking (or a clear note on why
there is none), the candidate being explained, and a place to edit the input and see
what the edit changed. They combine `state` (data) with `components` (drawing).
"""

from __future__ import annotations

import streamlit as st

from matching.inputs import join_candidates
from matching.ranking import Ranking
from pages.views import components, state

ss = st.session_state


def ranking_or_note() -> tuple[Ranking, int] | None:
    """The current ranking and the picked candidate, or None after telling the reader why not."""
    current = state.current()
    components.notes(current.request.parsed.notes, key="page_notes")
    if current.problem or current.ranking is None:
        st.info(components.md(current.problem or "Nothing to explain yet."), icon=":material/edit_note:")
        st.page_link("pages/screens/rank.py", label="Enter a question and candidates on the Rank page",
                     icon=":material/format_list_numbered:")
        return None
    ranking = current.ranking
    return ranking, state.pick_index(len(ranking.candidates))


def candidate_picker(ranking: Ranking, key: str) -> int:
    """Choose the candidate to explain (shared with every page through the session state)."""
    ranks = {name: result.ranks for name, result in ranking.models.items()}
    options = components.candidate_options(ranking.candidates, ranks)
    help_text = "Ranks in brackets: " + ", ".join(ranks) if ranks else None
    return components.picker(options, state.PICK, key=key, label="Candidate to explain", help=help_text)


def edit_sidebar(ranking: Ranking, pick: int, key: str) -> None:
    """Counterfactual editing from any explanation page: change a word, see everything update."""
    request = state.current_request()
    candidate = ranking.candidates[pick]
    ss[f"{key}_question"] = ss[state.QUESTION]
    ss[f"{key}_candidate"] = candidate

    def question_changed() -> None:
        state.set_inputs(question=ss[f"{key}_question"])

    def candidate_changed() -> None:
        lines = ss[state.CANDIDATES].splitlines()
        number = request.parsed.lines[pick] - 1
        if 0 <= number < len(lines):
            lines[number] = join_candidates([ss[f"{key}_candidate"]])
        state.set_inputs(candidates="\n".join(lines))

    with st.sidebar, st.container(border=True, key=f"{key}_box"):
        st.markdown("**:material/edit: Counterfactual edit**")
        st.caption("Change a word and press Enter: ranks, attention and pooled cells update, and the "
                   "changes since your last edit are listed.")
        st.text_input("Question", key=f"{key}_question", on_change=question_changed)
        st.text_area(f"Candidate #{pick + 1}", key=f"{key}_candidate", on_change=candidate_changed, height=110,
                     help="Ctrl+Enter to apply.")


def changes_for_pick(ranking: Ranking, pick: int, key: str) -> None:
    """Rank/score change of the explained candidate since the last edit (nothing when there was none)."""
    components.comparison_view(state.before_comparison(ranking), key=key, selected=pick)


def explained_candidate(page: str) -> tuple[Ranking, int] | None:
    """The storyboard head of every explanation page: ranking, edit box, picker, changes.

    Returns (ranking, picked candidate), or None when there is nothing to explain or no
    model is chosen (the reader has been told why). Widget keys are prefixed with `page`.
    """
    found = ranking_or_note()
    if found is None:
        return None
    ranking, pick = found
    if not state.presenting():  # presentation mode shows no editing controls
        edit_sidebar(ranking, pick, key=f"{page}_edit")
    pick = candidate_picker(ranking, key=f"{page}_pick")
    changes_for_pick(ranking, pick, key=f"{page}_changes")
    if not ranking.models:
        st.info("No model chosen: choose models on the Rank page.", icon=":material/info:")
        return None
    return ranking, pick


def attending_models(ranking: Ranking, pick: int) -> list[str]:
    """The models with an attention gate (their explanation carries attention weights)."""
    return [name for name, result in ranking.models.items()
            if result.explanations[pick].question_attention is not None
            or result.explanations[pick].answer_attention is not None]


def one_model(names: list[str], key: str, default: str | None = None) -> str:
    """Presentation mode's one view at a time: the model to show, picked with a segmented control."""
    fallback = default if default in names else names[0]
    chosen = st.segmented_control("Model", names, default=fallback, key=key,
                                  help="Presentation mode shows one model at a time.")
    return chosen if chosen in names else fallback


def panels(count: int, gap: str = "large") -> list:  # type: ignore[type-arg]
    """`count` side-by-side columns, or in presentation mode `count` full-width blocks one under another."""
    if state.presenting():
        return [st.container() for _ in range(count)]
    return list(st.columns(count, gap=gap))  # type: ignore[arg-type]
