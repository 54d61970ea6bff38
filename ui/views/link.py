"""Link service: the shared link in the address bar, read once per session and kept up to date."""

from __future__ import annotations

import streamlit as st

from matching.explain import urlstate
from matching.text.inputs import clean_gold, join_candidates
from ui.views.cached import models
from ui.views.session import (
    CANDIDATES,
    DATA_SET,
    GOLD,
    MODELS,
    PAIR,
    PICK,
    PRESENT,
    QUESTION,
    STEP,
    URL_ERROR,
    URL_NOTE,
    WALK_DEFAULTED,
    WALK_MODEL,
    chosen_models,
    compare_pair,
    current_request,
    matrix_keys,
    pick_index,
    view,
)

URL_DONE, LINK_TOO_LONG = "ml_url_done", "ml_link_too_long"
LINK_WRITTEN = "ml_link_written"
LINKED_VIEWS = "ml_linked_views"
"""The (side, model, matrix view) a link asked the Interactions page for: the page says so where one cannot be shown."""
"""The query this session last put in the address bar (`write_link`)."""


def _query() -> dict[str, str]:
    return {key: st.query_params.get(key) for key in st.query_params.keys()}  # noqa: SIM118


def _add_note(note: str) -> None:
    """One more sentence for the note the page shows above a link's input (after the link's earlier ones)."""
    before = st.session_state.get(URL_NOTE)
    st.session_state[URL_NOTE] = f"{before} {note}" if before else note


def read_link_once() -> None:
    """Apply the link's input to this session: on its first run, and again when the address bar holds a link this
    session did not write there (the browser's Back and Forward, or a link typed in). Each step, example or edit
    writes its own link, so Back went to the link before, and the session wrote its own state over it at once: a
    class saw several dead Back presses. A page switch that leaves the bar without a query reads nothing."""
    ss = st.session_state
    if ss.get(URL_DONE):
        current, written = _query(), ss.get(LINK_WRITTEN)
        if not current or written is None or current == written:
            return
        for note in (URL_NOTE, URL_ERROR):
            ss.pop(note, None)
    ss[URL_DONE] = True
    params = {key: st.query_params.get_all(key) for key in st.query_params.keys()}  # noqa: SIM118
    ss[LINKED_VIEWS] = set()  # a link without matrices, or a broken one, keeps none from the link before
    unread = urlstate.unread_keys(params)
    if unread:  # said whatever else the link holds, with its other notes
        _add_note(urlstate.unread_note(unread))
    try:
        shown = urlstate.decode_view(params)
        ss[PRESENT], ss[STEP], ss[WALK_MODEL] = shown.present, shown.step, shown.model
        ss[WALK_DEFAULTED] = False
        ss[DATA_SET] = shown.data  # checked against the data sets on this machine by the page that reads it
        for side, (model, matrix) in enumerate(shown.matrices):  # checked against what it can show by the page
            ss[matrix_keys(side)], ss[matrix_keys(side, model)] = model, matrix
            ss[LINKED_VIEWS].add((side, model, matrix))
    except urlstate.UrlStateError as error:
        _add_note(f"Part of this link was ignored: {error}.")
        ss[PRESENT] = (params.get("present") or [None])[-1] == "1"  # a bad step turned presentation mode off
    try:
        # A link may name models alone: the default example with those models.
        shared = None if set(params) & set(urlstate.KEYS) <= {"models"} else urlstate.decode(params)
        chosen = shared.models if shared else urlstate.decode_models(params)
    except urlstate.UrlStateError as error:
        ss[URL_ERROR] = f"This link could not be opened: {error}. The default example is shown instead."
        return
    notes = [] if shared is None else [f"Part of this link was ignored: {problem}." for problem in shared.ignored]
    if shared is not None:
        ss[QUESTION] = shared.question
        ss[CANDIDATES] = join_candidates(shared.candidates)
        ss[GOLD] = list(shared.gold)
        ss[PICK] = shared.pick
        ss[PAIR] = None if shared.pair is None else list(shared.pair)
    if chosen is not None:
        known = [n for n in chosen if n in models()]
        unknown = [n for n in chosen if n not in models()]
        # "models=" (every model unticked: the baselines alone) reopens as it was written, not as the defaults.
        ss[MODELS] = known if known or not chosen else None
        if unknown:
            instead = "" if known else " The default models are shown instead."
            notes.append(f"The link names model(s) that are not available here: {', '.join(unknown)}.{instead}")
    # A link that shows a model's matrices shows that model, even when it is not among the chosen ones.
    for _, model, _ in sorted(ss[LINKED_VIEWS]):
        if model in models() and model not in chosen_models():
            ss[MODELS] = [*chosen_models(), model]
        elif model not in models():
            notes.append(f"The link shows the matrices of a model that is not available here: {model}. The "
                         "Interactions page shows a chosen model instead.")
    # A link that walks through a model explains that model, even when it is not among the chosen ones.
    walked = ss.get(WALK_MODEL)
    if walked in models() and walked not in chosen_models():
        ss[MODELS] = [*chosen_models(), walked]
    elif walked is not None and walked not in models():  # said with the link's other notes, whichever page opens
        notes.append(f"The link walks through a model that is not available here: {walked}. The walkthrough "
                     "shows a chosen model instead.")
    for note in notes:
        _add_note(note)


def current_link() -> dict[str, str]:
    """The query of the current input (unless it is too large for a link) and view: what `write_link` puts in the
    URL, and what the page links of the navigation carry (`app.py`)."""
    ss = st.session_state
    request = current_request()
    # The question as ranked (direction controls left out, as the candidates are), not as the box still holds it.
    shared = urlstate.SharedState(question=request.question, candidates=request.parsed.candidates,
                                  gold=tuple(clean_gold(ss[GOLD], len(request.parsed.candidates))),
                                  pick=pick_index(len(request.parsed.candidates)),
                                  models=None if ss[MODELS] is None else tuple(ss[MODELS]),
                                  pair=compare_pair(len(request.parsed.candidates)))
    params = urlstate.encode(shared)
    ss[LINK_TOO_LONG] = params is None
    return {**(params or {}), **urlstate.encode_view(view())}


def write_link(wanted: dict[str, str] | None = None) -> None:
    """Put `wanted` (default: `current_link()`, the current input and view) in the URL."""
    wanted = current_link() if wanted is None else wanted
    st.session_state[LINK_WRITTEN] = wanted
    if _query() != wanted:
        st.query_params.from_dict(wanted)
