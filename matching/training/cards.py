"""Model cards: the typed `ModelCard` (stored as `card.json`) and its Markdown rendering
(each checkpoint's README.md)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from statistics import fmean
from typing import Any

from matching.evaluation.metrics import METRICS
from matching.evaluation.studies import AttentionStudy, KeywordStudy, PairedTest
from matching.models import family_of
from matching.paths import pretrained_dir
from matching.text.datasets import BUILT_IN

KNOWN_LIMITS = [
    "GloVe 6B 50d is lowercased and English; other scripts (CJK, Arabic, emoji) are unknown words "
    "and all share one vector.",
    "Questions longer than max_question_len and answers longer than max_answer_len tokens are "
    "truncated (the app greys the unseen tokens).",
]
"""The limits every checkpoint shares; `known_limits` adds what its own card says of its data."""

ECHO_LIMITS = {
    False: "Its echo feature (the question's wh-word and the next word side by side in the answer) also fires on a "
           "right answer that holds them, a clause (\", who won the Nobel Peace Prize in 1991\") or a title the "
           "question names, and its negative weight sets that answer back (how often: python bench/echoes.py "
           "--firing train).",
    True: "Its echo feature fires only where the answer begins with the question's words up to the one after its "
          "wh-word: a restated question further into a text (\"Many ask who wrote ...\") is not caught.",
}
"""The limit of a model with the echo feature, by where it fires (`keyword_echo_at_start`)."""

KEYWORD_PUNCTUATION_LIMIT = (
    "Its keyword term was trained with punctuation matching as words: a '?' or ',' the question and the answer share "
    "counts in its word overlap, IDF-weighted overlap and BM25 (the baselines leave punctuation out), so a candidate "
    "sharing only a '?' gets a keyword term (python bench/keyword_punctuation.py: 16 of about 1,100 pairs of each dev "
    "split share a mark).")
"""The limit of every model with a keyword term, as trained (`blocks.keywords.KeywordTerm.unmatched_ids`)."""

_TREC_TEXT = "TREC factoid questions answered by newswire sentences"
SOURCE_TEXT = {"wikiqa": "Wikipedia-style factoid questions answered by Wikipedia sentences",
               "trecqa": _TREC_TEXT, "trecqa-all": _TREC_TEXT}  # TRAIN and TRAIN-ALL: the same kind of text
"""Data folder name -> the kind of text a model trained on it has seen (the card's known limits)."""

PAPER_GROUP, VARIANT_GROUP = "as in the paper", "MatchLens variant"

DEFAULTS_FILE = pretrained_dir() / "defaults.json"
"""The models the Rank page opens with, and why (shipped beside the checkpoints it names)."""


@cache
def default_set() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the default model names, why they are the default, a sentence each) from DEFAULTS_FILE; none when it
    is missing or bad."""
    try:
        raw = json.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))
        why = raw.get("why", ())
        return tuple(str(name) for name in raw["models"]), (str(why),) if isinstance(why, str) else tuple(map(str, why))
    except (OSError, ValueError, KeyError, TypeError):
        return (), ()


def default_models(available: list[str]) -> list[str]:
    """The models a first visit ranks with: the default subset where shipped, else all."""
    chosen = [name for name in default_set()[0] if name in available]
    return chosen or list(available)


@dataclass(frozen=True)
class OtherTest:
    """A test split of another source than the card's own test (a model trained on WikiQA + TRAIN-ALL and chosen with
    its figures on TrecQA test, measured on WikiQA test too: `refresh --other-test`). Read to report only."""

    questions: int
    pairs: int
    fingerprint: str
    metrics: dict[str, float]
    baselines: dict[str, dict[str, float]]
    """baseline -> metric -> value, on the same split and tie rule."""


@dataclass(frozen=True)
class SeedStudy:
    """The same configuration trained with several seeds: how much the seed matters."""

    seeds: list[int]
    dev_MAP: list[float]
    test_MAP: list[float]
    mean: float
    """Mean test MAP over the seeds."""
    std: float
    """Sample standard deviation of the test MAP over the seeds."""
    selection: str = "best dev MAP"
    """How the shipped seed was chosen (never by test)."""
    computed_with: str = ""
    """The MatchLens version whose code computed these figures when not the training's own (`refresh --work`): a
    refresh without the seed runs leaves them as they were, so a reader can tell which rules they had."""


@dataclass(frozen=True)
class ModelCard:
    """Everything a checkpoint's card says, typed. `card.json` is `to_dict()`."""

    name: str
    description: str = ""
    architecture: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    training: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    epochs_run: int | None = None
    kept_epochs: list[int] = field(default_factory=list)
    """The epoch whose weights ship (early stopping), or the epochs averaged."""
    training_seconds: float | None = None
    log: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    """split -> metric -> value."""
    baselines: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """split -> baseline -> metric -> value."""
    paper: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    vocabulary: dict[str, Any] = field(default_factory=dict)
    date: str = ""
    code_version: str = ""
    environment: str = ""
    """Where it trained (`trainer.training_environment`): float sums, and so the weights, depend on the torch build,
    its thread count, the device and the CPU's vector instructions; rounding that differs in the first step grows over
    an epoch, so the same command on another CPU gives a model whose figures can differ in their third decimal."""
    command: str = ""
    group: str = PAPER_GROUP
    """`as in the paper` or `MatchLens variant` (a model with a MatchLens addition)."""
    deviations: list[str] = field(default_factory=list)
    """Every way this model or its training differs from its paper."""
    seed_study: SeedStudy | None = None
    attention: AttentionStudy | None = None
    """Attention figures on test (attention models only)."""
    significance: list[PairedTest] = field(default_factory=list)
    """Paired randomisation tests on test AP against the baselines."""
    keywords: dict[str, KeywordStudy] = field(default_factory=dict)
    """Keyword models: dev source -> does the keyword term decide there (`studies.keyword_study`)."""
    other_tests: dict[str, OtherTest] = field(default_factory=dict)
    """Source (the data folder's name, "wikiqa") -> this model on that source's test split, beside the baselines."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelCard:
        """Read a card.json, tolerating older cards (missing parts stay empty)."""
        if not isinstance(raw, dict) or "name" not in raw:
            raise ValueError("a model card needs at least a name")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known}
        # A text field that is not text (a hand-edited card) would fail where a page draws it, not here.
        if bad := [f.name for f in fields(cls) if f.type == "str" and not isinstance(values.get(f.name, ""), str)]:
            raise ValueError(f"a model card's {', '.join(bad)} must be text")
        if "kept_epochs" not in raw and raw.get("best_epoch") is not None:
            values["kept_epochs"] = [raw["best_epoch"]]
        if isinstance(raw.get("seed_study"), dict):
            values["seed_study"] = SeedStudy(**{k: v for k, v in raw["seed_study"].items()
                                                if k in {f.name for f in fields(SeedStudy)}})
        if isinstance(raw.get("attention"), dict):
            values["attention"] = AttentionStudy(**raw["attention"])
        values["significance"] = [PairedTest(**t) for t in raw.get("significance") or []]
        values["keywords"] = {source: KeywordStudy(**study) for source, study in (raw.get("keywords") or {}).items()}
        values["other_tests"] = {source: OtherTest(**test) for source, test in (raw.get("other_tests") or {}).items()}
        return cls(**values)

    @property
    def test_MAP(self) -> float | None:
        return self.metrics.get("test", {}).get("MAP")


TRAINING_DATA = {"wikiqa+trecqa-all": "WikiQA train + TrecQA TRAIN-ALL", "trecqa-all": "TrecQA TRAIN-ALL",
                 "wikiqa+trecqa": "WikiQA train + TrecQA TRAIN", "trecqa": "TrecQA TRAIN",
                 "wikiqa+trecqa-all+pseudo-subject": "WikiQA train + TrecQA TRAIN-ALL + pseudo-questions written from "
                                                     "WikiQA train's sections (python -m matching pseudo-questions)",
                 "wikiqa+trecqa-all+pseudo-subject-half": "WikiQA train + TrecQA TRAIN-ALL + half the pseudo-questions "
                                                          "written from WikiQA train's sections (python -m matching "
                                                          "pseudo-questions --share 0.5)"}
"""The data folders the configs name (`runs/data/...`, made by `configs/data/*.sh`), in words."""


def deviations(params: dict[str, Any], training: dict[str, Any], source: str = "") -> list[str]:
    """How a configuration differs from its paper, in its family's words (`MatchingModel.deviations`), after a line
    on the data it learned from (`source`, its card's data folder; none given: WikiQA's split), none where that is
    the paper's own training data (`MatchingModel.paper_data`)."""
    family = family_of(str(params.get("family")))
    folder, paper = family.paper_data
    if not source or source == "wikiqa":
        data = [family.wikiqa_split]
    elif source == folder:
        data = []
    else:
        data = [f"trained on {TRAINING_DATA.get(source, f'the data folder {source}')} (paper: {paper})"]
    lines = data + family.deviations(params, training)
    types = (", number asked and given, date asked and given over a table of "
             f"{params.get('answer_type_words', 0):,} vocabulary words" if params.get("keyword_answer_types") else "")
    if params.get("keyword_list_bm25"):
        types += ", BM25 within the list (the question's own candidates as the collection)"
    if params.get("keyword_echo"):
        types += (", whether the answer begins with the question's words up to the one after its wh-word"
                  if params.get("keyword_echo_at_start") else
                  ", whether the answer echoes the question's opening (its wh-word and the next)")
    stems = ("; the lexical features match the words' Snowball stems, not their whole forms"
             if params.get("keyword_stems") else "")
    keywords = ([f"MatchLens addition: a learned keyword term (word overlap, IDF-weighted overlap, BM25{types}) added "
                 f"to the score{stems}"] if params.get("keywords") else [])
    tuned = ([f"MatchLens addition: the word vectors of the {params.get('tuned_words', 0):,} training answer words "
              "fine-tuned (a learned offset to GloVe's)"] if params.get("tune_vectors") else [])
    return lines + keywords + tuned + training_additions(training)


