"""Sanity checks: does an explanation say something about the model, and does the model use what it shows?

- **Model randomisation** (Adebayo et al., NeurIPS 2018): the model's layers are
  re-initialised one at a time, cascading from the top (the layer nearest the score
  first), with a fixed seed. After each step the same example is explained again and
  compared with the trained model's explanation by rank correlation. An explanation
  that barely changes when the weights are random says little about the model.
  Layers are found generically: the model's top-level children that own parameters,
  ordered by when a forward pass first reaches them (so any registered family works).
- **Attention ablation**: every attention gate's weights are replaced by uniform
  weights or by the same weights shuffled over the real words (seeded); the score, the
  rank and the MAP on a data set show how much the model relies on its attention.
- **Deletion curves** (comprehensiveness and sufficiency, DeYoung et al., ERASER 2020):
  words ordered by attention, by their deletion effect or at random; deleting the top
  k% should lower the score a lot (comprehensiveness) and keeping only them should keep
  it (sufficiency, small is good). AOPC is the mean over the k% steps.
"""

from __future__ import annotations

import copy
import math
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from matching.evaluation.dataset import TokenizedList, tokenize_lists
from matching.evaluation.metrics import mean_metrics, question_metrics
from matching.explain.deletion import seen_positions, spearman, without
from matching.explain.explanation import Explanation
from matching.explain.matcher import Matcher
from matching.models.blocks import AttentionGate
from matching.text.batching import make_token_batch
from matching.text.data import RankingList
from matching.text.tokens import Token

Progress = Callable[[float, str], None]
"""progress(fraction done in [0, 1], what is running)."""

TRAINED = "trained"


# ---------------------------------------------------------------- model randomisation

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
    batch = make_token_batch(matcher.vectors, [probe], [probe], params.max_question_len, params.max_answer_len)
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
        return [{"step": s.stage, "layer randomised": s.layer, "score": s.score,
                 **{label: getattr(s, field) for field, label in MEASURES.items()}} for s in self.stages]

    def long_rows(self) -> list[dict[str, object]]:
        """One row per (step, measure) for a line chart; undefined measures left out."""
        return [{"step": s.stage, "layer": s.layer, "measure": label, "value": getattr(s, field)}
                for s in self.stages for field, label in MEASURES.items() if getattr(s, field) is not None]

    def verdict(self) -> str:
        """A sentence on how far the explanation moved once every layer is random."""
        last = self.stages[-1]
        kept = [(label, getattr(last, field)) for field, label in MEASURES.items()
                if field != "scores_rho" and getattr(last, field) is not None]
        if not kept:
            return "No measure is defined for this example."
        worst = max(kept, key=lambda kv: abs(kv[1]))
        if abs(worst[1]) >= 0.5:
            return (f"With every layer random, the {worst[0]} still have a rank correlation of {worst[1]:+.2f} "
                    "with the trained model's: that part of the explanation reflects the input (the word vectors, "
                    "the positions) more than the learned weights.")
        return ("With every layer random, no part of the explanation correlates above 0.5 with the trained "
                "model's: the explanation depends on the learned weights.")


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
    kept, _ = _usable(lists, max_questions)
    rows: list[dict[str, object]] = []
    for done, matcher in enumerate(matchers.values()):
        if progress:
            progress(done / max(len(matchers), 1), matcher.name)
        checks = [randomisation_check(matcher, t.question, t.candidates, 0, seed) for t in kept]
        layers = [TRAINED, *layer_stages(matcher)]
        for index, layer in enumerate(layers):
            model = matcher if index == 0 else randomised(matcher, layers[1:index + 1], seed)
            row: dict[str, object] = {"model": matcher.name, "step": index, "layer randomised": layer,
                                      "questions": len(kept), "MAP": _map(kept, _scores(model, kept))}
            for field, label in MEASURES.items():
                values = [getattr(c.stages[index], field) for c in checks]
                defined = [float(v) for v in values if v is not None]
                row[label] = float(np.mean(defined)) if defined else None
            rows.append(row)
    if progress:
        progress(1.0, "done")
    return rows


# ---------------------------------------------------------------- attention ablation

ABLATIONS = ("uniform", "permuted")


def has_attention(matcher: Matcher) -> bool:
    return any(isinstance(module, AttentionGate) for module in matcher.model.modules())


