"""The walkthrough's generic step views: one Explanation (and its ranking) in, one screen drawn.

A family's walkthrough is a list of steps, each naming the view that draws it (`models.parts.View`);
each function here is one such view, for any family whose explanation has the part it reads. The
numbers come from `matching.explain.walkthrough`, which reads them off the forward pass that
produced the score.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from matching.explain import charts
from matching.explain import walkthrough as walk
from matching.explain.explanation import Explanation
from matching.explain.matrix_views import Outline
from matching.explain.ranking import Ranking
from matching.models.base import SCORE_TERMS
from ui.views import components, state

SIDES = ("question", "answer")


def _problems(explanation: Explanation, key: str) -> None:
    for message in walk.problems(explanation, key):
        st.warning(components.md(message), icon=":material/warning:")


WHOLE_TABLE_ROWS = 20
"""A table of one text's words shows this many rows whole. It scrolled at 12 (8 for the gate) with no
scrollbar in sight, so an answer's last words looked missing."""


def _table_height(rows: int) -> int:
    return 38 + 35 * min(rows, WHOLE_TABLE_ROWS)


def _scroll_note(rows: int) -> None:
    if rows > WHOLE_TABLE_ROWS and not state.presenting():  # on a projector the table shows every row
        st.caption(f"{rows} words: scroll the table for the last {rows - WHOLE_TABLE_ROWS}.")


def words(explanation: Explanation, texts: dict[str, str], key: str) -> None:
    _problems(explanation, "words")
    for side in SIDES:
        tokens = walk.side_tokens(explanation, side)
        components.shaded_text(texts[side], tokens, None, label=side.capitalize(), key=f"{key}_{side}_text")
        components.small_table(pd.DataFrame(walk.word_rows(explanation, side)), f"{key}_{side}_table",
                               height=_table_height(len(tokens)))
        _scroll_note(len(tokens))
    st.caption("Unknown words are underlined; words past the maximum length are struck through.")


def vectors(explanation: Explanation, key: str) -> None:
    _problems(explanation, "vectors")
    limit = charts.shared_limit(*(walk.side_values(explanation, side).words for side in SIDES))
    for side in SIDES:
        values = walk.side_values(explanation, side)
        labels = walk.vector_labels(explanation, side)
        unknown = [i for i, label in enumerate(labels) if label.endswith("(unknown)")]
        components.altair(charts.vector_strips(values.words, labels, f"{side} word vectors",
                                               "outlined: unknown words (one shared vector)" if unknown else None,
                                               highlight=unknown, limit=limit), key=f"{key}_{side}")


def gate(explanation: Explanation, length_scaled: bool, key: str, kind: str = "softmax") -> None:
    _problems(explanation, "gate")
    limit = charts.shared_limit(*(walk.side_values(explanation, side).gated_words for side in SIDES))
    for side in SIDES:
        rows = walk.gate_rows(explanation, side, length_scaled)
        if rows is None:
            st.caption(f"The {side} has no gate in this model: every {side} word keeps weight 1.")
            continue
        st.markdown(f"**{side.capitalize()}**: {walk.gate_formula(kind, len(rows))}"
                    + (f"; each vector is multiplied by alpha_t x {len(rows)} (the model scales by the "
                               "length, so the mean weight is 1)." if length_scaled else " and multiplied by alpha_t."))
        components.small_table(pd.DataFrame(rows), f"{key}_{side}_table",
                               dict.fromkeys(("V^T w", "alpha", "weight applied"), "%.4f"),
                               height=_table_height(len(rows)))
        _scroll_note(len(rows))
        weights = explanation.question_attention if side == "question" else explanation.answer_attention
        tokens = [t for t in walk.side_tokens(explanation, side) if not t.truncated]
        components.altair(charts.attention_chart(tokens, weights, f"{side} attention", "alpha per word"),
                          key=f"{key}_{side}_bars")
        components.altair(charts.vector_strips(walk.side_values(explanation, side).gated_words,
                                               walk.vector_labels(explanation, side), f"{side} vectors after the gate",
                                               "each strip is the word's strip times its weight", limit=limit),
                          key=f"{key}_{side}_gated")


