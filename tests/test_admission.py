"""Page runs take turns in arrival order, and a run never waits past its patience."""

from __future__ import annotations

import threading
import time

import pytest

from ui.views.admission import FifoTurns


def test_runs_are_let_in_in_arrival_order() -> None:
    turns = FifoTurns(1)
    assert turns.acquire()
    order: list[int] = []

    def run(number: int) -> None:
        with turns.turn():
            order.append(number)

    threads = []
    for number in range(5):
        thread = threading.Thread(target=run, args=(number,))
        thread.start()
        threads.append(thread)
        while len(turns._waiting) < number + 1:  # this one is queued before the next arrives
            time.sleep(0.001)
    turns.release()
    for thread in threads:
        thread.join(5)
    assert order == [0, 1, 2, 3, 4]
    assert turns._free == 1 and not turns._waiting


def test_a_run_goes_ahead_without_a_turn_after_its_patience() -> None:
    turns = FifoTurns(1)
    assert turns.acquire()
    with turns.turn(timeout=0.05):  # the slot stays taken: this run goes ahead anyway
        assert not turns._waiting
    turns.release()
    assert turns._free == 1  # the run that never held a slot gave none back


def test_a_run_that_fails_gives_its_turn_back_and_no_turn_is_a_no_op() -> None:
    turns = FifoTurns(2)
    with pytest.raises(RuntimeError), turns.turn():
        raise RuntimeError("page failed")
    with turns.turn(wait=False):
        assert turns._free == 2
    assert turns._free == 2
    with pytest.raises(ValueError):
        FifoTurns(0)
