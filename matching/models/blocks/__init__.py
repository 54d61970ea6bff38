"""Reusable building blocks of the model families, each masked against padding (as MatchZoo-py's `modules`).

Shapes: B batch, m / n question / answer lengths (padded to the batch maximum),
d word-vector size, h LSTM hidden size per direction, C interaction matrices.
Masks are boolean, True on real tokens.

- `masks`: padding masks, the shared unknown-word vector, rows of a batch read in place;
- `attention`: the word attention gate omega and its normalisers;
- `encoders`: the Bi-LSTM;
- `interactions`: cosine, bilinear and tensor matrices, the exact-match channel and its IDF table;
- `pooling`: k-max and dynamic max pooling that remember where each value came from;
- `heads`: the MLP head and each pooled value's exact share of the score;
- `highway`: highway layers (MCAN's projection and prediction layers);
- `coattention`: extractive, alignment and intra co-attention over an affinity matrix;
- `compression`: a vector to one scalar (FM, NN, SM), MCAN's casts.
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
from matching.models.blocks.coattention import alignment, pooled_coattention, self_alignment, softmax_over
from matching.models.blocks.compression import COMPRESSIONS, CastCompressions, CompressionKind, make_compression
from matching.models.blocks.encoders import BiLSTMEncoder
from matching.models.blocks.heads import MLPHead
from matching.models.blocks.highway import Highway
from matching.models.blocks.interactions import (
    BilinearInteraction,
    CosineInteraction,
    IdfTable,
    Interaction,
    TensorInteraction,
    cosine_matrix,
    exact_match_matrix,
    make_interaction,
    unit_rows,
)
from matching.models.blocks.masks import COSINE_EPS, TunedWords, UnknownWordVector, consecutive, length_mask, take_rows
from matching.models.blocks.pooling import DynamicPooled, Pooled, dynamic_max_pool, kmax_pool, kmax_values

__all__ = ["AttentionGate", "BiLSTMEncoder", "BilinearInteraction", "COMPRESSIONS", "COSINE_EPS", "CastCompressions",
           "CompressionKind", "CosineInteraction", "DynamicPooled", "GATES", "Highway", "IdfTable", "Interaction",
           "MASKED_LOGIT", "MLPHead", "Pooled", "TensorInteraction", "TunedWords", "UnknownWordVector", "alignment",
           "consecutive", "cosine_matrix", "dynamic_max_pool", "entmax15", "exact_match_matrix", "kmax_pool",
           "kmax_values", "length_mask", "make_compression", "make_interaction", "masked_softmax", "normalised_entropy",
           "pooled_coattention", "self_alignment", "softmax_over", "sparsemax", "take_rows", "unit_rows"]
