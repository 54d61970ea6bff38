"""Models: each checkpoint's card (architecture, hyperparameters, metrics beside baselines and the paper,
training curves), and the reason any checkpoint is disabled."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from matching.evaluation.metrics import METRICS
from matching.evaluation.paper_tables import SEEDS_COLUMN, PaperTable
from matching.explain import glossary
from matching.paths import paper_tables_files
from matching.text.datasets import BUILT_IN
from matching.training.cards import (
    KNOWN_LIMITS,
    PAPER_GROUP,
    ModelCard,
    attention_rows,
    attention_verdict,
    computed_with,
    data_name,
    default_models,
    default_set,
    description_parts,
    dev_role,
    keyword_rows,
    keyword_verdict,
    known_limits,
    metrics_rows,
    other_test_heading,
    other_test_rows,
    seed_line,
    significance_rows,
    typed_card,
)
from matching.training.reporting import by_test_set, model_row
from ui.views import common, components, state

st.title(":material/model_training: Models")
st.caption("One card per checkpoint in the models folder, read from its card.json. Each table and card names its "
           "test set: WikiQA, or TrecQA for the models trained with TRAIN-ALL. Ties are scored as the mean over "
           "their orders, and each test set was read once, after the model was chosen.")
_defaults, _why = default_set()
_opening = default_models(list(state.models()))
if _opening:
    st.caption(f":material/star: The Rank page opens with {components.md(', '.join(_opening))}.")
    if _why and set(_opening) <= set(_defaults):
        with st.expander("Why these models open the Rank page", icon=":material/help:", key="models_why"):
            st.markdown("\n".join(f"- {components.md(line)}" for line in _why))

loaded = state.models()
# The cards' own architecture texts name terms too: the popover explains those as well.
card_text = " ".join(f"{m.card.get('description', '')} {m.card.get('architecture', '')}" for m in loaded.values())
components.glossary(["MAP", "MRR", "P@1", "nDCG", "tie rule", "baseline", "rank", *glossary.FAMILY_TERM_NAMES,
                     "attention gate", "alpha",
                     "uniform weight 1/n", "Bi-LSTM", "k-max pooling", "MLP", "word vector", "truncated",
                     *glossary.mentioned_in(card_text + " ".join(KNOWN_LIMITS))], key="models_glossary")

errors = state.load_errors()
NUMBER_COLUMNS = ("test MAP", "dev MAP", "test MRR", "test P@1", "entropy", "top-weight ratio", "uniform-α MAP",
                  "permuted-α MAP", "paper MAP")
PROJECTOR_COLUMNS = ("model", "test MAP", "seeds: mean ± sd", "dev MAP", "test MRR", "test P@1", "paper MAP")
"""What "At a glance" shows on a projector: the columns that fit its width in its type (`model_row` has 15)."""

GROUP_TEXT = {PAPER_GROUP: "Configurations of the papers' models (each card names its paper and lists where the "
                           "training here differs).",
              "MatchLens variant": "Models with a MatchLens addition (sparse attention gates, an exact-match "
                                   "channel, a keyword term); each card lists every deviation from its paper."}
KEYWORD_GROUP_TEXT = ("The keyword models were trained on WikiQA + TrecQA (TRAIN, or TRAIN-ALL for those tested on "
                      "TrecQA): their dev MAP is over both dev sets.")
"""Said under a table that holds a keyword model (under a table of two WikiQA models it named models not there)."""


def typed_cards() -> dict[str, ModelCard | None]:
    return {name: typed_card(name, matcher.card) for name, matcher in loaded.items()}


def metrics_block(card: ModelCard, split: str, key: str, source: str | None = None) -> None:
    """The card's figures on one split beside the baselines, a table and a chart; `source`: on that other source's
    test split (`ModelCard.other_tests`) instead."""
    try:
        rows = metrics_rows(card, split) if source is None else other_test_rows(card, source)
    except (KeyError, TypeError):
        st.caption(f"No {split} metrics in this card.")
        return
    frame = pd.DataFrame(rows)
    numeric = [m for m in METRICS if m in frame.columns]
    frame[numeric] = frame[numeric].astype(float)
    config = {m: st.column_config.NumberColumn(m, format="%.4f") for m in numeric}
    config["system"] = st.column_config.TextColumn("system", width="medium")
    st.dataframe(frame, hide_index=True, width="stretch", key=f"{key}_table", column_config=config,
                 placeholder="-")
    if "MAP" in frame.columns:
        title = f"{split} MAP" if source is None else f"{BUILT_IN.get(source, source)} test MAP"
        components.chart("metrics_chart", rows, "MAP", title, key=f"{key}_chart")


def figures_table(rows: list[dict[str, object]], key: str) -> None:
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key=key, placeholder="-",
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                                for c in ("value", "MAP difference", "p-value")})


def _setting(value: object) -> str:
    """A card's setting as text; an unset one (None: no time limit, no factor) says so, not "None"."""
    return "not set" if value is None else str(value)


