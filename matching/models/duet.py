"""DUET (Mitra et al., WWW 2017), and DUET.omega (ECIR 2019): a local model plus a distributed model.

- The local model reads only which words the two texts share: the exact-match matrix X (1 where
  a question word and an answer word have the same lookup key). Each question position's row of X
  goes through a convolution of width 1 (the same filters at every question position), then the
  rows are flattened in position order and read by an MLP to one number.
- The distributed model reads the word vectors: the question through a convolution, max-pooling
  over its positions and a dense layer to one vector; the answer through a convolution and
  max-pooling over fixed windows of positions, then a convolution of width 1; their element-wise
  product, flattened, goes through an MLP to one number.
- The score is the sum of the two, so it splits exactly into "local model" and "distributed model".

Texts are padded to the model's maximum lengths, as in MatchZoo-py (its MLPs read fixed-size
inputs), but masked: padding matches nothing, its local rows are zero and its windows are zero.
The gate omega reweights the words the distributed model reads (the local model reads no vectors).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from matching.models.base import ForwardTrace, MatchingModel, PairBatch, ecir_deviations, gate_text, register
from matching.models.blocks import exact_match_matrix, length_mask
from matching.models.blocks.attention import MASKED_LOGIT
from matching.models.params import DUETParams, ModelParams
from matching.models.parts import (
    EXACT_MATCH,
    GATE_STEP,
    RANK_STEP,
    VECTORS_STEP,
    WORDS_STEP,
    Descriptor,
    Matrices,
    Part,
    Step,
    Terms,
    View,
)

TERMS = ("local model", "distributed model")
VECTORS = ("question vector (distributed)",)

LOCAL_STEP = Step("local", View.MATRIX, "The local model: which words the texts share", "The local model sees only "
                  "exact matches: 1 where a question word and an answer word are the same word. Each question row "
                  "of this matrix goes through the same filters, then an MLP turns all rows into one number.",
                  shows=(EXACT_MATCH,))
DISTRIBUTED_STEP = Step("distributed", View.PAIR_VECTORS, "The distributed model: meaning beyond exact words",
                        "The question's word vectors become one vector (convolution, max-pooling, a dense layer); "
                        "it is multiplied into the answer's pooled windows, and an MLP turns the product into one "
                        "number.", shows=VECTORS)
SUM_STEP = Step("sum", View.TERMS, "Local + distributed = the score", "The score is the sum of the two models' "
                "numbers, exactly.")


def mlp(size: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(size, hidden), nn.ReLU(), nn.Linear(hidden, 1))


@register
class DUET(MatchingModel):
    family = "duet"
    params_type = DUETParams
    params: DUETParams
    descriptor = Descriptor(
        title="DUET", short_name="DU", paper="Mitra et al., WWW 2017; omega: Belkacem et al., ECIR 2019",
        steps=(WORDS_STEP, VECTORS_STEP, GATE_STEP, LOCAL_STEP, DISTRIBUTED_STEP, SUM_STEP, RANK_STEP),
        terms=(("DUET", "Mitra et al. 2017: a local model over exact word matches plus a distributed model over "
                        "word vectors; the score is their sum.", "DUET.omega"),))

    def __init__(self, params: DUETParams) -> None:
        super().__init__(params)
        m, n = params.max_question_len, params.max_answer_len
        self.local_conv = nn.Conv1d(n, params.local_filters, 1)
        self.local_mlp = mlp(m * params.local_filters, params.mlp_hidden)
        self.question_conv = nn.Conv1d(params.embedding_dim, params.distributed_filters, params.kernel_size)
        self.question_dense = nn.Linear(params.distributed_filters, params.distributed_filters)
        self.answer_conv = nn.Conv1d(params.embedding_dim, params.distributed_filters, params.kernel_size)
        self.answer_mix = nn.Conv1d(params.distributed_filters, params.distributed_filters, 1)
        self.distributed_mlp = mlp(params.distributed_filters * params.answer_windows, params.mlp_hidden)

    def local(self, batch: PairBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """(the local model's number (B,), the exact-match matrix (B, m, n) at the batch's widths)."""
        if batch.question_ids is None or batch.answer_ids is None:
            raise ValueError("DUET's local model needs the lookup-key ids of both texts")
        params = self.params
        matches = exact_match_matrix(batch.question_ids, batch.answer_ids)  # padding ids never match
        m, n = matches.shape[1:]
        fixed = nn.functional.pad(matches, (0, params.max_answer_len - n, 0, params.max_question_len - m))
        rows = self.local_conv(fixed.transpose(1, 2))  # (B, F, max m): each question row through the filters
        rows = rows * length_mask(batch.question_lengths, params.max_question_len)[:, None, :]
        return self.local_mlp(self.dropout(rows.flatten(1))).squeeze(-1), matches

    def distributed(self, batch: PairBatch, question: torch.Tensor, answer: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(the distributed model's number (B,), the question's vector (B, F))."""
        params, k = self.params, self.params.kernel_size

        def windows(words: torch.Tensor, lengths: torch.Tensor, conv: nn.Conv1d, width: int) -> torch.Tensor:
            """ReLU(conv) of the windows starting at each position up to `width`; 0 where one starts past the text."""
            padded = nn.functional.pad(words.transpose(1, 2), (0, width + k - 1 - words.shape[1]))
            return torch.relu(conv(padded)) * length_mask(lengths, width)[:, None, :]

        q_features = windows(question, batch.question_lengths, self.question_conv, question.shape[1])
        real = length_mask(batch.question_lengths, question.shape[1])[:, None, :]
        q_vector = torch.tanh(self.question_dense(q_features.masked_fill(~real, MASKED_LOGIT).amax(-1)))
        a_features = windows(answer, batch.answer_lengths, self.answer_conv, params.max_answer_len)
        pooled = nn.functional.max_pool1d(a_features, params.max_answer_len // params.answer_windows)
        mixed = self.answer_mix(pooled[..., :params.answer_windows])  # (B, F, windows)
        product = q_vector[:, :, None] * mixed
        return self.distributed_mlp(self.dropout(product.flatten(1))).squeeze(-1), q_vector

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        question = self.read("question", batch.question_vectors, batch.question_unknown, batch.question_lengths,
                             batch.question_ids)
        answer = self.read("answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths, batch.answer_ids)
        local, matches = self.local(batch)
        distributed, q_vector = self.distributed(batch, question.gated_words, answer.gated_words)
        score = local + distributed
        if not trace:
            return score
        return ForwardTrace(score=score, question=question, answer=answer,
                            matrices=Matrices((EXACT_MATCH,), matches[:, None]),
                            terms=Terms(TERMS, torch.stack([local, distributed], dim=-1)),
                            vectors={VECTORS[0]: q_vector})

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.MATRICES, Part.TERMS, Part.PAIR_VECTORS})

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        return [EXACT_MATCH]

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        return ecir_deviations(params, training, [
            f"{params.get('local_filters')} local and {params.get('distributed_filters')} distributed filters, MLPs "
            f"of {params.get('mlp_hidden')} (MatchZoo-py: 300 and 300, MLPs of 300)",
            "padding matches nothing and its rows and windows are zero (MatchZoo-py reads them)"],
            vectors="GloVe 6B 50d, frozen, one learned vector for unknown words, in the distributed model "
                    "(MatchZoo-py: letter-trigram counts)",
            omega="omega reweights the words the distributed model reads (the local model reads no vectors)")

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        assert isinstance(params, DUETParams)
        parts = ["GloVe 6B 50d word vectors (frozen; one learned vector for unknown words)"]
        parts += [gate_text(params) + " (distributed model)"] if params.attended_sides else []
        parts += [f"local model: exact-match matrix, {params.local_filters} width-1 filters per question row, MLP of "
                  f"{params.mlp_hidden}",
                  f"distributed model: question conv ({params.distributed_filters} filters of {params.kernel_size} "
                  f"words), max-pool, dense; answer conv, max-pool to {params.answer_windows} windows, width-1 conv; "
                  f"their product through an MLP of {params.mlp_hidden}",
                  "score = local + distributed"]
        return " -> ".join(parts)


__all__ = ["DUET"]
