"""Presentation mode and the walkthrough in a real browser, as a teacher's projector shows them.

At 1280x720 with deviceScaleFactor 1.5, in presentation mode (present=1 in the link): a
screenshot of every page and of every walkthrough step (reached with the arrow key), and
checks that the body text is at least 22 px, that the Rank table's model-rank columns are
inside the viewport without sideways scrolling (also at 150 % zoom, a CSS viewport of
853x480), and that no chart text is cut: each title, axis title, legend and tick label's
bounding box lies inside its chart's drawing and is not ellipsised, and no two labels of one
kind overlap. The same chart check runs at 1440x900 outside presentation mode (laptops).
Screenshots go to artifacts/screenshots/. Uses the server and browser of test_browser.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from test_app import checkpoints
from test_browser import CALM, CHROMIUM, NEEDS_CHROMIUM, SHOTS, WAIT_MS, browser, server, settle  # noqa: F401 - fixtures

from matching.models import AMVLSTM
from matching.text.examples import BY_KEY
from matching.training.cards import default_models

pytestmark = NEEDS_CHROMIUM

if CHROMIUM.exists() or os.environ.get("CI"):
    from playwright.sync_api import Browser, Page
else:  # pragma: no cover
    Browser = Page = object  # type: ignore[assignment,misc]

PAGES = {"rank": "", "walkthrough": "walkthrough", "attention": "attention", "interactions": "interactions",
         "pooled": "pooled", "evaluate": "evaluate", "models": "models"}
CHART_SELECTOR = "[data-testid=stVegaLiteChart] svg, [data-testid=stPlotlyChart] .main-svg"
EXAMPLE = BY_KEY["disagreement"]
QUERY = urlencode({"q": EXAMPLE.question, "c": json.dumps(list(EXAMPLE.candidates)), "present": "1"})

CUT_TEXT = """
() => {
  // Every chart text that is cut: outside its chart's drawing, ellipsised, or overlapping a label of its kind.
  const problems = [];
  const inside = (r, box) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1
                             && r.bottom <= box.bottom + 1;
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
                            && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const shown = (node, root) => {
    for (let e = node; e && e !== root; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (e.getAttribute('opacity') === '0' || style.opacity === '0' || style.visibility === 'hidden') return false;
    }
    return true;
  };
  const charts = [...document.querySelectorAll('[data-testid=stVegaLiteChart], [data-testid=stPlotlyChart]')];
  charts.forEach((chart, index) => {
    const drawing = chart.querySelector('svg.marks, .main-svg');
    if (!drawing) return;
    const box = drawing.getBoundingClientRect();
    if (box.width === 0) return;
    const texts = chart.querySelectorAll(
      '.role-title text, .role-axis-title text, .role-legend-title text, .role-legend-label text, ' +
      '.role-title-text text, .role-axis-label text, .gtitle, .g-xtitle text, .g-ytitle text, .legendtext, ' +
      '.cbtitle text, .xtick text, .ytick text, .annotation-text, .cbaxis text');
    const seen = [];
    texts.forEach(t => {
      const text = (t.textContent || '').trim();
      const r = t.getBoundingClientRect();
      if (!text || r.width === 0 || !shown(t, chart)) return;
      const group = t.closest('[class*=role-]');
      const role = (group && group.getAttribute('class')) || t.getAttribute('class')
                   || t.parentElement.getAttribute('class') || '';
      if (!inside(r, box)) problems.push(`chart ${index}: '${text}' (${role}) is outside its chart`);
      if (/…$/.test(text) && !/axis-label|tick/.test(role)) problems.push(`chart ${index}: '${text}' is cut short`);
      seen.push({text, r, role});
    });
    for (let i = 0; i < seen.length; i++) for (let j = i + 1; j < seen.length; j++) {
      const a = seen[i], b = seen[j];
      if (a.role === b.role && !/tick/.test(a.role) && overlap(a.r, b.r))
        problems.push(`chart ${index}: '${a.text}' and '${b.text}' (${a.role}) overlap`);
    }
  });
  return problems;
}
"""

BODY_TEXT = """
() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stMarkdownContainer] p, '
                                   + '[data-testid=stMain] [data-testid=stCaptionContainer]')]
  .filter(e => e.getBoundingClientRect().width > 0
               && !e.closest('[data-testid=stTable], [data-testid=stPopover], .st-key-present_nav'))
  .map(e => parseFloat(getComputedStyle(e).fontSize))
"""

SIDEBAR_FOLDED = """
() => { const bar = document.querySelector('[data-testid=stSidebar]');
        return !bar || bar.getBoundingClientRect().right <= 1; }
