"""The app's state, as the pages use it: one import over three services.

- `cached`: what depends only on the input (loaded models, parsed requests, rankings), once per server;
- `session`: this visitor's canonical input in `st.session_state` and what derives from it;
- `link`: the shared link, read once per session and rewritten after every edit.
"""

from __future__ import annotations

from ui.views.cached import APP_DIR, DEFAULT_MODELS, Request, load_errors, models, models_having, models_root
from ui.views.link import LINK_TOO_LONG, LINKED_VIEWS, URL_DONE, current_link, read_link_once, write_link
from ui.views.session import (
    BEFORE,
    CANDIDATES,
    GOLD,
    MODELS,
    PAIR,
    PICK,
    PINNED,
    PRESENT,
    QUESTION,
    STEP,
    URL_ERROR,
    URL_ERROR_PAGE,
    URL_NOTE,
    WALK_MODEL,
    Current,
    before_comparison,
    before_snapshot,
    chosen_models,
    compare_pair,
    current,
    current_request,
    inputs_snapshot,
    load_example,
    matrix_keys,
    pick_index,
    pin,
    pinned,
    presenting,
    seed_defaults,
    set_inputs,
    unpin,
    view,
)


def init() -> None:
    """Seed the canonical state once per session (from the link when it carries state)."""
    seed_defaults()
    read_link_once()


__all__ = [
    "models_having",
    "APP_DIR", "BEFORE", "CANDIDATES", "DEFAULT_MODELS", "GOLD", "LINK_TOO_LONG", "LINKED_VIEWS", "MODELS", "PICK",
    "PRESENT",
    "QUESTION", "STEP", "URL_DONE", "URL_ERROR", "URL_NOTE", "WALK_MODEL", "Current", "Request", "before_comparison",
    "chosen_models", "current", "current_request", "init", "inputs_snapshot", "load_example", "load_errors",
    "current_link", "matrix_keys", "models", "models_root", "pick_index", "presenting", "set_inputs", "view",
    "write_link",
    "PAIR", "PINNED", "URL_ERROR_PAGE", "before_snapshot", "compare_pair", "pin", "pinned", "unpin",
]