ECHOES_TEACH = {"keywords only": ", which teaches the keyword term alone",
                "echo weight only": ", which teaches the echo feature's weight alone"}
"""What the echo negatives teach, where a `solo_echoes` mode keeps them from the rest of the model."""
HARD_NEGATIVES = 2
"""Wrong candidates per question counted as hard (`TrainingSettings.hard_negative_copies`)."""


def training_additions(training: dict[str, Any]) -> list[str]:
    """The MatchLens training options any family can use (`TrainingSettings`), in plain lines."""
    out = []
    if training.get("word_dropout"):
        out.append(f"MatchLens addition: word dropout {training['word_dropout']} (a training word read as unknown)")
    if training.get("echo_negatives"):
        out.append("MatchLens addition: each training question also a wrong candidate of its own"
                   + ECHOES_TEACH.get(str(training.get("solo_echoes", "")), ""))
    if training.get("hard_negative_copies"):
        out.append(f"MatchLens addition: the pairs of each question's {HARD_NEGATIVES} wrong candidates of most "
                   "word overlap "
                   f"{training['hard_negative_copies']} extra times an epoch")
    if training.get("hinge_negatives"):
        out.append(f"MatchLens addition: each correct answer paired with {training['hinge_negatives']} of its "
                   "question's wrong candidates an epoch, drawn afresh (the papers pair it with every one)")
    if teachers := training.get("teachers"):
        out.append(f"MatchLens addition: taught by the mean score of {len(teachers)} trained checkpoint(s) beside the "
                   f"labels (knowledge distillation, weight {training['teacher_weight']}, temperature "
                   f"{training['teacher_temperature']}): {', '.join(teachers)}; the shipped model is one "
                   "network, explained as any other")
    return out


