"""Rank a question's candidates with several models and the baselines, side by side."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from matching.explain import glossary
from matching.explain.display import box_html, heading_html, table_html
from matching.explain.explanation import Explanation, ScoreSplit, TracedExplanations
from matching.explain.matcher import Matcher, require_words
from matching.explain.passes import PassCache
from matching.text.baselines import baseline_scores
from matching.text.embeddings import WordVectors
from matching.text.inputs import MAX_CANDIDATES
from matching.text.tokens import TextError, Token, tokenize

if TYPE_CHECKING:
    import pandas as pd


def rank_column(system: str) -> str:
    """The table column holding a model's or baseline's ranks (the one place this name is made)."""
    return f"{system} rank"


def score_column(system: str) -> str:
    return f"{system} score"


def flag_unknown(tokens: Sequence[Token], vectors: WordVectors) -> list[Token]:
    return [replace(t, unknown=not vectors.is_known(t.key)) for t in tokens]


def competition_ranks(scores: np.ndarray) -> np.ndarray:
    """1 = best; tied scores share the best rank of their group (1, 2, 2, 4)."""
    return np.array([1 + int((scores > s).sum()) for s in scores], dtype=np.int64)


@dataclass(frozen=True)
class ModelRanking:
    scores: np.ndarray
    ranks: np.ndarray
    explanations: Sequence[Explanation]
    """One per candidate, from the pass that gave the scores (built when first read: see
    `TracedExplanations`)."""
    matcher: Matcher | None = field(default=None, repr=False, compare=False)
    """The model that gave the scores, for what needs it again (integrated gradients in `compare`)."""

    @property
    def question_tokens(self) -> tuple[Token, ...]:
        """The question's words as this model read them (unknown and truncated flags), without
        building an explanation."""
        return _tokens(self.explanations, 0, question=True)

    def answer_tokens(self, index: int) -> tuple[Token, ...]:
        return _tokens(self.explanations, index, question=False)

    def score_split(self, index: int) -> ScoreSplit:
        """Candidate `index`'s score and its terms (learned match, keyword features), without building its
        explanation when it was not built yet."""
        if isinstance(self.explanations, TracedExplanations):
            return self.explanations.score_split(index)
        explanation = self.explanations[index]
        return ScoreSplit(explanation.score, explanation.terms)


def _tokens(explanations: Sequence[Explanation], index: int, question: bool) -> tuple[Token, ...]:
    if isinstance(explanations, TracedExplanations):
        return (explanations.question_tokens if question else explanations.answer_tokens)[index]
    explanation = explanations[index]
    return explanation.question_tokens if question else explanation.answer_tokens


@dataclass(frozen=True)
class Ranking:
    question: str
    candidates: tuple[str, ...]
    question_tokens: tuple[Token, ...]
    candidate_tokens: tuple[tuple[Token, ...], ...]
    labels: tuple[int, ...] | None
    models: dict[str, ModelRanking]
    baselines: dict[str, np.ndarray]
    baseline_ranks: dict[str, np.ndarray] = field(default_factory=dict)

    def rows(self) -> list[dict[str, object]]:
        """One plain row per candidate: text, label, each model's and baseline's score and rank."""
        rows = []
        for index, candidate in enumerate(self.candidates):
            row: dict[str, object] = {"#": index + 1, "candidate": candidate}
            if self.labels is not None:
                row["correct"] = bool(self.labels[index])
            for name, result in self.models.items():
                row[rank_column(name)] = int(result.ranks[index])
                row[score_column(name)] = float(result.scores[index])
            for name, scores in self.baselines.items():
                row[rank_column(name)] = int(self.baseline_ranks[name][index])
                row[score_column(name)] = float(scores[index])
            rows.append(row)
        return rows

    def __repr__(self) -> str:  # every token of every text is for the views; a plain print() shows what was ranked
        question = self.question if len(self.question) <= 60 else self.question[:57] + "..."
        tops = ", ".join(f"{name}: #{index + 1}" for name, index in self.top_answers().items())
        return (f"Ranking({question!r}: {len(self.candidates)} candidates, models {list(self.models)}; top answers "
                f"{tops or 'none'}; .rows() or .to_frame() for the table)")

    def top_answers(self) -> dict[str, int]:
        """Each model's top answer (0-based candidate index; the first of a tie)."""
        return {name: int(np.argmin(result.ranks)) for name, result in self.models.items()}

    def disagree_on_top(self) -> bool:
        return len(set(self.top_answers().values())) > 1

    def truncation_notes(self) -> list[str]:
        """One sentence per text that is longer than the models read (the rest is greyed in the views)."""
        if not self.models:
            return []
        # Every model reads the same maximum lengths unless told otherwise: report the first model's cut.
        first = next(iter(self.models.values()))
        notes = []
        question = first.question_tokens
        if any(t.truncated for t in question):
            seen = sum(not t.truncated for t in question)
            notes.append(f"The question has {len(question):,} words; the models read only the first {seen} (the rest "
                         "is greyed on the explanation pages).")
        for index in range(len(self.candidates)):
            tokens = first.answer_tokens(index)
            if any(t.truncated for t in tokens):
                seen = sum(not t.truncated for t in tokens)
                notes.append(f"Candidate #{index + 1} has {len(tokens):,} words; the models read only the first "
                             f"{seen} (the rest is greyed on the explanation pages).")
        return notes

    def explanation_export(self, pick: int, names: Sequence[str] | None = None) -> dict[str, object]:
        """The JSON export of one candidate's explanations (all models, or `names`)."""
        chosen = list(self.models) if names is None else [n for n in names if n in self.models]
        return {"question": self.question, "candidate": self.candidates[pick], "candidate_number": pick + 1,
                "models": {n: self.models[n].explanations[pick].to_dict() for n in chosen}}

    def disagreement(self) -> np.ndarray:
        """Per candidate: the spread (max - min) of its rank across the models."""
        if not self.models:
            return np.zeros(len(self.candidates), dtype=np.int64)
        ranks = np.stack([r.ranks for r in self.models.values()])
        return ranks.max(axis=0) - ranks.min(axis=0)

    def to_frame(self) -> pd.DataFrame:
        """One row per candidate (index: its 0-based position): the text, whether it is correct (when
        labels are known), then every model's and baseline's rank and score.

        Ranks are pandas' `rank(method="min")` of the scores, highest first: tied scores share the best
        rank of their group (1, 2, 2, 4), the tie rule of `competition_ranks`.
        """
        import pandas as pd

        scores = pd.DataFrame({**{name: result.scores for name, result in self.models.items()}, **self.baselines},
                              dtype="float64")
        ranks = scores.rank(method="min", ascending=False).astype("int64")
        frame = pd.DataFrame({"candidate": list(self.candidates)})
        if self.labels is not None:
            frame["correct"] = [bool(label) for label in self.labels]
        for system in scores:
            frame[rank_column(system)] = ranks[system]
            frame[score_column(system)] = scores[system]
        return frame

    def candidate_index(self, candidate: int | str) -> int:
        """A candidate's 0-based position, from its position (negative counts from the end) or its text."""
        if isinstance(candidate, str):
            if candidate not in self.candidates:
                raise ValueError(f"no candidate reads {candidate!r}; give its text exactly, or its position")
            return self.candidates.index(candidate)
        count = len(self.candidates)
        if isinstance(candidate, bool) or not isinstance(candidate, int | np.integer):
            raise TypeError(f"a candidate is its position (an int) or its text, not {type(candidate).__name__}")
        if not -count <= candidate < count:
            raise IndexError(f"candidate {candidate}: there are {count} candidates (positions 0 to {count - 1}, or "
                             f"{-count} to -1 from the end)")
        return int(candidate) % count

    def explanation(self, candidate: int | str, model: str | None = None) -> Explanation:
        """Why `model` (a name; the first model when None) gave `candidate` (position or text) its score:
        the explanation from the very pass that produced the score."""
        if not self.models:
            raise ValueError("no model ranked these candidates (baselines only): there is nothing to explain")
        name = next(iter(self.models)) if model is None else model
        if name not in self.models:
            raise KeyError(f"{name!r} did not rank these candidates; they were ranked by {list(self.models)}")
        return self.models[name].explanations[self.candidate_index(candidate)]

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the question and every system's ranks (`ranking_html`)."""
        return ranking_html(self)