def card_view(name: str, card: ModelCard | None, key: str) -> None:
    if card is None:
        st.warning("This checkpoint has no readable model card (card.json); it still ranks.",
                   icon=":material/warning:")
        return
    lead, choices = description_parts(card.description)
    st.markdown(components.md(lead))
    if choices:
        with st.expander(f"How this recipe was chosen: {len(choices)} notes, each with its measurement",
                         icon=":material/history:", key=f"{key}_recipe"):
            st.markdown("\n".join(f"- {components.md(line)}" for line in choices))
    st.markdown(f"**{components.md(card.group)}.** **Architecture.** " + components.md(card.architecture))
    left, right = common.panels(2)
    with left:
        st.markdown(f"**Test: {components.md(data_name(card, 'test'))}** (read once, after selection; beside it the "
                    "paper's figure where its paper reports this data set)")
        metrics_block(card, "test", f"{key}_test")
    with right:
        st.markdown(f"**Dev** ({dev_role(card)})")
        metrics_block(card, "dev", f"{key}_dev")
    for number, source in enumerate(card.other_tests):
        st.markdown(f"**{components.md(other_test_heading(card, source))}**")
        metrics_block(card, "test", f"{key}_other_{number}", source=source)
    if card.seed_study:
        study = card.seed_study
        st.markdown(f"**Seed study.** Test MAP over seeds {study.seeds}: {seed_line(card)}; "
                    f"shipped seed {card.seed} ({study.selection})." + computed_with(study))
    figures = common.panels(2)
    with figures[0]:
        if card.significance:
            st.markdown("**Is the difference real?** Paired randomisation test on per-question test AP")
            figures_table(significance_rows(card), f"{key}_significance")
    with figures[1]:
        if card.attention:
            st.markdown("**Does the attention matter?** The same model, gate overridden on test")
            figures_table(attention_rows(card), f"{key}_attention")
            st.caption(components.md(attention_verdict(card)))
    if card.keywords:
        st.markdown("**Does the keyword term decide?** On each dev set, the whole score beside each of its two "
                    "parts alone")
        figures_table(keyword_rows(card), f"{key}_keywords")
        st.caption(components.md(keyword_verdict(card)))
    with st.expander("Known limits of this model", icon=":material/info:"):
        st.markdown("\n".join(f"- {components.md(line)}" for line in known_limits(card)))
    if card.deviations:
        with st.expander("Deviations from the paper", icon=":material/difference:"):
            for line in card.deviations:
                st.markdown(f"- {components.md(line)}")
    if card.log:
        st.markdown("**Training curves**")
        curves = common.panels(2)
        with curves[0]:
            components.chart("training_curves", card.log, name, key=f"{key}_loss", part=0)
        with curves[1]:
            components.chart("training_curves", card.log, name, key=f"{key}_devmap", part=1)
    params, training = common.panels(2)
    with params:
        st.markdown("**Hyperparameters**")
        st.dataframe(pd.DataFrame([{"parameter": k, "value": _setting(v)} for k, v in card.params.items()]),
                     hide_index=True, width="stretch", key=f"{key}_params")
    with training:
        st.markdown("**Training**")
        st.dataframe(pd.DataFrame([{"setting": k, "value": _setting(v)} for k, v in card.training.items()]),
                     hide_index=True, width="stretch", key=f"{key}_training")
    splits = ", ".join(f"{split}: {d.get('questions')} questions / {d.get('pairs')} pairs"
                       for split, d in card.data.items() if isinstance(d, dict))
    kept = ", ".join(map(str, card.kept_epochs)) or "?"
    st.caption(components.md(f"Data: {card.data.get('source', '?')} ({splits}). Seed {card.seed}, "
                             f"epoch(s) {kept} of {card.epochs_run} kept. "
                             f"Trained {card.date or '?'} with MatchLens {card.code_version or '?'}."))
    if card.command:
        st.code(card.command, language="bash")