MATCHLENS_ADDITIONS = ("attention_gate", "attention_temperature", "attention_init", "exact_match", "keywords",
                       "tune_vectors")


def group_of(params: dict[str, Any], training: dict[str, Any]) -> str:
    """`as in the paper` unless the architecture has a MatchLens addition (training choices
    such as the loss are listed as deviations but keep the paper's model)."""
    defaults = {"attention_gate": "softmax", "attention_temperature": 1.0, "attention_init": "default",
                "exact_match": "none", "keywords": False, "tune_vectors": False}
    added = any(params.get(k, defaults[k]) != defaults[k] for k in MATCHLENS_ADDITIONS)
    return VARIANT_GROUP if added or training.get("entropy_penalty") else PAPER_GROUP


def typed_card(name: str, raw: dict[str, Any]) -> ModelCard | None:
    """A checkpoint's card as a ModelCard, or None when it has none or it does not read as one."""
    try:
        return ModelCard.from_dict({"name": name, **raw}) if raw else None
    except (TypeError, ValueError):
        return None


def mean_over_sources(card: ModelCard) -> float:
    """The mean of a card's dev MAP per source (its keyword study's), each source counting the same."""
    return fmean(study.MAP for study in card.keywords.values())


def trained_on_dev(card: ModelCard) -> bool:
    """The model was fitted on train + dev: its dev figures are training figures, not held out."""
    return bool(card.training.get("fit_on_dev"))


