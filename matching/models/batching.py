"""Padding policy: turn texts into one padded, masked PairBatch.

Preprocessing (tokenize) is separate from this: here texts are cut to the model's
maximum lengths, looked up in the word vectors and padded to the longest text in the
batch. `make_token_batch` goes from tokens in one step (each distinct text looked up
once, one gather for the whole batch); `make_batch` pads texts already looked up.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from matching.models import PairBatch, TextEncoding
from matching.models.blocks import consecutive, take_rows
from matching.models.params import ModelParams
from matching.text.baselines import ListBm25Cache, bm25_within_lists, idf_within_lists
from matching.text.embeddings import EncodedText, WordVectors
from matching.text.stems import stem_ids
from matching.text.tokens import Token, token_codes

PAD_ID = {"question": -(2**40), "answer": -(2**41)}
"""Lookup-key ids on padding: below every real id (>= -2**34, `embeddings.key_id`), and different per side, so
padding never matches padding in an exact-match matrix."""


def _pad(texts: Sequence[EncodedText], max_len: int, side: str
         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    lengths = [min(len(t.unknown), max_len) for t in texts]
    if min(lengths) < 1:
        raise ValueError("every text in a batch needs at least one word")
    width, dim = max(lengths), texts[0].vectors.shape[1]
    vectors = np.zeros((len(texts), width, dim), dtype=np.float32)
    unknown = np.zeros((len(texts), width), dtype=bool)
    ids = np.full((len(texts), width), PAD_ID[side], dtype=np.int64)
    for row, (text, length) in enumerate(zip(texts, lengths, strict=True)):
        vectors[row, :length] = text.vectors[:length]
        unknown[row, :length] = text.unknown[:length]
        if text.ids is not None:
            ids[row, :length] = text.ids[:length]
    return (torch.from_numpy(vectors), torch.from_numpy(unknown), torch.tensor(lengths, dtype=torch.int64),
            torch.from_numpy(ids))


@dataclass(frozen=True)
class ListStatistics:
    """What the pairs' scores read beside the word vectors' rows and key ids, for a model that reads any: from the
    other candidates of their question (their list), the one input of a pair that is not the pair's own two texts,
    and the stems of the two texts."""

    bm25: torch.Tensor | None = None
    """(P,) each pair's BM25 within its list (`text.baselines.bm25_within_lists`), for the keyword feature."""
    idf: torch.Tensor | None = None
    """(P, M) each question word's IDF within the list (`text.baselines.idf_within_lists`), 0 past the question's
    words, for MV-LSTM's exact-match matrix over the list."""
    question_stems: torch.Tensor | None = None
    """(P, M) each question word's stem id (`text.stems`), PAD_ID past its words, for a keyword term on stems."""
    answer_stems: torch.Tensor | None = None
    """(P, N) the same for the answer words."""

    def _fields(self) -> tuple[torch.Tensor | None, ...]:
        return self.bm25, self.idf, self.question_stems, self.answer_stems

    def pick(self, index: torch.Tensor | slice) -> ListStatistics:
        """The pairs at `index` (positions or a slice)."""
        if isinstance(index, torch.Tensor):
            index = index.cpu()
            return ListStatistics(*(None if v is None else v.index_select(0, index) for v in self._fields()))
        return ListStatistics(*(None if v is None else v[index] for v in self._fields()))

    def to(self, device: torch.device) -> ListStatistics:
        return ListStatistics(*(None if v is None else v.to(device) for v in self._fields()))

    def batch_fields(self, question_width: int, answer_width: int) -> dict[str, torch.Tensor | None]:
        """The PairBatch fields, each cut or padded to the batch's question or answer positions."""
        def fitted(values: torch.Tensor | None, width: int, pad: int) -> torch.Tensor | None:
            if values is None or values.shape[1] == width:
                return values
            return (values[:, :width] if values.shape[1] > width
                    else torch.nn.functional.pad(values, (0, width - values.shape[1]), value=pad))

        return {"list_bm25": self.bm25, "list_idf": fitted(self.idf, question_width, 0),
                "question_stems": fitted(self.question_stems, question_width, PAD_ID["question"]),
                "answer_stems": fitted(self.answer_stems, answer_width, PAD_ID["answer"])}

    @classmethod
    def of(cls, params: ModelParams, questions: Sequence[Sequence[Token]], answers: Sequence[Sequence[Token]],
           collections: Sequence[Sequence[Sequence[Token]]] | None = None,
           known: TextCache | None = None) -> ListStatistics | None:
        """What `params`' model reads from each pair's list (the candidates of `collections[p]`, or those given with
        the same question object) and from the stems of its texts; None where it reads nothing of these. With
        `known`, what another model computed of the same texts before is read, not computed again."""
        if not (params.keyword_list_bm25 or params.reads_list_idf or params.reads_stems):
            return None
        idf = bm25 = question_stems = answer_stems = None
        if params.reads_list_idf:
            idf = _padded([torch.from_numpy(w) for w in idf_within_lists(questions, answers, params.max_question_len,
                                                                         collections)])
        if params.keyword_list_bm25:
            bm25 = torch.from_numpy(bm25_within_lists(questions, answers, collections, stems=params.keyword_stems,
                                                      known=None if known is None else known.list_bm25))
        if params.reads_stems:
            stems = None if known is None else known.stems
            question_stems = _padded([torch.from_numpy(ids) for ids in stem_ids(questions, params.max_question_len,
                                                                                 stems)], PAD_ID["question"])
            answer_stems = _padded([torch.from_numpy(ids) for ids in stem_ids(answers, params.max_answer_len, stems)],
                                   PAD_ID["answer"])
        return cls(bm25, idf, question_stems, answer_stems)

    @classmethod
    def rows(cls, lists: Sequence[ListStatistics], places: Sequence[tuple[int, int]]) -> ListStatistics:
        """Row `j` of `lists[n]` for each (n, j) of `places`, stacked (the IDF and the stems padded to the widest)."""
        first = lists[places[0][0]]
        bm25 = None if first.bm25 is None else torch.stack([lists[n].bm25[j] for n, j in places])  # type: ignore[index]

        def padded(field: str, pad: int) -> torch.Tensor | None:
            if getattr(first, field) is None:
                return None
            return _padded([getattr(lists[n], field)[j] for n, j in places], pad)

        return cls(bm25, padded("idf", 0), padded("question_stems", PAD_ID["question"]),
                   padded("answer_stems", PAD_ID["answer"]))


