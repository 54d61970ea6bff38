"""Rank (home): type a question and candidates, or pick an example; see every model's ranking side by side."""

from __future__ import annotations

import json
from functools import partial

import pandas as pd
import streamlit as st

from matching.explain import charts, glossary
from matching.explain.export import rows_to_csv
from matching.explain.ranking import Ranking, compact_rows, rank_column, score_column, score_split_rows, silent_features
from matching.explain.trust import trust_warning
from matching.text.examples import EXAMPLES, Example
from matching.training.cards import default_models
from ui.views import common, components, state

ss = st.session_state
presenting = state.presenting()

st.title(":material/format_list_numbered: Rank candidate answers")
st.caption("Every model ranks the candidate answers side by side; the other pages show why." if presenting else
           "Type a question and candidate answers, or start from an example: every model ranks them side by side, "
           "and the other pages show why.")
components.glossary(["score", "rank", "rank spread", "baseline", "keyword term", "answer-type features",
                     "echoes the question", "BM25 within the list", "stems",
                     "learned match", "unknown word", "truncated",
                     *glossary.FAMILY_TERM_NAMES, "attention gate"], key="rank_glossary")


# ---------------------------------------------------------------- gallery

def _load(example: Example) -> None:
    state.load_example(example)
    ss["ml_example"] = example.key


if not presenting:
    with st.container(key="gallery", horizontal=True, vertical_alignment="center"):
        st.markdown("**Examples**")
        for example in EXAMPLES:
            st.button(example.title, key=f"example_{example.key}", icon=example.icon, help=example.note,
                      on_click=_load, args=(example,))
example_key = ss.get("ml_example")
if example_key:
    shown = next((e for e in EXAMPLES if e.key == example_key), None)
    if shown and shown.question == ss[state.QUESTION]:
        st.caption(f":material/lightbulb: **{shown.title}.** {shown.note}")


# ---------------------------------------------------------------- inputs (controlled widgets)

def _question_changed() -> None:
    state.set_inputs(question=ss["rank_question"])


def _candidates_changed() -> None:
    state.set_inputs(candidates=ss["rank_candidates"])


def _gold_changed() -> None:
    state.set_inputs(gold=ss["rank_gold"])


def _models_changed() -> None:
    chosen = list(ss["rank_models"])
    ss[state.MODELS] = None if chosen == default_models(list(state.models())) else chosen


ss["rank_question"] = ss[state.QUESTION]
ss["rank_candidates"] = ss[state.CANDIDATES]
request = state.current_request()
count = len(request.parsed.candidates)
ss["rank_gold"] = [i for i in ss[state.GOLD] if i < count]
ss["rank_models"] = state.chosen_models()


def _inputs() -> None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.text_input("Question", key="rank_question", on_change=_question_changed,
                      placeholder="e.g. Who wrote Pride and Prejudice?", max_chars=20_000)
        st.text_area("Candidate answers, one per line", key="rank_candidates", on_change=_candidates_changed,
                     height=150, placeholder="One candidate answer per line (up to 100)",
                     help="Blank lines are skipped. Press Ctrl+Enter (or click outside) to rank.")
    with right:
        models = state.models()
        loaded = {name: matcher.params for name, matcher in models.items()}
        st.multiselect("Models", glossary.picker_order(loaded), key="rank_models", on_change=_models_changed, wrap=True,
                       format_func=lambda name: glossary.model_label(name, loaded[name], models[name].trained_on),
                       help="The models to rank with, grouped by family, with the data they learned from where it "
                            "is not WikiQA alone (TRAIN-ALL is TrecQA's) and where the attention gate ω sits; the "
                            "baselines are always shown.", placeholder="No model chosen: baselines only")
        st.multiselect("Correct answers (optional)", list(range(count)), key="rank_gold", on_change=_gold_changed,
                       wrap=True,
                       format_func=lambda i: components.candidate_options(request.parsed.candidates)[i],
                       help="Mark the right answers to see where each model puts them.",
                       placeholder="None marked")


if presenting:  # no editing controls: the input is shown, not edited
    st.markdown(f"**Question:** {components.md(ss[state.QUESTION])}")
else:
    _inputs()


