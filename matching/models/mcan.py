"""MCAN, Multi-Cast Attention Networks (Tay, Tuan and Hui, KDD 2018), section 2.

Attention as features, not as pooling: every word is compared with what four attention
mechanisms make of it, each comparison is compressed to one number, and the 12 numbers are
glued onto the word before an LSTM reads the sentence.

1. Highway projection of each word vector (a learned word filter).
2. The affinity s_ij = F(q_i)^T F(a_j), F one ReLU layer.
3. Four casts, each giving every word x an attended vector x_bar:
   alignment (x_bar is the other text softly aligned to x), max-pooled and mean-pooled
   co-attention (x_bar is the text's own summary, each word weighted by its strongest or mean
   affinity with the other text), intra-attention (x_bar is x's own text aligned to x).
4. Each cast compares x_bar with x three ways, [x_bar; x], x_bar * x and x_bar - x, and a
   compression function (FM, NN or SM; no parameters shared across casts) turns each into a
   scalar: 12 features per word, in the paper's order f1..f12 (alignment, max, mean, intra; each
   product, difference, concatenation).
5. A shared LSTM reads [x; f1..f12]; MeanMax pooling (mean and max over the real positions).
6. Two highway layers over [h_q; h_a; h_q * h_a; h_q - h_a], then a linear score.

The score does not split exactly over anything shown (LSTM, highway and FM are not piecewise
linear), so this family exposes no cell contributions; a word-level split of its score comes
from integrated gradients, with the completeness residual reported (`explain.attribution`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from matching.models.base import (
    SCORE_BIAS,
    SCORE_TERMS,
    EncodedTexts,
    ForwardTrace,
    MatchingModel,
    PairBatch,
    SideSteps,
    register,
)
from matching.models.blocks import (
    CastCompressions,
    Highway,
    alignment,
    exact_match_matrix,
    length_mask,
    pooled_coattention,
    self_alignment,
)
from matching.models.blocks.attention import MASKED_LOGIT
from matching.models.params import MCANParams, ModelParams
from matching.models.parts import (
    EXACT_MATCH,
    RANK_STEP,
    VECTORS_STEP,
    WORDS_STEP,
    Channels,
    Descriptor,
    Matrices,
    Part,
    Product,
    Step,
    View,
    WordWeights,
)

CASTS = ("alignment", "max", "mean", "intra")
"""The four attention casts, in the paper's feature order (f1-f3 alignment ... f10-f12 intra)."""
COMPARISONS = ("product", "difference", "concatenation")
"""How each cast compares x_bar with x: x_bar * x, x_bar - x, [x_bar; x] (the paper's f1, f2, f3 order)."""
CHANNEL_NAMES = tuple(f"{cast}, {comparison}" for cast in CASTS for comparison in COMPARISONS)
# `exact_match` adds one channel after the 12 casts, EXACT_MATCH: 1 where the word's lookup key is in the other text.
AFFINITY = "affinity"
ALIGN_QUESTION = "alignment: question word → answer"
ALIGN_ANSWER = "alignment: answer word → question"
MAX_WEIGHTS = "max-pooled co-attention"
MEAN_WEIGHTS = "mean-pooled co-attention"
PAIR_VECTORS = ("question MeanMax", "answer MeanMax", "highway 1", "highway 2")

PROJECTION_STEP = Step("projection", View.PROJECTION, "Highway projection", "Each word vector passes a highway "
                       "layer: a ReLU layer H and a gate T decide, number by number, how much of the word goes on "
                       "unchanged and how much is transformed (y = H(x) T(x) + (1 - T(x)) x).")
AFFINITY_STEP = Step("affinity", View.CELL, "The affinity matrix", "Every question word meets every answer word: "
                     "each word passes one ReLU layer F, and s_ij = F(q_i) · F(a_j). Here is one cell worked out "
                     "with your numbers, then the whole matrix.", shows=(AFFINITY,))
COATTENTION_STEP = Step("coattention", View.WEIGHTS, "Co-attention: which words each cast looks at", "Max-pooled "
                        "co-attention weighs each word by its strongest affinity with the other text, mean-pooled by "
                        "its mean affinity (each a softmax, adding up to 1 per text). Each text's weighted sum is the "
                        "vector every one of its words is then compared with.", shows=(MAX_WEIGHTS, MEAN_WEIGHTS))