"""

RANK_COLUMNS = """
() => {
  const table = document.querySelector('.st-key-rank_compact [data-testid=stTable]');
  if (!table) return null;
  const heads = [...table.querySelectorAll('th')].map(th => ({text: th.textContent.trim(),
                                                            right: th.getBoundingClientRect().right}));
  return {heads, viewport: window.innerWidth, scrollWidth: table.scrollWidth, clientWidth: table.clientWidth,
          pageScroll: document.documentElement.scrollWidth - document.documentElement.clientWidth};
}
"""


def context_page(browser: Browser, width: int, height: int) -> Iterator[Page]:  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1.5, **CALM)
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture
def projector(browser: Browser) -> Iterator[Page]:  # noqa: F811
    yield from context_page(browser, 1280, 720)


def open_page(page: Page, url: str, path: str, query: str = QUERY) -> None:
    page.goto(f"{url}/{path}?{query}")
    page.wait_for_selector("h1", timeout=WAIT_MS)
    settle(page)
    if path in ("", "attention", "interactions", "pooled", "models"):
        page.locator(CHART_SELECTOR).first.wait_for(state="attached", timeout=WAIT_MS)
    page.wait_for_timeout(1500)  # charts lay out their text after they attach


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def assert_nothing_cut(page: Page, where: str) -> None:
    problems: list[str] = page.evaluate(CUT_TEXT)
    assert not problems, f"{where}: {problems[:8]}"


def assert_rank_columns_fit(page: Page, models: int) -> dict[str, Any]:
    page.locator(".st-key-rank_compact [data-testid=stTable]").wait_for(timeout=WAIT_MS)
    found = page.evaluate(RANK_COLUMNS)
    assert found is not None, "the compact Rank table is drawn in presentation mode"
    heads = found["heads"]
    assert len(heads) >= 2 + models
    assert all(head["right"] <= found["viewport"] for head in heads), heads
    assert found["scrollWidth"] <= found["clientWidth"] + 1, "the Rank table scrolls sideways"
    assert found["pageScroll"] <= 0, "the page scrolls sideways"
    return found


def test_every_page_in_presentation_mode_on_a_projector(server: str, projector: Page) -> None:  # noqa: F811
    open_page(projector, server, "")  # a first visit starts the session's models
    for name, path in PAGES.items():
        open_page(projector, server, path)
        assert projector.locator("[data-testid=stException]").count() == 0, name
        assert "present=1" in projector.url, f"{name}: presentation mode stays in the link"
        assert projector.evaluate(SIDEBAR_FOLDED), f"{name}: the sidebar is folded away"
        sizes = projector.evaluate(BODY_TEXT)
        assert sizes and min(sizes) >= 22, f"{name}: body text of {min(sizes)} px"
        assert projector.locator("[data-testid=stMain] textarea").count() == 0, f"{name}: no editing controls"
        if name == "rank":
            assert_rank_columns_fit(projector, models=len(default_models(checkpoints())))  # the opening subset
        assert_nothing_cut(projector, name)
        shot(projector, f"30-present-{name}")


PAGE_ROW = """
() => { const row = document.querySelector('.st-key-present_nav'); const box = row.getBoundingClientRect();
        return {top: box.top, bottom: box.bottom, right: box.right, viewport: innerWidth,
                links: [...row.querySelectorAll('a')].filter(a => a.getBoundingClientRect().right <= box.right + 1)
                                                     .map(a => a.innerText.trim())}; }
