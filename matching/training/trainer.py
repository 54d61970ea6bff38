"""Training: pairwise hinge loss, negatives from the same question, early stopping on dev MAP.

Reproducible: one seed fixes the initial weights, the pair order and dropout; torch
runs on one thread so that results do not depend on the machine's core count.
Selection uses dev only; test is read once, at the end, for the model card.
"""

from __future__ import annotations

import copy
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

from matching import __version__
from matching.evaluation.dataset import evaluate, model_scores
from matching.evaluation.metrics import mean_metrics, question_metrics
from matching.evaluation.studies import (
    AttentionStudy,
    KeywordStudy,
    PairedTest,
    attention_study,
    keyword_study,
    paired_tests,
)
from matching.explain.matcher import Matcher
from matching.models import ForwardTrace, PairBatch, build_model, family_of, params_from_dict
from matching.models.base import fit_to_corpus, sized_for_corpus
from matching.models.batching import ListStatistics, batch_on, make_batch
from matching.models.blocks import length_mask, normalised_entropy
from matching.models.params import ModelParams, params_to_dict
from matching.text.baselines import BASELINES, word_overlap
from matching.text.corpus import Corpus
from matching.text.data import DataError, RankingList, fingerprint, read_toks_folder
from matching.text.embeddings import WordVectors, load_glove
from matching.text.tokenized import TokenizedList, tokenize_lists
from matching.text.tokens import Token
from matching.training.cards import (
    HARD_NEGATIVES,
    ModelCard,
    SeedStudy,
    deviations,
    group_of,
    mean_over_sources,
    render_card,
)
from matching.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from matching.training.score_cache import cached_scores

LOSSES = ("hinge", "listwise")


