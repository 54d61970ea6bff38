"""The parts a forward trace can carry, and the descriptor every family brings.

A trace is the score plus optional *parts*: each part is one capability that a view can ask
for (LIT's "a view declares the parts it needs"). A family fills the parts its network really
has, from the very pass that produced the score, and leaves the others out; the rest of
MatchLens asks a trace or an explanation which parts it has, never which family made it.

- word weights: named weights over each side's words (an attention gate, a co-attention);
- interaction matrices: named matrices over (question position, answer position), those the
  network read and those it computed for display only, with the exact split of the score
  over the read cells where the network allows one;
- pooled cells: the values a pooling kept, where each came from, and each one's exact share
  of the score (with the hidden layer that reads them);
- word channels: named per-word feature channels (MCAN's casted attention features);
- recurrent states: the states of an LSTM at every position of each side;
- score terms: the score split exactly into named terms;
- pair vectors: named vectors of the pair on the way to the score (sentence vectors, highway
  layers), for the walkthrough.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import torch

from matching.models.blocks import Pooled

EXACT_MATCH = "exact match"
"""The name of a family's exact-match matrix or channel (1 where two words share a lookup key, perhaps weighted):
the matrix views give it a view of its own, whichever family has it."""
LIST_EXACT_MATCH = "list match"
"""MV-LSTM's exact-match matrix over the list (`exact_match_list`): short, so that "list match #10" fits the Pooled
cells page's cell column."""


class Part(StrEnum):
    WORD_WEIGHTS = "word weights"
    MATRICES = "interaction matrices"
    POOLED_CELLS = "pooled cells"
    CHANNELS = "word channels"
    STATES = "recurrent states"
    TERMS = "score terms"
    PAIR_VECTORS = "pair vectors"


@dataclass(frozen=True)
class WordWeights:
    """Weights over the real words of each side (each side's weights sum to 1; 0 on padding);
    None for a side the mechanism does not weigh."""

    question: torch.Tensor | None  # (B, m)
    answer: torch.Tensor | None  # (B, n)


@dataclass(frozen=True)
class Matrices:
    """Matrices over (question position, answer position), (B, C, m, n) in `names` order.

    `cell_contributions` + `cell_bias` = score exactly, where the family can split its score
    over the cells it read (gradient x value of a network that is piecewise linear in them);
    None where it cannot."""

    names: tuple[str, ...]
    read: torch.Tensor  # (B, C, m, n) the matrices the network read
    shown: dict[str, torch.Tensor] = field(default_factory=dict)  # name -> (B, m, n), computed, never read
    cell_contributions: torch.Tensor | None = None  # (B, C, m, n)
    cell_bias: torch.Tensor | None = None  # (B,)
    products: dict[str, Product] = field(default_factory=dict)
    """For a matrix (read or shown) that is a plain product of traced vectors: those vectors, so one
    cell can be worked out on the board."""


@dataclass(frozen=True)
class Product:
    """Matrix cell (i, j) = question[i] . answer[j], divided by both lengths when `cosine`."""

    question: torch.Tensor  # (B, m, D)
    answer: torch.Tensor  # (B, n, D)
    cosine: bool


@dataclass(frozen=True)
class PooledCells:
    """The values a pooling kept, each read straight into an MLP: contributions (B, G*K) +
    bias (B,) = score exactly (see `blocks.MLPHead.contributions`)."""

    pooled: Pooled
    groups: tuple[str, ...]  # G names, in MLP-input order
    group_matrix: tuple[int, ...]  # for each group, the index of the matrix its (i, j) refer to
    windows: torch.Tensor | None  # (B, K, 4) pooling window [row0, row1, col0, col1) of each slot, or None
    contributions: torch.Tensor  # (B, G * K)
    bias: torch.Tensor  # (B,)
    hidden: torch.Tensor  # (B, H) the MLP's hidden pre-activations
    features: torch.Tensor | None = None  # (B, F, m, n) feature maps before pooling, where a family has them


@dataclass(frozen=True)
class Channels:
    """Named per-word feature channels of each side, (B, L, F) in `names` order."""

    names: tuple[str, ...]
    question: torch.Tensor  # (B, m, F)
    answer: torch.Tensor  # (B, n, F)


@dataclass(frozen=True)
class Terms:
    """The score split into named terms: values.sum(-1) == score exactly."""

    names: tuple[str, ...]
    values: torch.Tensor  # (B, T)


