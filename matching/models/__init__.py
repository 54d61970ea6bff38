"""One file per model family; each registers itself with the contract in `base`.

Adding a family: a model file with a `MatchingModel` subclass and its params class,
decorated with `@register`, and one import line here.
"""

from __future__ import annotations

from matching.models.arcii import ARCII
from matching.models.base import (
    FAMILIES,
    ForwardTrace,
    MatchingModel,
    PairBatch,
    SideSteps,
    TextEncoding,
    build_model,
    family_of,
    params_from_dict,
    register,
)
from matching.models.cdssm import CDSSM
from matching.models.duet import DUET
from matching.models.matchpyramid import MatchPyramid
from matching.models.mcan import MCAN
from matching.models.mvlstm import AMVLSTM, MVLSTM

__all__ = ["AMVLSTM", "ARCII", "CDSSM", "DUET", "FAMILIES", "MCAN", "MVLSTM", "ForwardTrace", "MatchPyramid",
           "MatchingModel", "PairBatch", "SideSteps", "TextEncoding", "build_model", "family_of", "params_from_dict",
           "register"]
