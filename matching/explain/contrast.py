"""Why did a model put candidate A above candidate B? The score gap, split over cells or words.

A family whose explanation splits its score exactly into matrix-cell contributions
(gradient x value, `Explanation.cell_contributions`) plus a bias term splits the gap exactly:

    score(A) - score(B) = sum(contributions of A) - sum(contributions of B) + (bias(A) - bias(B))

A family without such a split (no interaction matrices the score is piecewise linear in) has
its gap split over the words by integrated gradients (`attribution`): the attributions of A's
and B's words, the difference of the two baselines in place of the bias, and the completeness
residual, printed beside it; that split is called approximate, never exact.

`contrast` lists every term of the sum (A's cells or words with their contribution, B's with
minus theirs) largest first, and `describe` turns the largest into one sentence.
`agreement` says, across models, who puts which candidate on top and which word
pairs several models lean on; `paired_views` puts A's and B's matrices on one scale.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from matching.explain.attribution import WordAttribution, integrated_gradients
from matching.explain.deletion import DeletionEffects, deletion_effects
from matching.explain.display import box_html, heading_html, table_html
from matching.explain.explanation import Explanation
from matching.explain.glossary import signed
from matching.explain.matcher import Matcher
from matching.explain.matrix_views import MatrixView, matrix_view, view_names
from matching.explain.ranking import Ranking

EXACT, INTEGRATED_GRADIENTS = "exact", "integrated gradients"
PAIR = "A - B"
"""The side of a keyword feature taken over the pair (`ModelContrast.reasons`): A's term less B's."""
KEYWORDS = "keywords: "
"""The `matrix` of a keyword feature's term (`Explanation.keyword_terms`): exact, whatever the method."""
"""How a gap is split: exactly over matrix cells, or approximately over words."""


@dataclass(frozen=True)
class GapTerm:
    """One matrix cell (or one word) of A or of B, and what it does to the gap score(A) - score(B)."""

    side: str
    """'A' or 'B'."""
    matrix: str
    """The matrix of a cell; 'question word' or 'answer word' for a word's attribution."""
    rank: int | None
    """Pooling rank of the cell when the network pooled it directly (k-max), else None."""
    i: int | None
    """Question position (None for an answer word)."""
    j: int | None
    """Answer position (None for a question word)."""
    question_word: str
    answer_word: str
    value: float | None
    """The matrix cell's value (None for a word)."""
    contribution: float
    """The cell's contribution (gradient x value) or the word's attribution to its own candidate's score;
    for a keyword feature over the pair (side PAIR), A's term."""
    other: float = 0.0
    """For a keyword feature over the pair (side PAIR): B's term."""

    @property
    def effect(self) -> float:
        """+contribution for A's terms, -contribution for B's (A's less B's over the pair): what the term adds to
        the gap."""
        if self.side == PAIR:
            return self.contribution - self.other
        return self.contribution if self.side == "A" else -self.contribution

    @property
    def words(self) -> str:
        if self.matrix.startswith(KEYWORDS):
            return f"'{self.matrix.removeprefix(KEYWORDS)}'"
        if self.i is not None and self.j is not None:
            return f"'{self.question_word}' × '{self.answer_word}'"
        return f"'{self.question_word or self.answer_word}'"

    @property
    def what(self) -> str:
        if self.matrix.startswith(KEYWORDS):
            return "keyword feature"
        return "cell" if self.i is not None and self.j is not None else "word"

    @property
    def where(self) -> str:
        return self.matrix if self.rank is None else f"{self.matrix} #{self.rank}"


