"""The model-family contract: what every matching model provides, and the registry by family name.

A family is one model file: a `MatchingModel` subclass that names its `family` and its typed
`params_type`, builds itself from those parameters, and returns, on request, the `ForwardTrace`
of the very pass that produced its scores. Registering it (`@register`) is all the rest of
MatchLens needs: checkpoints, training, the explanation object and every page work from the
trace, the matrix names and the architecture text, never from the family's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cached_property, lru_cache
from typing import Any, ClassVar, Protocol

import torch
from torch import nn

from matching.models.blocks import (
    COSINE_EPS,
    AttentionGate,
    TunedWords,
    UnknownWordVector,
    consecutive,
    length_mask,
    take_rows,
)
from matching.models.blocks.keywords import KeywordTerm, answer_type_kinds, with_cue_words
from matching.models.params import ModelParams, ParamsError
from matching.models.parts import Channels, Descriptor, Matrices, Part, PooledCells, Terms, WordWeights
from matching.text.corpus import Corpus
from matching.text.embeddings import WordVectors


class TextEncoding(Protocol):
    """A family's encoding of some texts of one side (one row each), made once and read by many pairs."""

    def rows(self, index: torch.Tensor, width: int) -> TextEncoding:
        """The encoding of rows `index` (B,), cut to `width` positions."""
        ...


@dataclass(frozen=True)
class PairBatch:
    """Question/answer pairs, padded to the batch maximum, with real lengths."""

    question_vectors: torch.Tensor  # (B, m, d)
    question_unknown: torch.Tensor  # (B, m) bool
    question_lengths: torch.Tensor  # (B,) int64, each >= 1
    answer_vectors: torch.Tensor  # (B, n, d)
    answer_unknown: torch.Tensor  # (B, n) bool
    answer_lengths: torch.Tensor  # (B,)
    question_ids: torch.Tensor | None = None
    """(B, m) int64 lookup-key ids (`embeddings.key_id`; padding below every real id), for the
    exact-match channel; None where a batch was built without them."""
    answer_ids: torch.Tensor | None = None
    question_encoding: TextEncoding | None = None
    """The questions as this batch's model already encoded them (`MatchingModel.encode_texts`), one
    row per pair: each distinct question is encoded once, however many pairs and batches read it.
    None: the model encodes the question rows itself."""
    answer_encoding: TextEncoding | None = None
    """The same for the answers: encoded together with many more answers than one batch holds."""
    list_bm25: torch.Tensor | None = None
    """(B,) each pair's BM25 within its list (`text.baselines.bm25_within_lists`), for a keyword term with the list
    feature: an input of a pair that depends on the other candidates of its question; None without it."""
    list_idf: torch.Tensor | None = None
    """(B, m) each question word's IDF within its list (`text.baselines.idf_within_lists`, 0 on padding), for
    MV-LSTM's exact-match matrix over the list; None without it."""
    question_stems: torch.Tensor | None = None
    """(B, m) the stem ids of the question words (`text.stems`; padding as in `question_ids`), for a keyword term
    that matches stems (`ModelParams.keyword_stems`); None without it."""
    answer_stems: torch.Tensor | None = None
    """(B, n) the same for the answer words."""

    def cell_mask(self) -> torch.Tensor:
        """(B, m, n): True where both the question position and the answer position are real."""
        return (length_mask(self.question_lengths, self.question_vectors.shape[1])[:, :, None]
                & length_mask(self.answer_lengths, self.answer_vectors.shape[1])[:, None, :])


@dataclass(frozen=True)
class SideSteps:
    """One side's intermediate values on the way to the score (for the walkthrough)."""

    words: torch.Tensor  # (B, L, d) the word vectors read, the unknown-word vector in place
    gate_logits: torch.Tensor | None  # (B, L) V^T w_t, -inf on padding; None without a gate
    attention: torch.Tensor | None  # (B, L) alpha, zero on padding
    gated_words: torch.Tensor  # (B, L, d) the words after the gate (== words without one)
    states: torch.Tensor | None  # (B, L, 2h) [forward ; backward] LSTM states; None without an LSTM

    def rows(self, index: torch.Tensor, width: int | None = None) -> SideSteps:
        """The steps of rows `index` (B,), cut to `width` positions: distinct texts read once,
        spread back to every pair."""
        span = consecutive(index)

        def pick(tensor: torch.Tensor | None) -> torch.Tensor | None:
            return None if tensor is None else take_rows(tensor, index, span, width)
        return SideSteps(pick(self.words), pick(self.gate_logits), pick(self.attention),  # type: ignore[arg-type]
                         pick(self.gated_words), pick(self.states))  # type: ignore[arg-type]