SOURCE_NAMES = {**BUILT_IN, "trecqa-all": "TrecQA TRAIN-ALL", "pseudo-subject": "pseudo-questions",
                "pseudo-subject-half": "pseudo-questions"}
"""Data folder name -> what a card calls it (runs/data/trecqa-all is TrecQA with TRAIN-ALL as its train split)."""


def data_name(card: ModelCard, split: str | None = None) -> str:
    """The data a card's figures come from, e.g. 'WikiQA' or 'WikiQA+TrecQA' (a combined folder).
    For `split`, the data set that split was found to be, where `refresh` recorded it (a combined
    folder keeps one data set's test split)."""
    recorded = card.data.get(split, {}) if split else {}
    source = str((recorded.get("source") if isinstance(recorded, dict) else None)
                 or card.data.get("source") or "its training data")
    return "+".join(SOURCE_NAMES.get(part.lower(), part) for part in source.split("+"))


def paper_data(card: ModelCard) -> str:
    """The data set of a card's paper figure: TrecQA where its paper table says so (MCAN's), else WikiQA (the ECIR
    2019 table every other paper figure here comes from)."""
    return "TrecQA" if "trecqa" in str(card.paper.get("table", "")).lower() else "WikiQA"


def dev_role(card: ModelCard) -> str:
    """What the dev figures of a card are, in a few words (the card, the Models page)."""
    return "part of the training data: not a held-out figure" if trained_on_dev(card) else "used for selection"