@dataclass(frozen=True)
class ModelContrast:
    """One model's view of the pair (A, B)."""

    model: str
    a: int
    b: int
    score_a: float
    score_b: float
    rank_a: int
    rank_b: int
    cells_a: float
    """Sum of A's cell contributions (or word attributions)."""
    cells_b: float
    bias_a: float
    """A's bias (or, for integrated gradients, the baseline score)."""
    bias_b: float
    terms: tuple[GapTerm, ...]
    """Every cell (or word) with a non-zero contribution, of A and of B, largest |effect| first."""
    method: str = EXACT
    residual_a: float = 0.0
    """What integrated gradients left unexplained of A's score (0 for an exact split)."""
    residual_b: float = 0.0
    keywords_a: float = 0.0
    """What A's keyword term adds to its score (0 without one; its features are among `terms`)."""
    keywords_b: float = 0.0

    @property
    def keyword_difference(self) -> float:
        return self.keywords_a - self.keywords_b

    @property
    def exact(self) -> bool:
        return self.method == EXACT

    @property
    def residual_difference(self) -> float:
        return self.residual_a - self.residual_b

    @property
    def gap(self) -> float:
        return self.score_a - self.score_b

    @property
    def bias_difference(self) -> float:
        return self.bias_a - self.bias_b

    @property
    def decomposed_gap(self) -> float:
        """cells(A) - cells(B) + keywords(A) - keywords(B) + bias difference (+ residual difference for
        integrated gradients): equals `gap` up to float rounding."""
        return (self.cells_a - self.cells_b + self.keyword_difference + self.bias_difference
                + self.residual_difference)

    @property
    def above(self) -> str:
        """'A', 'B' or 'tie': which candidate this model ranks higher."""
        return "A" if self.gap > 0 else "B" if self.gap < 0 else "tie"

    def reasons(self) -> list[GapTerm]:
        """The terms as reasons for the gap, largest |effect| first: each cell (or word) alone, and each keyword
        feature once over the pair, A's term less B's. A cell of A and a cell of B are different word pairs, but a
        keyword feature is one question asked of both: a date asked and given in both candidates adds the same
        to each and decides nothing between them, though each side's term alone is large."""
        by_feature: dict[str, dict[str, float]] = {}
        reasons = []
        for term in self.terms:
            if term.what == "keyword feature":
                by_feature.setdefault(term.matrix, {})[term.side] = term.contribution
            else:
                reasons.append(term)
        reasons += [GapTerm(PAIR, feature, None, None, None, "", "", None, sides.get("A", 0.0), sides.get("B", 0.0))
                    for feature, sides in by_feature.items()]
        return sorted(reasons, key=lambda t: -abs(t.effect))

    def leading_terms(self, count: int = 3) -> list[GapTerm]:
        """The reasons that push the gap the way it went, largest first."""
        sign = 1.0 if self.gap >= 0 else -1.0
        return [t for t in self.reasons() if t.effect * sign > 0][:count]

    def opposing_terms(self, count: int = 1) -> list[GapTerm]:
        """The reasons that push against the way the gap went, largest first."""
        sign = 1.0 if self.gap >= 0 else -1.0
        return [t for t in self.reasons() if t.effect * sign < 0][:count]

    def __repr__(self) -> str:  # every term is in .terms; a plain print() shows the gap and how it splits
        return (f"ModelContrast({self.model!r}: #{self.a + 1} {self.score_a:+.4f} (rank {self.rank_a}) against "
                f"#{self.b + 1} {self.score_b:+.4f} (rank {self.rank_b}), gap {self.gap:+.4f}, {self.method} split "
                f"over {len(self.terms)} terms)")

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the sentence, the split and the gap's largest terms (`contrast_html`)."""
        return contrast_html(self)

    def rows(self, limit: int = 40) -> list[dict[str, object]]:
        """The decomposition as plain rows: the `limit` largest terms, the rest summed in one row,
        then the bias difference (the rows' 'effect on gap' adds up to the gap)."""
        rows: list[dict[str, object]] = [
            {"candidate": t.side, "matrix": t.matrix, "pooling rank": t.rank, "question word": t.question_word,
             "answer word": t.answer_word, "value": t.value, "contribution": t.contribution,
             "effect on gap": t.effect} for t in self.terms[:limit]]
        rest = self.terms[limit:]
        if rest:
            rows.append({"candidate": "A, B", "matrix": f"{len(rest)} more cells", "pooling rank": None,
                         "question word": "", "answer word": "", "value": None, "contribution": None,
                         "effect on gap": float(sum(t.effect for t in rest))})
        rows.append({"candidate": "A - B", "matrix": "bias" if self.exact else "baseline (all word vectors 0)"
                     + (", less its keyword term" if not self.exact and self.terms and any(
                         t.what == "keyword feature" for t in self.terms) else ""),
                     "pooling rank": None, "question word": "", "answer word": "", "value": None,
                     "contribution": None, "effect on gap": self.bias_difference})
        if not self.exact:
            rows.append({"candidate": "A - B", "matrix": "completeness residual", "pooling rank": None,
                         "question word": "", "answer word": "", "value": None, "contribution": None,
                         "effect on gap": self.residual_difference})
        return rows


