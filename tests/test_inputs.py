"""Typed input -> candidates: blank lines, unusable lines and the cap become notes, never errors."""

from __future__ import annotations

from matching.text.inputs import (
    clean_gold,
    join_candidates,
    labels_for,
    parse_input,
    question_problem,
    remap_gold,
    split_candidates,
)
from matching.text.tokens import MAX_TEXT_CHARS


def test_one_candidate_per_line_blank_lines_skipped() -> None:
    parsed = split_candidates("  first answer \n\n second answer\n   \n")
    assert parsed.candidates == ("first answer", "second answer")
    assert parsed.lines == (1, 3)
    assert parsed.notes == ()
    assert parsed.total_lines == 2


def test_wordless_and_too_long_lines_are_left_out_with_a_note() -> None:
    text = "good one\n\u200b\u200b\n" + "x" * (MAX_TEXT_CHARS + 1) + "\nlast"
    parsed = split_candidates(text)
    assert parsed.candidates == ("good one", "last")
    assert parsed.lines == (1, 4)
    assert any("Line 2 has no words" in note for note in parsed.notes)
    assert any("Line 3 has 20,001 characters" in note for note in parsed.notes)


def test_cap_keeps_the_first_and_says_so() -> None:
    parsed = split_candidates("\n".join(f"answer {i}" for i in range(130)), max_candidates=100)
    assert len(parsed.candidates) == 100
    assert parsed.candidates[-1] == "answer 99"
    assert any("130 candidates" in note and "first 100" in note for note in parsed.notes)


def test_question_problems() -> None:
    assert question_problem("") is not None and "empty" in question_problem("")  # type: ignore[operator]
    assert "no words" in (question_problem("\u200b \u200d") or "")
    assert "limit" in (question_problem("x" * (MAX_TEXT_CHARS + 1)) or "")
    assert question_problem("Who wrote it? 東京 🔒") is None


def test_join_candidates_puts_each_on_one_line() -> None:
    text = join_candidates(["two\nlines", "  spaced   out "])
    assert text == "two lines\nspaced out"
    assert split_candidates(text).candidates == ("two lines", "spaced out")


def test_gold_and_labels() -> None:
    assert clean_gold([3, 1, 1, -1, 9], 4) == [1, 3]
    assert labels_for([1], 3) == [0, 1, 0]
    assert labels_for([], 3) is None
    assert labels_for([7], 3) is None


def test_gold_marks_follow_edits_not_replacements() -> None:
    before = ["Jane Austen wrote Pride and Prejudice.", "It is set in England.", "A dog barked."]
    edited = ["Jane Austen wrote the novel Pride and Prejudice.", "It is set in England.", "A dog barked."]
    assert remap_gold(before, edited, [0]) == [0]
    replaced = ["Paris is in France.", "Berlin is in Germany.", "Rome is in Italy."]
    assert remap_gold(before, replaced, [0]) == []
    reordered = ["A new line.", "A dog barked.", "It is set in England.", "Jane Austen wrote Pride and Prejudice."]
    assert remap_gold(before, reordered, [0, 2]) == [1, 3]
    assert remap_gold(before, before[:2], [2]) == []


def test_parse_input_reads_every_text_once_and_keeps_the_words() -> None:
    from matching.text.inputs import parse_input
    from matching.text.tokens import tokenize

    parsed = parse_input("Who wrote Hamlet?", "Shakespeare wrote it.\n\n\u200b\nA play by him", [1])
    assert parsed.problem is None
    assert parsed.question_tokens == tuple(tokenize("Who wrote Hamlet?"))
    assert parsed.candidates.candidates == ("Shakespeare wrote it.", "A play by him")
    assert parsed.candidates.tokens == tuple(tuple(tokenize(c)) for c in parsed.candidates.candidates)
    assert parsed.labels == (0, 1)
    assert parse_input("", "x", []).problem == "Type a question: it is empty."
    assert "at least one candidate" in (parse_input("why?", " \n ", []).problem or "")


def test_direction_controls_are_removed_with_a_note() -> None:
    parsed = parse_input("Where\u202e is it?", "Sydney is \u202ebig\nCanberra is the capital.", [])
    assert parsed.question == "Where is it?" and parsed.candidates.candidates[0] == "Sydney is big"
    assert [t.text for t in parsed.question_tokens][:2] == ["Where", "is"]
    notes = parsed.candidates.notes
    assert len(notes) == 2 and notes[0].startswith("The question had 1") and notes[1].startswith("Line 1 had 1")
    assert parse_input("Where is it?", "Canberra.", []).candidates.notes == ()


def test_a_collection_says_which_lists_a_typed_ranking_cannot_hold_whole() -> None:
    """A question of 150 candidates opened from Evaluate is ranked by its first 100: a correct one past #100 went
    out of sight without a word."""
    from matching.text.data import RankingList
    from matching.text.inputs import MAX_CANDIDATES, past_the_limit

    def listed(size: int, correct: int) -> RankingList:
        return RankingList(f"q{size}-{correct}", "who", tuple(f"c{n}" for n in range(size)),
                           tuple(int(n == correct) for n in range(size)))

    lists = [listed(10, 3), listed(MAX_CANDIDATES, MAX_CANDIDATES - 1), listed(150, 2), listed(150, 120)]
    assert past_the_limit(lists) == (2, 1)
    assert past_the_limit(lists[:2]) == (0, 0)


def test_markup_is_named_and_left_as_the_person_typed_it() -> None:
    """Pasted HTML ranked without a word: a closing tag glued to a word ("who</b") made it unknown to every model."""
    from matching.text.inputs import markup_note, parse_input

    parsed = parse_input("<b>who</b> wrote it?", "Shakespeare wrote it.\n<p>A dog</p>\nx < y and y > z", [])
    assert parsed.candidates.candidates[1] == "<p>A dog</p>"  # kept as typed: the note says it, nothing is changed
    (note,) = [n for n in parsed.candidates.notes if "markup" in n]
    assert note.startswith("The question and line 2 hold markup") and "line 3" not in note  # a comparison is not a tag
    assert markup_note([("the question", "who wrote it?")]) is None
    assert markup_note([("candidate #1", "<a href='x'>Shakespeare</a>")]).startswith("Candidate #1 holds markup")


def test_copies_of_one_text_among_the_candidates_are_named() -> None:
    from matching.text.inputs import copies_note, parse_input

    assert copies_note(["a b", "c d"]) is None
    assert copies_note(["a b", "c d", "a b", "c d", "a b"]) == (
        "Candidates #1 and #3 and #5; #2 and #4 are the same text: every system gives copies the same score, so they "
        "tie wherever they rank.")
    many = copies_note([text for n in range(5) for text in (f"t{n}", f"t{n}")])
    assert many is not None and "#5 and #6 (and 2 more groups)" in many
    parsed = parse_input("who wrote it?", "Austen wrote it.\nA dog.\n  Austen wrote it.  \n", [])
    assert any("#1 and #3 are the same text" in note for note in parsed.candidates.notes)
