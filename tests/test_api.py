"""The Python API (matching.load / rank / compare / evaluate), its rich display, the console command and the wheel.

Tiny seeded models saved into temporary folders stand in for the shipped ones, except where the
shipped default set is the behaviour under test.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import MatcherFactory, toy_lists

import matching
from matching.__main__ import app_command, build_parser, main
from matching.evaluation.dataset import evaluate as evaluate_lists
from matching.evaluation.metrics import METRICS, question_metrics
from matching.evaluation.slices import SLICINGS
from matching.explain.contrast import INTEGRATED_GRADIENTS, ModelContrast
from matching.explain.matcher import Matcher
from matching.explain.ranking import ModelRanking, rank_column, score_column
from matching.paths import app_dir
from matching.text.baselines import BASELINES
from matching.text.data import DataError, RankingList
from matching.text.tokens import TextError
from matching.training.cards import default_models
from matching.training.checkpoint import save_checkpoint

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "who wrote hamlet"
CANDIDATES = ["hamlet was written by william shakespeare", "the river flows north", "hamlet is a play",
              "the river flows north"]


@pytest.fixture(scope="module")
def pair(make_matcher: MatcherFactory) -> dict[str, Matcher]:
    """Two tiny models: one without attention, one with a question gate (shaded words)."""
    return {"plain": make_matcher(seed=1, name="plain"),
            "gated": make_matcher(seed=2, name="gated", family="amvlstm", attention="question")}


@pytest.fixture(scope="module")
def folder(pair: dict[str, Matcher], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of checkpoints holding the two tiny models."""
    root = tmp_path_factory.mktemp("checkpoints")
    for name, matcher in pair.items():
        save_checkpoint(matcher, root / name, {"name": name})
    return root


# ---------------------------------------------------------------- import and load

