"""Traced passes kept for whoever asks again: one model over one question and its candidates, once per process.

A classroom repeats itself: twenty students open the teacher's link, some add a model, the
teacher goes back to the previous question. Each model's traced pass over an input depends only
on that model and the exact words of the input, so it is computed once and handed to every
caller that asks for the same (model, question, candidates): a student who adds a model costs
one pass, not one per chosen model.

The key is the model (its name and the object) and every word of the question and of each
candidate as parsed (text, offsets, lookup key, unknown and truncated flags): another input,
differing in a single character, never gets this one's pass. The least recently used passes
go first once the kept passes' arrays exceed `max_bytes`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from matching.explain.explanation import TracedExplanations
from matching.explain.matcher import Matcher
from matching.text.tokens import Token

PassKey = tuple[str, int, tuple[Token, ...], tuple[tuple[Token, ...], ...]]


@dataclass(frozen=True)
class _Kept:
    matcher: Matcher  # held so that the id in the key cannot be reused by another model
    traced: TracedExplanations
    nbytes: int


class PassCache:
    """A bounded, thread-safe, least-recently-used store of traced passes (see the module's docstring)."""

    def __init__(self, max_bytes: int = 256 * 2**20) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._kept: OrderedDict[PassKey, _Kept] = OrderedDict()
        self.nbytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._kept)

    def traced(self, name: str, matcher: Matcher, question: Sequence[Token],
               candidates: Sequence[Sequence[Token]]) -> TracedExplanations:
        """`matcher.traced(question, candidates)`, computed once while kept."""
        key: PassKey = (name, id(matcher), tuple(question), tuple(tuple(c) for c in candidates))
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                self.hits += 1
                return kept.traced
            self.misses += 1
        # Outside the lock: passes of other inputs go on meanwhile (two callers of one new input may both
        # compute it; the first one kept is the one handed out from then on).
        traced = matcher.traced(question, candidates)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                return kept.traced
            kept = self._kept[key] = _Kept(matcher, traced, traced.nbytes)
            self.nbytes += kept.nbytes
            while self.nbytes > self.max_bytes and len(self._kept) > 1:
                _, dropped = self._kept.popitem(last=False)
                self.nbytes -= dropped.nbytes
        return traced

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self.nbytes = 0
