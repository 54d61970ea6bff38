"""Command line: `python -m matching COMMAND ...`, one command of those listed below (`COMMAND --help` for each).

Installed with `pip install .`, the same commands are `matchlens ...` (e.g. `matchlens app`).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from matching.paths import app_dir, models_root, pretrained_dir

if TYPE_CHECKING:  # the commands import what they use when they run: the command line starts fast
    from matching.explain.matcher import Matcher
    from matching.text.data import RankingList
    from matching.training.cards import SeedStudy

DEFAULT_MODELS = pretrained_dir()  # the checkout's pretrained/, or the installed copy's
DEVICE = {"choices": ["cpu", "cuda", "auto"], "default": "cpu",
          "help": "where the models run: cpu, cuda, or auto (cuda where this machine has it)"}


def at_least_one(text: str) -> int:
    """A count of workers as argparse reads it: a whole number from 1 ("--workers 0" would quietly mean all cores)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give at least 1")
    return value


def _load_models(root: Path, names: list[str] | None):  # type: ignore[no-untyped-def]
    from matching.training.checkpoint import load_all

    if not Path(root).is_dir():
        sys.exit(f"error: {root}: no such folder of checkpoints (--pretrained)")
    if (Path(root) / "config.json").is_file():  # one checkpoint, not a folder of them: nothing was found under it
        sys.exit(f"error: {root} is one checkpoint; --pretrained takes the folder that holds checkpoints "
                 f"({Path(root).parent}), and --models their names ({Path(root).name})")
    models, errors = load_all(root)
    for folder, error in errors.items():
        print(f"warning: skipped {folder}: {error}", file=sys.stderr)
    if names:
        missing = [n for n in names if n not in models]
        broken = {Path(folder).name: error for folder, error in errors.items()}
        if any(n in broken for n in missing):  # a checkpoint that is there but does not load is not "unknown"
            sys.exit("error: " + "; ".join(f"{n} could not be loaded: {broken[n]}" for n in missing if n in broken))
        if missing:
            sys.exit(f"error: unknown model(s) {', '.join(missing)} under {root}; available: "
                     f"{', '.join(sorted(models))}")
        models = {n: models[n] for n in names}
    if not models:
        sys.exit(f"error: no usable checkpoint under {root}")
    return models


def _with_cards(models: dict) -> dict:  # type: ignore[type-arg]
    """The models that have a model card (card.json), for the commands that read or rewrite it; each other one
    skipped with a warning (it loads and ranks without one, but has no figures to report or refresh)."""
    carded = {name: matcher for name, matcher in models.items() if matcher.card.get("name")}
    for name in models.keys() - carded.keys():
        print(f"warning: skipped {name}: it has no model card (card.json) to report or refresh", file=sys.stderr)
    if not carded:
        sys.exit("error: no checkpoint with a model card (card.json) to report or refresh")
    return carded


SKIPS_SHOWN = 5
"""Skipped questions `evaluate` names, with why; the rest are counted."""


def _split_path(data: str, split: str | None) -> Path:
    """--data with --split as one path; a folder of splits given without --split, or a split it lacks, is said as
    such (both read "a.toks: file missing" before)."""
    root = Path(data)
    if not root.exists():
        sys.exit(f"error: {root}: no such file or folder")
    if root.is_file() and split is not None:
        sys.exit(f"error: {root} is a file: --split picks a split folder of a data set's folder; leave it out")
    from matching.text.data import split_folders

    splits = split_folders(root)
    if split is not None and (root / "a.toks").is_file():  # read "test/test: file missing"
        sys.exit(f"error: {root} is one split already (a.toks, b.toks, ...): leave out --split, or give the folder "
                 f"that holds it ({root.parent}) with --split {split}")
    if split is None:
        if splits and not (root / "a.toks").is_file():
            sys.exit(f"error: {root} is a folder of splits ({', '.join(splits)}): give --split")
        return root
    if splits and not (root / split).exists():
        sys.exit(f"error: {root} has no split {split!r}; it has {', '.join(splits)}")
    return root / split