def rank(question: str, candidates: Sequence[str], models: Mapping[str, Matcher],
         labels: Sequence[int] | None = None, max_candidates: int = MAX_CANDIDATES) -> Ranking:
    """Score all candidates in one batch per model; raises TextError on unusable input."""
    return rank_tokens(question, _tokenized(question, "the question"), candidates,
                       [_tokenized(c, f"candidate #{n}") for n, c in enumerate(candidates, 1)], models, labels,
                       max_candidates)


def _tokenized(text: str, what: str) -> Sequence[Token]:
    """`tokenize`, its refusal naming the text ("text has 55,063 characters" said not which of five)."""
    try:
        return tokenize(text)
    except TextError as error:
        raise TextError(f"{what}: {error}") from None


def rank_tokens(question: str, question_tokens: Sequence[Token], candidates: Sequence[str],
                candidate_tokens: Sequence[Sequence[Token]], models: Mapping[str, Matcher],
                labels: Sequence[int] | None = None, max_candidates: int = MAX_CANDIDATES,
                passes: PassCache | None = None) -> Ranking:
    """`rank` for text already parsed (see `inputs.parse_input`): the words are not read again. With `passes`,
    each model's pass over these exact words is taken from there when it was computed before (and kept)."""
    if not candidates:
        raise TextError("give at least one candidate answer")
    if len(candidates) > max_candidates:
        raise TextError(f"{len(candidates)} candidates; the limit is {max_candidates}")
    if labels is not None:
        if len(labels) != len(candidates):
            raise TextError(f"{len(labels)} labels for {len(candidates)} candidates")
        for index, label in enumerate(labels):  # -1 read as correct, 0.5 as wrong, 2 kept: none of them a label
            if isinstance(label, str) or label not in (0, 1):
                raise TextError(f"label {index + 1} is {label!r}: give 0 or 1 for each candidate (1 = correct)")
    require_words(question_tokens, "the question")
    for index, tokens in enumerate(candidate_tokens):
        require_words(tokens, f"candidate #{index + 1}")
    if models:  # every model reads the same vectors: flag the unknown words once, for the views
        vectors = next(iter(models.values())).vectors
        question_tokens = flag_unknown(question_tokens, vectors)
        candidate_tokens = [flag_unknown(tokens, vectors) for tokens in candidate_tokens]
    results = {}
    for name, matcher in models.items():
        explanations = (matcher.traced(question_tokens, candidate_tokens) if passes is None
                        else passes.traced(name, matcher, question_tokens, candidate_tokens))
        results[name] = ModelRanking(explanations.scores, competition_ranks(explanations.scores), explanations, matcher)
    baselines = baseline_scores(question_tokens, candidate_tokens)
    return Ranking(
        question=question, candidates=tuple(candidates), question_tokens=tuple(question_tokens),
        candidate_tokens=tuple(tuple(t) for t in candidate_tokens),
        labels=None if labels is None else tuple(int(x) for x in labels), models=results,
        baselines=baselines, baseline_ranks={k: competition_ranks(v) for k, v in baselines.items()})