@dataclass(frozen=True)
class EncodedTexts:
    """Texts of one side as a family encoded them before the two sides meet (`MatchingModel.encode_texts`):
    the steps read, and the family's named per-text tensors (N, L, ...), made once for every pair that
    reads one of the texts. `rows` of them are cut from the whole when first read (a view when the rows
    are consecutive): scoring reads only what meets the other side, and each distinct text once."""

    whole_read: SideSteps
    whole: dict[str, torch.Tensor | None]
    """The family's tensors by name; None for one not kept (e.g. states only kept to trace)."""
    index: torch.Tensor | None = None  # the rows these are, when not all
    width: int | None = None

    def rows(self, index: torch.Tensor, width: int) -> EncodedTexts:
        return EncodedTexts(self.whole_read, self.whole,
                            index if self.index is None else self.index.index_select(0, index), width)

    @cached_property
    def _span(self) -> tuple[int, int] | None:
        return None if self.index is None else consecutive(self.index)

    @cached_property
    def read(self) -> SideSteps:
        return self.whole_read if self.index is None else self.whole_read.rows(self.index, self.width)

    @cached_property
    def _cut(self) -> dict[str, torch.Tensor]:
        return {}

    def __getitem__(self, name: str) -> torch.Tensor:
        """The rows of the tensor `name` (cut once, then kept)."""
        if name not in self._cut:
            whole = self.whole[name]
            if whole is None:
                raise ValueError(f"the {name} were not kept: encode with trace=True to read them")
            self._cut[name] = whole if self.index is None else take_rows(whole, self.index, self._span, self.width)
        return self._cut[name]


@dataclass(frozen=True)
class ForwardTrace:
    """Everything one forward pass computed on the way to the score (batched tensors): the score,
    each side's steps, and the optional parts (`parts.Part`) this family's network has.

    Every part is filled from the very pass that produced `score`; a part a family lacks is
    None (or empty), and `parts` says which are there.
    """

    score: torch.Tensor  # (B,)
    question: SideSteps
    answer: SideSteps
    matrices: Matrices | None = None
    pooled: PooledCells | None = None
    weights: dict[str, WordWeights] = field(default_factory=dict)
    """Named word weights besides the attention gate (which is in `question.attention`, `answer.attention`)."""
    channels: Channels | None = None
    terms: Terms | None = None
    vectors: dict[str, torch.Tensor] = field(default_factory=dict)
    """Named (B, D) vectors of each pair on the way to the score, in the order the network makes them."""

    @property
    def question_attention(self) -> torch.Tensor | None:
        return self.question.attention

    @property
    def answer_attention(self) -> torch.Tensor | None:
        return self.answer.attention

    @property
    def parts(self) -> frozenset[Part]:
        return trace_parts(self)


def trace_parts(trace: ForwardTrace) -> frozenset[Part]:
    """The parts a trace carries."""
    has = {
        Part.WORD_WEIGHTS: bool(trace.weights) or trace.question.attention is not None
        or trace.answer.attention is not None,
        Part.MATRICES: trace.matrices is not None,
        Part.POOLED_CELLS: trace.pooled is not None,
        Part.CHANNELS: trace.channels is not None,
        Part.STATES: trace.question.states is not None,
        Part.TERMS: trace.terms is not None,
        Part.PAIR_VECTORS: bool(trace.vectors),
    }
    return frozenset(part for part, present in has.items() if present)


