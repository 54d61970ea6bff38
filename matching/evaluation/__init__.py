"""Metrics, baselines, dataset evaluation, slices, seed studies and tables."""
