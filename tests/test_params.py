"""Parameter sets: validation and a lossless dict round trip (the checkpoint config)."""

from __future__ import annotations

from typing import Any

import pytest

from matching.models import params_from_dict
from matching.models.params import (
    AMVLSTMParams,
    MatchPyramidParams,
    ModelParams,
    MVLSTMParams,
    ParamsError,
    params_to_dict,
)


@pytest.mark.parametrize("params", [
    MVLSTMParams(), MVLSTMParams(interaction="tensor", tensor_slices=2, k=3),
    AMVLSTMParams(attention="both", attention_scaling="none"),
    MatchPyramidParams(), MatchPyramidParams(attention="answer", kernel_count=4, pool_rows=2),
])
def test_dict_round_trip(params: ModelParams) -> None:
    assert params_from_dict(params_to_dict(params)) == params


def test_sizes() -> None:
    assert MVLSTMParams(k=4).pooled_size == 4
    assert MVLSTMParams(k=4, interaction="tensor", tensor_slices=3).pooled_size == 12
    assert MVLSTMParams(k=4, interaction="bilinear", tensor_slices=3).matrix_count == 1


@pytest.mark.parametrize("raw, message", [
    ({"family": "bert"}, "unknown model family"),
    ({"hidden_size": 8}, "unknown model family"),
    ({"family": "mvlstm", "colour": "red"}, "unknown parameters"),
    ({"family": "mvlstm", "attention": "question"}, "unknown parameters"),
    ({"family": "mvlstm", "interaction": "dot"}, "interaction must be"),
    ({"family": "mvlstm", "k": 0}, "k must be"),
    ({"family": "mvlstm", "hidden_size": 2.5}, "hidden_size must be"),
    ({"family": "mvlstm", "hidden_size": True}, "hidden_size must be"),
    ({"family": "mvlstm", "dropout": 1.0}, "dropout"),
    ({"family": "mvlstm", "dropout": "high"}, "dropout"),
    ({"family": "mvlstm", "filler_value": "none"}, "filler_value"),
    ({"family": "mvlstm", "filler_value": float("-inf")}, "filler_value"),
    ({"family": "amvlstm", "attention": "left"}, "attention must be"),
    ({"family": "amvlstm", "attention_scaling": "sqrt"}, "attention_scaling"),
    ({"family": "amvlstm", "attention": "none"}, "attention must be"),
    ({"family": "matchpyramid", "matching": "tensor"}, "matching must be"),
    ({"family": "matchpyramid", "kernel_rows": 2}, "must be odd"),
    ({"family": "matchpyramid", "pool_cols": 0}, "pool_cols must be"),
    ({"family": "matchpyramid", "k": 10}, "unknown parameters"),
])
def test_bad_parameters_are_refused(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamsError, match=message):
        params_from_dict(raw)


def test_non_object_is_refused() -> None:
    with pytest.raises(ParamsError, match="JSON object"):
        params_from_dict([1, 2])  # type: ignore[arg-type]