@dataclass(frozen=True)
class TrainingSettings:
    seed: int = 1
    max_epochs: int = 20
    patience: int = 4
    """Stop after this many epochs without a better dev MAP (not used with `average_epochs`)."""
    batch_size: int = 64
    """Pairs per batch for the hinge loss; questions per batch for the listwise loss."""
    optimizer: str = "adam"
    learning_rate: float = 1e-3
    weight_decay: float = 0.0
    margin: float = 1.0
    max_seconds: float | None = None
    """Optional wall-clock cap on starting new epochs. Off by default: a time cap makes the
    number of epochs, and so the model, depend on the machine's speed."""
    loss: str = "hinge"
    """`hinge`: max(0, margin - s+ + s-) over every (correct, wrong) pair of a question, as
    in the papers; `listwise`: softmax cross-entropy over all candidates of a question,
    the correct ones sharing the target mass."""
    average_epochs: int = 0
    """0: keep the epoch with the best dev MAP (early stopping). N > 0: run all
    `max_epochs` and ship the mean of the weights after each of the last N epochs, so
    the shipped model depends neither on a lucky epoch nor on dev."""
    entropy_penalty: float = 0.0
    """Adds this times the mean normalised entropy of alpha to the loss (aMV-LSTM)."""
    attention_weight_decay: bool = True
    """False: the attention vectors V get no weight decay (decay pulls V to 0, i.e. flat attention)."""
    keyword_learning_rate: float | None = None
    """The keyword term's weights' own learning rate (None: `learning_rate`). Adam moves a weight by about
    the learning rate per step whatever its gradient, so a few hundred steps at 1e-3 leave the three keyword
    weights near their start; a larger rate lets them reach the size the learned match's scores have."""
    tuned_vectors_learning_rate: float | None = None
    """The fine-tuned word vectors' offsets' own learning rate (None: `learning_rate`): Adam moves each
    offset by about the learning rate per step, so a smaller one keeps the words nearer GloVe's."""
    word_dropout: float = 0.0
    """Each real word of a training text is read as an unknown word (the learned unknown-word vector)
    with this probability, drawn afresh for every batch: the model cannot lean on one word's vector.
    The words' lookup keys stay, so exact-match and keyword features still see them."""
    echo_negatives: bool = False
    """Each training question also gets itself as a wrong candidate: a text that repeats the question's
    words is not an answer to it (the failure the keyword issue found: "Who wrote the novel
    Frankenstein is a common quiz question." ranked above the answer)."""
    hard_negative_copies: int = 0
    """Hinge loss: each (correct, wrong) pair whose wrong candidate is one of the question's two with
    the most words in common with it (word overlap) comes this many extra times an epoch."""
    hinge_negatives: int = 0
    """Hinge loss: 0 pairs each correct candidate with every wrong one of its question, every epoch; N > 0
    with N of them (all, where it has fewer), drawn afresh each epoch with the seed. TRAIN-ALL's 6,303
    correct answers make 504,501 (correct, wrong) pairs, about ten times the listwise loss's work an
    epoch; two drawn for each correct answer (12,529 pairs) are half of it."""
    keyword_solo: float = 0.0
    """Each training unit (a question for the listwise loss, a pair for the hinge loss) is scored by the
    keyword term alone with this probability, drawn afresh every epoch: on those, the keyword weights must
    rank by themselves, so they grow to the size a ranker's scores need instead of staying a rounding
    beside a learned match that fits the training questions (the keyword issue: within a question the
    learned part spread by 1.2 to 1.9, the keywords by 0.02 to 0.09, so they never decided). The shipped
    model is scored as always: learned match + keywords, split exactly."""
    keyword_solo_source: str = ""
    """The training questions of this source (a combined folder's question-id prefix, `text.data.combine_data`)
    are always scored by the keyword term alone, the others as `keyword_solo` draws: for generated questions
    (`training.pseudo_questions`) whose garbled text should teach the keyword weights which words set one
    sentence of a section apart, not the learned match what a question reads like."""
    solo_echoes: str = "whole"
    """With `keyword_solo` and `echo_negatives`: what an echo is in a question scored by the keywords alone.
    `whole`: it keeps its whole score (learned match + keywords), the only row of that question the learned
    match scores, which it can only lower; over many such questions that pushed every learned score down
    and left the learned match near chance (0.52 MAP alone). `left out`: the echo is not in that question's
    loss, so the echoes teach the learned match only beside answers it scores too. `keywords alone`: it is
    scored by the keywords alone like the question's other rows, for a model whose keyword term has the
    echo feature (`ModelParams.keyword_echo`), which can tell a restated question from an answer. `keywords
    only`: as `keywords alone`, and left out of every other question's loss, so that only the keyword term
    learns from echoes: scored whole, they taught the learned match to mark down what repeats the question's
    words, and it carried less to the source it was not trained on (WikiQA -> TrecQA dev 0.7750 -> 0.7398).
    `echo weight only`: as `keywords only`, and an echo's gradient reaches the echo feature's weight alone:
    with `keywords only` the echoes still pushed the overlap and BM25 weights down (BM25 0.02 -> -0.84, and
    WikiQA -> TrecQA dev 0.7325), since an echo shares every word of its question."""
    learned_match_alone: bool = False
    """The learned match is trained as a ranker of its own: its loss is that of its score alone, and the keyword
    term's that of the whole score with the learned match held (no gradient reaches the learned match from the
    whole score). Trained beside the keyword term, as by default, the learned match learns what the keywords
    leave over, and where they are weak (WikiQA dev, 0.63 alone) that was too little (the pseudo-questions
    scored by the keyword term alone, docs/models-and-training.md): here it must rank every question by itself.
    Echoes stay out of the learned match's loss, as with every `solo_echoes` mode but `whole`. Measured for MCAN
    (docs/models-and-training.md): its learned match alone rose from 0.68 to 0.74-0.76 on WikiQA dev, but a keyword
    term sized to rank alone then pulled the whole below it there; for MV-LSTM it changed little. Not shipped."""
    learned_match_own_loss: bool = False
    """The learned match's own loss (its score alone, echo rows left out, as `learned_match_alone` has it) is added
    to the whole score's, whose gradient still reaches it, as deep supervision adds a loss on an inner output:
    the learned match must rank by itself and still learns beside the keyword term what it leaves over. Between
    the recipe (a residual beside keywords that decide, 0.68 alone on WikiQA dev for MCAN) and `learned_match_alone`
    (a ranker of its own, 0.74-0.76, beside a keyword term sized for it, whose sum fell below it on WikiQA dev).
    One of the two, not both. Measured for MCAN (docs/models-and-training.md): its learned match alone reached
    0.74-0.76 on WikiQA dev as with `learned_match_alone`, and the whole fell below it there, on set A and across
    sources. Not shipped."""
    ship_rule: str = "best dev MAP"
    """How a sweep chooses the seed to ship, on dev only. `best dev MAP`: over the dev split's questions
    pooled; `best mean over dev sources`: the mean of each dev source's MAP (a keyword model trained on
    several sources reports each in its keyword study), so that each source counts the same, whatever its
    number of dev questions, as the default models are chosen: text from a source no model saw is what the
    shipped model is for. A model without per-source figures falls back to `best dev MAP`."""
    teachers: tuple[str, ...] = ()
    """Model folders (trained checkpoints) whose mean score teaches this model beside the labels (knowledge
    distillation from an ensemble, Hinton et al. 2015): before the first epoch each teacher scores every
    training list, and each question's loss gains `teacher_weight` times the cross-entropy between the
    softmax of the teachers' mean score and the model's, both at `teacher_temperature` (times its square, so
    the term's gradient keeps its size whatever the temperature). The mean of five seeds' scores ranks better
    than the seeds do, most on text none of them saw (docs/models-and-training.md, "The seeds together"), but
    it is five forward passes that the app would have to explain; a model taught by it is one. Listwise loss
    only; rows the keyword term alone scores (`keyword_solo`) and echo rows are left out of this term, so that
    it teaches the whole score where the labels do."""
    teacher_weight: float = 1.0
    teacher_temperature: float = 2.0
    fit_on_dev: bool = False
    """True: train on train + dev with a schedule fixed in advance (needs `average_epochs`), and
    ship the config's own seed, fixed in advance: dev chooses nothing, and its 126 questions
    (14% more data) train the model. Its dev figures are then training figures."""

    def to_dict(self) -> dict[str, Any]:
        """The settings as a card keeps them: JSON's types (the teachers a list), so a card read back compares equal."""
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> TrainingSettings:
        """Settings from JSON (a config's "training"): its lists as tuples, the settings being frozen."""
        return cls(**{key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()})

    def validate(self) -> None:
        if not 0.0 <= self.word_dropout < 1.0:
            raise ValueError(f"word_dropout must be in [0, 1), not {self.word_dropout}")
        if self.hard_negative_copies < 0:
            raise ValueError(f"hard_negative_copies must be >= 0, not {self.hard_negative_copies}")
        if self.hard_negative_copies and self.loss != "hinge":
            raise ValueError("hard_negative_copies repeats (correct, wrong) pairs: it needs the hinge loss")
        if self.hinge_negatives < 0:
            raise ValueError(f"hinge_negatives must be >= 0, not {self.hinge_negatives}")
        if self.hinge_negatives and self.loss != "hinge":
            raise ValueError("hinge_negatives draws (correct, wrong) pairs: it needs the hinge loss")
        if self.hinge_negatives and self.hard_negative_copies:
            raise ValueError("hinge_negatives draws the wrong candidates; hard_negative_copies repeats fixed ones: "
                             "choose one")
        if not 0.0 <= self.keyword_solo < 1.0:
            raise ValueError(f"keyword_solo must be in [0, 1), not {self.keyword_solo}")
        if self.ship_rule not in SHIP_RULES:
            raise ValueError(f"ship_rule must be one of {', '.join(SHIP_RULES)}, not {self.ship_rule!r}")
        if self.learned_match_alone and self.learned_match_own_loss:
            raise ValueError("learned_match_alone holds the learned match out of the whole score's loss; "
                             "learned_match_own_loss keeps it in: choose one")
        if self.teachers and self.loss != "listwise":
            raise ValueError("teachers teach through each question's softmax: they need the listwise loss")
        if self.teacher_weight < 0 or self.teacher_temperature <= 0:
            raise ValueError(f"teacher_weight must be >= 0 and teacher_temperature > 0, not {self.teacher_weight} "
                             f"and {self.teacher_temperature}")
        if self.solo_echoes not in SOLO_ECHOES:
            raise ValueError(f"solo_echoes must be one of {', '.join(SOLO_ECHOES)}, not {self.solo_echoes!r}")


