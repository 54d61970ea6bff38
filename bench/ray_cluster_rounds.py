"""Rounds of Ray runs on one local cluster started beforehand, in an order of your choosing: 2 / 1 with the machine's
drift falling either way, and what a setting of Ray Data's scheduling loop changes.

`ray_evaluate.py` times 1 worker then 2 in each round; a machine that slows down over minutes then lowers the 1-worker
side of every ratio less than the 2-worker side, or more. Here `--workers 2 1` times the other order. `--loop-timeouts`
runs each round once per value of Ray Data's `WAIT_FOR_TASK_COMPLETION_TIMEOUT_S` (Ray 2.60: how long the driver's
loop waits for a task to finish before it looks again; 0.1 s is Ray's own), a private constant set here to measure
it, never by the engine. Each run prints its wall time and the CPU seconds the driver and Ray's own processes used
(`ray_cpu.CpuSampler`); at the end, each setting's times and 2 / 1 ratios. Ends with `ray stop`, which stops every Ray
process of this user: run it where no other Ray runs.

Run: python bench/ray_cluster_rounds.py [--models mvlstm cdssm | all] [--pairs 100000] [--rounds 3]
     [--workers 1 2] [--loop-timeouts 0.1 1.0]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import tempfile
import time
from pathlib import Path

from common import ROOT, model_names, resampled
from ray_cpu import CpuSampler
from ray_evaluate import warm_cluster

from matching.evaluation.ray_engine import evaluate_ray, token_mode_for_joining
from matching.text.data import write_toks_folder

print = functools.partial(print, flush=True)  # noqa: A001


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="+", default=[ROOT.parent / "shared" / "data" / "wikiqa"])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--models", nargs="+", default=["mvlstm", "cdssm"], help="names, or all (every checkpoint)")
    parser.add_argument("--pretrained", type=Path, default=ROOT / "pretrained")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="the order of a round's runs")
    parser.add_argument("--loop-timeouts", type=float, nargs="+", default=[0.1])
    args = parser.parse_args()
    token_mode_for_joining()  # before Ray is imported, as ray_cpu.py
    args.models = model_names(args.pretrained, args.models)
    checkpoints = {name: args.pretrained / name for name in args.models}
    print(f"{len(checkpoints)} models; runs in each round: workers {args.workers} x loop timeouts {args.loop_timeouts}")
    times: dict[tuple[float, int], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="matchlens-ray-rounds-") as scratch:
        folder = write_toks_folder(Path(scratch) / "file", resampled(args.data, args.pairs))
        warm_up = write_toks_folder(Path(scratch) / "warm-up", resampled(args.data, 2_000, seed=1))
        with warm_cluster(warm_up, checkpoints, Path(scratch)) as address:
            import ray.data._internal.execution.streaming_executor_state as executor_state

            for round_ in range(1, args.rounds + 1):
                for workers in args.workers:
                    for timeout in args.loop_timeouts:
                        executor_state.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S = timeout
                        sampler = CpuSampler()
                        sampler.start()
                        started = time.perf_counter()
                        evaluate_ray(folder, checkpoints, Path(scratch) / f"out-{round_}-{workers}-{timeout}",
                                     workers=workers, address=address)
                        seconds = time.perf_counter() - started
                        used = sampler.used()
                        times.setdefault((timeout, workers), []).append(seconds)
                        ray_own = sum(cpu for name, cpu in used.items() if name.startswith("Ray"))
                        print(f"round {round_}, {workers} worker(s), loop timeout {timeout} s: {seconds:6.1f} s; CPU: "
                              f"workers {used.get('the scoring workers', 0.0):.1f} s, driver "
                              f"{used.get('the driver', 0.0):.2f} s, Ray's own processes {ray_own:.2f} s")
            executor_state.WAIT_FOR_TASK_COMPLETION_TIMEOUT_S = 0.1
    for timeout in args.loop_timeouts:
        for workers in sorted(set(args.workers)):
            runs = times[(timeout, workers)]
            print(f"loop timeout {timeout} s, {workers} worker(s): {', '.join(f'{s:.1f}' for s in runs)} s, median "
                  f"{statistics.median(runs):.1f} s")
        if {1, 2} <= set(args.workers):
            ratios = [one / two for one, two in zip(times[(timeout, 1)], times[(timeout, 2)], strict=True)]
            print(f"loop timeout {timeout} s: 2 / 1 {', '.join(f'{r:.3f}x' for r in ratios)}")


if __name__ == "__main__":
    main()