def cmd_explain(args: argparse.Namespace) -> None:
    from matching.explain.ranking import rank
    from matching.explain.trust import trust_warning
    from matching.text.inputs import markup_note
    from matching.text.tokens import TextError
    from matching.training.cards import default_models

    every = args.models in (None, ["all"])
    models = _load_models(args.pretrained, None if every else args.models)
    if args.models is None:  # as the app and `matching.rank` open: the default set, not every checkpoint
        models = {name: models[name] for name in default_models(list(models))}
    try:
        ranking = rank(args.question, args.candidates, models)
    except TextError as error:
        sys.exit(f"error: {error}")
    print(f"Q: {args.question}")
    for note in ranking.truncation_notes():  # the words past a model's length count for nothing: said, not hidden
        print(f"note: {note}")
    if warning := trust_warning(ranking):  # mostly unknown words, or none at all: as the app says it
        print(f"note: {warning}")
    if markup := markup_note([("the question", args.question),
                              *((f"candidate #{n}", text) for n, text in enumerate(args.candidates, 1))]):
        print(f"note: {markup}")
    for name, result in ranking.models.items():
        print(f"\n== {name}")
        for index in np.argsort(result.ranks, kind="stable"):
            explanation = result.explanations[index]
            print(f"  rank {result.ranks[index]}  score {result.scores[index]:+.4f}  {args.candidates[index]}")
            keywords = explanation.keyword_terms
            if keywords:  # for a keyword model this split often decides the ranking: said first
                largest = [item for item in sorted(keywords.items(), key=lambda item: -abs(item[1]))[:3] if item[1]]
                named = f" (largest: {', '.join(f'{name} {value:+.4f}' for name, value in largest)})" if largest else ""
                print(f"    = learned match {explanation.learned_score:+.4f} + keywords "
                      f"{explanation.keyword_score:+.4f}{named}")
            others = {name: value for name, value in explanation.terms.items() if name not in keywords}
            if len(others) > 1:  # the family's own terms (DUET's local and distributed parts, C-DSSM's cosine and bias)
                print("    terms: " + ", ".join(f"{name} {value:+.4f}" for name, value in others.items()))
            if explanation.question_attention is not None:
                words = " ".join(f"{t.text}({a:.2f})" for t, a in
                                 zip(explanation.seen_question_tokens, explanation.question_attention, strict=True))
                print(f"    question attention: {words}")
            top = sorted((c for c in explanation.pooled_cells if not c.filler), key=lambda c: -abs(c.contribution))[:3]
            for cell in top:
                q_word = explanation.question_tokens[cell.i].text  # type: ignore[index]
                a_word = explanation.answer_tokens[cell.j].text  # type: ignore[index]
                print(f"    cell of {cell.matrix} (pooling rank {cell.rank}): {q_word!r} x {a_word!r} = "
                      f"{cell.value:.3f}, contributes {cell.contribution:+.4f}")
    print("\nbaselines: " + "; ".join(f"{n}: ranks {r.tolist()}" for n, r in ranking.baseline_ranks.items()))


def _device(name: str):  # type: ignore[no-untyped-def]
    """--device as a torch device, chosen once here (`Matcher.to`, `train`)."""
    from matching.explain.matcher import choose_device

    try:
        return choose_device(name)
    except ValueError as error:
        sys.exit(f"error: {error}")


def cmd_train(args: argparse.Namespace) -> None:
    from matching.training.trainer import load_config, save_trained, train_and_card

    config = load_config(args.config)
    if args.seed is not None:
        config = replace(config, settings=replace(config.settings, seed=args.seed))
    if args.teachers is not None:
        config = replace(config, settings=replace(config.settings, teachers=tuple(args.teachers)))
    matcher, card = train_and_card(config, Path(args.data), device=_device(args.device))
    save_trained(matcher, card, Path(args.out))
    print(f"saved {args.out}: dev MAP {card.metrics['dev']['MAP']:.4f}, test MAP {card.metrics['test']['MAP']:.4f}")


def cmd_sweep(args: argparse.Namespace) -> None:
    """Train each config with several seeds; ship each one's seed with the best dev MAP."""
    from matching.training.trainer import load_config, seed_study, ship

    for path in args.config:
        config = load_config(path)
        run, card = seed_study(config, Path(args.data), args.seeds, Path(args.work), args.force,
                               device=_device(args.device))
        out = Path(args.out) / config.name
        card = replace(card, command=f"python -m matching sweep --config {path} --data {args.data} "
                                     f"--seeds {' '.join(map(str, args.seeds))} --out {args.out}")
        ship(run, card, out)
        study = card.seed_study
        assert study is not None
        for seed, dev, test in zip(study.seeds, study.dev_MAP, study.test_MAP, strict=True):
            print(f"{config.name} seed {seed}: dev MAP {dev:.4f}  test MAP {test:.4f}")
        print(f"shipped {config.name} seed {card.seed} to {out}: test MAP over seeds "
              f"{study.mean:.4f} ± {study.std:.4f}")


