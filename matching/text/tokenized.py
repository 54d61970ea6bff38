"""Ranking lists with their texts tokenised: what evaluation, training and the studies score."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from matching.text.data import RankingList
from matching.text.tokens import TextError, Token, collector_paused, tokenize


@dataclass(frozen=True)
class TokenizedList:
    item: RankingList
    question: list[Token]
    candidates: list[list[Token]]


def tokenize_lists(lists: Iterable[RankingList], limit: int | None = None) -> tuple[list[TokenizedList], list[str]]:
    """The lists that can be ranked, tokenised, and why each other one is left out (no words, no candidates, a text
    far too long to read: one such line of a collection no longer stops its whole evaluation); with `limit`,
    reading stops once that many can be ranked (the rest of the file is not tokenised)."""
    kept, skipped = [], []
    with collector_paused:
        for item in lists:
            if limit is not None and len(kept) >= limit:
                break
            name = item.qid or "a question left empty"
            try:
                question = tokenize(item.question)
                candidates = [tokenize(c) for c in item.candidates] if question else []
            except TextError as error:
                skipped.append(f"{name}: {error}")
                continue
            if not question:
                skipped.append(f"{name}: the question has no words")
            elif not item.candidates:
                skipped.append(f"{name}: no candidates")
            else:
                kept.append(TokenizedList(item, question, candidates))
            # Let threads waiting for the GIL in (scoring threads between two torch ops) have it now:
            # otherwise each waits out the interpreter's 5 ms switch interval, and scoring all but
            # stops while the texts are read (an upload then took ~2 s longer).
            time.sleep(0)
    return kept, skipped
