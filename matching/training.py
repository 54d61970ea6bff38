"""Training: pairwise hinge loss, negatives from the same question, early stopping on dev MAP.

Reproducible: one seed fixes the initial weights, the pair order and dropout; torch
runs on one thread so that results do not depend on the machine's core count.
Selection uses dev only; test is read once, at the end, for the model card.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import __version__
from .batching import make_batch
from .checkpoint import save_checkpoint
from .data import RankingList, fingerprint, read_toks_folder
from .embeddings import EncodedText, WordVectors, load_glove
from .evaluation import TokenizedList, evaluate, model_scores, tokenize_lists
from .matcher import Matcher
from .metrics import mean_metrics, question_metrics
from .models import build_model, family_of, params_from_dict
from .params import ModelParams, params_to_dict


@dataclass(frozen=True)
class TrainingSettings:
    seed: int = 1
    max_epochs: int = 20
    patience: int = 4
    """Stop after this many epochs without a better dev MAP."""
    batch_size: int = 64
    optimizer: str = "adam"
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    margin: float = 1.0
    max_seconds: float | None = None
    """Optional wall-clock cap on starting new epochs. Off by default: a time cap makes the
    number of epochs, and so the model, depend on the machine's speed."""


@dataclass(frozen=True)
class TrainingConfig:
    name: str
    params: ModelParams
    settings: TrainingSettings
    description: str = ""
    paper: dict[str, Any] = field(default_factory=dict)
    """The paper's WikiQA figures for this model, shown beside ours in the card."""


def load_config(path: str | Path) -> TrainingConfig:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return TrainingConfig(name=raw["name"], params=params_from_dict(raw["model"]),
                          settings=TrainingSettings(**raw.get("training", {})),
                          description=raw.get("description", ""), paper=raw.get("paper", {}))


