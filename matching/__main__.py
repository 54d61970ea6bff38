"""Command line: `python -m matching {explain,train,sweep,evaluate,report} ...`."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

DEFAULT_MODELS = Path(__file__).resolve().parent.parent / "pretrained"


def _load_models(root: Path, names: list[str] | None):  # type: ignore[no-untyped-def]
    from .checkpoint import load_all

    models, errors = load_all(root)
    for folder, error in errors.items():
        print(f"warning: skipped {folder}: {error}", file=sys.stderr)
    if names:
        missing = [n for n in names if n not in models]
        if missing:
            sys.exit(f"unknown model(s) {missing}; available: {sorted(models)}")
        models = {n: models[n] for n in names}
    if not models:
        sys.exit(f"no usable checkpoint under {root}")
    return models


def cmd_explain(args: argparse.Namespace) -> None:
    from .ranking import rank
    from .text import TextError

    models = _load_models(args.pretrained, args.models)
    try:
        ranking = rank(args.question, args.candidates, models)
    except TextError as error:
        sys.exit(f"error: {error}")
    print(f"Q: {args.question}")
    for name, result in ranking.models.items():
        print(f"\n== {name}")
        for index in np.argsort(result.ranks, kind="stable"):
            explanation = result.explanations[index]
            print(f"  rank {result.ranks[index]}  score {result.scores[index]:+.4f}  {args.candidates[index]}")
            if explanation.question_attention is not None:
                words = " ".join(f"{t.text}({a:.2f})" for t, a in
                                 zip(explanation.seen_question_tokens, explanation.question_attention, strict=True))
                print(f"    question attention: {words}")
            top = sorted((c for c in explanation.pooled_cells if not c.filler), key=lambda c: -abs(c.contribution))[:3]
            for cell in top:
                q_word = explanation.question_tokens[cell.i].text  # type: ignore[index]
                a_word = explanation.answer_tokens[cell.j].text  # type: ignore[index]
                print(f"    cell {cell.matrix}#{cell.rank}: {q_word!r} x {a_word!r} = {cell.value:.3f}, "
                      f"contributes {cell.contribution:+.4f}")
    print("\nbaselines: " + "; ".join(f"{n}: ranks {r.tolist()}" for n, r in ranking.baseline_ranks.items()))


def cmd_train(args: argparse.Namespace) -> None:
    from .training import load_config, save_trained, train_and_card

    config = load_config(args.config)
    if args.seed is not None:
        config = replace(config, settings=replace(config.settings, seed=args.seed))
    matcher, card = train_and_card(config, Path(args.data))
    save_trained(matcher, card, Path(args.out))
    metrics = card["metrics"]
    print(f"saved {args.out}: dev MAP {metrics['dev']['MAP']:.4f}, test MAP {metrics['test']['MAP']:.4f}")


def cmd_sweep(args: argparse.Namespace) -> None:
    """Train one config with several seeds; ship the seed with the best dev MAP."""
    from .checkpoint import load_checkpoint
    from .training import architecture_text, load_config, save_trained, train_and_card

    config = load_config(args.config)
    work = Path(args.work) / config.name
    cards = []
    for seed in args.seeds:
        folder = work / f"seed-{seed}"
        if (folder / "card.json").exists() and not args.force:
            card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
            print(f"seed {seed}: reusing {folder}")
        else:
            seeded = replace(config, settings=replace(config.settings, seed=seed))
            matcher, card = train_and_card(seeded, Path(args.data))
            save_trained(matcher, card, folder)
        metrics = card["metrics"]
        print(f"seed {seed}: dev MAP {metrics['dev']['MAP']:.4f}  test MAP {metrics['test']['MAP']:.4f}")
        cards.append(card)
    dev = [c["metrics"]["dev"]["MAP"] for c in cards]
    test = [c["metrics"]["test"]["MAP"] for c in cards]
    best = cards[int(np.argmax(dev))]
    study = {"seeds": list(args.seeds), "dev_MAP": dev, "test_MAP": test,
             "mean": float(np.mean(test)), "std": float(np.std(test, ddof=1)) if len(test) > 1 else 0.0}
    best["seed_study"] = study
    best["architecture"] = architecture_text(config.params)  # from this code, not the run's copy
    best["command"] = (f"python -m matching sweep --config {args.config} --data {args.data} "
                       f"--seeds {' '.join(map(str, args.seeds))} --out {args.out}")
    out = Path(args.out)
    matcher = load_checkpoint(work / f"seed-{best['seed']}")
    if out.exists():
        shutil.rmtree(out)
    save_trained(matcher, best, out)
    print(f"shipped seed {best['seed']} to {out}: test MAP over seeds {study['mean']:.4f} ± {study['std']:.4f}")


def cmd_evaluate(args: argparse.Namespace) -> None:
    from tqdm.auto import tqdm

    from .data import read_ranking_file
    from .evaluation import READING, evaluate, format_table

    models = _load_models(args.pretrained, args.models)
    path = Path(args.data) / args.split if args.split else Path(args.data)
    lists = read_ranking_file(path)
    bars: dict[str, tqdm] = {}

    def progress(done: int, total: int, what: str) -> None:
        bar = bars.setdefault(what, tqdm(total=total, desc=what, unit="question" if what == READING else "pair"))
        bar.update(done - bar.n)

    result = evaluate(lists, models, progress=progress)
    for bar in bars.values():
        bar.close()
    print(f"\n{path}: {result.evaluated} questions ({len(result.skipped)} skipped)\n")
    print(format_table(result))


def cmd_report(args: argparse.Namespace) -> None:
    """The README's model table, from the shipped cards."""
    from .metrics import METRICS

    print("| model | seeds: test MAP mean ± std | shipped seed | dev MAP | " + " | ".join(f"test {m}" for m in METRICS)
          + " | paper MAP |")
    print("|---|---|---:|---:|" + "---:|" * len(METRICS) + "---:|")
    for card_path in sorted(Path(args.pretrained).glob("*/card.json")):
        card = json.loads(card_path.read_text(encoding="utf-8"))
        study = card.get("seed_study")
        seeds = f"{study['mean']:.4f} ± {study['std']:.4f} (n={len(study['seeds'])})" if study else "-"
        test = card["metrics"]["test"]
        print(f"| {card['name']} | {seeds} | {card['seed']} | {card['metrics']['dev']['MAP']:.4f} | "
              + " | ".join(f"{test[m]:.4f}" for m in METRICS) + f" | {card.get('paper', {}).get('MAP', '-')} |")
    first = next(iter(sorted(Path(args.pretrained).glob("*/card.json"))), None)
    if first:
        card = json.loads(first.read_text(encoding="utf-8"))
        for name, values in card["baselines"]["test"].items():
            print(f"| baseline: {name} | - | - | {card['baselines']['dev'][name]['MAP']:.4f} | "
                  + " | ".join(f"{values[m]:.4f}" for m in METRICS) + " | - |")


