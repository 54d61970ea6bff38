"""The built-in data sets, WikiQA and TrecQA, where this machine has them.

They do not ship with MatchLens (their licences are their own): the app finds them in the folder
named by $MATCHLENS_DATA, else in `shared/data/` beside the checkout (where this project's
workplace keeps them). Each is a folder per data set with train/, dev/ and test/ in the
line-aligned format `data.read_toks_folder` reads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from matching.paths import app_dir
from matching.text.data import TOKS_FILES

DATA_VARIABLE = "MATCHLENS_DATA"
"""Environment variable naming the folder that holds wikiqa/ and trecqa/."""
BUILT_IN = {"wikiqa": "WikiQA", "trecqa": "TrecQA"}
"""Folder name -> the data set's name, in the order they are offered."""
OFFERED_SPLITS = ("test", "dev")
"""Test first: it is what every card reports (read to report; nothing here chooses a model)."""


@dataclass(frozen=True)
class BuiltInSplit:
    """One split of a built-in data set on disk."""

    dataset: str  # "WikiQA"
    split: str  # "test"
    folder: Path

    @property
    def label(self) -> str:
        return f"{self.dataset} {self.split}"

    @property
    def key(self) -> str:
        """Changes when a file of the split changes (what an evaluation's result is keyed on)."""
        stamps = [(self.folder / name).stat() for name in TOKS_FILES]
        return f"{self.folder}:" + ",".join(f"{s.st_size}-{s.st_mtime_ns}" for s in stamps)


def data_root() -> Path:
    """Where the built-in data sets are looked for: $MATCHLENS_DATA, else shared/data beside the checkout."""
    named = os.environ.get(DATA_VARIABLE)
    return Path(named) if named else app_dir().parent / "shared" / "data"


def built_in_splits(root: Path | None = None) -> list[BuiltInSplit]:
    """The splits of WikiQA and TrecQA found under `root` (default `data_root()`) with all their files."""
    root = data_root() if root is None else root
    return [BuiltInSplit(title, split, root / folder / split)
            for folder, title in BUILT_IN.items() for split in OFFERED_SPLITS
            if all((root / folder / split / name).is_file() for name in TOKS_FILES)]
