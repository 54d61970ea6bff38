"""How a config carries to text it never saw, epoch by epoch: the cross-source check of the epoch counts.

Each folder is a model trained on one source and measured, every epoch, on the other source's dev set
(made by `bash configs/data/cross-source.sh`, trained with `python -m matching train --config C --seed S
--data runs/data/wikiqa-to-trecqa --out FOLDER`, or `.../trecqa-all-to-wikiqa`). Prints each run's dev MAP
per epoch, its mean over the epochs a 5-, 8- and 12-epoch schedule averages (3-5, 6-8, 10-12), and the
averaged model's dev MAP. A schedule whose window falls carries less to the unseen source.

    python bench/transfer_curves.py FOLDER [FOLDER ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import fmean

WINDOWS = ((3, 5), (6, 8), (10, 12))
"""The epochs a 5-, 8- and 12-epoch schedule averages (the last 3)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="model folders, each with its card.json")
    args = parser.parse_args()
    labels = [f"epochs {first}-{last}" if n == 0 else f"{first}-{last}" for n, (first, last) in enumerate(WINDOWS)]
    print(f"{'run':64s} {labels[0]:>10s} {labels[1]:>7s} {labels[2]:>7s} {'averaged':>9s}  per epoch")
    for folder in args.folders:
        card = json.loads((folder / "card.json").read_text())
        by_epoch = {entry["epoch"]: entry["dev_MAP"] for entry in card["log"]}
        # a window's mean only where the run reached its last epoch
        windows = [f"{fmean(by_epoch[e] for e in range(first, last + 1)):.4f}" if last in by_epoch else "-"
                   for first, last in WINDOWS]
        label = f"{card['name']} seed {card['seed']} on {card['data']['source']}"
        curve = " ".join(f"{by_epoch[e]:.3f}" for e in sorted(by_epoch))
        print(f"{label:64s} {windows[0]:>10s} {windows[1]:>7s} {windows[2]:>7s} "
              f"{card['metrics']['dev']['MAP']:9.4f}  {curve}")


if __name__ == "__main__":
    main()