@dataclass(frozen=True)
class TrainingConfig:
    name: str
    params: ModelParams
    settings: TrainingSettings
    description: str = ""
    paper: dict[str, Any] = field(default_factory=dict)
    """The paper's WikiQA figures for this model, shown beside ours in the card."""
    path: str = ""
    """The config file it was read from (named in the card's command)."""


def load_config(path: str | Path) -> TrainingConfig:
    """A training config (configs/*.json); a `DataError` that says what is wrong with the file, not a traceback."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: config file missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{path}: not a readable JSON config ({error})") from None
    try:
        return TrainingConfig(name=raw["name"], params=params_from_dict(raw["model"]),
                              settings=TrainingSettings.from_dict(raw.get("training", {})),
                              description=raw.get("description", ""), paper=raw.get("paper", {}), path=str(path))
    except KeyError as error:
        raise DataError(f"{path}: the config has no {error} entry (see configs/ for examples)") from None
    except (TypeError, ValueError, AttributeError) as error:  # a setting unknown or of the wrong kind
        raise DataError(f"{path}: {error}") from None


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


def cpu_model() -> str:
    """The processor's name as the system gives it ("AMD EPYC", "Intel(R) Xeon(R) ..."), or "" where it gives none."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


def training_environment(device: torch.device) -> str:
    """What a model's float sums depend on besides the code and the seed: the torch build, its threads, the device,
    and on a CPU its model and the vector instructions torch uses there (AVX2, AVX512): the same command, data and
    seed gave the same weights run after run on one machine, and on another CPU a model whose dev MAP differed in
    the fourth decimal (docs/models-and-training.md, "The `mvlstm-em-kw-all` recipe trained again here")."""
    processor = ", ".join(filter(None, (cpu_model(), torch.backends.cpu.get_cpu_capability())))
    machine = f"{platform.machine()} with {os.cpu_count()} cores ({processor})"
    place = machine if device.type == "cpu" else f"{torch.cuda.get_device_name(device)} ({machine})"
    return f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {device.type}: {place}"


def training_pairs(lists: list[TokenizedList], hard_negative_copies: int = 0, negatives_each: int = 0,
                   draw: random.Random | None = None) -> list[tuple[int, int, int]]:
    """(list, positive, negative) for every positive/negative pair of every question; with
    `hard_negative_copies`, the pairs of each question's HARD_NEGATIVES wrong candidates of most
    word overlap with it (ties: the earlier candidate) that many extra times; with `negatives_each`,
    only that many of each positive's pairs, their wrong candidates drawn with `draw`."""
    if negatives_each and draw is None:
        raise ValueError("negatives_each draws the wrong candidates: it needs a random generator to draw with")
    pairs = []
    for n, item in enumerate(lists):
        labels = item.item.labels
        positives = [j for j, y in enumerate(labels) if y and item.candidates[j]]
        negatives = [j for j, y in enumerate(labels) if not y and item.candidates[j]]
        if negatives_each and draw is not None:
            pairs.extend((n, p, q) for p in positives
                         for q in draw.sample(negatives, min(negatives_each, len(negatives))))
            continue
        pairs.extend((n, p, q) for p in positives for q in negatives)
        if hard_negative_copies and positives and negatives:
            overlap = word_overlap(item.question, [item.candidates[j] for j in negatives])
            hard = [negatives[i] for i in np.argsort(-overlap, kind="stable")[:HARD_NEGATIVES]]
            pairs.extend((n, p, q) for _ in range(hard_negative_copies) for p in positives for q in hard)
    return pairs


def with_echo_negatives(lists: list[TokenizedList]) -> list[TokenizedList]:
    """Each list with its own question added as a last, wrong candidate (`TrainingSettings.echo_negatives`)."""
    return [TokenizedList(replace(t.item, candidates=(*t.item.candidates, t.item.question),
                                  labels=(*t.item.labels, 0)), t.question, [*t.candidates, list(t.question)])
            for t in lists]


