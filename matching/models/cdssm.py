"""C-DSSM (Shen et al., CIKM 2014) on word vectors, as the ECIR 2019 paper ran it, and C-DSSM.omega.

Each text alone: a 1D convolution over windows of `kernel_size` words, ReLU, max-pooling over the
windows (each filter keeps its largest window), a dense layer; the score reads the cosine of the
two sentence vectors. The ECIR paper replaced the original letter-trigram hashing by word vectors
(so omega, the attention gate, has words to weigh); MatchZoo-py's C-DSSM keeps separate networks
for the two texts, and so does this one.

The parts it shows: which word windows the max-pooling kept on each side (the share of the filters
whose maximum came from the window starting at each word: a weighting of the words that adds up
to 1 per text), the two sentence vectors and their cosine, and the score split exactly into the
cosine's term and the output bias.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from matching.models.base import ForwardTrace, MatchingModel, PairBatch, ecir_deviations, gate_text, register
from matching.models.blocks import length_mask
from matching.models.blocks.attention import MASKED_LOGIT
from matching.models.params import CDSSMParams, ModelParams
from matching.models.parts import (
    GATE_STEP,
    RANK_STEP,
    VECTORS_STEP,
    WORDS_STEP,
    Descriptor,
    Part,
    Step,
    Terms,
    View,
    WordWeights,
)

WINDOWS = "windows kept by max-pooling"
VECTORS = ("question vector", "answer vector", "cosine")
TERMS = ("weight × cosine", "bias")

WINDOWS_STEP = Step("windows", View.WEIGHTS, "Convolution and max-pooling: the windows each text keeps",
                    "Filters slide over windows of consecutive words; each filter keeps its largest window. The bars "
                    "show, for each word, the share of the filters whose kept window starts there.", shows=(WINDOWS,))
SENTENCE_STEP = Step("sentences", View.PAIR_VECTORS, "Two sentence vectors and their cosine", "A dense layer turns "
                     "each text's pooled filters into one vector; the two texts never meet before their cosine.",
                     shows=VECTORS)
SCORE_STEP = Step("score", View.TERMS, "The score", "The score is a learned weight times the cosine, plus a bias.")


class TextNetwork(nn.Module):
    """One text's side: convolution over word windows, ReLU, max-pooling over real windows, dense layer."""

    def __init__(self, dim: int, filters: int, kernel_size: int, hidden: int) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.conv = nn.Conv1d(dim, filters, kernel_size)
        self.dense = nn.Linear(filters, hidden)

    def forward(self, words: torch.Tensor, lengths: torch.Tensor, dropout: nn.Module
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(sentence vectors (B, H), the window each filter kept (B, F)). A window starts at every real
        word and reads zeros past the text's end (MatchZoo-py pads the same way), never another text."""
        padded = nn.functional.pad(words.transpose(1, 2), (0, self.kernel_size - 1))
        features = dropout(torch.relu(self.conv(padded)))  # (B, F, L)
        real = length_mask(lengths, words.shape[1])[:, None, :]
        pooled, kept = features.masked_fill(~real, MASKED_LOGIT).max(dim=-1)
        return torch.tanh(self.dense(pooled)), kept


@register
class CDSSM(MatchingModel):
    family = "cdssm"
    params_type = CDSSMParams
    params: CDSSMParams
    descriptor = Descriptor(
        title="C-DSSM", short_name="CD", paper="Shen et al., CIKM 2014; omega: Belkacem et al., ECIR 2019",
        steps=(WORDS_STEP, VECTORS_STEP, GATE_STEP, WINDOWS_STEP, SENTENCE_STEP, SCORE_STEP, RANK_STEP),
        terms=(("C-DSSM", "Shen et al. 2014: each text alone through a convolution and max-pooling to one vector; "
                          "the score reads the cosine of the two vectors.", "CDSSM", "C-DSSM.omega"),))

    def __init__(self, params: CDSSMParams) -> None:
        super().__init__(params)
        self.sides = nn.ModuleDict({side: TextNetwork(params.embedding_dim, params.filters, params.kernel_size,
                                                      params.hidden_size) for side in ("question", "answer")})
        self.head = nn.Linear(1, 1)

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        question = self.read("question", batch.question_vectors, batch.question_unknown, batch.question_lengths,
                             batch.question_ids)
        answer = self.read("answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths, batch.answer_ids)
        q_vector, q_kept = self.sides["question"](question.gated_words, batch.question_lengths, self.dropout)
        a_vector, a_kept = self.sides["answer"](answer.gated_words, batch.answer_lengths, self.dropout)
        cosine = nn.functional.cosine_similarity(q_vector, a_vector, dim=-1, eps=1e-8)
        score = self.head(cosine[:, None]).squeeze(-1)
        if not trace:
            return score

        def window_share(kept: torch.Tensor, width: int) -> torch.Tensor:
            counts = torch.zeros(kept.shape[0], width, dtype=score.dtype, device=score.device)
            counts.scatter_add_(1, kept, torch.ones_like(kept, dtype=score.dtype))
            return counts / kept.shape[1]

        weighted = self.head.weight[0, 0] * cosine
        return ForwardTrace(
            score=score, question=question, answer=answer,
            weights={WINDOWS: WordWeights(window_share(q_kept, question.words.shape[1]),
                                          window_share(a_kept, answer.words.shape[1]))},
            terms=Terms(TERMS, torch.stack([weighted, score - weighted], dim=-1)),
            vectors=dict(zip(VECTORS, (q_vector, a_vector, cosine[:, None]), strict=True)))

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.WORD_WEIGHTS, Part.TERMS, Part.PAIR_VECTORS})

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        return []

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        return ecir_deviations(params, training, [
            "word vectors, not letter-trigram hashing (as the ECIR paper ran it)",
            f"{params.get('filters')} filters of {params.get('kernel_size')} words, a tanh dense layer of "
            f"{params.get('hidden_size')} (MatchZoo-py: 3 filters and a 3-layer MLP of 64)",
            "max-pooling over the windows that start at a real word only"])

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        assert isinstance(params, CDSSMParams)
        parts = ["GloVe 6B 50d word vectors (frozen; one learned vector for unknown words)"]
        parts += [gate_text(params)] if params.attended_sides else []
        parts += [f"each text alone: 1D convolution, {params.filters} filters over {params.kernel_size}-word "
                  "windows, ReLU, max-pooling over the windows",
                  f"tanh dense layer of {params.hidden_size} (one network per text)",
                  "cosine of the two sentence vectors -> linear score"]
        return " -> ".join(parts)


__all__ = ["CDSSM"]
