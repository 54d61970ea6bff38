"""The model-family contract: a third family needs only its own file and one registry entry.

A toy family is written here, in the test, exactly as a new model file would be: its typed
parameters, its model with a trace, `@register`. Everything else (params from JSON, checkpoints,
the Explanation and its invariants, ranking) then works without touching MatchLens's code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from conftest import assert_explanation_invariants

from matching.explain.explanation import matrix_names
from matching.explain.matcher import Matcher
from matching.explain.ranking import rank
from matching.models import FAMILIES, ForwardTrace, MatchingModel, PairBatch, build_model, params_from_dict, register
from matching.models.blocks import MLPHead, Pooled, cosine_matrix, kmax_pool
from matching.models.params import ModelParams, ParamsError, params_to_dict
from matching.models.parts import RANK_STEP, VECTORS_STEP, WORDS_STEP, Descriptor, Matrices, Part, PooledCells
from matching.text.embeddings import WordVectors
from matching.training.checkpoint import load_checkpoint, save_checkpoint


@dataclass(frozen=True)
class WordKMaxParams(ModelParams):
    """Toy family: k-max pooling straight over the word cosine matrix, then an MLP."""

    family: str = "word-kmax"
    k: int = 4
    mlp_hidden: int = 6
    filler_value: float = 0.0

    @property
    def pooled_size(self) -> int:
        return self.k


class WordKMax(MatchingModel):
    family = "word-kmax"
    params_type = WordKMaxParams
    params: WordKMaxParams
    descriptor = Descriptor(title="Word k-max", short_name="WK", paper="a test family",
                            steps=(WORDS_STEP, VECTORS_STEP, RANK_STEP))

    def __init__(self, params: WordKMaxParams) -> None:
        super().__init__(params)
        self.head = MLPHead(params.k, params.mlp_hidden)

    def match(self, batch: PairBatch, trace: bool = False) -> torch.Tensor | ForwardTrace:
        question = self.read("question", batch.question_vectors, batch.question_unknown, batch.question_lengths,
                             batch.question_ids)
        answer = self.read("answer", batch.answer_vectors, batch.answer_unknown, batch.answer_lengths, batch.answer_ids)
        matrices = cosine_matrix(question.words, answer.words)[:, None]
        pooled: Pooled = kmax_pool(matrices, batch.cell_mask(), self.params.k, self.params.filler_value)
        score = self.head(pooled.flat())
        if not trace:
            return score
        contributions, bias = self.head.contributions(pooled.flat())
        real = ~pooled.filler.flatten(1)
        cells = torch.zeros_like(matrices).flatten(1)
        index = pooled.rows.flatten(1) * matrices.shape[3] + pooled.cols.flatten(1)
        cells.scatter_add_(1, torch.where(real, index, 0), torch.where(real, contributions, 0.0))
        names = tuple(self.matrix_names(self.params))
        return ForwardTrace(
            score=score, question=question, answer=answer,
            matrices=Matrices(names, matrices, cell_contributions=cells.view_as(matrices),
                              cell_bias=bias + torch.where(real, 0.0, contributions).sum(-1)),
            pooled=PooledCells(pooled, groups=names, group_matrix=(0,), windows=None, contributions=contributions,
                               bias=bias, hidden=self.head.hidden(pooled.flat())))

    @classmethod
    def matrix_names(cls, params: ModelParams) -> list[str]:
        return ["word cosine"]

    @classmethod
    def architecture_text(cls, params: ModelParams) -> str:
        return "word cosine matrix -> k-max pooling -> MLP"

    @classmethod
    def parts(cls, params: ModelParams) -> frozenset[Part]:
        return frozenset({Part.MATRICES, Part.POOLED_CELLS})


@pytest.fixture()
def toy_family() -> Iterator[type[MatchingModel]]:
    register(WordKMax)
    yield WordKMax
    FAMILIES.pop("word-kmax")


def test_a_registered_family_works_everywhere(toy_family: type[MatchingModel], vectors: WordVectors,
                                              tmp_path: Path) -> None:
    params = params_from_dict({"family": "word-kmax", "k": 3, "max_question_len": 8})
    assert isinstance(params, WordKMaxParams) and params_to_dict(params)["k"] == 3
    torch.manual_seed(0)
    matcher = Matcher("toy", build_model(params), vectors)
    assert matrix_names(params) == ["word cosine"]
    explanations = matcher.explain("who wrote hamlet", ["shakespeare wrote hamlet", "a"])
    for explanation in explanations:
        assert_explanation_invariants(explanation, matcher)
    save_checkpoint(matcher, tmp_path / "toy", {"name": "toy"})
    loaded = load_checkpoint(tmp_path / "toy", vectors)
    assert type(loaded.model) is WordKMax
    assert [e.score for e in loaded.explain("who wrote hamlet", ["shakespeare wrote hamlet", "a"])] == [
        e.score for e in explanations]
    ranking = rank("who wrote hamlet", ["shakespeare wrote hamlet", "a"], {"toy": loaded})
    assert sorted(ranking.models["toy"].ranks.tolist()) == [1, 2]


def test_unknown_families_fail_loudly() -> None:
    with pytest.raises(ParamsError, match="unknown model family 'word-kmax'"):
        params_from_dict({"family": "word-kmax"})
    with pytest.raises(ParamsError, match="unknown model family"):
        build_model(WordKMaxParams())


def test_a_family_name_cannot_be_taken_twice(toy_family: type[MatchingModel]) -> None:
    class Impostor(WordKMax):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register(Impostor)