def drop_words(batch: PairBatch, rate: float, generator: torch.Generator) -> PairBatch:
    """The batch with each real word of either side read as unknown with probability `rate`."""
    def dropped(unknown: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        drawn = torch.rand(unknown.shape, generator=generator) < rate
        return unknown | (drawn & length_mask(lengths, unknown.shape[1]))

    return replace(batch, question_unknown=dropped(batch.question_unknown, batch.question_lengths),
                   answer_unknown=dropped(batch.answer_unknown, batch.answer_lengths))


SOLO_ECHOES = ("whole", "left out", "keywords alone", "keywords only", "echo weight only")
ECHO_FEATURE_MODES = ("keywords alone", "keywords only", "echo weight only")
"""The `solo_echoes` modes that score an echo by the keywords alone: they need the echo feature."""
SHIP_RULES = ("best dev MAP", "best mean over dev sources")
LEFT_OUT = -1e4
"""The score of a candidate taken out of its question's loss: its softmax share and its hinge terms are 0."""


def keywords_alone_where(model: torch.nn.Module, batch: PairBatch, scores: torch.Tensor,
                         solo: torch.Tensor) -> torch.Tensor:
    """The scores with the learned match left out of the rows where `solo` (B,) is true: there the score is
    the keyword term alone (`TrainingSettings.keyword_solo`)."""
    return torch.where(solo, model.keyword_score(batch), scores)


def learned_match_held(model: torch.nn.Module, batch: PairBatch, scores: torch.Tensor,
                       echoes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`TrainingSettings.learned_match_alone`: the learned match's own training scores (echo rows left out of its
    loss), and the whole scores with the learned match held, whose gradient reaches the keyword term alone. Their
    values are those of the model's two parts and of its whole score. (`learned_match_own_loss` takes the first
    alone and keeps the whole scores as they are.)"""
    keywords = model.keyword_score(batch)
    learned = scores - keywords  # the model's whole score is learned match + keyword term
    return torch.where(echoes.to(scores.device), LEFT_OUT, learned), learned.detach() + keywords


def solo_scores(model: torch.nn.Module, batch: PairBatch, scores: torch.Tensor, solo: torch.Tensor,
                echoes: torch.Tensor, solo_echoes: str) -> torch.Tensor:
    """The training scores of a batch where `solo` (B,) marks the rows of keyword-alone units and `echoes`
    (B,) the echo rows. Without the echo feature no keyword weight can tell a repeated question from an
    answer, so an echo keeps its whole score or leaves the loss; with it, the keywords alone score it too,
    and with `keywords only` it leaves every other question's loss (`solo_echoes`)."""
    solo, echoes = solo.to(scores.device), echoes.to(scores.device)
    if solo_echoes in ECHO_FEATURE_MODES:
        features = model.keyword_features(batch)
        weights = model.keywords.weights
        keywords = (features * weights).sum(-1)
        if solo_echoes == "echo weight only":  # the same value; an echo's gradient reaches the echo weight (last) alone
            held = (features * torch.cat([weights[:-1].detach(), weights[-1:]])).sum(-1)
            keywords = torch.where(echoes, held, keywords)
        scores = torch.where(solo, keywords, scores)
        return torch.where(echoes & ~solo, LEFT_OUT, scores) if solo_echoes != "keywords alone" else scores
    scores = keywords_alone_where(model, batch, scores, solo & ~echoes)
    return torch.where(solo & echoes, LEFT_OUT, scores) if solo_echoes == "left out" else scores


def teacher_scores(folders: tuple[str, ...], lists: list[TokenizedList], vectors: WordVectors,
                   show_progress: bool = True, cache: Path | None = None) -> list[np.ndarray]:
    """Each list's candidates scored by every teacher (`TrainingSettings.teachers`), the mean of their scores; one
    teacher is loaded at a time. A candidate no model can read gets -inf, as when scoring for a ranking. Each
    teacher's scores are kept on disk (`score_cache`, under `cache` or its default folder), so the other seeds of a
    setting read them instead of scoring again."""
    if missing := [folder for folder in folders if not Path(folder).is_dir()]:
        raise CheckpointError(f"teacher checkpoint folder(s) not found: {', '.join(missing)} (train the teachers "
                              "first: a taught config's description gives their command)")
    total: list[np.ndarray] = []
    with torch.random.fork_rng(devices=[]):  # building a teacher draws its initial weights: not from the seed's stream
        for number, folder in enumerate(folders, 1):
            if show_progress:
                print(f"teacher {number}/{len(folders)}: scoring the training lists with {folder}", file=sys.stderr,
                      flush=True)
            scores = cached_scores(Path(folder), lists,
                                   lambda folder=folder: model_scores(load_checkpoint(Path(folder), vectors), lists),
                                   cache, show_progress)
            total = scores if not total else [a + b for a, b in zip(total, scores, strict=True)]
    return [t / len(folders) for t in total]


def dev_map(matcher: Matcher, lists: list[TokenizedList]) -> float:
    return dev_map_by_source(matcher, lists)["dev"]


def dev_map_by_source(matcher: Matcher, lists: list[TokenizedList]) -> dict[str, float]:
    """Dev MAP pooled ("dev") and, for a combined folder, of each source's questions (their ids start "source:")."""
    scores = model_scores(matcher, lists)
    metrics = [question_metrics(s, t.item.labels) for s, t in zip(scores, lists, strict=True)]
    groups: dict[str, list[dict[str, float]]] = {"dev": metrics}
    for metric, tokenized in zip(metrics, lists, strict=True):
        if (source := source_of(tokenized.item.qid)) is not None:
            groups.setdefault(source, []).append(metric)
    return {name: mean_metrics(group)["MAP"] for name, group in groups.items()}


def averaging_windows(matcher: Matcher, states: list[dict[str, torch.Tensor]],
                      lists: list[TokenizedList]) -> dict[str, dict[str, float]]:
    """Dev MAP of the average of the last k epochs' weights, for every k up to len(states): what a shorter
    `average_epochs` would have shipped from this very run (the epochs are the same; only the average differs),
    so one run answers for every window. Leaves the model holding the average of all of them (the last window)."""
    windows = {}
    for k in range(1, len(states) + 1):
        matcher.model.load_state_dict(average_states(states[-k:]))
        matcher.model.eval()
        windows[str(k)] = dev_map_by_source(matcher, lists)
    return windows


