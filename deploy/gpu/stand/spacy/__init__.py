"""A stand-in for spaCy on a GPU machine that has no package registry: the real spaCy's split of each
whitespace-free chunk of the carried data (`../chunks.json.gz`, written by deploy/gpu/carry.py with spaCy's blank
English tokenizer), and its table of exceptions (`../special_cases.json`), which `matching.text.tokens` asks before
it takes a plain chunk for one word. A chunk not in the table raises KeyError, so nothing is ever tokenized
differently."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

with gzip.open(Path(__file__).parent.parent / "chunks.json.gz", "rt", encoding="utf-8") as _handle:
    TABLE: dict[str, list[tuple[int, str, bool]]] = json.load(_handle)


class Token:
    __slots__ = ("idx", "text", "is_space")

    def __init__(self, idx: int, text: str, is_space: bool) -> None:
        self.idx, self.text, self.is_space = idx, text, is_space


class Tokenizer:
    rules = dict.fromkeys(json.loads((Path(__file__).parent.parent / "special_cases.json").read_text(encoding="utf-8")))

    def __call__(self, chunk: str) -> list[Token]:
        return [Token(*row) for row in TABLE[chunk]]


class Language:
    tokenizer = Tokenizer()


def blank(lang: str) -> Language:
    if lang != "en":
        raise ValueError(f"the stand-in knows English only, not {lang!r}")
    return Language()
