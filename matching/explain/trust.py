"""When does a ranking deserve little trust? Mostly unknown words, or no words at all.

Every word GloVe has no vector for reaches the models as one shared, learned
'unknown' vector, so a text made mostly of such words (another script, emoji,
invented names) is barely distinguishable from any other such text. A question of
punctuation alone is read (GloVe has vectors for '?' and '!'), but its order says
nothing about meaning.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from matching.explain.ranking import Ranking
from matching.text.tokens import Token

MOSTLY = 0.5
"""More than this share of a text's words unknown counts as 'mostly unknown'."""


def is_word(token: Token) -> bool:
    """Anything but pure punctuation counts (emoji and other scripts are words here)."""
    return any(not unicodedata.category(ch).startswith("P") for ch in token.key)


def unknown_count(tokens: Sequence[Token]) -> tuple[int, int]:
    """(unknown words, words) over the tokens the models read."""
    words = [t for t in tokens if is_word(t) and not t.truncated]
    return sum(t.unknown for t in words), len(words)


def trust_warning(ranking: Ranking) -> str | None:
    """Plain sentences when the question, or some candidate, has no word (only punctuation), or when most
    words of the question, or of every candidate, are unknown; else None.

    The unknown flags are set only when models ranked the input (they come from the models' vectors).
    """
    if not ranking.models:
        return None
    unknown, words = unknown_count(ranking.question_tokens)
    if not words:
        return ("The question has no word, only punctuation: the models compare punctuation marks with the "
                "candidates, so this order says nothing about what the candidates mean. Type a question in words.")
    sentences = []
    shares = [unknown_count(c) for c in ranking.candidate_tokens]
    wordless = [f"#{n}" for n, (_, count) in enumerate(shares, start=1) if not count]
    if wordless:
        one = len(wordless) == 1
        which = f"Candidate {wordless[0]} has" if one else f"Candidates {', '.join(wordless)} have"
        sentences.append(f"{which} no word, only punctuation: {'its rank says' if one else 'their ranks say'} "
                         "nothing about meaning.")
    parts = []
    if unknown / words > MOSTLY:
        parts.append(f"{unknown} of the question's {words} words")
    if shares and all(n and u / n > MOSTLY for u, n in shares):
        parts.append("most words of every candidate" if len(shares) > 1 else "most words of the candidate")
    if parts:
        sentences.append(f"The models have no word vector for {' and for '.join(parts)}: each such word reaches them "
                         "as the same shared 'unknown' vector. This ranking therefore says little about what the texts "
                         "mean; treat its order and its explanations with caution.")
    return " ".join(sentences) or None


def candidate_warning(ranking: Ranking, candidates: Sequence[int]) -> str | None:
    """A sentence on each candidate explained (by position) whose words are mostly unknown; None where none is, or
    where every candidate is (`trust_warning` says that for the whole ranking). The ranking's own warning is about
    all candidates at once, so one unknown candidate among known ones was explained cell by cell, unwarned."""
    if not ranking.models:
        return None
    shares = [unknown_count(tokens) for tokens in ranking.candidate_tokens]
    if all(words and unknown / words > MOSTLY for unknown, words in shares):
        return None
    sentences = []
    for index in dict.fromkeys(candidates):
        unknown, words = shares[index]
        if words and unknown / words > MOSTLY:
            which = "all" if unknown == words else f"{unknown} of the"
            sentences.append(f"The models have no word vector for {which} {words} words of candidate #{index + 1}: "
                             "each reaches them as the same shared 'unknown' vector, so its score and its explanation "
                             "say little about what it means; treat them with caution.")
    return " ".join(sentences) or None
