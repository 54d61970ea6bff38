"""The command line: train, evaluate, explain, sweep and report on a tiny data folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from conftest import tiny_config, toy_lists, write_toks_folder

from matching.__main__ import build_parser, main
from matching.models.params import params_to_dict
from matching.text.baselines import BASELINES
from matching.text.data import TSV_COLUMNS
from matching.training.trainer import code_version

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = tiny_config(name="cli-tiny")
    raw = {"name": config.name, "description": config.description, "model": params_to_dict(config.params),
           "training": asdict(config.settings), "paper": config.paper}
    path = tmp_path_factory.mktemp("configs") / "cli-tiny.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def pretrained(config_file: Path, toy_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of checkpoints holding one model trained by `python -m matching train`."""
    root = tmp_path_factory.mktemp("pretrained")
    main(["train", "--config", str(config_file), "--data", str(toy_data), "--out", str(root / "cli-tiny"),
          "--seed", "2"])
    return root


def test_train_writes_a_checkpoint(pretrained: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = pretrained / "cli-tiny"
    assert {p.name for p in folder.iterdir()} == {"model.safetensors", "config.json", "card.json", "README.md"}
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    assert card["seed"] == 2 and card["name"] == "cli-tiny"


def test_evaluate_prints_the_baselines_table(pretrained: Path, toy_data: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), "--split", "test"])
    out = capsys.readouterr().out
    assert f"{toy_data / 'test'}: 2 questions evaluated (0 skipped)" in out
    assert "| system | MAP | MRR | P@1 | nDCG@3 | nDCG@5 |" in out
    for system in ("cli-tiny", *BASELINES):
        assert f"| {system} | " in out
    # Beside the metrics: the seed spread from the card and the paired tests on this data.
    assert "Paired randomisation test on per-question AP" in out
    assert "| cli-tiny | no seed study | " in out and "vs word overlap: p" in out


