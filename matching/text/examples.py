"""The example gallery on the Rank page: ready questions with candidates and gold labels.

All examples are written for MatchLens (not taken from a data set). Each has a
`kind` that says what it demonstrates. The 'disagreement' example was chosen among
hand-written questions so that the default models (the ones the Rank page opens with)
pick different top answers; tests/test_examples.py checks it against the shipped defaults,
so a new default set that agrees on it fails the tests instead of contradicting the note.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    kind: str
    """factoid, paraphrase, disagreement, echo, robustness."""
    note: str
    """One sentence on what to look at."""
    question: str
    candidates: tuple[str, ...]
    gold: tuple[int, ...]
    """0-based indices of the correct candidates."""
    icon: str = ":material/lightbulb:"


EXAMPLES: tuple[Example, ...] = (
    Example(
        key="factoid", title="Factoid", kind="factoid", icon=":material/menu_book:",
        note="The answer shares the key words with the question; all models and BM25 should find it.",
        question="Who wrote the novel Pride and Prejudice?",
        candidates=(
            "Pride and Prejudice is a novel by Jane Austen, first published in 1813.",
            "The novel follows Elizabeth Bennet as she deals with manners, upbringing and marriage.",
            "It has been adapted for film and television many times.",
            "Jane Austen was born in Steventon, Hampshire, in 1775.",
        ),
        gold=(0,)),
    Example(
        key="paraphrase", title="Paraphrase", kind="paraphrase", icon=":material/sync_alt:",
        note="The correct answers use other words than the question; word overlap and BM25 struggle.",
        question="How do green plants make their food?",
        candidates=(
            "Photosynthesis is the process by which plants use sunlight, water and carbon dioxide to produce sugar.",
            "Many plants are grown in gardens for their colourful flowers.",
            "Leaves turn light energy into chemical energy stored in glucose.",
            "Food is any substance eaten to provide nutritional support for an organism.",
        ),
        gold=(0, 2)),
    Example(
        key="disagreement", title="Models disagree", kind="disagreement", icon=":material/call_split:",
        note="The default models pick different top answers (four candidates repeat a word of the question, "
             "'theory', 'relativity' or 'wrote'; the right one names the person): compare their attention and "
             "pooled cells.",
        question="Who wrote the theory of relativity?",
        candidates=(
            "Relativity changed ideas about space and time.",
            "Albert Einstein published the special theory in 1905.",
            "The theory explains the orbit of Mercury.",
            "Physicists wrote many papers testing it.",
            "Newton's laws describe motion at low speeds.",
        ),
        gold=(1,)),
    Example(
        key="echo", title="Echo", kind="echo", icon=":material/repeat:",
        note="A candidate repeats the question without answering it: models that reward repeated words put it "
             "first. Open the keyword split: the echo feature of the default models (the question's opening, "
             "\"who wrote\", in the candidate) sets it back; amvlstm-q-kw-echo learned the same from echoes as "
             "wrong answers.",
        question="Who wrote the novel Frankenstein?",
        candidates=(
            "Who wrote the novel Frankenstein is a common quiz question.",
            "Frankenstein was written by Mary Shelley and published in 1818.",
            "The novel has been adapted into many films about the monster.",
        ),
        gold=(1,)),
    Example(
        key="robustness", title="Unknown words", kind="robustness", icon=":material/translate:",
        note="Words with no GloVe vector (names, other scripts, emoji) share one unknown vector.",
        question="What does the Zorblax protocol encrypt?",
        candidates=(
            "The Zorblax protocol encrypts messages between two servers.",
            "東京 is the capital of Japan.",
            "Encryption keeps messages secret 🔒.",
            "A protocol is a set of rules.",
        ),
        gold=(0,)),
)

BY_KEY = {example.key: example for example in EXAMPLES}