def _terms(explanation: Explanation, side: str) -> list[GapTerm]:
    """Every matrix cell with a non-zero contribution (for k-max models: the pooled cells)."""
    q, a = explanation.question_tokens, explanation.answer_tokens
    ranks: dict[tuple[str, int, int], int] = {}
    if all(c.window is None for c in explanation.pooled_cells):  # each slot read one cell (k-max): its rank
        for c in explanation.pooled_cells:
            if c.i is not None and c.j is not None:
                ranks.setdefault((c.matrix, c.i, c.j), c.rank)
    terms = []
    for name, contributions in explanation.cell_contributions.items():
        values = explanation.interaction_matrices[name]
        for i, j in zip(*np.nonzero(contributions), strict=True):
            i, j = int(i), int(j)
            terms.append(GapTerm(side=side, matrix=name, rank=ranks.get((name, i, j)), i=i, j=j,
                                 question_word=q[i].text, answer_word=a[j].text, value=float(values[i, j]),
                                 contribution=float(contributions[i, j])))
    return terms


def summary_rows(contrasts: Mapping[str, ModelContrast], label_a: str = "A", label_b: str = "B"
                 ) -> list[dict[str, object]]:
    """One row per model: ranks, the gap and its parts (cells or words, keywords, bias or baseline, residual):
    gap = cells A - cells B + keywords A - keywords B + bias difference + residual difference."""
    return [{"model": name, f"rank {label_a}": c.rank_a, f"rank {label_b}": c.rank_b, "gap": c.gap,
             "cells A - cells B": c.cells_a - c.cells_b, "keywords A - keywords B": c.keyword_difference,
             "bias difference": c.bias_difference, "residual": c.residual_difference,
             "above": {"A": label_a, "B": label_b, "tie": "tie"}[c.above],
             "split": "exact, over cells" if c.exact else "approximate, over words"}
            for name, c in contrasts.items()]


def _keyword_terms(explanation: Explanation, side: str) -> list[GapTerm]:
    """Each keyword feature's term of one candidate (w_k x_k), exact whatever the method."""
    return [GapTerm(side=side, matrix=f"{KEYWORDS}{name}", rank=None, i=None, j=None, question_word="",
                    answer_word="", value=None, contribution=float(value))
            for name, value in explanation.keyword_terms.items()]


def _cells(explanation: Explanation) -> float:
    return float(sum(float(m.sum(dtype=np.float64)) for m in explanation.cell_contributions.values()))


def contrast(ranking: Ranking, model: str, a: int, b: int, matcher: Matcher | None = None) -> ModelContrast:
    """The gap between candidates a and b under `model`: split exactly over matrix cells where the
    explanation has cell contributions, else over words by integrated gradients (needs `matcher`)."""
    result = ranking.models[model]
    ea, eb = result.explanations[a], result.explanations[b]
    ranks = dict(rank_a=int(result.ranks[a]), rank_b=int(result.ranks[b]))
    keywords = _keyword_terms(ea, "A") + _keyword_terms(eb, "B")
    if ea.cell_bias is not None and eb.cell_bias is not None:
        terms = sorted(_terms(ea, "A") + _terms(eb, "B") + keywords, key=lambda t: -abs(t.effect))
        return ModelContrast(model=model, a=a, b=b, score_a=ea.score, score_b=eb.score, **ranks,
                             cells_a=_cells(ea), cells_b=_cells(eb), bias_a=ea.cell_bias,
                             bias_b=eb.cell_bias, terms=tuple(terms), keywords_a=ea.keyword_score,
                             keywords_b=eb.keyword_score)
    if matcher is None:
        raise ValueError(f"{model}: its score does not split over cells; integrated gradients need the model")
    # Over the whole list: a keyword term reading the list (BM25 within it) gives the pair its traced scores only there.
    wa, wb = integrated_gradients(matcher, ranking.question_tokens, ranking.candidate_tokens, of=(a, b))
    terms = sorted(_word_terms(ea, wa, "A") + _word_terms(eb, wb, "B") + keywords, key=lambda t: -abs(t.effect))
    # The split is of the scores on the integration line's end: the traced scores (to float rounding). The
    # keyword term reads no word vector, so it is the same all along the line: it is taken out of the baseline.
    return ModelContrast(model=model, a=a, b=b, score_a=ea.score, score_b=eb.score, **ranks,
                         cells_a=wa.total, cells_b=wb.total, bias_a=wa.baseline - ea.keyword_score,
                         bias_b=wb.baseline - eb.keyword_score, keywords_a=ea.keyword_score,
                         keywords_b=eb.keyword_score,
                         terms=tuple(terms), method=INTEGRATED_GRADIENTS,
                         residual_a=ea.score - wa.baseline - wa.total, residual_b=eb.score - wb.baseline - wb.total)