cards = typed_cards()
if not loaded and not errors:
    st.info("The models folder has no checkpoints.", icon=":material/folder_off:")

if loaded:
    st.subheader("At a glance", divider="gray")
    tests = by_test_set(c for c in cards.values() if c)
    for (test, dev), groups in tests.items():
        for group, in_group in groups.items():
            text = GROUP_TEXT.get(group, "") + (f" {KEYWORD_GROUP_TEXT}" if any(c.keywords for c in in_group) else "")
            st.markdown(f"**{components.md(group)}**, test: {components.md(test)}, dev: {components.md(dev)}. "
                        f"{components.md(text)}")
            overview = pd.DataFrame([model_row(c) for c in in_group])
            if state.presenting():  # the page's projector type; the paired tests and attention figures off screen
                components.small_table(overview[list(PROJECTOR_COLUMNS)], key=f"models_overview_{test}_{dev}_{group}",
                                       formats={c: "%.4f" for c in PROJECTOR_COLUMNS if c in NUMBER_COLUMNS},
                                       placeholder="-")
                continue
            config = {c: st.column_config.NumberColumn(c, format="%.4f") for c in NUMBER_COLUMNS}
            config["model"] = st.column_config.TextColumn("model", pinned=True)  # in view while the columns scroll
            st.dataframe(overview, hide_index=True, width="stretch", key=f"models_overview_{test}_{dev}_{group}",
                         placeholder="-", column_config=components.fit_headers(overview, config))
    st.caption(f"Every test figure here (test MAP, MRR, P@1, seeds, ΔMAP, entropy, uniform-α / permuted-α MAP) is "
               f"on the test split its table names ({', '.join(dict.fromkeys(test for test, _ in tests))}); dev MAP on "
               "the dev split its table names (a combined dev of every source the model trained on). "
               "Seeds: test MAP over the configuration's seeds, n in brackets. Dev MAP: - for a model fitted on "
               "train + dev (its dev figure is a training figure). ΔMAP (p): paired randomisation test on "
               "per-question AP. Entropy: mean H(alpha)/log n on test (1 = flat). Uniform-α / permuted-α MAP: "
               "the same model with alpha replaced at inference; if they match its own MAP, the bars carry "
               "little of the score."
               + (" On a projector these tables leave out the paired tests (ΔMAP), the attention figures and the "
                  "training time: the same link without presentation mode shows them." if state.presenting() else ""))

# The models the Rank page opens with first: their cards are the ones a visitor asks about (36 tabs, in name order,
# put them out of sight in a strip that scrolls sideways).
loaded = {name: loaded[name] for name in sorted(
    loaded, key=lambda name: _opening.index(name) if name in _opening else len(_opening))}
labels = ([f":material/check_circle: {components.md(name)}" for name in loaded]
          + [f":material/block: {components.md(name)}" for name in errors])
if labels:
    # Lazy tabs: only the open model's card is drawn (its charts and tables were most of the page's cost).
    tabs = st.tabs(labels, key="models_tabs", on_change="rerun")
    for tab, name in zip(tabs[: len(loaded)], loaded, strict=True):
        if tab.open is False:
            continue
        with tab:
            card_view(name, cards[name], key=f"models_{name}")
    for tab, name in zip(tabs[len(loaded):], errors, strict=True):  # one line each: always drawn
        with tab:
            st.error(f"**{components.md(name)} is disabled.** {components.md(errors[name])}", icon=":material/block:")
            st.caption("The other models keep working. Replace or remove this checkpoint folder and restart the app.")

