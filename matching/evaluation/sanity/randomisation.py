"""Model randomisation (Adebayo et al., NeurIPS 2018): the model's layers are re-initialised one at a
time, cascading from the top (the layer nearest the score first), with a fixed seed. After each step
the same example is explained again and compared with the trained model's explanation by rank
correlation. An explanation that barely changes when the weights are random says little about the
model. Layers are found generically: the model's top-level children that own parameters, ordered
by when a forward pass first reaches them (so any registered family works).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from matching.evaluation.sanity.common import TRAINED, Progress, map_of, scores_of, usable
from matching.explain.deletion import spearman
from matching.explain.explanation import Explanation
from matching.explain.matcher import Matcher
from matching.models.batching import make_token_batch
from matching.text.data import RankingList
from matching.text.tokens import Token


def layer_stages(matcher: Matcher) -> list[str]:
    """The model's top-level children that own parameters, top (nearest the score) first.

    Depth is read off the autograd graph of one forward pass: a parameter's depth is the
    longest path from the score back to it, a layer's depth the smallest over its
    parameters. For aMV-LSTM: head, interaction (when it has weights), encoder, gates,
    unknown_word. Layers no path reaches (unused by this input) come last.
    """
    model = matcher.model
    probe = [Token("the", 0, 3, "the"), Token("zqxjv", 4, 9, "zqxjv")]  # one known, one unknown word
    params = matcher.params
    batch = make_token_batch(matcher.vectors, [probe], [probe], params.max_question_len, params.max_answer_len,
                             lists_for=params)
    with torch.enable_grad():
        score = model(batch)
    assert isinstance(score, torch.Tensor)
    depth_of: dict[int, int] = {}
    longest: dict[int, int] = {}
    # Longest path from the score to every node: relax the edges in a topological order.
    order: list[Any] = []
    visited: set[int] = set()
    stack: list[tuple[Any, bool]] = [(score.grad_fn, False)]
    while stack:
        node, done = stack.pop()
        if node is None:
            continue
        if done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child, _ in node.next_functions)
    longest[id(score.grad_fn)] = 0
    for node in reversed(order):  # parents before children
        here = longest.get(id(node), 0)
        for child, _ in node.next_functions:
            if child is not None:
                longest[id(child)] = max(longest.get(id(child), 0), here + 1)
        variable = getattr(node, "variable", None)
        if variable is not None:
            depth_of[id(variable)] = here
    depths: dict[str, int] = {}
    for name, child in model.named_children():
        reached = [depth_of[id(p)] for p in child.parameters() if id(p) in depth_of]
        owned = any(True for _ in child.parameters())
        if owned:
            depths[name] = min(reached) if reached else 10**9
    return sorted(depths, key=lambda name: depths[name])


def _reinitialise(module: nn.Module) -> None:
    """Draw every parameter of `module` again: the layer's own initialiser where it has one,
    else a normal distribution with the trained weights' spread."""
    for sub in module.modules():
        own = list(sub.parameters(recurse=False))
        if not own:
            continue
        reset = getattr(sub, "reset_parameters", None)
        if callable(reset):
            reset()
            continue
        for parameter in own:
            spread = float(parameter.std()) if parameter.numel() > 1 else 0.0
            parameter.normal_(0.0, spread if spread > 0 else 0.1)


def layer_label(layer: str) -> str:
    """A layer's attribute name as a reader's words: "unknown_word" -> "unknown word", "local_mlp" -> "local MLP"."""
    return re.sub(r"\bmlp\b", "MLP", layer.replace("_", " "))


def randomised(matcher: Matcher, layers: Sequence[str], seed: int) -> Matcher:
    """A copy of `matcher` whose `layers` (top-level child names) are re-initialised, seeded.

    The same (layers, seed) always gives the same weights; the trained model is untouched.
    """
    model = copy.deepcopy(matcher.model)
    children = dict(model.named_children())
    unknown = [name for name in layers if name not in children]
    if unknown:
        raise ValueError(f"{matcher.name} has no layer named {', '.join(unknown)}")
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(seed)
        for name in layers:
            _reinitialise(children[name])
    return replace(matcher, model=model)


