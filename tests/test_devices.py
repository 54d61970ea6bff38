"""--device: models, batches and explanations on each device this machine has.

The CPU always; CUDA too where torch sees a GPU (the CI machine has none, so there these run the CPU half;
on a GPU machine the same file checks the GPU: `python -m pytest tests/test_devices.py`). A device only
moves the work: the scores are the CPU's to float32 rounding, the explanations keep every invariant, and a
model trained there is the CPU-trained model to rounding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import FACTS, VARIANTS, assert_explanation_invariants, tiny_config

from matching.explain.matcher import Matcher, choose_device
from matching.text.embeddings import WordVectors
from matching.text.tokens import tokenize
from matching.training.cards import ModelCard
from matching.training.checkpoint import load_checkpoint
from matching.training.trainer import save_trained, train_and_card

DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
ON_THE_CPU = ["amv-question-exact-idf", "pyramid-keywords", "mcan-fm", "cdssm-question", "duet", "arcii"]
"""One variant of each family: on the CPU, `to` moves nothing, and every variant's invariants are checked
on the CPU already (test_explanation.py); on a GPU every variant runs."""
CASES = [(variant, device) for device in DEVICES for variant in (VARIANTS if device == "cuda" else ON_THE_CPU)]
QUESTION = "where is the eiffel tower"
CANDIDATES = ["the eiffel tower is in paris", "a spider has eight legs", FACTS[2][1]]


def test_choose_device_names_the_devices_and_refuses_others() -> None:
    assert choose_device("cpu").type == "cpu"
    assert choose_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="choose cpu, cuda or auto"):
        choose_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            choose_device("cuda")


@pytest.mark.parametrize(("variant", "device_name"), CASES, ids=[f"{v}-{d}" for v, d in CASES])
def test_a_matcher_on_a_device_scores_and_explains_exactly(make_matcher, device_name: str,  # type: ignore[no-untyped-def]
                                                           variant: str) -> None:
    """A model variant on the device: the CPU's scores, and explanations whose decompositions add up."""
    device = choose_device(device_name)
    expected = [e.score for e in make_matcher(seed=4, name=variant, **VARIANTS[variant]).explain(QUESTION, CANDIDATES)]
    moved: Matcher = make_matcher(seed=4, name=variant, **VARIANTS[variant]).to(device)
    assert moved.device.type == device.type
    explanations = moved.explain(QUESTION, CANDIDATES)
    assert [e.score for e in explanations] == pytest.approx(expected, abs=1e-5)
    for explanation in explanations:
        assert_explanation_invariants(explanation, moved)
    scores = moved.score_tokens([tokenize(QUESTION)] * len(CANDIDATES), [tokenize(c) for c in CANDIDATES])
    np.testing.assert_allclose(scores, expected, atol=1e-5)


@pytest.mark.parametrize("device_name", DEVICES)
def test_training_on_a_device_gives_the_cpu_trained_model(device_name: str, toy_data: Path, vectors: WordVectors,
                                                          trained: tuple[Matcher, ModelCard],
                                                          tmp_path: Path) -> None:
    """The same config and seed trained on the device: the CPU run's losses and weights to rounding (exactly,
    on the CPU), and a checkpoint that loads on the CPU and scores as the model did on the device."""
    cpu_matcher, cpu_card = trained
    matcher, card = train_and_card(tiny_config(), toy_data, vectors, show_progress=False,
                                   device=choose_device(device_name))
    assert matcher.device.type == device_name
    tolerance = 0.0 if device_name == "cpu" else 1e-4
    assert [e["train_loss"] for e in card.log] == pytest.approx([e["train_loss"] for e in cpu_card.log], rel=tolerance)
    state, cpu_state = matcher.model.state_dict(), cpu_matcher.model.state_dict()
    for key, value in state.items():
        np.testing.assert_allclose(value.cpu().numpy(), cpu_state[key].numpy(), atol=tolerance, err_msg=key)
    save_trained(matcher, card, tmp_path / "model")
    loaded = load_checkpoint(tmp_path / "model", vectors)
    assert loaded.device.type == "cpu"
    on_device = [e.score for e in matcher.explain(QUESTION, CANDIDATES)]
    assert [e.score for e in loaded.explain(QUESTION, CANDIDATES)] == pytest.approx(on_device, abs=1e-5)