def test_evaluate_progress_piped_is_a_few_plain_lines(pretrained: Path, tmp_path: Path) -> None:
    """Written to a pipe, the progress is at most 11 plain lines (one per tenth of the work, one at the
    end): no carriage returns or escape codes, whatever the size of the file."""
    lists = [replace(item, qid=f"{item.qid}-{copy}") for copy in range(100) for item in toy_lists()]
    path = tmp_path / "many.tsv"  # three chunks of questions
    path.write_text("\t".join(TSV_COLUMNS) + "\n" + "".join(
        f"{item.qid}\t{item.question}\tD\tT\tS\t{candidate}\t{label}\n" for item in lists
        for candidate, label in zip(item.candidates, item.labels, strict=True)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "matching", "evaluate", "--pretrained", str(pretrained),
                             "--data", str(path)], capture_output=True, text=True, timeout=300, cwd=REPO, env=env,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert f"{path}: {len(lists)} questions evaluated (0 skipped)" in result.stdout
    for stream in (result.stdout, result.stderr):
        assert "\r" not in stream and "\x1b" not in stream
    progress = result.stderr.splitlines()
    assert 3 <= len(progress) <= 11, progress
    assert progress[-1].startswith("100% Read 1,200 of 1,200 questions · every model has scored 4,800 of 4,800")
    percents = [int(line.split("%")[0]) for line in progress]
    assert percents == sorted(percents)


def test_evaluate_reports_a_bad_file_in_one_line(pretrained: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("question,candidate,label\nq,a,maybe\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"error: .*bad.csv line 2 \(question 'q'\): label 'maybe' is not a number"):
        main(["evaluate", "--pretrained", str(pretrained), "--data", str(tmp_path / "bad.csv")])


def test_explain_ranks_and_explains(pretrained: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["explain", "--pretrained", str(pretrained), "who wrote hamlet ?", "shakespeare wrote hamlet",
          "the river is long"])
    out = capsys.readouterr().out
    assert "Q: who wrote hamlet ?" in out and "== cli-tiny" in out
    assert out.count("  rank ") == 2 and "contributes" in out
    assert "= learned match " not in out  # the tiny model has no keyword term: no split to give
    assert "baselines: original order: ranks [1, 2]; word overlap: ranks [1, 2]; BM25: ranks" in out
    assert "note: The models have no word vector" not in out
    # Mostly unknown words: said as the app says it (the command line ranked them without a word of caution).
    main(["explain", "--pretrained", str(pretrained), "מי כתב את המלט", "המלט הוא טרגדיה", "shakespeare wrote it"])
    assert "note: The models have no word vector for 4 of the question's 4 words" in capsys.readouterr().out
    main(["explain", "--pretrained", str(pretrained), "<b>who</b> wrote hamlet ?", "shakespeare", "<p>a dog</p>"])
    assert "note: The question and candidate #2 hold markup such as <b>" in capsys.readouterr().out


def test_explain_refuses_unusable_text(pretrained: Path) -> None:
    with pytest.raises(SystemExit, match="error: candidate #2 has no words"):
        main(["explain", "--pretrained", str(pretrained), "who wrote hamlet ?", "shakespeare", "   "])


def test_unknown_model_and_empty_folder(pretrained: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="unknown model"):
        main(["explain", "--pretrained", str(pretrained), "--models", "nope", "--", "q", "a"])
    with pytest.raises(SystemExit, match="no usable checkpoint"):
        main(["explain", "--pretrained", str(tmp_path), "q", "a"])


def test_everyday_mistakes_are_one_line_errors(pretrained: Path, toy_data: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """What a user mistypes gets `error: ...` and exit status 1, not a traceback (each gave one before)."""
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "model": {', encoding="utf-8")
    keyless = tmp_path / "keyless.json"
    keyless.write_text('{"name": "x"}', encoding="utf-8")
    for argv, said in [
        (["train", "--config", str(tmp_path / "none.json"), "--data", str(toy_data), "--out", str(tmp_path / "o")],
         "none.json: config file missing"),
        (["train", "--config", str(broken), "--data", str(toy_data), "--out", str(tmp_path / "o")],
         "broken.json: not a readable JSON config"),
        (["sweep", "--config", str(keyless), "--data", str(toy_data), "--out", str(tmp_path / "o")],
         "keyless.json: the config has no 'model' entry"),
        (["report", "--pretrained", str(tmp_path / "nowhere")], "nowhere: no such folder of checkpoints"),
        (["report", "--pretrained", str(tmp_path)], "no usable checkpoint under"),
        (["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data)],
         "is a folder of splits \\(dev, test, train\\): give --split"),
        (["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), "--split", "nosuch"],
         "has no split 'nosuch'; it has dev, test, train"),
        (["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data / "test"), "--split", "test"],
         "is one split already \\(a.toks, b.toks, ...\\): leave out --split"),
        (["evaluate", "--pretrained", str(pretrained / "cli-tiny"), "--data", str(toy_data / "test")],
         "cli-tiny is one checkpoint; --pretrained takes the folder that holds checkpoints"),
    ]:
        with pytest.raises(SystemExit, match=f"^error: .*{said}") as stopped:
            main(argv)
        assert isinstance(stopped.value.code, str), argv  # a message: Python exits with status 1
    config = tmp_path / "cli-tiny.json"
    config.write_text(json.dumps({"name": "x", "model": {"family": "mvlstm"}}), encoding="utf-8")
    with pytest.raises(SystemExit, match="^error: .*/none/train/a.toks: file missing"):  # no data folder, in train
        main(["train", "--config", str(config), "--data", str(tmp_path / "none"), "--out", str(tmp_path / "o")])


def test_evaluate_a_file_of_one_question_and_a_text_too_long(pretrained: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One question is a table and no paired test (scipy's test raised after the table); a text past the limit
    leaves its question out, said among the skipped, instead of stopping the whole file."""
    one = tmp_path / "one.csv"
    one.write_text("question,candidate,label\nwho wrote hamlet,shakespeare wrote hamlet,1\n"
                   "who wrote hamlet,the river is long,0\n", encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(one)])
    out = capsys.readouterr().out
    assert f"{one}: 1 question evaluated (0 skipped)" in out and "| cli-tiny | 1.0000 |" in out
    assert "No paired test against the baselines: it needs at least two questions" in out
    long = tmp_path / "long.csv"
    long.write_text("question,candidate,label\nwho wrote hamlet,shakespeare wrote hamlet,1\n"
                    "who wrote hamlet,the river is long,0\nwhat is long," + "long " * 5_000 + ",1\n"
                    "what is long,the river,0\nwho is here,nobody,1\nwho is here,the river is long,0\n",
                    encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(long)])
    out = capsys.readouterr().out
    assert f"{long}: 2 questions evaluated (1 skipped)" in out and "Paired randomisation test" in out
    huge = tmp_path / "huge.csv"
    huge.write_text('question,candidate,label\nwho,"' + "x" * 200_000 + '",1\n', encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(huge)])  # past the csv module's field limit too
    out = capsys.readouterr().out
    assert f"{huge}: 0 questions evaluated (1 skipped)\n  skipped who: text has 200,000 characters" in out
    assert "No question could be evaluated: every one was skipped (why, above)." in out
    assert "correct candidate" not in out


def test_evaluate_checks_every_data_set_before_scoring_the_first(pretrained: Path, toy_data: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="no such file or folder"):
        main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), str(tmp_path / "nothing"),
              "--split", "test"])
    assert "| system |" not in capsys.readouterr().out  # the first was not scored before the second was refused


def test_evaluate_says_what_its_table_leaves_out(pretrained: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A question without a correct candidate counted among the questions but not in MAP; an empty candidate ranked
    last without a word; a file of no correct candidate a table of nan: each is now said beside the table."""
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("question,candidate,label\nwho wrote hamlet,shakespeare wrote hamlet,1\nwho wrote hamlet,,0\n"
                     "who wrote hamlet, ,1\nwhere is paris,in france,0\nwhere is paris,the river,0\n"
                     "who is here,nobody,1\nwho is here,the river is long,0\n", encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(mixed)])
    out = capsys.readouterr().out
    assert f"{mixed}: 3 questions evaluated (0 skipped; 1 without a correct candidate, left out of the metrics)" in out
    assert "2 candidates without words (in 1 question) are ranked last by every model" in out
    negative = tmp_path / "negative.csv"
    negative.write_text("question,candidate,label\nwho wrote hamlet,shakespeare,0\nwho wrote hamlet,a play,0\n",
                        encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(negative)])
    out = capsys.readouterr().out
    assert "No question has a correct candidate (label 1), so no metric is defined" in out and "nan" not in out


def test_sweep_and_report(config_file: Path, toy_data: Path, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "shipped" / "cli-tiny"
    main(["sweep", "--config", str(config_file), "--data", str(toy_data), "--out", str(tmp_path / "shipped"),
          "--seeds", "1", "2", "--work", str(tmp_path / "runs")])
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    study = card["seed_study"]
    assert study["seeds"] == [1, 2] and card["seed"] in (1, 2)
    assert card["metrics"]["dev"]["MAP"] == max(study["dev_MAP"])
    assert "## Seed study" in (out / "README.md").read_text(encoding="utf-8")
    capsys.readouterr()
    main(["report", "--pretrained", str(tmp_path / "shipped")])
    report = capsys.readouterr().out
    assert "| cli-tiny | " in report and "(n=2)" in report and "**as in the paper**" in report
    assert all(f"| {name} |" in report for name in BASELINES)
    assert "vs original order: ΔMAP (p)" in report
    main(["refresh", "--pretrained", str(tmp_path / "shipped"), "--data", str(toy_data)])
    assert "cli-tiny: test MAP" in capsys.readouterr().out
    refreshed = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert refreshed["seed_study"] == card["seed_study"]
    assert refreshed["data"]["test"]["source"] == toy_data.resolve().name  # the test split found to be toy_data's
    assert [t["baseline"] for t in refreshed["significance"]] == list(BASELINES)
    assert refreshed["metrics"]["dev"] == card["metrics"]["dev"]  # dev figures are kept without --dev
    main(["refresh", "--pretrained", str(tmp_path / "shipped"), "--data", str(toy_data), "--dev", str(toy_data)])
    assert "cli-tiny: dev MAP" in capsys.readouterr().out
    again = json.loads((out / "card.json").read_text(encoding="utf-8"))  # the same model and code: the same figures
    assert again["metrics"]["dev"]["MAP"] == pytest.approx(card["metrics"]["dev"]["MAP"], abs=1e-9)
    assert {b: m["MAP"] for b, m in again["baselines"]["dev"].items()} == pytest.approx(
        {b: m["MAP"] for b, m in card["baselines"]["dev"].items()})
    write_toks_folder(tmp_path / "elsewhere" / "dev", toy_lists(0, 2))
    main(["refresh", "--pretrained", str(tmp_path / "shipped"), "--data", str(toy_data), "--dev", str(toy_data),
          "--work", str(tmp_path / "runs")])  # each seed's run scored again: the same code gives the same figures
    seeds = json.loads((out / "card.json").read_text(encoding="utf-8"))["seed_study"]
    assert seeds["seeds"] == study["seeds"] and seeds["selection"] == study["selection"]
    assert seeds["test_MAP"] == pytest.approx(study["test_MAP"], abs=1e-9)
    assert seeds["dev_MAP"] == pytest.approx(study["dev_MAP"], abs=1e-9)
    assert study["computed_with"] == "" and seeds["computed_with"] == code_version()  # which code: today's
    assert f"Computed with MatchLens {code_version()}." in (out / "README.md").read_text(encoding="utf-8")
    with pytest.raises(SystemExit, match="seed runs are not all under"):
        main(["refresh", "--pretrained", str(tmp_path / "shipped"), "--data", str(toy_data), "--work",
              str(tmp_path / "elsewhere")])
    with pytest.raises(SystemExit, match="chosen on another dev split"):
        main(["refresh", "--pretrained", str(tmp_path / "shipped"), "--data", str(toy_data), "--dev",
              str(tmp_path / "elsewhere")])
    main(["runs", "--work", str(tmp_path / "runs")])
    runs = capsys.readouterr().out
    row = next(line for line in runs.splitlines() if line.startswith("| cli-tiny |"))
    assert "| 1 2 |" in row and f"{sum(study['test_MAP']) / 2:.4f} ± " in row


def test_cross_source_check_trains_on_one_set_and_measures_every_epoch_on_another(
        config_file: Path, toy_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    for split, (start, stop) in (("train", (0, 4)), ("dev", (10, 12)), ("test", (8, 10))):
        write_toks_folder(other / split, toy_lists(start, stop))  # another "source": its dev is toy_data's test
    cross = tmp_path / "toy-to-other"
    main(["combine", "--data", str(toy_data), "--dev", str(other), "--test", str(other), "--out", str(cross)])
    assert "dev of " + str(other) in capsys.readouterr().out
    assert (cross / "dev" / "id.txt").read_text().split() == ["other:Q10"] * 4 + ["other:Q11"] * 4
    main(["train", "--config", str(config_file), "--data", str(cross), "--out", str(tmp_path / "model"), "--seed", "1"])
    card = json.loads((tmp_path / "model" / "card.json").read_text(encoding="utf-8"))
    assert card["data"]["train"]["questions"] == 8 and card["data"]["dev"]["questions"] == 2
    printed = subprocess.run([sys.executable, str(REPO / "bench" / "transfer_curves.py"), str(tmp_path / "model")],
                             capture_output=True, text=True, check=True).stdout
    row = next(line for line in printed.splitlines() if line.startswith("cli-tiny seed 1 on toy-to-other"))
    assert row.endswith(" ".join(f"{entry['dev_MAP']:.3f}" for entry in card["log"]))
    assert f"{card['metrics']['dev']['MAP']:.4f}" in row


def test_python_dash_m_entry_point(pretrained: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "matching", "explain", "--pretrained", str(pretrained),
                             "who wrote hamlet", "shakespeare", "a river"],
                            capture_output=True, text=True, timeout=120, cwd=REPO, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert "== cli-tiny" in result.stdout and "baselines: original order: ranks [1, 2]" in result.stdout


def test_evaluate_reports_several_data_sets_each_with_its_baselines(pretrained: Path, toy_data: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    other = write_toks_folder(tmp_path / "other" / "test", toy_lists(0, 5))
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), str(other.parent), "--split", "test"])
    out = capsys.readouterr().out
    assert f"{toy_data / 'test'}: 2 questions evaluated (0 skipped)" in out
    assert f"{other}: 5 questions evaluated (0 skipped)" in out
    assert out.count("| system | MAP | MRR | P@1 | nDCG@3 | nDCG@5 |") == 2
    assert out.count("| BM25 | ") == 2 and out.count("Paired randomisation test on per-question AP") == 2


def test_evaluate_writes_each_questions_results(pretrained: Path, toy_data: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """--out was the one-process path's silent no-op: a researcher asking for each question's results got nothing."""
    import csv

    other = write_toks_folder(tmp_path / "other" / "test", toy_lists(0, 5))
    target = tmp_path / "per-question.csv"
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), str(other.parent), "--split", "test",
          "--per-question", str(target)])
    assert f"each question's results: {target} (7 rows)" in capsys.readouterr().out
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert [row["data"] for row in rows] == [str(toy_data / "test")] * 2 + [str(other)] * 5
    lists = toy_lists(0, 5)
    for row, item in zip(rows[2:], lists, strict=True):
        assert row["question"] == item.question and 1 <= int(row["cli-tiny top answer #"]) <= len(item.candidates)
        assert 0 <= float(row["cli-tiny AP"]) <= 1 and row["BM25 first correct"]
    for flag in (["--out", str(tmp_path / "out")], ["--resume"], ["--workers", "2"]):
        with pytest.raises(SystemExit) as stopped:
            main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), "--split", "test", *flag])
        assert "is for --engine ray" in str(stopped.value.code) and "--per-question" in str(stopped.value.code)
    # Its folder is made where missing; a folder given as the file, or a place that cannot be written, is refused
    # before the evaluation (it was said after the whole run it was to keep).
    nested = tmp_path / "new" / "folder" / "pq.csv"
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), "--split", "test",
          "--per-question", str(nested)])
    assert nested.is_file()
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    capsys.readouterr()
    for wrong, said in ((tmp_path, "is a folder"), (blocked / "pq.csv", f"cannot be written: {blocked} is a file")):
        with pytest.raises(SystemExit, match=f"--per-question {wrong} {said}"):
            main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), "--split", "test",
                  "--per-question", str(wrong)])
        assert "| BM25 |" not in capsys.readouterr().out


