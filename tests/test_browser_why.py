"""Real browser: the Compare and Sanity checks pages, as a person reaches them; screenshots of both.

Uses the server, browser and page fixtures of tests/test_browser.py (same skip rule).
Screenshots go to artifacts/screenshots/ (3x-*.png).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from test_browser import SHOTS, WAIT_MS, browser, go, open_app, page, pytestmark, server, settle  # noqa: F401

from matching.text.examples import BY_KEY

try:
    from playwright.sync_api import Page
except ImportError:  # pragma: no cover - skipped without chromium (pytestmark)
    Page = object  # type: ignore[assignment,misc]


def full_shot(tab: Page, name: str, height: int = 3600) -> None:
    """Streamlit scrolls inside its own container, so a tall viewport shows the whole page."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.set_viewport_size({"width": 1440, "height": height})
    tab.mouse.move(1, 1)
    tab.wait_for_timeout(2500)
    tab.screenshot(path=str(SHOTS / f"{name}.png"))
    tab.set_viewport_size({"width": 1440, "height": 1600})
    tab.wait_for_timeout(500)


def no_errors(tab: Page) -> None:
    assert tab.locator("[data-testid=stException]").count() == 0
    assert tab.evaluate("() => window.__xss") is None


def test_compare_and_sanity_pages(server: str, page: Page) -> None:  # noqa: F811
    example = BY_KEY["disagreement"]
    query = urlencode({"q": example.question, "c": json.dumps(list(example.candidates)), "gold": "2",
                       "pair": "3,2"})
    open_app(page, server, f"?{query}")  # the link opens on Rank; the sidebar leads to Compare
    go(page, "Compare", "compare", ".js-plotly-plot")
    page.get_by_text("Across models").wait_for(timeout=WAIT_MS)
    page.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
    page.locator(".vega-embed").first.wait_for(timeout=WAIT_MS)
    assert "pair=3%2C2" in page.url or "pair=3,2" in page.url  # the pair stays in the link
    no_errors(page)
    full_shot(page, "30-compare")

    page.get_by_role("button", name="Find the smallest rank flip").click()
    settle(page)
    page.get_by_text("Smallest rank flip", exact=True).wait_for(timeout=WAIT_MS)
    page.locator("[data-testid=stAlert]", has_text="#").first.wait_for(timeout=WAIT_MS)
    no_errors(page)
    apply = page.get_by_role("button", name="Apply as a counterfactual edit")
    if apply.count():
        apply.click()
        settle(page)
        page.get_by_text("Since your last edit").wait_for(timeout=WAIT_MS)
        no_errors(page)
    full_shot(page, "31-compare-flip")

    go(page, "Sanity checks", "sanity", ".vega-embed")
    page.get_by_text("Model randomisation, cascading from the top").wait_for(timeout=WAIT_MS)
    no_errors(page)
    full_shot(page, "32-sanity-example")
    page.get_by_role("tab", name="On a data set").click()
    page.get_by_role("button", name="Try the sample file").last.click()
    settle(page)
    page.get_by_role("button", name="Run the checks").click()
    page.get_by_text("pairs from").wait_for(timeout=WAIT_MS)
    settle(page)
    page.get_by_text("Attention ablation on the file").wait_for(timeout=WAIT_MS)
    page.locator("[role=tabpanel] .vega-embed >> visible=true").first.wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(1500)
    no_errors(page)
    full_shot(page, "33-sanity-curves")
