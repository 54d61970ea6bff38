"""build_model and one forward pass: the traced pass is the scoring pass."""

from __future__ import annotations

import pytest
import torch
from conftest import VARIANTS, MatcherFactory, tiny_params

from matching.explain.matcher import Matcher
from matching.models import AMVLSTM, MVLSTM, ForwardTrace, MatchPyramid, build_model
from matching.models.base import trace_parts_of
from matching.models.batching import make_batch
from matching.models.params import ParamsError
from matching.models.parts import Part
from matching.text.tokens import tokenize


@pytest.mark.parametrize("attention, sides", [("question", {"question"}), ("answer", {"answer"}),
                                              ("both", {"question", "answer"})])
def test_build_model_families(attention: str, sides: set[str]) -> None:
    assert type(build_model(tiny_params())) is MVLSTM
    model = build_model(tiny_params("amvlstm", attention=attention))
    assert isinstance(model, AMVLSTM) and set(model.gates) == sides
    pyramid = build_model(tiny_params("matchpyramid", attention=attention))
    assert isinstance(pyramid, MatchPyramid) and set(pyramid.gates) == sides
    assert set(build_model(tiny_params("matchpyramid")).gates) == set()


def test_invalid_params_are_refused_at_build() -> None:
    with pytest.raises(ParamsError):
        build_model(tiny_params(k=0))


def test_trace_matches_the_plain_pass(variant_matcher: Matcher) -> None:
    matcher = variant_matcher
    params = matcher.params
    questions = [matcher.vectors.encode(tokenize("who wrote hamlet"))] * 3
    answers = [matcher.vectors.encode(tokenize(text)) for text in
               ("shakespeare", "hamlet was written by william shakespeare", "a zzqxv play")]
    batch = make_batch(questions, answers, params.max_question_len, params.max_answer_len)
    with torch.no_grad():
        scores = matcher.model(batch)
        trace = matcher.model(batch, trace=True)
    assert isinstance(trace, ForwardTrace)
    torch.testing.assert_close(trace.score, scores, atol=0, rtol=0)
    assert trace.parts == trace_parts_of(params)  # declared before any run, as the trace has them
    if trace.matrices is None:  # the texts never meet in a matrix (each read alone)
        assert Part.MATRICES not in trace.parts and trace.pooled is None
        return
    assert Part.MATRICES in trace.parts
    if trace.pooled is None:  # no exact split: nothing claims one
        assert trace.matrices.cell_contributions is None and trace.matrices.cell_bias is None
        return
    count = len(trace.matrices.names)
    assert trace.matrices.cell_contributions is not None
    assert trace.matrices.read.shape == trace.matrices.cell_contributions.shape == (3, count, 3, 6)
    assert all(shown.shape == (3, 3, 6) for shown in trace.matrices.shown.values())
    groups, slots = trace.pooled.pooled.values.shape[1:]
    assert groups == len(trace.pooled.groups) == len(trace.pooled.group_matrix)
    assert trace.pooled.contributions.shape == (3, groups * slots) and groups * slots == params.pooled_size
    assert (Part.WORD_WEIGHTS in trace.parts) == bool(params.attended_sides)
    assert trace_parts_of(params) == trace.parts  # what a page offers is what a trace carries
    assert (trace.question_attention is not None) == ("question" in params.attended_sides)
    assert (trace.answer_attention is not None) == ("answer" in params.attended_sides)


def test_dropout_is_off_in_eval_and_on_in_train(make_matcher: MatcherFactory) -> None:
    matcher = make_matcher(dropout=0.5, **VARIANTS["cosine"])
    params = matcher.params
    batch = make_batch([matcher.vectors.encode(tokenize("who wrote hamlet"))],
                       [matcher.vectors.encode(tokenize("shakespeare wrote hamlet"))],
                       params.max_question_len, params.max_answer_len)
    with torch.no_grad():
        assert torch.equal(matcher.model(batch), matcher.model(batch))
        matcher.model.train()
        torch.manual_seed(0)
        first = matcher.model(batch)
        second = matcher.model(batch)
        matcher.model.eval()
    assert not torch.equal(first, second)