def states(explanation: Explanation, key: str) -> None:
    _problems(explanation, "states")
    same = walk.same_word(explanation)
    if same is not None:
        where = " and ".join(f"{side} position {position + 1}" for side, position in (same.first, same.second))
        text = f"**Positional:** the word '{components.md(same.word)}' appears at {where}: two different vectors"
        if same.cosine is not None:
            text += f", whose cosine is {same.cosine:.3f} (from the interaction matrix; 1 would mean identical)"
        st.markdown(text + ".")
    else:
        st.caption("No word appears twice here; were one to, its two positions would get two different vectors.")
    side = st.segmented_control("Text", SIDES, default="question", key=f"{key}_side") or "question"
    found = walk.states(explanation, side)
    assert found is not None
    labels = walk.vector_labels(explanation, side)
    marked = [position for s, position in (same.first, same.second) if s == side] if same else []
    for direction, values in found.items():
        components.altair(charts.vector_strips(values, labels, f"{direction} LSTM states ({side})",
                                               DIRECTION_NOTES.get(direction), highlight=marked),
                          key=f"{key}_{direction}")


DIRECTION_NOTES = {"forward": "left to right: each state has read the words up to it",
                   "backward": "right to left: each state has read the words after it"}


def projection(explanation: Explanation, key: str) -> None:
    """The word vectors as the family's first layer passes them on (before and after, one strip per word)."""
    limit = charts.shared_limit(*(walk.side_values(explanation, side).gated_words for side in SIDES))
    for side in SIDES:
        values = walk.side_values(explanation, side)
        labels = walk.vector_labels(explanation, side)
        components.altair(charts.vector_strips(values.gated_words, labels, f"{side} words after the projection",
                                               f"from the {values.words.shape[1]} numbers of each word vector",
                                               limit=limit),
                          key=f"{key}_{side}")


def _matrix(explanation: Explanation, name: str) -> np.ndarray:
    return explanation.interaction_matrices.get(name, explanation.display_matrices.get(name))


def cell(explanation: Explanation, key: str, shows: tuple[str, ...] = ()) -> None:
    _problems(explanation, "cell")
    names = list(shows) or [*explanation.interaction_matrices, *explanation.display_matrices]
    which, left, right = st.columns(3)  # one row of choices: the worked cell stays on the first screen
    name = which.selectbox("Matrix", names, key=f"{key}_matrix", help="The matrices the network read "
                           "(and, after them, the ones shown for orientation only).")
    matrix = _matrix(explanation, name)
    first = walk.first_pooled(explanation)
    q_labels = walk.vector_labels(explanation, "question")
    a_labels = walk.vector_labels(explanation, "answer")
    i = left.selectbox("Question word", range(len(q_labels)), format_func=lambda x: q_labels[x],
                       index=first.i if first and first.i is not None else 0, key=f"{key}_i")
    j = right.selectbox("Answer word", range(len(a_labels)), format_func=lambda x: a_labels[x],
                        index=first.j if first and first.j is not None else 0, key=f"{key}_j")
    math = walk.cell_math(explanation, name, i, j)
    if math is None:
        st.markdown(f"This matrix uses learned weights between the two vectors, so its cells are not a plain "
                    f"product of vectors shown here. The network read **{float(matrix[i, j]):+.4f}** at this cell.")
    elif math.cosine:
        st.markdown(f"cos(p_{i + 1}, p_{j + 1}) = p_{i + 1} · p_{j + 1} / (|p_{i + 1}| × |p_{j + 1}|) = "
                    f"{math.dot:.4f} / ({math.left_norm:.4f} × {math.right_norm:.4f}) = **{math.board:.4f}**; "
                    f"the network read {math.traced:.4f}.")
    else:
        st.markdown(f"{components.md(name)} cell ({i + 1}, {j + 1}) = the dot product of the two traced vectors = "
                    f"sum of the {len(math.left)} products = **{math.board:.4f}**"
                    f"{' (unit vectors)' if 'cosine' in name else ''}; the network read {math.traced:.4f}.")
    if math is not None:
        components.altair(charts.vector_strips(np.vstack([math.left, math.right, math.left * math.right]),
                                               ["question vector", "answer vector", "their products"],
                                               "the two vectors and their products",
                                               "the dot product is the sum of the bottom strip"), key=f"{key}_pair")
    components.plotly(charts.interaction_heatmap(matrix, explanation.question_tokens, explanation.answer_tokens,
                                                 [Outline(i, j, "●")], title=f"{name}: the whole matrix"),
                      key=f"{key}_heatmap")