def cmd_refresh(args: argparse.Namespace) -> None:
    """Recompute the test figures (metrics, paired tests, attention study) of shipped cards, and with --dev the
    dev figures (metrics, baselines, keyword study) on the training folder's dev split, e.g. after a keyword
    feature's rule changed what a model's features say (its weights stay as trained)."""
    from dataclasses import replace as replace_card

    from matching.evaluation.dataset import evaluate
    from matching.models.params import params_to_dict
    from matching.text.data import fingerprint, read_toks_folder
    from matching.training.cards import ModelCard, OtherTest, deviations, group_of, render_card
    from matching.training.checkpoint import save_checkpoint
    from matching.training.trainer import architecture_text, keyword_studies, test_figures

    test = read_toks_folder(Path(args.data) / "test")
    dev = read_toks_folder(Path(args.dev) / "dev") if args.dev else None
    others = {Path(folder).resolve().name: read_toks_folder(Path(folder) / "test") for folder in args.other_test}
    if Path(args.data).resolve().name in others:
        sys.exit(f"error: --other-test {Path(args.data).resolve().name} is the --data test itself")
    for name, matcher in _with_cards(_load_models(args.pretrained, args.models)).items():
        card = ModelCard.from_dict(matcher.card)
        if dev is not None:
            if card.data.get("dev", {}).get("fingerprint") != fingerprint(dev):
                sys.exit(f"error: {name} was chosen on another dev split than {args.dev}/dev")
            result = evaluate(dev, {matcher.name: matcher})
            card = replace_card(card, metrics={**card.metrics, "dev": result.overall[matcher.name]},
                                baselines={**card.baselines, "dev": {s: result.overall[s] for s in result.systems
                                                                     if s != matcher.name}},
                                keywords=keyword_studies(matcher, dev, str(card.data.get("source", ""))))
            print(f"{name}: dev MAP {result.overall[matcher.name]['MAP']:.4f}")
        if args.work and card.seed_study is not None:
            card = replace_card(card, seed_study=_seed_study_again(card.seed_study, Path(args.work) / name, matcher,
                                                                   test, dev))
        for source, lists in others.items():
            result = evaluate(lists, {matcher.name: matcher})
            card = replace_card(card, other_tests={**card.other_tests, source: OtherTest(
                questions=len(lists), pairs=sum(len(x.candidates) for x in lists), fingerprint=fingerprint(lists),
                metrics=result.overall[matcher.name],
                baselines={s: result.overall[s] for s in result.systems if s != matcher.name})})
            print(f"{name}: {source} test MAP {result.overall[matcher.name]['MAP']:.4f} (another source, to report)")
        metrics, baselines, significance, attention = test_figures(matcher, test)
        data = card.data
        # A combined training folder keeps one data set's test split: where the test data given here
        # is that split (same fingerprint), the card records which data set it is.
        # Another test split (a model trained on WikiQA + TRAIN-ALL, tested on WikiQA): the card names the
        # split its figures now come from, so that they never read as the training folder's own test.
        if isinstance(data.get("test"), dict) and data["test"].get("fingerprint") == fingerprint(test):
            data = {**data, "test": {**data["test"], "source": Path(args.data).resolve().name}}
        else:
            data = {**data, "test": {"fingerprint": fingerprint(test), "questions": len(test),
                                     "pairs": sum(len(x.candidates) for x in test),
                                     "source": Path(args.data).resolve().name}}
        # The params the checkpoint now holds (a table a rule of today's code refilled on loading has its new size).
        params = params_to_dict(matcher.params)
        card = replace_card(card, params=params, data=data, metrics={**card.metrics, "test": metrics},
                            baselines={**card.baselines, "test": baselines}, significance=significance,
                            attention=attention, architecture=architecture_text(matcher.params),
                            group=group_of(params, card.training),
                            deviations=deviations(params, card.training, str(card.data.get("source", ""))))
        assert matcher.path is not None
        save_checkpoint(matcher, matcher.path, card.to_dict())
        (matcher.path / "README.md").write_text(render_card(card), encoding="utf-8")
        print(f"{name}: test MAP {metrics['MAP']:.4f}"
              + (f", entropy {attention.entropy:.3f}, uniform MAP {attention.uniform_MAP:.4f}" if attention else ""))


def _seed_study_again(study: SeedStudy, runs: Path, matcher: Matcher, test: list[RankingList],
                      dev: list[RankingList] | None) -> SeedStudy:
    """A card's seed study with each seed's test MAP (and dev MAP, given dev) computed again from its run folder,
    `runs/seed-N` (`sweep --work`), with today's code; the choice it records stays the one training made."""
    from matching.evaluation.dataset import evaluate
    from matching.training.checkpoint import load_checkpoint
    from matching.training.trainer import code_version

    folders = [runs / f"seed-{seed}" for seed in study.seeds]
    if missing := [str(folder) for folder in folders if not folder.is_dir()]:
        sys.exit(f"error: {matcher.name}'s seed runs are not all under {runs}: {', '.join(missing)}")
    seeds = [load_checkpoint(folder, matcher.vectors) for folder in folders]

    def seed_map(lists: list[RankingList]) -> list[float]:
        return [float(evaluate(lists, {seed.name: seed}).overall[seed.name]["MAP"]) for seed in seeds]

    test_map = seed_map(test)
    spread = float(np.std(test_map, ddof=1)) if len(test_map) > 1 else 0.0
    return replace(study, test_MAP=test_map, dev_MAP=seed_map(dev) if dev is not None else study.dev_MAP,
                   mean=float(np.mean(test_map)), std=spread, computed_with=code_version())


def ready_to_write(path: Path, option: str) -> None:
    """Check, before any work, that `path` can be written as a file (its folder made where missing): a folder given,
    or one that cannot be made, failed after the whole evaluation it was to keep."""
    if path.is_dir():
        sys.exit(f"error: {option} {path} is a folder: give a file name in it")
    if taken := next((folder for folder in path.parents if folder.exists() and not folder.is_dir()), None):
        sys.exit(f"error: {option} {path} cannot be written: {taken} is a file, not a folder")  # mkdir said "exists"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        sys.exit(f"error: {option} {path} cannot be written: {error.strerror or error}")


