"""Typed hyperparameter sets, one per model family.

A checkpoint's `config.json` is exactly `asdict(params)` plus the vocabulary it was
trained with, so a model can always be rebuilt from its file alone.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

Interaction = Literal["cosine", "bilinear", "tensor"]
AttentionSide = Literal["question", "answer", "both"]
AttentionScaling = Literal["none", "length"]

INTERACTIONS = ("cosine", "bilinear", "tensor")
ATTENTION_SIDES = ("question", "answer", "both")
ATTENTION_SCALINGS = ("none", "length")


class ParamsError(ValueError):
    """A hyperparameter set that cannot describe a model."""


@dataclass(frozen=True)
class MVLSTMParams:
    """MV-LSTM (Wan et al. 2016): Bi-LSTM, positional interactions, k-max pooling, MLP."""

    family: str = "mvlstm"
    embedding_dim: int = 50
    hidden_size: int = 50
    """Per LSTM direction; positional vectors have 2 * hidden_size values."""
    interaction: Interaction = "cosine"
    tensor_slices: int = 3
    """c, the number of matrices of the tensor interaction (ignored otherwise)."""
    k: int = 10
    """Values kept per interaction matrix by k-max pooling."""
    mlp_hidden: int = 32
    dropout: float = 0.0
    """Applied to the positional vectors during training only."""
    max_question_len: int = 40
    max_answer_len: int = 60
    filler_value: float = 0.0
    """Pooled value used when a matrix has fewer than k real cells (marked as filler)."""
    pool_directions: bool = False
    """Also k-max pool the forward-only and backward-only cosine matrices, as the
    aMV-LSTM paper does ("over both the forward and backward interaction matrices")."""

    @property
    def matrix_count(self) -> int:
        return (self.tensor_slices if self.interaction == "tensor" else 1) + (2 if self.pool_directions else 0)

    @property
    def pooled_size(self) -> int:
        return self.k * self.matrix_count

    def validate(self) -> None:
        if self.interaction not in INTERACTIONS:
            raise ParamsError(f"interaction must be one of {INTERACTIONS}, not {self.interaction!r}")
        for name in ("embedding_dim", "hidden_size", "tensor_slices", "k", "mlp_hidden",
                     "max_question_len", "max_answer_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParamsError(f"{name} must be a positive integer, not {value!r}")
        for name in ("dropout", "filler_value"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
                raise ParamsError(f"{name} must be a finite number, not {value!r}")
        if not isinstance(self.pool_directions, bool):
            raise ParamsError(f"pool_directions must be true or false, not {self.pool_directions!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise ParamsError(f"dropout must be in [0, 1), not {self.dropout!r}")


@dataclass(frozen=True)
class AMVLSTMParams(MVLSTMParams):
    """aMV-LSTM (Belkacem et al. 2019): MV-LSTM with a word attention gate."""

    family: str = "amvlstm"
    attention: AttentionSide = "question"
    attention_scaling: AttentionScaling = "length"
    """`none`: w' = alpha * w as in the paper; `length`: w' = alpha * m * w (mean weight 1)."""

    def validate(self) -> None:
        super().validate()
        if self.attention not in ATTENTION_SIDES:
            raise ParamsError(f"attention must be one of {ATTENTION_SIDES}, not {self.attention!r}")
        if self.attention_scaling not in ATTENTION_SCALINGS:
            raise ParamsError(f"attention_scaling must be one of {ATTENTION_SCALINGS}, "
                              f"not {self.attention_scaling!r}")


PARAMS_BY_FAMILY: dict[str, type[MVLSTMParams]] = {"mvlstm": MVLSTMParams, "amvlstm": AMVLSTMParams}


def params_from_dict(raw: dict[str, Any]) -> MVLSTMParams:
    """Rebuild a parameter set, refusing unknown families and unknown or mistyped keys."""
    if not isinstance(raw, dict):
        raise ParamsError("model parameters must be a JSON object")
    family = raw.get("family")
    if family not in PARAMS_BY_FAMILY:
        raise ParamsError(f"unknown model family {family!r}; known: {sorted(PARAMS_BY_FAMILY)}")
    cls = PARAMS_BY_FAMILY[family]
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ParamsError(f"unknown parameters for {family}: {unknown}")
    try:
        params = cls(**raw)
    except TypeError as error:
        raise ParamsError(str(error)) from error
    params.validate()
    return params


def params_to_dict(params: MVLSTMParams) -> dict[str, Any]:
    return asdict(params)
