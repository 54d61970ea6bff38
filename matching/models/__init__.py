"""One file per model family; `build_model` turns a parameter set into a model."""

from __future__ import annotations

from ..params import AMVLSTMParams, MVLSTMParams
from .amvlstm import AMVLSTM
from .mvlstm import MVLSTM, ForwardTrace, PairBatch


def build_model(params: MVLSTMParams) -> MVLSTM:
    if isinstance(params, AMVLSTMParams):
        return AMVLSTM(params)
    return MVLSTM(params)


__all__ = ["AMVLSTM", "MVLSTM", "ForwardTrace", "PairBatch", "build_model"]