def single_threaded_scoring() -> None:
    """On a machine of more than two cores, one torch thread, so that `dataset.default_workers` scores with four
    single-threaded workers: scoring is mostly CPU work around the forward passes that torch's threads do not
    share (docs/deployment.md: on 16 cores 40 s with OMP_NUM_THREADS=1, 63 s with four workers beside torch's
    16 threads, 76 s as one worker of them). Left alone where OMP_NUM_THREADS says otherwise, and on two cores,
    where one worker of both threads is as fast (8.0 s against 8.4 s on 30,000 pairs)."""
    if (os.cpu_count() or 1) > 2 and "OMP_NUM_THREADS" not in os.environ:
        import torch

        torch.set_num_threads(1)


def cmd_evaluate(args: argparse.Namespace) -> None:
    """Metrics of the models and the baselines on a file read a question at a time (any size)."""
    from matching.evaluation.dataset import evaluate, format_table
    from matching.evaluation.progress import ConsoleProgress, EvaluationProgress
    from matching.text.data import DataError, open_ranking_file, read_ranking_file
    from matching.text.datasets import built_in_dev_splits
    from matching.training.reporting import chosen_note, chosen_on, evaluation_notes, fitted_note, fitted_on

    # Before torch's first operation: oneDNN keeps each kernel it builds for a shape (up to 1,024,
    # ~0.5 MB each), and the Bi-LSTM meets a new (texts, length) shape in nearly every block, so
    # over a large file that cache grew to ~0.5 GB while rarely being hit (the scores are the same).
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "0")
    single_threaded_scoring()
    models = _load_models(args.pretrained, args.models)
    if args.engine == "ray" and (args.address or args.resume) and not args.out:
        sys.exit("error: --address and --resume need --out, a folder for the shards' results (on a cluster, one "
                 "every machine can write)")
    if args.engine != "ray" and (ray_only := [f"--{name}" for name in ("out", "resume", "address", "workers")
                                              if getattr(args, name)]):
        sys.exit(f"error: {', '.join(ray_only)} {'is' if len(ray_only) == 1 else 'are'} for --engine ray (--out: "
                 "its shards' folder); each question's results: --per-question FILE.csv")
    if args.per_question:
        ready_to_write(args.per_question, "--per-question")
    exported: list[dict[str, object]] = []
    # Ray's workers choose the device on their own machines (a driver without a GPU may lead a cluster with them).
    device = _device(args.device) if args.engine == "local" else None
    # Every --data checked before the first is scored: a wrong second one failed after minutes of the first.
    paths = [_split_path(data, args.split) for data in args.data]
    cards = {name: matcher.card for name, matcher in models.items()}
    dev_splits = cache(built_in_dev_splits)  # read once for every --data, and only where a table is printed
    for path in paths:  # each data set on its own, with its own baselines and tests
        try:
            if args.engine == "ray":
                result = _evaluate_on_ray(args, path, models)
            else:
                lists = open_ranking_file(path)
                with ConsoleProgress() as display:
                    result = evaluate(lists, {name: matcher.to(device) for name, matcher in models.items()},
                                      progress=EvaluationProgress(lists.questions, lists.pairs, list(models), display))
        except DataError as error:
            sys.exit(f"error: {error}")
        unanswerable = int((result.correct == 0).sum())
        print(f"\n{path}: {result.evaluated} question{'' if result.evaluated == 1 else 's'} evaluated "
              f"({len(result.skipped)} skipped" + (f"; {unanswerable} without a correct candidate, left out of the "
                                                  "metrics" if unanswerable else "") + ")")
        for reason in result.skipped[:SKIPS_SHOWN]:  # which, and why: a count alone sent users to the notebook
            print(f"  skipped {reason}")
        if len(result.skipped) > SKIPS_SHOWN:
            print(f"  and {len(result.skipped) - SKIPS_SHOWN} more")
        if note := result.wordless_note():
            print(f"  {note}")
        print()
        if result.evaluated == 0:
            print("No question could be evaluated: every one was skipped (why, above).")
        elif unanswerable == result.evaluated:  # a table of NaN said nothing
            print("No question has a correct candidate (label 1), so no metric is defined on this file.")
        else:
            print(format_table(result))
            # The file read again at most once, and only where its size is a dev split's (both checks share it).
            questions, read = result.evaluated + len(result.skipped), cache(partial(read_ranking_file, path))
            if fitted := fitted_on(questions, read, cards):
                print(f"\nnote: {fitted_note(fitted)}")
            if chosen := chosen_on(questions, read, dev_splits(), cards):
                print(f"\nnote: {chosen_note(chosen, len(cards))}")
            print("\nTied scores count as the mean over their orders (docs/evaluation-and-benchmarks.md).")
            print("\n" + evaluation_notes(result, cards))
        exported += [{"data": str(path), **row} for row in result.per_question_export()]
    if args.per_question:
        from matching.explain.export import rows_to_csv

        try:
            args.per_question.write_bytes(rows_to_csv(exported))
        except OSError as error:
            sys.exit(f"error: --per-question {args.per_question} cannot be written: {error.strerror or error}")
        print(f"\neach question's results: {args.per_question} ({len(exported):,} rows)")


