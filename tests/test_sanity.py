"""Sanity checks: randomised models differ and are seed-stable; ablations and deletion curves are sound."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import VARIANTS, MatcherFactory, toy_lists

from matching.evaluation.sanity import (
    ablated_attention,
    ablation_map,
    attention_ablation,
    deletion_curves,
    has_attention,
    layer_stages,
    randomisation_check,
    randomised,
)
from matching.text.tokens import tokenize

QUESTION = tokenize("who wrote the novel pride and prejudice")
CANDIDATES = [tokenize(c) for c in ("pride and prejudice is a novel by jane austen", "the novel is set in england",
                                    "austen also wrote emma")]


def state(matcher) -> dict[str, torch.Tensor]:  # type: ignore[no-untyped-def]
    return {k: v.clone() for k, v in matcher.model.state_dict().items()}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_layers_are_found_top_down(make_matcher: MatcherFactory, variant: str) -> None:
    matcher = make_matcher(seed=1, name=variant, **VARIANTS[variant])
    stages = layer_stages(matcher)
    # nearest the score first (the keyword term reads the ids straight into the score), the input last
    top = "keywords" if matcher.params.keywords else "head" if "head" in stages else None
    inputs = {"unknown_word", "tuned_words"} if matcher.params.tune_vectors else {"unknown_word"}
    assert (top is None or stages[0] == top) and set(stages[-len(inputs):]) == inputs  # the word vectors last
    # MV-LSTM reads with an LSTM, MatchPyramid convolves the matrix, C-DSSM and DUET convolve each text
    reader = next(name for name in ("encoder", "conv", "sides", "question_conv") if name in stages)
    if has_attention(matcher):
        assert stages.index(reader) < stages.index("gates")
    if VARIANTS[variant].get("interaction") in ("bilinear", "tensor"):
        assert stages.index("interaction") < stages.index("encoder")
    owners = {name for name, child in matcher.model.named_children() if any(True for _ in child.parameters())}
    assert set(stages) == owners


@pytest.mark.parametrize("variant", ["tensor", "amv-both-tensor", "pyramid-both-none"])
def test_randomised_models_differ_and_are_seed_stable(make_matcher: MatcherFactory, variant: str) -> None:
    matcher = make_matcher(seed=2, name=variant, **VARIANTS[variant])
    trained = state(matcher)
    stages = layer_stages(matcher)
    for depth in range(1, len(stages) + 1):
        first, second = randomised(matcher, stages[:depth], seed=7), randomised(matcher, stages[:depth], seed=7)
        other = randomised(matcher, stages[:depth], seed=8)
        a, b, c = state(first), state(second), state(other)
        for key, value in trained.items():
            layer = key.split(".")[0]
            assert torch.equal(a[key], b[key])  # same seed, same weights
            if layer in stages[:depth]:
                assert not torch.equal(a[key], value), key  # re-initialised
                assert not torch.equal(a[key], c[key]), key  # another seed, other weights
            else:
                assert torch.equal(a[key], value), key  # untouched below the cascade
    assert all(torch.equal(v, state(matcher)[k]) for k, v in trained.items())  # the trained model is unchanged
    scores = matcher.score_tokens([QUESTION] * 3, CANDIDATES)
    random_scores = randomised(matcher, stages, seed=7).score_tokens([QUESTION] * 3, CANDIDATES)
    assert not np.allclose(scores, random_scores)


def test_randomisation_check_rows(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=3, name="q", **VARIANTS["amv-question-directions"])
    check = randomisation_check(matcher, QUESTION, CANDIDATES, candidate=0, seed=1)
    again = randomisation_check(matcher, QUESTION, CANDIDATES, candidate=0, seed=1)
    assert check == again
    assert [s.layer for s in check.stages] == ["trained", *layer_stages(matcher)]
    first = check.stages[0]
    assert first.question_attention_rho == pytest.approx(1.0) and first.pooled_overlap == 1.0
    assert first.answer_attention_rho is None  # not attended
    head = check.stages[1]
    assert head.layer == "head" and head.matrices_rho == pytest.approx(1.0)  # the head does not touch the matrices
    assert check.stages[-1].score != first.score
    assert check.rows()[0]["layer randomised"] == "trained" and check.long_rows() and check.verdict()
    with pytest.raises(ValueError, match="no layer"):
        randomised(matcher, ["nosuchlayer"], 0)


def test_attention_ablation(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(seed=4, name="a", **VARIANTS["amv-answer-none"])
    question, answers = [QUESTION] * 3, CANDIDATES
    trained = matcher.score_tokens(question, answers)
    with ablated_attention(matcher, "uniform"):
        explanation = matcher.explain_tokens(QUESTION, CANDIDATES)
        uniform = matcher.score_tokens(question, answers)
    for e in explanation:  # the trace shows the weights the model really used
        assert e.answer_attention is not None
        assert np.allclose(e.answer_attention, 1 / len(e.answer_attention))
    with ablated_attention(matcher, "permuted", seed=3):
        permuted = [e.answer_attention for e in matcher.explain_tokens(QUESTION, CANDIDATES)]
    original = [e.answer_attention for e in matcher.explain_tokens(QUESTION, CANDIDATES)]
    for p, o in zip(permuted, original, strict=True):
        assert p is not None and o is not None and np.allclose(sorted(p), sorted(o))
    # The shuffle of a text depends on the seed and the text, not on the order texts are scored in.
    with ablated_attention(matcher, "permuted", seed=3):
        forward = matcher.score_tokens(question, answers)
        backward = matcher.score_tokens(question[::-1], answers[::-1])[::-1]
        again = matcher.score_tokens(question, answers)
    np.testing.assert_allclose(forward, backward, atol=1e-6)  # batches padded differently: float rounding
    np.testing.assert_array_equal(forward, again)
    assert np.allclose(matcher.score_tokens(question, answers), trained)  # hooks removed afterwards
    assert not np.allclose(uniform, trained)
    rows = attention_ablation(matcher, QUESTION, CANDIDATES)
    assert len(rows) == 2 * len(CANDIDATES)
    with pytest.raises(ValueError):
        with ablated_attention(matcher, "zero"):
            pass


def test_ablation_map_and_deletion_curves(make_matcher: MatcherFactory) -> None:
    models = {"plain": make_matcher(seed=1, name="plain"),
              "att": make_matcher(seed=2, name="att", **VARIANTS["amv-answer-none"])}
    lists = toy_lists(0, 4)
    rows = ablation_map(lists, models)
    assert [r["model"] for r in rows] == ["att"]
    assert 0 <= float(rows[0]["MAP uniform"]) <= 1  # type: ignore[arg-type]
    seen: list[float] = []
    curves = deletion_curves(lists, models, side="answer", progress=lambda f, _: seen.append(f))
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    orders = {(r["model"], r["order"]) for r in curves.aopc}
    assert ("att", "attention") in orders and ("plain", "attention") not in orders
    assert ("plain", "deletion effect") in orders and ("plain", "random") in orders
    assert len(curves.points) == len(curves.aopc) * len(curves.fractions)
    assert curves.pairs == sum(len(x.candidates) for x in lists)
    again = deletion_curves(lists, models, side="answer")
    assert again.aopc == curves.aopc  # seeded
    question_side = deletion_curves(lists, models, side="question", max_questions=2)
    assert question_side.notes and question_side.pairs > 0


@pytest.mark.parametrize("variant", ["amv-question", "pyramid-question"])
def test_randomisation_on_a_data_set(make_matcher: MatcherFactory, variant: str) -> None:
    from matching.evaluation.dataset import evaluate
    from matching.evaluation.sanity import MEASURES, layer_stages, randomisation_on_data
    from matching.evaluation.sanity.randomisation import layer_label

    matcher = make_matcher(seed=2, name="m", **VARIANTS[variant])
    lists = toy_lists(0, 5)
    rows = randomisation_on_data(lists, {"m": matcher}, seed=3)
    layers = layer_stages(matcher)
    assert [r["step"] for r in rows] == list(range(len(layers) + 1))
    assert [r["layer randomised"] for r in rows][1:] == [layer_label(layer) for layer in layers]
    assert layer_label("unknown_word") == "unknown word" and layer_label("distributed_mlp") == "distributed MLP"
    trained = rows[0]
    assert trained["MAP"] == pytest.approx(evaluate(lists, {"m": matcher}).overall["m"]["MAP"], abs=1e-9)
    assert all(trained[label] == pytest.approx(1.0) for label in MEASURES.values() if trained[label] is not None)
    last = rows[-1]
    assert any(last[label] is not None and last[label] < 0.999 for label in MEASURES.values())
    assert rows == randomisation_on_data(lists, {"m": matcher}, seed=3)  # the same seed, the same check


def test_the_verdict_speaks_of_the_scores_apart_from_the_explanation() -> None:
    """A random network may still order the candidates as the trained one does: the verdict on the
    explanation then says so, with the figure the chart shows, instead of seeming to contradict it."""
    from matching.evaluation.sanity.randomisation import RandomisationCheck, RandomisationStage

    def stage(n: int, scores: float, attention: float) -> RandomisationStage:
        return RandomisationStage(n, "trained" if n == 0 else f"layer {n}", 1.0, scores, attention, attention,
                                  None, None, None)

    trained = stage(0, 1.0, 1.0)
    scores_kept = RandomisationCheck("m", 0, 0, (trained, stage(1, 0.8, 0.1)))
    assert "no part of the explanation correlates above 0.5" in scores_kept.verdict()
    assert "candidate scores themselves (not a part of the explanation) still correlate at +0.80" in \
        scores_kept.verdict()
    assert "much as the trained one does" in scores_kept.verdict()
    reversed_scores = RandomisationCheck("m", 0, 0, (trained, stage(1, -0.8, 0.1))).verdict()
    assert "still correlate at -0.80" in reversed_scores and "much as the trained one" not in reversed_scores
    assert "nearly in the reverse of the trained one's order" in reversed_scores
    scores_gone = RandomisationCheck("m", 0, 0, (trained, stage(1, 0.2, 0.1)))
    assert "candidate scores" not in scores_gone.verdict()
    attention_kept = RandomisationCheck("m", 0, 0, (trained, stage(1, 0.2, 0.7)))
    assert "question attention still have a rank correlation of +0.70" in attention_kept.verdict()
    # The pooled cells kept are a share, said as one (it read 'the pooled cells kept still have a rank correlation').
    pooled_kept = RandomisationCheck("m", 0, 0, (trained, RandomisationStage(1, "layer 1", 1.0, 0.2, 0.1, 0.1, None,
                                                                             None, 0.68)))
    assert "68% of the trained model's pooled cells are still pooled" in pooled_kept.verdict()
    assert "rank correlation" not in pooled_kept.verdict()