# ---------------------------------------------------------------- results

current = state.current()
components.notes(request.parsed.notes, key="rank_notes", compact=presenting)
if current.problem:
    st.info(components.md(current.problem), icon=":material/edit_note:")
    st.stop()
ranking = current.ranking
assert ranking is not None

if count == 1:
    st.info("Only one candidate: it is ranked (rank 1 by every system), but there is nothing to compare it with. "
            "Add more lines to see the models disagree.", icon=":material/info:")
if not ranking.models:
    st.info("No model chosen: only the baselines are shown.", icon=":material/info:")


trust_note = trust_warning(ranking)
if trust_note:
    st.warning(trust_note, icon=":material/help:")
for message in ranking.truncation_notes():
    st.warning(message, icon=":material/content_cut:")

pick = state.pick_index(count)


def _summary() -> None:
    """Each model's top answer, whether they disagree, and how long the ranking took."""
    tops = " · ".join(f"{glossary.short_name(name) if presenting else name} → #{top + 1}"
                      for name, top in ranking.top_answers().items())
    if tops:
        st.markdown(f"**Top answer by model:** {components.md(tops)}")
    disagree = ":material/call_split: **The models disagree on the top answer.**" if ranking.disagree_on_top() else ""
    if presenting:  # on a projector the point, not the timing and the input id
        if disagree:
            st.caption(disagree)
        return
    st.caption(f"{disagree} :material/timer: Ranked {count} candidate(s) with {len(ranking.models)} model(s) in "
               f"{current.seconds * 1000:.0f} ms · input {request.digest}".lstrip(), help="The model time for this "
               "input (cached afterwards). The input id changes with every edit.")


if not presenting:  # on a projector the table comes first
    _summary()

# ---------------------------------------------------------------- the side-by-side table

def _table(ranking: Ranking, scores: bool) -> tuple[pd.DataFrame, dict[str, object], list[str]]:
    frame = pd.DataFrame(ranking.rows())
    frame.insert(2, "rank spread", ranking.disagreement().astype(int))
    order = ["#", "candidate"] + (["correct"] if ranking.labels is not None else []) + ["rank spread"]
    config: dict[str, object] = {
        "#": st.column_config.NumberColumn("#", width=44, pinned=True),
        "candidate": st.column_config.TextColumn("candidate", width="medium", pinned=True),
        "correct": st.column_config.CheckboxColumn("correct", help="Gold label you marked", width=64),
        "rank spread": st.column_config.NumberColumn(
            "spread", help="Largest minus smallest rank across the models: 0 = they agree."),
    }
    systems = [*ranking.models, *ranking.baselines]
    for name in systems:
        kind = "model" if name in ranking.models else "baseline"
        order.append(rank_column(name))
        label = rank_column(name) if scores else name
        if kind == "baseline" and not scores:
            # Under its short name ("overlap"), the full name in the help: with the full names the three
            # defaults and three baselines did not fit a 1440 px window.
            label = glossary.short_name(name)
        config[rank_column(name)] = st.column_config.NumberColumn(
            label, format="%d", help=f"Rank by the {kind} {name} (1 = best)",
            # Centred: a rank is one or two digits under a long name, and a column the table's right edge cuts
            # still shows its ranks (right-aligned, they were cut first and the column looked empty).
            alignment="center")
        if scores:
            order.append(score_column(name))  # signed below, as every other page shows a score
            config[score_column(name)] = st.column_config.NumberColumn(score_column(name), format="%+.3f")
    return frame, components.fit_headers(frame[order], config), order


