"""Which averaging window to ship: dev MAP of the average of the last k epochs' weights, for every k, from runs
already trained.

A run with `average_epochs` N records in its last log entry the dev MAP that the average of its last k epochs
gives, for k = 1 to N (`dev_MAP_averaging_the_last`: the same epochs, only the average differs), pooled and per
source of a combined dev set. So one run per seed answers for every window. This prints, for each folder, the
figure the default models are chosen by (the mean of the dev sources' MAP where the dev set has several, its MAP
otherwise) for each k, then each k's mean and sample sd over the folders given and its change from a
reference window (--against, the one shipped now), with Welch's t-test. Give the seeds of one setting at a time:
the runs on WikiQA + TRAIN-ALL (runs/exp/NAME/seed-*), or those trained on one source and measured on the
other's dev set (runs/cross/...).

    python bench/averaging_windows.py --against 3 FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import fmean, stdev

import common  # noqa: F401  (puts the checkout on sys.path)

from matching.training.reporting import welch_text  # noqa: E402


def chosen_by(figures: dict[str, float]) -> float:
    """The mean of the sources' dev MAP where the dev set has several sources; the pooled dev MAP otherwise."""
    sources = [value for name, value in figures.items() if name != "dev"]
    return fmean(sources) if sources else figures["dev"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="model folders, each with its card.json")
    parser.add_argument("--against", type=int, default=3, help="the window shipped now (default 3)")
    args = parser.parse_args()
    by_window: dict[int, list[float]] = {}
    for folder in args.folders:
        card = json.loads((folder / "card.json").read_text())
        windows = card["log"][-1].get("dev_MAP_averaging_the_last")
        if not windows:
            print(f"{folder}: no windows recorded (trained before they were, or without average_epochs)")
            continue
        row = {int(k): chosen_by(figures) for k, figures in windows.items()}
        for k, value in row.items():
            by_window.setdefault(k, []).append(value)
        sources = ", ".join(name for name in next(iter(windows.values())) if name != "dev") or "dev"
        print(f"{card['name']} seed {card['seed']} ({sources}): "
              + "  ".join(f"last {k}: {value:.4f}" for k, value in sorted(row.items())))
    reference = by_window.get(args.against)
    if not reference:
        return
    print(f"\nover {len(reference)} run(s), against the last {args.against}:")
    for k, values in sorted(by_window.items()):
        spread = f"sd {stdev(values):.4f}" if len(values) > 1 else "one run"
        change = welch_text(k != args.against, values, reference) or f"{fmean(values) - fmean(reference):+.4f}"
        print(f"  last {k}: mean {fmean(values):.4f} ({spread}), change (Welch p) {change}  [{len(values)} runs]")


if __name__ == "__main__":
    main()