def known_limits(card: ModelCard) -> list[str]:
    """What this checkpoint should not be trusted with: the text it learned from (read from its card's data,
    so a model trained on TRAIN-ALL does not claim WikiQA's 873 questions), the shared limits, and how many
    dev questions chose it."""
    train, dev = card.data.get("train"), card.data.get("dev")
    sources = [part.lower() for part in str(card.data.get("source") or "").split("+") if part]
    kinds = list(dict.fromkeys(SOURCE_TEXT[part] for part in sources if part in SOURCE_TEXT))
    questions = f" ({train['questions']:,} questions)" if isinstance(train, dict) and "questions" in train else ""
    learned = (f"Trained on {data_name(card)}{questions}: {' and '.join(kinds) or 'its training data'}, in English. "
               "Questions of another kind or source rank less reliably (the cross-source checks in "
               "docs/models-and-training.md).") if sources else "Its training data is not recorded in its card."
    limits = [learned, *KNOWN_LIMITS]
    if card.params.get("keywords"):
        limits.append(KEYWORD_PUNCTUATION_LIMIT)
    if card.params.get("keyword_echo"):
        limits.append(ECHO_LIMITS[bool(card.params.get("keyword_echo_at_start"))])
    if isinstance(dev, dict) and "questions" in dev:
        limits.append(f"Fitted on train + dev ({dev['questions']} dev questions): no held-out dev figure; its seed "
                      "was fixed in advance." if trained_on_dev(card) else
                      f"Dev has {dev['questions']} questions, so selection by dev MAP is noisy; see the seed study.")
    return limits


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def metrics_rows(card: ModelCard, split: str) -> list[dict[str, Any]]:
    """This model, the baselines and the paper's figure for one split (the Models page table)."""
    rows = [{"system": card.name, **card.metrics[split]}]
    rows += [{"system": name, **values} for name, values in card.baselines[split].items()]
    return rows + paper_rows(card, data_name(card, "test")) if split == "test" else rows


def paper_rows(card: ModelCard, data: str) -> list[dict[str, Any]]:
    """The paper's figure as a row of a table of `data`'s test split: none where the card's paper figure is of another
    data set (a default model tested on TrecQA has its paper's WikiQA figure beside its WikiQA test, not there)."""
    known = data in SOURCE_NAMES.values()
    if not card.paper or (known and data != paper_data(card)):
        return []
    return [{"system": f"paper: {card.paper.get('system', card.name)}",
             **{m: card.paper[m] for m in METRICS if m in card.paper}}]


def other_test_rows(card: ModelCard, source: str) -> list[dict[str, Any]]:
    """This model, the baselines and, where it is of that data set, the paper's figure on another source's test split
    (`ModelCard.other_tests`)."""
    test = card.other_tests[source]
    return [{"system": card.name, **test.metrics}, *({"system": name, **values} for name, values in
                                                     test.baselines.items()),
            *paper_rows(card, SOURCE_NAMES.get(source.lower(), source))]


def other_test_heading(card: ModelCard, source: str) -> str:
    """What an other-source test is, in a heading's words."""
    test = card.other_tests[source]
    return (f"Test on another source: {BUILT_IN.get(source, source)} ({test.questions:,} questions, {test.pairs:,} "
            "pairs; read to report only, never to choose)")


def _table(rows: list[dict[str, Any]]) -> str:
    lines = ["| system | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    lines += ["| " + str(r["system"]) + " | " + " | ".join(_fmt(r[m]) if m in r else "-" for m in METRICS) + " |"
              for r in rows]
    return "\n".join(lines)


def computed_with(study: SeedStudy) -> str:
    """' Computed with MatchLens abc1234.' where the seed figures were computed again after training, else ''."""
    return f" Computed with MatchLens {study.computed_with}." if study.computed_with else ""


def seed_line(card: ModelCard) -> str:
    study = card.seed_study
    if study is None:
        return "no seed study"
    return f"{study.mean:.4f} ± {study.std:.4f} (n={len(study.seeds)})"


def significance_rows(card: ModelCard) -> list[dict[str, Any]]:
    return [{"against": t.baseline, "MAP difference": t.difference, "p-value": t.p_value, "questions": t.questions}
            for t in card.significance]


def attention_rows(card: ModelCard) -> list[dict[str, Any]]:
    study = card.attention
    if study is None:
        return []
    return [{"figure": "mean normalised entropy of alpha (1 = uniform)", "value": study.entropy},
            {"figure": "mean top-weight ratio (max alpha x n; 1 = uniform)", "value": study.top_weight_ratio},
            {"figure": "test MAP, own attention", "value": study.MAP},
            {"figure": "test MAP, alpha replaced by uniform weights", "value": study.uniform_MAP},
            {"figure": f"test MAP, alpha permuted (seed {study.permutation_seed})", "value": study.permuted_MAP}]