def _contribution_map(explanation: Explanation) -> np.ndarray | None:
    """(m, n): every cell's contribution to the score, summed over the matrices the model read (None
    for a model whose score does not split over cells)."""
    if not explanation.cell_contributions:
        return None
    return np.sum([m.astype(np.float64) for m in explanation.cell_contributions.values()], axis=0)


def _side_weights(explanation: Explanation, side: int) -> np.ndarray | None:
    """Every named word weighting of one side (0 question, 1 answer), end to end; None without any."""
    found = [weights[side] for weights in explanation.all_word_weights.values() if weights[side] is not None]
    return np.concatenate(found) if found else None


def _channels(explanation: Explanation) -> np.ndarray | None:
    found = explanation.channels
    return None if found is None else np.concatenate([found.question.ravel(), found.answer.ravel()])


def _pooled_positions(explanation: Explanation) -> set[tuple[str, int, int]]:
    return {(c.matrix, c.i, c.j) for c in explanation.pooled_cells if c.i is not None and c.j is not None}


@dataclass(frozen=True)
class RandomisationStage:
    stage: int
    layer: str
    """The layer re-initialised at this step ('trained' for step 0)."""
    score: float
    """Score of the explained candidate."""
    scores_rho: float | None
    """Spearman of all candidates' scores against the trained model's (None with < 3 candidates)."""
    question_attention_rho: float | None
    """Spearman of the question's word weights (every weighting the model has, end to end)."""
    answer_attention_rho: float | None
    matrices_rho: float | None
    """Mean Spearman over the interaction matrices (flattened)."""
    contributions_rho: float | None
    """Spearman of the per-position contribution maps (None without cell contributions)."""
    pooled_overlap: float | None
    """Share of the trained model's pooled cells (matrix, i, j) this model still pools (None without any)."""
    channels_rho: float | None = None
    """Spearman of the per-word feature channels, both sides (None without channels)."""


MEASURES = {"scores_rho": "candidate scores", "question_attention_rho": "question attention",
            "answer_attention_rho": "answer attention", "matrices_rho": "interaction matrices",
            "contributions_rho": "cell contributions", "pooled_overlap": "pooled cells kept",
            "channels_rho": "word channels"}
"""Field -> what a reader calls it (all 1.0 for the trained model)."""


@dataclass(frozen=True)
class RandomisationCheck:
    model: str
    seed: int
    candidate: int
    stages: tuple[RandomisationStage, ...]

    def rows(self) -> list[dict[str, object]]:
        return [{"step": s.stage, "layer randomised": layer_label(s.layer), "score": s.score,
                 **{label: getattr(s, field) for field, label in MEASURES.items()}} for s in self.stages]

    def long_rows(self) -> list[dict[str, object]]:
        """One row per (step, measure) for a line chart; undefined measures left out."""
        return [{"step": s.stage, "layer": layer_label(s.layer), "measure": label, "value": getattr(s, field)}
                for s in self.stages for field, label in MEASURES.items() if getattr(s, field) is not None]

    def verdict(self) -> str:
        """A sentence on how far the explanation moved once every layer is random."""
        last = self.stages[-1]
        kept = [(label, getattr(last, field)) for field, label in MEASURES.items()
                if field != "scores_rho" and getattr(last, field) is not None]
        # The scores are what is explained, not a part of the explanation: said apart, so that a
        # high score correlation in the chart never reads as a contradiction of the verdict.
        scores = last.scores_rho
        # A strong negative correlation is an order too, the trained one's reversed (it read "much as the trained
        # one does" at -0.80).
        order = ("much as the trained one does" if scores is not None and scores > 0 else
                 "nearly in the reverse of the trained one's order")
        aside = ("" if scores is None or abs(scores) < 0.5 else
                 f" The candidate scores themselves (not a part of the explanation) still correlate at {scores:+.2f}: "
                 f"a random network of this shape orders these candidates {order}.")
        if not kept:
            return "No part of the explanation is defined for this example." + aside
        worst = max(kept, key=lambda kv: abs(kv[1]))
        if abs(worst[1]) >= 0.5:
            # 'pooled cells kept' is a share of cells, not a correlation: said as what it is.
            held = (f"{worst[1]:.0%} of the trained model's pooled cells are still pooled"
                    if worst[0] == MEASURES["pooled_overlap"] else
                    f"the {worst[0]} still have a rank correlation of {worst[1]:+.2f} with the trained model's")
            return (f"With every layer random, {held}: that part of the explanation reflects the input (the word "
                    "vectors, the positions) more than the learned weights." + aside)
        return ("With every layer random, no part of the explanation correlates above 0.5 with the trained "
                "model's: the explanation depends on the learned weights." + aside)