ALIGNMENT_STEP = Step("alignment", View.MATRIX, "Alignment: each word's counterpart in the other text",
                      "Alignment pooling gives each word its own soft counterpart: a softmax over its row (question "
                      "word) or column (answer word) of the affinity matrix, so each row or column adds up to 1.",
                      shows=(ALIGN_QUESTION, ALIGN_ANSWER))
CASTS_STEP = Step("casts", View.CHANNELS, "Casts: 12 numbers glued onto every word", "Each of the four casts "
                  "compares the word x with its attended vector x̄ three ways (x̄ × x, x̄ − x, [x̄; x]) and compresses "
                  "each comparison to one number. Alignment features act as a learned word overlap; the paper reads "
                  "them in its Figures 2 to 4. A model with the exact-match flag glues a 13th number on: 1 where the "
                  "word is also in the other text.")
LSTM_STEP = Step("lstm", View.STATES, "The LSTM reads [word; 12 features]", "One LSTM, shared by both texts, reads "
                 "each word's projected vector with its cast features (and the exact-match flag, where the model has "
                 "it) attached, left to right.")
MEANMAX_STEP = Step("meanmax", View.PAIR_VECTORS, "MeanMax: one vector per text", "Each text's LSTM states are "
                    "pooled two ways over its real words, their mean and their maximum, side by side.",
                    shows=PAIR_VECTORS[:2])
HIGHWAY_STEP = Step("highway", View.PAIR_VECTORS, "Two highway layers, then the score", "The two text vectors, "
                    "their product and their difference go through two highway layers; a linear layer turns the "
                    "last into the score: each of its numbers times its weight, summed, plus a bias.",
                    shows=(*PAIR_VECTORS[2:], SCORE_TERMS))


