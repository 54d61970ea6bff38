"""Readers of the three ranking formats, and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import toy_lists, write_toks_folder

from matching.text.data import (
    CSV_COLUMNS,
    TSV_COLUMNS,
    DataError,
    RankingFile,
    RankingList,
    fingerprint,
    open_ranking_file,
    parse_ranking_file,
    read_ranking_file,
    read_toks_folder,
)

TSV = "\t".join(TSV_COLUMNS) + "\n" + "\n".join("\t".join(row) for row in [
    ("Q1", "how are glaciers formed ?", "D1", "Glacier", "D1-0", "A glacier is a \"river\" of ice .", "0"),
    ("Q1", "how are glaciers formed ?", "D1", "Glacier", "D1-1", "Glaciers form where snow, over years, piles up .",
     "1"),
    ("Q2", "who is the mayor ?", "D2", "Mayor", "D2-0", "The mayor leads the city .", "1"),
]) + "\n"

CSV = "question,candidate,label\n" + "\n".join([
    "what is ice,\"frozen water, mostly\",1",
    "what is ice,a kind of cream,0",
    "where is rome,rome is in italy,1.0",
]) + "\n"


def test_toks_folder_round_trip(tmp_path: Path) -> None:
    lists = toy_lists(0, 3)
    folder = write_toks_folder(tmp_path / "split", lists)
    assert read_toks_folder(folder) == lists
    assert read_ranking_file(folder) == lists
    assert all(item.has_relevant for item in lists)


def test_toks_groups_by_id_in_first_seen_order(tmp_path: Path) -> None:
    folder = tmp_path / "split"
    folder.mkdir()
    files = {"a.toks": ["q b", "q a", "q b"], "b.toks": ["x", "y", "z"], "id.txt": ["B", "A", "B"],
             "sim.txt": ["0", "1", " 1 "]}
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines), encoding="utf-8")
    assert read_toks_folder(folder) == [RankingList("B", "q b", ("x", "z"), (0, 1)),
                                        RankingList("A", "q a", ("y",), (1,))]


def test_misaligned_toks_files(tmp_path: Path) -> None:
    folder = write_toks_folder(tmp_path / "split", toy_lists(0, 2))
    lines = (folder / "b.toks").read_text(encoding="utf-8").splitlines()
    (folder / "b.toks").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="not line-aligned") as caught:
        read_toks_folder(folder)
    assert str(folder) in str(caught.value)


def test_missing_toks_file(tmp_path: Path) -> None:
    folder = write_toks_folder(tmp_path / "split", toy_lists(0, 1))
    (folder / "sim.txt").unlink()
    with pytest.raises(DataError, match="sim.txt: file missing"):
        read_toks_folder(folder)


def test_toks_not_utf8(tmp_path: Path) -> None:
    folder = write_toks_folder(tmp_path / "split", toy_lists(0, 1))
    (folder / "b.toks").write_bytes("café\n".encode("latin-1") * 4)
    with pytest.raises(DataError, match=r"b\.toks: not UTF-8 text \(byte 3\); save it as UTF-8"):
        read_toks_folder(folder)


@pytest.mark.parametrize("label, message", [("yes", "is not a number"), ("2", "is not 0 or 1"),
                                            ("0.5", "is not 0 or 1"), ("", "is not a number")])
def test_bad_toks_label(tmp_path: Path, label: str, message: str) -> None:
    folder = write_toks_folder(tmp_path / "split", toy_lists(0, 1))
    lines = (folder / "sim.txt").read_text(encoding="utf-8").splitlines()
    lines[2] = label
    (folder / "sim.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=message) as caught:
        read_toks_folder(folder)
    assert "sim.txt line 3" in str(caught.value)


@pytest.mark.parametrize("label, value", [("1", 1), ("0", 0), (" 1 ", 1), ("1.0", 1), ("0.0", 0), ("-0", 0)])
def test_toks_label_spellings(tmp_path: Path, label: str, value: int) -> None:
    # "0" and "1" take a short path; every other spelling of them is still read as the number it is, by the
    # whole-folder reader and by the one that reads a row at a time (open_ranking_file, evaluate, the shards).
    folder = write_toks_folder(tmp_path / "split", toy_lists(0, 1))
    lines = (folder / "sim.txt").read_text(encoding="utf-8").splitlines()
    lines[2] = label
    (folder / "sim.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = read_toks_folder(folder)
    assert [gold for item in whole for gold in item.labels][2] == value
    assert [(i.qid, i.labels) for i in open_ranking_file(folder)] == [(i.qid, i.labels) for i in whole]


def test_parse_tsv() -> None:
    lists = parse_ranking_file(TSV.encode("utf-8"), "upload.tsv")
    assert [item.qid for item in lists] == ["Q1", "Q2"]
    assert lists[0].candidates == ("A glacier is a \"river\" of ice .",
                                   "Glaciers form where snow, over years, piles up .")
    assert lists[0].labels == (0, 1) and lists[1].labels == (1,)
    assert lists[0].question == "how are glaciers formed ?"


def test_parse_csv_with_bom_and_quotes() -> None:
    lists = parse_ranking_file(b"\xef\xbb\xbf" + CSV.encode("utf-8"), "upload.csv")
    assert lists == [RankingList("what is ice", "what is ice", ("frozen water, mostly", "a kind of cream"), (1, 0)),
                     RankingList("where is rome", "where is rome", ("rome is in italy",), (1,))]


def test_csv_header_is_case_insensitive() -> None:
    lists = parse_ranking_file(b"Question,Candidate,Label\nq,c,0\n", "upper.csv")
    assert lists == [RankingList("q", "q", ("c",), (0,))]


def test_read_ranking_file_from_disk(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text(CSV, encoding="utf-8")
    assert len(read_ranking_file(tmp_path / "data.csv")) == 2
    with pytest.raises(DataError, match="file missing"):
        read_ranking_file(tmp_path / "nothing.csv")


@pytest.mark.parametrize("raw, message", [
    (b"question,answer,label\nq,a,1\n", r"missing column\(s\) \['candidate'\]"),
    (b"QuestionID\tQuestion\tSentence\tLabel\nQ1\tq\ts\t1\n", "missing column"),
    (b"", "the file is empty"),
    (b"\n\n", "the file is empty"),
    (",".join(CSV_COLUMNS).encode() + b"\n", "no rows"),
    (",".join(CSV_COLUMNS).encode() + b"\nq,c,maybe\n", "label 'maybe' is not a number"),
    (",".join(CSV_COLUMNS).encode() + b"\nq,c,3\n", "is not 0 or 1"),
    (",".join(CSV_COLUMNS).encode() + b"\nq,c\n", "wrong number of fields"),
    (",".join(CSV_COLUMNS).encode() + b"\nq,c,1,extra\n", "wrong number of fields"),
    (TSV.replace("\t1\n", "\tyes\n", 1).encode(), "question Q1: label 'yes'"),
    ("question,candidate,label\nqu\xe9,c,1\n".encode("latin-1"), r"not UTF-8 text \(byte \d+\)"),
])
def test_bad_uploads(raw: bytes, message: str) -> None:
    with pytest.raises(DataError, match=message) as caught:
        parse_ranking_file(raw, "upload.csv")
    assert str(caught.value).startswith("upload.csv")


def test_a_bad_csv_label_names_its_line_and_question_and_booleans_are_labels() -> None:
    """'label '2' is not 0 or 1' sent a researcher searching a file of thousands of rows; pandas' True/False were
    refused as not numbers."""
    raw = (",".join(CSV_COLUMNS) + "\nwho wrote hamlet,shakespeare,1\nwho wrote hamlet,a play,0\n"
           '"where is\nparis",in france,2\n').encode()
    with pytest.raises(DataError, match=r"^upload.csv line 5 \(question 'where is\\nparis'\): label '2' is not 0 or 1"):
        parse_ranking_file(raw, "upload.csv")
    raw = (",".join(CSV_COLUMNS) + "\nq,a,True\nq,b,FALSE\nq,c,false\n").encode()
    assert parse_ranking_file(raw, "upload.csv")[0].labels == (1, 0, 0)


def test_a_file_in_another_format_says_which_format_it_needs(tmp_path: Path) -> None:
    """A folder of CSVs read "a.toks: file missing"; a tab-separated question,candidate,label and a CSV separated by
    semicolons each listed missing columns without saying why."""
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text(",".join(CSV_COLUMNS) + "\nq,c,1\n", encoding="utf-8")
    for read in (read_ranking_file, read_toks_folder):
        with pytest.raises(DataError, match=r"is a folder of ranking files \(a.csv, b.csv\), not a toks folder .* "
                                            r"give one of its files, e.g. .*a.csv$"):
            read(tmp_path)
    with pytest.raises(DataError, match="a file with tabs is read as WikiQA's TSV"):
        parse_ranking_file(b"question\tcandidate\tlabel\nq\tc\t1\n", "plain.tsv")
    with pytest.raises(DataError, match="this header is separated by ';'"):
        parse_ranking_file(b"question;candidate;label\nq;c;1\n", "semicolon.csv")
    with pytest.raises(DataError, match="this looks like JSON; a ranking file here is a CSV or WikiQA's TSV"):
        parse_ranking_file(b'{"question": "q", "candidate": "c", "label": 1}\n', "lines.jsonl")


def test_fingerprint_tracks_content() -> None:
    lists = toy_lists(0, 2)
    assert fingerprint(lists) == fingerprint(toy_lists(0, 2))
    assert fingerprint(lists).startswith("sha256:") and len(fingerprint(lists)) == len("sha256:") + 16
    changed = [lists[0], RankingList(lists[1].qid, lists[1].question, lists[1].candidates,
                                     tuple(1 - x for x in lists[1].labels))]
    assert fingerprint(changed) != fingerprint(lists)


# ---------------------------------------------------------------- read a question at a time

def _opened(path: Path) -> tuple[RankingFile, list[RankingList]]:
    opened = open_ranking_file(path)
    return opened, list(opened)


@pytest.mark.parametrize("form", ["toks", "tsv", "csv", "csv-bom-crlf"])
def test_open_ranking_file_reads_what_the_whole_file_reader_reads(tmp_path: Path, form: str) -> None:
    if form == "toks":
        path = write_toks_folder(tmp_path / "split", toy_lists(0, 5))
    else:
        text = TSV if form == "tsv" else CSV
        path = tmp_path / f"data.{form[:3]}"
        path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode() if form == "csv-bom-crlf"
                         else text.encode())
    opened, lists = _opened(path)
    assert lists == read_ranking_file(path) and len(lists) > 1
    assert (opened.questions, opened.pairs, opened.grouped) == (len(lists), sum(len(x.candidates) for x in lists),
                                                                 True)
    assert len(opened) == len(lists) and list(opened) == lists  # read again from the start each time


def test_open_ranking_file_reads_lazily(tmp_path: Path) -> None:
    """Iterating gives the first question before the rest of the file is read."""
    path = tmp_path / "data.csv"
    path.write_text(CSV, encoding="utf-8")
    opened = open_ranking_file(path)
    path.write_text(CSV.replace("where is rome", "where is paris"), encoding="utf-8")  # changed after the check
    first = next(iter(opened))
    assert first.question == "what is ice"
    assert [item.question for item in opened] == ["what is ice", "where is paris"]


def test_rows_of_a_question_apart_are_grouped_as_the_whole_file_reader_groups_them(tmp_path: Path) -> None:
    path = tmp_path / "apart.csv"
    path.write_text("question,candidate,label\nq1,a,1\nq2,b,0\nq1,c,0\n", encoding="utf-8")
    opened, lists = _opened(path)
    assert not opened.grouped and (opened.questions, opened.pairs) == (2, 3)
    assert lists == read_ranking_file(path) == [RankingList("q1", "q1", ("a", "c"), (1, 0)),
                                                RankingList("q2", "q2", ("b",), (0,))]


def test_open_ranking_file_reports_what_the_whole_file_reader_reports(tmp_path: Path) -> None:
    """Every error comes from the checking pass, before anything is evaluated, with the same message."""
    folder = write_toks_folder(tmp_path / "split", toy_lists(0, 2))
    lines = (folder / "sim.txt").read_text(encoding="utf-8").splitlines()
    (folder / "sim.txt").write_text("\n".join([*lines[:-1], "maybe"]) + "\n", encoding="utf-8")
    cases: list[Path] = [folder]
    short = write_toks_folder(tmp_path / "short", toy_lists(0, 2))
    (short / "b.toks").write_text("\n".join((short / "b.toks").read_text(encoding="utf-8").splitlines()[:-1]) + "\n",
                                  encoding="utf-8")
    cases.append(short)
    latin = write_toks_folder(tmp_path / "latin", toy_lists(0, 1))
    (latin / "b.toks").write_bytes("café\n".encode("latin-1") * 4)
    cases.append(latin)
    uploads = {"columns.csv": b"question,answer,label\nq,a,1\n", "fields.csv": b"question,candidate,label\nq,c\n",
               "empty.csv": b"question,candidate,label\n",
               "latin.csv": "question,candidate,label\nqu\xe9,c,1\n".encode("latin-1"),
               "label.tsv": TSV.replace("\t1\n", "\tyes\n", 1).encode()}
    for name, raw in uploads.items():
        (tmp_path / name).write_bytes(raw)
        cases.append(tmp_path / name)
    cases.append(tmp_path / "nothing.csv")
    for path in cases:
        with pytest.raises(DataError) as whole:
            read_ranking_file(path)
        with pytest.raises(DataError) as opened:
            open_ranking_file(path)
        assert str(opened.value) == str(whole.value), path


def test_combine_keeps_every_train_and_dev_and_one_test(tmp_path: Path) -> None:
    from conftest import toy_lists

    from matching.text.data import combine_data, read_toks_folder, write_toks_folder

    for name, (start, stop) in (("one", (0, 6)), ("two", (6, 12))):
        for split in ("train", "dev", "test"):
            write_toks_folder(tmp_path / name / split, toy_lists(start, stop))
    counts = combine_data([tmp_path / "one", tmp_path / "two"], tmp_path / "one", tmp_path / "both")
    assert counts == {"train": 12, "dev": 12, "test": 6}
    train = read_toks_folder(tmp_path / "both" / "train")
    assert [item.qid for item in train][:2] == ["one:Q0", "one:Q1"] and train[6].qid == "two:Q6"
    assert [(i.question, i.candidates, i.labels) for i in train[6:]] == [
        (i.question, i.candidates, i.labels) for i in toy_lists(6, 12)]
    assert read_toks_folder(tmp_path / "both" / "test") == read_toks_folder(tmp_path / "one" / "test")
    counts = combine_data([tmp_path / "one", tmp_path / "two"], tmp_path / "one", tmp_path / "weighted",
                          {"two": 3})
    assert counts == {"train": 6 + 3 * 6, "dev": 12, "test": 6}
    weighted = read_toks_folder(tmp_path / "weighted" / "train")
    assert [i.qid for i in weighted if i.qid.startswith("two:Q6")] == ["two:Q6", "two:Q6#2", "two:Q6#3"]
    with pytest.raises(DataError, match="each must name a source folder"):
        combine_data([tmp_path / "one"], tmp_path / "one", tmp_path / "bad", {"three": 2})


def test_combine_can_take_dev_from_another_data_set_for_a_cross_source_check(tmp_path: Path) -> None:
    from conftest import toy_lists

    from matching.text.data import combine_data, read_toks_folder, write_toks_folder

    for name, (start, stop) in (("one", (0, 6)), ("two", (6, 10))):
        for split in ("train", "dev", "test"):
            write_toks_folder(tmp_path / name / split, toy_lists(start, stop))
    counts = combine_data([tmp_path / "one"], tmp_path / "two", tmp_path / "cross", dev=[tmp_path / "two"])
    assert counts == {"train": 6, "dev": 4, "test": 4}
    assert {i.qid.split(":")[0] for i in read_toks_folder(tmp_path / "cross" / "train")} == {"one"}
    dev = read_toks_folder(tmp_path / "cross" / "dev")
    assert [i.qid for i in dev] == [f"two:Q{n}" for n in range(6, 10)]
    assert [(i.question, i.candidates, i.labels) for i in dev] == [
        (i.question, i.candidates, i.labels) for i in toy_lists(6, 10)]


def test_built_in_splits_are_the_complete_folders_under_the_data_root(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from matching.text.data import RankingList, write_toks_folder
    from matching.text.datasets import built_in_splits, data_root

    lists = [RankingList("q1", "who wrote it", ("she wrote it", "no"), (1, 0))]
    write_toks_folder(tmp_path / "wikiqa" / "test", lists)
    write_toks_folder(tmp_path / "trecqa" / "dev", lists)
    (tmp_path / "trecqa" / "test").mkdir()  # incomplete: not offered
    write_toks_folder(tmp_path / "other" / "test", lists)  # not a built-in data set
    monkeypatch.setenv("MATCHLENS_DATA", str(tmp_path))
    assert data_root() == tmp_path
    splits = built_in_splits()
    assert [s.label for s in splits] == ["WikiQA test", "TrecQA dev"]
    before = splits[0].key
    (tmp_path / "wikiqa" / "test" / "sim.txt").write_text("0\n0\n0\n", encoding="utf-8")
    assert built_in_splits()[0].key != before  # the key follows the files' content
    monkeypatch.setenv("MATCHLENS_DATA", str(tmp_path / "missing"))
    assert built_in_splits() == []


def test_the_section_collection_is_offered_from_the_files_that_ship(tmp_path: Path) -> None:
    from matching.text.datasets import shipped_collections

    shipped = shipped_collections()
    assert [c.label for c in shipped] == ["Section questions, set A", "Section questions, set B",
                                          "Section questions, set C"]
    assert [len(c.read()) for c in shipped] == [75, 75, 75]
    assert len({c.key for c in shipped}) == 3
    (tmp_path / "section-questions-b.csv").write_text("question,candidate,label\nwho?,she did,1\n", encoding="utf-8")
    only_b = shipped_collections(tmp_path)  # a checkout without set A offers set B alone
    assert [(c.label, len(c.read())) for c in only_b] == [("Section questions, set B", 1)]


@pytest.mark.parametrize("name", ["section-questions-a.csv", "section-questions-b.csv", "section-questions-c.csv"])
def test_the_section_collection_is_three_questions_a_section_each_answered_by_one_of_its_sentences(name: str) -> None:
    """`bench/section_collection.py` reads these: 25 sections, three questions each, every sentence of the section a
    candidate in its order, exactly one answering, a different one for each question of the section."""
    lists = read_ranking_file(Path(__file__).resolve().parents[1] / "samples" / name)
    assert len(lists) == 75 and len({item.question for item in lists}) == 75
    sections: dict[tuple[str, ...], list[int]] = {}
    for item in lists:
        assert sum(item.labels) == 1 and 5 <= len(item.candidates) <= 9
        sections.setdefault(tuple(item.candidates), []).append(item.labels.index(1))
    assert len(sections) == 25
    assert all(len(answers) == 3 and len(set(answers)) == 3 for answers in sections.values())