def cmd_keywords(args: argparse.Namespace) -> None:
    """Does each keyword model's keyword term decide anything on each data set (`studies.keyword_study`)?"""
    from matching.evaluation.studies import keyword_study
    from matching.text.data import DataError, read_ranking_file
    from matching.text.tokenized import tokenize_lists
    from matching.training.cards import markdown_table

    models = {name: m for name, m in _load_models(args.pretrained, args.models).items() if m.model.keywords is not None}
    if not models:
        sys.exit("error: none of these models has a keyword term")
    rows = []
    for data in args.data:
        # A data set's folder with --split inside, or one file or toks folder as it is (as evaluate reads them)
        as_is = Path(data).is_file() or (Path(data) / "a.toks").is_file()
        try:
            lists = tokenize_lists(read_ranking_file(_split_path(data, None if as_is else args.split)))[0]
        except DataError as error:
            sys.exit(f"error: {error}")
        for name, matcher in models.items():
            study = keyword_study(matcher, lists)
            assert study is not None
            rows.append({"model": name, "data": Path(data).name if as_is else f"{Path(data).name} {args.split}",
                         "MAP": study.MAP,
                         "learned match alone": study.learned_MAP, "keywords alone": study.keywords_MAP,
                         "top answer changed": f"{study.top_changed} of {study.questions}",
                         "spread: learned": study.learned_spread, "spread: keywords": study.keywords_spread})
    print(markdown_table(rows))
    # What the columns are: "53 of 122" read against evaluate's 126 questions said nothing of the other 4.
    print("\nMAP over the questions with a correct candidate, as evaluate counts them. top answer changed: of the "
          "questions with two candidates or more, those whose first candidate by the whole score is not the learned "
          "match's alone. spread: within a question, the standard deviation of the learned match and of the keyword "
          "term among its candidates, averaged over those questions (a term whose spread is far below the other's "
          "seldom decides).")


def _evaluate_on_ray(args: argparse.Namespace, path: Path, models: dict):  # type: ignore[no-untyped-def, type-arg]
    """`evaluate --engine ray` of one data set: its shards' results under --out (a subfolder per data set
    when several are given), or a temporary folder dropped at the end."""
    import importlib.util
    import tempfile

    from matching.evaluation.progress import ConsoleProgress
    from matching.evaluation.ray_engine import EngineError, RunStopped, evaluate_ray

    if importlib.util.find_spec("ray") is None:  # the engine imports Ray only once a run starts
        sys.exit("error: --engine ray needs Ray: pip install 'matchlens[ray]'")
    checkpoints = {name: matcher.path for name, matcher in models.items()}
    with tempfile.TemporaryDirectory(prefix="matchlens-ray-") as scratch:
        out = Path(args.out or scratch)
        if len(args.data) > 1:
            out = out / path.name if not args.split else out / f"{path.parent.name}-{path.name}"
        try:
            with ConsoleProgress() as display:
                run = evaluate_ray(path, checkpoints, out, address=args.address, workers=args.workers,
                                   resume=args.resume, device=args.device,
                                   progress=lambda done, pairs: display(done / max(pairs, 1),
                                                                        f"{done:,} of {pairs:,} pairs scored"))
        except (EngineError, ValueError) as error:
            sys.exit(f"error: {error}")
        except RunStopped as stopped:  # Ctrl-C: one line, not Ray's traceback; 130 as a shell gives for SIGINT
            print(stopped if args.out else "stopped: the run had no --out, so nothing is kept to resume from",
                  file=sys.stderr)
            sys.exit(130)
    from matching.explain.glossary import counted

    if run.scored:
        done = f"{counted(len(run.scored), 'shard')} scored by {counted(run.workers, 'worker')}" + (
            f", {len(run.resumed)} already written" if run.resumed else "")
    else:
        written = len(run.resumed)
        done = f"nothing to score, {'its shard is' if written == 1 else f'all {written} shards are'} already written"
    print(f"Ray: {done}" + (f"; results in {out}" if args.out else ""))
    return run.evaluation


def cmd_combine(args: argparse.Namespace) -> None:
    """One training folder from several data sets (train and dev of each), tested on one of them."""
    from matching.text.data import DataError, combine_data

    try:
        copies = {}
        for item in args.train_copies or []:
            name, _, count = item.partition("=")
            if not count.isdigit():
                sys.exit(f"error: --train-copies {item}: write NAME=N, e.g. trecqa=3")
            copies[name] = int(count)
        counts = combine_data(args.data, args.test, args.out, copies, args.dev)
    except DataError as error:
        sys.exit(f"error: {error}")
    dev = ", ".join(map(str, args.dev or args.data))
    print(f"{args.out}: " + ", ".join(f"{split} {count} questions" for split, count in counts.items())
          + f" (train of {', '.join(map(str, args.data))}; dev of {dev}; test of {args.test})")


