"""Where a Ray evaluation's CPU and time go, on a local cluster started beforehand: one run with 1 worker, one with 2.

Every process of this user that belongs to the run (the driver, the workers, Ray's own processes and actors) is
sampled every 0.25 s for its CPU time; each line prints the CPU seconds a kind of process used during the run (the
sampling thread's own cost falls on the driver's line). The workers also write when their process started, when
their constructor starts and when each shard ends (wall clock), for the start, the first shard and the end of the
run, and which shards each one wrote: how many distinct texts each worker tokenised, against the file's. Ends with
`ray stop`, which stops every Ray process of this user: run it where no other Ray runs.

Run: python bench/ray_cpu.py [--data ../shared/data/wikiqa [runs/data/trecqa-all]] [--pairs 100000] [--models ...]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import tempfile
import threading
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from common import ROOT, resampled
from ray_evaluate import warm_cluster

from matching.evaluation.ray_engine import ShardScorer, evaluate_ray, token_mode_for_joining
from matching.text.data import write_toks_folder
from matching.text.shards import read_shard, shard_ranking_file

print = functools.partial(print, flush=True)  # noqa: A001


def stamped_scorer(log: Path) -> type[ShardScorer]:
    """The engine's scorer, writing to `log` when its constructor starts and when each shard ends (wall clock). Made
    in a function, with `log` in its closure: Ray ships such a class to the workers by value (a class at a module's
    top is imported there by name, without the path the driver set on it)."""

    class StampedScorer(ShardScorer):
        def _stamp(self, what: str, at: float | None = None) -> None:
            with open(log, "a", encoding="utf-8") as file:
                file.write(json.dumps([time.time() if at is None else at, os.getpid(), what]) + "\n")

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._stamp("process", started_at())
            self._stamp("constructor")
            super().__init__(*args, **kwargs)

        def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            written = super().__call__(batch)
            for index in batch["shard"]:
                self._stamp(f"shard {int(index)}")
            return written

    return StampedScorer


def started_at() -> float:
    """When this process started, on the wall clock (Linux: its start in /proc, in clock ticks since boot)."""
    fields = Path("/proc/self/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    since_boot = int(fields[19]) / os.sysconf("SC_CLK_TCK")
    return time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)


def stamps(log: Path) -> list[tuple[float, int, str]]:
    """(wall clock, process, "process" (its start), "constructor" or "shard N") of each stamp in `log`, sorted."""
    lines = log.read_text(encoding="utf-8").split("\n") if log.is_file() else []
    found = sorted(tuple(json.loads(line)) for line in lines if line)
    return [(at, pid, "shard" if what.startswith("shard") else what) for at, pid, what in found]  # type: ignore[misc]


def shards_by_worker(log: Path) -> dict[int, list[int]]:
    """The shards each worker process wrote, in order."""
    lines = log.read_text(encoding="utf-8").split("\n") if log.is_file() else []
    found: dict[int, list[int]] = {}
    for _, pid, what in sorted(tuple(json.loads(line)) for line in lines if line):
        if what.startswith("shard "):
            found.setdefault(pid, []).append(int(what.split()[1]))
    return found


def texts_read(folder: Path, by_worker: dict[int, list[int]]) -> str:
    """How many distinct texts each worker tokenised, against the file's: each worker's caches start empty, so a text
    that two workers meet is tokenised (and its words stemmed) twice, where one worker does it once."""
    sharded = shard_ranking_file(folder)
    seen: dict[int, set[str]] = {}
    for pid, indices in by_worker.items():
        texts = seen[pid] = set()
        for index in indices:
            for item in read_shard(sharded, sharded.shards[index]):
                texts.update((item.question, *item.candidates))
    whole = set().union(*seen.values()) if seen else set()
    each = sum(len(texts) for texts in seen.values())
    return (f"distinct texts: {len(whole):,} in the file; {' + '.join(f'{len(t):,}' for t in seen.values())} read by "
            f"the workers ({each / max(len(whole), 1):.2f}x)")


def listed(values: list[float], digits: int = 1) -> str:
    return ", ".join(f"{value:.{digits}f}" for value in values)


def kind(process: psutil.Process) -> str | None:
    """What part of the run a process is, by its command line; None for what is not Ray's or the run's."""
    if process.pid == os.getpid():
        return "the driver"
    command = " ".join(process.cmdline())
    if command.startswith("ray::"):
        name = command.split()[0].removeprefix("ray::")
        return "the scoring workers" if "Scorer" in name else f"Ray: {name.split('.')[0]}"
    for part in ("raylet", "gcs_server", "log_monitor", "dashboard", "runtime_env", "monitor.py"):
        if part in command:
            return f"Ray: {part}"
    return None


class CpuSampler(threading.Thread):
    """The largest CPU time seen for each process of the run, every 0.25 s until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[int, tuple[str, float]] = {}
        self.stopping = threading.Event()
        self.sample()
        self.before = {pid: cpu for pid, (_, cpu) in self.seen.items()}

    def sample(self) -> None:
        for process in psutil.process_iter():
            try:
                name = kind(process)
                if name is not None:
                    times = process.cpu_times()
                    previous = self.seen.get(process.pid, (name, 0.0))
                    self.seen[process.pid] = (name, max(previous[1], times.user + times.system))
            except (psutil.Error, OSError):
                continue

    def run(self) -> None:
        while not self.stopping.wait(0.25):
            self.sample()

    def used(self) -> dict[str, float]:
        self.stopping.set()
        self.join()
        self.sample()
        by_kind: dict[str, float] = {}
        for pid, (name, cpu) in self.seen.items():
            by_kind[name] = by_kind.get(name, 0.0) + cpu - self.before.get(pid, 0.0)
        return by_kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="+", default=[ROOT.parent / "shared" / "data" / "wikiqa"])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--models", nargs="+", default=["mvlstm-em-kw-all", "amvlstm-q-kw-all", "mcan-kw-all"])
    args = parser.parse_args()
    # Before Ray is imported: the cluster below has a token where one is at hand (as `ray start` decides), none on a
    # machine that never ran Ray (token mode there failed at `ray start`: no token to start with).
    token_mode_for_joining()

    checkpoints = {name: ROOT / "pretrained" / name for name in args.models}
    with tempfile.TemporaryDirectory(prefix="matchlens-ray-cpu-") as scratch:
        folder = write_toks_folder(Path(scratch) / "file", resampled(args.data, args.pairs))
        log = Path(scratch) / "stamps.jsonl"
        scorer = stamped_scorer(log)
        warm_up = write_toks_folder(Path(scratch) / "warm-up", resampled(args.data, 2_000, seed=1))
        with warm_cluster(warm_up, checkpoints, Path(scratch)) as address:
            for workers in (1, 2):
                log.write_text("", encoding="utf-8")
                sampler = CpuSampler()
                sampler.start()
                began, started = time.time(), time.perf_counter()
                evaluate_ray(folder, checkpoints, Path(scratch) / f"out-{workers}", workers=workers, address=address,
                             scorer=scorer)
                whole = time.perf_counter() - started
                used = sampler.used()
                stamped = stamps(log)
                processes = sorted(at - began for at, _, what in stamped if what == "process")
                constructors = sorted(at - began for at, _, what in stamped if what == "constructor")
                ends: dict[int, list[float]] = {}
                for at, pid, what in stamped:
                    if what == "shard":
                        ends.setdefault(pid, []).append(at - began)
                firsts = sorted(min(times) for times in ends.values())
                lasts = sorted(max(times) for times in ends.values())
                steps = [later - earlier for times in ends.values() for earlier, later in pairwise(times)]
                print(f"{workers} worker(s): the run {whole:.1f} s; worker processes started at "
                      f"{listed(processes, 2)} s, constructors at {listed(constructors, 2)} s; first "
                      f"shards written at {listed(firsts)} s, then one every {statistics.median(steps):.2f} s (median, "
                      f"each worker); last shards at {listed(lasts)} s")
                print(f"   {texts_read(folder, shards_by_worker(log))}")
                for name, cpu in sorted(used.items(), key=lambda item: -item[1]):
                    if cpu >= 0.05:
                        print(f"   {cpu:6.2f} CPU s  {name}")


if __name__ == "__main__":
    main()
