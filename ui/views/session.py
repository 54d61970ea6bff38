"""Session service: this visitor's canonical input in `st.session_state`, and what derives from it.

Every page reads the same canonical input (question, candidate lines, gold marks, the
candidate being explained, chosen models) and gets its ranking from `current()`, which the
cached service computes once per input. Widgets are "controlled": each is seeded from the
canonical value before it is drawn and writes back through a callback, so pages never
disagree about the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from matching.explain import urlstate
from matching.explain.contrast import valid_pair
from matching.explain.counterfactual import Comparison, compare
from matching.explain.ranking import Ranking
from matching.text.examples import EXAMPLES, Example
from matching.text.inputs import join_candidates, remap_gold, split_candidates
from matching.training.cards import default_models
from ui.keys import PRESENT, STEP, WALK_DEFAULTED, WALK_MODEL
from ui.views.cached import Request, models, rank_request, request_for

QUESTION, CANDIDATES, GOLD, PICK, MODELS = "ml_question", "ml_candidates", "ml_gold", "ml_pick", "ml_models"
BEFORE, URL_ERROR, URL_NOTE = "ml_before", "ml_url_error", "ml_url_note"
URL_ERROR_PAGE = "ml_url_error_page"
"""The page (url_path) a broken link opened: its error is shown there only."""
PINNED = "ml_pinned"
"""An input the person pinned as the starting point of the comparison (else: the input before the last edit)."""
PAIR = "ml_pair"
"""(A, B) on the Compare page, 0-based, or None for its default pair."""
DATA_SET = "ml_data_set"
"""The data set chosen on the Evaluate and Sanity pages (`datasets.link_name`), or None: none, or an upload."""


def _default_example() -> Example:
    return EXAMPLES[0]


def seed_defaults() -> None:
    """Seed the canonical input once per session with the first example."""
    ss = st.session_state
    if QUESTION not in ss:
        example = _default_example()
        ss[QUESTION] = example.question
        ss[CANDIDATES] = join_candidates(example.candidates)
        ss[GOLD] = list(example.gold)
        ss[PICK] = 0
        ss[MODELS] = None
        ss[BEFORE] = None
        ss[PRESENT], ss[STEP], ss[WALK_MODEL] = False, 0, None
        ss[PAIR] = None


def matrix_keys(side: int, model: str | None = None) -> str:
    """The Interactions page's widget key of a side's model, or (given the model) of its matrix view."""
    return f"interactions_model_{side}" if model is None else f"interactions_view_{side}_{model}"


def view() -> urlstate.ViewState:
    ss = st.session_state
    # The Interactions page's choices while it shows them (Streamlit drops a widget's state when its page is left).
    shown = []
    for side in (0, 1):
        model = ss.get(matrix_keys(side))
        matrix = ss.get(matrix_keys(side, model)) if model else None
        if matrix:
            shown.append((str(model), str(matrix)))
    walked = None if ss.get(WALK_DEFAULTED) else ss.get(WALK_MODEL)  # the default one: the link opens it as it is
    return urlstate.ViewState(present=bool(ss.get(PRESENT)), step=int(ss.get(STEP) or 0), model=walked,
                              matrices=tuple(shown), data=ss.get(DATA_SET))


def presenting() -> bool:
    """Presentation mode: large type, one view at a time, no editing controls."""
    return bool(st.session_state.get(PRESENT))


def inputs_snapshot() -> dict[str, object]:
    ss = st.session_state
    return {"question": ss[QUESTION], "candidates": ss[CANDIDATES], "gold": list(ss[GOLD])}


def set_inputs(question: str | None = None, candidates: str | None = None, gold: Sequence[int] | None = None,
               pick: int | None = None, remember: bool = True) -> None:
    """Change the canonical input; the input before a text edit is kept for the comparison."""
    ss = st.session_state
    new_question = ss[QUESTION] if question is None else question
    new_candidates = ss[CANDIDATES] if candidates is None else candidates
    if (new_question, new_candidates) != (ss[QUESTION], ss[CANDIDATES]):
        ss[BEFORE] = inputs_snapshot() if remember else None
        if not remember:  # a new input altogether: a pinned starting point no longer applies
            ss[PINNED] = None
        ss.pop(URL_ERROR, None)
    if gold is None and new_candidates != ss[CANDIDATES]:
        gold = remap_gold(split_candidates(ss[CANDIDATES]).candidates, split_candidates(new_candidates).candidates,
                          ss[GOLD])
    ss[QUESTION], ss[CANDIDATES] = new_question, new_candidates
    if gold is not None:
        ss[GOLD] = sorted({int(i) for i in gold})
    if pick is not None:
        ss[PICK] = int(pick)


def load_example(example: Example) -> None:
    set_inputs(example.question, join_candidates(example.candidates), example.gold, pick=0, remember=False)


def pick_index(count: int) -> int:
    pick = int(st.session_state.get(PICK, 0) or 0)
    return pick if 0 <= pick < count else 0


def compare_pair(count: int) -> tuple[int, int] | None:
    """The pair chosen on the Compare page, while it still names two different candidates."""
    return valid_pair(st.session_state.get(PAIR), count)


def chosen_models() -> list[str]:
    loaded = list(models())
    chosen = st.session_state.get(MODELS)
    if chosen is None:
        return default_models(loaded)
    return [n for n in chosen if n in loaded]


def current_request() -> Request:
    ss = st.session_state
    return request_for(ss[QUESTION], ss[CANDIDATES], ss[GOLD], chosen_models())


@dataclass(frozen=True)
class Current:
    request: Request
    ranking: Ranking | None
    problem: str | None
    seconds: float
    """Time the models took for this input (when it was first ranked)."""


def current() -> Current:
    request = current_request()
    ranking, problem, seconds = rank_request(request)
    return Current(request, ranking, problem, seconds)


def pin(snapshot: dict[str, object] | None = None) -> None:
    """Compare every later edit with this input (default: the current one), not only with the last edit."""
    st.session_state[PINNED] = snapshot or inputs_snapshot()


def unpin() -> None:
    st.session_state[PINNED] = None


def pinned() -> bool:
    return bool(st.session_state.get(PINNED))


def before_snapshot() -> dict[str, object] | None:
    """The input the comparison starts from: the pinned one, else the one before the last edit."""
    return st.session_state.get(PINNED) or st.session_state.get(BEFORE)


def before_comparison(now: Ranking) -> Comparison | None:
    """The starting input (pinned, else before the last edit) compared with `now`, when there is one."""
    before = before_snapshot()
    if not before:
        return None
    request = request_for(str(before["question"]), str(before["candidates"]), list(before["gold"]),  # type: ignore[call-overload]
                          list(now.models))
    ranking, _, _ = rank_request(request)
    if ranking is None:
        return None
    return compare(ranking, now)