def cmd_pseudo_questions(args: argparse.Namespace) -> None:
    """Training lists of the held-out kind from a data set's sections (`training.pseudo_questions`)."""
    from matching.text.data import DataError
    from matching.training.pseudo_questions import PseudoQuestionParams, write_pseudo_folder

    try:
        chosen = {name: value for name in ("subject", "keep", "share") if (value := getattr(args, name)) is not None}
        for name, value in chosen.items():
            if not 0.0 <= value <= 1.0:
                sys.exit(f"error: --{name} is a probability, from 0 to 1, not {value}")
        made = write_pseudo_folder(args.data, args.out, args.seed,
                                   PseudoQuestionParams(per_section=args.per_section, **chosen))
    except DataError as error:
        sys.exit(f"error: {error}")
    print(f"{args.out}/train: {made} pseudo-questions from the sections of {args.data}/train (seed {args.seed}); "
          "give the folder to combine with --dev naming the dev folders")


def cmd_paper_tables(args: argparse.Namespace) -> None:
    """A paper's table beside the shipped checkpoints that stand for its rows (test read to report)."""
    from matching.evaluation.dataset import evaluate
    from matching.evaluation.paper_tables import (
        ECIR_TABLE1_WIKIQA,
        Reference,
        against_original,
        paper_table,
        settings_of,
    )
    from matching.text.data import read_toks_folder
    from matching.training.cards import markdown_table

    table = args.reference or ECIR_TABLE1_WIKIQA
    try:
        reference = Reference.read(table)
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"error: {table}: not a paper table this command can read ({error})")
    ready_to_write(Path(args.out), "--out")
    settings = settings_of(args.configs, reference.table)
    models = {name: matcher for name, matcher in _load_models(args.pretrained, None).items() if name in settings}
    lists = read_toks_folder(Path(args.data) / "test")
    result = evaluate(lists, models)
    answerable = result.correct > 0
    tests = against_original({name: result.ap(name)[answerable] for name in models}, settings)
    cards = {name: matcher.card or {} for name, matcher in models.items()}
    test = {name: card.get("metrics", {}).get("test", {}) for name, card in cards.items()}
    spread = {name: (f"{card['seed_study']['mean']:.4f} ± {card['seed_study']['std']:.4f} "
                     f"(n={len(card['seed_study']['seeds'])})" if card.get("seed_study") else "")
              for name, card in cards.items()}
    table = paper_table(reference, settings, test, spread, tests)
    out = Path(args.out)
    out.write_text(table.to_json(), encoding="utf-8")
    out.with_suffix(".csv").write_text(table.frame().to_csv(index=False), encoding="utf-8")
    print(f"{reference.table} ({reference.source}) beside MatchLens on {Path(args.data) / 'test'}:\n")
    print(markdown_table(table.rows))
    print("\n" + "\n".join(f"- {line}" for line in table.verdicts))
    print(f"\n{reference.missing}\nwritten: {out} and {out.with_suffix('.csv')}")


def cmd_report(args: argparse.Namespace) -> None:
    """The README's model tables, from the shipped cards."""
    from matching.training.reporting import models_table

    print(models_table([m.card for m in _with_cards(_load_models(args.pretrained, None)).values()]))


def cmd_runs(args: argparse.Namespace) -> None:
    """Every configuration trained under --work: test MAP per seed, mean ± std (the README's study)."""
    from matching.training.reporting import runs_table

    try:
        print(runs_table([Path(work) for work in args.work], args.against))
    except ValueError as error:
        sys.exit(f"error: {error}")


def app_command(streamlit_args: list[str]) -> tuple[list[str], Path]:
    """(the command that serves the app, the folder to run it in): `streamlit run <app.py>` with the
    options given, run in the app's folder so that its .streamlit/config.toml applies."""
    folder = app_dir()
    return [sys.executable, "-m", "streamlit", "run", str(folder / "app.py"), *streamlit_args], folder


def cmd_app(args: argparse.Namespace) -> None:
    command, folder = app_command(args.streamlit_args)
    os.chdir(folder)
    if os.name == "posix":  # streamlit takes this process's place: Ctrl-C and signals reach it directly
        os.execv(command[0], command)
    import subprocess

    sys.exit(subprocess.call(command))