def attention_verdict(card: ModelCard) -> str:
    """One plain sentence on whether the attention bars carry the score."""
    study = card.attention
    if study is None:
        return ""
    drop = study.MAP - study.uniform_MAP
    effect = f"costs {drop:.4f} MAP" if drop >= 0 else f"raises MAP by {-drop:.4f}"
    if study.entropy > 0.9 and drop < 0.02:
        return (f"The attention is nearly flat and replacing it by uniform weights {effect}: its bars deserve "
                "little trust.")
    if drop < 0:
        return f"Replacing alpha by uniform weights {effect}: the bars do not help the score."
    if drop < 0.02:
        return f"Replacing alpha by uniform weights costs only {drop:.4f} MAP: the bars matter little to the score."
    return f"Replacing alpha by uniform weights costs {drop:.4f} MAP: the bars carry part of the score."


def keyword_rows(card: ModelCard) -> list[dict[str, Any]]:
    return [{"dev set": source, "MAP": study.MAP, "learned match alone": study.learned_MAP,
             "keywords alone": study.keywords_MAP, "top answer changed by keywords":
             f"{study.top_changed} of {study.questions}", "spread: learned": study.learned_spread,
             "spread: keywords": study.keywords_spread} for source, study in card.keywords.items()]


def keyword_verdict(card: ModelCard) -> str:
    """One plain sentence on whether the keyword term earns its place on every dev set."""
    if not card.keywords:
        return ""
    beaten = [source for source, s in card.keywords.items() if s.MAP <= max(s.learned_MAP, s.keywords_MAP)]
    if beaten:
        return (f"On {', '.join(beaten)} the whole score does not beat both of its parts: there the keyword term "
                "and the learned match do not add up to more than one of them.")
    return "On every dev set the whole score beats the learned match alone and the keywords alone."


READ_AT_ONCE = 800
"""A description up to this many characters is shown whole; a longer one is its first sentence, then its other
sentences as a list (a recipe's choices, each with the measurement that made it)."""

_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z\"])")


def sentences(text: str) -> list[str]:
    """`text` cut after each full stop that ends a sentence: one followed by a space and a capital, outside
    brackets (a bracket's own sentences stay with the sentence that holds them)."""
    cuts, depth, start = [], 0, 0
    ends = {m.start() for m in _SENTENCE_END.finditer(text)}
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if i in ends and depth <= 0:
            cuts.append(text[start: i + 1].strip())
            start = i + 1
    rest = text[start:].strip()
    return [*cuts, rest] if rest else cuts


