"""The app's views: `screens/` holds the pages the router in app.py navigates, `views/` the
reusable view functions they draw with (plain data in, a `key` for every widget).

The page scripts sit one folder down on purpose: Streamlit treats `*.py` files directly in
a `pages/` folder beside the entry point as legacy (v1) multipage apps, which would run a
deep-linked page without the router in app.py.
"""
