"""Every technical term the app uses, explained once in one plain line.

The pages reach these lines in two ways: a widget's `help` tooltip (`help_for`) and a
"Terms on this page" popover (`entries`). Nothing else in the app defines a term, so a
wording fix here reaches every page. `mentioned_in` finds the terms a text uses, which
lets the tests check that every term a page shows is explained on that page.

Also here: the short model names used where space is tight (a projector's Rank table).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from matching.models import FAMILIES, family_of
from matching.models.params import ModelParams


class GlossaryError(KeyError):
    """A term the glossary does not define (a typo in a page, caught by the tests)."""


@dataclass(frozen=True)
class Term:
    name: str
    plain: str
    """One line, no jargon beyond other glossary terms."""
    aliases: tuple[str, ...] = ()
    """Other spellings a page may use ("k-max", "×" for "x")."""


GENERAL_TERMS: tuple[Term, ...] = (
    Term("word vector", "A list of 50 numbers standing for a word (from GloVe); similar words get similar lists.",
         ("word vectors", "GloVe")),
    Term("unknown word", "A word GloVe has no vector for; the model gives every such word one shared, learned "
         "vector.", ("unknown words",)),
    Term("truncated", "Words past a model's maximum length: kept on screen in grey, never read by the model.",
         ("truncation", "not seen")),
    Term("attention gate", "A first layer (omega in the ECIR paper) that scores each word; the softmax of those "
         "scores reweights the word vectors.", ("attention", "omega")),
    Term("gate logit", "The raw score V^T w_t the attention gate gives a word before the softmax.",
         ("gate logits", "V^T w_t")),
    Term("softmax", "Turns scores into positive weights that add up to 1; a higher score gets a larger share."),
    Term("alpha", "A word's attention weight (alpha_t); over a sentence the weights add up to 1.",
         ("α", "attention weight")),
    Term("uniform weight 1/n", "What every word would get if attention were flat: 1 divided by the number of "
         "words.", ("1/n", "uniform")),
    Term("Bi-LSTM", "Two LSTMs reading the sentence left to right (forward) and right to left (backward).",
         ("BiLSTM", "LSTM")),
    Term("LSTM state", "What an LSTM remembers after reading up to one position: here 50 numbers per "
         "direction.", ("forward state", "backward state", "LSTM states")),
    Term("positional vector", "A word's forward and backward LSTM states side by side (100 numbers): the word "
         "in its context, so the same word at two positions gets two vectors.", ("positional vectors",
                                                                                  "positional")),
    Term("cosine", "Similarity of two vectors from -1 (opposite) to 1 (same direction): their dot product "
         "divided by both lengths.", ("cosine similarity", "cos")),
    Term("interaction matrix", "One number for every (question position, answer position) pair: how well the "
         "two positional vectors match.", ("interaction matrices",)),
    Term("tensor interaction", "Several learned bilinear matchings per pair of positions (slices) instead of "
         "one cosine.", ("tensor", "slice", "slices")),
    Term("forward and backward matrices", "Cosine of the forward-only and the backward-only LSTM states; "
         "some models pool them too, otherwise they are shown for orientation.", ("directions",)),
    Term("k-max pooling", "Keeps the k largest cells of each matrix, in decreasing order, and drops the rest.",
         ("k-max", "pooled cell", "pooled cells", "pooling rank")),
    Term("filler", "A fixed value put in a pooling slot when a matrix has fewer than k cells (a very short "
         "text).", ("fillers",)),
    Term("MLP", "A small neural network (one hidden layer of ReLU units) turning the pooled values into the "
         "score.", ("multilayer perceptron",)),
    Term("hidden unit", "One neuron of the MLP's hidden layer; with ReLU it is active (passes its value) only "
         "when its input is above zero.", ("hidden units", "ReLU")),
    Term("score", "The number a model gives a (question, answer) pair; only the order of scores matters.",
         ("scores",)),
    Term("rank", "A candidate's place when sorted by score: 1 is the model's best answer.", ("ranks",)),
    Term("rank spread", "Largest minus smallest rank the models give one candidate: 0 means they agree.",
         ("spread",)),
    Term("bias", "The part of the score no input accounts for: the MLP's offsets through its active units.",
         ("bias term",)),
    Term("contribution", "How much one pooled cell adds to (or takes from) the score; with the bias they "
         "sum to the score exactly.", ("contributions",)),
    Term("gradient x value", "A cell's contribution: how fast the score changes with the cell, times the "
         "cell's value; exact here because the MLP is piecewise linear.", ("gradient × value",)),
    Term("waterfall", "A chart where each bar starts where the previous one ended, so the bars add up to the "
         "total.",),
    Term("convolution", "Slides small learned filters over the matching matrix to find patterns such as "
         "runs of matching words.", ("conv",)),
    Term("dynamic pooling", "Cuts the matrix into a fixed grid of windows and keeps each window's largest "
         "value, whatever the text lengths.",),
    Term("co-attention", "Attention between the two texts: each word is weighed by how well it matches the other "
         "text (its row or column of the affinity matrix).", ("co-attention weights",)),
    Term("affinity matrix", "One number for every (question word, answer word) pair: the dot product of their "
         "projected vectors, read by the co-attention.", ("affinity",)),
    Term("alignment", "Co-attention that gives each word its own soft-aligned summary of the other text (a softmax "
         "over its row of the affinity matrix).", ("alignment-pooled",)),
    Term("intra-attention", "Attention of a sentence over itself: each word's summary of its own sentence.",
         ("self-attention",)),
    Term("cast", "One attention mechanism's comparison of a word with what it attends to, compressed to one number "
         "and attached to the word (casted attention).", ("casts", "casted attention", "word features")),
    Term("compression", "Turning a comparison vector into one number: a factorisation machine (FM), a small ReLU "
         "layer (NN) or a plain sum (SM).", ("factorisation machine", "FM")),
    Term("highway layer", "A layer that mixes a transformed vector with the unchanged input, through a learned "
         "gate between 0 and 1.", ("highway", "highway projection")),
    Term("MeanMax", "Pooling a sentence's LSTM states into one vector: their mean and their maximum, side by side.",
         ("MeanMax pooling",)),
    Term("integrated gradients", "An approximate split of a score over the words: each word vector is scaled from "
         "0 to its value and the score's gradient averaged along the way.", ("IG",)),
    Term("completeness residual", "What integrated gradients leave unexplained: score - baseline score - the sum "
         "of the word attributions (0 for an exact split).", ("residual",)),
    Term("keyword term", "Learned weights times keyword features of the pair (word overlap, IDF-weighted overlap, "
         "BM25), added to the learned match: score = learned match + keywords.",
         ("keywords", "keyword features", "IDF-weighted overlap")),
    Term("answer-type features", "Keyword features of some models: the question asks for a number (how many...), "
         "a date (or, in an ablation, a place) and the answer gives one it does not repeat.",
         ("number asked, number given", "date asked, date given", "place asked, place given")),
    Term("echoes the question", "A keyword feature of some models: 1 where a candidate holds the question's "
         "opening side by side (\"who wrote\"), as a restated question does.", ("echo feature",)),
    Term("BM25 within the list", "A keyword feature of some models: BM25 with the question's own candidates as the "
         "collection, so a word they all share counts for little.",
         ("list feature",)),
    Term("stems", "What some models' keyword features match instead of whole words (\"founded\" and \"founding\" "
         "share \"found\"), so another form of a question word counts.",
         ("Snowball stems", "stem")),
    Term("list match", "A matrix of some MV-LSTM models: exact matches, each question word weighted by its IDF "
         "within the question's own candidates (0 where all have it).", ("exact match, list IDF",)),
    Term("learned match", "The part of a score that the network's own layers give, beside its keyword term.",),
    Term("baseline", "A simple ranking with no learning (original order, word overlap, BM25): a model should "
         "beat it.", ("baselines", "word overlap", "BM25", "original order")),
    Term("MAP", "Mean average precision: how high the correct answers sit, averaged over questions (1 = all "
         "on top).", ("mean average precision", "AP")),
    Term("MRR", "Mean reciprocal rank: 1 / the rank of the first correct answer, averaged over questions.",
         ("mean reciprocal rank",)),
    Term("P@1", "Share of questions whose top-ranked answer is correct.",),
    Term("nDCG", "Normalised discounted cumulative gain: credit for correct answers, less the lower they sit.",
         ("nDCG@3", "nDCG@5")),
    Term("tie rule", "Tied candidates count as the average over every order of the tie, so ties never help.",
         ("ties",)),
)



def _family_terms() -> tuple[Term, ...]:
    """Each registered family's own terms (its name with its paper, and what it brings), once each."""
    found: dict[str, Term] = {}
    for model_type in FAMILIES.values():
        descriptor = model_type.descriptor
        for name, plain, *aliases in descriptor.terms:
            found.setdefault(name, Term(name, plain, tuple(aliases)))
    return tuple(found.values())