def _shown(frame: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Only the columns on screen: the table's styling and transfer cost grow with every cell."""
    return frame[order]


def _style(frame: pd.DataFrame, models: list[str]) -> pd.io.formats.style.Styler:
    """Bold green rank 1; amber ranks where the models disagree by 2 or more; darker amber = larger spread."""
    rank_columns = [rank_column(m) for m in models]

    def highlight(row: pd.Series) -> list[str]:
        styles = []
        spread = int(row["rank spread"])
        for column in row.index:
            style = ""
            if column in rank_columns and spread >= 2:
                style = "background-color: #fff1cc"
            if column in rank_columns and row[column] == 1:
                style += "; font-weight: 700; color: #1a7f37"
            if column == "rank spread" and spread > 0:
                style = f"background-color: {'#fbd38d' if spread >= 2 else '#fff1cc'}; font-weight: 700"
            styles.append(style)
        return styles

    return frame.style.apply(highlight, axis=1)


def _selected(key: str) -> None:
    rows = ss[key].selection.rows
    if rows:
        ss[state.PICK] = int(rows[0])


def _full_table(ranking: Ranking, frame: pd.DataFrame, config: dict[str, object], order: list[str]) -> None:
    # The caption takes the width and the toggle its own line: beside the caption, in a column, its label
    # was cut to "Sho..." at a width of 1024 pixels.
    systems = [*ranking.models, *ranking.baselines]
    # A window of 1280 px shows about five systems' ranks beside the candidates, fewer with scores; the rest
    # scroll, with no scroll bar in sight until the pointer is on the table.
    wide = len(systems) >= 6 or (ss.get("rank_scores") and len(systems) > 3)
    st.caption("Ranks per system (rank 1 is best, bold green; equal scores share the best rank of their tie, as "
               "word overlap gives every candidate with no shared word one rank). Spread: how far the models' ranks "
               "for a candidate lie apart; pale amber at 1, amber on the ranks too at 2 or more. Tick the box at a "
               "row's left to explain that candidate on the other pages."
               + (f" :material/swap_horiz: In a narrow window the table scrolls sideways to its last systems (up to "
                  f"{systems[-1]})." if wide else ""))
    st.toggle("Show scores", key="rank_scores", help="Add each system's score next to its rank.")
    # One table widget per input: a new input starts from the shared pick, never from a stale selection.
    table_key = f"rank_table_{request.digest}"
    st.dataframe(_style(_shown(frame, order), list(ranking.models)), key=table_key,
                 on_select=partial(_selected, table_key),
                 selection_mode="single-row", selection_default={"selection": {"rows": [pick]}},
                 column_config=config, column_order=order, hide_index=True, width="stretch",
                 height=min(38 + 35 * len(frame), 460))


SHOW_BASELINES = "rank_baselines"
"""The compact table's toggle, which the chart below it follows."""


def _compact_table(ranking: Ranking) -> None:
    """For a projector: ranks only, short model names, baselines behind a toggle, large type (an HTML table)."""
    baselines = st.toggle("Show the baselines", key=SHOW_BASELINES, help=glossary.help_for("baseline"))
    rows = compact_rows(ranking, with_baselines=baselines)
    frame = pd.DataFrame(rows)
    ranks = [components.md(c) for c in frame.columns if c not in ("#", "candidate", "correct")]
    # st.table reads every cell and header as Markdown: user text and names go through md() first.
    frame["candidate"] = frame["candidate"].map(components.md)
    frame.columns = [components.md(c) for c in frame.columns]
    styled = frame.style.apply(lambda column: ["font-weight: 700; color: #0b5d1e" if v == 1 else ""
                                               for v in column], subset=ranks)
    with st.container(key="rank_compact"):
        st.table(styled.hide(axis="index"))
    components.model_names_legend([*ranking.models, *(ranking.baselines if baselines else [])],
                                  key="rank_short_names")


frame, config, order = _table(ranking, bool(ss.get("rank_scores")))
if presenting:
    _compact_table(ranking)
    _summary()
else:
    _full_table(ranking, frame, config, order)

common.changes(ranking, key="rank_changes")

if ranking.models:  # the models' own tokens carry the unknown-word flags
    read = next(iter(ranking.models.values()))
    components.unknown_words({"question": read.question_tokens,
                              **{f"candidate #{i + 1}": read.answer_tokens(i) for i in range(count)}},
                             key="rank_unknown")

with st.container(border=True, key="rank_selected"):
    if presenting:  # the compact table takes no clicks: the candidate is chosen here
        pick = components.picker(components.candidate_options(ranking.candidates), state.PICK,
                                 key="rank_present_pick", label="Candidate to explain")
    st.markdown(f"**Explaining candidate #{pick + 1}:** {components.md(charts.short(ranking.candidates[pick], 160))}")
    links = st.columns(4)
    links[0].page_link("ui/screens/walkthrough.py", label="Walkthrough", icon=":material/footprint:")
    links[1].page_link("ui/screens/attention.py", label="Attention", icon=":material/visibility:")
    links[2].page_link("ui/screens/interactions.py", label="Interactions", icon=":material/grid_on:")
    links[3].page_link("ui/screens/pooled.py", label="Pooled cells", icon=":material/filter_list:")

if ranking.models:
    split_rows = score_split_rows(ranking, pick)
    silent = silent_features(split_rows)
    # A column of exact zeros took a projector's width and pushed the last features out of sight.
    split = pd.DataFrame(split_rows).drop(columns=silent)
    silent_labels = [glossary.SHORT_FEATURES.get(feature, feature) for feature in silent]
    keyword_models = int(split["keywords"].notna().sum())
    with st.expander(f"Keywords and learned match: candidate #{pick + 1}'s score, split",
                     icon=":material/call_split:", expanded=keyword_models > 0 and not presenting):
        st.caption("score = learned match (the network's own layers) + keywords (a learned weight times each keyword "
                   "feature: word overlap, IDF-weighted overlap, BM25 and, in models that have them, the answer-type "
                   "features, a number or a date asked and given, BM25 within the list and the echo feature; some "
                   "models match the words' stems, as their cards say), exactly; point at a column for its full name. "
                   + ("Models with an empty keywords cell have no keyword term: their whole score is learned match. "
                      if keyword_models < len(split) else "")
                   + (f"Left out, as they add exactly 0 for every model here: {', '.join(silent_labels)}."
                      if silent else ""),
                   help=glossary.help_for("keyword term", "answer-type features", "echoes the question",
                                          "BM25 within the list", "stems", "learned match"))
        if presenting:  # the page's projector type: the table the teaching guide points at read at 14 px
            short = split.rename(columns=lambda c: glossary.SHORT_FEATURES.get(c, c))
            components.small_table(short, key="rank_split", placeholder="",
                                   signed=[c for c in short.columns if c != "model"])
        else:
            st.dataframe(split, hide_index=True, width="stretch", key="rank_split", placeholder="",
                         column_config=components.fit_headers(split, {
                             c: st.column_config.NumberColumn(glossary.SHORT_FEATURES.get(c, c), format="%+.3f",
                                                              help=f"{c}: its weight x its value" if c in
                                                              glossary.SHORT_FEATURES else None)
                             for c in split.columns if c != "model"}))
        common.top_answer_note(ranking)

if count > 1:
    ranks = {**{n: r.ranks for n, r in ranking.models.items()}, **ranking.baseline_ranks}
    if presenting:  # as the compact table above shows them: short names, the baselines only when shown there
        ranks = {glossary.short_name(name): values for name, values in ranks.items()
                 if name in ranking.models or ss.get(SHOW_BASELINES)}
    components.chart("rank_shift_chart", ranks, ranking.candidates, pick, ranking.disagreement(), key="rank_shift")


def _exports(frame: pd.DataFrame) -> None:
    st.subheader("Export", divider="gray")
    exports = st.columns(2)
    with exports[0]:
        # Files are built when a button is clicked, not on every run of the page.
        components.download("Ranking (CSV)", lambda: rows_to_csv(frame.to_dict("records")),
                            "matchlens-ranking.csv", "text/csv", key="export_csv", icon=":material/download:")
    with exports[1]:
        components.download("Explanation of the selected candidate (JSON)",
                            lambda: json.dumps(ranking.explanation_export(pick), indent=1),
                            "matchlens-explanation.json", "application/json", key="export_json",
                            icon=":material/data_object:")


if not presenting:
    _exports(frame)
if ss.get(state.LINK_TOO_LONG):
    st.caption(":material/link_off: This input (or its choice of models) is too large to share as a link: the address "
               "bar holds the view only, "
               "and opens the default example elsewhere. "
               + ("Presentation mode off (sidebar), the exports below keep it whole." if presenting else
                  "The exports above keep it whole."))
else:
    st.caption(":material/link: The address bar holds this question and its candidates: copy it to share this view.")