def make_optimizer(model: torch.nn.Module, settings: TrainingSettings) -> torch.optim.Optimizer:
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    no_decay = [p for name, p in named if not settings.attention_weight_decay and name.startswith("gates.")]
    own_rates = [(prefix, rate) for prefix, rate in (("keywords.", settings.keyword_learning_rate),
                                                     ("tuned_words.", settings.tuned_vectors_learning_rate))
                 if rate is not None]
    own = [[p for name, p in named if name.startswith(prefix)] for prefix, _ in own_rates]
    apart = [*no_decay, *(p for params in own for p in params)]
    groups = [{"params": [p for _, p in named if all(p is not q for q in apart)]}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    groups += [{"params": params, "lr": rate} for params, (_, rate) in zip(own, own_rates, strict=True) if params]
    if settings.optimizer == "adagrad":
        return torch.optim.Adagrad(groups, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    if settings.optimizer == "adam":
        return torch.optim.AdamW(groups, lr=settings.learning_rate, weight_decay=settings.weight_decay)
    raise ValueError(f"unknown optimizer {settings.optimizer!r}")


def attention_entropy(trace: ForwardTrace, batch: PairBatch) -> torch.Tensor:
    """Mean normalised entropy of alpha over the attended sides of a batch."""
    sides = [(trace.question_attention, batch.question_lengths), (trace.answer_attention, batch.answer_lengths)]
    values = [normalised_entropy(alpha, length_mask(lengths, alpha.shape[1])).mean()
              for alpha, lengths in sides if alpha is not None]
    return torch.stack(values).mean() if values else torch.zeros(())


class _Batches:
    """One epoch's batches and their loss, for the pairwise hinge or the listwise loss.

    The texts are kept as tokens and looked up a batch at a time: TRAIN-ALL's 53,000 answers held as
    vectors took over 2 GB, so memory now stays that of one batch whatever the size of the data (the
    lookups cost about a second an epoch, and give the same vectors)."""

    def __init__(self, lists: list[TokenizedList], questions: list[list[Token]],
                 answers: list[list[list[Token] | None]], settings: TrainingSettings, params: ModelParams,
                 vectors: WordVectors) -> None:
        self.questions, self.answers, self.settings, self.params = questions, answers, settings, params
        self.vectors, self.lists = vectors, lists
        self.teacher: list[np.ndarray] | None = None  # the teachers' mean score of each candidate, where taught
        self.solo_lists = None
        if source := settings.keyword_solo_source:
            sources = [source_of(t.item.qid) for t in lists]
            if source not in sources:  # a misspelt source would change nothing
                found = sorted({name or "(no source prefix)" for name in sources})
                raise ValueError(f"keyword_solo_source {source!r}: no training question of that source "
                                 f"(the sources here: {', '.join(found)})")
            self.solo_lists = torch.tensor([name == source for name in sources])
        # What the model reads from each list, once: over the whole texts of the list as trained (an echo negative
        # included), as `Matcher.listed` reads the candidates given with a question when scoring.
        self.listed = [ListStatistics.of(params, [t.question] * len(t.candidates), t.candidates) for t in lists]
        if settings.loss == "hinge":
            # With hinge_negatives each epoch draws its own pairs (`new_epoch`); this draw, with a generator of its
            # own, only shows whether there is any pair, without building all of them (504,501 on TRAIN-ALL).
            self.units: list[Any] = training_pairs(lists, settings.hard_negative_copies, settings.hinge_negatives,
                                                   random.Random(settings.seed))
            if not self.units:
                raise ValueError("the training data has no (correct, wrong) candidate pair")
        elif settings.loss == "listwise":
            self.units = [(n, [j for j, a in enumerate(answers[n]) if a is not None])
                          for n in range(len(lists))]
            self.units = [(n, js) for n, js in self.units
                          if 0 < sum(lists[n].item.labels[j] for j in js) < len(js)]
            self.labels = [item.item.labels for item in lists]
            if not self.units:
                raise ValueError("the training data has no question with both correct and wrong candidates")
        else:
            raise ValueError(f"unknown loss {settings.loss!r}; known: {LOSSES}")

    def __len__(self) -> int:
        return len(self.units)

    def new_epoch(self, generator: random.Random) -> None:
        """The epoch's units in a new order; with `hinge_negatives`, their wrong candidates drawn anew first."""
        if self.settings.hinge_negatives:
            self.units = training_pairs(self.lists, negatives_each=self.settings.hinge_negatives, draw=generator)
        generator.shuffle(self.units)

    def unit_rows(self, chunk: list[Any]) -> torch.Tensor:
        """(rows,) the place in `chunk` of the unit each row of its batch belongs to."""
        if self.settings.loss == "hinge":
            return torch.arange(len(chunk)).repeat(2)
        return torch.repeat_interleave(torch.arange(len(chunk)), torch.tensor([len(js) for _, js in chunk]))

    def solo_rows(self, chunk: list[Any], solo_rate: float, draw: torch.Generator) -> torch.Tensor:
        """(rows,) which rows of the chunk's batch the keyword term alone scores: each unit drawn with `solo_rate`,
        and every unit of a list from `keyword_solo_source` (the draw is made for every unit all the same, so
        that a run without that source draws as before)."""
        solo = torch.rand(len(chunk), generator=draw) < solo_rate
        if self.solo_lists is not None:
            solo = solo | self.solo_lists[[unit[0] for unit in chunk]]
        return solo[self.unit_rows(chunk)]

    def echo_rows(self, chunk: list[Any]) -> torch.Tensor:
        """(rows,) which rows of the chunk's batch are a question's echo (`with_echo_negatives` puts it last)."""
        last = [len(candidates) - 1 if self.settings.echo_negatives else -1 for candidates in self.answers]
        if self.settings.loss == "hinge":
            return torch.tensor([False] * len(chunk) + [q == last[n] for n, _, q in chunk])
        return torch.tensor([j == last[n] for n, js in chunk for j in js])

    def taught(self, chunk: list[Any], scores: torch.Tensor, kept: torch.Tensor) -> torch.Tensor:
        """The teachers' term of a listwise chunk's loss (`TrainingSettings.teachers`): per question, the
        cross-entropy between the softmax of the teachers' mean scores and of the model's `scores`, over its `kept`
        rows (the others are keyword-alone or echo rows), at the temperature, times its square; the mean over the
        questions with two rows kept or more."""
        assert self.teacher is not None
        temperature = self.settings.teacher_temperature
        sizes = [len(js) for _, js in chunk]
        targets = torch.tensor([self.teacher[n][j] for n, js in chunk for j in js], dtype=scores.dtype)
        losses = [-(torch.softmax(target[keep] / temperature, 0) * torch.log_softmax(part[keep] / temperature, 0)).sum()
                  for part, target, keep in zip(scores.split(sizes), targets.split(sizes), kept.split(sizes),
                                                strict=True) if int(keep.sum()) >= 2]
        return torch.stack(losses).mean() * temperature ** 2 if losses else scores.sum() * 0.0

    def batch(self, chunk: list[Any]) -> tuple[PairBatch, Callable[[torch.Tensor], torch.Tensor]]:
        """The padded batch of a chunk of units, and the loss of its scores."""
        # (list, candidate) of each row of the batch
        places = ([(n, p) for n, p, _ in chunk] + [(n, q) for n, _, q in chunk] if self.settings.loss == "hinge"
                  else [(n, j) for n, js in chunk for j in js])
        questions = [self.questions[n] for n, _ in places]
        answers = [self.answers[n][j] for n, j in places]
        if self.settings.loss == "hinge":
            def hinge(scores: torch.Tensor) -> torch.Tensor:
                positive, negative = scores[: len(chunk)], scores[len(chunk):]
                return torch.clamp(self.settings.margin - positive + negative, min=0).mean()

            loss = hinge
        else:
            sizes = [len(js) for _, js in chunk]
            targets = torch.tensor([float(self.labels[n][j]) for n, j in places])

            def listwise(scores: torch.Tensor) -> torch.Tensor:
                losses = []
                for part, target in zip(scores.split(sizes), targets.split(sizes), strict=True):
                    losses.append(-(torch.log_softmax(part, 0) * target).sum() / target.sum())
                return torch.stack(losses).mean()

            loss = listwise
        encode = self.vectors.encode
        listed = None if self.listed[places[0][0]] is None else ListStatistics.rows(self.listed, places)  # type: ignore[arg-type]
        batch = make_batch([encode(q) for q in questions], [encode(a) for a in answers],  # type: ignore[arg-type]
                           self.params.max_question_len, self.params.max_answer_len, listed)
        return batch, loss


def average_states(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The mean of several state dicts (floating tensors; others, e.g. ids, from the last)."""
    return {key: torch.stack([s[key] for s in states]).mean(0) if value.is_floating_point() else value
            for key, value in states[-1].items()}


EpochCallback = Callable[[dict[str, float]], None]


def train(config: TrainingConfig, train_lists: list[RankingList], dev_lists: list[RankingList],
          vectors: WordVectors | None = None, on_epoch: EpochCallback | None = None,
          show_progress: bool = True, device: torch.device | None = None) -> tuple[Matcher, list[dict[str, float]]]:
    """Train one model; returns the shipped model (best-on-dev epoch, or the average of
    the last epochs) and the per-epoch log. The model and each batch are on `device` (the CPU by
    default); the loss is taken on the CPU, where the batch's targets are."""
    from tqdm.auto import tqdm

    torch.set_num_threads(1)
    set_seed(config.settings.seed)
    vectors = vectors or load_glove()
    settings, params = config.settings, config.params
    if settings.fit_on_dev:
        if not settings.average_epochs:
            raise ValueError("fit_on_dev needs a fixed schedule (average_epochs > 0): no dev is left to stop on")
        train_lists = [*train_lists, *dev_lists]
    settings.validate()
    if settings.solo_echoes in ECHO_FEATURE_MODES and not getattr(params, "keyword_echo", False):
        raise ValueError(f"solo_echoes {settings.solo_echoes!r} scores echoes by the keyword term: it needs a model "
                         "with keyword_echo true, whose keywords can tell a restated question from an answer")
    given_tok, _ = tokenize_lists(train_lists)
    train_tok = with_echo_negatives(given_tok) if settings.echo_negatives else given_tok
    dev_tok, _ = tokenize_lists(dev_lists)
    if not any(t.item.has_relevant for t in dev_tok):
        raise ValueError("the dev data has no question with a correct candidate: no epoch can be selected")
    questions = [t.question[: params.max_question_len] for t in train_tok]
    answers = [[c[: params.max_answer_len] if c else None for c in t.candidates] for t in train_tok]
    batches = _Batches(train_tok, questions, answers, settings, params, vectors)
    if settings.teachers:
        batches.teacher = teacher_scores(settings.teachers, train_tok, vectors, show_progress)
    # What the model keeps from the training answers (stored with its weights), sized before it is built.
    corpus = Corpus.of((c for t in given_tok for c in t.candidates if c), vectors)  # the given answers only
    params = sized_for_corpus(params, corpus)
    matcher = Matcher(config.name, build_model(params), vectors)
    model = matcher.model
    fit_to_corpus(model, corpus)
    matcher.to(device or torch.device("cpu"))
    optimizer = make_optimizer(model, settings)
    generator = random.Random(settings.seed)
    dropout_generator = torch.Generator().manual_seed(settings.seed)
    log: list[dict[str, float]] = []
    best_map, best_state, best_epoch, stale = -1.0, copy.deepcopy(model.state_dict()), 0, 0
    recent: list[dict[str, torch.Tensor]] = []
    penalty = settings.entropy_penalty if params.attended_sides else 0.0
    if (settings.keyword_solo or settings.keyword_solo_source) and model.keywords is None:
        raise ValueError("keyword_solo trains the keyword term alone on some questions: the model needs keywords")
    own_loss = settings.learned_match_alone or settings.learned_match_own_loss
    if own_loss and model.keywords is None:
        raise ValueError(f"{'learned_match_alone' if settings.learned_match_alone else 'learned_match_own_loss'} "
                         "trains the learned match on its own score beside the keyword term: the model needs keywords")
    solo_rate = settings.keyword_solo
    solo_generator = torch.Generator().manual_seed(settings.seed + 1)
    started = time.perf_counter()
    # A terminal gets tqdm's bars updating in place; a log or a pipe one plain line an epoch, as
    # bars written there come out as hundreds of lines of carriage returns.
    plain = show_progress and not sys.stderr.isatty()
    bars = show_progress and not plain
    epochs = tqdm(range(1, settings.max_epochs + 1), desc=config.name, unit="epoch", disable=not bars)
    for epoch in epochs:
        model.train()
        batches.new_epoch(generator)
        losses = []
        steps = tqdm(range(0, len(batches), settings.batch_size), leave=False, unit="batch",
                     desc=f"epoch {epoch}", disable=not bars)
        for start in steps:
            batch, loss_of = batches.batch(batches.units[start: start + settings.batch_size])
            if settings.word_dropout:
                batch = drop_words(batch, settings.word_dropout, dropout_generator)
            batch = batch_on(batch, matcher.device)
            trace = model(batch, trace=True) if penalty else None
            scores = trace.score if trace is not None else model(batch)
            chunk = batches.units[start: start + settings.batch_size]
            solo_units = bool(solo_rate) or batches.solo_lists is not None
            taught = batches.teacher is not None
            echoes = batches.echo_rows(chunk) if own_loss or solo_units or taught else None
            whole, learned_loss = scores, None
            if own_loss:
                learned, held = learned_match_held(model, batch, scores, echoes)
                learned_loss = loss_of(learned.cpu())
                if settings.learned_match_alone:
                    scores = held
            solo = torch.zeros(len(whole), dtype=torch.bool)
            if solo_units:
                solo = batches.solo_rows(chunk, solo_rate, solo_generator)
                scores = solo_scores(model, batch, scores, solo, echoes, settings.solo_echoes)
            loss = loss_of(scores.cpu())
            if learned_loss is not None:
                loss = loss + learned_loss
            if taught:
                loss = loss + settings.teacher_weight * batches.taught(chunk, whole.cpu(), ~solo & ~echoes)
            if trace is not None:
                loss = loss + penalty * attention_entropy(trace, batch)
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
        if plain:
            # The time left if every epoch takes the mean so far (early stopping can only shorten it).
            left = entry["seconds"] / epoch * (settings.max_epochs - epoch)
            print(f"{config.name} (seed {settings.seed}): epoch {epoch}/{settings.max_epochs}, train loss "
                  f"{entry['train_loss']:.4f}, dev MAP {current:.4f} ({entry['seconds']:.0f} s, about "
                  f"{left:.0f} s left)", file=sys.stderr, flush=True)
        if on_epoch:
            on_epoch(entry)
        if settings.average_epochs:
            recent = [*recent[-(settings.average_epochs - 1):], copy.deepcopy(model.state_dict())] \
                if settings.average_epochs > 1 else [copy.deepcopy(model.state_dict())]
            continue
        if current > best_map:
            best_map, best_state, best_epoch, stale = current, copy.deepcopy(model.state_dict()), epoch, 0
        else:
            stale += 1
        out_of_time = settings.max_seconds is not None and time.perf_counter() - started > settings.max_seconds
        if stale >= settings.patience or out_of_time:
            break
    if settings.average_epochs:
        windows = averaging_windows(matcher, recent, dev_tok)  # the model now holds the average of them all
        if len(recent) > 1:
            log[-1]["dev_MAP_averaging_the_last"] = windows
        kept = {e["epoch"] for e in log[-len(recent):]}
        log[-1]["averaged_dev_MAP"] = windows[str(len(recent))]["dev"]
    else:
        model.load_state_dict(best_state)
        kept = {best_epoch}
    model.eval()
    for entry in log:
        entry["selected"] = entry["epoch"] in kept
    return matcher, log


def by_source(lists: list[RankingList], source: str) -> dict[str, list[RankingList]]:
    """The lists of a data folder by the data set each came from: a combined folder's question ids start
    with their source's name and ':' (`text.data.combine_data`); others all belong to `source`."""
    out: dict[str, list[RankingList]] = {}
    for item in lists:
        out.setdefault(source_of(item.qid) or source, []).append(item)
    return out


def source_of(qid: str) -> str | None:
    """The source a combined folder's question id names ("wikiqa:Q1" -> "wikiqa"); None for an id without one."""
    name, colon, _ = qid.partition(":")
    return name if colon else None


def keyword_studies(matcher: Matcher, lists: list[RankingList], source: str) -> dict[str, KeywordStudy]:
    """`keyword_study` on each data set of `lists` (dev: read to report, like every dev figure)."""
    studies = {name: keyword_study(matcher, tokenize_lists(part)[0])
               for name, part in by_source(lists, source).items()}
    return {name: study for name, study in studies.items() if study is not None}


def architecture_text(params: ModelParams) -> str:
    return family_of(params).architecture_text(params)


def test_figures(matcher: Matcher, lists: list[RankingList]
                 ) -> tuple[dict[str, float], dict[str, dict[str, float]], list[PairedTest], AttentionStudy | None]:
    """Metrics, baselines, paired tests against each baseline and the attention study on a
    split (test: read to report, never to choose)."""
    result = evaluate(lists, {matcher.name: matcher})
    answerable = result.correct > 0
    significance = paired_tests([result.ap(matcher.name)[answerable]] * len(BASELINES),
                                [result.ap(name)[answerable] for name in BASELINES], BASELINES)
    attention = attention_study(matcher, tokenize_lists(lists)[0])
    baselines = {s: result.overall[s] for s in result.systems if s != matcher.name}
    return result.overall[matcher.name], baselines, significance, attention


def train_and_card(config: TrainingConfig, data: Path, vectors: WordVectors | None = None,
                   show_progress: bool = True, device: torch.device | None = None) -> tuple[Matcher, ModelCard]:
    """Train on data/train with dev selection, then read test once for the card."""
    vectors = vectors or load_glove()
    splits = {split: read_toks_folder(data / split) for split in ("train", "dev")}
    matcher, log = train(config, splits["train"], splits["dev"], vectors, show_progress=show_progress, device=device)
    dev = evaluate(splits["dev"], {config.name: matcher})
    splits["test"] = read_toks_folder(data / "test")  # read once, after selection
    test, test_baselines, significance, attention = test_figures(matcher, splits["test"])
    params, training = params_to_dict(matcher.params), config.settings.to_dict()
    card = ModelCard(
        name=config.name, description=config.description, architecture=architecture_text(matcher.params),
        params=params, training=training, seed=config.settings.seed, epochs_run=len(log),
        kept_epochs=[int(e["epoch"]) for e in log if e["selected"]], training_seconds=log[-1]["seconds"],
        log=log, metrics={"dev": dev.overall[config.name], "test": test},
        baselines={"dev": {s: dev.overall[s] for s in dev.systems if s != config.name}, "test": test_baselines},
        paper=config.paper,
        data={"source": str(data.name), **{split: {"fingerprint": fingerprint(lists), "questions": len(lists),
                                                  "pairs": sum(len(x.candidates) for x in lists)}
                                           for split, lists in splits.items()}},
        vocabulary=vectors.describe(), date=datetime.now(UTC).strftime("%Y-%m-%d"), code_version=code_version(),
        environment=training_environment(next(matcher.model.parameters()).device),
        command=f"python -m matching train --config {config.path or config.name + '.json'} --data {data} "
                f"--out pretrained/{config.name} --seed {config.settings.seed}"
                + (f" --teachers {' '.join(config.settings.teachers)}" if config.settings.teachers else ""),
        group=group_of(params, training), deviations=deviations(params, training, data.name),
        significance=significance, attention=attention,
        keywords=keyword_studies(matcher, splits["dev"], data.name))
    return matcher, card


def save_trained(matcher: Matcher, card: ModelCard, out: Path) -> None:
    save_checkpoint(matcher, out, card.to_dict())
    (out / "README.md").write_text(render_card(card), encoding="utf-8")


def choose_seed(cards: list[ModelCard], rule: str) -> tuple[ModelCard, str]:
    """The seed run to ship by `TrainingSettings.ship_rule`, and the rule's words for the card."""
    if rule == "best mean over dev sources" and all(card.keywords for card in cards):
        sources = ", ".join(cards[0].keywords)
        return max(cards, key=mean_over_sources), f"best mean of each dev source's MAP: {sources}"
    best = max(cards, key=lambda card: card.metrics["dev"]["MAP"])
    if rule == "best dev MAP":
        return best, "best dev MAP"
    return best, "best dev MAP (a run has no dev MAP per source)"


def seed_study(config: TrainingConfig, data: Path, seeds: list[int], work: Path, force: bool = False,
               vectors: WordVectors | None = None, show_progress: bool = True,
               device: torch.device | None = None) -> tuple[Path, ModelCard]:
    """Train `config` once per seed under work/<name>/seed-N (reusing finished runs unless
    `force`), and choose the seed to ship by dev MAP, never by test.

    Returns the chosen run's folder and its card, carrying the study of all seeds.
    """
    cards = []
    for seed in seeds:
        folder = work / config.name / f"seed-{seed}"
        if (folder / "card.json").exists() and not force:
            card = ModelCard.from_dict(json.loads((folder / "card.json").read_text(encoding="utf-8")))
            # Reused only where it is the config's recipe, whatever its name: an ablation's runs adopted under the
            # config's name pass; runs of this name from before the recipe changed do not.
            if differences := recipe_differences(card, config):
                trained = f"as {card.name}, whose recipe" if card.name != config.name else "with a recipe that"
                raise ValueError(f"{folder} was trained {trained} differs from {config.name}'s "
                                 f"({', '.join(differences)}): train it again (--force)")
            # The config's description, as it is now: it tells what was measured since the run was trained.
            card = replace(card, name=config.name, description=config.description)
        else:
            matcher, card = train_and_card(replace(config, settings=replace(config.settings, seed=seed)), data,
                                           vectors, show_progress, device)
            save_trained(matcher, card, folder)
        cards.append(card)
    dev = [c.metrics["dev"]["MAP"] for c in cards]
    test = [c.metrics["test"]["MAP"] for c in cards]
    if config.settings.fit_on_dev:  # dev was trained on: it cannot choose; the seed was fixed in advance
        if config.settings.seed not in seeds:
            raise ValueError(f"the config ships seed {config.settings.seed}, which is not among {seeds}")
        chosen, selection = cards[seeds.index(config.settings.seed)], \
            f"seed {config.settings.seed}, fixed in the config (dev is part of the training data)"
    else:
        chosen, selection = choose_seed(cards, config.settings.ship_rule)
    study = SeedStudy(seeds=list(seeds), dev_MAP=dev, test_MAP=test, mean=float(np.mean(test)),
                      std=float(np.std(test, ddof=1)) if len(test) > 1 else 0.0, selection=selection)
    # The architecture text from this code, not the run's copy.
    return work / config.name / f"seed-{chosen.seed}", replace(
        chosen, seed_study=study, architecture=architecture_text(params_from_dict(chosen.params)))


SIZED_PARAMS = ("keyword_words", "answer_type_words", "tuned_words", "idf_words")
"""Params a model takes from its training texts (`sized_for_corpus`), not from its config."""


def recipe_differences(card: ModelCard, config: TrainingConfig) -> list[str]:
    """The params and training settings (other than the seed and the sizes taken from the texts) in which a run's
    card differs from `config`: none where the run is `config`'s recipe under another name (an ablation adopted)."""
    wanted = {**params_to_dict(config.params), **{f"training.{k}": v for k, v in config.settings.to_dict().items()}}
    # A card written before a param or a setting existed has its default.
    found = {**params_to_dict(params_from_dict(card.params)),
             **{f"training.{k}": v for k, v in {**TrainingSettings().to_dict(), **card.training}.items()}}
    return sorted(key for key, value in wanted.items()
                  if key not in (*SIZED_PARAMS, "training.seed") and found.get(key) != value)


def ship(run: Path, card: ModelCard, out: Path, vectors: WordVectors | None = None) -> None:
    """Copy a trained run to `out` (replacing what was there) with its final card, under the card's name (an adopted
    ablation's run was trained under its own)."""
    matcher = load_checkpoint(run, vectors)
    matcher.name = card.name
    if out.exists():
        shutil.rmtree(out)
    save_trained(matcher, card, out)