@pytest.mark.parametrize("workers", ["0", "-2", "two"])
def test_evaluate_refuses_a_count_of_workers_below_one(pretrained: Path, toy_data: Path, workers: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """--workers 0 used to start one worker per CPU without a word; now argparse says what it needs."""
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", "--pretrained", str(pretrained), "--data", str(toy_data), "--engine", "ray",
              "--workers", workers])
    assert stopped.value.code == 2
    assert "--workers" in capsys.readouterr().err


def test_the_echo_check_restates_each_dev_question_as_a_wrong_candidate(pretrained: Path, toy_data: Path) -> None:
    printed = subprocess.run([sys.executable, str(REPO / "bench" / "echoes.py"), "--data", str(toy_data),
                              "--pretrained", str(pretrained), "--models", "cli-tiny"],
                             capture_output=True, text=True, check=True, timeout=300).stdout
    rows = {line.split()[0]: line.split()[-3:] for line in printed.splitlines() if line.startswith("  ")}
    assert set(rows) >= {"cli-tiny", "word", "BM25"}, printed
    for name, (plain, echoed, first) in rows.items():
        if name == "system":
            continue
        assert float(echoed) <= float(plain) + 1e-9, name  # one more wrong candidate never raises a question's AP
        assert 0.0 <= float(first.rstrip("%")) <= 100.0
    assert float(rows["word"][2].rstrip("%")) > 0  # overlap ranks the echo, which has every question word, first
    missing = subprocess.run([sys.executable, str(REPO / "bench" / "echoes.py"), "--data", str(toy_data),
                              "--pretrained", str(pretrained), "--models", "no-such-model"],
                             capture_output=True, text=True, check=False, timeout=300)
    assert missing.returncode == 2 and "no checkpoint no-such-model" in missing.stderr