def cmd_runs(args: argparse.Namespace) -> None:
    """Every configuration trained under --work: test MAP per seed, mean ± std (the README's study)."""
    print("| configuration | seeds | test MAP per seed | test MAP mean ± std | dev MAP mean |")
    print("|---|---:|---|---:|---:|")
    for folder in sorted(p for p in Path(args.work).iterdir() if p.is_dir()):
        cards = [json.loads(c.read_text(encoding="utf-8")) for c in sorted(folder.glob("seed-*/card.json"))]
        if not cards:
            continue
        test = [c["metrics"]["test"]["MAP"] for c in cards]
        dev = [c["metrics"]["dev"]["MAP"] for c in cards]
        std = f"{np.std(test, ddof=1):.4f}" if len(test) > 1 else "-"
        print(f"| {folder.name} | {' '.join(str(c['seed']) for c in cards)} | {' '.join(f'{x:.4f}' for x in test)} "
              f"| {np.mean(test):.4f} ± {std} | {np.mean(dev):.4f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m matching", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    explain = sub.add_parser("explain", help="rank candidates for a question and explain why")
    explain.add_argument("question")
    explain.add_argument("candidates", nargs="+")
    explain.add_argument("--models", nargs="*")
    explain.add_argument("--pretrained", type=Path, default=DEFAULT_MODELS)
    explain.set_defaults(func=cmd_explain)

    train = sub.add_parser("train", help="train one model from a config")
    train.add_argument("--config", required=True)
    train.add_argument("--data", required=True, help="folder with train/, dev/, test/")
    train.add_argument("--out", required=True)
    train.add_argument("--seed", type=int)
    train.set_defaults(func=cmd_train)

    sweep = sub.add_parser("sweep", help="train several seeds, ship the best on dev")
    sweep.add_argument("--config", required=True)
    sweep.add_argument("--data", required=True)
    sweep.add_argument("--out", required=True)
    sweep.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    sweep.add_argument("--work", default="runs")
    sweep.add_argument("--force", action="store_true", help="retrain seeds that already have a run")
    sweep.set_defaults(func=cmd_sweep)

    evaluate = sub.add_parser("evaluate", help="metrics of the models and the baselines")
    evaluate.add_argument("--data", required=True, help="folder with split folders, a toks folder, or a TSV/CSV file")
    evaluate.add_argument("--split", help="train, dev or test (a subfolder of --data)")
    evaluate.add_argument("--models", nargs="*")
    evaluate.add_argument("--pretrained", type=Path, default=DEFAULT_MODELS)
    evaluate.set_defaults(func=cmd_evaluate)

    report = sub.add_parser("report", help="print the README's table of shipped models")
    report.add_argument("--pretrained", type=Path, default=DEFAULT_MODELS)
    report.set_defaults(func=cmd_report)

    runs = sub.add_parser("runs", help="summarise every seed run under --work (mean ± std test MAP)")
    runs.add_argument("--work", default="runs")
    runs.set_defaults(func=cmd_runs)

    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
