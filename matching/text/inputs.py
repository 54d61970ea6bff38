"""What a person typed, turned into a question and a list of candidates the models can rank.

Pure logic for the app's input boxes: one candidate per line, blank lines skipped,
unusable lines left out with a note saying which and why, and at most
`MAX_CANDIDATES` kept. Nothing here raises on user text; problems become notes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from matching.text.data import RankingList
from matching.text.tokens import MAX_TEXT_CHARS, TextError, Token, tokenize


@dataclass(frozen=True)
class CandidateInput:
    """The candidates kept from a block of lines, and what happened to the others."""

    candidates: tuple[str, ...]
    lines: tuple[int, ...]
    """1-based line number of each kept candidate in the typed text."""
    notes: tuple[str, ...]
    """One plain sentence per left-out line or cap, for the page to show."""
    total_lines: int
    """Non-blank lines typed (kept or not)."""
    tokens: tuple[tuple[Token, ...], ...] = ()
    """The words of each kept candidate: the text is parsed once, here, and shared by ranking and views."""


@dataclass(frozen=True)
class ParsedInput:
    """What a person typed, parsed once: the question and candidates with their words, or the problem."""

    question: str
    question_tokens: tuple[Token, ...]
    candidates: CandidateInput
    labels: tuple[int, ...] | None
    problem: str | None
    """Why nothing can be ranked (None when ranking is possible)."""


DIRECTION_CONTROLS = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
"""Bidirectional embedding, override and isolate controls: invisible, they reverse how the text around
them is shown ('Sydney is big' + U+202E shows reversed), so a table would show other words than the
models read. They are removed, with a note."""


def without_direction_controls(text: str) -> tuple[str, int]:
    """`text` without bidirectional controls, and how many there were."""
    cleaned = text.translate(DIRECTION_CONTROLS)
    return cleaned, len(text) - len(cleaned)


def _removed_note(where: str, count: int) -> str:
    return (f"{where} had {count} invisible direction-control character(s), which reverse how text is shown; "
            "they are left out of the ranking, its tables and its link (the box above still holds them).")


MARKUP = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
"""An HTML or XML tag ("<b>", "</p>", "<a href='x'>"): text pasted from a page keeps them, and the tokenizer glues a
closing tag to the word before it ("who</b"), an unknown word to every model."""


def markup_note(texts: Sequence[tuple[str, str]]) -> str | None:
    """A sentence naming the texts ((what, text) pairs: "the question", "line 2") that hold markup; None when none."""
    found = [what for what, text in texts if MARKUP.search(text)]
    if not found:
        return None
    named = found[0] if len(found) == 1 else f"{', '.join(found[:-1])} and {found[-1]}"
    return (f"{named[:1].upper() + named[1:]} {'holds' if len(found) == 1 else 'hold'} markup "
            "such as <b> or </p>: the models read tags as text, and a tag glued to a word makes it an unknown word "
            "(\"who</b\"). Paste the plain text to rank the words alone.")


def parse_question(question: str) -> tuple[tuple[Token, ...], str | None]:
    """The question's words, and why it cannot be ranked (None when it can)."""
    if not question.strip():
        return (), "Type a question: it is empty."
    try:
        tokens = tuple(tokenize(question))
    except TextError as error:
        return (), f"The question cannot be used: {error}."
    if not tokens:
        return (), "The question has no words (only spaces or invisible characters)."
    return tokens, None


def question_problem(question: str) -> str | None:
    """Why this question cannot be ranked, or None when it can."""
    return parse_question(question)[1]


def parse_input(question: str, candidates_text: str, gold: Sequence[int]) -> ParsedInput:
    """Parse the whole input once: question words, candidate lines and their words, the gold labels."""
    question, removed = without_direction_controls(question)
    question_tokens, problem = parse_question(question)
    candidates = split_candidates(candidates_text)
    if removed:
        candidates = replace(candidates, notes=(_removed_note("The question", removed), *candidates.notes))
    if note := markup_note([("the question", question), *((f"line {line}", text) for line, text in
                                                          zip(candidates.lines, candidates.candidates, strict=True))]):
        candidates = replace(candidates, notes=(*candidates.notes, note))
    if note := copies_note(candidates.candidates):
        candidates = replace(candidates, notes=(*candidates.notes, note))
    labels = labels_for(gold, len(candidates.candidates))
    if problem is None and not candidates.candidates:
        problem = "Type at least one candidate answer, one per line."
    return ParsedInput(question, question_tokens, candidates, None if labels is None else tuple(labels), problem)


