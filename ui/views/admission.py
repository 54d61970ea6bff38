"""Admission: page runs of one server process take turns, first come first served.

Python runs one thread at a time (the GIL). When twenty students open a link in the same
second, twenty script threads share the interpreter in 5 ms slices: every run progresses,
none finishes, and all of them finish together at the end (and the switching itself costs
CPU). Letting a few runs in at a time, in arrival order, serves the first student in a
fraction of a second and the last no later than before.

Long runs the person asked for (scoring an uploaded file, the sanity checks) are not held
to a turn: they would make everyone else wait behind them.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

TURNS = int(os.environ.get("MATCHLENS_TURNS", "1"))
"""Page runs let in at once per process. One: a run is mostly Python, which runs one thread at a
time anyway (bench/sessions.py, 20 sessions: Rank p95 2.2 s with 1, 3.4 s with 2, 5.6 to 6.1 s
with no turns)."""
PATIENCE = float(os.environ.get("MATCHLENS_TURN_PATIENCE", "15"))
"""Seconds a run waits for its turn before it goes ahead anyway: a stuck run never blocks the rest."""


class FifoTurns:
    """A semaphore that hands free slots to waiting threads in the order they arrived."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("at least one run must be let in")
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: deque[threading.Event] = deque()

    def acquire(self, timeout: float | None = None) -> bool:
        """Wait for a slot (at most `timeout` seconds); False: no slot was taken."""
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
                return True
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(timeout):
            return True  # the releasing thread handed its slot to this one
        with self._lock:
            if turn.is_set():  # handed over just as the wait ran out: keep it
                return True
            self._waiting.remove(turn)
            return False

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()
            else:
                self._free += 1

    @contextmanager
    def turn(self, wait: bool = True, timeout: float | None = None) -> Iterator[None]:
        """Hold a slot for the block (`wait=False`, or no slot within `timeout`: run without one)."""
        held = wait and self.acquire(timeout)
        try:
            yield
        finally:
            if held:
                self.release()


gate = FifoTurns(TURNS)