def _padded(rows: Sequence[torch.Tensor], pad: int = 0) -> torch.Tensor:
    """(len(rows), longest) the rows side by side, `pad` past each row's end."""
    return pad_sequence(list(rows), batch_first=True, padding_value=pad) if rows else torch.zeros(0, 0)


def make_batch(questions: Sequence[EncodedText], answers: Sequence[EncodedText],
               max_question_len: int, max_answer_len: int, lists: ListStatistics | None = None) -> PairBatch:
    q_vectors, q_unknown, q_lengths, q_ids = _pad(questions, max_question_len, "question")
    a_vectors, a_unknown, a_lengths, a_ids = _pad(answers, max_answer_len, "answer")
    return PairBatch(q_vectors, q_unknown, q_lengths, a_vectors, a_unknown, a_lengths, q_ids, a_ids,
                     **({} if lists is None else lists.batch_fields(q_vectors.shape[1], a_vectors.shape[1])))


@dataclass
class TextCache:
    """What scoring computes of text objects that it meets again, kept by a caller that scores the same texts
    several times (evaluation, one model after another), for as long as those objects live (keyed by their ids).
    Only what does not depend on the model is kept, so every model scores as it would alone."""

    rows: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    """(id(text), max_len) -> the text's lookup-key ids (`embeddings.key_id`: its rows in the vector table where
    known); for one vector table."""
    stems: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    """(id(text), max_len) -> the text's stem ids (`text.stems.stem_ids`)."""
    list_bm25: ListBm25Cache = field(default_factory=dict)
    """Each list's BM25 within it (`text.baselines.bm25_within_lists`)."""


@dataclass(frozen=True)
class TextTable:
    """Texts of one side looked up in the word vectors, padded to the longest."""

    vectors: torch.Tensor  # (N, L, d) float32, zero on unknown words and padding
    unknown: torch.Tensor  # (N, L) bool
    lengths: torch.Tensor  # (N,) int64, each >= 1
    ids: torch.Tensor  # (N, L) int64 lookup-key ids, PAD_ID of the side on padding

    def to(self, device: torch.device) -> TextTable:
        """The same texts on `device` (themselves where they already are)."""
        return TextTable(self.vectors.to(device), self.unknown.to(device), self.lengths.to(device), self.ids.to(device))

    def rows(self, index: torch.Tensor) -> TextTable:
        """The texts at `index` (B,), padded to the longest of them."""
        span = consecutive(index)
        if span == (0, len(self.lengths)):
            return self
        lengths = take_rows(self.lengths, index, span)
        width = int(lengths.max())
        return TextTable(take_rows(self.vectors, index, span, width), take_rows(self.unknown, index, span, width),
                         lengths, take_rows(self.ids, index, span, width))


