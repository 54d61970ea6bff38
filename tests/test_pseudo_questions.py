"""Pseudo-questions written from a section's sentences (`training.pseudo_questions`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from matching.__main__ import main
from matching.text.data import RankingList, read_toks_folder, write_toks_folder
from matching.training.pseudo_questions import (
    WH_WORDS,
    PseudoQuestionParams,
    pseudo_lists,
    pseudo_question,
    section_subject,
)

SECTION = ("the achaemenid empire was an ancient iranian empire founded by cyrus the great .",
           "it ruled from the balkans to the indus valley at its greatest extent .",
           "the empire was divided into provinces called satrapies , each ruled by a satrap .",
           "its capital cities included persepolis , susa and babylon .",
           "the empire fell to alexander the great in 330 bc .")


def sections(count: int) -> list[RankingList]:
    """`count` distinct sections: SECTION with a numbered last sentence each."""
    return [RankingList(f"q{n}", "where was it ?", [*SECTION[:-1], f"{SECTION[-1]} ( part {n} )"], [0] * 5)
            for n in range(count)]


def test_the_subject_is_the_first_sentence_before_its_verb() -> None:
    assert section_subject(SECTION[0]) == ["the", "achaemenid", "empire"]
    assert section_subject("monica samille lewinsky ( born july 23 , 1973 ) is an american") == [
        "monica", "samille", "lewinsky"]
    # a sentence that opens with a clause names no subject in its first words
    assert section_subject("in 1990 , after many years of work on the subject , the team was formed .") == []


def test_a_pseudo_question_keeps_only_the_sentence_the_subject_and_a_wh_word() -> None:
    rng = random.Random(3)
    subject = section_subject(SECTION[0])
    for sentence in SECTION[1:]:
        for _ in range(20):
            question = pseudo_question(sentence, subject, rng, PseudoQuestionParams())
            assert question is not None
            words = question.split()
            assert words[0] in WH_WORDS and words[-1] == "?"
            assert set(words[1:-1]) <= set(sentence.split()) | set(subject)
            # the span the question asks for is out: fewer of the sentence's words than it has
            assert len(set(words[1:-1]) & set(sentence.split())) < len(set(sentence.split()))


def test_a_short_sentence_gives_no_question() -> None:
    assert pseudo_question("it rained .", [], random.Random(0), PseudoQuestionParams()) is None


def test_lists_are_the_sections_with_the_drawn_sentence_as_the_one_answer() -> None:
    made = pseudo_lists(sections(40), seed=7, params=PseudoQuestionParams(per_section=2))
    assert len(made) == 80
    for item in made:
        assert sum(item.labels) == 1 and len(item.candidates) == len(item.labels) == 5
        assert tuple(item.candidates[:-1]) == SECTION[:-1]
    # drawn uniformly: the first sentence is not the usual answer, as it is in WikiQA
    answers = [item.labels.index(1) for item in made]
    assert set(answers) == set(range(5)) and answers.count(0) < len(made) / 2
    assert made == pseudo_lists(sections(40), seed=7, params=PseudoQuestionParams(per_section=2))
    assert made != pseudo_lists(sections(40), seed=8, params=PseudoQuestionParams(per_section=2))


def test_a_section_asked_about_twice_is_used_once() -> None:
    twice = sections(1) * 2
    assert len(pseudo_lists(twice, seed=0)) == 1


def test_the_command_writes_a_training_folder_that_combine_takes(toy_data: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    source = write_toks_folder(tmp_path / "sections" / "train", sections(12)).parent
    main(["pseudo-questions", "--data", str(source), "--out", str(tmp_path / "pseudo"), "--seed", "1"])
    assert "12 pseudo-questions" in capsys.readouterr().out
    made = read_toks_folder(tmp_path / "pseudo" / "train")
    assert len(made) == 12 and not (tmp_path / "pseudo" / "dev").exists()
    main(["combine", "--data", str(toy_data), str(tmp_path / "pseudo"), "--dev", str(toy_data), "--test",
          str(toy_data), "--out", str(tmp_path / "mixed")])
    train = read_toks_folder(tmp_path / "mixed" / "train")
    assert sum(item.qid.startswith("pseudo:") for item in train) == 12
    assert all(not item.qid.startswith("pseudo:") for item in read_toks_folder(tmp_path / "mixed" / "dev"))
    # --subject 1: every question names the section's subject; 0: none adds it (it may keep the sentence's own)
    main(["pseudo-questions", "--data", str(source), "--out", str(tmp_path / "named"), "--subject", "1"])
    assert all("achaemenid" in item.question.split() for item in read_toks_folder(tmp_path / "named" / "train"))
    main(["pseudo-questions", "--data", str(source), "--out", str(tmp_path / "unnamed"), "--subject", "0"])
    unnamed = read_toks_folder(tmp_path / "unnamed" / "train")
    assert all("achaemenid" not in item.question.split() for item in unnamed if item.labels[0] == 0)


def test_keep_sets_how_many_of_the_sentences_other_words_a_question_holds(tmp_path: Path) -> None:
    source = write_toks_folder(tmp_path / "sections" / "train", sections(40)).parent

    def mean_words(keep: str) -> float:
        out = tmp_path / f"keep-{keep}"
        main(["pseudo-questions", "--data", str(source), "--out", str(out), "--subject", "0", "--keep", keep])
        made = read_toks_folder(out / "train")
        return sum(len(item.question.split()) for item in made) / len(made)

    # a wh-word, the kept words and "?": keep 1 holds every word outside the span, keep 0.3 about a third of them
    assert mean_words("1") > mean_words("0.6") > mean_words("0.3") >= 3


@pytest.mark.parametrize("flag", ["--keep", "--subject"])
def test_a_probability_outside_0_to_1_is_refused_with_a_message(flag: str, tmp_path: Path) -> None:
    source = write_toks_folder(tmp_path / "sections" / "train", sections(3)).parent
    with pytest.raises(SystemExit, match=f"{flag} is a probability"):
        main(["pseudo-questions", "--data", str(source), "--out", str(tmp_path / "out"), flag, "1.5"])
    assert not (tmp_path / "out").exists()


def test_a_share_keeps_a_subset_of_the_same_lists(tmp_path: Path) -> None:
    every = pseudo_lists(sections(200), seed=3)
    half = pseudo_lists(sections(200), seed=3, params=PseudoQuestionParams(share=0.5))
    assert all(item in every for item in half) and 70 < len(half) < 130
    assert half == pseudo_lists(sections(200), seed=3, params=PseudoQuestionParams(share=0.5))
    assert not pseudo_lists(sections(200), seed=3, params=PseudoQuestionParams(share=0.0))
    source = write_toks_folder(tmp_path / "sections" / "train", sections(200)).parent
    main(["pseudo-questions", "--data", str(source), "--out", str(tmp_path / "half"), "--seed", "3", "--share", "0.5"])
    assert read_toks_folder(tmp_path / "half" / "train") == half
    with pytest.raises(SystemExit, match="--share is a probability"):
        main(["pseudo-questions", "--data", str(source), "--out", str(tmp_path / "x"), "--share", "2"])
