"""evaluate(): models beside the three baselines, overall and per question."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import MatcherFactory, toy_lists

from matching.evaluation.dataset import (
    Evaluation,
    chunks,
    default_workers,
    evaluate,
    first_correct_rank,
    format_table,
    model_scores,
)
from matching.evaluation.metrics import METRICS, question_metrics
from matching.evaluation.progress import READING
from matching.explain.matcher import Matcher
from matching.models.batching import TextCache
from matching.text.baselines import BASELINES
from matching.text.data import RankingList, open_ranking_file, read_ranking_file
from matching.text.shards import Chunking
from matching.text.tokenized import TokenizedList, tokenize_lists


@pytest.fixture(scope="module")
def matcher(make_matcher: MatcherFactory) -> Matcher:
    return make_matcher(seed=5, name="tiny")


def test_overall_table_has_the_model_and_the_three_baselines(matcher: Matcher) -> None:
    lists = toy_lists()
    progress: list[tuple[int, int, str]] = []
    result = evaluate(lists, {"tiny": matcher}, progress=lambda *call: progress.append(call))
    assert result.systems == ["tiny", *BASELINES]
    assert result.evaluated == len(lists) and result.skipped == []
    assert [row["system"] for row in result.table()] == result.systems
    for system in result.systems:
        assert set(result.overall[system]) == set(METRICS)
        assert all(0.0 <= value <= 1.0 for value in result.overall[system].values())
    # The correct answer sits at position n % 4 of toy list n: original order's AP is 1 / (n % 4 + 1).
    expected_map = np.mean([1 / (n % 4 + 1) for n in range(len(lists))])
    assert result.overall["original order"]["MAP"] == pytest.approx(expected_map)
    # The correct answers share many words with their questions: overlap finds them all.
    assert result.overall["word overlap"]["MAP"] == 1.0
    pairs = sum(len(item.candidates) for item in lists)
    assert progress[-1] == (pairs, pairs, "tiny")
    # Evaluation scores are the same scores the explanations show: the same top answer and AP.
    explained = np.array([e.score for e in matcher.explain(lists[0].question, list(lists[0].candidates))])
    assert result.top("tiny")[0] == int(np.argmax(explained))
    assert result.ap("tiny")[0] == pytest.approx(question_metrics(explained, lists[0].labels)["MAP"])
    assert progress[-1][2] == "tiny" and (len(lists), len(lists), READING) in progress


def test_per_question_rows(matcher: Matcher) -> None:
    lists = toy_lists(0, 4)
    result = evaluate(lists, {"tiny": matcher, "twin": matcher})
    assert [row["qid"] for row in result.per_question] == ["Q0", "Q1", "Q2", "Q3"]
    for n, row in enumerate(result.per_question):
        assert row["question"] == lists[n].question
        assert row["candidates"] == 4 and row["correct"] == 1
        assert row["original order first correct"] == n + 1
        assert row["original order AP"] == pytest.approx(1 / (n + 1))
        for system in result.systems:
            assert 1 <= row[f"{system} first correct"] <= 4  # type: ignore[operator]
        assert row["models disagree"] is False  # the same model twice always agrees


def test_candidate_without_words_gets_minus_infinity(matcher: Matcher) -> None:
    lists = [RankingList("Q", "who wrote hamlet", ("shakespeare wrote hamlet", "  ", "\u200b", "a play"),
                         (1, 0, 0, 0)),
             RankingList("E", "   ", ("anything",), (1,)),
             RankingList("N", "no candidates", (), ())]
    result = evaluate(lists, {"tiny": matcher})
    assert result.evaluated == 1 and result.positions.tolist() == [0]
    assert result.skipped == ["E: the question has no words", "N: no candidates"]
    scores = model_scores(matcher, tokenize_lists(lists)[0])[0]
    assert scores[1] == scores[2] == -math.inf and np.isfinite(scores[[0, 3]]).all()
    assert result.ap("tiny")[0] == question_metrics(scores, lists[0].labels)["MAP"]
    assert all(np.isfinite(v) for v in result.overall["tiny"].values())
    assert result.per_question[0]["tiny first correct"] in (1, 2)


def test_first_correct_rank_counts_ties_against_it() -> None:
    assert first_correct_rank(np.array([0.1, 0.9, 0.5]), [1, 0, 1]) == 2
    assert first_correct_rank(np.array([0.5, 0.5, 0.5]), [0, 1, 0]) == 3
    assert first_correct_rank(np.array([0.5, 0.2]), [0, 0]) is None
    # Two correct answers tied at ranks 3 and 4: the first correct answer is at 3 in every order of the tie (4 was
    # read; on WikiQA test a list of 8 with 2 correct read 8, a rank no order gives).
    assert first_correct_rank(np.array([0.9, 0.8, 0.4, 0.4]), [0, 0, 1, 1]) == 3
    assert first_correct_rank(np.array([0.4] * 8), [0, 0, 0, 0, 0, 0, 1, 1]) == 7
    assert first_correct_rank(np.array([0.4, 0.4, 0.4]), [1, 0, 1]) == 2


def test_format_table(matcher: Matcher) -> None:
    result = evaluate(toy_lists(0, 2), {"tiny": matcher})
    table = format_table(result, extra={"paper": {"MAP": 0.6046, "MRR": 0.6215}})
    lines = table.splitlines()
    assert lines[0] == "| system | " + " | ".join(METRICS) + " |"
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| tiny", "| original order", "| word overlap", "| BM25",
                                                           "| paper"]
    assert lines[-1] == "| paper | 0.6046 | 0.6215 | - | - | - |"


@pytest.mark.parametrize("workers", [1, 3])
def test_scores_do_not_depend_on_threads_order_or_remembered_lookups(matcher: Matcher, workers: int) -> None:
    """Bucketed, threaded, with word rows remembered across calls: each pair's score is the one
    it gets scored alone."""
    tokenized, _ = tokenize_lists(toy_lists())
    known = TextCache()
    first = model_scores(matcher, tokenized, batch_size=4, workers=workers, known=known)
    assert known.rows, "the word rows were remembered"
    again = model_scores(matcher, tokenized, batch_size=4, workers=workers, known=known)
    for n, item in enumerate(tokenized):
        alone = matcher.score_tokens([item.question] * len(item.candidates), item.candidates)
        np.testing.assert_allclose(first[n], alone, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(first[n], again[n])


def _same_results(mine: Evaluation, theirs: Evaluation) -> None:
    assert mine.systems == theirs.systems and mine.models == theirs.models
    assert mine.per_question == theirs.per_question and mine.overall == theirs.overall
    assert mine.slices == theirs.slices and mine.skipped == theirs.skipped
    assert mine.positions.tolist() == theirs.positions.tolist()
    for system in theirs.systems:
        np.testing.assert_array_equal(mine.top(system), theirs.top(system))
        for metric in METRICS:
            np.testing.assert_array_equal(mine.results[system].metrics[metric], theirs.results[system].metrics[metric])


def with_skipped(lists: list[RankingList]) -> list[RankingList]:
    """`lists` with a question without words and one without candidates among them."""
    return [*lists[:3], RankingList("E", "  ", ("anything",), (1,)), *lists[3:7],
            RankingList("N", "no candidates", (), ()), *lists[7:]]


def test_a_file_read_in_many_chunks_gives_what_one_chunk_gives(matcher: Matcher,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import matching.evaluation.dataset as evaluation_module

    lists = with_skipped(toy_lists())
    whole = evaluate(lists, {"tiny": matcher, "twin": matcher}, workers=1)
    assert whole.evaluated == len(lists) - 2 and len(whole.skipped) == 2
    assert [lists[p].qid for p in whole.positions] == whole.qids
    # Chunks of 2 questions, one chunk scored while the next is read, on 2 threads: the same numbers,
    # kept chunk by chunk.
    monkeypatch.setattr(evaluation_module, "CHUNKS_AHEAD", 1)
    calls: list[tuple[int, int, str]] = []
    chunked = evaluate(lists, {"tiny": matcher, "twin": matcher}, workers=2, progress=lambda *c: calls.append(c),
                       chunking=Chunking(questions=2, pairs=10_000))
    _same_results(chunked, whole)
    pairs = sum(len(item.candidates) for item in lists)
    assert [c for c in calls if c[2] == READING] == [(min(n, len(lists)), len(lists), READING)
                                                    for n in range(2, len(lists) + 2, 2)]
    for name in ("tiny", "twin"):  # each model's count of pairs rises chunk by chunk to every pair of the file
        done = [c[0] for c in calls if c[2] == name]
        assert done == sorted(done) and len(done) == len(range(0, len(lists), 2)) and done[-1] == pairs


def test_a_ranking_file_is_evaluated_as_it_is_read(matcher: Matcher, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A file on disk read a chunk at a time (`open_ranking_file`) gives what its lists read whole give."""
    import matching.evaluation.dataset as evaluation_module

    lists = toy_lists()
    path = tmp_path / "upload.csv"
    path.write_text("question,candidate,label\n" + "".join(
        f'"{item.question}","{candidate}",{label}\n' for item in lists
        for candidate, label in zip(item.candidates, item.labels, strict=True)), encoding="utf-8")
    whole = evaluate(read_ranking_file(path), {"tiny": matcher})
    opened = open_ranking_file(path)
    read: list[str] = []
    original = evaluation_module.tokenize_lists

    def tokenize_and_count(chunk: list[RankingList]) -> tuple[list[TokenizedList], list[str]]:
        read.append(f"{len(chunk)} lists")
        return original(chunk)

    monkeypatch.setattr(evaluation_module, "tokenize_lists", tokenize_and_count)
    streamed = evaluate(opened, {"tiny": matcher}, chunking=Chunking(questions=3, pairs=10_000))
    _same_results(streamed, whole)
    assert read == ["3 lists"] * (len(lists) // 3) + ([f"{len(lists) % 3} lists"] if len(lists) % 3 else [])


def test_a_whole_file_is_read_in_chunks_of_even_size(matcher: Matcher, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the size of what is evaluated is known, it is read in as many chunks as the bounds need, of even
    size, not in full chunks and a small remainder (which left a Ray worker idle at the end of a run)."""
    import matching.evaluation.dataset as evaluation_module

    lists = toy_lists()
    pairs = sum(len(item.candidates) for item in lists)
    chunking = Chunking(questions=len(lists) // 3 + 1, pairs=10**6)
    by_bounds = [len(chunk) for _, chunk in chunks(lists, chunking)]
    even = [len(chunk) for _, chunk in chunks(lists, chunking.for_file(len(lists), pairs))]
    assert len(even) == len(by_bounds) == 3 and sum(even) == len(lists)
    assert max(even) - min(even) <= 1 < max(by_bounds) - min(by_bounds)
    read: list[int] = []
    original = evaluation_module.tokenize_lists

    def tokenize_and_count(chunk: list[RankingList]) -> tuple[list[TokenizedList], list[str]]:
        read.append(len(chunk))
        return original(chunk)

    monkeypatch.setattr(evaluation_module, "tokenize_lists", tokenize_and_count)
    chunked = evaluate(lists, {"tiny": matcher}, chunking=chunking)
    assert read == even
    _same_results(chunked, evaluate(lists, {"tiny": matcher}, chunking=Chunking(questions=10_000, pairs=10**9)))


def test_long_lists_close_a_chunk_by_its_pairs(matcher: Matcher) -> None:
    """A chunk closes at its questions or its pairs, whichever first, never inside a question: lists of many
    candidates (MS MARCO's 1,000) are read and scored a few at a time, with the numbers of one chunk."""
    toys = toy_lists()
    # Each list its own candidates and those of the next 0 to 3 lists (as wrong ones): 4 to 16 candidates, no
    # text twice in a list (a tie's order would hang on float noise between batches of other sizes).
    lists = [RankingList(f"L{n}", item.question,
                         tuple(c for k in range(1 + n % 4) for c in toys[(n + k) % len(toys)].candidates),
                         tuple(label if k == 0 else 0 for k in range(1 + n % 4)
                               for label in toys[(n + k) % len(toys)].labels))
             for n, item in enumerate(toys)]
    chunking = Chunking(questions=4, pairs=12)
    cut = list(chunks(lists, chunking))
    assert [item for _, chunk in cut for item in chunk] == lists
    assert [first for first, _ in cut] == list(itertools.accumulate([0] + [len(chunk) for _, chunk in cut[:-1]]))
    for _, chunk in cut[:-1]:
        sizes = [len(item.candidates) for item in chunk]
        assert chunking.full(len(chunk), sum(sizes)) and not chunking.full(len(chunk) - 1, sum(sizes[:-1]))
    assert any(len(chunk) < 4 for _, chunk in cut[:-1])  # the pairs closed some before their fourth question
    _same_results(evaluate(lists, {"tiny": matcher}, workers=2, chunking=chunking),
                  evaluate(lists, {"tiny": matcher}, chunking=Chunking(questions=10_000, pairs=10**9)))
    with pytest.raises(ValueError, match="at least 1"):
        Chunking(questions=8, pairs=0)


def test_evaluation_keeps_numbers_per_question_not_per_pair(matcher: Matcher) -> None:
    """What an evaluation holds grows with the questions: no scores per pair, no words, no candidate texts."""
    result = evaluate(toy_lists(), {"tiny": matcher})
    held = [value for value in vars(result).values()]
    assert not any(isinstance(value, list) and value and isinstance(value[0], RankingList) for value in held)
    for system in result.systems:
        assert all(len(column) == result.evaluated for column in result.results[system].metrics.values())
        assert len(result.results[system].top) == len(result.results[system].first_correct) == result.evaluated
    assert result.first_correct("original order") == [n % 4 + 1 for n in range(len(toy_lists()))]


def test_paired_tests_at_once_are_the_tests_one_by_one() -> None:
    """All (model, baseline) pairs tested in one scipy call share its sign flips: the same p-values
    as one call per pair, in bounded batches."""
    from matching.evaluation import studies

    rng = np.random.default_rng(0)
    values = np.array([0.0, 0.25, 1 / 3, 0.5, 1.0])
    models, baselines = rng.choice(values, size=(3, 300)), rng.choice(values, size=(2, 300))
    rows = [(m, b) for m in models for b in baselines]
    together = studies.paired_tests([m for m, _ in rows], [b for _, b in rows], ["b"] * len(rows))
    for (model, baseline), test in zip(rows, together, strict=True):
        alone = studies.paired_test(model, baseline, "b")
        assert test == alone and test.difference == float(np.mean(model - baseline))
    from scipy.stats import permutation_test

    direct = permutation_test((models[0], baselines[0]), lambda x, y, axis: np.mean(x - y, axis=axis),
                              permutation_type="samples", n_resamples=studies.RESAMPLES, vectorized=True,
                              alternative="two-sided", random_state=0)
    assert together[0].p_value == float(direct.pvalue)


def test_evaluation_progress_is_one_fraction_and_one_line_for_every_stage() -> None:
    from matching.evaluation.progress import EvaluationProgress

    shown: list[tuple[float, str]] = []
    progress = EvaluationProgress(questions=10, pairs=100, models=["a", "b"],
                                  show=lambda fraction, text: shown.append((fraction, text)))
    progress(10, 10, READING)
    progress(100, 100, "a")
    progress(50, 100, "b")
    assert [round(f, 4) for f, _ in shown] == [round(1 / 3, 4), round(2 / 3, 4), round(2.5 / 3, 4)]
    assert shown[-1][1] == "Read 10 of 10 questions · 1 of 2 models have scored all 100 pairs, the next 50"
    progress(100, 100, "b")
    assert shown[-1][1] == "Read 10 of 10 questions · every model has scored 100 of 100 pairs"
    assert EvaluationProgress(0, 0, []).text() == "Read 0 of 1 questions"
    waiting = EvaluationProgress(questions=10, pairs=100, models=["a", "b", "c"])
    waiting(100, 100, "a")
    assert waiting.text() == "Read 0 of 10 questions · 1 of 3 models have scored all 100 pairs"  # the next not begun


def test_console_progress_on_a_terminal_and_in_a_pipe() -> None:
    """A terminal gets one bar redrawn in place; a pipe gets one plain line per tenth, and one at the end."""
    import io

    from matching.evaluation.progress import ConsoleProgress

    steps = [(n / 200, f"step {n}") for n in range(201)]
    piped = io.StringIO()
    with ConsoleProgress(piped, interactive=False) as show:
        for fraction, text in steps:
            show(fraction, text)
    lines = piped.getvalue().splitlines()
    assert len(lines) == 11 and "\r" not in piped.getvalue() and "\x1b" not in piped.getvalue()
    assert [line.split("%")[0].strip() for line in lines] == [str(10 * n) for n in range(11)]
    assert lines[-1].startswith("100% step 200 (")
    terminal = io.StringIO()
    with ConsoleProgress(terminal, interactive=True) as show:
        for fraction, text in steps:
            show(fraction, text)
    drawn = terminal.getvalue()
    assert "\r" in drawn and drawn.count("\n") <= 1 and "100%" in drawn and "step 200" in drawn


def test_console_progress_writes_no_line_for_a_run_that_never_reported_or_failed() -> None:
    """An error before the first report (a missing file, a refused --out) was preceded by a stray "0% (0 s)" line, and
    a resumed run with nothing left to score left one too; a run that fails keeps its last line for the error."""
    import io

    from matching.evaluation.progress import ConsoleProgress

    quiet = io.StringIO()
    with ConsoleProgress(quiet, interactive=False):
        pass
    assert quiet.getvalue() == ""
    failing = io.StringIO()
    with pytest.raises(ValueError), ConsoleProgress(failing, interactive=False) as show:
        show(0.15, "step 3")
        show(0.25, "step 5")
        raise ValueError("the run fails")
    assert [line.split(" (")[0] for line in failing.getvalue().splitlines()] == [" 15% step 3", " 25% step 5"]


def test_evaluation_notes_say_where_each_seed_spread_was_measured(matcher: Matcher) -> None:
    from matching.training.reporting import evaluation_notes

    result = evaluate(toy_lists(), {"tiny": matcher, "twin": matcher})
    study = {"seeds": [1, 2, 3, 4, 5], "dev_MAP": [0.5] * 5, "test_MAP": [0.6, 0.62, 0.64, 0.66, 0.68],
             "mean": 0.64, "std": 0.0316}
    wikiqa = {"seed_study": study, "data": {"source": "wikiqa"}}
    notes = evaluation_notes(result, {"tiny": wikiqa, "twin": wikiqa})
    header = next(line for line in notes.splitlines() if line.startswith("| model |"))
    assert header.startswith("| model | 5-seed spread, WikiQA test (card) | vs original order: ΔMAP")
    assert "| tiny | 0.6400 ± 0.0316 (n=5) |" in notes
    assert f"on this file's {len(toy_lists())} questions with a correct candidate" in notes
    # Spreads measured on different data: each cell says its own.
    notes = evaluation_notes(result, {"tiny": wikiqa, "twin": {"seed_study": {**study, "seeds": [1, 2, 3]},
                                                                  "data": {"source": "trecqa"}}})
    assert "| twin | 0.6400 ± 0.0316 (n=3), 3-seed spread, TrecQA test (card) |" in notes
    assert "| tiny | 0.6400 ± 0.0316 (n=5), 5-seed spread, WikiQA test (card) |" in notes


def test_question_table_filters_and_columns(make_matcher: MatcherFactory) -> None:
    lists = toy_lists()
    models = {"one": make_matcher(seed=1, name="one"), "two": make_matcher(seed=2, name="two")}
    result = evaluate(lists, models)
    frame, columns = result.question_table(lists)
    assert columns == ["qid", "question", "candidates", "correct", "one first correct", "two first correct",
                       "models disagree", "BM25 first correct"] and len(frame) == len(lists)
    disagreeing, _ = result.question_table(lists, disagree=True)
    assert len(disagreeing) == int(np.sum(result.disagree)) and disagreeing["models disagree"].all()
    low, _ = result.question_table(lists, low=True, threshold=2)
    assert ((low[["one first correct", "two first correct"]] >= 2).any(axis=1)).all()
    tops, columns = result.question_table(lists, "top answer")
    assert columns[4:6] == ["one top answer", "two top answer"] and "BM25 first correct" not in columns
    texts = [candidate for item in lists for candidate in item.candidates]
    assert all(any(text.startswith(top.rstrip("…")) for text in texts) for top in tops["one top answer"])
    # The export's top answers are whole: the screen's are cut to 60 characters (the CSV held 700 of 729 cut).
    long = [RankingList(item.qid, item.question, [f"{c} " + "and more words " * 6 for c in item.candidates],
                        item.labels) for item in lists]
    result = evaluate(long, models)
    shown, _ = result.question_table(long, "top answer")
    whole, _ = result.question_table(long, "top answer", top_answer_chars=None)
    assert all(top.endswith("…") and len(top) == 60 for top in shown["one top answer"])
    assert all(" ".join(top.split()) in {" ".join(c.split()) for item in long for c in item.candidates}
               for top in whole["one top answer"])


def test_p_values_below_a_thousandth_are_not_printed_as_zero() -> None:
    from matching.evaluation.studies import p_text

    assert p_text(0.0001) == "<0.001" and p_text(0.001) == "0.001" and p_text(0.0499) == "0.050"


def test_a_limit_stops_reading_once_that_many_lists_can_be_ranked() -> None:
    lists = [RankingList("empty", "?!", ("a text",), (1,)), *toy_lists()]
    every, skipped = tokenize_lists(lists)
    first_two, skipped_before = tokenize_lists(lists, limit=2)
    assert [t.item for t in first_two] == [t.item for t in every[:2]] and skipped_before == skipped[:1]
    assert len(every) > 2


@pytest.mark.parametrize(("cores", "threads", "workers"), [(2, 2, 1), (2, 1, 2), (1, 1, 1), (4, 1, 4), (8, 1, 4),
                                                            (16, 16, 4), (64, 64, 4), (16, 3, 4)])
def test_default_workers_fill_the_cores_with_single_threaded_scorers_on_many(monkeypatch: pytest.MonkeyPatch,
                                                                            cores: int, threads: int,
                                                                            workers: int) -> None:
    """Two cores: one worker of torch's two threads on the command line, two in the app (one thread); many cores,
    where torch would run a thread each: four single-threaded workers."""
    import torch

    monkeypatch.setattr("os.cpu_count", lambda: cores)
    monkeypatch.setattr(torch, "get_num_threads", lambda: threads)
    assert default_workers() == workers
