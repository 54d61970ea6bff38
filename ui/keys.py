"""Session-state keys the router reads before the package is imported (see app.py: a fresh server's first
run shows that it is starting while torch and the models' code load). The other keys live in
ui/views/session.py."""

PRESENT, STEP, WALK_MODEL = "ml_present", "ml_step", "ml_walk_model"
"""The view (presentation mode, walkthrough step and model): kept in the link, never part of the input."""
