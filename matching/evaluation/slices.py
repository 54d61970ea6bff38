"""Error analysis on an evaluated file: top answers, metrics per slice, identical-word reliance.

Slices group the questions (metrics are per question):
- question word: the first of what / who / when / where / how / why in the question, else 'other';
- correct-answer length: the mean length (words) of the question's correct candidates;
- word overlap: the largest share of the question's words that one correct candidate repeats.
Questions without a correct candidate have no metrics and fall in no slice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from matching.explain.matcher import Matcher
from matching.explain.trust import is_word
from matching.text.data import RankingList
from matching.text.tokenized import TokenizedList, tokenize_lists
from matching.text.tokens import Token

QUESTION_WORDS = ("what", "who", "when", "where", "how", "why")
LENGTH_BINS = ((1, 10, "1-10 words"), (11, 20, "11-20 words"), (21, 40, "21-40 words"), (41, 10**9, "41+ words"))
OVERLAP_BINS = ((0.0, 0.0, "none"), (1e-9, 1 / 3, "up to 1/3"), (1 / 3 + 1e-9, 2 / 3, "1/3 to 2/3"),
                (2 / 3 + 1e-9, 1.0, "over 2/3"))
SLICINGS = ("question word", "correct-answer length", "word overlap")
TOP_ANSWER_CHARS = 60


def question_word(tokens: Sequence[Token]) -> str:
    for token in tokens:
        if token.key in QUESTION_WORDS:
            return token.key
    return "other"


def _words(tokens: Sequence[Token]) -> set[str]:
    return {t.key for t in tokens if is_word(t)}


def overlap(question: Sequence[Token], candidate: Sequence[Token]) -> float:
    """Share of the question's distinct words the candidate repeats."""
    asked = _words(question)
    return len(asked & _words(candidate)) / len(asked) if asked else 0.0


def _bin(value: float, bins: Sequence[tuple[float, float, str]]) -> str:
    """The first bin (in ascending order) whose upper end is at least `value`: a mean length of
    10.5 words is in 11-20, an overlap just above 0 in "up to 1/3"."""
    return next((label for _, high, label in bins if value <= high), bins[-1][2])


def question_slices(item: TokenizedList) -> dict[str, str] | None:
    """The slice of each slicing for one question (None without a correct candidate)."""
    correct = [c for c, label in zip(item.candidates, item.item.labels, strict=True) if label]
    if not correct:
        return None
    length = float(np.mean([len([t for t in c if is_word(t)]) for c in correct]))
    return {"question word": question_word(item.question),
            "correct-answer length": _bin(max(length, 1.0), LENGTH_BINS),
            "word overlap": _bin(max(overlap(item.question, c) for c in correct), OVERLAP_BINS)}


def slice_rows(slices: Sequence[Mapping[str, str] | None], ap: Mapping[str, Sequence[float]]
               ) -> dict[str, list[dict[str, object]]]:
    """slicing -> rows (slice, questions, each system's MAP), slices in a fixed order.

    `slices`: each question's slices (`question_slices`); `ap`: system -> each question's AP, as
    the evaluation computed it (`Evaluation.slice_rows` passes both)."""
    order = {"question word": [*QUESTION_WORDS, "other"], "correct-answer length": [b[2] for b in LENGTH_BINS],
             "word overlap": [b[2] for b in OVERLAP_BINS]}
    values = {system: np.asarray(column, dtype=np.float64) for system, column in ap.items()}
    tables: dict[str, list[dict[str, object]]] = {}
    for slicing in SLICINGS:
        rows = []
        for label in order[slicing]:
            members = [n for n, s in enumerate(slices) if s is not None and s[slicing] == label]
            if not members:
                continue
            row: dict[str, object] = {slicing: label, "questions": len(members)}
            for system, column in values.items():
                row[f"{system} MAP"] = float(np.mean(column[members]))
            rows.append(row)
        tables[slicing] = rows
    return tables


def top_answers(lists: Sequence[RankingList], tops: Mapping[str, Sequence[int]],
                limit: int | None = TOP_ANSWER_CHARS) -> list[dict[str, str]]:
    """Per question (`lists`, in the order of each model's `tops`): each model's top answer,
    shortened to `limit` characters (None: whole, as an export gives it)."""
    rows = []
    for n, item in enumerate(lists):
        row = {}
        for model, top in tops.items():
            text = " ".join(item.candidates[int(top[n])].split())
            row[model] = text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
        rows.append(row)
    return rows


def identical_word_share(lists: Sequence[RankingList], matchers: Mapping[str, Matcher],
                         max_questions: int | None = None,
                         progress: Callable[[float, str], None] | None = None) -> list[dict[str, object]]:
    """Per model: the share of |pooled-cell contributions| from cells joining identical words (same lookup key).

    Summed over every (question, candidate) pair of the file; a high share means the model
    mostly scores exact word matches, as word overlap and BM25 do. None for a model with no pooled
    cells (MCAN: no cell adds to its score, so no share is defined; a 0 read as "beyond exact words").
    A keyword term, exact-word matching by design, is not a pooled cell and is not in the share.
    """
    kept, _ = tokenize_lists(lists)
    kept = [t for t in kept if all(t.candidates)]
    if max_questions is not None:
        kept = kept[:max_questions]
    rows: list[dict[str, object]] = []
    for index, (name, matcher) in enumerate(matchers.items()):
        identical = total = 0.0
        for item in kept:
            for explanation in matcher.explain_tokens(item.question, item.candidates):
                q, a = explanation.question_tokens, explanation.answer_tokens
                for cell in explanation.pooled_cells:
                    if cell.i is None or cell.j is None:
                        continue
                    size = abs(cell.contribution)
                    total += size
                    if q[cell.i].key == a[cell.j].key:
                        identical += size
        rows.append({"model": name, "pairs": sum(len(t.candidates) for t in kept),
                     "identical-word share": identical / total if total else None})
        if progress:
            progress((index + 1) / len(matchers), name)
    return rows


def empty_filter_reason(rows: Sequence[Mapping[str, object]], models: Sequence[str], disagree: bool, low: bool,
                        threshold: int) -> str:
    """Why the per-question filters leave no question, in a sentence built from the numbers
    (`rows`: the evaluation's per-question rows; `models`: the systems that are models)."""
    with_correct = [r for r in rows if r.get(f"{models[0]} first correct") is not None] if models else []
    reasons = []
    if disagree:
        count = sum(bool(r["models disagree"]) for r in rows)
        if not count:
            reasons.append(f"the models agree on the top answer for all {len(rows)} questions")
    if low and models:
        worst = max((int(r[f"{m} first correct"]) for r in with_correct for m in models  # type: ignore[call-overload]
                     if r[f"{m} first correct"] is not None), default=None)
        if not with_correct:
            reasons.append("no question has a correct candidate marked, so no correct answer has a rank")
        elif worst is not None and worst < threshold:
            reasons.append(f"every model puts a correct answer at rank {worst} or better for every question "
                           f"(the filter asks for rank ≥ {threshold})")
    if not reasons:
        reasons.append("no question meets both filters at once")
    return "No question shown: " + "; ".join(reasons) + "."