def copies_note(candidates: Sequence[str], groups_named: int = 3) -> str | None:
    """Which candidates are the same text, or None: a model scores a text, not its place, so copies tie in every
    ranking, and a top answer named as "#1" stood for "#1 and #4" without a word."""
    where: dict[str, list[int]] = {}
    for number, text in enumerate(candidates, start=1):
        where.setdefault(text, []).append(number)
    copies = [numbers for numbers in where.values() if len(numbers) > 1]
    if not copies:
        return None
    named = "; ".join(" and ".join(f"#{n}" for n in numbers) for numbers in copies[:groups_named])
    more = f" (and {len(copies) - groups_named} more groups)" if len(copies) > groups_named else ""
    return (f"Candidates {named}{more} are the same text: every system gives copies the same score, so they tie "
            "wherever they rank.")


MAX_CANDIDATES = 100
"""The most candidates one ranking takes (a longer list keeps its first MAX_CANDIDATES, with a note)."""


def split_candidates(text: str, max_candidates: int = MAX_CANDIDATES) -> CandidateInput:
    """One candidate per non-blank line; too-long or wordless lines are left out with a note."""
    kept: list[str] = []
    kept_tokens: list[tuple[Token, ...]] = []
    lines: list[int] = []
    notes: list[str] = []
    total = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line, removed = without_direction_controls(raw)
        line = line.strip()
        if not line:
            continue
        total += 1
        if removed:
            notes.append(_removed_note(f"Line {number}", removed))
        if len(line) > MAX_TEXT_CHARS:
            notes.append(f"Line {number} has {len(line):,} characters; the limit is {MAX_TEXT_CHARS:,}, "
                         "so it was left out.")
            continue
        tokens = tuple(tokenize(line))
        if not tokens:
            notes.append(f"Line {number} has no words (only invisible characters), so it was left out.")
            continue
        kept.append(line)
        kept_tokens.append(tokens)
        lines.append(number)
    if len(kept) > max_candidates:
        notes.append(f"{len(kept)} candidates were given; only the first {max_candidates} are ranked "
                     f"(the limit is {max_candidates}).")
        kept, lines, kept_tokens = kept[:max_candidates], lines[:max_candidates], kept_tokens[:max_candidates]
    return CandidateInput(tuple(kept), tuple(lines), tuple(notes), total, tuple(kept_tokens))


def past_the_limit(lists: Sequence[RankingList], limit: int = MAX_CANDIDATES) -> tuple[int, int]:
    """Of a collection's lists, how many hold more candidates than one typed ranking takes (`limit`), and how many
    of those have a correct candidate past it: opened on the Rank page, they are ranked without it."""
    longer = [item for item in lists if len(item.candidates) > limit]
    return len(longer), sum(any(item.labels[limit:]) for item in longer)


def join_candidates(candidates: Sequence[str]) -> str:
    """The inverse of `split_candidates` for clean input: one candidate per line."""
    return "\n".join(" ".join(c.split()) for c in candidates)


def clean_gold(gold: Sequence[int], count: int) -> list[int]:
    """Gold (correct) candidate indices that still exist, sorted and unique."""
    return sorted({int(i) for i in gold if 0 <= int(i) < count})


def labels_for(gold: Sequence[int], count: int) -> list[int] | None:
    """0/1 labels for `count` candidates, or None when no candidate is marked correct."""
    marked = set(clean_gold(gold, count))
    return [int(i in marked) for i in range(count)] if marked else None


def _similar(a: str, b: str) -> bool:
    words_a, words_b = a.lower().split(), b.lower().split()
    return difflib.SequenceMatcher(a=words_a, b=words_b, autojunk=False).ratio() >= 0.5


def remap_gold(before: Sequence[str], after: Sequence[str], gold: Sequence[int]) -> list[int]:
    """Carry the correct-answer marks over an edit of the candidate lines.

    A mark follows its candidate when the candidate is still there (same position and at
    least half its words, as after a word edit, or identical text anywhere); marks on
    candidates that were replaced by different text are dropped.
    """
    marked = set(clean_gold(gold, len(before)))
    kept = set()
    if len(before) == len(after):
        kept = {i for i in marked if _similar(before[i], after[i])}
    else:
        unused: dict[str, list[int]] = {}
        for index, text in enumerate(after):
            unused.setdefault(text, []).append(index)
        for i in sorted(marked):
            if unused.get(before[i]):
                kept.add(unused[before[i]].pop(0))
    return sorted(kept)
