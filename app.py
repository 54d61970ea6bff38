"""MatchLens: rank candidate answers with several neural matching models side by side, and see why.

Run with `streamlit run app.py`. This file is the router: it sets the page up,
seeds the shared state (from the link when it carries one), draws the sidebar,
runs the chosen page inside a guard (no traceback ever reaches the page) and
writes the current input back into the URL.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import streamlit as st

from ui.keys import PRESENT

# Presentation mode folds the sidebar away: decided before the first element, from the session or, on a
# session's first run, from the link (one page-config call per run, so the sidebar never flickers open).
_presenting = (bool(st.session_state[PRESENT]) if PRESENT in st.session_state
               else st.query_params.get("present") == "1")
# The tab's icon is a file of the app's own: a ":material/...:" page icon is fetched from fonts.gstatic.com by the
# browser, so on a machine with no internet the tab had no icon and every page logged a failed request.
FAVICON = Path(__file__).resolve().parent / "ui" / "static" / "favicon.png"
st.set_page_config(page_title="MatchLens", layout="wide",
                   page_icon=str(FAVICON) if FAVICON.is_file() else ":material/join_inner:",  # a copy without it
                   initial_sidebar_state="collapsed" if _presenting else "expanded")

# A fresh server's first run imports torch and the models' code (about 4 s on 2 cores) before it can draw
# anything: it says so meanwhile, where the page was blank. Later runs find them imported.
_starting = None
if "matching.explain.ranking" not in sys.modules:
    _starting = st.empty()
    _starting.info("Starting MatchLens: loading the models' code, once per server ...", icon=":material/hourglass_top:")

from matching.explain import urlstate  # noqa: E402 - after the message above
from matching.explain.glossary import TERMS  # noqa: E402
from ui.views import admission, cached, components, state  # noqa: E402

if _starting is not None:
    _starting.empty()

log = logging.getLogger("matchlens")
UNKNOWN_PAGE_SAID = "ml_unknown_page_said"

PAGES = [
    # Served at / only: Streamlit gives the default page the path "" and its own url_path is reserved yet opens
    # "Page not found" (so it is a name nobody types); the names people do type are the aliases below.
    st.Page("ui/screens/rank.py", title="Rank", icon=":material/format_list_numbered:", url_path="rank-at-root",
            default=True),
    st.Page("ui/screens/walkthrough.py", title="Walkthrough", icon=":material/footprint:",
            url_path="walkthrough"),
    st.Page("ui/screens/attention.py", title="Attention", icon=":material/visibility:", url_path="attention"),
    st.Page("ui/screens/features.py", title="Word features", icon=":material/view_column:", url_path="features"),
    st.Page("ui/screens/interactions.py", title="Interactions", icon=":material/grid_on:", url_path="interactions"),
    st.Page("ui/screens/pooled.py", title="Pooled cells", icon=":material/filter_list:", url_path="pooled"),
    st.Page("ui/screens/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page("ui/screens/sanity.py", title="Sanity checks", icon=":material/rule:", url_path="sanity"),
    st.Page("ui/screens/evaluate.py", title="Evaluate", icon=":material/fact_check:", url_path="evaluate"),
    st.Page("ui/screens/models.py", title="Models", icon=":material/model_training:", url_path="models"),
]


RANK_ALIASES = ("rank", "ranking", "home")
"""Paths that open Rank at the root, with the link's state: every other page has a path of its name, so people
type one for this page too, and Streamlit serves the default page at / only ("Page not found" there before)."""


def _rank_by_its_name() -> None:
    st.switch_page(PAGES[0], query_params=st.query_params.to_dict())


NAVIGATION = list(PAGES)
"""The pages the sidebar lists, in its order (the aliases below are not listed)."""
PAGES += [st.Page(_rank_by_its_name, title="Rank", url_path=alias, visibility="hidden") for alias in RANK_ALIASES]

# The app lists the pages itself, each a link that carries the current input and view: in the sidebar
# (`_navigation`), or presenting, in a row at the top of the page (`_presenting_navigation`: the sidebar is folded
# away, and at projector-sized type its page list pushed the presentation switch below a 720-pixel screen's edge).
page = st.navigation(PAGES, position="hidden")


def _page_links(link: dict[str, str], width: str) -> None:
    """The pages, each a link that carries `link`, the current input and view. Streamlit's own page lists cleared the
    query on the way and the app then wrote it back: two entries in the browser's history a page change from the
    sidebar, three from the top bar, so that Back needed two or three presses to leave a page (the first stayed on
    it)."""
    for listed in NAVIGATION:
        st.page_link(listed, label=listed.title, icon=listed.icon, query_params=link, width=width)  # type: ignore[arg-type]


def _navigation(link: dict[str, str]) -> None:
    with st.container(key="sidebar_nav", gap="xsmall"):
        _page_links(link, "stretch")
    st.divider()


def _presenting_navigation(link: dict[str, str]) -> None:
    with st.container(key="present_nav", horizontal=True, gap="xsmall"):
        _page_links(link, "content")


def _run(page: st.Page) -> None:
    """Everything after the router: the session's state, the sidebar, notes from the link, the page."""
    try:
        state.init()
        loaded, errors = state.models(), state.load_errors()
    except Exception:  # noqa: BLE001 - the guard: the page says what failed, the log keeps the traceback
        log.exception("starting the session failed")
        st.error("MatchLens could not start this session. Reload the page; if it persists, see the server log.",
                 icon=":material/error:")
        st.stop()

    st.session_state["sidebar_present"] = state.presenting()

    def _present_changed() -> None:
        st.session_state[state.PRESENT] = bool(st.session_state["sidebar_present"])

    # The link of this run's input and view, made once: the navigation's pages carry it, and it goes in the address
    # bar below. Callbacks have already applied this run's edits.
    try:
        link = state.current_link()
    except Exception:  # noqa: BLE001 - a session whose state cannot make a link still gets its pages, link-less
        log.exception("making the link failed")
        link = None

    with st.sidebar:
        if not state.presenting():
            _navigation(link or {})
        st.markdown("### :material/join_inner: MatchLens")
        st.caption("Positional neural text matching, explained.")
        st.toggle("Presentation mode", key="sidebar_present", on_change=_present_changed,
                  help="For a projector: large type, high contrast, one view at a time, no editing controls, the "
                       "pages in the top bar and the sidebar folded away (open it with the arrow at the top left). "
                       "Kept in the link as present=1.")
        components.glossary([term.name for term in TERMS], key="sidebar_glossary", label="Glossary")
        components.model_status(list(loaded), errors, key="sidebar_models")

    if state.presenting():
        components.presentation_style()
        _presenting_navigation(link or {})

    if st.session_state.get(state.URL_ERROR):
        # Shown on the page the link opened (until the input is edited); leaving that page clears it.
        opened = st.session_state.setdefault(state.URL_ERROR_PAGE, page.url_path)
        if opened == page.url_path:
            st.error(st.session_state[state.URL_ERROR], icon=":material/link_off:")
        else:
            st.session_state.pop(state.URL_ERROR, None)
    if st.session_state.get(state.URL_NOTE):
        st.warning(st.session_state.pop(state.URL_NOTE), icon=":material/link:")
    missing = urlstate.unknown_page(st.context.url, str(st.get_option("server.baseUrlPath") or ""),
                                    {listed.url_path for listed in PAGES})
    if missing and st.session_state.get(UNKNOWN_PAGE_SAID) != missing:  # said once for the address
        st.session_state[UNKNOWN_PAGE_SAID] = missing
        st.warning(f"This address names a page MatchLens does not have: /{components.md(missing[:60])}. The "
                   f"{page.title} page is shown instead.", icon=":material/link_off:")
    if not loaded:
        st.error("No model could be loaded, so only the baselines are shown. See the sidebar for the reasons.",
                 icon=":material/error:")

    # Written before the page draws (a page may end early with st.stop or st.switch_page).
    if link is not None:
        try:
            state.write_link(link)
        except Exception:  # noqa: BLE001
            log.exception("writing the link failed")

    try:
        page.run()
    except Exception as error:  # noqa: BLE001 - st.rerun/st.switch_page are BaseExceptions and pass through
        log.exception("page %s failed", page.title)
        st.error(f"This page hit an unexpected problem ({type(error).__name__}). The other pages still work; "
                 "changing the input or reloading usually helps.", icon=":material/error:")


# A fresh server warms up first, outside the turns: the first run loads the models and imports what the
# pages use while the runs arriving with it wait, so their turns and their patience start on a warm server.
try:
    cached.warm_up()
except Exception:  # noqa: BLE001 - the page's own run says what failed (the guard in _run)
    log.exception("warming up failed")

# Page runs take turns, in arrival order (see ui/views/admission.py); a file upload or the sanity
# checks run at once, without holding a turn others wait for.
with admission.gate.turn(wait=page.url_path not in ("evaluate", "sanity"), timeout=admission.PATIENCE):
    _run(page)