def test_seed_ensembles_bench_scores_each_seed_as_its_card_and_the_mean_of_equal_seeds_as_each(
        pretrained: Path, toy_data: Path) -> None:
    """bench/seed_ensembles.py: each folder's MAP is the dev MAP its card recorded; the mean of two copies of one
    model's scores, and the model with the mean of their weights, rank as that model does."""
    folder = pretrained / "cli-tiny"
    printed = subprocess.run([sys.executable, str(REPO / "bench" / "seed_ensembles.py"), "--data", str(toy_data),
                              "--", str(folder), str(folder)],
                             capture_output=True, text=True, check=True, timeout=300).stdout
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    dev_map = f"{card['metrics']['dev']['MAP']:.4f}"
    assert printed.count(f"{folder}") == 2 and all(line.endswith(dev_map) for line in printed.splitlines()
                                                   if str(folder) in line), printed
    assert f"seeds: mean {dev_map}, sd 0.0000, best {dev_map}" in printed
    assert f"mean of the 2 seeds' scores: {dev_map} (+0.0000 against the seeds' mean)" in printed
    assert f"mean of the 2 seeds' weights (one model): {dev_map} (+0.0000 against the seeds' mean)" in printed


@pytest.mark.parametrize(("cores", "variable", "threads"), [(16, None, 1), (16, "4", 5), (2, None, 5)])
def test_evaluate_scores_on_one_torch_thread_on_many_cores(monkeypatch: pytest.MonkeyPatch, cores: int,
                                                           variable: str | None, threads: int) -> None:
    """More than two cores: one torch thread (four single-threaded workers), unless OMP_NUM_THREADS is set."""
    import torch

    from matching.__main__ import single_threaded_scoring

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(5)  # a stand-in for torch's default of one thread per core
        monkeypatch.setattr("os.cpu_count", lambda: cores)
        if variable is None:
            monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        else:
            monkeypatch.setenv("OMP_NUM_THREADS", variable)
        single_threaded_scoring()
        assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)


