"""MV-LSTM (Wan et al., AAAI 2016), and aMV-LSTM (Belkacem et al., SAC 2019) through the same file.

Words -> shared Bi-LSTM -> positional interaction matrices between every question
position i and answer position j -> k-max pooling of each matrix -> MLP -> score.
aMV-LSTM puts the word attention gate alpha_t = softmax(V^T w_t) in front of the
Bi-LSTM on the question (Q), the answer (A) or both; the rest is MV-LSTM.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from matching.models.base import (
    EncodedTexts,
    ForwardTrace,
    MatchingModel,
    PairBatch,
    SideSteps,
    gate_text,
    register,
)
from matching.models.blocks import (
    BiLSTMEncoder,
    IdfTable,
    MLPHead,
    exact_match_matrix,
    kmax_pool,
    kmax_values,
    length_mask,
    make_interaction,
    unit_rows,
)
from matching.models.params import AMVLSTMParams, ModelParams, MVLSTMParams
from matching.models.parts import (
    EXACT_MATCH,
    GATE_STEP,
    LIST_EXACT_MATCH,
    RANK_STEP,
    VECTORS_STEP,
    WORDS_STEP,
    Descriptor,
    Matrices,
    Part,
    PooledCells,
    Product,
    Step,
    View,
)
from matching.text.corpus import Corpus

DIRECTIONS = ("forward", "backward")

BILSTM_STEP = Step("bilstm", View.STATES, "The Bi-LSTM: positional vectors", "Two LSTMs read the words, one left to "
                   "right and one right to left. Each position gets both states side by side: a vector of the word "
                   "in its context.")
CELL_STEP = Step("cell", View.CELL, "One interaction cell, then the matrix", "Every question position meets every "
                 "answer position. Here is one cell worked out with your numbers, then all of them.")
KMAX_STEP = Step("pooling", View.POOLING, "Pooling: what the network keeps", "Only a few cells go on: k-max pooling "
                 "keeps the k largest of each matrix, in order.")
MLP_STEP = Step("mlp", View.MLP, "The MLP: from pooled values to the score", "The pooled values go through one hidden "
                "layer of ReLU units to the score. Each cell's contribution (gradient x value) plus the bias adds up "
                "to the score.")
MVLSTM_TERM = ("MV-LSTM", "Wan et al. 2016: Bi-LSTM positions, their interaction matrix, k-max pooling and an MLP "
               "give the score.", "MVLSTM")


@register
class MVLSTM(MatchingModel):
    family = "mvlstm"
    params_type = MVLSTMParams
    wikiqa_split = "WikiQA's standard split (the aMV-LSTM paper used MatchZoo's own split)"
    paper_data = ("", "WikiQA in MatchZoo's own split, in the aMV-LSTM paper")
    params: MVLSTMParams
    descriptor = Descriptor(
        title="MV-LSTM", short_name="MV", paper="Wan et al., AAAI 2016",
        steps=(WORDS_STEP, VECTORS_STEP, BILSTM_STEP, CELL_STEP, KMAX_STEP, MLP_STEP, RANK_STEP),
        terms=(MVLSTM_TERM,))

    def __init__(self, params: MVLSTMParams) -> None:
        super().__init__(params)
        size = 2 * params.hidden_size
        self.encoder = BiLSTMEncoder(params.embedding_dim, params.hidden_size)
        self.interaction = make_interaction(params.interaction, size, params.tensor_slices)
        self.head = MLPHead(params.pooled_size, params.mlp_hidden)
        self.idf = IdfTable(params.idf_words) if params.exact_match == "idf" else None

    def encode_texts(self, side: str, vectors: torch.Tensor, unknown: torch.Tensor, lengths: torch.Tensor,
                     ids: torch.Tensor | None, trace: bool = True) -> EncodedTexts:
        """The side's steps (gate included), its forward and backward states (zero on padding), and
        what the side brings to the interaction. To score, where the states are read by nothing
        else, they go into the interaction's side run by run and are not kept."""
        read = self.read(side, vectors, unknown, lengths, ids)

        def meeting(states: torch.Tensor) -> torch.Tensor:
            return self.interaction.side(self.dropout(states), side)

        if trace or self.params.pool_directions:
            # The direction halves are made unit length here, once per text, not once per pair that reads it.
            states = self.encoder(read.gated_words, lengths)
            return EncodedTexts(read, {"states": states if trace else None, "meeting": meeting(states),
                                       **self.direction_units(states)})
        return EncodedTexts(read, {"states": None, "meeting": self.encoder(read.gated_words, lengths, then=meeting)})

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        questions = batch.question_encoding or self.encode_texts(  # encoded here unless done once for many
            "question", batch.question_vectors, batch.question_unknown, batch.question_lengths,
            batch.question_ids)
        answers = batch.answer_encoding or self.encode_texts(
            "answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths, batch.answer_ids)
        assert isinstance(questions, EncodedTexts) and isinstance(answers, EncodedTexts)
        matrices = self.interaction.meet(questions["meeting"], answers["meeting"])
        # The direction matrices are only read when pooled; otherwise they are drawn, so only traced.
        directions = ({d: questions[d] @ answers[d].transpose(1, 2) for d in DIRECTIONS}
                      if trace or self.params.pool_directions else {})
        if self.params.pool_directions:
            matrices = torch.cat([matrices, *(directions[d][:, None] for d in DIRECTIONS)], dim=1)
        if self.params.exact_match != "none":
            matrices = torch.cat([matrices, self.exact_match(batch, questions.read, answers.read)[:, None]], dim=1)
        if self.params.exact_match_list:
            matrices = torch.cat([matrices, self.list_exact_match(batch)[:, None]], dim=1)
        k, filler = self.params.k, self.params.filler_value
        if not trace and not torch.is_grad_enabled():
            # Scoring: the values alone (where they lie is only needed to explain). Training keeps the
            # reading-order choice among equal cells, which decides where the gradient goes.
            return self.head(kmax_values(matrices, batch.cell_mask(), k, filler).flatten(1))
        pooled = kmax_pool(matrices, batch.cell_mask(), k, filler)
        score = self.head(pooled.flat())
        if not trace:
            return score
        contributions, bias = self.head.contributions(pooled.flat())
        # Each pooled value is one matrix cell read straight into the MLP, so a cell's
        # contribution is the sum of its slots'; filler slots are constants and join the bias.
        real = ~pooled.filler.flatten(1)
        count, (rows, cols) = matrices.shape[1], matrices.shape[2:]
        cell_index = ((torch.arange(count, device=matrices.device)[None, :, None] * rows + pooled.rows) * cols
                      + pooled.cols).flatten(1)
        cells = torch.zeros(matrices.shape[0], count * rows * cols, dtype=matrices.dtype, device=matrices.device)
        cells.scatter_add_(1, torch.where(real, cell_index, 0), torch.where(real, contributions, 0.0))
        names = tuple(self.matrix_names(self.params))
        return ForwardTrace(
            score=score,
            question=replace(questions.read, states=questions["states"]),
            answer=replace(answers.read, states=answers["states"]),
            matrices=Matrices(names, matrices, shown={} if self.params.pool_directions else directions,
                              cell_contributions=cells.view_as(matrices),
                              cell_bias=bias + torch.where(real, 0.0, contributions).sum(-1),
                              products=self.products(questions["states"], answers["states"])),
            pooled=PooledCells(pooled, groups=names, group_matrix=tuple(range(count)), windows=None,
                               contributions=contributions, bias=bias, hidden=self.head.hidden(pooled.flat())))

    def products(self, questions: torch.Tensor, answers: torch.Tensor) -> dict[str, Product]:
        """The matrices that are cosines of traced states: the combined one and each direction's."""
        hidden = self.params.hidden_size
        found = {"forward": Product(questions[..., :hidden], answers[..., :hidden], cosine=True),
                 "backward": Product(questions[..., hidden:], answers[..., hidden:], cosine=True)}
        if self.params.interaction == "cosine":
            found["cosine"] = Product(questions, answers, cosine=True)
        return found

    def direction_units(self, states: torch.Tensor) -> dict[str, torch.Tensor]:
        """The forward-only and the backward-only halves of each state, made unit length: (N, L, h) each.
        Their products are the direction matrices (the cosine of each direction's states)."""
        hidden = self.params.hidden_size
        return {"forward": unit_rows(states[..., :hidden]), "backward": unit_rows(states[..., hidden:])}

    def exact_match(self, batch: PairBatch, question: SideSteps, answer: SideSteps) -> torch.Tensor:
        """(B, m, n): 1 where the two words share a lookup key (or a stem, `exact_match_stems`), times the
        question word's IDF (`idf`) or both words' weights as the Bi-LSTM read them (`attention`)."""
        stems = self.params.exact_match_stems
        question_ids, answer_ids = ((batch.question_stems, batch.answer_stems) if stems
                                    else (batch.question_ids, batch.answer_ids))
        if question_ids is None or answer_ids is None:
            raise ValueError(f"the exact-match channel needs the {'stem' if stems else 'lookup-key'} ids of both texts")
        if self.idf is not None:
            return exact_match_matrix(question_ids, answer_ids, self.idf(question_ids))
        if self.params.exact_match == "binary":
            return exact_match_matrix(question_ids, answer_ids)
        weights = [None if steps.attention is None else
                   self.gates[side].weights(steps.attention, length_mask(lengths, steps.attention.shape[1]))
                   for side, steps, lengths in (("question", question, batch.question_lengths),
                                                ("answer", answer, batch.answer_lengths))]
        return exact_match_matrix(question_ids, answer_ids, *weights)

    @staticmethod
    def list_exact_match(batch: PairBatch) -> torch.Tensor:
        """(B, m, n): the question word's IDF within its list where the two words share a lookup key, else 0."""
        if batch.question_ids is None or batch.answer_ids is None or batch.list_idf is None:
            raise ValueError("the exact-match matrix over the list needs the lookup-key ids of both texts and each "
                             "question word's IDF within its list (the batch's list_idf)")
        return exact_match_matrix(batch.question_ids, batch.answer_ids, batch.list_idf.to(batch.question_vectors))

    @classmethod
    def with_corpus(cls, params: ModelParams, corpus: Corpus) -> ModelParams:
        assert isinstance(params, MVLSTMParams)
        if params.exact_match != "idf":
            return params
        return replace(params, idf_words=len(corpus.idf_of(params.exact_match_stems)[0]))

    def fit_corpus(self, corpus: Corpus) -> None:
        if self.idf is not None:
            self.idf.fill(*corpus.idf_of(self.params.exact_match_stems), 1.0)

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.MATRICES, Part.POOLED_CELLS, Part.STATES})

    @classmethod
    def deviations(cls, params: dict[str, Any], training: dict[str, Any]) -> list[str]:
        """How a configuration differs from its paper (MV-LSTM: Wan et al. 2016; aMV-LSTM:
        Belkacem et al. 2019), as MODELS.md records the papers' settings."""
        amv = params.get("family") == "amvlstm"
        out = ["GloVe 6B 50d, frozen, one learned vector for unknown words"
               + (" (paper: GloVe 840B 300d, normalised)" if amv else ""),
               f"k = {params.get('k')} (paper: {'100' if amv else '5 for QA'})",
               f"{training.get('optimizer', 'adam')} lr {training.get('learning_rate')}, batch "
               f"{training.get('batch_size')} (paper: Adagrad, batch 128)",
               f"at most {training.get('max_epochs')} epochs (paper: 400 epochs in MatchZoo)"]
        if params.get("pool_directions") and not amv:
            out.append("also pools the forward-only and backward-only cosine matrices (an aMV-LSTM paper choice)")
        if not params.get("pool_directions") and amv:
            out.append("does not pool the forward-only and backward-only cosine matrices (the paper does)")
        if amv:
            out.append("the attention softmax runs over real tokens only (the authors' code let padding take a share)")
            if params.get("attention_scaling") == "length":
                out.append("words weighted by alpha_t x sentence length, mean weight 1 (paper: alpha_t)")
            if params.get("attention_gate", "softmax") != "softmax":
                out.append(f"MatchLens addition: {params['attention_gate']} gate (paper: softmax)")
            if params.get("attention_temperature", 1.0) != 1.0:
                out.append(f"MatchLens addition: gate temperature {params['attention_temperature']} (paper: 1)")
            if params.get("attention_init", "default") != "default":
                out.append(f"MatchLens addition: V initialised to {params['attention_init']}")
            if training.get("entropy_penalty"):
                out.append(f"MatchLens addition: entropy penalty {training['entropy_penalty']} on alpha")
            if training.get("attention_weight_decay") is False and training.get("weight_decay"):
                out.append("no weight decay on the attention vectors V")
        if params.get("exact_match", "none") != "none":
            out.append(f"MatchLens addition: {params['exact_match']} exact-match matrix pooled beside the others"
                       + (", matching the words' Snowball stems" if params.get("exact_match_stems") else ""))
        if params.get("exact_match_list"):
            out.append("MatchLens addition: an exact-match matrix weighted by the IDF within the list, pooled beside "
                       "the others")
        if training.get("loss", "hinge") != "hinge":
            out.append(f"{training['loss']} loss (paper: pairwise hinge)")
        if training.get("average_epochs"):
            out.append(f"ships the mean of the weights of the last {training['average_epochs']} epochs "
                       "(no early stopping)")
        if training.get("fit_on_dev"):
            out.append("trained on train + dev (dev chose the schedule in earlier runs; the seed is fixed in advance)")
        if training.get("weight_decay"):
            out.append(f"weight decay {training['weight_decay']}")
        if params.get("dropout"):
            out.append(f"dropout {params['dropout']} on the positional vectors")
        return out

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        assert isinstance(params, MVLSTMParams)
        names = ([f"slice {c + 1}" for c in range(params.tensor_slices)] if params.interaction == "tensor"
                 else [params.interaction])
        return (names + (list(DIRECTIONS) if params.pool_directions else [])
                + ([EXACT_MATCH] if params.exact_match != "none" else [])
                + ([LIST_EXACT_MATCH] if params.exact_match_list else []))

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        assert isinstance(params, MVLSTMParams)
        parts = ["GloVe 6B 50d word vectors (frozen; one learned vector for unknown words)"]
        parts += [gate_text(params)] if params.attended_sides else []
        interaction = {"cosine": "cosine similarity (1 matrix)", "bilinear": "bilinear p_i^T M p_j + b (1 matrix)",
                       "tensor": f"tensor layer with {params.tensor_slices} slices, ReLU "
                                 f"({params.tensor_slices} matrices)"}
        directions = (", plus the cosine of the forward-only and of the backward-only states (2 more matrices)"
                      if params.pool_directions else "")
        exact = {"none": "", "binary": ", plus an exact-match matrix (1 where the lookup keys are equal)",
                 "idf": ", plus an exact-match matrix weighted by the question word's IDF (training answers, "
                        f"{params.idf_words} words stored with the checkpoint)",
                 "attention": ", plus an exact-match matrix weighted by the words' attention weights "
                              "(as the Bi-LSTM read them)"}[params.exact_match]
        if params.exact_match_stems and exact:
            exact += " (on the words' Snowball stems: 'founded' matches 'founding')"
        if params.exact_match_list:
            exact += (", plus an exact-match matrix weighted by the question word's IDF within its list (the "
                      "question's own candidates)")
        parts += [f"shared Bi-LSTM, {params.hidden_size} hidden units per direction",
                  f"positional interaction: {interaction[params.interaction]}{directions}{exact}",
                  f"k-max pooling, k = {params.k} per matrix ({params.pooled_size} values)",
                  f"MLP: ReLU layer of {params.mlp_hidden} units, then a linear score"]
        return " -> ".join(parts)


@register
class AMVLSTM(MVLSTM):
    family = "amvlstm"
    params_type = AMVLSTMParams
    params: AMVLSTMParams
    descriptor = Descriptor(
        title="aMV-LSTM", short_name="aMV", paper="Belkacem et al., SAC 2019",
        steps=(WORDS_STEP, VECTORS_STEP, GATE_STEP, BILSTM_STEP, CELL_STEP, KMAX_STEP, MLP_STEP, RANK_STEP),
        terms=(MVLSTM_TERM, ("aMV-LSTM", "Belkacem et al. 2019: MV-LSTM with an attention gate that reweights the "
                                        "words of the question, the answer or both before the Bi-LSTM.")))


__all__ = ["AMVLSTM", "MVLSTM"]
