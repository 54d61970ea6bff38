"""Training, checkpoints, model cards and the report built from them."""