def build_parser(prog: str = "python -m matching") -> argparse.ArgumentParser:
    from matching import __version__

    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    models = models_root()  # read when the command runs: $MATCHLENS_MODELS as the app and `matching.load` read it
    models_help = f"the folder of checkpoints (default {models}: $MATCHLENS_MODELS when set, else the shipped ones)"
    sub = parser.add_subparsers(dest="command", required=True)

    app = sub.add_parser(
        "app", help="serve the MatchLens app (Streamlit)",
        description="Serve the MatchLens app: `streamlit run app.py` with the app's own .streamlit/config.toml, "
                    "from the installed copy (or the checkout). Every other option goes to streamlit run, e.g. "
                    "--server.port 8599 --server.address 127.0.0.1 --server.headless true. The models come from "
                    "$MATCHLENS_MODELS when set, else the shipped pretrained/.")
    app.set_defaults(func=cmd_app, streamlit_args=[])

    explain = sub.add_parser(
        "explain", help="rank candidates for a question and explain why",
        description="Rank the candidates for the question with each model and print why: the split into learned "
                    "match and keywords, the question attention, the pooled cells that contribute most. Put --models "
                    "after the candidates (its list would take them otherwise), e.g. matchlens explain \"who wrote "
                    "hamlet?\" \"Shakespeare wrote it.\" \"A fox.\" --models mcan-kw-all mvlstm-em-kw-all")
    explain.add_argument("question", help="the question, quoted")
    explain.add_argument("candidates", nargs="+", help="the candidate answers, each quoted")
    explain.add_argument("--models", nargs="+", help="model names, or all (default: the models the app opens with, "
                         "where --pretrained holds them; else all)")
    explain.add_argument("--pretrained", type=Path, default=models, help=models_help)
    explain.set_defaults(func=cmd_explain)

    train = sub.add_parser("train", help="train one model from a config")
    train.add_argument("--config", required=True, help="a training config (JSON; configs/ holds the shipped ones)")
    train.add_argument("--data", required=True, help="folder with train/, dev/, test/")
    train.add_argument("--out", required=True, help="the checkpoint folder to write (weights, config, card)")
    train.add_argument("--seed", type=int, help="the random seed (default: the config's)")
    train.add_argument("--teachers", nargs="+", metavar="FOLDER",
                       help="model folders whose mean score teaches the model (in place of the config's teachers, "
                            "e.g. the seeds trained on the same data as this run)")
    train.add_argument("--device", **DEVICE)
    train.set_defaults(func=cmd_train)

    sweep = sub.add_parser("sweep", help="train several seeds of each config, ship the best on dev")
    sweep.add_argument("--config", required=True, nargs="+", help="one or more training configs (JSON)")
    sweep.add_argument("--data", required=True, help="folder with train/, dev/, test/")
    sweep.add_argument("--out", default=str(DEFAULT_MODELS), help="each config ships to OUT/<name>")
    sweep.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5],
                       help="the seeds to train (default 1 to 5)")
    sweep.add_argument("--work", default="runs", help="folder for every seed's run, NAME/seed-N (default runs)")
    sweep.add_argument("--force", action="store_true", help="retrain seeds that already have a run")
    sweep.add_argument("--device", **DEVICE)
    sweep.set_defaults(func=cmd_sweep)

    evaluate = sub.add_parser("evaluate", help="metrics of the models and the baselines")
    evaluate.add_argument("--data", required=True, nargs="+",
                          help="one or more data sets, each a folder with split folders, a toks folder, or a "
                               "TSV/CSV file; each is reported on its own, with its baselines")
    evaluate.add_argument("--split", help="train, dev or test (a subfolder of each --data)")
    evaluate.add_argument("--models", nargs="+", help="model names (default: every checkpoint under --pretrained)")
    evaluate.add_argument("--pretrained", type=Path, default=models, help=models_help)
    evaluate.add_argument("--device", **DEVICE)
    evaluate.add_argument("--engine", choices=["local", "ray"], default="local",
                          help="local: this process; ray: shards of the file scored by Ray workers, on a local "
                               "instance or the cluster at --address (pip install 'matchlens[ray]'; "
                               "docs/deployment.md), with the same tables")
    evaluate.add_argument("--address", help="--engine ray: join this Ray cluster (e.g. 10.0.0.1:6379) instead of "
                                            "starting a local instance")
    evaluate.add_argument("--workers", type=at_least_one,
                          help="--engine ray: scoring workers, one thread each (default: one per CPU of the machine "
                               "or cluster)")
    evaluate.add_argument("--per-question", type=Path, metavar="FILE.csv",
                          help="write each question's results: its AP and first correct rank per system, whether the "
                               "models disagree, each model's top answer by its number in the list (a data column "
                               "when several --data are given)")
    evaluate.add_argument("--out", help="--engine ray: folder for each shard's per-question results (Parquet)")
    evaluate.add_argument("--resume", action="store_true",
                          help="--engine ray: score only the shards --out does not hold yet (a stopped run)")
    evaluate.set_defaults(func=cmd_evaluate)

    combine = sub.add_parser("combine", help="one data folder from the train and dev splits of several")
    combine.add_argument("--data", required=True, nargs="+", help="data folders with train/ and dev/")
    combine.add_argument("--test", required=True, help="the data folder whose test/ the combined folder keeps")
    combine.add_argument("--dev", nargs="+", help="data folders whose dev/ the combined folder keeps instead of "
                                                  "--data's: a cross-source check (train on one set, measure every "
                                                  "epoch on another's dev)")
    combine.add_argument("--out", required=True)
    combine.add_argument("--train-copies", nargs="+", metavar="NAME=N",
                         help="put a source's training questions in N times (e.g. trecqa=3); dev is not copied")
    combine.set_defaults(func=cmd_combine)

    pseudo = sub.add_parser("pseudo-questions", help="training lists of questions written from a section's "
                                                     "sentences, made from a data set's own sections")
    pseudo.add_argument("--data", required=True, help="a data folder whose train/ lists are sections (WikiQA's)")
    pseudo.add_argument("--out", required=True, help="folder to write train/ in")
    pseudo.add_argument("--seed", type=int, default=0)
    pseudo.add_argument("--per-section", type=int, default=1, help="pseudo-questions drawn from each section")
    pseudo.add_argument("--subject", type=float, help="the probability that a question names the section's subject "
                                                      "(default 1: always)")
    pseudo.add_argument("--keep", type=float, help="the probability that each of the sentence's other words stays "
                                                   "in its question (default 0.6)")
    pseudo.add_argument("--share", type=float, help="the share of the pseudo-questions kept, a subset of those "
                                                    "made with all of them (default 1)")
    pseudo.set_defaults(func=cmd_pseudo_questions)

    keywords = sub.add_parser("keywords", help="keyword models: the whole score beside the learned match alone and "
                                               "the keywords alone, and how often the keywords change the top answer")
    keywords.add_argument("--data", required=True, nargs="+", help="data folders, each with --split inside, or "
                          "ranking files (CSV, TSV, a .toks folder) read as they are")
    keywords.add_argument("--split", default="dev", help="the split to read (default dev)")
    keywords.add_argument("--models", nargs="+", help="model names (default: every keyword model under --pretrained)")
    keywords.add_argument("--pretrained", type=Path, default=models, help=models_help)
    keywords.set_defaults(func=cmd_keywords)

    tables = sub.add_parser("paper-tables", help="a paper's table beside the checkpoints that stand for its rows")
    tables.add_argument("--data", required=True, help="folder with test/ (read once, to report)")
    tables.add_argument("--reference", help="a paper's table (default: the ECIR 2019 Table 1, WikiQA half)")
    tables.add_argument("--configs", default="configs", help="the training configs that name their paper row")
    tables.add_argument("--pretrained", type=Path, default=models, help=models_help)
    tables.add_argument("--out", default=str(DEFAULT_MODELS / "paper-tables.json"),
                        help="JSON for the app's view; a CSV export is written beside it (the default rewrites "
                             "the shipped pretrained/paper-tables.json and .csv, which the Models page reads)")
    tables.set_defaults(func=cmd_paper_tables)

    refresh = sub.add_parser("refresh", help="recompute the test figures of shipped cards")
    refresh.add_argument("--data", required=True, help="folder with test/")
    refresh.add_argument("--dev", help="the training folder (with dev/): recompute the dev figures too")
    refresh.add_argument("--work", help="sweep's --work folder (NAME/seed-N): recompute the seed study too")
    refresh.add_argument("--other-test", nargs="+", default=[], metavar="FOLDER",
                         help="folders with test/ of other sources than --data (a model trained on WikiQA + TrecQA "
                         "TRAIN-ALL, tested on TrecQA: ../shared/data/wikiqa): the card reports this model and the "
                         "baselines on each, beside its own test, to report only")
    refresh.add_argument("--models", nargs="+", help="model names (default: every checkpoint under --pretrained)")
    refresh.add_argument("--pretrained", type=Path, default=models, help=models_help)
    refresh.set_defaults(func=cmd_refresh)

    report = sub.add_parser("report", help="print the table of shipped models (docs/models-and-training.md)")
    report.add_argument("--pretrained", type=Path, default=models, help=models_help)
    report.set_defaults(func=cmd_report)

    runs = sub.add_parser("runs", help="summarise every seed run under --work (dev and test MAP per seed, mean ± std)")
    runs.add_argument("--work", nargs="+", default=["runs"], help="one or more sweeps' --work folders")
    runs.add_argument("--against", help="a configuration under --work: Welch's t-test of every other one's dev "
                                         "MAP over seeds against it")
    runs.set_defaults(func=cmd_runs)
    # Each command's --help opens with what it does (argparse shows a command's `help` only in the list of commands).
    said = {action.dest: action.help for action in sub._choices_actions}
    for name, command in sub.choices.items():  # an unknown option is then said with its command's usage
        command.set_defaults(command_parser=command)
        command.description = command.description or said.get(name)
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m matching") -> None:
    parser = build_parser(prog)
    args, extra = parser.parse_known_args(argv)
    if args.command == "app":  # streamlit's own options pass through
        args.streamlit_args = extra
    elif extra:
        args.command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from matching.text.data import DataError
    from matching.text.tokens import TextError

    try:
        args.func(args)
    except (DataError, TextError) as error:  # a file or text the user gave: one line, not a traceback
        sys.exit(f"error: {error}")
    except BrokenPipeError:  # `matchlens report | head`: the reader has what it wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error flushing stdout at exit
        sys.exit(1)


def console() -> None:
    """The `matchlens` command (pyproject's [project.scripts])."""
    main(prog="matchlens")


if __name__ == "__main__":
    main()