FAMILY_TERMS = _family_terms()
FAMILY_TERM_NAMES = tuple(term.name for term in FAMILY_TERMS)
"""The families' own terms, for the "Terms on this page" of any page that names the models."""
TERMS: tuple[Term, ...] = GENERAL_TERMS + FAMILY_TERMS
GLOSSARY: dict[str, Term] = {term.name: term for term in TERMS}

SHORT_NAMES = (*sorted(((family, model_type.descriptor.short_name) for family, model_type in FAMILIES.items()),
                       key=lambda pair: -len(pair[0])), ("tensor", "T"))
"""Word replacements for the short model names: each family's name by its descriptor's short name."""
SHORT_BASELINES = {"original order": "order", "word overlap": "overlap", "BM25": "BM25"}
SHORT_FEATURES = {"word overlap": "overlap", "IDF-weighted overlap": "IDF overlap", "BM25": "BM25",
                  "number asked, number given": "number", "date asked, date given": "date",
                  "place asked, place given": "place", "BM25 within the list": "list",
                  "echoes the question": "echo"}
"""Column labels for the keyword features, so a split with all six fits a laptop's width (the full name is
the column's help)."""


def term(name: str) -> Term:
    """The term called `name` (or one of its aliases), case-insensitive; GlossaryError otherwise."""
    wanted = name.casefold()
    for candidate in TERMS:
        if wanted == candidate.name.casefold() or wanted in (a.casefold() for a in candidate.aliases):
            return candidate
    raise GlossaryError(f"the glossary has no term {name!r}")


