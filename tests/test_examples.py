"""The example gallery: well-formed, the 'disagreement' example really splits the shipped models, and the
'echo' example shows what it says."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from matching.explain.ranking import rank
from matching.text.examples import BY_KEY, EXAMPLES, Example
from matching.text.inputs import split_candidates
from matching.training.checkpoint import load_all

MODELS = Path(os.environ.get("MATCHLENS_MODELS") or Path(__file__).resolve().parent.parent / "pretrained")


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.key for e in EXAMPLES])
def test_examples_are_well_formed(example: Example) -> None:
    assert example.question.strip() and example.note and example.title
    assert 2 <= len(example.candidates) <= 10
    assert split_candidates("\n".join(example.candidates)).candidates == example.candidates
    assert example.gold and all(0 <= g < len(example.candidates) for g in example.gold)
    assert example.icon.startswith(":material/")
    assert BY_KEY[example.key] is example


def test_kinds_cover_the_gallery() -> None:
    assert {"factoid", "paraphrase", "disagreement"} <= {e.kind for e in EXAMPLES}


def test_disagreement_example_splits_the_default_models() -> None:
    """Its note says the models pick different top answers: true of the ones the Rank page opens with (with all
    the shipped models it held while the defaults, on screen, agreed)."""
    from matching.training.cards import default_models

    models, errors = load_all(MODELS)
    defaults = {name: models[name] for name in default_models(list(models))}
    assert len(defaults) >= 2, f"need the default checkpoints in {MODELS}: {errors}"
    example = BY_KEY["disagreement"]
    ranking = rank(example.question, list(example.candidates), defaults)
    tops = {name: int(np.argmin(result.ranks)) for name, result in ranking.models.items()}
    assert len(set(tops.values())) > 1, f"the default models agree on the top answer: {tops}"
    assert example.gold[0] in tops.values(), f"no default model puts the right answer first: {tops}"
    # The note's words: four candidates, the right one among them, repeat a word of the question.
    question = {t.text.lower() for t in ranking.question_tokens if t.text.isalpha()}
    shared = [bool(question & {t.text.lower() for t in tokens}) for tokens in ranking.candidate_tokens]
    assert shared[example.gold[0]] and sum(shared) == 4


def test_echo_example_shows_what_training_with_echoes_changes() -> None:
    """The 'echo' example's point holds for the shipped checkpoints: a model trained without echoes puts the
    candidate that repeats the question first; the one trained with them puts the answer first."""
    models, _ = load_all(MODELS)
    example = BY_KEY["echo"]
    chosen = {name: models[name] for name in ("mvlstm-em-kw", "amvlstm-q-kw-echo")}
    ranking = rank(example.question, list(example.candidates), chosen)
    tops = {name: int(np.argmin(result.ranks)) for name, result in ranking.models.items()}
    echo, answer = 0, example.gold[0]
    assert tops == {"mvlstm-em-kw": echo, "amvlstm-q-kw-echo": answer}, tops


def test_echo_example_note_holds_for_the_defaults_with_the_echo_feature() -> None:
    """The note's keyword split: every default model's echo feature fires on the echo alone, and its term sets
    the echo back far enough that the answer comes first."""
    from matching.models.blocks.keywords import ECHO_FEATURE
    from matching.training.cards import default_models

    models, _ = load_all(MODELS)
    example = BY_KEY["echo"]
    defaults = default_models(list(models))
    assert len(defaults) == 3, defaults
    ranking = rank(example.question, list(example.candidates), {name: models[name] for name in defaults})
    tops = {name: int(np.argmin(result.ranks)) for name, result in ranking.models.items()}
    assert tops == dict.fromkeys(defaults, example.gold[0]), tops
    for name in defaults:
        split = ranking.models[name].score_split
        terms = [split(i).keyword_terms[ECHO_FEATURE] for i in range(len(example.candidates))]
        assert terms[0] < 0 and terms[1:] == [0.0] * (len(terms) - 1), (name, terms)
    assert "default models" in example.note
