"""Models: each checkpoint's card (architecture, hyperparameters, metrics beside baselines and the paper,
training curves), and the reason any checkpoint is disabled."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from matching import glossary
from matching.cards import KNOWN_LIMITS, metrics_rows
from matching.metrics import METRICS
from pages.views import common, components, state

st.title(":material/model_training: Models")
st.caption("One card per checkpoint in the models folder, read from its card.json. Metrics are on WikiQA "
           "(ties scored as the mean over tie orders); the test split was read once, after model selection.")

loaded = state.models()
# The cards' own architecture texts name terms too: the popover explains those as well.
card_text = " ".join(f"{m.card.get('description', '')} {m.card.get('architecture', '')}" for m in loaded.values())
components.glossary(["MAP", "MRR", "P@1", "nDCG", "tie rule", "baseline", "MV-LSTM", "attention gate",
                     "Bi-LSTM", "k-max pooling", "MLP", "word vector", "truncated",
                     *glossary.mentioned_in(card_text + " ".join(KNOWN_LIMITS))], key="models_glossary")

errors = state.load_errors()


def overview(cards: dict[str, dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for name, card in cards.items():
        test, dev = card.get("metrics", {}).get("test", {}), card.get("metrics", {}).get("dev", {})
        paper = card.get("paper") or {}
        rows.append({"model": name, "test MAP": test.get("MAP"), "test MRR": test.get("MRR"),
                     "test P@1": test.get("P@1"), "dev MAP": dev.get("MAP"), "paper MAP": paper.get("MAP"),
                     "epochs": card.get("epochs_run"), "seed": card.get("seed")})
    return pd.DataFrame(rows)


def metrics_block(card: dict[str, Any], split: str, key: str) -> None:
    try:
        rows = metrics_rows(card, split)
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
        components.chart("metrics_chart", rows, "MAP", f"{split} MAP", key=f"{key}_chart")


def card_view(name: str, card: dict[str, Any], key: str) -> None:
    if not card:
        st.warning("This checkpoint has no model card (card.json); it still ranks.", icon=":material/warning:")
        return
    st.markdown(components.md(str(card.get("description", ""))))
    st.markdown("**Architecture.** " + components.md(str(card.get("architecture", ""))))
    left, right = common.panels(2)
    with left:
        st.markdown("**Test** (the paper's figure for comparison)")
        metrics_block(card, "test", f"{key}_test")
    with right:
        st.markdown("**Dev** (used for early stopping and seed selection)")
        metrics_block(card, "dev", f"{key}_dev")
    if card.get("log"):
        st.markdown("**Training curves**")
        curves = common.panels(2)
        with curves[0]:
            components.chart("training_curves", card["log"], name, key=f"{key}_loss", part=0)
        with curves[1]:
            components.chart("training_curves", card["log"], name, key=f"{key}_devmap", part=1)
    study = card.get("seed_study")
    if study:
        st.markdown(f"**Seed study.** Test MAP over seeds {study.get('seeds')}: mean {study.get('mean', 0):.4f} "
                    f"± {study.get('std', 0):.4f} (std); shipped seed {card.get('seed')} (best dev MAP).")
    params, training = common.panels(2)
    with params:
        st.markdown("**Hyperparameters**")
        st.dataframe(pd.DataFrame([{"parameter": k, "value": str(v)} for k, v in card.get("params", {}).items()]),
                     hide_index=True, width="stretch", key=f"{key}_params")
    with training:
        st.markdown("**Training**")
        st.dataframe(pd.DataFrame([{"setting": k, "value": str(v)} for k, v in card.get("training", {}).items()]),
                     hide_index=True, width="stretch", key=f"{key}_training")
    data = card.get("data", {})
    splits = ", ".join(f"{split}: {d.get('questions')} questions / {d.get('pairs')} pairs"
                       for split, d in data.items() if isinstance(d, dict))
    st.caption(components.md(f"Data: {data.get('source', '?')} ({splits}). Seed {card.get('seed')}, "
                             f"epoch {card.get('best_epoch')} of {card.get('epochs_run')} kept. "
                             f"Trained {card.get('date', '?')} with MatchLens {card.get('code_version', '?')}."))
    if card.get("command"):
        st.code(str(card["command"]), language="bash")


if not loaded and not errors:
    st.info("The models folder has no checkpoints.", icon=":material/folder_off:")

if loaded:
    cards = {name: matcher.card for name, matcher in loaded.items()}
    st.subheader("At a glance", divider="gray")
    st.dataframe(overview(cards), hide_index=True, width="stretch", key="models_overview", placeholder="-",
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                                for c in ("test MAP", "test MRR", "test P@1", "dev MAP", "paper MAP")})

labels = ([f":material/check_circle: {components.md(name)}" for name in loaded]
          + [f":material/block: {components.md(name)}" for name in errors])
if labels:
    # Lazy tabs: only the open model's card is drawn (its charts and tables were most of the page's cost).
    tabs = st.tabs(labels, key="models_tabs", on_change="rerun")
    for tab, name in zip(tabs[: len(loaded)], loaded, strict=True):
        if tab.open is False:
            continue
        with tab:
            card_view(name, loaded[name].card, key=f"models_{name}")
    for tab, name in zip(tabs[len(loaded):], errors, strict=True):  # one line each: always drawn
        with tab:
            st.error(f"**{components.md(name)} is disabled.** {components.md(errors[name])}", icon=":material/block:")
            st.caption("The other models keep working. Replace or remove this checkpoint folder and restart the app.")

with st.expander("Known limits of these models", icon=":material/info:"):
    for line in KNOWN_LIMITS:
        st.markdown(f"- {components.md(line)}")