def description_parts(description: str) -> tuple[str, list[str]]:
    """(what the model is, the choices of its recipe a sentence each): a short description is all lead; a long one
    (the default models' descriptions carry each choice's history) is its first sentence and the rest, so a reader
    sees what the model is before how it got there. The parts joined by spaces are the description, nothing dropped."""
    if len(description) <= READ_AT_ONCE:
        return description, []
    lead, *choices = sentences(description)
    return lead, choices


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """Rows of equal keys as a Markdown table: numbers right-aligned, text (and the first column) left-aligned,
    floats to 4 places, None as -."""
    if not rows:
        return ""
    columns = list(rows[0])

    def numeric(column: str) -> bool:
        values = [r[column] for r in rows if r[column] is not None]
        return bool(values) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)

    aligns = ["---"] + ["---:" if numeric(c) else "---" for c in columns[1:]]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(aligns) + "|"]
    lines += ["| " + " | ".join("-" if r[c] is None else _fmt(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def render_card(card: ModelCard) -> str:
    params = "\n".join(f"| {k} | {v} |" for k, v in card.params.items())
    training = "\n".join(f"| {k} | {v} |" for k, v in card.training.items())
    log = "\n".join(f"| {e['epoch']} | {e['train_loss']:.4f} | {e['dev_MAP']:.4f} | {e['seconds']} |"
                    f"{' kept' if e.get('selected') else ''} |" for e in card.log)
    data = "\n".join(f"| {split} | {d['questions']} | {d['pairs']} | `{d['fingerprint']}` |"
                     for split, d in card.data.items() if isinstance(d, dict))
    seeds = ""
    if card.seed_study:
        study = card.seed_study
        seeds = (f"\n## Seed study\nTest MAP over seeds {study.seeds}: "
                 f"{' '.join(f'{x:.4f}' for x in study.test_MAP)} -> mean {study.mean:.4f} "
                 f"± {study.std:.4f} (std). Dev MAP: {' '.join(f'{x:.4f}' for x in study.dev_MAP)}. "
                 f"Shipped: seed {card.seed} ({study.selection}).{computed_with(study)}\n")
    significance = ""
    if card.significance:
        significance = ("\n## Is the difference real?\nPaired randomisation test on per-question test AP "
                        f"({card.significance[0].resamples} sign-flip resamples, two-sided):\n\n"
                        + markdown_table(significance_rows(card)) + "\n")
    attention = ""
    if card.attention:
        attention = ("\n## Does the attention matter?\nOn test, the same model with its gate overridden at "
                     "inference:\n\n" + markdown_table(attention_rows(card)) + f"\n\n{attention_verdict(card)}\n")
    keywords = ""
    if card.keywords:
        keywords = ("\n## Does the keyword term decide?\nOn each dev set, the whole score beside each of its two "
                    "parts alone; spread: the mean standard deviation of a part among a question's candidates:\n\n"
                    + markdown_table(keyword_rows(card)) + f"\n\n{keyword_verdict(card)}\n")
    averaged = card.log[-1].get("averaged_dev_MAP") if card.log else None
    epochs = ", ".join(map(str, card.kept_epochs))
    # A model fitted on dev was trained on it: its dev figure is a training figure, and said so.
    average_on = "MAP of the average on dev, which it was trained on" if trained_on_dev(card) else \
        "dev MAP of the average"
    kept = (f"epochs {epochs} averaged ({average_on} {averaged:.4f})" if averaged is not None
            else f"epoch {epochs} kept (best dev MAP)")
    dev_heading = f"Dev ({dev_role(card)})"
    metrics_data = (data_name(card) if data_name(card, "test") == data_name(card)
                    else f"test: {data_name(card, 'test')}, dev: {data_name(card)}")
    deviations = "\n".join(f"- {line}" for line in card.deviations) or "- none recorded"
    other_tests = "".join(f"\n### {other_test_heading(card, source)}\n{_table(other_test_rows(card, source))}\n"
                          for source in card.other_tests)
    limits = "\n".join(f"- {line}" for line in known_limits(card))
    trained_on = (f", on {card.environment} (the same command on another CPU gives weights that differ a little, and "
                  "figures that can differ in their third decimal)" if card.environment else "")
    return f"""# Model card: {card.name}

{card.description}

**Group.** {card.group}. **Architecture.** {card.architecture}

## Metrics ({metrics_data}; ties scored as the mean over tie orders)
### Test (read once, after selection)
{_table(metrics_rows(card, 'test'))}
{other_tests}
### {dev_heading}
{_table(metrics_rows(card, 'dev'))}
{seeds}{significance}{attention}{keywords}
## Deviations from the paper
{deviations}

## Hyperparameters
| parameter | value |
|---|---|
{params}

## Training
| setting | value |
|---|---|
{training}

Seed {card.seed}; {card.epochs_run} epochs run, {kept}; {card.training_seconds} s.
Reproduce: `{card.command}`

| epoch | train loss | dev MAP | seconds | |
|---:|---:|---:|---:|---|
{log}

## Data
| split | questions | pairs | fingerprint |
|---|---:|---:|---|
{data}

Vocabulary: {card.vocabulary.get('source')} `{card.vocabulary.get('fingerprint')}`.
Trained {card.date} with MatchLens {card.code_version}{trained_on}.

## Known limits
{limits}
"""