def score_split_rows(ranking: Ranking, pick: int) -> list[dict[str, object]]:
    """Each model's score of candidate `pick` split into its learned match and its keyword term (and each
    keyword feature's part), read off the explanation; learned match + keywords = score exactly. A model
    without a keyword term has keywords None: its whole score is learned match."""
    rows: list[dict[str, object]] = []
    for name, result in ranking.models.items():
        split = result.score_split(pick)
        has = bool(split.keyword_terms)
        rows.append({"model": name, "score": split.score, "learned match": split.learned_score,
                     "keywords": split.keyword_score if has else None,
                     **{feature: value for feature, value in split.keyword_terms.items()}})
    return rows


@dataclass(frozen=True)
class KeywordDecision:
    """The candidates a keyword model puts first by its whole score and by its learned match alone, read off the pass
    that ranked them (indices into the ranking's candidates; more than one where scores tie)."""

    model: str
    whole: tuple[int, ...]
    learned: tuple[int, ...]

    @property
    def keywords_decide(self) -> bool:
        """The keyword term changes the top answer: no candidate first by the whole score is first by the learned
        match alone (a card's keyword study counts the same, taking the first of a tie). The views of the learned
        match (attention, interactions, pooled cells) then explain a part that, alone, would have ranked another
        candidate first."""
        return not set(self.whole) & set(self.learned)