def _reveal(revealed_key: str, count: int) -> None:
    st.session_state[revealed_key] = count


def pooling(explanation: Explanation, key: str) -> None:
    _problems(explanation, "pooling")
    groups = walk.pooled_groups(explanation)
    source, count = st.columns([1, 2], vertical_alignment="bottom")
    group = source.selectbox("Pooled from", groups, key=f"{key}_group") if len(groups) > 1 else groups[0]
    rows = walk.pooling_rows(explanation, group)
    # Buttons, not a slider: a slider keeps the keyboard focus after use and takes the ← and → keys,
    # which belong to the walkthrough's Back and Next (a focused button leaves them to the shortcuts).
    revealed_key = f"{key}_revealed_{group}"
    shown = min(max(int(st.session_state.get(revealed_key, 3)), 1), len(rows))
    count.markdown(f"Cells revealed, in pooling order: **{shown} of {len(rows)}**")
    with count.container(horizontal=True):
        st.button("One more", icon=":material/add:", key=f"{revealed_key}_more", disabled=shown == len(rows),
                  on_click=_reveal, args=(revealed_key, shown + 1))
        st.button("All", icon=":material/done_all:", key=f"{revealed_key}_all", disabled=shown == len(rows),
                  on_click=_reveal, args=(revealed_key, len(rows)))
        st.button("Start over", icon=":material/restart_alt:", key=f"{revealed_key}_first", disabled=shown == 1,
                  on_click=_reveal, args=(revealed_key, 1))
    revealed = rows[:shown]
    matrix_name = next(c.matrix for c in explanation.pooled_cells if c.group == group)
    outlines = [Outline(r["i"], r["j"], str(r["order"])) for r in revealed if not r["filler"]]
    components.plotly(charts.interaction_heatmap(_matrix(explanation, matrix_name), explanation.question_tokens,
                                                 explanation.answer_tokens, outlines,
                                                 title=f"{matrix_name}: {shown} of {len(rows)} pooled"),
                      key=f"{key}_heatmap")
    st.markdown(f"**Kept so far:** {revealed[-1]['kept so far']}")
    table = pd.DataFrame(revealed)[["order", "question", "answer", "value"]]
    components.small_table(table, f"{key}_table", {"value": "%.4f"}, height=min(38 + 35 * len(table), 320))


def mlp(explanation: Explanation, key: str) -> None:
    step = walk.mlp_step(explanation)
    active = int(step.active.sum())
    st.markdown(f"**In:** the {len(step.inputs)} pooled values. **Hidden layer:** {active} of {len(step.hidden)} "
                f"units active (above zero). **Out:** the score **{step.score:+.4f}** = the sum of the cell "
                f"contributions {step.score - step.bias - explanation.keyword_score:+.4f}"
                + (f" + the keyword term {explanation.keyword_score:+.4f}" if explanation.keyword_terms else "")
                + f" + the bias {step.bias:+.4f}.")
    components.altair(charts.vector_strips(step.inputs[None, :], ["pooled values"], "what the MLP reads"),
                      key=f"{key}_inputs")
    components.altair(charts.hidden_units_chart(step.hidden, "hidden units: W q + b (ReLU keeps the positive ones)"),
                      key=f"{key}_hidden")
    components.altair(charts.waterfall_chart(step.waterfall, step.score, "from 0 to the score: each cell's "
                                             "contribution, then the bias"), key=f"{key}_waterfall")


