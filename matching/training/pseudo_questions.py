"""Pseudo-questions written from a section's sentences: training lists of the held-out kind, made from WikiQA's own.

Issue 29's held-out questions were written by people reading a section of an encyclopedia article, each answered
by one of its sentences, every sentence of the section a candidate (`bench/section_collection.py` holds 225 of that
kind). WikiQA's questions are search queries, mostly answered by the section's first sentence (the original order
reaches 0.67 MAP on its dev set), so the models learn that the sentence naming the subject in full answers; on the
held-out kind that sentence is the usual wrong first answer, and BM25 with the list's own IDF beats every model.

WikiQA's candidate lists are such sections (a Wikipedia article's summary, sentence by sentence). This module
writes, from each section of a training split, a question of the held-out kind the way the inverse cloze task
does (Lee, Chang and Toutanova 2019: a sentence stands for a query, its context for the passage), turned around: one
sentence, drawn uniformly so that the first answers no more often than any other, loses a span (what the question
asks for) and some of its other words, gains a wh-word and the section's subject named as its first sentence names
it (as a person asking about the section names what it is about); the section's sentences are the candidates and
the drawn one the answer. The text is garbled on purpose: what a model can learn from it is which words of a question
set one sentence of a section apart from the others, the lexical evidence BM25 within the list reads.

Only a training split is read: its sections become more training lists, with dev and test left as they are.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from matching.text.data import RankingList, read_toks_folder, write_toks_folder

WH_WORDS = ("what", "which", "who", "when", "where", "how")
SUBJECT_ENDS = frozenset({"is", "was", "are", "were", "has", "had", "(", ",", "-lrb-", "--"})
"""Where the subject of a section's first sentence ends ("the achaemenid empire | was an ancient ...")."""
MAX_SUBJECT_WORDS = 6
NOT_A_SUBJECT = frozenset({"in", "on", "at", "after", "before", "during", "when", "while", "although", "by", "for",
                           "from", "as", "with", "since", "it", "he", "she", "they", "this", "these", "there"})
"""First words that open a clause or a pronoun, not the subject's name ("in 1990 , ...", "it was ...")."""


@dataclass(frozen=True)
class PseudoQuestionParams:
    """How a pseudo-question is cut from its sentence."""

    per_section: int = 1
    """Sentences drawn from each section, each the answer of its own pseudo-question."""
    answer_share: float = 0.25
    """The share of the sentence's words, one span, taken out as what the question asks for."""
    keep: float = 0.6
    """Each other word of the sentence stays in the question with this probability."""
    subject: float = 1.0
    """The probability that the question names the section's subject (its first sentence's opening words). Always,
    as a person asking about a section names what it is about; half the time set the models back on set A of the
    section collection (docs/models-and-training.md)."""
    min_words: int = 6
    """Shorter sentences are not drawn: too few words to leave a question after the span is out."""
    share: float = 1.0
    """The share of the lists made that are kept, each kept or not by a draw of its own: below 1 a subset of the
    lists the same seed makes with all of them, the same questions, so that a smaller dose differs in nothing else."""


def section_subject(first_sentence: str) -> list[str]:
    """The words of a section's first sentence before its first verb or bracket, when there are few of them: the
    subject as the section names it ("the achaemenid empire"); none when the sentence opens otherwise."""
    words = first_sentence.split()
    if not words or words[0].lower() in NOT_A_SUBJECT:
        return []
    for end, word in enumerate(words[:MAX_SUBJECT_WORDS + 1]):
        if word.lower() in SUBJECT_ENDS:
            return words[:end]
    return []


def pseudo_question(sentence: str, subject: Sequence[str], rng: random.Random,
                    params: PseudoQuestionParams) -> str | None:
    """A question the `sentence` answers, cut as the module says; None when too few words are left."""
    words = [word for word in sentence.split() if any(ch.isalnum() for ch in word)]
    if len(words) < params.min_words:
        return None
    span = max(1, round(params.answer_share * len(words)))
    start = rng.randrange(len(words) - span + 1)
    kept = [word for word in words[:start] + words[start + span:] if rng.random() < params.keep]
    if subject and rng.random() < params.subject:
        named = {word.lower() for word in kept}
        kept = [word for word in subject if word.lower() not in named] + kept
    if len(kept) < 2:
        return None
    return " ".join([rng.choice(WH_WORDS), *kept, "?"])


def pseudo_lists(sections: Sequence[RankingList], seed: int,
                 params: PseudoQuestionParams = PseudoQuestionParams()) -> list[RankingList]:
    """Pseudo-question lists from the distinct candidate lists of `sections` (a section asked about twice is
    used once), in their order, each drawn from `seed`: the same sections and seed give the same lists. With
    `params.share` below 1, each list is kept with that probability by a second generator, so the questions drawn
    are those of share 1 (and their ids too)."""
    rng, kept = random.Random(seed), random.Random(f"share-{seed}")
    seen: set[tuple[str, ...]] = set()
    made = []
    for item in sections:
        candidates = tuple(item.candidates)
        if len(candidates) < 2 or candidates in seen:
            continue
        seen.add(candidates)
        subject = section_subject(candidates[0])
        for answer in rng.sample(range(len(candidates)), min(params.per_section, len(candidates))):
            question = pseudo_question(candidates[answer], subject, rng, params)
            if question is not None:
                labels = tuple(int(n == answer) for n in range(len(candidates)))
                made.append(RankingList(f"pseudo-{len(made)}", question, candidates, labels))
    return [item for item in made if kept.random() < params.share] if params.share < 1 else made


def write_pseudo_folder(source: str | Path, out: str | Path, seed: int = 0,
                        params: PseudoQuestionParams = PseudoQuestionParams()) -> int:
    """out/train: the pseudo-question lists of `source`/train, and nothing else (`combine` takes the folder as a
    source when its dev folders are named with --dev). Returns how many lists."""
    made = pseudo_lists(read_toks_folder(Path(source) / "train"), seed, params)
    write_toks_folder(Path(out) / "train", made)
    return len(made)