@contextmanager
def ablated_attention(matcher: Matcher, mode: str, seed: int = 0) -> Iterator[None]:
    """Within the block, every attention gate of the model uses uniform or shuffled weights.

    'uniform': 1/n over the real words; 'permuted': the gate's own weights shuffled over
    the real words of each text (seeded). Padding stays at zero either way.
    """
    if mode not in ABLATIONS:
        raise ValueError(f"unknown attention ablation {mode!r}; choose one of {', '.join(ABLATIONS)}")
    generator = torch.Generator().manual_seed(seed)

    def hook(gate: AttentionGate, inputs: tuple[torch.Tensor, torch.Tensor],
             output: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        vectors, mask = inputs
        alpha = output[1]
        if mode == "uniform":
            new = mask.to(alpha.dtype) / mask.sum(-1, keepdim=True).clamp_min(1)
        else:
            new = torch.zeros_like(alpha)
            for row in range(alpha.shape[0]):
                real = int(mask[row].sum())
                order = torch.randperm(real, generator=generator)
                new[row, :real] = alpha[row, :real][order]
        return (vectors * gate.weights(new, mask)[..., None], new, *output[2:])

    handles = [module.register_forward_hook(hook) for module in matcher.model.modules()
               if isinstance(module, AttentionGate)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _ranks(scores: np.ndarray) -> np.ndarray:
    return np.array([1 + int((scores > s).sum()) for s in scores])


def attention_ablation(matcher: Matcher, question: Sequence[Token], candidates: Sequence[Sequence[Token]],
                       seed: int = 0) -> list[dict[str, object]]:
    """Per ablation and candidate: score and rank with the trained attention and with the ablated one."""
    pairs = ([question] * len(candidates), list(candidates))
    trained = matcher.score_tokens(*pairs).astype(np.float64)
    trained_ranks = _ranks(trained)
    rows: list[dict[str, object]] = []
    for mode in ABLATIONS:
        with ablated_attention(matcher, mode, seed):
            ablated = matcher.score_tokens(*pairs).astype(np.float64)
        ablated_ranks = _ranks(ablated)
        for index in range(len(candidates)):
            rows.append({"model": matcher.name, "attention": mode, "#": index + 1,
                         "score": trained[index], "score ablated": ablated[index],
                         "score change": ablated[index] - trained[index],
                         "rank": int(trained_ranks[index]), "rank ablated": int(ablated_ranks[index])})
    return rows


def _scores(matcher: Matcher, lists: Sequence[TokenizedList], batch_size: int = 256) -> list[np.ndarray]:
    questions = [t.question for t in lists for _ in t.candidates]
    answers = [c for t in lists for c in t.candidates]
    flat = matcher.score_tokens(questions, answers, batch_size)
    out, start = [], 0
    for t in lists:
        out.append(flat[start:start + len(t.candidates)].astype(np.float64))
        start += len(t.candidates)
    return out


def _map(lists: Sequence[TokenizedList], scores: Sequence[np.ndarray]) -> float:
    return mean_metrics([question_metrics(s, t.item.labels) for s, t in zip(scores, lists, strict=True)])["MAP"]


def _usable(lists: Sequence[RankingList], max_questions: int | None) -> tuple[list[TokenizedList], list[str]]:
    kept, skipped = tokenize_lists(lists)
    kept = [t for t in kept if all(t.candidates)]
    if max_questions is not None and len(kept) > max_questions:
        skipped.append(f"only the first {max_questions} of {len(kept)} questions are used")
        kept = kept[:max_questions]
    return kept, skipped


def ablation_map(lists: Sequence[RankingList], matchers: Mapping[str, Matcher], seed: int = 0,
                 max_questions: int | None = None, progress: Progress | None = None) -> list[dict[str, object]]:
    """Per attending model: MAP with its attention, with uniform and with permuted attention."""
    kept, _ = _usable(lists, max_questions)
    attending = [m for m in matchers.values() if has_attention(m)]
    rows: list[dict[str, object]] = []
    for done, matcher in enumerate(attending):
        if progress:
            progress(done / max(len(attending), 1), matcher.name)
        row: dict[str, object] = {"model": matcher.name, "questions": len(kept),
                                  "MAP": _map(kept, _scores(matcher, kept))}
        for mode in ABLATIONS:
            with ablated_attention(matcher, mode, seed):
                row[f"MAP {mode}"] = _map(kept, _scores(matcher, kept))
            row[f"change {mode}"] = float(row[f"MAP {mode}"]) - float(row["MAP"])  # type: ignore[arg-type]
        rows.append(row)
    if progress:
        progress(1.0, "done")
    return rows


# ---------------------------------------------------------------- deletion curves

FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
ORDERS = ("attention", "deletion effect", "random")


@dataclass(frozen=True)
class DeletionCurves:
    side: str
    fractions: tuple[float, ...]
    points: tuple[dict[str, object], ...]
    """model, order, fraction, comprehensiveness, sufficiency (means over the pairs)."""
    aopc: tuple[dict[str, object], ...]
    """model, order, comprehensiveness AOPC, sufficiency AOPC, pairs."""
    pairs: int
    notes: tuple[str, ...]


def _words_to_cut(count: int, fraction: float) -> int:
    """At least one word, and never every seen word."""
    return min(count - 1, max(1, math.ceil(fraction * count)))


def deletion_curves(lists: Sequence[RankingList], matchers: Mapping[str, Matcher], side: str = "answer",
                    fractions: Sequence[float] = FRACTIONS, seed: int = 0, max_questions: int | None = None,
                    progress: Progress | None = None) -> DeletionCurves:
    """Comprehensiveness, sufficiency and AOPC per model and word order, over every usable pair.

    Pairs whose `side` has fewer than two seen words are left out (nothing to order).
    The 'attention' order exists only for models that attend `side`.
    """
    if side not in ("question", "answer"):
        raise ValueError("side must be 'question' or 'answer'")
    kept, notes = _usable(lists, max_questions)
    points: list[dict[str, object]] = []
    aopc: list[dict[str, object]] = []
    pairs_used = 0
    names = list(matchers)
    for model_index, name in enumerate(names):
        matcher = matchers[name]
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])  # the same whatever else is loaded
        limit = matcher.params.max_question_len if side == "question" else matcher.params.max_answer_len
        # 1. one traced pass per question: scores and attention
        base: list[tuple[Sequence[Token], Sequence[Token], float, np.ndarray | None, int]] = []
        for t in kept:
            for explanation, candidate in zip(matcher.explain_tokens(t.question, t.candidates), t.candidates,
                                              strict=True):
                words = t.question if side == "question" else candidate
                seen = len(seen_positions(words, limit))
                if seen < 2:
                    continue
                alpha = explanation.question_attention if side == "question" else explanation.answer_attention
                base.append((t.question, candidate, explanation.score, alpha, seen))
        pairs_used = len(base)
        if progress:
            progress((model_index + 0.3) / len(names), f"{name}: deletion effects")

        def edit(question: Sequence[Token], candidate: Sequence[Token], drop: set[int]
                 ) -> tuple[Sequence[Token], Sequence[Token]]:
            if side == "question":
                return without(question, drop), candidate
            return question, without(candidate, drop)

        # 2. every single-word deletion, in one batched pass
        questions: list[Sequence[Token]] = []
        answers: list[Sequence[Token]] = []
        for question, candidate, _, _, seen in base:
            for p in range(seen):
                q, a = edit(question, candidate, {p})
                questions.append(q)
                answers.append(a)
        single = matcher.score_tokens(questions, answers) if questions else np.zeros(0)
        orders: list[dict[str, np.ndarray]] = []
        offset = 0
        for _, _, score, alpha, seen in base:
            effects = score - single[offset:offset + seen]
            offset += seen
            order = {"deletion effect": np.argsort(-effects, kind="stable"), "random": rng.permutation(seen)}
            if alpha is not None:
                order["attention"] = np.argsort(-np.asarray(alpha[:seen]), kind="stable")
            orders.append(order)
        if progress:
            progress((model_index + 0.6) / len(names), f"{name}: curves")
        # 3. comprehensiveness and sufficiency edits, in one batched pass
        questions, answers, keys = [], [], []
        for pair, ((question, candidate, _, _, seen), order) in enumerate(zip(base, orders, strict=True)):
            words = question if side == "question" else candidate
            for kind, ranked in order.items():
                for fraction in fractions:
                    top = {int(p) for p in ranked[:_words_to_cut(seen, fraction)]}
                    rest = set(range(len(words))) - top
                    for what, drop in (("comprehensiveness", top), ("sufficiency", rest)):
                        q, a = edit(question, candidate, drop)
                        questions.append(q)
                        answers.append(a)
                        keys.append((pair, kind, fraction, what))
        edited = matcher.score_tokens(questions, answers) if questions else np.zeros(0)
        sums: dict[tuple[str, float, str], list[float]] = {}
        for (pair, kind, fraction, what), value in zip(keys, edited, strict=True):
            sums.setdefault((kind, fraction, what), []).append(base[pair][2] - float(value))
        for kind in ORDERS:
            if (kind, fractions[0], "comprehensiveness") not in sums:
                continue
            curve = []
            for fraction in fractions:
                comp = float(np.mean(sums[(kind, fraction, "comprehensiveness")]))
                suff = float(np.mean(sums[(kind, fraction, "sufficiency")]))
                curve.append((comp, suff))
                points.append({"model": name, "order": kind, "fraction": fraction, "comprehensiveness": comp,
                               "sufficiency": suff})
            aopc.append({"model": name, "order": kind, "comprehensiveness AOPC": float(np.mean([c for c, _ in curve])),
                         "sufficiency AOPC": float(np.mean([s for _, s in curve])),
                         "pairs": len(sums[(kind, fractions[0], "comprehensiveness")])})
        if progress:
            progress((model_index + 1) / len(names), f"{name}: done")
    return DeletionCurves(side=side, fractions=tuple(fractions), points=tuple(points), aopc=tuple(aopc),
                          pairs=pairs_used, notes=tuple(notes))
