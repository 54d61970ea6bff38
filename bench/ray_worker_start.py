"""What a job's runtime environment costs a Ray run before its workers start: the engine's own run, joining a
local cluster started beforehand, with and without a runtime environment given on joining.

The engine joins a cluster without one (each worker turns oneDNN's kernel cache off itself); a job that gives one
(here the same setting, `{"env_vars": {"ONEDNN_PRIMITIVE_CACHE_CAPACITY": "0"}}`, as the engine did until stop 80)
has its workers started through Ray's runtime-environment agent. On a small file (3 shards, 2 workers) each pair of
runs is timed in turn, in alternating order: the seconds from the run's start to each worker's constructor, and the
whole run. Ends with `ray stop`, which stops every Ray process of this user: run it where no other Ray runs.

First, that a worker's own setting works: three fresh interpreters run a Bi-LSTM and a linear layer over 20 lengths
by 59 batch sizes, with oneDNN's cache left on, turned off after `import torch` (as a worker does) and turned off in
the environment before the process starts; each prints how much the process grew.

Run: python bench/ray_worker_start.py [--data ../shared/data/wikiqa] [--pairs 11000] [--pairs-of-runs 4]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ROOT, resampled
from ray_cpu import stamped_scorer, stamps
from ray_evaluate import warm_cluster

from matching.evaluation.ray_engine import ONEDNN_CACHE, evaluate_ray, token_mode_for_joining
from matching.text.data import write_toks_folder

print = functools.partial(print, flush=True)  # noqa: A001


def kernel_cache_growth(setting: str) -> None:
    """One interpreter of the first check, `setting`: "left on", "off after import torch", "off in the environment"."""
    import psutil
    import torch

    if setting == "off after import torch":
        os.environ[ONEDNN_CACHE] = "0"
    torch.set_num_threads(1)
    lstm, linear = torch.nn.LSTM(50, 64, batch_first=True, bidirectional=True), torch.nn.Linear(128, 128)
    before = psutil.Process().memory_info().rss
    with torch.no_grad():
        for texts in range(1, 60):
            for length in range(5, 45, 2):
                lstm(torch.randn(texts, length, 50))
                linear(torch.randn(texts * length, 128))
    grew = (psutil.Process().memory_info().rss - before) / 2**20
    print(f"oneDNN's kernel cache {setting:>22}: the process grew {grew:4.0f} MiB over 1,180 shapes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel-cache", help=argparse.SUPPRESS)  # one interpreter of the first check
    parser.add_argument("--data", type=Path, nargs="+", default=[ROOT.parent / "shared" / "data" / "wikiqa"])
    parser.add_argument("--pairs", type=int, default=11_000, help="3 shards of the engine's size")
    parser.add_argument("--pairs-of-runs", type=int, default=4)
    parser.add_argument("--models", nargs="+", default=["mvlstm-em-kw-all", "amvlstm-q-kw-all", "mcan-kw-all"])
    args = parser.parse_args()
    if args.kernel_cache:
        kernel_cache_growth(args.kernel_cache)
        return
    for setting in ("left on", "off after import torch", "off in the environment"):
        environment = {key: value for key, value in os.environ.items() if key != ONEDNN_CACHE}
        if setting == "off in the environment":
            environment[ONEDNN_CACHE] = "0"
        subprocess.run([sys.executable, __file__, "--kernel-cache", setting], env=environment, check=True)

    # Before Ray is imported: the cluster below has a token where one is at hand (as `ray start` decides), none on a
    # machine that never ran Ray (token mode there failed at `ray start`: no token to start with).
    token_mode_for_joining()
    import ray

    joins = ray.init

    def with_runtime_environment(*positional: Any, **named: Any) -> Any:
        return joins(*positional, **named, runtime_env={"env_vars": {ONEDNN_CACHE: "0"}})

    checkpoints = {name: ROOT / "pretrained" / name for name in args.models}
    seconds: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="matchlens-ray-start-") as scratch:
        folder = write_toks_folder(Path(scratch) / "file", resampled(args.data, args.pairs))
        log = Path(scratch) / "stamps.jsonl"
        scorer = stamped_scorer(log)
        try:
            with warm_cluster(folder, checkpoints, Path(scratch)) as address:
                runs = 0
                for pair in range(args.pairs_of_runs):
                    for given in (True, False) if pair % 2 == 0 else (False, True):
                        ray.init = with_runtime_environment if given else joins
                        log.write_text("", encoding="utf-8")
                        runs += 1
                        began, started = time.time(), time.perf_counter()
                        evaluate_ray(folder, checkpoints, Path(scratch) / f"out-{runs}", workers=2, address=address,
                                     scorer=scorer)
                        whole = time.perf_counter() - started
                        constructors = [at - began for at, _, what in stamps(log) if what == "constructor"]
                        seconds[given].append((constructors[-1], whole))
                        print(f"{'with' if given else 'without'} a runtime environment: the workers' constructors "
                              f"at {', '.join(f'{s:.2f}' for s in constructors)} s; the run {whole:.1f} s")
        finally:
            ray.init = joins
    for given, timed in ((given, timed) for given, timed in seconds.items() if timed):
        print(f"{'with' if given else 'without'} a runtime environment, medians of {len(timed)} runs: the last "
              f"worker's constructor at {statistics.median(s for s, _ in timed):.2f} s, the run "
              f"{statistics.median(w for _, w in timed):.2f} s")


if __name__ == "__main__":
    main()
