"""The glossary: one plain line per term, every alias resolves, short names stay short and unique."""

from __future__ import annotations

import pytest

from matching.explain import glossary
from matching.explain.glossary import TERMS, GlossaryError

REQUIRED = ["attention gate", "alpha", "Bi-LSTM", "positional vector", "cosine", "interaction matrix",
            "k-max pooling", "filler", "MLP", "contribution", "gradient x value", "MAP", "MRR"]
"""The terms issue 9 names."""


def test_every_required_term_is_explained() -> None:
    for name in REQUIRED:
        assert glossary.term(name).name == name


def test_each_explanation_is_one_plain_line() -> None:
    names = [t.name.casefold() for t in TERMS]
    assert len(names) == len(set(names)), "a term is defined twice"
    spellings = [s.casefold() for t in TERMS for s in (t.name, *t.aliases)]
    assert len(spellings) == len(set(spellings)), "an alias points at two terms"
    for entry in TERMS:
        assert "\n" not in entry.plain and 20 <= len(entry.plain) <= 170, entry.name
        assert not entry.plain[0].islower() or entry.plain.startswith("aMV"), entry.name
        assert entry.plain.endswith("."), entry.name


def test_aliases_and_case_resolve_and_unknown_terms_fail_loudly() -> None:
    assert glossary.term("K-MAX").name == "k-max pooling"
    assert glossary.term("gradient × value").name == "gradient x value"
    with pytest.raises(GlossaryError, match="no term"):
        glossary.term("flux capacitor")
    assert glossary.help_for("MAP", "MRR").count("**") == 4


def test_mentioned_in_finds_whole_words_only() -> None:
    text = "k-max pooling keeps cells; the MLP gives the score. Mapping is not MAP-like."
    found = glossary.mentioned_in(text)
    assert {"k-max pooling", "MLP", "score"} <= set(found)
    assert "MAP" not in glossary.mentioned_in("mapping the roadmap")
    assert glossary.entries(["MRR", "k-max", "MAP", "MRR"]) == [glossary.term("k-max pooling"),
                                                                 glossary.term("MAP"), glossary.term("MRR")]


@pytest.mark.parametrize(("name", "short"), [("mvlstm", "MV"), ("mvlstm-tensor", "MV-T"), ("amvlstm-q", "aMV-Q"),
                                             ("amvlstm-qa", "aMV-QA"), ("matchpyramid-q", "MP-Q"),
                                             ("word overlap", "overlap"), ("BM25", "BM25")])
def test_short_names(name: str, short: str) -> None:
    assert glossary.short_name(name) == short


def test_the_model_picker_groups_by_family_and_names_where_omega_sits() -> None:
    from matching.explain.glossary import model_label, picker_order
    from matching.models.params import AMVLSTMParams, CDSSMParams, MVLSTMParams

    models = {"z-plain": CDSSMParams(), "a-both": CDSSMParams(attention="both"),
              "c-q": CDSSMParams(attention="question"), "mv": MVLSTMParams(), "mv-kw": MVLSTMParams(keywords=True),
              "amv-a": AMVLSTMParams(attention="answer"), "amv-sparse": AMVLSTMParams(attention_gate="sparsemax")}
    assert picker_order(models) == ["amv-sparse", "amv-a", "z-plain", "c-q", "a-both", "mv", "mv-kw"]
    assert model_label("c-q", models["c-q"]) == "c-q · C-DSSM, ω on the question"
    assert model_label("a-both", models["a-both"]) == "a-both · C-DSSM, ω on both"
    assert model_label("mv-kw", models["mv-kw"]) == "mv-kw · MV-LSTM, + keywords"
    assert model_label("amv-sparse", models["amv-sparse"]) == "amv-sparse · aMV-LSTM, ω on the question (sparsemax)"
    # The training data is said where it is not WikiQA alone: amvlstm-q and amvlstm-q-trecqa read alike otherwise.
    assert model_label("amv-a", models["amv-a"], "wikiqa") == "amv-a · aMV-LSTM, ω on the answer"
    assert model_label("amv-a", models["amv-a"], "trecqa-all") == "amv-a · TRAIN-ALL · aMV-LSTM, ω on the answer"
    assert (model_label("mv-kw", models["mv-kw"], "wikiqa+trecqa-all")
            == "mv-kw · WikiQA + TRAIN-ALL · MV-LSTM, + keywords")
    assert model_label("mv", models["mv"], "my-folder") == "mv · my-folder · MV-LSTM"  # a folder of one's own, as named


@pytest.mark.parametrize(("value", "digits", "text"), [(-3e-6, 4, "+0.0000"), (-0.0, 3, "+0.000"),
                                                       (-0.00051, 3, "-0.001"), (0.0047, 4, "+0.0047"),
                                                       (-2.5, 1, "-2.5")])
def test_signed_never_writes_a_negative_zero(value: float, digits: int, text: str) -> None:
    assert glossary.signed(value, digits) == text


def test_rank_of_keeps_its_words_on_one_line() -> None:
    assert glossary.rank_of(1, 4) == "rank\u00a01\u00a0of\u00a04"
    assert " " not in glossary.rank_of(12, 300)