"""


def test_presenting_the_pages_are_in_the_top_bar_and_the_switch_in_view(server: str,  # noqa: F811
                                                                         projector: Page) -> None:
    """The sidebar folded away, the pages are reached from the app's own row in the top bar, every page in view at
    1280 px (Streamlit's top bar showed 7 and "3 more"), and one Back press leaves a page (Streamlit's top bar added
    three history entries a page change); opened, the sidebar shows the switch that leaves presentation mode (its page
    list pushed it below a 720-pixel edge)."""
    open_page(projector, server, "")
    assert projector.locator(".st-key-sidebar_nav").count() == 0
    row = projector.evaluate(PAGE_ROW)
    assert row["bottom"] <= 60 and row["right"] <= row["viewport"], row  # in the header bar, inside the screen
    assert len(row["links"]) == 10, row  # every page, none scrolled out of view
    before = projector.evaluate("() => history.length")
    projector.locator(".st-key-present_nav").get_by_role("link", name="Attention").click()
    projector.wait_for_function("() => location.pathname === '/attention'", timeout=WAIT_MS)
    settle(projector)
    projector.wait_for_function("() => location.search.includes('present=1')", timeout=WAIT_MS)
    assert projector.evaluate("() => history.length") == before + 1  # one entry a page change
    projector.go_back()
    projector.wait_for_function("() => location.pathname === '/'", timeout=WAIT_MS)
    settle(projector)
    assert "Rank" in projector.locator("h1").first.inner_text() and "present=1" in projector.url
    projector.go_forward()
    projector.wait_for_function("() => location.pathname === '/attention'", timeout=WAIT_MS)
    settle(projector)
    assert projector.evaluate(SIDEBAR_FOLDED)
    projector.locator("[data-testid=stExpandSidebarButton]").click()
    projector.wait_for_function(f"() => !({SIDEBAR_FOLDED.strip()})()", timeout=WAIT_MS)
    projector.wait_for_timeout(800)  # the sidebar slides open
    switch = projector.locator("[data-testid=stSidebar]").get_by_text("Presentation mode").first
    switch.wait_for(timeout=WAIT_MS)
    box = switch.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720, box
    switch.click()  # off: the page list goes back to the sidebar, and present=1 leaves the link
    projector.wait_for_function("() => !location.search.includes('present=1')", timeout=WAIT_MS)
    projector.locator(".st-key-sidebar_nav").wait_for(timeout=WAIT_MS)


def test_the_walkthrough_with_the_keyboard(server: str, projector: Page) -> None:  # noqa: F811
    STEPS = len(AMVLSTM.descriptor.steps)  # noqa: N806 - a gate on the question: every step applies
    open_page(projector, server, "walkthrough", QUERY + "&model=amvlstm-q")
    assert projector.get_by_text("Page not found").count() == 0
    for number in range(1, STEPS + 1):
        heading = projector.locator("[data-testid=stMain] h3").first
        assert heading.inner_text().startswith(f"{number}. "), heading.inner_text()
        assert (f"step={number}" in projector.url) or (number == 1 and "step=" not in projector.url)
        assert projector.locator("[data-testid=stException]").count() == 0
        assert_nothing_cut(projector, f"walkthrough step {number}")
        shot(projector, f"31-walkthrough-step-{number}")
        if number < STEPS:
            projector.evaluate("() => document.activeElement && document.activeElement.blur()")  # no widget
            projector.keyboard.press("ArrowRight")  # has the focus: the key goes to the page
            projector.wait_for_function(f"() => location.search.includes('step={number + 1}')", timeout=WAIT_MS)
            settle(projector)
            projector.wait_for_timeout(1200)
    assert projector.evaluate(SIDEBAR_FOLDED)
    projector.evaluate("() => document.activeElement && document.activeElement.blur()")
    projector.keyboard.press("ArrowLeft")
    projector.wait_for_function(f"() => location.search.includes('step={STEPS - 1}')",
                                timeout=WAIT_MS)
    # The browser's Back and Forward step through the walkthrough: the session wrote its own step over the link
    # Back went to, so a class saw several dead Back presses.
    for move, step in (("go_back", STEPS), ("go_back", STEPS - 1), ("go_forward", STEPS)):
        getattr(projector, move)()
        projector.wait_for_function("(step) => [...document.querySelectorAll('[data-testid=stMain] h3')]"
                                    ".some(h => h.innerText.startsWith(step + '. '))", arg=step, timeout=WAIT_MS)
        settle(projector)
        assert f"step={step}" in projector.url, (move, projector.url)
    projector.evaluate("() => document.activeElement && document.activeElement.blur()")
    projector.keyboard.press("ArrowLeft")
    projector.wait_for_function(f"() => location.search.includes('step={STEPS - 1}')", timeout=WAIT_MS)
    # the link alone reopens that step
    step_link = projector.url
    open_page(projector, server, "walkthrough", step_link.split("?", 1)[1])
    assert projector.locator("[data-testid=stMain] h3").first.inner_text().startswith(
        f"{STEPS - 1}. ")


def test_the_rank_table_at_150_percent_zoom(server: str, browser: Browser) -> None:  # noqa: F811
    for page in context_page(browser, 853, 480):  # 1280x720 at 150 %: the CSS viewport is two thirds
        open_page(page, server, "")
        assert_rank_columns_fit(page, models=len(default_models(checkpoints())))  # the opening subset
        page.locator(".st-key-rank_compact").scroll_into_view_if_needed()
        shot(page, "32-present-rank-zoom-150")


def test_no_chart_text_is_cut_on_a_laptop(server: str, browser: Browser) -> None:  # noqa: F811
    query = urlencode({"q": EXAMPLE.question, "c": json.dumps(list(EXAMPLE.candidates))})
    for page in context_page(browser, 1440, 900):
        for name, path in PAGES.items():
            open_page(page, server, path, query)
            assert page.locator("[data-testid=stException]").count() == 0, name
            assert_nothing_cut(page, f"{name} at 1440 px")
            shot(page, f"33-laptop-{name}")