class View(StrEnum):
    """The generic walkthrough views a step can be drawn with, each reading one kind of traced value."""

    WORDS = "words"  # the tokens and which ones the model read
    VECTORS = "vectors"  # the word vectors read
    PROJECTION = "projection"  # the word vectors as a family's first layer passes them on (SideSteps.gated_words)
    GATE = "gate"  # the attention gate's scores and weights (word weights: the gate)
    STATES = "states"  # recurrent states at every position (recurrent states)
    CELL = "cell"  # one interaction cell worked out, then the matrix (interaction matrices)
    MATRIX = "matrix"  # a named matrix over positions, shown whole (interaction matrices)
    POOLING = "pooling"  # what a pooling kept (pooled cells)
    MLP = "mlp"  # the hidden layer over the pooled cells and the exact waterfall (pooled cells)
    WEIGHTS = "weights"  # named word weights side by side (word weights)
    CHANNELS = "channels"  # named per-word feature channels (word channels)
    PAIR_VECTORS = "pair vectors"  # named vectors of the pair (pair vectors)
    TERMS = "terms"  # the score split into named terms, e.g. learned match and keywords (score terms)
    RANK = "rank"  # where the candidate lands


VIEW_NEEDS: dict[View, Part | None] = {
    View.WORDS: None, View.VECTORS: None, View.PROJECTION: None, View.RANK: None, View.GATE: Part.WORD_WEIGHTS,
    View.STATES: Part.STATES, View.CELL: Part.MATRICES, View.MATRIX: Part.MATRICES,
    View.POOLING: Part.POOLED_CELLS, View.MLP: Part.POOLED_CELLS, View.WEIGHTS: Part.WORD_WEIGHTS,
    View.CHANNELS: Part.CHANNELS, View.PAIR_VECTORS: Part.PAIR_VECTORS, View.TERMS: Part.TERMS,
}
"""The part each view reads (None: every trace has what it reads)."""


@dataclass(frozen=True)
class Step:
    """One step of a family's walkthrough: a key for links, the generic view that draws it, and its words."""

    key: str
    view: View
    title: str
    lead: str
    """One or two plain sentences shown before the picture."""
    shows: tuple[str, ...] = ()
    """The names of the traced values the view shows (matrix, weight, channel or vector names); empty: all."""


WORDS_STEP = Step("words", View.WORDS, "Words", "The text is cut into words. Each keeps its place in your text; "
                  "words past the model's maximum length are kept on screen but never read.")
VECTORS_STEP = Step("vectors", View.VECTORS, "Word vectors", "Each word becomes a list of 50 numbers from GloVe "
                    "(one strip per word, blue below zero, red above). Every unknown word gets the same learned "
                    "vector.")
GATE_STEP = Step("gate", View.GATE, "The attention gate", "The model scores each word (V^T w_t), turns the scores "
                 "into weights that add up to 1 (a softmax in the paper; sparse gates can give words exactly 0) and "
                 "multiplies each word vector by its weight.")
TERMS_STEP = Step("terms", View.TERMS, "Keywords and learned match", "The score is the network's learned match "
                  "plus a keyword term: each keyword feature of the pair (word overlap, IDF-weighted overlap, BM25 "
                  "and, in the models that have them, the answer-type, list and echo features) times a learned "
                  "weight. The parts add up to the score exactly.")
RANK_STEP = Step("rank", View.RANK, "The rank", "The candidates are sorted by score: this is where yours lands.")
"""Steps every family shares (the gate only where a model has one)."""


@dataclass(frozen=True)
class Descriptor:
    """What a family tells the rest of MatchLens about itself, in words (its numbers are in the trace).

    `steps` are its walkthrough in order; a step whose view reads a part an explanation lacks
    (the gate step on a model without a gate) is left out for that explanation.
    """

    title: str
    short_name: str
    """A few letters for narrow tables: a model's name starts with its family's, which this replaces."""
    paper: str
    steps: tuple[Step, ...]
    terms: tuple[tuple[str, ...], ...] = ()
    """Glossary entries: (name, one plain line, aliases...)."""
    state_directions: tuple[str, ...] = ("forward", "backward")
    """The directions its recurrent states hold side by side (a Bi-LSTM: forward then backward halves)."""


__all__ = ["GATE_STEP", "RANK_STEP", "TERMS_STEP", "VECTORS_STEP", "VIEW_NEEDS", "WORDS_STEP", "Channels",
           "Descriptor", "Matrices", "Part", "Pooled", "PooledCells", "Product", "Step", "Terms", "View", "WordWeights"]
