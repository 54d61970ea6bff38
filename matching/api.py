"""MatchLens from Python: load the shipped models, rank candidates, split a gap, evaluate a file.

    import matching
    ranking = matching.rank("who wrote hamlet", ["shakespeare wrote hamlet", "it rained"])
    ranking.to_frame()                      # one row per candidate: every model's and baseline's rank and score
    ranking.explanation(0, model)           # why `model` gave candidate 0 its score (shows itself in Jupyter)
    matching.compare(ranking, 0, 1, model)  # the score gap between candidates 0 and 1, term by term
    matching.evaluate("samples/sample-ranking.csv").to_frame()   # MAP, MRR, ... per model and baseline

Everything here is the app's own machinery (`explain.ranking`, `explain.contrast`,
`evaluation.dataset`), so a notebook sees the numbers the app shows. Models are loaded once
per folder of checkpoints and shared by every call.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from matching.explain.contrast import ModelContrast, contrast
from matching.explain.explanation import Explanation
from matching.explain.matcher import Matcher
from matching.explain.ranking import Ranking
from matching.paths import models_root
from matching.text.data import RankingList
from matching.text.tokens import TextError

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from matching.evaluation.dataset import Evaluation

Models = str | Matcher | Sequence[str | Matcher] | Mapping[str, Matcher] | None
"""Which models: a name, a loaded `Matcher`, a list of either, a {name: Matcher} mapping, or None
for the default set (the models the app opens with, `training.cards.default_models`)."""

__all__ = ["EvaluationResult", "Models", "compare", "evaluate", "gap_chart", "load", "rank"]


@cache
def _checkpoints(folder: str) -> tuple[dict[str, Matcher], dict[str, str]]:
    """Every checkpoint under `folder`, loaded once per process: (models by name, errors by folder)."""
    from matching.training.checkpoint import load_all

    return load_all(folder)


def load(names: str | Sequence[str] | None = None, folder: str | Path | None = None) -> dict[str, Matcher]:
    """The models in a folder of checkpoints, by name.

    Args:
        names: one name or several (in the order wanted); None for every model in the folder.
        folder: a folder of checkpoints (one subfolder per model); None for $MATCHLENS_MODELS when
            set, else the shipped pretrained/ (as the app does).

    Returns:
        {name: Matcher}. Each folder is read once per process; later calls share the models.

    Raises:
        FileNotFoundError: the folder does not exist or holds no usable checkpoint.
        ValueError: a name that is not in the folder (the message lists those that are).
    """
    root = Path(folder) if folder is not None else models_root()
    loaded, errors = _checkpoints(str(root.resolve()))
    if not loaded:
        problems = "; ".join(errors.values()) or "no checkpoint folders in it"
        raise FileNotFoundError(f"no usable checkpoint under {root}: {problems}")
    if names is None:
        for broken, error in errors.items():
            warnings.warn(f"skipped {broken}: {error}", stacklevel=2)
        return dict(loaded)
    wanted = [names] if isinstance(names, str) else list(names)
    missing = [name for name in wanted if name not in loaded]
    if missing:
        broken = [f"{name} ({errors[name]})" for name in missing if name in errors]
        raise ValueError(f"unknown model(s) {missing} under {root}; available: {sorted(loaded)}"
                         + (f"; could not load: {'; '.join(broken)}" if broken else ""))
    return {name: loaded[name] for name in wanted}


def _matchers(models: Models) -> dict[str, Matcher]:
    """`models` (see `Models`) as {name: Matcher}, loading the named ones."""
    from matching.training.cards import default_models

    if models is None:
        loaded = load()
        return {name: loaded[name] for name in default_models(list(loaded))}
    if isinstance(models, Matcher):
        return {models.name: models}
    if isinstance(models, str):
        return load([models])
    if isinstance(models, Mapping):
        chosen = dict(models)
    elif not isinstance(models, Iterable):
        raise TypeError(f"models: give names, Matchers, a {{name: Matcher}} mapping or None, not "
                        f"{type(models).__name__}")
    else:
        items = list(models)
        named = load([m for m in items if isinstance(m, str)]) if any(isinstance(m, str) for m in items) else {}
        chosen = {}
        for item in items:
            if isinstance(item, Matcher):
                chosen[item.name] = item
            elif isinstance(item, str):
                chosen[item] = named[item]
            else:
                raise TypeError(f"a model is a name or a Matcher, not {type(item).__name__}")
    if not chosen:
        raise ValueError("no models given: pass names, Matchers, or None for the default set")
    return chosen


def rank(question: str, candidates: Sequence[str], models: Models = None,
         labels: Sequence[int] | None = None) -> Ranking:
    """Score every candidate for `question` with each model (one traced pass per model) and the baselines.

    Args:
        question: the question text.
        candidates: the candidate answers (a list of texts; at most `text.inputs.MAX_CANDIDATES`).
        models: names, Matchers or a {name: Matcher} mapping; None for the default set.
        labels: optional 0/1 per candidate (1 = correct), kept on the ranking and in `to_frame()`.

    Returns:
        A `Ranking`: `.to_frame()` for the table, `.explanation(candidate, model)` for why a model
        gave a candidate its score; it shows its ranks in Jupyter.

    Raises:
        TextError: a text without words, no candidates, too many, or labels that do not fit.
    """
    from matching.explain.ranking import rank as rank_texts

    if isinstance(candidates, str):
        raise TypeError("candidates: give a list of texts, not one string")
    return rank_texts(question, list(candidates), _matchers(models), labels)


def compare(ranking: Ranking, a: int | str, b: int | str, model: str | Matcher | None = None) -> ModelContrast:
    """Why `model` puts candidate `a` above or below candidate `b`: the gap score(a) - score(b), split.

    A model whose score splits exactly over its matrix cells has the gap split exactly (cells of a,
    minus cells of b, plus the bias difference); another has it split over words by integrated
    gradients (approximate; the residual is reported). See `explain.contrast`.

    Args:
        ranking: from `rank`.
        a, b: candidates, by 0-based position or by text.
        model: a name or a Matcher among those that ranked (None: the first). Integrated gradients
            need the model itself: a name is the model that ranked (a ranking made without its models
            looks the name up among the checkpoints).

    Returns:
        A `ModelContrast`: `.gap`, `.terms` (largest first), `.rows()`; it shows itself in Jupyter,
        and `gap_chart` draws it.
    """
    if not ranking.models:
        raise ValueError("no model ranked these candidates (baselines only): there is no gap to split")
    name = next(iter(ranking.models)) if model is None else model.name if isinstance(model, Matcher) else model
    if name not in ranking.models:
        raise KeyError(f"{name!r} did not rank these candidates; they were ranked by {list(ranking.models)}")
    first, second = ranking.candidate_index(a), ranking.candidate_index(b)
    matcher = model if isinstance(model, Matcher) else ranking.models[name].matcher
    try:
        return contrast(ranking, name, first, second, matcher)
    except ValueError:
        if matcher is not None:
            raise
    # The score does not split over cells and the ranking kept no model: integrated gradients need one, by its name.
    return contrast(ranking, name, first, second, load([name])[name])


def gap_chart(comparison: ModelContrast, terms: int = 10) -> alt.LayerChart:
    """The gap of `compare` as a waterfall (`explain.charts.waterfall_chart`): its `terms` largest
    terms one by one, the rest summed, then the bias difference; the bars end at the gap."""
    from matching.explain.charts import waterfall_chart
    from matching.explain.contrast import gap_waterfall

    heading = (f"{comparison.model}: score(A) − score(B), A = #{comparison.a + 1}, B = #{comparison.b + 1}, "
               + ("split exactly" if comparison.exact else "split approximately (integrated gradients)"))
    return waterfall_chart(gap_waterfall(comparison, terms), comparison.gap, heading, total="gap")


def cells(explanation: Explanation) -> pd.DataFrame:
    """The pooled cells of one explanation (`ranking.explanation(i, model)`) as a table, as the Pooled cells page
    shows them: the words each cell joins ('word (position)', from 1), its value, its contribution to the score and
    its signed share of the cells' |contributions|; empty for a family that pools no cells (MCAN: see its `terms` and
    `word_weights`). The contributions and the bias (`Explanation.bias_contribution`) add up to the learned match
    exactly; a keyword model's score adds its keyword term (`Explanation.keyword_score`, whose features are in
    `terms`), so there the shares are of the learned match, not of the whole score."""
    import pandas as pd

    from matching.evaluation.tables import cell_rows

    if not isinstance(explanation, Explanation):
        raise TypeError(f"cells() takes one explanation, ranking.explanation(candidate, model), not "
                        f"{type(explanation).__name__}")
    return pd.DataFrame(cell_rows(explanation))


@dataclass(frozen=True)
class EvaluationResult:
    """Every model and baseline evaluated on one file: metrics overall, per question and per slice."""

    evaluation: Evaluation
    """The evaluation itself (`evaluation.dataset.Evaluation`): metrics, top answers and slices per question."""
    models: dict[str, Matcher] = field(repr=False)
    source: str
    """What was evaluated (a file or folder)."""
    lists: list[RankingList] = field(repr=False)
    """The evaluated questions with their candidates and labels, in the order of the results."""

    def __repr__(self) -> str:  # the evaluation's arrays are for the methods below, not for a notebook's cell
        return (f"EvaluationResult({self.source!r}: {self.evaluated} questions, {len(self.skipped)} skipped; "
                f"models {list(self.models)}; .to_frame() for the metrics)")

    @property
    def evaluated(self) -> int:
        """Questions evaluated (those with words and candidates)."""
        return self.evaluation.evaluated

    @property
    def skipped(self) -> list[str]:
        """Questions left out, each with why."""
        return self.evaluation.skipped

    def to_frame(self) -> pd.DataFrame:
        """One row per model, then per baseline (index: its name): each metric's mean over the questions
        that have a correct candidate, and whether the row is a model or a baseline."""
        import pandas as pd

        frame = pd.DataFrame(self.evaluation.table()).set_index("system")
        frame["kind"] = ["model" if system in self.models else "baseline" for system in frame.index]
        return frame

    def markdown(self) -> str:
        """The metrics as the command line prints them (`evaluation.dataset.format_table`)."""
        from matching.evaluation.dataset import format_table

        return format_table(self.evaluation)

    def questions(self) -> pd.DataFrame:
        """One row per evaluated question (index: its position, for `ranking`): qid, question, candidate
        and correct counts, each system's AP and rank of its first correct candidate, and whether the
        models disagree on the top answer. A rank is a whole number (1 = top), or <NA> where the question has no
        correct candidate."""
        import pandas as pd

        frame = pd.DataFrame(self.evaluation.per_question)
        for column in [c for c in frame.columns if c.endswith(" first correct")]:  # not floats: 1, not 1.0
            frame[column] = frame[column].astype("Int64")
        return frame

    def slices(self) -> dict[str, pd.DataFrame]:
        """Per slicing (question word, correct-answer length, word overlap; `evaluation.slices`): one row
        per slice with its question count and each system's MAP."""
        import pandas as pd

        return {slicing: pd.DataFrame(rows) for slicing, rows in self.evaluation.slice_rows().items()}

    def keyword_parts(self, max_questions: int | None = None) -> pd.DataFrame:
        """Which part carries each model with a keyword term on this file (index: the model), as the Evaluate page's
        expander and each card's keyword study give it: MAP by the whole score, by the learned match alone and by
        the keyword term alone, and in how many questions the keyword term changes the top answer
        (`evaluation.studies.keyword_rows`; every pair is scored three times, so `max_questions` caps the cost)."""
        import pandas as pd

        from matching.evaluation.studies import keyword_rows

        columns = ["model", "MAP", "learned match alone", "keywords alone", "top answer changed", "questions"]
        return pd.DataFrame(keyword_rows(self.lists, self.models, max_questions), columns=columns).set_index("model")

    def top_answers(self, system: str) -> list[int]:
        """Per evaluated question, the index of `system`'s top answer in its candidates (from 0, for
        `ranking(question).explanation(index)`; the app and `evaluate --per-question` number candidates from 1): a
        model's or a baseline's, the first of a tie."""
        if system not in self.evaluation.systems:
            raise KeyError(f"{system!r} was not evaluated; the systems are {self.evaluation.systems}")
        return self.evaluation.top(system).tolist()

    def disagreements(self, a: str, b: str) -> pd.DataFrame:
        """The questions where models `a` and `b` put different candidates on top (index: the question's
        position, for `ranking`): each one's top answer (its index in the candidates, from 0, as `top_answers`),
        whether it is correct, and each one's AP."""
        import pandas as pd

        tops_a, tops_b = self.top_answers(a), self.top_answers(b)
        per_question = self.evaluation.per_question
        # The columns are named even where no question differs, so that a filter on them finds no rows rather than
        # failing (the three default models agree on every top answer of the shipped sample).
        columns = ["qid", "question", f"{a} top answer", f"{b} top answer", f"{a} top is correct",
                   f"{b} top is correct", f"{a} AP", f"{b} AP"]
        rows = {}
        for n, (top_a, top_b) in enumerate(zip(tops_a, tops_b, strict=True)):
            if top_a == top_b:
                continue
            item, row = self.lists[n], per_question[n]
            rows[n] = [item.qid, item.question, top_a, top_b, bool(item.labels[top_a]), bool(item.labels[top_b]),
                       row[f"{a} AP"], row[f"{b} AP"]]
        frame = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
        frame.index.name = "position"  # what `ranking` takes; "question" named both it and the question's text
        return frame

    def ranking(self, question: int | str) -> Ranking:
        """One evaluated question (its position, or its qid) ranked again with the same models, labels
        kept: its explanations come from that pass."""
        lists = self.lists
        if isinstance(question, str):
            positions = [n for n, item in enumerate(lists) if item.qid == question]
            if not positions:
                raise KeyError(f"no evaluated question has qid {question!r}")
            question = positions[0]
        if isinstance(question, bool) or not isinstance(question, int | np.integer):
            raise TypeError(f"a question is its position (an int) or its qid (a str), not {type(question).__name__}")
        if not 0 <= question < len(lists):
            raise IndexError(f"question {question}: this evaluation holds questions 0 to {len(lists) - 1}")
        item = lists[question]
        # Every candidate, as the evaluation scored them: a collection's list may be longer than what one typed
        # ranking takes (TrecQA test has a question of 112 candidates).
        from matching.explain.ranking import rank as rank_texts
        from matching.text.inputs import MAX_CANDIDATES

        try:
            return rank_texts(item.question, list(item.candidates), self.models, item.labels,
                              max_candidates=max(MAX_CANDIDATES, len(item.candidates)))
        except TextError as error:  # a candidate with no words: evaluation ranks it last, a ranking cannot read it
            raise TextError(f"question at position {question} ({item.qid}): {error}; the evaluation ranked it last, "
                            "but a ranking needs words in every candidate") from None

    def _repr_html_(self) -> str:
        import html

        skipped = f", {len(self.skipped)} skipped" if self.skipped else ""
        table = self.to_frame().reset_index().to_html(index=False, escape=True, border=0, float_format="{:.4f}".format)
        return (f"<div class='matchlens'><div><b>{html.escape(self.source)}</b>: {self.evaluated} questions"
                f"{skipped}</div>{table}</div>")