def lookup_texts(vectors: WordVectors, texts: Sequence[Sequence[Token]], max_len: int, side: str,
                 known: TextCache | None = None) -> tuple[TextTable, torch.Tensor]:
    """Each distinct text object looked up once (once at all with `known`), cut to `max_len`:
    the table of the distinct texts, and each text's row in it (B,).

    Every word of every new text is looked up in one pass: one array lookup of the keys' codes
    (`Tokens.codes`), or else at C speed (`map` over the keys); the vectors come out in one gather.
    """
    objects = list(map(id, texts))
    first = dict.fromkeys(objects)  # each object once, in order of first appearance
    if len(first) == len(texts):  # no text repeated (the answers of a ranking file)
        distinct, inverse = list(texts), np.arange(len(texts))
    else:
        slot_of = {key: slot for slot, key in enumerate(first)}
        inverse = np.fromiter(map(slot_of.__getitem__, objects), np.int64, len(objects))
        distinct = [texts[n] for n in np.unique(inverse, return_index=True)[1]]

    def looked_up(new: Sequence[Sequence[Token]]) -> tuple[np.ndarray, np.ndarray]:
        """The ids of `new`'s words, cut to max_len, as one flat array in text order; each text's length."""
        codes = list(map(token_codes, new))
        if None not in codes:  # the whole block in one array lookup
            cut_codes = [c if len(c) <= max_len else c[:max_len] for c in codes]  # type: ignore[arg-type]
            lengths = np.fromiter(map(len, cut_codes), dtype=np.int64, count=len(cut_codes))
            flat = np.fromiter(itertools.chain.from_iterable(cut_codes), np.int64, int(lengths.sum()))
            return vectors.ids_of_codes(flat), lengths
        cut = [text if len(text) <= max_len else text[:max_len] for text in new]
        return (vectors.key_ids([t.key for t in itertools.chain.from_iterable(cut)]),
                np.fromiter(map(len, cut), dtype=np.int64, count=len(cut)))

    if known is None:  # every text new: its ids stay one flat array, in the order of the texts
        flat, lengths = looked_up(distinct)
    else:
        ids: list[np.ndarray | None] = [known.rows.get((id(text), max_len)) for text in distinct]
        missing = [n for n, found in enumerate(ids) if found is None]
        if missing:
            new_ids, new_lengths = looked_up([distinct[n] for n in missing])
            ends = np.cumsum(new_lengths).tolist()
            for n, start, end in zip(missing, [0, *ends], ends, strict=False):
                ids[n] = known.rows[(id(distinct[n]), max_len)] = new_ids[start:end]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))  # type: ignore[arg-type]
        flat = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)  # type: ignore[arg-type]
    if len(lengths) and lengths.min() < 1:
        raise ValueError("every text in a batch needs at least one word")
    table = np.full((len(distinct), int(lengths.max(initial=1))), PAD_ID[side], dtype=np.int64)
    # Row-major order of the real positions is the order of the texts, concatenated.
    table[np.arange(table.shape[1])[None, :] < lengths[:, None]] = flat
    unknown = (table < 0) & (table != PAD_ID[side])
    return (TextTable(vectors.vectors_at(table), torch.from_numpy(unknown), torch.from_numpy(lengths),
                      torch.from_numpy(table)), torch.from_numpy(inverse))


def pair_batch(questions: TextTable, question_encoding: TextEncoding | None, answers: TextTable,
               answer_encoding: TextEncoding | None = None, lists: ListStatistics | None = None) -> PairBatch:
    return PairBatch(questions.vectors, questions.unknown, questions.lengths, answers.vectors, answers.unknown,
                     answers.lengths, questions.ids, answers.ids, question_encoding=question_encoding,
                     answer_encoding=answer_encoding,
                     **({} if lists is None else lists.batch_fields(questions.vectors.shape[1],
                                                                    answers.vectors.shape[1])))


def batch_on(batch: PairBatch, device: torch.device) -> PairBatch:
    """`batch` with its tensors on `device` (itself where they are there already). Encodings are
    made by the model, on its device, so a batch built apart (training) has none to move."""
    moved = {name: value.to(device) for name, value in vars(batch).items() if isinstance(value, torch.Tensor)}
    return replace(batch, **moved) if any(moved[n] is not getattr(batch, n) for n in moved) else batch


def batch_rows(batch: PairBatch, index: torch.Tensor) -> PairBatch:
    """The pairs of `batch` at `index` (padded as in the whole batch), with what each read of its list."""
    return replace(batch, **{name: value[index] for name, value in vars(batch).items()
                             if isinstance(value, torch.Tensor)})


def make_token_batch(vectors: WordVectors, questions: Sequence[Sequence[Token]],
                     answers: Sequence[Sequence[Token]], max_question_len: int, max_answer_len: int,
                     known: TextCache | None = None, lists_for: ModelParams | None = None) -> PairBatch:
    """The same batch as `make_batch` over `vectors.encode` of each text, built faster; with `lists_for`, the list
    statistics that model reads (`ListStatistics.of`: the pairs given with the same question object a list)."""
    question_table, question_rows = lookup_texts(vectors, questions, max_question_len, "question", known)
    answer_table, answer_rows = lookup_texts(vectors, answers, max_answer_len, "answer", known)
    lists = None if lists_for is None else ListStatistics.of(lists_for, questions, answers, known=known)
    return pair_batch(question_table.rows(question_rows), None, answer_table.rows(answer_rows), lists=lists)