def keyword_decisions(ranking: Ranking) -> list[KeywordDecision]:
    """For each model with a keyword term, over two or more candidates with words, what it puts first with and
    without its keywords (a candidate without words scores -inf in every part and takes no part)."""
    def firsts(values: np.ndarray, scored: np.ndarray) -> tuple[int, ...]:
        return tuple(int(i) for i in np.flatnonzero(scored & (values == values[scored].max())))

    answers = []
    for name, result in ranking.models.items():
        splits = [result.score_split(index) for index in range(len(ranking.candidates))]
        whole = np.asarray(result.scores, dtype=np.float64)
        scored = np.isfinite(whole)
        if scored.sum() < 2 or not any(split.keyword_terms for split in splits):
            continue
        learned = np.array([split.learned_score for split in splits], dtype=np.float64)
        answers.append(KeywordDecision(name, firsts(whole, scored), firsts(learned, scored)))
    return answers


def silent_features(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """The keyword features of `score_split_rows` that add exactly 0 to every model's score (a number asked where
    the question asks none, a feature a model lacks): a table may leave them out and name them, and its rows still
    add up. Where no model has a keyword term there is nothing to leave out."""
    fixed = {"model", "score", "learned match", "keywords"}
    features = dict.fromkeys(column for row in rows for column in row if column not in fixed)
    return [feature for feature in features if all(not row.get(feature) for row in rows)]


def compact_rows(ranking: Ranking, with_baselines: bool = False, text_chars: int = 44) -> list[dict[str, object]]:
    """The Rank table for a projector: short texts, ranks only, models by short name, baselines on demand.

    Columns: '#', 'candidate' (at most `text_chars` characters), 'correct' (when labels are
    known), one rank column per model named by `glossary.short_name`, then the baselines'
    ranks when asked for.
    """
    systems = {glossary.short_name(name): result.ranks for name, result in ranking.models.items()}
    if with_baselines:
        systems.update({glossary.short_name(name): ranks for name, ranks in ranking.baseline_ranks.items()})
    rows = []
    for index, candidate in enumerate(ranking.candidates):
        text = " ".join(candidate.split())
        row: dict[str, object] = {"#": index + 1,
                                  "candidate": text if len(text) <= text_chars else text[:text_chars - 1] + "…"}
        if ranking.labels is not None:
            row["correct"] = "yes" if ranking.labels[index] else ""
        row.update({name: int(ranks[index]) for name, ranks in systems.items()})
        rows.append(row)
    return rows


def ranking_html(ranking: Ranking) -> str:
    """The question and a table of the candidates with every model's and baseline's rank."""
    frame = ranking.to_frame()
    systems = [*ranking.models, *ranking.baselines]
    shown = frame[[c for c in ("candidate", "correct") if c in frame] + [rank_column(s) for s in systems]]
    shown.insert(0, "index", frame.index)
    notes = "".join(f"<div style='color:#6b7280'>{html.escape(note)}</div>" for note in ranking.truncation_notes())
    return box_html(f"<div style='font-size:1.1rem'>Q: <b>{html.escape(ranking.question)}</b></div>", notes,
                heading_html(f"Ranks (1 = best) of {len(ranking.candidates)} candidates; scores in .to_frame()"),
                table_html(shown, "{:.4f}"))
