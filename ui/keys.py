"""The view's session-state keys, apart from ui/views/session.py (which holds the others) because the router
reads PRESENT before it imports torch and the package: a fresh server's first run then shows that it is
starting instead of a blank page (app.py). This module imports nothing."""

PRESENT, STEP, WALK_MODEL = "ml_present", "ml_step", "ml_walk_model"
"""The view (presentation mode, walkthrough step and model): kept in the link, never part of the input."""

WALK_DEFAULTED = "ml_walk_defaulted"
"""The walkthrough's model is its default for the input (no link or person chose it): left out of the link, which
opens the same default, and chosen again when the input changes."""
