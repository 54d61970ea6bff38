"""Shared links as the very first requests of a freshly started server, in a real browser.

A class opens a teacher's link together, and the server has just been started: its first script
runs are the links' runs. Streamlit takes its legacy multipage path (the `pages/` folder) for the
script runs that start before the app's first `st.navigation` call on a server whose app has a
folder named `pages` beside it; those runs answer a deep link with a "Page not found" dialog
over the main page, and every click waits behind the dialog until it is closed.

This test starts its own server (a fresh process on its own port of 127.0.0.1) and, before
anything else has asked it for a page, opens every page of the router (app.py's PAGES, the
default page included) with a real question and candidates in the link, three fresh browser
contexts per page, all at once. Each tab must then show its own page: no "Page not found" text
or dialog, no exception or error box, the page's heading, the link's question still in the
address bar; once every tab has drawn its first run, each takes a click that goes through (the
sidebar's glossary opens; the walkthrough's Next moves to step 2; one tab per page follows a
sidebar link to the next page).

On the same server afterwards: the walkthrough's ← and → keys still move the step after the
pooling step's cells were revealed (its buttons leave the keys to the step's shortcuts).

MATCHLENS_APP_ROOT=/path/to/a/checkout serves that checkout's app.py instead of this one (to show
the test failing on a tree that still has a `pages/` folder). Run with -s to see the figures.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from conftest import free_port
from test_browser import ARGS, CALM, CHROMIUM, NEEDS_CHROMIUM, SHOTS, WAIT_MS, settle

from matching.explain.urlstate import SharedState, encode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from sessions import started_app  # noqa: E402 - the bench's server start, shared

APP_ROOT = Path(os.environ.get("MATCHLENS_APP_ROOT", ROOT)).resolve()
TABS_PER_PAGE = 3
CLICK_MS = 30_000
"""A click that is not blocked goes through at once; this only bounds a slow, loaded machine."""
BLOCKED_CLICK_MS = 3_000
"""With the dialog already seen, a short try shows whether the page takes clicks at all."""
ERROR_TEXTS = ("unexpected problem", "could not start", "Traceback")
"""Words of the app's own error boxes (its guard turns an exception into one of these)."""
QUESTION = "how did the roman empire fall ?"
CANDIDATES = (
    "The fall of the Western Roman Empire was the loss of central political control in the west.",
    "Rome is the capital city of Italy and has a population of about 2.8 million.",
    "Barbarian invasions, economic decline and political instability weakened the empire.",
    "In 476 Odoacer deposed Romulus Augustulus, the last western emperor.",
    "Pizza is a dish of Italian origin consisting of a flattened base of dough.",
)

pytestmark = NEEDS_CHROMIUM

if CHROMIUM.exists() or os.environ.get("CI"):
    from playwright.sync_api import Browser, Page, expect, sync_playwright
else:  # pragma: no cover
    Browser = Page = object  # type: ignore[assignment,misc]


@dataclass(frozen=True)
class AppPage:
    title: str
    """The title in the sidebar's navigation; the page's own heading contains it."""
    path: str
    """The URL path ("" for the default page)."""