def paper_tables() -> None:
    """Each paper's table, row by row, beside the checkpoints that stand for its rows (written by a command)."""
    st.subheader("Paper tables", divider="gray")
    paths = paper_tables_files()
    if not paths:
        st.info("No paper table with these models: `python -m matching paper-tables --data <WikiQA folder>` writes "
                "one.", icon=":material/table_view:")
        return
    for index, path in enumerate(paths):
        paper_table_view(path, key=f"models_paper_{index}")


def paper_table_view(path: Path, key: str) -> None:
    """One paper's table beside ours, its verdicts and its CSV export; a clear message if it cannot be read."""
    try:
        table = PaperTable.read(path)
    except (OSError, ValueError, KeyError) as error:
        st.warning(f"The paper table {components.md(path.name)} could not be read: {components.md(str(error))}",
                   icon=":material/warning:")
        return
    reference = table.reference
    st.markdown(f"**{components.md(reference.table)}**")
    st.caption(f"{components.md(reference.source)}. Beside each row: the shipped checkpoint for that setting on "
               f"{components.md(reference.test)}, its test MAP over seeds (mean ± sd, n seeds) and, where the "
               "paper compares settings, its paired test against its row's Original. Written by `python -m matching "
               "paper-tables` from the cards and one reading of the test split; never typed in.")
    frame = table.frame()
    # MAP and its comparison first, beside the row's name (pinned): they are what the caption and the verdicts
    # below speak of, and in the paper's column order they were the last ones, out of sight even at 1440 pixels.
    first = [c for c in ("row", "setting", "model", "paper MAP", "ours MAP", SEEDS_COLUMN, "vs Original: ΔMAP",
                         "vs Original: p") if c in frame.columns]
    config: dict[str, object] = {c: st.column_config.NumberColumn(c, format="%.4f") for c in frame.columns
                                 if c.startswith(("paper ", "ours ")) and c != SEEDS_COLUMN}
    # As every ΔMAP and p of the app reads: signed, and four decimals (0.003 beside 0.0142 read as less precise).
    for column, form in (("vs Original: ΔMAP", "%+.4f"), ("vs Original: p", "%.4f")):
        if column in frame.columns:
            config[column] = st.column_config.NumberColumn(column, format=form)
    config["row"] = st.column_config.TextColumn("row", pinned=True)
    if state.presenting():  # the MAP columns alone, in the page's type (ten columns scrolled sideways at 1280)
        shown = [c for c in ("row", "setting", "model", "paper MAP", "ours MAP", SEEDS_COLUMN) if c in frame.columns]
        components.small_table(frame[shown], key=f"{key}_table", placeholder="-",
                               formats={c: "%.4f" for c in shown if c.startswith(("paper ", "ours "))
                                        and c != SEEDS_COLUMN})
        st.caption("On a projector this table shows MAP alone: the same link without presentation mode adds MRR "
                   "and each setting's paired test.")
    else:
        # Every row in view: ours stand at the bottom of a paper's table, below the ten rows a frame shows by default.
        st.dataframe(frame, hide_index=True, width="stretch", height="content", key=f"{key}_table", placeholder="-",
                     column_order=first + [c for c in frame.columns if c not in first], column_config=config)
    if table.verdicts:
        st.markdown("**Does omega on the question, (Q), beat the Original here?**")
        for line in table.verdicts:
            st.markdown(f"- {components.md(line)}")
    if reference.missing:
        st.caption(f":material/info: {components.md(reference.missing)}")
    components.download("Paper table (CSV)", lambda: frame.to_csv(index=False), f"matchlens-{path.stem}.csv",
                        "text/csv", key=f"{key}_csv", icon=":material/download:")

paper_tables()
