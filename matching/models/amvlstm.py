"""aMV-LSTM (Belkacem et al., SAC 2019): MV-LSTM behind a word attention gate.

Before the shared Bi-LSTM, each attended sentence's word vectors are reweighted by
alpha_t = softmax(V^T w_t), with one learned V per side. Variants: attention on the
question (Q), on the answer (A) or on both (Q+A). The rest is MV-LSTM.
"""

from __future__ import annotations

import torch
from torch import nn

from ..blocks import AttentionGate
from ..params import AMVLSTMParams
from .mvlstm import MVLSTM


class AMVLSTM(MVLSTM):
    params: AMVLSTMParams

    def __init__(self, params: AMVLSTMParams) -> None:
        super().__init__(params)
        sides = ("question", "answer") if params.attention == "both" else (params.attention,)
        self.gates = nn.ModuleDict(
            {side: AttentionGate(params.embedding_dim, params.attention_scaling) for side in sides})

    def attend(self, side: str, vectors: torch.Tensor, mask: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if side not in self.gates:
            return vectors, None
        return self.gates[side](vectors, mask)