def test_import_matching_is_light() -> None:
    """`import matching` imports no torch, pandas or streamlit; the API itself never imports streamlit."""
    code = ("import sys, matching\n"
            "assert not {'torch', 'pandas', 'streamlit'} & set(sys.modules), sorted(sys.modules)\n"
            "assert callable(matching.rank) and 'torch' in sys.modules\n"
            "assert 'streamlit' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


def test_api_names_are_re_exported() -> None:
    for name in ("load", "rank", "compare", "evaluate", "gap_chart", "EvaluationResult"):
        assert getattr(matching, name) is getattr(matching.api, name)
        assert getattr(matching, name).__doc__
    assert set(matching.__all__) <= set(dir(matching))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        matching.nothing  # noqa: B018


def test_load_reads_a_folder(folder: Path) -> None:
    loaded = matching.load(folder=folder)
    assert sorted(loaded) == ["gated", "plain"]
    assert all(isinstance(m, Matcher) for m in loaded.values())
    # One line each: printing the models printed every card and network (thousands of characters a model).
    assert repr(loaded["gated"]) == f"Matcher('gated', family 'amvlstm', from {folder / 'gated'})"
    assert list(matching.load(["plain", "gated"], folder)) == ["plain", "gated"]  # the order asked for
    assert matching.load("gated", folder)["gated"] is loaded["gated"]  # loaded once per folder, shared
    with pytest.raises(ValueError, match=r"unknown model\(s\) \['nope'\].*available: \['gated', 'plain'\]"):
        matching.load(["nope"], folder)


def test_load_reports_a_missing_folder_and_broken_checkpoints(folder: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no usable checkpoint"):
        matching.load(folder=tmp_path / "nothing-here")
    shutil.copytree(folder, tmp_path / "mixed")
    (tmp_path / "mixed" / "broken").mkdir()
    (tmp_path / "mixed" / "broken" / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.warns(UserWarning, match="skipped broken"):
        assert sorted(matching.load(folder=tmp_path / "mixed")) == ["gated", "plain"]


def test_load_follows_matchlens_models(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATCHLENS_MODELS", str(folder))
    assert sorted(matching.load()) == ["gated", "plain"]


def test_default_models_are_the_apps_default_set() -> None:
    """models=None ranks with the models the app opens with (the shipped checkpoints)."""
    ranking = matching.rank(QUESTION, CANDIDATES[:2])
    assert list(ranking.models) == default_models(list(matching.load()))
    assert len(ranking.models) >= 1


# ---------------------------------------------------------------- rank, to_frame, explanation

def test_rank_accepts_names_matchers_and_mappings(pair: dict[str, Matcher], folder: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    by_mapping = matching.rank(QUESTION, CANDIDATES, pair)
    by_list = matching.rank(QUESTION, CANDIDATES, [pair["gated"], pair["plain"]])
    assert list(by_mapping.models) == ["plain", "gated"] and list(by_list.models) == ["gated", "plain"]
    np.testing.assert_array_equal(by_mapping.models["plain"].scores, by_list.models["plain"].scores)
    monkeypatch.setenv("MATCHLENS_MODELS", str(folder))
    by_name = matching.rank(QUESTION, CANDIDATES, ["plain", pair["gated"]])
    assert list(by_name.models) == ["plain", "gated"]
    np.testing.assert_allclose(by_name.models["plain"].scores, by_mapping.models["plain"].scores, atol=1e-6)
    with pytest.raises(TypeError, match="a list of texts"):
        matching.rank(QUESTION, "one string", pair)
    with pytest.raises(TextError, match="no words"):
        matching.rank(QUESTION, ["fine", "   "], pair)
    with pytest.raises(ValueError, match="no models given"):
        matching.rank(QUESTION, CANDIDATES, [])


def test_to_frame_has_every_system_rank_and_score(pair: dict[str, Matcher]) -> None:
    ranking = matching.rank(QUESTION, CANDIDATES, pair, labels=[1, 0, 0, 0])
    frame = ranking.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(CANDIDATES)
    assert frame["candidate"].tolist() == CANDIDATES and frame["correct"].tolist() == [True, False, False, False]
    for name, result in ranking.models.items():
        np.testing.assert_array_equal(frame[score_column(name)].to_numpy(), result.scores)
        np.testing.assert_array_equal(frame[rank_column(name)].to_numpy(), result.ranks)
    for name in BASELINES:
        np.testing.assert_array_equal(frame[rank_column(name)].to_numpy(), ranking.baseline_ranks[name])
    # Candidates 1 and 3 are the same text: the same score, and the shared best rank of their group.
    plain = frame[rank_column("plain")]
    assert plain[1] == plain[3] and (plain < plain[1]).sum() == plain[1] - 1


def test_explanation_by_position_or_text(pair: dict[str, Matcher]) -> None:
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    explanation = ranking.explanation(2, "gated")
    assert explanation is ranking.models["gated"].explanations[2]
    assert ranking.explanation("hamlet is a play", "gated") is explanation
    assert ranking.explanation(-2, "gated") is explanation
    assert ranking.explanation(0).model == "plain"  # the first model by default
    assert explanation.score == pytest.approx(float(ranking.models["gated"].scores[2]))
    with pytest.raises(IndexError, match="4 candidates"):
        ranking.explanation(4, "gated")
    with pytest.raises(ValueError, match="no candidate reads"):
        ranking.explanation("not a candidate", "gated")
    with pytest.raises(KeyError, match="did not rank"):
        ranking.explanation(0, "other")
    with pytest.raises(TypeError, match="position"):
        ranking.explanation(1.0, "gated")  # type: ignore[arg-type]


# ---------------------------------------------------------------- compare and the gap chart

def test_cells_are_the_pooled_cells_with_their_words_and_add_up(pair: dict[str, Matcher],
                                                                  make_matcher: MatcherFactory) -> None:
    """`pd.DataFrame(explanation.pooled_cells)` gave indices, not words; `matching.cells` is the page's table."""
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    explanation = ranking.explanation(1, "gated")
    table = matching.cells(explanation)
    assert len(table) == len(explanation.pooled_cells)
    words = {token.text for token in explanation.question_tokens}
    assert all(row.startswith(tuple(words)) or row == "(filler)" for row in table["question"])
    assert table["contribution"].sum() + explanation.bias_contribution == pytest.approx(explanation.score, abs=1e-5)
    mcan = matching.rank(QUESTION, CANDIDATES, {"mcan": make_matcher(seed=1, name="mcan", family="mcan")})
    assert matching.cells(mcan.explanation(0)).empty  # no pooled cells: its terms split the score
    # A keyword model: the cells and the bias add up to the learned match, and the keyword term makes the score (the
    # docstring said the cells and bias made the score: a reader took each share for twice what it is).
    keyed = make_matcher(seed=1, name="keyed", family="mvlstm", exact_match="idf", idf_words=3, keywords=True,
                         keyword_words=3)
    explained = matching.rank(QUESTION, CANDIDATES, {"keyed": keyed}).explanation(0)
    parts = matching.cells(explained)["contribution"].sum() + explained.bias_contribution
    assert explained.keyword_score != 0 and parts == pytest.approx(explained.learned_score, abs=1e-5)
    assert parts + explained.keyword_score == pytest.approx(explained.score, abs=1e-5)
    assert "add up to the learned match" in " ".join(matching.cells.__doc__.split())


def test_compare_splits_the_gap_exactly(pair: dict[str, Matcher]) -> None:
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    for name in pair:
        split = matching.compare(ranking, 0, "the river flows north", name)
        assert isinstance(split, ModelContrast) and split.exact and (split.a, split.b) == (0, 1)
        scores = ranking.models[name].scores
        assert split.gap == pytest.approx(float(scores[0] - scores[1]), abs=1e-6)
        assert abs(split.decomposed_gap - split.gap) < 1e-5
        assert abs(sum(t.effect for t in split.terms) + split.bias_difference - split.gap) < 1e-5
    assert matching.compare(ranking, 0, 1, pair["gated"]).model == "gated"
    with pytest.raises(KeyError, match="did not rank"):
        matching.compare(ranking, 0, 1, "other")


def test_compare_uses_the_model_when_the_score_does_not_split(pair: dict[str, Matcher]) -> None:
    """Without a cell split the gap goes over words by integrated gradients, which need the model."""
    ranking = matching.rank(QUESTION, CANDIDATES[:2], {"plain": pair["plain"]})
    result = ranking.models["plain"]
    unsplit = [replace(e, cell_contributions={}, cell_bias=None) for e in result.explanations]
    ranking = replace(ranking, models={"plain": ModelRanking(result.scores, result.ranks, unsplit)})
    split = matching.compare(ranking, 0, 1, pair["plain"])
    assert split.method == INTEGRATED_GRADIENTS and not split.exact
    assert abs(split.decomposed_gap - split.gap) < 1e-5  # the residual is part of the split


def test_compare_by_name_splits_with_the_model_that_ranked(make_matcher) -> None:  # type: ignore[no-untyped-def]
    """A name is the model that ranked, not a shipped checkpoint of that name: a researcher's own `mcan` (another
    folder) was split with the shipped one's gradients, a residual of 3.54 on a gap of 4.45, and no warning."""
    own = make_matcher(name="mcan", family="mcan")  # a tiny MCAN, named as a shipped checkpoint is
    ranking = matching.rank(QUESTION, CANDIDATES, [own])
    by_name, by_model = matching.compare(ranking, 0, 1, "mcan"), matching.compare(ranking, 0, 1, own)
    assert by_name.method == INTEGRATED_GRADIENTS
    assert by_name.residual_difference == pytest.approx(by_model.residual_difference, abs=1e-9)
    assert [t.effect for t in by_name.terms] == pytest.approx([t.effect for t in by_model.terms], abs=1e-9)
    assert matching.compare(ranking, 0, 1).residual_difference == pytest.approx(by_model.residual_difference)


def test_gap_chart_draws_the_gap(pair: dict[str, Matcher]) -> None:
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    split = matching.compare(ranking, 0, 2, "plain")
    spec = matching.gap_chart(split, terms=3).to_dict()
    bars, total = spec["layer"][0], spec["layer"][1]
    rows = spec["datasets"][bars["data"]["name"]]
    assert len(rows) == 3 + 2  # three terms, the rest summed, the bias difference
    assert sum(r["amount"] for r in rows) == pytest.approx(split.gap, abs=1e-5)
    assert rows[-1]["end"] == pytest.approx(split.gap, abs=1e-5)
    assert spec["datasets"][total["data"]["name"]] == [{"label": "gap", "start": 0.0, "end": split.gap}]


# ---------------------------------------------------------------- rich display

HOSTILE = "<script>alert('x')</script> & <b>bold</b>"


class Reader(HTMLParser):
    """What a browser makes of a document: its tags and its visible text."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.parts: list[str] = []
        self.feed(document)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.parts)


def test_rich_display_escapes_every_user_text(make_matcher: MatcherFactory) -> None:
    gated = make_matcher(seed=3, name="<i>gated</i>", family="amvlstm", attention="both")
    ranking = matching.rank(f"who wrote {HOSTILE}", ["shakespeare wrote hamlet", f"it rained {HOSTILE}"], [gated])
    documents = {"ranking": ranking._repr_html_(), "explanation": ranking.explanation(1)._repr_html_(),
                 "contrast": matching.compare(ranking, 0, 1)._repr_html_()}
    for what, document in documents.items():
        assert "<script" not in document and "<b>bold" not in document and "<i>" not in document, what
        page = Reader(document)
        assert not {"script", "i"} & page.tags, what  # the markup's own <b> aside, no tag came from the texts
        assert "<i>gated</i>" in page.text, what  # ... which read as text
    for what in ("ranking", "explanation"):  # these show the texts themselves
        assert HOSTILE in Reader(documents[what]).text, what


def test_explanation_display_shades_the_weighted_words(pair: dict[str, Matcher]) -> None:
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    gated = ranking.explanation(0, "gated")._repr_html_()
    assert "Word weights: attention gate" in gated
    assert gated.count(" x uniform)") == len(QUESTION.split())  # each question word shaded, with its weight
    assert gated.count("title='not attended'") == len(CANDIDATES[0].split())  # the answer is not weighed
    plain = ranking.explanation(0, "plain")._repr_html_()
    assert "weighs no words" in plain and "largest contributions" in plain and "william" in plain


def test_contrast_display_lists_the_largest_terms(pair: dict[str, Matcher]) -> None:
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    split = matching.compare(ranking, 0, 1, "plain")
    document = split._repr_html_()
    assert f"{split.gap:+.4f}" in document
    largest = split.terms[0]
    assert f"{largest.effect:+.4f}" in document and largest.question_word in document


# ---------------------------------------------------------------- evaluate

@pytest.fixture(scope="module")
def sample_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("evaluate") / "toy.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "candidate", "label"])
        for item in toy_lists(0, 6):
            writer.writerows([item.question, c, label] for c, label in zip(item.candidates, item.labels, strict=True))
    return path


def test_evaluate_and_rank_say_what_is_wrong_with_natural_inputs(pair: dict[str, Matcher], sample_csv: Path,
                                                                 toy_data: Path) -> None:
    """What a notebook user tries first: the CSV read by pandas, a data set's folder, a typo'd argument. Each read
    an AttributeError, "a.toks: file missing", a table of NaNs or "'int' object is not iterable" before."""
    frame = pd.read_csv(sample_csv)
    from_frame = matching.evaluate(frame, pair)
    assert from_frame.evaluated == 6 and from_frame.to_frame().equals(matching.evaluate(sample_csv, pair).to_frame())
    wrong = frame.copy()
    wrong.loc[3, "label"] = 2
    with pytest.raises(DataError, match=r"^a table of \d+ rows, row 3 \(from 0\) \(question .*label '2' is not 0 or 1"):
        matching.evaluate(wrong, pair)
    assert matching.evaluate(frame.assign(label=frame["label"].astype(bool)), pair).to_frame().equals(
        from_frame.to_frame())  # a column of booleans is labels
    with pytest.raises(ValueError, match=r"is a folder of splits \(dev, test, train\): give one, e.g. .*/dev$"):
        matching.evaluate(toy_data, pair)
    with pytest.raises(ValueError, match="no question to evaluate"):
        matching.evaluate([], pair)
    with pytest.raises(TypeError, match="not a list holding str"):
        matching.evaluate(["who wrote hamlet"], pair)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="models: give names, Matchers.*not int"):
        matching.rank(QUESTION, CANDIDATES, 3)  # type: ignore[arg-type]
    for wrong in ([-1, 1, 0, 0], [0.5, 0, 0, 0], [2, 0, 0, 0], ["yes", "no", "no", "no"]):
        with pytest.raises(TextError, match=f"label 1 is {wrong[0]!r}: give 0 or 1"):
            matching.rank(QUESTION, CANDIDATES, pair, labels=wrong)  # type: ignore[arg-type]
    assert matching.rank(QUESTION, CANDIDATES, pair, labels=np.array([1, 0, 0, 0])).labels == (1, 0, 0, 0)
    result = matching.evaluate([RankingList("q1", QUESTION, (CANDIDATES[0], "   "), (1, 0))], pair)
    assert result.evaluated == 1  # evaluation ranks the wordless candidate last
    with pytest.raises(TextError, match=r"question at position 0 \(q1\): candidate #2 has no words; the evaluation"):
        result.ranking(0)
    with pytest.raises(TypeError, match="its position \\(an int\\) or its qid"):
        result.ranking(1.0)  # type: ignore[arg-type]


def test_evaluate_gives_a_frame_per_system_and_the_slices(pair: dict[str, Matcher], sample_csv: Path) -> None:
    result = matching.evaluate(sample_csv, pair)
    frame = result.to_frame()
    assert frame.index.tolist() == [*pair, *BASELINES]
    assert frame["kind"].tolist() == ["model"] * len(pair) + ["baseline"] * len(BASELINES)
    direct = evaluate_lists(toy_lists(0, 6), pair)
    for system in frame.index:
        for metric in METRICS:
            assert frame.loc[system, metric] == pytest.approx(direct.overall[system][metric])
    assert result.evaluated == 6 and result.skipped == []
    assert "| plain | " in result.markdown()
    assert repr(result) == (f"EvaluationResult({str(sample_csv)!r}: 6 questions, 0 skipped; models ['plain', 'gated']; "
                            ".to_frame() for the metrics)")  # not every array of the evaluation
    questions = result.questions()
    assert len(questions) == 6 and {"qid", "question", "plain AP", "gated first correct"} <= set(questions)
    assert str(questions["gated first correct"].dtype) == "Int64"  # 1, not 1.0 (as the --per-question CSV)
    slices = result.slices()
    assert list(slices) == list(SLICINGS)
    assert all(table["questions"].sum() == 6 for table in slices.values())
    assert "&lt;" not in result._repr_html_() and "MAP" in result._repr_html_()


def test_keyword_parts_are_the_study_of_each_keyword_model_on_the_file(pair: dict[str, Matcher], sample_csv: Path,
                                                                        make_matcher: MatcherFactory) -> None:
    from matching.evaluation.studies import keyword_study
    from matching.text.tokenized import tokenize_lists

    keyword_model = make_matcher(seed=2, name="kw", family="mvlstm", keywords=True, keyword_words=3)
    result = matching.evaluate(sample_csv, {**pair, "kw": keyword_model})
    parts = result.keyword_parts()
    assert parts.index.tolist() == ["kw"]  # the models without a keyword term have no row
    study = keyword_study(keyword_model, tokenize_lists(result.lists)[0])
    assert study is not None
    assert parts.loc["kw"].tolist() == pytest.approx([study.MAP, study.learned_MAP, study.keywords_MAP,
                                                      study.top_changed, 6])
    assert result.keyword_parts(max_questions=2).loc["kw", "questions"] == 2
    assert matching.evaluate(sample_csv, pair).keyword_parts().empty


def test_disagreements_and_ranking_a_question_again(pair: dict[str, Matcher], sample_csv: Path) -> None:
    result = matching.evaluate(sample_csv, pair)
    tops = {name: result.top_answers(name) for name in pair}
    disagree = result.disagreements("plain", "gated")
    expected = [n for n in range(result.evaluated) if tops["plain"][n] != tops["gated"][n]]
    assert disagree.index.tolist() == expected
    for n in expected:
        assert disagree.loc[n, "plain top answer"] == tops["plain"][n]
        assert disagree.loc[n, "gated top answer"] == tops["gated"][n]
    again = result.ranking(3)
    item = result.lists[3]
    assert again.labels == item.labels and again.candidates == item.candidates
    assert result.questions().loc[3, "qid"] == item.qid
    for name in pair:  # the same scores as the evaluation's batched pass (to float rounding): same top, same AP
        assert int(np.argmax(again.models[name].scores)) == tops[name][3]
        assert question_metrics(again.models[name].scores, item.labels)["MAP"] == pytest.approx(
            result.questions().loc[3, f"{name} AP"])
    assert result.ranking(item.qid).candidates == item.candidates
    with pytest.raises(IndexError, match=f"question {result.evaluated + 5}: this evaluation holds questions 0 to"):
        result.ranking(result.evaluated + 5)
    # A list longer than one typed ranking takes (TrecQA test has one of 112 candidates) is explained whole.
    long = RankingList("long", "who wrote hamlet", tuple(f"candidate number {n}" for n in range(120)),
                       tuple(int(n == 7) for n in range(120)))
    again = matching.evaluate([long], pair).ranking("long")
    assert len(again.candidates) == 120 and again.labels == long.labels
    with pytest.raises(KeyError, match="not evaluated"):
        result.top_answers("other")
    tops = result.top_answers("BM25")  # a baseline's top answers too, as the evaluation keeps them
    assert len(tops) == result.evaluated and all(0 <= top < len(item.candidates)
                                                 for top, item in zip(tops, result.lists, strict=True))
    same = matching.evaluate(sample_csv, {"plain": pair["plain"], "again": pair["plain"]})
    agreeing = same.disagreements("plain", "again")  # none: still the columns, so a filter on them finds no rows
    assert agreeing.empty and agreeing.index.name == "position"
    assert agreeing[agreeing["plain top is correct"]].empty
    assert list(agreeing.columns) == [column.replace("gated", "again") for column in disagree.columns]


# ---------------------------------------------------------------- the console command

def test_matchlens_app_help_starts_no_server(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["app", "--help"], prog="matchlens")
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: matchlens app") and "streamlit run" in out and "MATCHLENS_MODELS" in out


def test_matchlens_app_passes_streamlit_options_through() -> None:
    options = ["--server.port", "8599", "--server.address", "127.0.0.1", "--server.headless", "true"]
    args, extra = build_parser("matchlens").parse_known_args(["app", *options])
    assert args.command == "app" and extra == options
    command, folder = app_command(extra)
    assert command == [sys.executable, "-m", "streamlit", "run", str(app_dir() / "app.py"), *options]
    assert folder == app_dir() == ROOT  # run in the app's folder: its .streamlit/config.toml applies
    assert (folder / ".streamlit" / "config.toml").is_file() and (folder / "pretrained" / "defaults.json").is_file()


def test_other_commands_keep_rejecting_unknown_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["report", "--bogus"], prog="matchlens")
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "unrecognized arguments: --bogus" in err
    assert err.startswith("usage: matchlens report")  # the command's own usage, not the list of every command
    parser = build_parser("matchlens")
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"app", "explain", "train", "sweep", "evaluate", "refresh", "report", "runs"} <= set(commands)


def test_pyproject_declares_the_command_and_the_requirements() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"] == {"matchlens": "matching.__main__:console"}
    assert "dependencies" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["dependencies"] == {"file": ["requirements.txt"]}
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8").split()
    assert "torch==2.13.0" in requirements and not any(r.startswith("torch") and "==" not in r
                                                       for r in requirements)


PACKAGED = ["pyproject.toml", "setup.py", "requirements.txt", "README.md", "app.py", "matching", "ui", ".streamlit",
            "pretrained", "samples"]


def test_the_wheel_ships_the_app_and_the_checkpoints(tmp_path: Path) -> None:
    """`pip wheel` on a copy of the checkout: the package, the app's files inside it, the pinned requirements."""
    source = tmp_path / "source"
    for name in PACKAGED:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy(path, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "-w", str(tmp_path / "wheel"), str(source)], check=True, timeout=300)
    [wheel] = (tmp_path / "wheel").glob("matchlens-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    app = "matching/_app/"
    expected = {"matching/__init__.py", "matching/api.py", "matching/explain/display.py", f"{app}app.py",
                f"{app}.streamlit/config.toml", f"{app}samples/sample-ranking.csv", f"{app}pretrained/defaults.json",
                f"{app}ui/views/cached.py", f"{app}ui/static/favicon.png"}  # the tab's icon: app.py opens it
    expected |= {f"{app}ui/screens/{p.name}" for p in (ROOT / "ui" / "screens").glob("*.py")}
    expected |= {f"{app}pretrained/{p.parent.name}/{p.name}" for p in (ROOT / "pretrained").glob("*/*")}
    assert expected <= names, sorted(expected - names)
    assert f"{app}setup.py" not in names and not any(n.startswith(("ui/", "app.py", "pretrained/")) for n in names)
    requirements = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines() if line.strip()]
    declared = [line.removeprefix("Requires-Dist: ") for line in metadata.splitlines()
                if line.startswith("Requires-Dist: ") and "extra ==" not in line]  # the [ray] extra's apart
    assert len(declared) == len(requirements) and "torch==2.13.0" in declared
    assert "matchlens = matching.__main__:console" in entry_points
    assert json.loads((ROOT / "pretrained" / "defaults.json").read_text())["models"]


def test_a_ranking_an_explanation_and_a_contrast_print_as_one_line(pair: dict[str, Matcher]) -> None:
    """print() of each gave every token and array (2,400, 50,000 and 13,000 characters in a plain script)."""
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    explanation = ranking.explanation(0, "gated")
    split = matching.compare(ranking, 0, 1, "gated")
    for shown in (repr(ranking), repr(explanation), repr(split)):
        assert "\n" not in shown and len(shown) < 400
    assert f"{len(CANDIDATES)} candidates" in repr(ranking) and "gated: #" in repr(ranking)
    assert f"score {explanation.score:+.4f}" in repr(explanation)
    assert f"gap {split.gap:+.4f}" in repr(split) and "#1" in repr(split) and "#2" in repr(split)


def test_the_api_says_what_it_takes_when_given_something_else(pair: dict[str, Matcher]) -> None:
    """cells(ranking) and evaluate(5) raised Python's own AttributeError and TypeError, which named no fix."""
    ranking = matching.rank(QUESTION, CANDIDATES, pair)
    with pytest.raises(TypeError, match=r"cells\(\) takes one explanation, ranking.explanation\(candidate, model\)"):
        matching.cells(ranking)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="data: give a file, a folder, a DataFrame .* not int"):
        matching.evaluate(5, pair)  # type: ignore[arg-type]
    with pytest.raises(IndexError, match="positions 0 to 3, or -4 to -1 from the end"):
        ranking.explanation(4, "gated")