def _attention_rho(trained: np.ndarray | None, other: np.ndarray | None) -> float | None:
    return None if trained is None or other is None else spearman(trained, other)


def randomisation_check(matcher: Matcher, question: Sequence[Token], candidates: Sequence[Sequence[Token]],
                        candidate: int, seed: int = 0) -> RandomisationCheck:
    """Cascading randomisation of `matcher`, explaining `candidate` after every step."""
    trained = matcher.explain_tokens(question, candidates)
    reference = trained[candidate]
    trained_scores = np.array([e.score for e in trained])
    reference_map = _contribution_map(reference)
    reference_cells = _pooled_positions(reference)

    def stage(index: int, layer: str, explanations: list[Explanation]) -> RandomisationStage:
        e = explanations[candidate]
        scores = np.array([x.score for x in explanations])
        matrices = [spearman(reference.interaction_matrices[name].ravel(), matrix.ravel())
                    for name, matrix in e.interaction_matrices.items() if name in reference.interaction_matrices]
        defined = [r for r in matrices if r is not None]
        cells, contributions = _pooled_positions(e), _contribution_map(e)
        reference_channels, channels = _channels(reference), _channels(e)
        return RandomisationStage(
            stage=index, layer=layer, score=e.score,
            scores_rho=spearman(trained_scores, scores) if len(scores) >= 3 else None,
            question_attention_rho=_attention_rho(_side_weights(reference, 0), _side_weights(e, 0)),
            answer_attention_rho=_attention_rho(_side_weights(reference, 1), _side_weights(e, 1)),
            matrices_rho=float(np.mean(defined)) if defined else None,
            contributions_rho=(None if reference_map is None or contributions is None else
                               spearman(reference_map.ravel(), contributions.ravel())),
            pooled_overlap=len(cells & reference_cells) / len(reference_cells) if reference_cells else None,
            channels_rho=(None if reference_channels is None or channels is None else
                          spearman(reference_channels, channels)))

    stages = [stage(0, TRAINED, trained)]
    layers = layer_stages(matcher)
    for index in range(1, len(layers) + 1):
        random_matcher = randomised(matcher, layers[:index], seed)
        stages.append(stage(index, layers[index - 1], random_matcher.explain_tokens(question, candidates)))
    return RandomisationCheck(matcher.name, seed, candidate, tuple(stages))


def randomisation_on_data(lists: Sequence[RankingList], matchers: Mapping[str, Matcher], seed: int = 0,
                          max_questions: int | None = None, progress: Progress | None = None
                          ) -> list[dict[str, object]]:
    """The cascading randomisation over a data set: per model and step, each measure's mean over the
    questions (explaining each question's first candidate) and the MAP of the randomised model."""
    kept, _ = usable(lists, max_questions)
    rows: list[dict[str, object]] = []
    for done, matcher in enumerate(matchers.values()):
        if progress:
            progress(done / max(len(matchers), 1), matcher.name)
        checks = [randomisation_check(matcher, t.question, t.candidates, 0, seed) for t in kept]
        layers = [TRAINED, *layer_stages(matcher)]
        for index, layer in enumerate(layers):
            model = matcher if index == 0 else randomised(matcher, layers[1:index + 1], seed)
            row: dict[str, object] = {"model": matcher.name, "step": index, "layer randomised": layer_label(layer),
                                      "questions": len(kept), "MAP": map_of(kept, scores_of(model, kept))}
            for field, label in MEASURES.items():
                values = [getattr(c.stages[index], field) for c in checks]
                defined = [float(v) for v in values if v is not None]
                row[label] = float(np.mean(defined)) if defined else None
            rows.append(row)
    if progress:
        progress(1.0, "done")
    return rows