def evaluate(data: str | Path | Sequence[RankingList], models: Models = None) -> EvaluationResult:
    """Evaluate models and the trivial baselines on a ranking file, as the app's Evaluate page does.

    Args:
        data: a CSV (question, candidate, label), a WikiQA TSV, a folder of .toks files (one split), a
            DataFrame of the CSV's columns, or ranking lists already read (`text.data.RankingList`).
        models: names, Matchers or a {name: Matcher} mapping; None for the default set.

    Returns:
        An `EvaluationResult`: `.to_frame()` (metrics per model and baseline), `.questions()`,
        `.slices()`, `.disagreements(a, b)`, `.ranking(question)`, `.keyword_parts()`.
    """
    from matching.evaluation.dataset import evaluate as evaluate_lists
    from matching.text.data import DataError, parse_ranking_file, read_ranking_file, split_folders

    if isinstance(data, str | Path):
        splits = [] if (Path(data) / "a.toks").is_file() else split_folders(Path(data))  # not one split itself
        if splits:
            raise ValueError(f"{data} is a folder of splits ({', '.join(splits)}): give one, e.g. "
                             f"{Path(data) / splits[0]}")
        source, lists = str(data), read_ranking_file(data)
    elif hasattr(data, "to_csv") and hasattr(data, "columns"):  # a DataFrame of the CSV's columns
        source = f"a table of {len(data)} rows"
        try:
            lists = parse_ranking_file(data.to_csv(index=False).encode("utf-8"), source)
        except DataError as error:  # the CSV the table was written as: its line N is the table's row N - 2
            raise DataError(re.sub(r"^(a table of \d+ rows) line (\d+)",
                                   lambda m: f"{m[1]}, row {int(m[2]) - 2} (from 0)", str(error))) from None
    else:
        if not isinstance(data, Iterable):
            raise TypeError(f"data: give a file, a folder, a DataFrame (question, candidate, label) or RankingLists, "
                            f"not {type(data).__name__}")
        lists = list(data)
        source = f"{len(lists)} ranking lists"
        wrong = next((item for item in lists if not isinstance(item, RankingList)), None)
        if wrong is not None:
            raise TypeError(f"data: give a file, a folder, a DataFrame (question, candidate, label) or RankingLists, "
                            f"not a list holding {type(wrong).__name__}")
    if not lists:
        raise ValueError(f"{source}: no question to evaluate")
    matchers = _matchers(models)
    evaluation = evaluate_lists(lists, matchers)
    return EvaluationResult(evaluation, matchers, source, evaluation.evaluated_lists(lists))
