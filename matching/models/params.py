"""Typed hyperparameter sets, one per model family.

A checkpoint's `config.json` is exactly `asdict(params)` plus the vocabulary it was
trained with, so a model can always be rebuilt from its file alone. Which class
reads which `family` is decided by the model registry (`matching.models.base`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

Interaction = Literal["cosine", "bilinear", "tensor"]
AttentionSide = Literal["none", "question", "answer", "both"]
AttentionScaling = Literal["none", "length"]
WordMatching = Literal["dot", "cosine"]
AttentionGateKind = Literal["softmax", "sparsemax", "entmax15"]
AttentionInit = Literal["default", "zero"]
ExactMatch = Literal["none", "binary", "idf", "attention"]

INTERACTIONS = ("cosine", "bilinear", "tensor")
ATTENTION_SIDES = ("question", "answer", "both")
ATTENTION_SCALINGS = ("none", "length")
WORD_MATCHINGS = ("dot", "cosine")
ATTENTION_GATES = ("softmax", "sparsemax", "entmax15")
ATTENTION_INITS = ("default", "zero")
EXACT_MATCHES = ("none", "binary", "idf", "attention")


class ParamsError(ValueError):
    """A hyperparameter set that cannot describe a model."""


def _require_positive_ints(params: object, *names: str) -> None:
    for name in names:
        value = getattr(params, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ParamsError(f"{name} must be a positive integer, not {value!r}")


def _require_finite(params: object, *names: str) -> None:
    for name in names:
        value = getattr(params, name)
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise ParamsError(f"{name} must be a finite number, not {value!r}")


def _require_choice(params: object, name: str, choices: tuple[str, ...]) -> None:
    value = getattr(params, name)
    if value not in choices:
        raise ParamsError(f"{name} must be one of {choices}, not {value!r}")


@dataclass(frozen=True)
class ModelParams:
    """What every family shares: the word vectors it reads and the longest texts it sees."""

    family: str = ""
    embedding_dim: int = 50
    max_question_len: int = 40
    max_answer_len: int = 60
    dropout: float = 0.0
    """Applied during training only (where each family says)."""
    keywords: bool = False
    """A MatchLens addition any family can have: score = learned match + a learned linear term over
    keyword features of the pair (word overlap, IDF-weighted overlap, BM25; `blocks.keywords`)."""
    keyword_words: int = 0
    """How many words the keyword term's IDF table holds (the training answers'; sized from them)."""
    keyword_answer_types: bool = False
    """With `keywords`: two more features, whether the question asks for a number (how many, how long..., what
    is the population of...) and the answer gives one it does not repeat, and the same for a date
    (`blocks.keywords`)."""
    keyword_echo: bool = False
    """With `keyword_answer_types`: one more feature, whether the answer holds the question's first wh-word
    and the word after it side by side, as a text restating the question does (`blocks.keywords`)."""
    keyword_echo_at_start: bool = False
    """With `keyword_echo`: the echo feature fires only where the answer begins with the question's words up to
    the word after its first wh-word (a restated question), not on a clause or title inside a real answer
    (", who won the Nobel Peace Prize in 1991"), where it sets a right answer back (`blocks.keywords`)."""
    keyword_places: bool = False
    """With `keyword_answer_types`: one more feature, whether the question asks "where" and the answer has a place
    name word (a country, a large city, a US state) it does not repeat (`blocks.keywords`)."""
    keyword_list_bm25: bool = False
    """With `keywords`: one more feature, BM25 within the list: the BM25 baseline's score of the answer with the
    question's own candidates as the collection (per question word), so a word every candidate has (the subject of
    a section all its sentences name) counts for little, where the IDF of the other features comes from the
    training answers (`blocks.keywords`, `text.baselines.bm25_within_lists`)."""
    keyword_stems: bool = False
    """With `keywords`: word overlap, IDF-weighted overlap, BM25 and BM25 within the list match the words' Snowball
    stems ("founded" and "founding"), not their whole lookup keys; the answer types and the echo still read the keys
    (`text.stems`, `blocks.keywords`)."""
    answer_type_words: int = 0
    """How many vocabulary words the answer-type table holds (number, date and cue words; sized from the
    word vectors' vocabulary)."""
    tune_vectors: bool = False
    """A MatchLens ablation any family can have: the word vectors of the training answers' words are
    fine-tuned, as a learned offset added to GloVe's (`blocks.TunedWords`); every other word stays GloVe's."""
    tuned_words: int = 0
    """How many words have a fine-tuned offset (the training answers'; sized from them)."""

    @property
    def attended_sides(self) -> tuple[str, ...]:
        """The sides behind an attention gate ("question", "answer"); none by default."""
        return ()

    @property
    def reads_list_idf(self) -> bool:
        """Whether the model reads each question word's IDF within its list (`PairBatch.list_idf`)."""
        return False

    @property
    def reads_stems(self) -> bool:
        """Whether the model reads the words' stem ids (`PairBatch.question_stems`, `answer_stems`)."""
        return self.keyword_stems

    def validate(self) -> None:
        _require_positive_ints(self, "embedding_dim", "max_question_len", "max_answer_len")
        _require_finite(self, "dropout")
        if not 0.0 <= self.dropout < 1.0:
            raise ParamsError(f"dropout must be in [0, 1), not {self.dropout!r}")
        for name in ("keywords", "tune_vectors", "keyword_answer_types", "keyword_echo", "keyword_echo_at_start",
                     "keyword_places", "keyword_list_bm25", "keyword_stems"):
            if not isinstance(getattr(self, name), bool):
                raise ParamsError(f"{name} must be true or false, not {getattr(self, name)!r}")
        for name in ("keyword_words", "tuned_words", "answer_type_words"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ParamsError(f"{name} must be a non-negative integer, not {value!r}")
        if self.keyword_answer_types and not self.keywords:
            raise ParamsError("keyword_answer_types adds features to the keyword term: it needs keywords true")
        if self.keyword_echo and not self.keyword_answer_types:
            raise ParamsError("keyword_echo reads the answer-type features' word table: it needs "
                              "keyword_answer_types true")
        if self.keyword_places and not self.keyword_answer_types:
            raise ParamsError("keyword_places reads the answer-type features' word table: it needs "
                              "keyword_answer_types true")
        if self.keyword_list_bm25 and not self.keywords:
            raise ParamsError("keyword_list_bm25 adds a feature to the keyword term: it needs keywords true")
        if self.keyword_stems and not self.keywords:
            raise ParamsError("keyword_stems changes what the keyword term matches: it needs keywords true")
        if self.keyword_echo_at_start and not self.keyword_echo:
            raise ParamsError("keyword_echo_at_start narrows the echo feature: it needs keyword_echo true")


@dataclass(frozen=True)
class AttentionParams:
    """The omega layer of the ECIR paper: a word attention gate on one side, the other or both."""

    attention: AttentionSide = "question"
    attention_scaling: AttentionScaling = "length"
    """`none`: w' = alpha * w as in the paper; `length`: w' = alpha * m * w (mean weight 1)."""
    attention_gate: AttentionGateKind = "softmax"
    """`softmax` as in the papers; `sparsemax` or `entmax15` give unattended words exactly 0."""
    attention_temperature: float = 1.0
    """alpha = gate(V^T w / T): below 1 sharpens the weights, above 1 flattens them."""
    attention_init: AttentionInit = "default"
    """`default`: torch's uniform init of V; `zero`: V = 0, so training starts from uniform attention."""

    @property
    def attended_sides(self) -> tuple[str, ...]:
        return {"none": (), "question": ("question",), "answer": ("answer",),
                "both": ("question", "answer")}[self.attention]

    def validate_attention(self, sides: tuple[str, ...] = ATTENTION_SIDES) -> None:
        _require_choice(self, "attention", sides)
        _require_choice(self, "attention_scaling", ATTENTION_SCALINGS)
        _require_choice(self, "attention_gate", ATTENTION_GATES)
        _require_choice(self, "attention_init", ATTENTION_INITS)
        _require_finite(self, "attention_temperature")
        if self.attention_temperature <= 0:
            raise ParamsError(f"attention_temperature must be positive, not {self.attention_temperature!r}")


@dataclass(frozen=True)
class OmegaParams(AttentionParams):
    """A family of the ECIR paper's table: omega off (its Original) by default, or on the question, the answer
    or both."""

    attention: AttentionSide = "none"

    def validate_attention(self, sides: tuple[str, ...] = ("none", *ATTENTION_SIDES)) -> None:
        super().validate_attention(sides)


@dataclass(frozen=True)
class MVLSTMParams(ModelParams):
    """MV-LSTM (Wan et al. 2016): Bi-LSTM, positional interactions, k-max pooling, MLP."""

    family: str = "mvlstm"
    hidden_size: int = 50
    """Per LSTM direction; positional vectors have 2 * hidden_size values."""
    interaction: Interaction = "cosine"
    tensor_slices: int = 3
    """c, the number of matrices of the tensor interaction (ignored otherwise)."""
    k: int = 10
    """Values kept per interaction matrix by k-max pooling."""
    mlp_hidden: int = 32
    filler_value: float = 0.0
    """Pooled value used when a matrix has fewer than k real cells (marked as filler)."""
    pool_directions: bool = False
    """Also k-max pool the forward-only and backward-only cosine matrices, as the
    aMV-LSTM paper does ("over both the forward and backward interaction matrices")."""
    exact_match: ExactMatch = "none"
    """A MatchLens addition: one more matrix, 1 where the question and answer words have
    the same lookup key (`binary`), or the question word's IDF there (`idf`), or the
    product of the two words' weights as the Bi-LSTM read them (`attention`, models with
    a gate only: the gate then decides which shared words count); k-max pooled beside
    the others."""
    idf_words: int = 0
    """How many words the checkpoint's IDF table holds (`exact_match` = `idf` only)."""
    exact_match_list: bool = False
    """A MatchLens addition: one more exact-match matrix, the question word's IDF within its list (the question's
    own candidates: `text.baselines.idf_within_lists`) where the two words share a lookup key; k-max pooled beside
    the others. The IDF of `exact_match` = `idf` comes from the training answers and favours a rare name; here a
    word every candidate has (the subject all the sentences of a section name) weighs 0."""
    exact_match_stems: bool = False
    """The exact-match matrix of `exact_match` matches the words' Snowball stems (`text.stems`: "founded" and
    "founding"), not their whole lookup keys; with `idf`, the IDF is the stem's over the training answers."""

    @property
    def reads_list_idf(self) -> bool:
        return self.exact_match_list

    @property
    def reads_stems(self) -> bool:
        return self.keyword_stems or self.exact_match_stems

    @property
    def matrix_count(self) -> int:
        return ((self.tensor_slices if self.interaction == "tensor" else 1) + (2 if self.pool_directions else 0)
                + (1 if self.exact_match != "none" else 0) + (1 if self.exact_match_list else 0))

    @property
    def pooled_size(self) -> int:
        return self.k * self.matrix_count

    def validate(self) -> None:
        super().validate()
        _require_choice(self, "interaction", INTERACTIONS)
        _require_positive_ints(self, "hidden_size", "tensor_slices", "k", "mlp_hidden")
        _require_finite(self, "filler_value")
        if not isinstance(self.pool_directions, bool):
            raise ParamsError(f"pool_directions must be true or false, not {self.pool_directions!r}")
        _require_choice(self, "exact_match", EXACT_MATCHES)
        for name in ("exact_match_list", "exact_match_stems"):
            if not isinstance(getattr(self, name), bool):
                raise ParamsError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.exact_match_stems and self.exact_match == "none":
            raise ParamsError("exact_match_stems changes what the exact-match matrix matches: it needs exact_match")
        if self.exact_match == "attention" and not self.attended_sides:
            raise ParamsError("exact_match 'attention' needs an attention gate (an aMV-LSTM)")
        if not isinstance(self.idf_words, int) or isinstance(self.idf_words, bool) or self.idf_words < 0:
            raise ParamsError(f"idf_words must be a non-negative integer, not {self.idf_words!r}")


@dataclass(frozen=True)
class AMVLSTMParams(AttentionParams, MVLSTMParams):
    """aMV-LSTM (Belkacem et al. 2019): MV-LSTM with a word attention gate."""

    family: str = "amvlstm"

    def validate(self) -> None:
        super().validate()
        self.validate_attention()


@dataclass(frozen=True)
class MatchPyramidParams(OmegaParams, ModelParams):
    """MatchPyramid (Pang et al. 2016), and MatchPyramid.omega (ECIR 2019) with `attention` set.

    Word matching matrix -> 2D convolution + ReLU -> dynamic max pooling to a
    `pool_rows` x `pool_cols` grid -> MLP -> score.
    """

    family: str = "matchpyramid"
    matching: WordMatching = "dot"
    """How two word vectors meet: `dot` (MatchZoo's choice) or `cosine` (the dot product of unit
    vectors; with a gate, the unit vectors are reweighted, so the gate still matters)."""
    kernel_count: int = 16
    kernel_rows: int = 3
    kernel_cols: int = 3
    pool_rows: int = 3
    pool_cols: int = 10
    mlp_hidden: int = 32

    @property
    def pooled_size(self) -> int:
        return self.kernel_count * self.pool_rows * self.pool_cols

    def validate(self) -> None:
        super().validate()
        self.validate_attention()
        _require_choice(self, "matching", WORD_MATCHINGS)
        _require_positive_ints(self, "kernel_count", "kernel_rows", "kernel_cols", "pool_rows", "pool_cols",
                               "mlp_hidden")
        if self.kernel_rows % 2 == 0 or self.kernel_cols % 2 == 0:
            raise ParamsError("kernel_rows and kernel_cols must be odd, so each feature sits on one matrix cell")


Compression = Literal["fm", "nn", "sm"]
COMPRESSION_KINDS = ("fm", "nn", "sm")


@dataclass(frozen=True)
class MCANParams(ModelParams):
    """MCAN (Tay et al., KDD 2018): highway projection, four casts of co-attention compressed to
    12 scalars per word, an LSTM over [word; casts], MeanMax pooling, two highway layers, a score."""

    family: str = "mcan"
    projection_size: int = 50
    """The highway projection of the word vectors (the size every later word vector has)."""
    affinity_size: int = 50
    """F, the ReLU layer each word passes before s_ij = F(q_i)^T F(d_j) (and its own one for intra-attention)."""
    compression: Compression = "fm"
    """How each comparison becomes one scalar: `fm` (factorisation machine, the paper's default), `nn`
    (ReLU(W x + b)) or `sm` (sum)."""
    fm_factors: int = 10
    """k, the factors of each factorisation machine (`fm` only)."""
    hidden_size: int = 50
    """The LSTM's hidden size; MeanMax pooling gives 2 x this per text."""
    highway_size: int = 50
    """The two highway layers over [h_q; h_a; h_q * h_a; h_q - h_a]."""
    exact_match: bool = False
    """MatchLens addition: a 13th feature glued onto each word beside the 12 casts, 1 where its lookup key is
    also in the other text (the word-overlap feature Severyn and Moschitti's answer-selection CNN gives each
    word). The casts compare projected vectors, so a name or a number the vectors do not know, or know
    vaguely, matches itself only as well as any similar word; this says it is the same word."""

    def validate(self) -> None:
        super().validate()
        _require_choice(self, "compression", COMPRESSION_KINDS)
        _require_positive_ints(self, "projection_size", "affinity_size", "fm_factors", "hidden_size",
                               "highway_size")


@dataclass(frozen=True)
class CDSSMParams(OmegaParams, ModelParams):
    """C-DSSM (Shen et al. 2014) on word vectors, and C-DSSM.omega (ECIR 2019) with `attention` set."""

    family: str = "cdssm"
    filters: int = 64
    kernel_size: int = 3
    """Words per convolution window."""
    hidden_size: int = 64
    """The dense layer that makes each text's vector."""

    def validate(self) -> None:
        super().validate()
        self.validate_attention()
        _require_positive_ints(self, "filters", "kernel_size", "hidden_size")


@dataclass(frozen=True)
class DUETParams(OmegaParams, ModelParams):
    """DUET (Mitra et al. 2017), and DUET.omega (ECIR 2019) with `attention` set: local + distributed model."""

    family: str = "duet"
    local_filters: int = 16
    """Width-1 filters the local model runs over each question row of the exact-match matrix."""
    distributed_filters: int = 32
    kernel_size: int = 3
    """Words per window of the distributed model's convolutions."""
    answer_windows: int = 6
    """Windows the distributed model max-pools the answer to (max_answer_len must split into them)."""
    mlp_hidden: int = 32

    def validate(self) -> None:
        super().validate()
        self.validate_attention()
        _require_positive_ints(self, "local_filters", "distributed_filters", "kernel_size", "answer_windows",
                               "mlp_hidden")
        if self.max_answer_len % self.answer_windows:
            raise ParamsError(f"max_answer_len ({self.max_answer_len}) must split into answer_windows "
                              f"({self.answer_windows}) equal windows")


@dataclass(frozen=True)
class ARCIIParams(OmegaParams, ModelParams):
    """ARC-II (Hu et al. 2014), and ARC-II.omega (ECIR 2019) with `attention` set."""

    family: str = "arcii"
    ngram_size: int = 3
    """Words per window of each text's 1D convolution."""
    ngram_filters: int = 16
    kernel_count: int = 16
    kernel_rows: int = 3
    kernel_cols: int = 3
    pool_rows: int = 3
    pool_cols: int = 10
    mlp_hidden: int = 32

    @property
    def pooled_size(self) -> int:
        return self.kernel_count * self.pool_rows * self.pool_cols

    def validate(self) -> None:
        super().validate()
        self.validate_attention()
        _require_positive_ints(self, "ngram_size", "ngram_filters", "kernel_count", "kernel_rows", "kernel_cols",
                               "pool_rows", "pool_cols", "mlp_hidden")
        if self.kernel_rows % 2 == 0 or self.kernel_cols % 2 == 0:
            raise ParamsError("kernel_rows and kernel_cols must be odd, so each feature sits on one map cell")


def params_to_dict(params: ModelParams) -> dict[str, Any]:
    return asdict(params)
