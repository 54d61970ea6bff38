"""The built-in data sets: WikiQA and TrecQA where this machine has them, and the collections that ship.

WikiQA and TrecQA do not ship with MatchLens (their licences are their own): the app finds them in
the folder named by $MATCHLENS_DATA, else in `shared/data/` beside the checkout (where this
project's workplace keeps them). Each is a folder per data set with train/, dev/ and test/ in the
line-aligned format `data.read_toks_folder` reads.

The section collection (`samples/section-questions-*.csv`, questions written from one sentence of
an encyclopedia section, every sentence a candidate) was written for MatchLens and ships with it,
so it is offered on every machine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from matching.paths import app_dir, samples_dir
from matching.text.data import TOKS_FILES, RankingList, content_key, read_ranking_file, read_toks_folder

DATA_VARIABLE = "MATCHLENS_DATA"
"""Environment variable naming the folder that holds wikiqa/ and trecqa/."""
BUILT_IN = {"wikiqa": "WikiQA", "trecqa": "TrecQA"}
"""Folder name -> the data set's name, in the order they are offered."""
OFFERED_SPLITS = ("test", "dev")
"""Test first: it is what every card reports (read to report; nothing here chooses a model)."""
SAMPLE_FILE = "sample-ranking.csv"
"""The sample file in samples/: 8 questions written for MatchLens, 4 candidates each (the pages' "Try the sample")."""
SHIPPED_COLLECTIONS = {"section-questions-a.csv": "Section questions, set A",
                       "section-questions-b.csv": "Section questions, set B",
                       "section-questions-c.csv": "Section questions, set C"}
"""File in samples/ -> the name offered (bench/section_collection.py reads the same files; sets A and C are the ones
the project chooses with, set B the one it reads only to report)."""


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

    def read(self) -> list[RankingList]:
        return read_toks_folder(self.folder)


@dataclass(frozen=True)
class ShippedCollection:
    """A ranking file that ships with MatchLens, offered beside the data sets found on disk."""

    label: str  # "Section questions, set A"
    path: Path

    @property
    def key(self) -> str:
        return content_key(self.path.read_bytes())

    def read(self) -> list[RankingList]:
        return read_ranking_file(self.path)


def link_name(label: str) -> str:
    """How a link names an offered data set ("WikiQA test" -> "wikiqa-test", "Section questions, set A" ->
    "section-questions-set-a"): lowercase letters, digits and hyphens, which a link carries as they are."""
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


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


def built_in_dev_splits(root: Path | None = None) -> dict[str, list[RankingList]]:
    """Each built-in data set's dev split found under `root` (its folder name -> its lists): what a model's card
    names as the data it was chosen on (`reporting.chosen_on`)."""
    root = data_root() if root is None else root
    return {split.folder.parent.name: split.read() for split in built_in_splits(root) if split.split == "dev"}


def shipped_collections(folder: Path | None = None) -> list[ShippedCollection]:
    """The section collection's two sets, where the checkout has them (`folder`: default samples/)."""
    folder = samples_dir() if folder is None else folder
    return [ShippedCollection(title, folder / name) for name, title in SHIPPED_COLLECTIONS.items()
            if (folder / name).is_file()]


def sample_file(folder: Path | None = None) -> ShippedCollection:
    """The sample ranking file, named by its file name (`folder`: default samples/)."""
    folder = samples_dir() if folder is None else folder
    return ShippedCollection(SAMPLE_FILE, folder / SAMPLE_FILE)