def _word_terms(explanation: Explanation, attribution: WordAttribution, side: str) -> list[GapTerm]:
    """Every seen word of the pair with its integrated-gradients attribution."""
    terms = []
    for i, (token, value) in enumerate(zip(explanation.seen_question_tokens, attribution.question, strict=True)):
        terms.append(GapTerm(side, "question word", None, i, None, token.text, "", None, float(value)))
    for j, (token, value) in enumerate(zip(explanation.seen_answer_tokens, attribution.answer, strict=True)):
        terms.append(GapTerm(side, "answer word", None, None, j, "", token.text, None, float(value)))
    return terms


def contrasts(ranking: Ranking, a: int, b: int, matchers: Mapping[str, Matcher] | None = None
              ) -> dict[str, ModelContrast]:
    return {name: contrast(ranking, name, a, b, (matchers or {}).get(name)) for name in ranking.models}


def default_pair(ranking: Ranking, pick: int | None = None) -> tuple[int, int]:
    """(A, B) to compare first: the first model's top answer against the marked correct one; else against the
    candidate being explained (`pick`, ticked on the Rank page), where that is not the top; else the runner-up.

    B never has A's text where another candidate differs from it: two candidates of the same text tie by
    construction, and a pair of them (a list with a pasted line twice) opened Compare on a gap of 0 to explain.
    """
    count = len(ranking.candidates)
    if count < 2:
        return 0, 0
    if ranking.models:
        scores = next(iter(ranking.models.values())).scores
    else:
        scores = next(iter(ranking.baselines.values()))
    order = [int(i) for i in np.argsort(-np.asarray(scores), kind="stable")]
    top = order[0]
    others = [i for i in order[1:] if ranking.candidates[i] != ranking.candidates[top]]
    if ranking.labels is not None and not ranking.labels[top]:
        correct = [i for i in others if ranking.labels[i]]
        if correct:
            return top, correct[0]
    if pick is not None and pick in others:
        return top, pick
    return top, (others or order[1:])[0]


def describe(c: ModelContrast, label_a: str = "A", label_b: str = "B") -> str:
    """One plain sentence, built from the numbers, on what carries the gap."""
    if c.a == c.b:
        return f"{c.model}: A and B are the same candidate; there is no gap."
    if c.gap == 0:
        return (f"{c.model} gives {label_a} and {label_b} exactly the same score ({c.score_a:+.3f}): "
                "they tie.")
    upper, lower = (label_a, label_b) if c.gap > 0 else (label_b, label_a)
    lead = c.leading_terms(2)
    parts = [_reason_text(term, label_a, label_b) for term in lead]
    share = sum(abs(t.effect) for t in lead) / abs(c.gap)
    by = f"{abs(c.gap):.3f}" if abs(c.gap) >= 0.0005 else "less than 0.001"  # not "by 0.000"
    sentence = f"{c.model} puts {upper} above {lower} by {by}."
    if parts:
        sentence += " The largest pushes: " + "; ".join(parts)
        if share <= 1.5:
            sentence += f" (together {share:.0%} of the gap)."
        else:
            against = c.opposing_terms(1)
            sentence += (f": together {share:.1f} times the gap, so other terms push the other way"
                         + (f" (the largest: {_reason_text(against[0], label_a, label_b)})" if against else "")
                         + "; the gap is a small difference of large sums.")
    bias_share = c.bias_difference / c.gap
    if c.exact and abs(bias_share) >= 0.25:
        sentence += (f" The bias terms differ by {c.bias_difference:+.3f} ({bias_share:.0%} of the gap): part of "
                     "the gap comes from which MLP units are active, not from any one cell.")
    if not c.exact:
        sentence += (f" This split is approximate (integrated gradients): the two baseline scores differ by "
                     f"{signed(c.bias_difference, 3)}, and the completeness residual, what the approximation "
                     f"leaves unexplained, is {signed(c.residual_difference, 4)} in score "
                     f"({abs(c.residual_difference / c.gap):.1%} of the gap's size).")
    return sentence


