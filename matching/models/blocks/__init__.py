"""Reusable building blocks of the model families, each masked against padding (as MatchZoo-py's `modules`).

Shapes: B batch, m / n question / answer lengths (padded to the batch maximum),
d word-vector size, h LSTM hidden size per direction, C interaction matrices.
Masks are boolean, True on real tokens.

- `masks`: padding masks, the shared unknown-word vector, rows of a batch read in place;
- `attention`: the word attention gate omega and its normalisers;
- `encoders`: the Bi-LSTM;
- `interactions`: cosine, bilinear and tensor matrices, the exact-match channel and its IDF table;
- `pooling`: k-max and dynamic max pooling that remember where each value came from;
- `heads`: the MLP head and each pooled value's exact share of the score.
"""

from matching.models.blocks.attention import (
    GATES,
    MASKED_LOGIT,
    AttentionGate,
    entmax15,
    masked_softmax,
    normalised_entropy,
    sparsemax,
)
from matching.models.blocks.encoders import BiLSTMEncoder
from matching.models.blocks.heads import MLPHead
from matching.models.blocks.interactions import (
    BilinearInteraction,
    CosineInteraction,
    IdfTable,
    Interaction,
    TensorInteraction,
    cosine_matrix,
    exact_match_matrix,
    make_interaction,
)
from matching.models.blocks.masks import COSINE_EPS, UnknownWordVector, consecutive, length_mask, take_rows
from matching.models.blocks.pooling import DynamicPooled, Pooled, dynamic_max_pool, kmax_pool, kmax_values

__all__ = ["COSINE_EPS", "GATES", "MASKED_LOGIT", "AttentionGate", "BiLSTMEncoder", "BilinearInteraction",
           "CosineInteraction", "DynamicPooled", "IdfTable", "Interaction", "MLPHead", "Pooled", "TensorInteraction",
           "UnknownWordVector", "consecutive", "cosine_matrix", "dynamic_max_pool", "entmax15", "exact_match_matrix",
           "kmax_pool", "kmax_values", "length_mask", "make_interaction", "masked_softmax", "normalised_entropy",
           "sparsemax", "take_rows"]