def router_pages(app: Path) -> list[AppPage]:
    """Every st.Page of the router's PAGES list, read from app.py's source (never run here)."""
    for node in ast.walk(ast.parse(app.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PAGES" for t in node.targets)
                and isinstance(node.value, ast.List)):
            pages = []
            for call in node.value.elts:
                assert isinstance(call, ast.Call), ast.dump(call)
                options = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
                script = ast.literal_eval(call.args[0])
                path = "" if options.get("default") else options.get("url_path", Path(script).stem)
                pages.append(AppPage(str(options["title"]), str(path)))
            return pages
    raise AssertionError(f"{app} has no PAGES list")


def link_query() -> str:
    """The query string of a shared link as the app writes it: question, candidates, explained candidate."""
    params = encode(SharedState(question=QUESTION, candidates=CANDIDATES, pick=2))
    assert params is not None
    return urlencode(params)


@dataclass
class Tab:
    page: AppPage
    number: int
    tab: Page
    problems: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    """The whole text of each error (artifacts/deeplinks.json)."""
    dialog: bool = False

    @property
    def name(self) -> str:
        return f"/{self.page.path} #{self.number + 1}"


def page_not_found(tab: Page) -> bool:
    """Streamlit's "Page not found" dialog (or its text anywhere) is on the page."""
    return tab.get_by_text("Page not found").count() > 0


SKELETONS = "[data-testid=stSkeleton], [data-testid=stSkeletonElement], [data-testid=stAppSkeleton]"
"""Streamlit's placeholders for what a tab is still loading (a table's or a chart's code, the app itself)."""


def drawn(tab: Page) -> None:
    """Wait until the tab's first run is over and the tab has drawn all of it (no placeholder left)."""
    tab.wait_for_selector("h1", timeout=WAIT_MS)
    settle(tab)
    tab.wait_for_function(f"() => !document.querySelector({SKELETONS!r})", timeout=WAIT_MS)


def check_tab(opened: Tab) -> None:
    """What the tab shows after its first run: its own page, no dialog, no error, the link in the address bar."""
    tab, page = opened.tab, opened.page
    opened.dialog = page_not_found(tab) or tab.get_by_role("dialog").count() > 0
    if opened.dialog:
        opened.problems.append("a 'Page not found' dialog" if page_not_found(tab) else "a dialog")
    if tab.locator("[data-testid=stException]").count():
        opened.problems.append("an exception element")
    main_text = tab.locator("[data-testid=stMain]").inner_text()
    opened.problems += [f"error text {text!r}" for text in ERROR_TEXTS if text in main_text]
    heading = tab.locator("h1").first.inner_text()
    if page.title not in heading:
        opened.problems.append(f"heading {heading!r} instead of {page.title!r}")
    location = urlparse(tab.url)
    if location.path != f"/{page.path}":
        opened.problems.append(f"address {location.path!r} instead of '/{page.path}'")
    if parse_qs(location.query).get("q") != [QUESTION]:
        opened.problems.append(f"the link's question is not in the address bar ({location.query[:80]!r})")


def click_tab(opened: Tab, next_page: AppPage, follow_link: bool) -> None:
    """The tab takes clicks: the glossary opens, the walkthrough's Next moves the step, a sidebar link."""
    tab, page = opened.tab, opened.page
    # A click: the sidebar's glossary opens (no server round trip, so only a dialog in the way stops it).
    try:
        tab.locator("[data-testid=stSidebar]").get_by_role("button", name="Glossary").click(
            timeout=BLOCKED_CLICK_MS if opened.dialog else CLICK_MS)
        tab.locator("[data-testid=stPopoverBody]").first.wait_for(timeout=WAIT_MS)
        tab.keyboard.press("Escape")
    except Exception as error:  # noqa: BLE001 - recorded: a click that times out is what this test is about
        opened.problems.append(f"the glossary click failed ({type(error).__name__})")
        return
    if page.path == "walkthrough":
        tab.get_by_role("button", name="Next").click(timeout=CLICK_MS)
        tab.get_by_text("Step 2 of").first.wait_for(timeout=WAIT_MS)
    if follow_link:  # a server round trip in the same session: the next page of the sidebar
        tab.locator(".st-key-sidebar_nav").get_by_role("link", name=next_page.title, exact=True).click(
            timeout=CLICK_MS)
        tab.wait_for_function("(path) => location.pathname === path", arg=f"/{next_page.path}", timeout=WAIT_MS)
        settle(tab)
        heading = tab.locator("h1").first.inner_text()
        if next_page.title not in heading:
            opened.problems.append(f"after the sidebar link: heading {heading!r} instead of {next_page.title!r}")


def record(opened: Tab, check: Callable[[], object]) -> None:
    """Run a check of the tab; an exception is one of its problems (every tab is checked, all are reported)."""
    try:
        check()
    except Exception as error:  # noqa: BLE001
        opened.problems.append(f"{type(error).__name__}: {str(error).splitlines()[0]}")
        opened.details.append(str(error))  # playwright's call log: what a click waited for


@pytest.fixture(scope="module")
def fresh_server() -> Iterator[str]:
    """A server of its own, not asked for anything yet but its health check."""
    (ROOT / "artifacts").mkdir(exist_ok=True)
    with started_app(free_port(), log=ROOT / "artifacts" / "streamlit-deeplinks.log", root=APP_ROOT) as app:
        yield app.url


def test_deep_links_as_a_fresh_servers_first_requests(fresh_server: str) -> None:
    pages = router_pages(APP_ROOT / "app.py")
    assert len(pages) >= 2 and sum(p.path == "" for p in pages) == 1, pages
    query = link_query()
    start = time.perf_counter()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        # The default page's links go last in each round: the server's very first run always takes the
        # legacy path where it would, and only a link naming a page can show the dialog.
        in_order = sorted(pages, key=lambda page: page.path == "")
        tabs = [Tab(page, number, browser.new_context(viewport={"width": 1280, "height": 900}, **CALM)
                    .new_page()) for number in range(TABS_PER_PAGE) for page in in_order]
        # Every context exists before the first request; then the requests go out back to back, so the
        # links' script runs are the server's first and overlap, as a class opening one link together.
        for opened in tabs:
            opened.tab.goto(f"{fresh_server}/{opened.page.path}?{query}", wait_until="commit")
        # Every tab draws its first run before any is clicked. Thirty tabs booting Streamlit's frontend at once
        # share this machine's two cores; a class's thirty browsers each have their own. A tab clicked while
        # the others booted sat at playwright's "scrolling into view if needed" for 30 s: its renderer still
        # parsing the code of a table it had not drawn yet (a grey placeholder in the screenshot), the server
        # long done. So the clicks wait for the browsers' own work; the server's is what they measure.
        for opened in tabs:
            record(opened, lambda opened=opened: (drawn(opened.tab), check_tab(opened)))
        for opened in tabs:
            next_page = pages[(pages.index(opened.page) + 1) % len(pages)]
            if not opened.details:  # its first run drew (a dialog still gets its short click)
                record(opened, lambda opened=opened, next_page=next_page:
                       click_tab(opened, next_page, follow_link=opened.number == 0))
            if opened.problems:
                SHOTS.mkdir(parents=True, exist_ok=True)
                opened.tab.screenshot(path=str(SHOTS / f"deeplink-{opened.page.path or 'rank'}-{opened.number}.png"))
        browser.close()
    elapsed = time.perf_counter() - start

    dialogs = [opened.name for opened in tabs if opened.dialog]
    print(f"\n{len(tabs)} deep links ({len(pages)} pages x {TABS_PER_PAGE} fresh contexts) as the first requests of "
          f"a fresh server of {APP_ROOT}: {len(dialogs)} showed a 'Page not found' dialog"
          + (f" ({', '.join(dialogs)})" if dialogs else "") + f"; checked in {elapsed:.0f} s")
    (ROOT / "artifacts" / "deeplinks.json").write_text(json.dumps(
        {"app_root": str(APP_ROOT), "links": len(tabs), "dialogs": dialogs, "seconds": elapsed,
         "problems": {opened.name: opened.problems for opened in tabs if opened.problems},
         "details": {opened.name: opened.details for opened in tabs if opened.details}}, indent=1))
    problems = [f"{opened.name}: {'; '.join(opened.problems)}" for opened in tabs if opened.problems]
    assert not problems, "\n".join(problems)


def revealed_count(text: str) -> tuple[int, int]:
    """(shown, total) of "Cells revealed, in pooling order: 4 of 10"."""
    found = re.search(r"(\d+) of (\d+)$", text.strip())
    assert found, text
    return int(found[1]), int(found[2])


def test_walkthrough_keys_move_the_step_after_revealing_pooled_cells(fresh_server: str) -> None:
    """Step 6 reveals pooled cells with buttons: after one is used, → and ← still move the walkthrough's step
    (a slider kept the focus and took the arrow keys for itself)."""
    query = urlencode({**(encode(SharedState(question=QUESTION, candidates=CANDIDATES)) or {}), "step": "6"})
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        tab = browser.new_context(viewport={"width": 1280, "height": 900}, **CALM).new_page()
        progress = tab.locator("[data-testid=stProgress]").first
        revealed = tab.get_by_text("Cells revealed, in pooling order").first
        tab.goto(f"{fresh_server}/walkthrough?{query}")
        tab.wait_for_selector("h1", timeout=WAIT_MS)
        settle(tab)
        assert "Step 6 of" in progress.inner_text() and "Pooling" in progress.inner_text()
        shown, total = revealed_count(revealed.inner_text())
        assert 1 <= shown < total
        tab.get_by_role("button", name="One more").click(timeout=CLICK_MS)
        settle(tab)
        assert revealed_count(revealed.inner_text()) == (shown + 1, total)
        # A key's rerun can start after settle's first look: wait for the step itself, up to the usual limit.
        tab.keyboard.press("ArrowRight")
        expect(progress).to_contain_text("Step 7 of", timeout=WAIT_MS)
        settle(tab)
        tab.keyboard.press("ArrowLeft")
        expect(progress).to_contain_text("Step 6 of", timeout=WAIT_MS)
        settle(tab)
        assert revealed_count(revealed.inner_text()) == (shown + 1, total)  # kept while the step was away
        browser.close()


def rank_aliases(app: Path) -> tuple[str, ...]:
    """app.py's RANK_ALIASES, read from its source (never run here)."""
    for node in ast.parse(app.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "RANK_ALIASES"
                                                for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError(f"{app} has no RANK_ALIASES")


def test_the_rank_pages_own_names_open_it_at_the_root_with_the_links_state(fresh_server: str) -> None:
    """/rank and /ranking (the names people type for the default page) open Rank at / with the link's question:
    the default page's own url_path used to open Streamlit's "Page not found" dialog."""
    aliases = rank_aliases(APP_ROOT / "app.py")
    assert {"rank", "ranking"} <= set(aliases)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for alias in aliases:
            tab = browser.new_context(viewport={"width": 1280, "height": 900}, **CALM).new_page()
            tab.goto(f"{fresh_server}/{alias}?{link_query()}")
            tab.wait_for_function("() => location.pathname === '/'", timeout=WAIT_MS)
            drawn(tab)
            assert not page_not_found(tab), alias
            assert "Rank" in tab.locator("h1").first.inner_text(), alias
            assert parse_qs(urlparse(tab.url).query).get("q") == [QUESTION], (alias, tab.url)
            assert tab.locator("[data-testid=stException]").count() == 0, alias
        browser.close()
