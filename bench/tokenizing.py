"""A collection's first read in a fresh process: tokenising with plain chunks read without spaCy, against spaCy on
every chunk (the reference, what `tokenize` did before `PLAIN_CHUNK`).

A fresh process meets every word of a collection for the first time: a Ray worker's first shards, the app's first
upload, `evaluate`'s first chunk. A file of N pairs (default 100,000) is resampled from the question lists of the
data folders (every split, with replacement, under new ids, written to a temporary folder removed at the end). Each
run starts a fresh interpreter that reads the file and times `tokenize_lists` over it, the two ways in turn (A B A B
...), so that the machine's drift falls on both sides of each ratio. Each child also prints a digest of every token
(text, offsets, lookup key) and the two ways must give the same one.

Run: python bench/tokenizing.py [--data ../shared/data/wikiqa runs/data/trecqa-all] [--pairs 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, resampled

from matching.text.data import write_toks_folder

print = functools.partial(print, flush=True)  # noqa: A001  (each figure shows as it comes, piped or not)

WAYS = {"plain chunks without spaCy": "fast", "spaCy on every chunk (reference)": "spacy"}


def child(way: str, folder: Path) -> None:
    """Time the first tokenising of `folder` in this fresh process; print the seconds and the tokens' digest."""
    import matching.text.tokens as tokens

    if way == "spacy":  # the reference: no chunk is plain, so spaCy reads every one
        tokens.PLAIN_CHUNK = re.compile(r"(?!)")
    from matching.text.data import read_toks_folder
    from matching.text.tokenized import tokenize_lists

    lists = read_toks_folder(folder)
    started = time.perf_counter()
    kept, _ = tokenize_lists(lists)
    seconds = time.perf_counter() - started
    digest = hashlib.sha256()
    for item in kept:
        for text in (item.question, *item.candidates):
            for token in text:
                digest.update(f"{token.text}\0{token.start}\0{token.end}\0{token.key}\n".encode())
    print(f"{seconds:.3f} {digest.hexdigest()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="+",
                        default=[ROOT.parent / "shared" / "data" / "wikiqa", ROOT / "runs" / "data" / "trecqa-all"],
                        help="folders whose lists are drawn from (runs/data/trecqa-all: bash "
                        "configs/data/wikiqa+trecqa-all.sh)")
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("WAY", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return

    folders = [folder for folder in args.data if folder.is_dir()]
    with tempfile.TemporaryDirectory(prefix="matchlens-tokenizing-bench-") as scratch:
        lists = resampled(folders, args.pairs)
        folder = write_toks_folder(Path(scratch) / "file", lists)
        pairs = sum(len(item.candidates) for item in lists)
        texts = {text for item in lists for text in (item.question, *item.candidates)}
        chunks = {chunk for text in texts for chunk in text.split()}
        print(f"file: {pairs:,} pairs resampled from {', '.join(map(str, folders))}; {len(texts):,} distinct texts, "
              f"{len(chunks):,} distinct whitespace-free chunks")
        seconds: dict[str, list[float]] = {label: [] for label in WAYS}
        digests: dict[str, set[str]] = {label: set() for label in WAYS}
        for run in range(1, args.runs + 1):
            for label, way in WAYS.items():
                out = subprocess.run([sys.executable, __file__, "--child", way, str(folder)], check=True,
                                     capture_output=True, text=True, cwd=ROOT).stdout.split()
                seconds[label].append(float(out[0]))
                digests[label].add(out[1])
            print(f"run {run}: " + ", ".join(f"{label} {seconds[label][-1]:.2f} s" for label in WAYS))
        fast, reference = (seconds[label] for label in WAYS)
        ratios = [r / f for f, r in zip(fast, reference, strict=True)]
        for label in WAYS:
            print(f"{label}: median {statistics.median(seconds[label]):.2f} s "
                  f"({min(seconds[label]):.2f} to {max(seconds[label]):.2f}), "
                  f"{pairs / statistics.median(seconds[label]):,.0f} pairs/s")
        print(f"reference / plain chunks, run by run: {', '.join(f'{r:.2f}x' for r in ratios)}; "
              f"median {statistics.median(ratios):.2f}x")
        same = len(digests[next(iter(WAYS))] | digests[list(WAYS)[1]]) == 1
        print(f"the same tokens both ways, in every run: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