def matrix(explanation: Explanation, key: str, shows: tuple[str, ...] = ()) -> None:
    """Named matrices over (question word, answer word), each drawn whole."""
    names = [name for name in (shows or [*explanation.interaction_matrices, *explanation.display_matrices])
             if _matrix(explanation, name) is not None]
    name = st.selectbox("Matrix", names, key=f"{key}_matrix") if len(names) > 1 else names[0]
    components.plotly(charts.interaction_heatmap(_matrix(explanation, name), explanation.question_tokens,
                                                 explanation.answer_tokens, [], title=name), key=f"{key}_heatmap")


def weights(explanation: Explanation, key: str, shows: tuple[str, ...] = ()) -> None:
    """Named word weights, question and answer side by side."""
    found = explanation.all_word_weights
    for name in shows or tuple(found):
        if name not in found:
            continue
        columns = st.columns(2)
        for column, side, values in zip(columns, SIDES, found[name], strict=True):
            if values is None:
                column.caption(f"{name}: no weights on the {side}.")
                continue
            tokens = [t for t in walk.side_tokens(explanation, side) if not t.truncated]
            with column:
                components.altair(charts.attention_chart(tokens, values, f"{name} ({side})", "weight per word"),
                                  key=f"{key}_{name}_{side}")


def channels(explanation: Explanation, key: str, shows: tuple[str, ...] = ()) -> None:
    """Named per-word feature channels of both sides (one strip per word, one cell per channel)."""
    found = explanation.channels
    assert found is not None
    picked = [found.names.index(name) for name in shows if name in found.names] or list(range(len(found.names)))
    names = [found.names[c] for c in picked]
    limit = charts.shared_limit(found.question[:, picked], found.answer[:, picked])
    for side, values in zip(SIDES, (found.question, found.answer), strict=True):
        components.altair(charts.vector_strips(values[:, picked], walk.vector_labels(explanation, side),
                                               f"{side}: {len(names)} features per word", columns=names,
                                               limit=limit),
                          key=f"{key}_{side}")


def pair_vectors(explanation: Explanation, key: str, shows: tuple[str, ...] = ()) -> None:
    """Named vectors of the pair on the way to the score, one strip each."""
    found = explanation.steps.vectors
    names = walk.pair_vector_names(explanation, shows)
    for name in names:
        components.altair(charts.vector_strips(found[name][None, :], [name], name), key=f"{key}_{name}")
    layer = walk.score_layer(explanation)
    if layer is not None and SCORE_TERMS in names:
        terms, bias = layer
        st.markdown(f"The last strip summed, **{terms:+.4f}**, plus the bias **{bias:+.4f}**, is the learned match "
                    f"**{terms + bias:+.4f}**" + (f"; with the keywords {explanation.keyword_score:+.4f}, the score "
                                                  f"**{explanation.score:+.4f}**." if explanation.keyword_terms
                                                  else ", the score."))


def terms(explanation: Explanation, key: str) -> None:
    """The score split into its named terms (learned match, each keyword feature's w x), adding up to the score."""
    rows = walk.term_rows(explanation)
    if explanation.keyword_terms:
        st.markdown(f"**Learned match** {explanation.learned_score:+.4f} + **keywords** "
                    f"{explanation.keyword_score:+.4f} = the score **{explanation.score:+.4f}**.")
    else:
        st.markdown(f"The terms add up to the score **{explanation.score:+.4f}**.")
    components.small_table(pd.DataFrame(rows), f"{key}_table",
                           {c: "%.4f" for c in ("value", "feature x", "weight w") if rows and c in rows[0]},
                           placeholder="")
    components.altair(charts.waterfall_chart(walk.terms_waterfall(explanation), explanation.score,
                                             "from 0 to the score, term by term"), key=f"{key}_waterfall")


def rank(ranking: Ranking, model: str, pick: int, key: str) -> None:
    result = ranking.models[model]
    position = int(result.ranks[pick])
    st.markdown(f"Candidate #{pick + 1} scores **{float(result.scores[pick]):+.4f}**: rank **{position}** of "
                f"{len(ranking.candidates)} for {components.md(model)}.")
    components.altair(charts.scores_chart(result.scores.tolist(), result.ranks.tolist(), pick,
                                          "every candidate's score", model), key=f"{key}_scores")
