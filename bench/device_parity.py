"""Every shipped checkpoint evaluated on the CPU and on a GPU: the same per-question AP, and the rates.

`python -m matching evaluate --device cuda` moves the models, and only them, to the GPU (`Matcher.to`);
the tokenizer, the keyword features and the metrics stay on the CPU. This bench runs the one-process
evaluation (`dataset.evaluate`) of every checkpoint under --pretrained on the same lists twice, once per
device, and prints per model: MAP on each, the largest difference of a question's AP, the questions whose
top answer moved, and pairs/s on each device. A device only moves the arithmetic, so a question's AP may
move only where two candidates' scores lie within float32 rounding of each other.

On a machine without CUDA it prints the CPU half and says so.

    python bench/device_parity.py [--data runs/data/wikiqa+trecqa-all/dev] [--models mcan mvlstm ...]
    python bench/device_parity.py --data runs/data/wikiqa+trecqa-all --pairs 100000 --models mcan-kw-all ...
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from common import ROOT, resampled

from matching.evaluation.dataset import Evaluation, default_workers, evaluate
from matching.explain.matcher import choose_device
from matching.text.data import open_ranking_file, write_toks_folder
from matching.training.checkpoint import load_all


def timed_evaluation(data: Path, models: dict, device: torch.device) -> tuple[Evaluation, float]:  # type: ignore[type-arg]
    lists = open_ranking_file(data)  # a toks folder or a file, read a question at a time
    moved = {name: matcher.to(device) for name, matcher in models.items()}
    evaluate(list(itertools.islice(open_ranking_file(data), 4)), moved)  # warm-up: first kernels, caches
    started = time.perf_counter()
    result = evaluate(lists, moved)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(ROOT / "runs/data/wikiqa+trecqa-all/dev"),
                        help="a toks folder or a ranking file")
    parser.add_argument("--pretrained", default=str(ROOT / "pretrained"))
    parser.add_argument("--models", nargs="*", help="default: every checkpoint under --pretrained")
    parser.add_argument("--pairs", type=int, help="instead of --data itself, a file of this many pairs drawn with "
                        "replacement from every split of the folder --data (as bench/ray_evaluate.py draws its file)")
    parser.add_argument("--devices", nargs=2, default=["cpu", "cuda"],
                        help="the reference, then the device compared with it (cpu cpu: the comparison's own check)")
    args = parser.parse_args()
    models, errors = load_all(args.pretrained)
    for folder, error in errors.items():
        print(f"warning: skipped {folder}: {error}")
    if args.models:
        models = {name: models[name] for name in args.models}
    names = [n for n in args.devices if n != "cuda" or torch.cuda.is_available()]
    devices = [choose_device(n) for n in names]
    shown = [str(d) + (f" ({torch.cuda.get_device_name(d)})" if d.type == "cuda" else "") for d in devices]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch threads, {default_workers()} scoring threads; "
          f"devices: {', '.join(shown)}")
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(args.data)
        if args.pairs:
            data = write_toks_folder(Path(scratch) / "file", resampled([data], args.pairs))
            print(f"file: {args.pairs:,}+ pairs drawn from every split of {args.data}")
        for device in devices:
            result, seconds = timed_evaluation(data, models, device)
            runs.append(result)
            pairs = int(result.candidates.sum()) * len(models)
            print(f"{device.type}: {result.evaluated} questions, {pairs:,} model-pairs in {seconds:.1f} s "
                  f"({pairs / seconds:,.0f} model-pairs/s)", flush=True)
    if len(runs) < 2:
        print("no CUDA device here: only the CPU half ran")
        return
    cpu, gpu = runs
    assert cpu.qids == gpu.qids
    first, second = (d.type for d in devices)
    print(f"\n{'system':<24} {'MAP ' + first:>9} {'MAP ' + second:>9} {'max |dAP|':>10} {'top moved':>10}")
    worst = 0.0
    for name in cpu.systems:
        ap_cpu, ap_gpu = cpu.results[name].metrics["MAP"], gpu.results[name].metrics["MAP"]
        both = ~np.isnan(ap_cpu)
        gap = float(np.max(np.abs(ap_cpu[both] - ap_gpu[both]))) if both.any() else 0.0
        worst = max(worst, gap)
        moved = int(np.sum(cpu.results[name].top != gpu.results[name].top))
        print(f"{name:<24} {cpu.overall[name]['MAP']:8.4f} {gpu.overall[name]['MAP']:9.4f} {gap:10.2e} "
              f"{moved:>5} of {len(cpu.qids)}")
    print(f"\nlargest |AP difference| over every system and question: {worst:.2e}")


if __name__ == "__main__":
    main()
