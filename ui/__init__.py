"""The app's views: `screens/` holds the pages the router in app.py navigates, `views/` the
reusable view functions they draw with (plain data in, a `key` for every widget).

This folder is not called `pages`: Streamlit 1.67 flags a `pages/` folder beside the entry
point as a legacy (v1) multipage app when a server starts, and until the first `st.navigation`
call clears that flag, a fresh server's first sessions run deep links such as `/walkthrough`
through the legacy path, which knows no such page and opens them under a "Page not found"
dialog (2 of 6 fresh deep links did). No setting turns the check off, so the folder has
another name (tests/test_browser_deeplinks.py opens every page as a fresh server's first
request).
"""
