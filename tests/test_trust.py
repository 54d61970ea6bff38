"""A plain warning when most words are unknown; and the cells several models pooled, named by matrix."""

from __future__ import annotations

from conftest import MatcherFactory

from matching.evaluation.tables import shared_cells
from matching.explain.ranking import rank, rank_column
from matching.explain.trust import candidate_warning, trust_warning, unknown_count
from matching.text.tokens import tokenize


def test_trust_warning(make_matcher: MatcherFactory) -> None:
    models = {"tiny": make_matcher(seed=0)}
    assert trust_warning(rank("Who wrote Hamlet?", ["Shakespeare wrote it.", "qwxlyt vrrmpt"], models)) is None
    japanese = rank("東京はどこですか", ["東京 は 日本 の 首都 です", "🔒 🎉"], models)
    note = trust_warning(japanese)
    assert note and "question" in note and "every candidate" in note and "says little" in note
    made_up = rank("Who wrote Hamlet?", ["Zorblax qwxlyt vrrmpt.", "Blorftqx zzkrvpw."], models)
    assert "every candidate" in (trust_warning(made_up) or "")
    assert trust_warning(rank("Who wrote Hamlet?", ["Zorblax qwxlyt vrrmpt."], {})) is None  # no model, no flags
    assert unknown_count([t for t in tokenize("?!")]) == (0, 0)  # punctuation is not a word


def test_one_candidate_of_unknown_words_is_flagged_where_it_is_explained(make_matcher: MatcherFactory) -> None:
    """The ranking's warning is about the question or every candidate: "zxqv blorf quintle" among known answers was
    explained cell by cell ("Dracula x quintle") on the Pooled cells, Attention and Compare pages, with no word."""
    models = {"tiny": make_matcher(seed=0)}
    ranking = rank("Who wrote Dracula?", ["Bram Stoker wrote Dracula.", "zxqv blorf quintle", "Stoker qwxlyt vrrmpt"],
                   models)
    assert trust_warning(ranking) is None
    assert candidate_warning(ranking, [0]) is None
    one = candidate_warning(ranking, [1])
    assert one and "no word vector for all 3 words of candidate #2" in one and "with caution" in one
    both = candidate_warning(ranking, [0, 2, 1, 2])
    assert both and "2 of the 3 words of candidate #3" in both and both.index("#3") < both.index("#2")
    made_up = rank("Who wrote Hamlet?", ["Zorblax qwxlyt vrrmpt.", "Blorftqx zzkrvpw."], models)
    assert candidate_warning(made_up, [0]) is None  # the ranking's own warning says it for every candidate
    assert candidate_warning(rank("Who wrote Hamlet?", ["zxqv blorf"], {}), [0]) is None  # no model, no flags


def test_a_question_of_punctuation_alone_is_flagged(make_matcher: MatcherFactory) -> None:
    models = {"tiny": make_matcher(seed=0)}
    punctuation = rank("?! ... ?", ["Shakespeare wrote it.", "Paris is in France."], models)
    assert punctuation.models  # it is ranked: GloVe has vectors for punctuation marks
    assert "only punctuation" in (trust_warning(punctuation) or "")
    assert trust_warning(rank("Who?", ["Shakespeare wrote it."], models)) is None
    wordless = trust_warning(rank("Who wrote Hamlet?", ["Shakespeare wrote it.", "?!...", "!!!"], models))
    assert wordless and "Candidates #2, #3 have no word" in wordless and "says little" not in wordless


def test_shared_cells_name_the_matrix_and_leave_blanks(make_matcher: MatcherFactory) -> None:
    models = {f"m{s}": make_matcher(seed=s, name=f"m{s}") for s in range(3)}
    models["p"] = make_matcher(seed=1, name="p", family="matchpyramid")
    ranking = rank("who wrote the novel pride and prejudice", ["pride and prejudice is a novel by jane austen"],
                   models)
    rows = shared_cells({n: r.explanations[0] for n, r in ranking.models.items()})
    assert rows
    for row in rows:
        values = [row[rank_column(n)] for n in models]
        assert row["models"] == sum(bool(v) for v in values) >= 2
        assert all(v is not None for v in values)  # blank is '', never None
        assert all(v == "" or "#" in v or "window" in v for v in values)


def test_shared_cells_leave_out_cells_pooled_at_zero(make_matcher: MatcherFactory) -> None:
    """Two models with an exact-match matrix pool its zero cells by place (a short question and answer share two
    words): "Who x a" stood in "Cells pooled by more than one model" though it adds exactly 0 to either score."""
    models = {f"m{s}": make_matcher(seed=s, name=f"m{s}", exact_match="binary") for s in range(2)}
    ranking = rank("who wrote the novel emma", ["emma is a novel by jane austen written in 1815"], models)
    explanations = {n: r.explanations[0] for n, r in ranking.models.items()}
    zero = {(c.i, c.j) for e in explanations.values() for c in e.pooled_cells if not c.filler and c.value == 0}
    assert zero  # the exact-match matrix's k-max kept zero cells
    rows = shared_cells(explanations)
    assert rows and not {(r["question position"] - 1, r["answer position"] - 1) for r in rows} & (
        zero - {(c.i, c.j) for e in explanations.values() for c in e.pooled_cells if c.value != 0})
