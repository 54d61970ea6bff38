"""How far an evaluation is, in one fraction and one line of text: for the CLI and the Evaluate page.

`evaluation.dataset.evaluate` reports each stage as it advances (`Progress`): the questions
read, and each model's pairs scored. `EvaluationProgress` keeps them and says where the whole
run is; `ConsoleProgress` shows that on a terminal as one bar updating in place (tqdm), and
elsewhere (a log, a pipe) as a plain line at every tenth of the work, without control characters.
The app draws the same fraction and text with its own progress bar (the package never imports
streamlit).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

Progress = Callable[[int, int, str], None]
"""progress(done, total, what): called as work advances; `what` is a model's name, or READING
while the texts are read (tokenised)."""
READING = "reading the texts"

Show = Callable[[float, str], None]
"""show(fraction of the work done in [0, 1], one line saying how far each stage is)."""


class EvaluationProgress:
    """A `Progress` callback that keeps every stage's (done, total) and passes the whole run's
    fraction and text to `show` at each report.

    The fraction is the mean of the stages' fractions (reading, then each model), so that a run
    of ten models is at 50 % when reading is done and every model has scored half the pairs.
    """

    def __init__(self, questions: int, pairs: int, models: Sequence[str], show: Show | None = None) -> None:
        self.models = list(models)
        self.stages: dict[str, tuple[int, int]] = {READING: (0, max(questions, 1)),
                                                   **{m: (0, max(pairs, 1)) for m in self.models}}
        self.show = show

    def __call__(self, done: int, total: int, what: str) -> None:
        self.stages[what] = (done, max(total, 1))
        if self.show:
            self.show(self.fraction, self.text())

    @property
    def fraction(self) -> float:
        return min(1.0, sum(d / t for d, t in self.stages.values()) / len(self.stages))

    def text(self) -> str:
        read, questions = self.stages[READING]
        text = f"Read {read:,} of {questions:,} questions"
        if self.models:
            scored, pairs = min(self.stages[m] for m in self.models)
            unfinished = [self.stages[m][0] for m in self.models if self.stages[m][0] < self.stages[m][1]]
            finished = len(self.models) - len(unfinished)
            if 0 < finished < len(self.models):
                # Models scored one after another: "every model has scored 0" beside "2 of 3 models done" read as a
                # contradiction, so the finished ones are counted and the one at work said on its own.
                text += f" · {finished} of {len(self.models)} models have scored all {pairs:,} pairs"
                text += f", the next {max(unfinished):,}" if max(unfinished) else ""
            else:
                text += f" · every model has scored {scored:,} of {pairs:,} pairs"
        return text


class ConsoleProgress:
    """`show` for the command line, on `stream` (stderr by default).

    A terminal gets one tqdm bar updating in place, with the stages' text beside it. Anything
    else (a file, a pipe, a CI log) gets one plain line each time the run passes another tenth
    of its work, and one when it ends: at most 11 lines, no carriage returns or escape codes.
    Use as a context manager, so that the bar is closed (or the last line written) at the end.
    """

    STEPS = 10

    def __init__(self, stream: TextIO | None = None, interactive: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.started = time.perf_counter()
        self.step = -1  # the last tenth reported in plain lines
        self.last: tuple[float, str] = (0.0, "")
        self.reported = False  # a run that ends (or fails) before its first report writes no line
        self.bar = None
        if self.interactive:
            from tqdm import tqdm

            self.bar = tqdm(total=1000, file=self.stream, dynamic_ncols=True,
                            bar_format="{percentage:3.0f}%|{bar:20}| {elapsed}<{remaining} {desc}")

    def __call__(self, fraction: float, text: str) -> None:
        self.last, self.reported = (fraction, text), True
        if self.bar is not None:
            self.bar.set_description_str(text, refresh=False)
            self.bar.update(round(fraction * 1000) - self.bar.n)
            return
        step = int(fraction * self.STEPS + 1e-9)
        if step > self.step and step < self.STEPS:  # the last tenth is written once, by `close`
            self.step = step
            self._line(fraction, text)

    def _line(self, fraction: float, text: str) -> None:
        self.stream.write(f"{fraction:4.0%} {text} ({time.perf_counter() - self.started:.0f} s)\n")
        self.stream.flush()

    def close(self, failed: bool = False) -> None:
        """Close the bar, or write the last line (not after a failure: the error says where the run stopped)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.step < self.STEPS and self.reported and not failed:
            self.step = self.STEPS
            self._line(*self.last)

    def __enter__(self) -> ConsoleProgress:
        return self

    def __exit__(self, failure: type[BaseException] | None, *exc: object) -> None:
        self.close(failed=failure is not None)