def set_seed(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def code_version() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{__version__}+{commit}" if commit else __version__


def training_pairs(lists: list[TokenizedList]) -> list[tuple[int, int, int]]:
    """(list, positive, negative) for every positive/negative pair of every question."""
    pairs = []
    for n, item in enumerate(lists):
        labels = item.item.labels
        positives = [j for j, y in enumerate(labels) if y and item.candidates[j]]
        negatives = [j for j, y in enumerate(labels) if not y and item.candidates[j]]
        pairs.extend((n, p, q) for p in positives for q in negatives)
    return pairs


def dev_map(matcher: Matcher, lists: list[TokenizedList]) -> float:
    scores = model_scores(matcher, lists)
    return mean_metrics([question_metrics(s, t.item.labels) for s, t in zip(scores, lists, strict=True)])["MAP"]


def make_optimizer(model: torch.nn.Module, settings: TrainingSettings) -> torch.optim.Optimizer:
    trainable = [p for p in model.parameters() if p.requires_grad]
    if settings.optimizer == "adagrad":
        return torch.optim.Adagrad(trainable, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    if settings.optimizer == "adam":
        return torch.optim.AdamW(trainable, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    raise ValueError(f"unknown optimizer {settings.optimizer!r}")


EpochCallback = Callable[[dict[str, float]], None]


def train(config: TrainingConfig, train_lists: list[RankingList], dev_lists: list[RankingList],
          vectors: WordVectors | None = None, on_epoch: EpochCallback | None = None,
          show_progress: bool = True) -> tuple[Matcher, list[dict[str, float]]]:
    """Train one model; returns the best-on-dev model and the per-epoch log."""
    from tqdm.auto import tqdm

    torch.set_num_threads(1)
    set_seed(config.settings.seed)
    vectors = vectors or load_glove()
    settings, params = config.settings, config.params
    train_tok, _ = tokenize_lists(train_lists)
    dev_tok, _ = tokenize_lists(dev_lists)
    if not any(t.item.has_relevant for t in dev_tok):
        raise ValueError("the dev data has no question with a correct candidate: no epoch can be selected")
    questions = [vectors.encode(t.question[: params.max_question_len]) for t in train_tok]
    answers = [[vectors.encode(c[: params.max_answer_len]) if c else None for c in t.candidates]
               for t in train_tok]
    pairs = training_pairs(train_tok)
    if not pairs:
        raise ValueError("the training data has no (correct, wrong) candidate pair")
    matcher = Matcher(config.name, build_model(params), vectors)
    model = matcher.model
    optimizer = make_optimizer(model, settings)
    generator = random.Random(settings.seed)
    log: list[dict[str, float]] = []
    best_map, best_state, best_epoch, stale = -1.0, copy.deepcopy(model.state_dict()), 0, 0
    started = time.perf_counter()
    epochs = tqdm(range(1, settings.max_epochs + 1), desc=config.name, unit="epoch", disable=not show_progress)
    for epoch in epochs:
        model.train()
        generator.shuffle(pairs)
        losses = []
        steps = tqdm(range(0, len(pairs), settings.batch_size), leave=False, unit="batch",
                     desc=f"epoch {epoch}", disable=not show_progress)
        for start in steps:
            chunk = pairs[start: start + settings.batch_size]
            batch_questions: list[EncodedText] = [questions[n] for n, _, _ in chunk] * 2
            batch_answers = [answers[n][p] for n, p, _ in chunk] + [answers[n][q] for n, _, q in chunk]
            batch = make_batch(batch_questions, batch_answers, params.max_question_len, params.max_answer_len)
            scores = model(batch)
            positive, negative = scores[: len(chunk)], scores[len(chunk):]
            loss = torch.clamp(settings.margin - positive + negative, min=0).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            steps.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
        model.eval()
        current = dev_map(matcher, dev_tok)
        entry = {"epoch": epoch, "train_loss": float(np.mean(losses)), "dev_MAP": current,
                 "seconds": round(time.perf_counter() - started, 1)}
        log.append(entry)
        epochs.set_postfix(loss=f"{entry['train_loss']:.4f}", dev_MAP=f"{current:.4f}",
                           best=f"{max(best_map, current):.4f}")
        if on_epoch:
            on_epoch(entry)
        if current > best_map:
            best_map, best_state, best_epoch, stale = current, copy.deepcopy(model.state_dict()), epoch, 0
        else:
            stale += 1
        out_of_time = settings.max_seconds is not None and time.perf_counter() - started > settings.max_seconds
        if stale >= settings.patience or out_of_time:
            break
    model.load_state_dict(best_state)
    model.eval()
    for entry in log:
        entry["selected"] = entry["epoch"] == best_epoch
    return matcher, log


def architecture_text(params: ModelParams) -> str:
    return family_of(params).architecture_text(params)


def train_and_card(config: TrainingConfig, data: Path, vectors: WordVectors | None = None,
                   show_progress: bool = True) -> tuple[Matcher, dict[str, Any]]:
    """Train on data/train with dev selection, then read test once for the card."""
    vectors = vectors or load_glove()
    splits = {split: read_toks_folder(data / split) for split in ("train", "dev")}
    matcher, log = train(config, splits["train"], splits["dev"], vectors, show_progress=show_progress)
    splits["test"] = read_toks_folder(data / "test")  # read once, after selection
    metrics, baselines = {}, {}
    for split in ("dev", "test"):
        result = evaluate(splits[split], {config.name: matcher})
        metrics[split] = result.overall[config.name]
        baselines[split] = {s: result.overall[s] for s in result.systems if s != config.name}
    best = next(e for e in log if e["selected"])
    card = {
        "name": config.name, "description": config.description,
        "architecture": architecture_text(config.params),
        "params": params_to_dict(config.params), "training": asdict(config.settings),
        "seed": config.settings.seed, "epochs_run": len(log), "best_epoch": best["epoch"],
        "training_seconds": log[-1]["seconds"], "log": log,
        "metrics": metrics, "baselines": baselines, "paper": config.paper,
        "data": {"source": str(data.name), **{split: {"fingerprint": fingerprint(lists),
                 "questions": len(lists), "pairs": sum(len(x.candidates) for x in lists)}
                 for split, lists in splits.items()}},
        "vocabulary": vectors.describe(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "code_version": code_version(),
        "command": f"python -m matching train --config configs/{config.name}.json --data {data} "
                   f"--out pretrained/{config.name} --seed {config.settings.seed}",
    }
    return matcher, card


def save_trained(matcher: Matcher, card: dict[str, Any], out: Path) -> None:
    from .cards import render_card

    save_checkpoint(matcher, out, card)
    (out / "README.md").write_text(render_card(card), encoding="utf-8")
