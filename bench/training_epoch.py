"""An epoch's training time per family at TrecQA TRAIN-ALL's size, on this machine, and what a sweep costs.

Each family's shipped config (listwise loss, one torch thread, as `python -m matching train` runs it) trains
one epoch on a sample of the training questions; the time is scaled by pairs to the whole training set
(WikiQA train + TRAIN-ALL by default), and a 5-seed sweep of 5 epochs is priced from it. Peak memory of this
process is printed at the end (texts are looked up a batch at a time, so it does not grow with the data).
Training runs on one torch thread, so its CPU seconds are what an epoch takes on an idle core; they are
printed beside the wall-clock seconds, which count whatever else the machine runs (its load is printed).
On a GPU (`--device cuda`) the CPU only feeds it: the epoch is priced from the wall-clock seconds instead.

    python bench/training_epoch.py [--data runs/data/wikiqa+trecqa-all] [--questions 120] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from dataclasses import replace
from pathlib import Path

import torch
from common import ROOT

from matching.explain.matcher import choose_device
from matching.text.data import read_toks_folder
from matching.text.embeddings import load_glove
from matching.training.trainer import load_config, train

CONFIGS = ["configs/variants/mvlstm-em-kw-all.json", "configs/variants/amvlstm-q-kw-all.json", "configs/mvlstm.json",
           "configs/mcan.json", "configs/matchpyramid.json", "configs/arcii.json", "configs/cdssm.json",
           "configs/duet.json"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(ROOT / "runs/data/wikiqa+trecqa-all"), help="folder with train/, dev/")
    parser.add_argument("--questions", type=int, default=120,
                        help="training questions sampled per family (0: all of them, a whole epoch)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--configs", nargs="+", default=CONFIGS)
    args = parser.parse_args()
    vectors = load_glove()
    train_lists = read_toks_folder(Path(args.data) / "train")
    dev_lists = read_toks_folder(Path(args.data) / "dev")[:10]
    total_pairs = sum(len(x.candidates) for x in train_lists)
    device = choose_device(args.device)
    wanted = args.questions or len(train_lists)
    sample = random.Random(0).sample(train_lists, min(wanted, len(train_lists)))
    sample_pairs = sum(len(x.candidates) for x in sample)
    print(f"training set {args.data}: {len(train_lists):,} questions, {total_pairs:,} pairs; each family trains one "
          f"epoch on {len(sample)} of them ({sample_pairs:,} pairs), scaled by pairs")
    print(f"load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}; device: {device}"
          + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else ""))
    priced_by = "CPU" if device.type == "cpu" else "wall"
    print(f"{'config':<28} {'sample CPU s':>12} {'sample wall s':>13} {'epoch ' + priced_by + ' s':>12} "
          f"{'5 epochs x 5 seeds':>19}")
    for path in args.configs:
        config = load_config(ROOT / path)
        config = replace(config, settings=replace(config.settings, max_epochs=1, average_epochs=0))
        started, cpu = time.perf_counter(), time.process_time()
        train(config, sample, dev_lists, vectors, show_progress=False, device=device)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        epoch = (cpu if device.type == "cpu" else seconds) * total_pairs / sample_pairs
        print(f"{config.name:<28} {cpu:12.1f} {seconds:13.1f} {epoch:12.0f} {25 * epoch / 3600:17.1f} h", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")
    print(f"peak RSS of this process: {peak:.0f} MiB; one core each (torch.set_num_threads(1)): two sweeps run side "
          "by side on a 2-core machine")


if __name__ == "__main__":
    main()