def _reason_text(term: GapTerm, label_a: str, label_b: str) -> str:
    """'in A, the cell 'x' × 'y' (cosine #1) raises its score by 0.512', or for a keyword feature over the pair
    'the keyword feature 'BM25' adds +1.203 to A and +0.410 to B'."""
    if term.side == PAIR:
        return (f"the keyword feature {term.words} adds {signed(term.contribution, 3)} to {label_a} and "
                f"{signed(term.other, 3)} to {label_b}")
    owner = label_a if term.side == "A" else label_b
    verb = "raises" if term.contribution > 0 else "lowers"
    where = f" ({term.where})" if term.what == "cell" else f" ({term.matrix})"
    return f"in {owner}, the {term.what} {term.words}{where} {verb} its score by {abs(term.contribution):.3f}"


@dataclass(frozen=True)
class Agreement:
    above_a: tuple[str, ...]
    above_b: tuple[str, ...]
    tied: tuple[str, ...]
    shared_words: tuple[tuple[str, tuple[str, ...]], ...]
    """(word pair, models) for word pairs among the leading terms of two or more models."""

    def sentence(self, label_a: str = "A", label_b: str = "B") -> str:
        total = len(self.above_a) + len(self.above_b) + len(self.tied)
        if not total:
            return "No model chosen."
        parts = []
        for names, what in ((self.above_a, f"{label_a} above {label_b}"), (self.above_b, f"{label_b} above {label_a}"),
                            (self.tied, "a tie")):
            if names:
                parts.append(f"{len(names)} of {total} put {what} ({', '.join(names)})")
        text = "; ".join(parts) + "."
        if self.shared_words:
            words, names = self.shared_words[0]
            text += f" Shared reason: {words} is among the largest pushes for {', '.join(names)}."
        elif total > 1 and (self.above_a or self.above_b):  # every model tied: no push to share, nothing to say
            text += " No word pair is among the largest pushes of more than one model: they lean on different cells."
        return text


def agreement(by_model: Mapping[str, ModelContrast], leading: int = 3) -> Agreement:
    """Across models: who puts which candidate above, and which word pairs several lean on."""
    groups: dict[str, list[str]] = {"A": [], "B": [], "tie": []}
    users: dict[str, list[str]] = {}
    for name, c in by_model.items():
        groups[c.above].append(name)
        if c.above == "tie":  # no gap, so no push behind it: two copies of one text gave a "shared reason" for a tie
            continue
        for term in c.leading_terms(leading):
            # A keyword feature over the pair has no side of its own: the candidate it favours names it.
            key = (f"{term.words} for {'A' if term.effect > 0 else 'B'}" if term.side == PAIR
                   else f"{term.side}: {term.words}")
            if name not in users.setdefault(key, []):
                users[key].append(name)
    shared = sorted(((k, tuple(v)) for k, v in users.items() if len(v) > 1), key=lambda kv: -len(kv[1]))
    return Agreement(tuple(groups["A"]), tuple(groups["B"]), tuple(groups["tie"]), tuple(shared))


def pair_labels(ranking: Ranking, a: int, b: int) -> tuple[str, str]:
    """Short names for the pair: 'A (#2)' and 'B (#4)'."""
    return f"A (#{a + 1})", f"B (#{b + 1})"


def valid_pair(pair: Sequence[int] | None, count: int, distinct: bool = True) -> tuple[int, int] | None:
    """A (a, b) pair of candidate indices that exist (and differ, with `distinct`), or None."""
    if pair is None or len(pair) != 2:
        return None
    try:
        a, b = int(pair[0]), int(pair[1])
    except (TypeError, ValueError):
        return None
    return (a, b) if 0 <= a < count and 0 <= b < count and (a != b or not distinct) else None


