"""MatchPyramid (Pang et al., AAAI 2016), and MatchPyramid.omega (Belkacem et al., ECIR 2019).

Text matching as image recognition: the word-level matching matrix M_ij = w_i . w_j
(or their cosine) is read by a 2D convolution with ReLU, dynamic max pooling keeps the
maximum of each window of a fixed grid over the real cells, and an MLP gives the score.
MatchPyramid.omega reweights the words of the question, the answer or both by the
attention gate alpha_t = softmax(V^T w_t) before the matrix is built (the ECIR paper's
best WikiQA model puts it on the question).

The network after M is piecewise linear in M (convolution, ReLU, max pooling, linear
layers), so the gradient of the score with respect to M, times M, splits the score
exactly over the matrix cells, with one bias term for everything no cell accounts for.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from matching.models.base import ForwardTrace, MatchingModel, PairBatch, gate_text, register
from matching.models.blocks import MLPHead
from matching.models.map_reading import read_map, traced_read
from matching.models.params import MatchPyramidParams, ModelParams
from matching.models.parts import (
    GATE_STEP,
    RANK_STEP,
    VECTORS_STEP,
    WORDS_STEP,
    Descriptor,
    Matrices,
    Part,
    Product,
    Step,
    View,
)

WORD_CELL_STEP = Step("cell", View.CELL, "One matching cell, then the matrix", "Every question word meets every "
                      "answer word: each cell is the dot product of the two word vectors (unit length for cosine "
                      "matching, after the gate). Here is one cell worked out, then all of them.")
DYNAMIC_POOLING_STEP = Step("pooling", View.POOLING, "Convolution and dynamic pooling: what the network keeps",
                            "Convolution filters slide over the matrix; dynamic pooling cuts each filter's map into a "
                            "fixed grid of windows and keeps each window's largest value, in window order.")
PYRAMID_MLP_STEP = Step("mlp", View.MLP, "The MLP: from pooled values to the score", "The pooled values go through "
                        "one hidden layer of ReLU units to the score. The network is piecewise linear in the matrix, "
                        "so each pooled value's contribution (gradient x value) plus the bias adds up to the score.")


@register
class MatchPyramid(MatchingModel):
    family = "matchpyramid"
    params_type = MatchPyramidParams
    params: MatchPyramidParams
    descriptor = Descriptor(
        title="MatchPyramid", short_name="MP", paper="Pang et al., AAAI 2016; omega: Belkacem et al., ECIR 2019",
        steps=(WORDS_STEP, VECTORS_STEP, GATE_STEP, WORD_CELL_STEP, DYNAMIC_POOLING_STEP, PYRAMID_MLP_STEP,
               RANK_STEP),
        terms=(("MatchPyramid", "Pang et al. 2016: a word-by-word matching matrix read like an image, by "
                                "convolution and dynamic pooling, then an MLP.", "MatchPyramid.omega"),))

    def __init__(self, params: MatchPyramidParams) -> None:
        super().__init__(params)
        kernel = (params.kernel_rows, params.kernel_cols)
        # 'same' padding: the feature at (i, j) is centred on matrix cell (i, j). Padding cells
        # of M are exactly zero, so a border cell sees the same zeros whatever the batch padding.
        self.conv = nn.Conv2d(1, params.kernel_count, kernel, padding=(kernel[0] // 2, kernel[1] // 2))
        self.head = MLPHead(params.pooled_size, params.mlp_hidden)

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        # Cosine matching = the dot product of unit word vectors; a gate then reweights the unit vectors.
        unit = self.params.matching == "cosine"
        question = self.read("question", batch.question_vectors, batch.question_unknown, batch.question_lengths,
                             batch.question_ids, unit)
        answer = self.read("answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths,
                           batch.answer_ids, unit)
        matrix = (question.gated_words @ answer.gated_words.transpose(1, 2)) * batch.cell_mask()
        if not trace:
            return read_map(self, matrix[:, None], batch)[0]
        score, cells, pooled = traced_read(self, matrix[:, None], batch)
        names = tuple(self.matrix_names(self.params))
        return ForwardTrace(
            score=score, question=question, answer=answer,
            matrices=Matrices(names, matrix[:, None], cell_contributions=cells,
                              cell_bias=score - cells.flatten(1).sum(-1),
                              # unit vectors for cosine matching: the cell is their plain dot product
                              products={names[0]: Product(question.gated_words, answer.gated_words, cosine=False)}),
            pooled=pooled)

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.MATRICES, Part.POOLED_CELLS})

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        """How a MatchPyramid configuration differs from the ECIR 2019 paper's MatchZoo runs."""
        out = ["GloVe 6B 50d, frozen, one learned vector for unknown words (paper: GloVe 300d, Common Crawl)",
               f"{training.get('optimizer', 'adam')} lr {training.get('learning_rate')}, batch "
               f"{training.get('batch_size')}, at most {training.get('max_epochs')} epochs with early stopping on dev "
               "(paper: 400 epochs, figures at the end of training)",
               f"{params.get('kernel_count')} kernels of {params.get('kernel_rows')}x{params.get('kernel_cols')}, "
               f"dynamic pooling to {params.get('pool_rows')}x{params.get('pool_cols')} (MatchZoo's recommended "
               "settings; the paper does not list them)",
               f"an MLP of {params.get('mlp_hidden')} ReLU units before the score (MatchZoo: one linear layer)",
               "dynamic pooling reads real cells only (stretched over each text's own length)"]
        if params.get("matching") == "cosine":
            out.append("cosine matching: the dot product of unit word vectors (MatchZoo's default: dot)")
        if params.get("dropout"):
            out.append(f"dropout {params['dropout']} on the pooled features")
        if params.get("attention", "none") != "none":
            out.append("the attention softmax runs over real tokens only")
            if params.get("attention_scaling") == "length":
                out.append("words weighted by alpha_t x sentence length, mean weight 1 (paper: alpha_t)")
            if params.get("matching") == "cosine":
                out.append("the gate reweights the unit word vectors, so it still changes the cosine matrix")
        if training.get("loss", "hinge") != "hinge":
            out.append(f"{training['loss']} loss (paper: pairwise hinge)")
        return out

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        assert isinstance(params, MatchPyramidParams)
        # With the gate, each cell is the two words' match times both their weights: no longer within
        # a cosine's [-1, 1], so the name says so.
        return [f"word {params.matching}" + (" x word weights" if params.attention != "none" else "")]

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        assert isinstance(params, MatchPyramidParams)
        parts = ["GloVe 6B 50d word vectors (frozen; one learned vector for unknown words)"]
        parts += [gate_text(params)] if params.attended_sides else []
        matching = ("dot product w_i . w_j" if params.matching == "dot"
                    else "cosine: dot product of the unit word vectors (after the gate, if any)")
        parts += [f"word matching matrix: {matching} (1 matrix)",
                  f"2D convolution: {params.kernel_count} kernels of {params.kernel_rows}x{params.kernel_cols}, ReLU",
                  f"dynamic max pooling of the real cells to a {params.pool_rows}x{params.pool_cols} grid "
                  f"({params.pooled_size} values)",
                  f"MLP: ReLU layer of {params.mlp_hidden} units, then a linear score"]
        return " -> ".join(parts)