def meanmax(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """MeanMax pooling (eq. 14) over the real positions: [mean ; max], (B, 2h)."""
    real = mask[..., None].to(states.dtype)
    mean = (states * real).sum(1) / real.sum(1).clamp_min(1)
    top = states.masked_fill(~mask[..., None], MASKED_LOGIT).amax(1)
    return torch.cat([mean, top], dim=-1)


@register
class MCAN(MatchingModel):
    family = "mcan"
    params_type = MCANParams
    wikiqa_split = ("trained on WikiQA's standard split (the paper reports TrecQA, Ubuntu, QatarLiving and Tweets, "
                    "no WikiQA figure)")
    paper_data = ("trecqa-all", "TrecQA TRAIN-ALL, as for Ubuntu, QatarLiving and Tweets each its own training set")
    params: MCANParams
    descriptor = Descriptor(
        title="MCAN", short_name="MCAN", paper="Tay, Tuan and Hui, KDD 2018",
        steps=(WORDS_STEP, VECTORS_STEP, PROJECTION_STEP, AFFINITY_STEP, COATTENTION_STEP, ALIGNMENT_STEP,
               CASTS_STEP, LSTM_STEP, MEANMAX_STEP, HIGHWAY_STEP, RANK_STEP),
        terms=(("MCAN", "Tay et al. 2018: four attention mechanisms compare every word with what they attend to, "
                        "12 numbers glued onto the word before an LSTM reads it.", "Multi-Cast Attention Network"),),
        state_directions=("forward",))

    def __init__(self, params: MCANParams) -> None:
        super().__init__(params)
        size = params.projection_size
        self.projection = Highway(params.embedding_dim, size)
        self.affinity = nn.Linear(size, params.affinity_size)
        self.intra_affinity = nn.Linear(size, params.affinity_size)
        # One compression per (cast, comparison): the paper shares no parameters across casts.
        self.compress = CastCompressions(params.compression, size, len(CASTS), params.fm_factors)
        self.encoder = nn.LSTM(size + len(self.channel_names(params)), params.hidden_size, batch_first=True)
        self.prediction = nn.ModuleList([Highway(8 * params.hidden_size, params.highway_size),
                                         Highway(params.highway_size, params.highway_size)])
        self.head = nn.Linear(params.highway_size, 1)

    @staticmethod
    def channel_names(params: MCANParams) -> tuple[str, ...]:
        """The features glued onto each word: the 12 casts, then the exact-match flag where there is one."""
        return CHANNEL_NAMES + ((EXACT_MATCH,) if params.exact_match else ())

    def casts(self, words: torch.Tensor, attended: list[torch.Tensor]) -> torch.Tensor:
        """(B, L, 12): each cast's attended vectors x_bar compared with the words x (x_bar * x, x_bar - x,
        [x_bar; x]), each comparison compressed to one scalar."""
        bars = torch.stack(attended)  # (4, B, L, D), cast-major: each cast's rows are one block
        return self.compress(bars * words, bars - words, bars, words)

    def encode(self, words: torch.Tensor, features: torch.Tensor, mask: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """The LSTM over [word; casts] (states zero on padding: a forward LSTM's real states never
        read the padding after them), and MeanMax over the real positions."""
        states, _ = self.encoder(self.dropout(torch.cat([words, features], dim=-1)))
        states = states * mask[..., None].to(states.dtype)
        return states, meanmax(states, mask)

    def encode_texts(self, side: str, vectors: torch.Tensor, unknown: torch.Tensor, lengths: torch.Tensor,
                     ids: torch.Tensor | None, trace: bool = True) -> EncodedTexts:
        """What each text brings on its own, before it meets the other: its projected words, their
        affinity features F(x), and its intra-attention cast (its own words aligned to each word).
        The co-attention casts and the LSTM read both texts, so they are computed per pair."""
        read = self.read(side, vectors, unknown, lengths, ids)
        words = self.dropout(self.projection(read.words))
        mask = length_mask(lengths, vectors.shape[1])
        projected = torch.relu(self.intra_affinity(words))
        intra = self_alignment(projected @ projected.transpose(1, 2), mask) @ words
        return EncodedTexts(read, {"words": words, "affinity": torch.relu(self.affinity(words)), "intra": intra})

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        questions = batch.question_encoding or self.encode_texts(  # encoded here unless done once for many
            "question", batch.question_vectors, batch.question_unknown, batch.question_lengths, batch.question_ids)
        answers = batch.answer_encoding or self.encode_texts(
            "answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths, batch.answer_ids)
        assert isinstance(questions, EncodedTexts) and isinstance(answers, EncodedTexts)
        question, answer = questions.read, answers.read
        q_mask = length_mask(batch.question_lengths, batch.question_vectors.shape[1])
        a_mask = length_mask(batch.answer_lengths, batch.answer_vectors.shape[1])
        cells = q_mask[:, :, None] & a_mask[:, None, :]
        q_words, a_words = questions["words"], answers["words"]
        q_f, a_f = questions["affinity"], answers["affinity"]
        affinity = (q_f @ a_f.transpose(1, 2)) * cells
        q_align, a_align = alignment(affinity, cells)
        q_max, a_max = pooled_coattention(affinity, cells, q_mask, a_mask, "max")
        q_mean, a_mean = pooled_coattention(affinity, cells, q_mask, a_mask, "mean")

        def summary(weights: torch.Tensor, words: torch.Tensor) -> torch.Tensor:
            """The weighted sum of a text's words, the same vector x_bar for every word of it."""
            return (weights[:, None, :] @ words).expand_as(words)

        q_features = self.casts(q_words, [q_align @ a_words, summary(q_max, q_words), summary(q_mean, q_words),
                                          questions["intra"]])
        a_features = self.casts(a_words, [a_align.transpose(1, 2) @ q_words, summary(a_max, a_words),
                                          summary(a_mean, a_words), answers["intra"]])
        if self.params.exact_match:
            if batch.question_ids is None or batch.answer_ids is None:
                raise ValueError("the exact-match flag needs the lookup-key ids of both texts")
            # The exact-match matrix the MV-LSTMs pool, read per word: 1 where its row (column) has a match.
            # Padding ids differ per side and from every real id, so a padded position is never a match.
            matches = exact_match_matrix(batch.question_ids, batch.answer_ids)
            q_features = torch.cat([q_features, matches.amax(2, keepdim=True)], dim=-1)
            a_features = torch.cat([a_features, matches.amax(1)[..., None]], dim=-1)
        q_states, q_vector = self.encode(q_words, q_features, q_mask)
        a_states, a_vector = self.encode(a_words, a_features, a_mask)
        pair = self.dropout(torch.cat([q_vector, a_vector, q_vector * a_vector, q_vector - a_vector], dim=-1))
        first = self.prediction[0](pair)
        second = self.prediction[1](self.dropout(first))
        score = self.head(second).squeeze(-1)
        if not trace:
            return score
        real = (q_mask[..., None], a_mask[..., None])
        return ForwardTrace(
            score=score,
            question=SideSteps(question.words, None, None, q_words, q_states),
            answer=SideSteps(answer.words, None, None, a_words, a_states),
            matrices=Matrices((AFFINITY,), affinity[:, None], shown={ALIGN_QUESTION: q_align, ALIGN_ANSWER: a_align},
                              products={AFFINITY: Product(q_f * real[0], a_f * real[1], cosine=False)}),
            weights={MAX_WEIGHTS: WordWeights(q_max, a_max), MEAN_WEIGHTS: WordWeights(q_mean, a_mean)},
            channels=Channels(self.channel_names(self.params), q_features * real[0], a_features * real[1]),
            vectors={**dict(zip(PAIR_VECTORS, (q_vector, a_vector, first, second), strict=True)),
                     SCORE_TERMS: second * self.head.weight[0], SCORE_BIAS: self.head.bias.expand(len(score), 1)})

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.WORD_WEIGHTS, Part.MATRICES, Part.CHANNELS, Part.STATES, Part.PAIR_VECTORS})

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        return [AFFINITY]

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        """How a configuration differs from the paper's TrecQA setting (section 3.2.2)."""
        out = ["GloVe 6B 50d, frozen, one learned vector for unknown words (paper: GloVe 300d, frozen)",
               f"LSTM of {params.get('hidden_size')}, highway layers of {params.get('projection_size')} and "
               f"{params.get('highway_size')} (paper on TrecQA: LSTM 300, highway 200)",
               "one linear score per pair (the paper's two-class softmax gives the same ranking: its logit "
               "difference is one linear score)",
               f"{training.get('optimizer', 'adam')} lr {training.get('learning_rate')}, weight decay "
               f"{training.get('weight_decay')} (paper: Adam 3e-4, L2 1e-6)",
               "every softmax and pooling reads real words only (padding takes no attention and enters no pool)",
               "each compression function is shared by the question and the answer of its cast"]
        if params.get("exact_match"):
            out.append("MatchLens addition: an exact-match flag glued onto each word beside the 12 cast features (1 "
                       "where the word is also in the other text, as Severyn and Moschitti's CNN gives each word)")
        if params.get("dropout"):
            out.append(f"dropout {params['dropout']} on the projected words, the LSTM input and the prediction "
                       "layers (paper: 0.2 on all layers but the embedding)")
        loss = training.get("loss", "hinge")
        loss = f"pairwise hinge loss, margin {training.get('margin', 1.0)}" if loss == "hinge" else f"{loss} loss"
        out.append(f"{loss} (paper: cross entropy over (question, answer) labels)")
        if training.get("average_epochs"):
            out.append(f"ships the mean of the weights of the last {training['average_epochs']} epochs "
                       "(no early stopping)")
        return out

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        assert isinstance(params, MCANParams)
        compression = {"fm": f"factorisation machine with {params.fm_factors} factors", "nn": "ReLU(W x + b)",
                       "sm": "sum"}[params.compression]
        return " -> ".join([
            "GloVe 6B 50d word vectors (frozen; one learned vector for unknown words)",
            f"highway projection to {params.projection_size}",
            f"affinity s_ij = F(q_i)^T F(a_j), F a ReLU layer of {params.affinity_size}",
            "4 casts (alignment, max-pooled and mean-pooled co-attention, intra-attention) x 3 comparisons "
            f"(product, difference, concatenation), each compressed to 1 scalar by {compression} (12 per word)"
            + (", and an exact-match flag (1 where the word is also in the other text)" if params.exact_match else ""),
            f"shared LSTM of {params.hidden_size} over [word; {len(cls.channel_names(params))} features]",
            f"MeanMax pooling ({2 * params.hidden_size} per text)",
            f"two highway layers of {params.highway_size} over [h_q; h_a; h_q * h_a; h_q - h_a]",
            "linear score"])


__all__ = ["CASTS", "CHANNEL_NAMES", "COMPARISONS", "EXACT_MATCH", "MCAN"]