def test_report_and_refresh_skip_a_checkpoint_without_its_card(pretrained: Path, toy_data: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A checkpoint without card.json loads and ranks; `report` and `refresh` read and rewrite the card, and gave a
    traceback ("a model card needs at least a name"). They skip it with a warning, and say so when none is left."""
    import shutil

    folder = tmp_path / "models"
    shutil.copytree(pretrained / "cli-tiny", folder / "cardless")
    (folder / "cardless" / "card.json").unlink()
    config = folder / "cardless" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text(encoding="utf-8")), "name": "cardless"}),
                      encoding="utf-8")
    for argv in (["report"], ["refresh", "--data", str(toy_data)]):
        with pytest.raises(SystemExit, match="^error: no checkpoint with a model card"):
            main([*argv, "--pretrained", str(folder)])
        assert "warning: skipped cardless: it has no model card (card.json)" in capsys.readouterr().err
    shutil.copytree(pretrained / "cli-tiny", folder / "cli-tiny")
    main(["report", "--pretrained", str(folder)])
    said = capsys.readouterr()
    assert "| cli-tiny | " in said.out and "skipped cardless" in said.err


def test_refresh_reports_another_sources_test_beside_the_cards_own(pretrained: Path, toy_data: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The defaults are tested on TrecQA (their card's test); their WikiQA test figures stood in the README only, typed
    from an evaluate run. `refresh --other-test` puts them in the card, beside the baselines on that split, and
    `report` prints them: the same figures `evaluate` gives, the card's own test left as it was."""
    import shutil

    from matching.evaluation.dataset import evaluate
    from matching.text.data import read_toks_folder
    from matching.training.checkpoint import load_checkpoint

    folder = tmp_path / "models"
    shutil.copytree(pretrained / "cli-tiny", folder / "cli-tiny")
    other = tmp_path / "other"
    write_toks_folder(other / "test", toy_lists(0, 6))
    before = json.loads((folder / "cli-tiny" / "card.json").read_text(encoding="utf-8"))
    with pytest.raises(SystemExit, match="is the --data test itself"):
        main(["refresh", "--pretrained", str(folder), "--data", str(toy_data), "--other-test", str(toy_data)])
    main(["refresh", "--pretrained", str(folder), "--data", str(toy_data), "--other-test", str(other)])
    card = json.loads((folder / "cli-tiny" / "card.json").read_text(encoding="utf-8"))
    lists = read_toks_folder(other / "test")
    matcher = load_checkpoint(folder / "cli-tiny")
    expected = evaluate(lists, {"cli-tiny": matcher}).overall
    tested = card["other_tests"]["other"]
    assert (tested["questions"], tested["pairs"]) == (6, sum(len(x.candidates) for x in lists))
    assert tested["metrics"]["MAP"] == pytest.approx(expected["cli-tiny"]["MAP"], abs=1e-12)
    assert tested["baselines"]["BM25"]["MAP"] == pytest.approx(expected["BM25"]["MAP"], abs=1e-12)
    assert card["metrics"]["test"] == pytest.approx(before["metrics"]["test"], abs=1e-12)
    assert "### Test on another source: other (6 questions" in (folder / "cli-tiny" / "README.md").read_text(
        encoding="utf-8")
    capsys.readouterr()
    main(["report", "--pretrained", str(folder)])
    out = capsys.readouterr().out
    assert "**On another source's test: other** (6 questions" in out
    assert f"| cli-tiny | {card['data']['test']['source']} | {expected['cli-tiny']['MAP']:.4f} |" in out
    assert f"| BM25 | (baseline) | {expected['BM25']['MAP']:.4f} |" in out


def test_evaluate_names_the_questions_it_skipped_and_why(pretrained: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A count of skipped questions alone sent a researcher to the notebook API to find which and why."""
    rows = ["question,candidate,label", "who wrote hamlet,shakespeare wrote hamlet,1", "who wrote hamlet,paris,0"]
    rows += [f"long {n},{'word ' * 5000},1" for n in range(7)]
    data = tmp_path / "skips.csv"
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(data)])
    out = capsys.readouterr().out
    assert (f"{data}: 1 question evaluated (7 skipped)\n  skipped long 0: text has 25,000 characters; the limit is "
            "20,000\n") in out
    assert out.count("\n  skipped long ") == 5 and "\n  and 2 more\n" in out
    # Past the csv module's own field limit (131,072 characters) too: skipped as its own question, not the whole file.
    huge = tmp_path / "huge.csv"
    huge.write_text("question,candidate,label\nwho wrote hamlet,shakespeare wrote hamlet,1\nwho wrote hamlet,paris,0\n"
                    f"big one,{'word ' * 27_000},1\n", encoding="utf-8")
    main(["evaluate", "--pretrained", str(pretrained), "--data", str(huge)])
    said = capsys.readouterr().out
    assert f"{huge}: 1 question evaluated (1 skipped)\n  skipped big one: text has 135,000 characters" in said


def test_explain_opens_as_the_app_does_and_says_what_it_cut(pretrained: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The README's `explain` printed every shipped checkpoint (36 models, 351 lines) and ignored $MATCHLENS_MODELS,
    which the app and `matching.load` read; words past a model's length counted for nothing, unsaid."""
    from matching.training.cards import default_set

    long = "the river is long " * 20 + "shakespeare wrote hamlet"
    main(["explain", "who wrote hamlet ?", "shakespeare wrote hamlet", "the river is long"])
    out = capsys.readouterr().out
    assert [line.removeprefix("== ") for line in out.splitlines() if line.startswith("== ")] == list(default_set()[0])
    env = {**os.environ, "PYTHONPATH": str(REPO), "MATCHLENS_MODELS": str(pretrained)}
    result = subprocess.run([sys.executable, "-m", "matching", "explain", "who wrote hamlet ?", long, "a river"],
                            capture_output=True, text=True, timeout=120, cwd=REPO, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert "== cli-tiny" in result.stdout and result.stdout.count("\n== ") == 1
    assert "note: Candidate #1 has 83 words; the models read only the first 16" in result.stdout
    # `--models` with no names ran every checkpoint (36 here), as if it had said "all": it is refused, with argparse's
    # usage line, before anything loads.
    with pytest.raises(SystemExit) as refused:
        main(["explain", "who wrote hamlet ?", "shakespeare wrote hamlet", "--models"])
    assert refused.value.code == 2 and "--models: expected at least one argument" in capsys.readouterr().err


def test_cli_edges_a_researcher_met(pretrained: Path, toy_data: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Each read "a.toks: file missing", "unknown model" or nothing at all before."""
    import shutil

    data = tmp_path / "lists.csv"
    data.write_text("question,candidate,label\nwho wrote hamlet,shakespeare wrote hamlet,1\nwho wrote hamlet,paris,0\n",
                    encoding="utf-8")
    for argv, said in [
        (["evaluate", "--data", str(data), "--split", "dev"], "lists.csv is a file: --split picks a split folder"),
        (["evaluate", "--data", str(tmp_path / "nowhere"), "--split", "test"], "nowhere: no such file or folder"),
    ]:
        with pytest.raises(SystemExit, match=f"^error: .*{said}"):
            main([*argv, "--pretrained", str(pretrained)])
    broken = tmp_path / "models"
    shutil.copytree(pretrained / "cli-tiny", broken / "cli-tiny")
    weights = broken / "cli-tiny" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(SystemExit, match="^error: cli-tiny could not be loaded: .*corrupt or truncated weights"):
        main(["explain", "--pretrained", str(broken), "--models", "cli-tiny", "--", "q", "a"])
    capsys.readouterr()
    help_text = build_parser().format_help()
    assert "paper-\ntables" not in help_text and "COMMAND --help" in help_text
    for command in ("train", "sweep", "evaluate", "keywords", "refresh"):
        parser = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
        bare = [a.dest for a in parser._actions if a.help is None and a.dest not in ("help", "command_parser")]
        assert not bare, (command, bare)


def test_paper_tables_checks_where_it_writes_before_scoring(pretrained: Path, toy_data: Path, tmp_path: Path) -> None:
    """--out in a folder that did not exist ended a run that had scored every checkpoint with a traceback."""
    with pytest.raises(SystemExit, match=f"--out {tmp_path} is a folder"):
        main(["paper-tables", "--pretrained", str(pretrained), "--data", str(toy_data), "--out", str(tmp_path)])
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit, match="cannot be written"):
        main(["paper-tables", "--pretrained", str(pretrained), "--data", str(toy_data),
              "--out", str(blocked / "paper.json")])


def test_every_commands_help_says_what_it_does() -> None:
    """Only explain and app had a description: evaluate --help opened on its usage and a list of options."""
    parser = build_parser()
    commands = next(action for action in parser._actions if action.choices and "evaluate" in action.choices)
    for name, command in commands.choices.items():
        assert command.description and len(command.description) > 10, name