def help_for(*names: str) -> str:
    """Tooltip text (Markdown) explaining the named terms, one per paragraph."""
    return "\n\n".join(f"**{term(n).name}**: {term(n).plain}" for n in names)


def entries(names: Iterable[str]) -> list[Term]:
    """The named terms, each once, in glossary order (for a page's popover)."""
    wanted = {term(n).name for n in names}
    return [t for t in TERMS if t.name in wanted]


def _pattern(words: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])" + re.escape(words) + r"(?![\w-])", re.IGNORECASE)


_PATTERNS = [(t.name, _pattern(spelling)) for t in TERMS for spelling in (t.name, *t.aliases)
             if len(spelling) > 2 or spelling.isupper()]


def mentioned_in(text: str) -> list[str]:
    """The glossary terms `text` names (by name or alias), in glossary order."""
    found = {name for name, pattern in _PATTERNS if pattern.search(text)}
    return [t.name for t in TERMS if t.name in found]


OMEGA_SIDES = {(): "", ("question",): "ω on the question", ("answer",): "ω on the answer",
               ("question", "answer"): "ω on both"}
"""How a model's attention gate (omega, ECIR 2019) is named beside it: where it sits."""


TRAINED_ON = {"wikiqa+trecqa-all": "WikiQA + TRAIN-ALL", "trecqa-all": "TRAIN-ALL", "wikiqa+trecqa": "WikiQA + TRAIN",
              "trecqa": "TrecQA TRAIN", "wikiqa+trecqa-all+pseudo-subject": "WikiQA + TRAIN-ALL + pseudo-questions",
              "wikiqa+trecqa-all+pseudo-subject-half": "WikiQA + TRAIN-ALL + pseudo-questions"}
"""The training data a model's card names (its data folder, `runs/data/...`), as the picker says it; WikiQA, which most
models learned from alone, goes unsaid."""


def model_label(name: str, params: ModelParams, trained_on: str = "") -> str:
    """A model as the picker lists it: its name, what it learned from where that is not WikiQA alone, its family's
    title and where omega sits, e.g. 'amvlstm-q · aMV-LSTM, ω on the question' and 'amvlstm-q-trecqa · TRAIN-ALL ·
    aMV-LSTM, ω on the question' (`Matcher.trained_on`). The data comes second: the picker cuts a long label short at
    its right end, and the family is in the name already."""
    sides = OMEGA_SIDES.get(tuple(params.attended_sides), "")
    # A gate other than the papers' softmax is said, and so is the training data: two aMV-LSTMs read alike otherwise.
    gate = getattr(params, "attention_gate", "softmax")
    gate = f" ({gate})" if sides and gate != "softmax" else ""
    keywords = ", + keywords" if params.keywords else ""
    data = f"{TRAINED_ON.get(trained_on, trained_on)} · " if trained_on and trained_on != "wikiqa" else ""
    return f"{name} · {data}{family_of(params).descriptor.title}{', ' + sides + gate if sides else ''}{keywords}"


def picker_order(models: Mapping[str, ModelParams]) -> list[str]:
    """Model names grouped by family (in family-title order), omega's settings in the paper's order within."""
    order = list(OMEGA_SIDES)
    return sorted(models, key=lambda name: (family_of(models[name]).descriptor.title.lower(),
                                            order.index(tuple(models[name].attended_sides))
                                            if tuple(models[name].attended_sides) in order else len(order), name))


def counted(count: int, noun: str) -> str:
    """'1 question', '2,000 questions': for the app's messages and the command line's alike."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def rank_of(rank: int, count: int) -> str:
    """'rank 1 of 4' with no-break spaces: a caption that wraps keeps it on one line ("rank 1 of" and "4" below)."""
    return f"rank\u00a0{rank}\u00a0of\u00a0{count}"


def signed(value: float, digits: int) -> str:
    """'+0.000', never '-0.000': a difference that rounds to zero reads as none (-0.00004 is not a push down)."""
    return f"{round(value, digits) or 0.0:+.{digits}f}"


def short_name(model: str) -> str:
    """A compact system name for tight tables: amvlstm-qa -> aMV-QA, mvlstm-tensor -> MV-T, word overlap -> overlap."""
    if model in SHORT_BASELINES:
        return SHORT_BASELINES[model]
    parts = model.split("-")
    short = []
    for part in parts:
        for long, abbreviation in SHORT_NAMES:
            if part.lower() == long:
                part = abbreviation
                break
        else:
            part = part.upper() if len(part) <= 3 else part
        short.append(part)
    return "-".join(short)