class MatchingModel(nn.Module):
    """The base of every family: word vectors in (with the shared unknown-word vector and the
    optional attention gate omega), a score per pair out, and the trace of the same pass."""

    family: ClassVar[str]
    params_type: ClassVar[type[ModelParams]]
    descriptor: ClassVar[Descriptor]
    wikiqa_split: ClassVar[str] = "WikiQA's standard split (the ECIR paper cross-validated 80/10/10 splits in MatchZoo)"
    """A card's data line for a model trained on WikiQA's standard split, the data most models here learn from."""
    paper_data: ClassVar[tuple[str, str]] = ("", "WikiQA, 80/10/10 splits cross-validated in MatchZoo (ECIR 2019)")
    """The data folder whose training split is the paper's own ("" if none here) and the paper's training data in
    words: a card trained on another folder says so instead (`matching.training.cards.deviations`)."""
    params: ModelParams

    def __init__(self, params: ModelParams) -> None:
        super().__init__()
        if not isinstance(params, self.params_type):
            raise ParamsError(f"{type(self).__name__} needs {self.params_type.__name__}, "
                              f"not {type(params).__name__}")
        params.validate()
        self.params = params
        self.unknown_word = UnknownWordVector(params.embedding_dim)
        self.gates = nn.ModuleDict({side: AttentionGate(
            params.embedding_dim, getattr(params, "attention_scaling", "none"),
            getattr(params, "attention_gate", "softmax"), getattr(params, "attention_temperature", 1.0),
            getattr(params, "attention_init", "default")) for side in params.attended_sides})
        self.dropout = nn.Dropout(params.dropout)
        self.keywords = (KeywordTerm(params.keyword_words, params.answer_type_words, params.keyword_echo,
                                     params.keyword_echo_at_start, params.keyword_places,
                                     params.keyword_list_bm25, params.keyword_stems) if params.keywords else None)
        self.scored_alone: str | None = None
        """A study's switch for a model with a keyword term (`evaluation.studies.keyword_study`): LEARNED_MATCH
        scores the learned match alone, KEYWORDS the keyword term alone (scores only, no trace); None: both."""
        self.tuned_words = TunedWords(params.tuned_words, params.embedding_dim) if params.tune_vectors else None

    def read(self, side: str, vectors: torch.Tensor, unknown: torch.Tensor, lengths: torch.Tensor,
             ids: torch.Tensor | None, unit: bool = False) -> SideSteps:
        """The word vectors of one side as the network reads them: unknown words replaced, fine-tuned
        where the model tunes them (`ids`: the words' lookup-key ids), made unit length if `unit`, then
        reweighted by the side's attention gate when it has one (omega in the ECIR paper; its logits
        V^T w_t always read the words as they are)."""
        words = self.unknown_word(vectors, unknown)
        if self.tuned_words is not None:
            if ids is None:
                raise ValueError("fine-tuned word vectors need the lookup-key ids of the words")
            words = self.tuned_words(words, ids)
        read = words / words.norm(dim=-1, keepdim=True).clamp_min(COSINE_EPS) if unit else words
        if side not in self.gates:
            return SideSteps(words, None, None, read, None)
        mask = length_mask(lengths, vectors.shape[1])
        _, attention, logits = self.gates[side](words, mask)
        gated = read * self.gates[side].weights(attention, mask)[..., None]
        return SideSteps(words, logits, attention, gated, None)

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        """The family's own network: its scores (B,), or with `trace` the ForwardTrace of this same pass."""
        raise NotImplementedError

    def keyword_features(self, batch: PairBatch) -> torch.Tensor:
        """(B, K) the keyword term's features of a batch's pairs (`blocks.keywords.KeywordTerm.features`)."""
        assert self.keywords is not None
        if batch.question_ids is None or batch.answer_ids is None:
            raise ValueError("the keyword term needs the lookup-key ids of both texts")
        return self.keywords.features(batch.question_ids, batch.answer_ids, batch.question_lengths,
                                      batch.answer_lengths, batch.list_bm25, batch.question_stems, batch.answer_stems)

    def keyword_score(self, batch: PairBatch) -> torch.Tensor:
        """(B,) the keyword term of a batch's pairs: the sum of each feature times its weight."""
        assert self.keywords is not None
        return (self.keyword_features(batch) * self.keywords.weights).sum(-1)

    def forward(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        """Scores (B,), or with `trace` the full ForwardTrace of this same pass: the family's learned
        match, plus the keyword term where the model has one (then split exactly in `trace.terms`)."""
        if self.keywords is None:
            return self.match(batch, trace)
        if self.scored_alone is not None and not trace:
            if self.scored_alone == LEARNED_MATCH:
                return self.match(batch)
            return self.keyword_score(batch)
        found = self.match(batch, trace)
        features = self.keyword_features(batch)
        keywords = features * self.keywords.weights
        if not isinstance(found, ForwardTrace):
            return found + keywords.sum(-1)
        own = found.terms or Terms((LEARNED_MATCH,), found.score[:, None])
        return replace(found, score=found.score + keywords.sum(-1),
                       terms=Terms((*own.names, *self.keywords.names), torch.cat([own.values, keywords], dim=-1)),
                       vectors={**found.vectors, KEYWORD_VALUES: features,
                                KEYWORD_WEIGHTS: self.keywords.weights.detach().expand_as(features)})

    def encode_texts(self, side: str, vectors: torch.Tensor, unknown: torch.Tensor, lengths: torch.Tensor,
                     ids: torch.Tensor | None, trace: bool = True) -> TextEncoding | None:
        """What the network makes of the texts of one side (N, L, d) before the two sides meet,
        computed once for every pair that reads one of them (`PairBatch.question_encoding`,
        `answer_encoding`); None where a family has no such stage (its forward pass then reads
        the rows of each batch itself). Without `trace` only what the score needs is kept."""
        return None

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        """Names of the matrices the network reads, in trace order."""
        raise NotImplementedError

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        """One line for the model card: the layers from words to score."""
        raise NotImplementedError

    @classmethod
    def with_corpus(cls, params: ModelParams, corpus: Corpus) -> ModelParams:
        """The parameters this configuration takes from its training texts (the size of what it keeps
        from them); unchanged for a family that keeps nothing."""
        return params

    def fit_corpus(self, corpus: Corpus) -> None:
        """Fill what this model keeps from its training texts (stored with its weights, so scoring
        never reads other text); nothing for a family that keeps nothing."""

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        """The parts the family's own network gives its traces (`trace_parts_of` adds the attention gate's and
        the keyword term's, which the base model provides)."""
        raise NotImplementedError

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        """How a configuration differs from its paper, in plain lines for the model card (the training data's
        line apart: `wikiqa_split`, `paper_data`)."""
        return []


ECIR_VECTORS = "GloVe 6B 50d, frozen, one learned vector for unknown words (paper: GloVe 300d, Common Crawl)"


def ecir_deviations(params: dict[str, Any], training: dict[str, Any], sizes: list[str], vectors: str = ECIR_VECTORS,
                    omega: str | None = None) -> list[str]:
    """The card lines of a family the ECIR 2019 paper ran in MatchZoo, trained here on a fixed schedule: the
    vectors, the family's own `sizes` lines, the schedule, then where omega (`omega`: what it
    reweights, where that needs saying) and the training recipe differ from the paper."""
    out = [vectors, *sizes,
           f"{training.get('optimizer', 'adam')} lr {training.get('learning_rate')}, batch "
           f"{training.get('batch_size')}, {training.get('max_epochs')} epochs (paper: 400 epochs)"]
    if params.get("attention", "none") != "none":
        out += [*([omega] if omega else []), "the attention softmax runs over real tokens only"]
        if params.get("attention_scaling") == "length":
            out.append("words weighted by alpha_t x sentence length, mean weight 1 (paper: alpha_t)")
    if training.get("loss", "hinge") != "hinge":
        out.append(f"{training['loss']} loss (paper: pairwise hinge)")
    if training.get("average_epochs"):
        out.append(f"ships the mean of the weights of the last {training['average_epochs']} epochs")
    return out


LEARNED_MATCH = "learned match"
"""The score term of a family's own network, beside the keyword term's features (`Terms`)."""
KEYWORDS = "keywords"
"""The keyword term as a whole (`MatchingModel.scored_alone`)."""
KEYWORD_VALUES, KEYWORD_WEIGHTS = "keyword features", "keyword weights"
"""The pair vectors of a keyword term: the features x of each pair and the weights w (term k = w_k x_k)."""
SCORE_TERMS, SCORE_BIAS = "score weight × last layer", "score bias"
"""A family whose score is a linear layer over its last vector may trace that layer's terms w_i h_i and its
bias b (as a one-number vector): they add up to the learned match exactly, and the walkthrough shows so."""


def trace_parts_of(params: ModelParams) -> frozenset[Part]:
    """The parts a trace of this configuration carries (tested against real traces), so a page can
    offer the models that have what it shows before running any of them."""
    gate = {Part.WORD_WEIGHTS} if params.attended_sides else set()  # the base's attention gate, in any family
    keywords = {Part.TERMS, Part.PAIR_VECTORS} if params.keywords else set()
    return family_of(params).parts(params) | gate | keywords


def sized_for_corpus(params: ModelParams, corpus: Corpus) -> ModelParams:
    """The parameters a configuration takes from its training texts: the family's own, and the size
    of the keyword term's IDF table."""
    params = family_of(params).with_corpus(params, corpus)
    if params.keywords:
        params = replace(params, keyword_words=len(corpus.idf_of(params.keyword_stems)[0]))
    if params.keyword_answer_types:
        params = replace(params, answer_type_words=len(answer_type_table(corpus.vectors, params.keyword_places)[0]))
    return replace(params, tuned_words=len(corpus.idf[0])) if params.tune_vectors else params


@lru_cache(maxsize=1)
def answer_type_table(vectors: WordVectors, places: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Key ids and kind flags of the vocabulary words the answer-type features read (`blocks.keywords`):
    words of the vectors' vocabulary only, so an unknown word never has a kind. Read once per vocabulary
    (sizing the model and filling it both need it; it scans every word)."""
    rows = vectors.row_of
    kinds = {word: flags for word, flags in answer_type_kinds(rows, places).items() if word in rows}
    return (torch.tensor([rows[w] for w in kinds], dtype=torch.int64),
            torch.tensor(list(kinds.values()), dtype=torch.int64))


def refresh_answer_types(model: MatchingModel, vectors: WordVectors) -> None:
    """Give a loaded model's answer-type table today's cue words. The table is no learned weight: a checkpoint
    saved before a cue word was added ("population" ... "of", 2026-11-28) reads it too, and its params say the
    table's new size. The number and date words are the checkpoint's own (the same rule made them); merging the
    few cue words costs milliseconds where scanning the vocabulary again (`answer_type_table`) costs half a second
    of every process's start."""
    keywords = model.keywords
    if keywords is None or not keywords.answer_types:
        return
    saved = dict(zip(keywords.type_ids.tolist(), keywords.type_flags.tolist(), strict=True))
    rows = vectors.row_of
    table = {rows[word]: flags for word, flags in with_cue_words({}).items() if word in rows}
    table = {row: saved.get(row, 0) | table.get(row, 0) for row in saved.keys() | table.keys()}
    if table == saved:
        return  # saved with today's cue words
    keywords.fill_answer_types(torch.tensor(list(table), dtype=torch.int64),
                               torch.tensor(list(table.values()), dtype=torch.int64))
    model.params = replace(model.params, answer_type_words=len(table))


def fit_to_corpus(model: MatchingModel, corpus: Corpus) -> None:
    """Fill what a model keeps from its training texts: the family's own and the keyword statistics."""
    model.fit_corpus(corpus)
    if model.keywords is not None:
        ids, idf = corpus.idf_of(model.keywords.stems)
        model.keywords.fill(ids, idf, corpus.mean_length)
        if model.keywords.answer_types:
            model.keywords.fill_answer_types(*answer_type_table(corpus.vectors, model.params.keyword_places))
    if model.tuned_words is not None:
        model.tuned_words.fill(corpus.idf[0])


def gate_text(params: ModelParams) -> str:
    """The attention gate's line of an architecture text (shared by every family that has one)."""
    sides = params.attended_sides
    scaling = ("alpha_t x sentence length (mean weight 1)" if getattr(params, "attention_scaling", "") == "length"
               else "alpha_t as in the paper")
    where = "question and answer sides" if len(sides) == 2 else f"{sides[0]} side"
    temperature = getattr(params, "attention_temperature", 1.0)
    logits = "V^T w_t" if temperature == 1 else f"V^T w_t / {temperature:g}"
    return (f"word attention gate on the {where}: alpha_t = {getattr(params, 'attention_gate', 'softmax')}"
            f"({logits}) over real tokens, words scaled by {scaling}")


FAMILIES: dict[str, type[MatchingModel]] = {}


def register(model_type: type[MatchingModel]) -> type[MatchingModel]:
    """Class decorator: make a family buildable from its parameters and loadable from checkpoints."""
    name = model_type.family
    if name in FAMILIES and FAMILIES[name] is not model_type:
        raise ValueError(f"model family {name!r} is already registered ({FAMILIES[name].__name__})")
    if not isinstance(getattr(model_type, "descriptor", None), Descriptor):
        raise ValueError(f"{model_type.__name__} has no descriptor: its names, paper and walkthrough steps "
                         "(matching.models.parts.Descriptor)")
    if model_type.params_type.family != name:
        raise ValueError(f"{model_type.params_type.__name__}.family is {model_type.params_type.family!r}, "
                         f"not {name!r}")
    FAMILIES[name] = model_type
    return model_type


def family_of(params: ModelParams | str) -> type[MatchingModel]:
    name = params if isinstance(params, str) else params.family
    try:
        return FAMILIES[name]
    except KeyError:
        raise ParamsError(f"unknown model family {name!r}; known: {sorted(FAMILIES)}") from None


def build_model(params: ModelParams) -> MatchingModel:
    return family_of(params)(params)


def params_from_dict(raw: dict[str, Any]) -> ModelParams:
    """Rebuild a parameter set, refusing unknown families and unknown or mistyped keys."""
    if not isinstance(raw, dict):
        raise ParamsError("model parameters must be a JSON object")
    cls = family_of(str(raw.get("family"))).params_type
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ParamsError(f"unknown parameters for {raw['family']}: {unknown}")
    try:
        params = cls(**raw)
    except TypeError as error:
        raise ParamsError(str(error)) from error
    params.validate()
    return params