@dataclass(frozen=True)
class CompareView:
    """Everything the Compare page draws for one pair: per model the exact gap split and the
    word-deletion effects of both candidates, and the agreement across models."""

    a: int
    b: int
    contrasts: dict[str, ModelContrast]
    deletions: dict[str, dict[int, DeletionEffects]]
    """model -> candidate index (a and b) -> deletion effects."""
    agreement: Agreement


def compare_view(ranking: Ranking, matchers: Mapping[str, Matcher], a: int, b: int) -> CompareView:
    """The Compare page's data: contrasts for every model, deletion effects (one batched pass per model)."""
    by_model = contrasts(ranking, a, b, matchers)
    deletions = {name: deletion_effects(matchers[name], ranking.question_tokens, ranking.candidate_tokens,
                                        sorted({a, b}))
                 for name in ranking.models if name in matchers}
    return CompareView(a, b, by_model, deletions, agreement(by_model))


def paired_views(explanation_a: Explanation, explanation_b: Explanation, view: str
                 ) -> tuple[MatrixView, MatrixView, float]:
    """The same matrix view of A and of B, and one colour limit for both (the larger |value|)."""
    first, second = matrix_view(explanation_a, view), matrix_view(explanation_b, view)
    values = [float(np.abs(v.matrix).max()) for v in (first, second) if v.matrix.size]
    return first, second, max(values, default=1.0) or 1.0


def shared_view_names(explanation_a: Explanation, explanation_b: Explanation) -> list[str]:
    """Views both candidates have (the same model, so in practice all of them)."""
    second = set(view_names(explanation_b))
    return [v for v in view_names(explanation_a) if v in second]


# ---------------------------------------------------------------- rich display and the gap's waterfall

LARGEST_SHOWN = 8
"""Rows of the gap's largest terms in a rich display; the object holds all of them."""
GAP_TERMS_DRAWN = 10
"""Gap terms drawn one by one in the gap waterfall; the rest are summed into one bar."""


def contrast_html(contrast: ModelContrast, count: int = LARGEST_SHOWN) -> str:
    """The gap between A and B, the sentence that says what carries it, and its largest terms."""
    import pandas as pd

    c = contrast
    split = "exactly over matrix cells" if c.exact else f"approximately over words ({c.method})"
    summary = (f"gap score(A) − score(B) = {c.gap:+.4f}: A (#{c.a + 1}, index {c.a}) {c.score_a:+.4f}, rank "
               f"{c.rank_a}; B (#{c.b + 1}, index {c.b}) {c.score_b:+.4f}, rank {c.rank_b}. Split {split}: "
               f"A − B {signed(c.cells_a - c.cells_b, 4)}, bias difference {signed(c.bias_difference, 4)}"
               + ("" if c.exact else f", residual {signed(c.residual_difference, 4)}")
               + f"; adds up to {c.decomposed_gap:+.4f}.")
    return box_html(f"<div style='font-size:1.1rem'>{html.escape(describe(c))}</div>",
                f"<div style='color:#374151;margin:.3rem 0'>{html.escape(summary)}</div>",
                heading_html(f"The gap's {min(count, len(c.terms))} largest terms (the last rows sum the rest)"),
                table_html(pd.DataFrame(c.rows(limit=count)).drop(columns=["pooling rank"])))


def gap_waterfall(contrast: ModelContrast, count: int = GAP_TERMS_DRAWN) -> list[dict[str, Any]]:
    """The gap as waterfall rows (part, start, end, amount) for `charts.waterfall_chart`: the `count`
    largest terms, the rest summed, the bias (or baseline) difference and, for an approximate
    split, the residual; the last row ends at the gap (to float rounding)."""
    rows, total = [], 0.0
    for number, row in enumerate(contrast.rows(limit=count), 1):
        amount = float(row["effect on gap"])  # type: ignore[arg-type]
        if row["question word"] or row["answer word"]:
            words = (f"{row['question word']} × {row['answer word']}" if row["question word"] and row["answer word"]
                     else str(row["question word"] or row["answer word"]))
            part = f"{number}. {row['candidate']}: {words} ({row['matrix']})"  # numbered: a word pair can recur
        else:
            part = f"{number}. {row['candidate']}: {row['matrix']}"
        rows.append({"part": part, "start": total, "end": total + amount, "amount": amount})
        total += amount
    return rows
