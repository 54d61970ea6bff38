"""Reusable view functions (spacy-streamlit style): each takes plain data and a `key`, and draws.

Rules kept here for every page:
- user text is shown as text: in tables and charts as data, in Markdown only through
  `md()` (every ASCII punctuation character backslash-escaped), and in HTML only
  through `shaded_html()` (matching/explain/display.py), which passes every piece of user text
  through html.escape;
- icons are Material icons, never emoji.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from matching.explain import charts
from matching.explain import glossary as terms
from matching.explain.charts import short
from matching.explain.counterfactual import Comparison
from matching.explain.display import shaded_html  # built in the package, so a notebook shades words as the app does
from matching.text.tokens import Token
from ui.views.state import PRESENT

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")


_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<=\bwww)(?=\.)|(?=@)")
"""Where Markdown would turn bare text into a link (before '://', after 'www', before '@' of an
e-mail address): a word joiner (U+2060, invisible) goes there, since escaping the punctuation does
not stop it."""


def md(text: str) -> str:
    """User text made inert for st.markdown/st.caption: no links, images, HTML, colours or maths."""
    return _MD_SPECIAL.sub(r"\\\1", _AUTOLINK.sub("\u2060", " ".join(text.split())))


# ---------------------------------------------------------------- shaded text (the only HTML)

def shaded_text(text: str, tokens: Sequence[Token], weights: np.ndarray | None, label: str, key: str) -> None:
    with st.container(key=key, border=True):
        st.html(shaded_html(text, tokens, weights, label))


# ---------------------------------------------------------------- small building blocks

def notes(messages: Sequence[str], key: str, compact: bool = False) -> None:
    """Input problems that did not stop the ranking (left-out lines, the cap, markup, copies): one box, a note a line;
    `compact` (a projector), folded under one line, since three notes in the projector's type took 40% of a 720p
    screen above every page and every walkthrough step."""
    if not messages:
        return
    text = md(messages[0]) if len(messages) == 1 else "\n".join(f"- {md(message)}" for message in messages)
    with st.container(key=key):
        if compact:
            with st.expander(f"{len(messages)} note{'s' if len(messages) > 1 else ''} on this input",
                             icon=":material/warning:"):
                st.markdown(text)
        else:
            st.warning(text, icon=":material/warning:")


HEADER_PX_PER_CHAR = 7
HEADER_PADDING_PX = 24
"""A header's width: the grid's header font (Source Sans, 600, 14 px) measured in Chromium is 6.9 px a
character on the app's labels (a 16-character model name 110 px, 'rank (before → now)' 118), and the cell padding
16 px; at 8 px and 28 the Rank table's three default models and three baselines overflowed a 1440 px window."""


TEXT_CHARS_SHOWN = 40
"""A text column is made wide enough for this many characters of its longest cell, at most."""


def fit_headers(frame: pd.DataFrame, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`config` with a width for every column of `frame` that has none: wide enough for its whole header,
    and a text column for its longest cell too (up to TEXT_CHARS_SHOWN characters). Streamlit sizes a column
    to its cells only, so a long header over short numbers was cut ('mcan ra...')."""
    fitted: dict[str, Any] = dict(config or {})
    for column in frame.columns:
        entry = fitted.get(column, column)
        if entry is None:  # a hidden column
            continue
        entry = dict(entry) if isinstance(entry, Mapping) else {"label": entry}
        if entry.get("width") is None:
            chars = len(str(entry.get("label") or column))
            if not pd.api.types.is_numeric_dtype(frame[column]) and len(frame):
                chars = max(chars, min(TEXT_CHARS_SHOWN, max(len(str(value)) for value in frame[column])))
            entry["width"] = HEADER_PADDING_PX + HEADER_PX_PER_CHAR * chars
        fitted[column] = entry
    return fitted


def without_undefined_columns(frame: pd.DataFrame, caption: str = "not defined here: {}.") -> pd.DataFrame:
    """`frame` without the columns that are missing in every row, named in a caption instead (`caption` with
    `{}` for their names): a column of "not defined" cells took a table's width and pushed its last, defined
    columns out of sight (Sanity's attention columns for a model without attention)."""
    empty = [column for column in frame.columns if frame[column].isna().all()]
    if empty and len(frame):
        st.caption(caption.format(", ".join(empty)))
        return frame.drop(columns=empty)
    return frame


def signed_columns(frame: pd.DataFrame, columns: Sequence[str], digits: int = 4, missing: str = "") -> Any:
    """`frame` to draw with `columns` shown signed to `digits` decimals, a value that rounds to zero as +0.0000,
    never -0.0000 (`glossary.signed`; a -0.00001 is no push down), a missing one as `missing` (the table's
    placeholder does not reach a cell the style draws). Only what is drawn changes: the data, and so every exact
    sum over it, stays as it was (rounded data missed a gap by 0.0002 over 40 rows). Give these columns no
    `format` in their column config: the config's format draws the data."""
    def cell(value: object) -> str:
        return missing if value is None or pd.isna(value) else terms.signed(float(value), digits)  # type: ignore[arg-type]

    return frame.style.format({column: cell for column in columns if column in frame.columns})


def unknown_words(tokens_by_text: Mapping[str, Sequence[Token]], key: str) -> None:
    """List the words no model knows (GloVe has no vector for them)."""
    found = {where: [t.text for t in tokens if t.unknown] for where, tokens in tokens_by_text.items()}
    found = {where: words for where, words in found.items() if words}
    if not found:
        return
    with st.expander(f"Unknown words in {len(found)} text(s): the models see one shared vector for them",
                     icon=":material/help:", key=key):
        frame = pd.DataFrame([{"text": where, "unknown words": ", ".join(dict.fromkeys(words))}
                              for where, words in found.items()])
        st.dataframe(frame, hide_index=True, width="stretch")


CHART_FRAME = {"padding": {"left": 8, "top": 8, "right": 16, "bottom": 8},
               "autosize": {"type": "fit-x", "contains": "padding"}}
"""Every chart fits the width and keeps its outermost texts inside the drawing."""
FULL_CONTRAST = "#000"
LARGE_CONFIG = {"axis": {"labelFontSize": 17, "titleFontSize": 18, "labelColor": FULL_CONTRAST,
                         "titleColor": FULL_CONTRAST},
                "legend": {"labelFontSize": 17, "titleFontSize": 17, "symbolSize": 160, "labelColor": FULL_CONTRAST,
                           "titleColor": FULL_CONTRAST},
                "title": {"fontSize": 22, "subtitleFontSize": 18, "color": FULL_CONTRAST,
                          "subtitleColor": FULL_CONTRAST}}
"""Presentation mode's chart text: larger, and black (the theme's grey, #808495, is 3.6:1 on white: faint on a
projector, where the axis labels are the question's and the answer's words)."""


def _finished_spec(spec: dict[str, Any], large: bool) -> dict[str, Any]:
    """A plain Vega-Lite spec finished as `_finished` finishes an altair chart."""
    return {**spec, **CHART_FRAME, **({"config": LARGE_CONFIG} if large else {})}


def _finished(chart: alt.TopLevelMixin, large: bool) -> alt.TopLevelMixin:
    chart = chart.properties(**CHART_FRAME)
    return chart.configure(**LARGE_CONFIG) if large else chart


def altair(chart: alt.TopLevelMixin | dict[str, Any], key: str) -> None:
    """An altair chart with its actions menu (PNG/SVG download) kept.

    The chart fits the width and takes the height its plot, title, axes and legend need
    (autosize fit-x), so no text is squeezed or cut; a little padding keeps the outermost
    title, axis title and tick label inside the drawing. In presentation mode every chart
    text is drawn larger.
    """
    if isinstance(chart, dict):  # a plain Vega-Lite spec (see charts.Spec)
        st.vega_lite_chart(spec=_finished_spec(chart, _presenting()), key=key, width="stretch")
        return
    st.altair_chart(_finished(chart, _presenting()), key=key, width="stretch")


@st.cache_data(max_entries=2048, ttl=3600, show_spinner=False)
def _chart_specs(builder: str, large: bool, *args: Any) -> list[dict[str, Any]]:
    """The Vega-Lite specs of `charts.<builder>(*args)` (one per chart it returns), finished as
    `altair` finishes a chart.

    Building and validating an altair chart costs far more than drawing its spec, and the
    spec depends only on the input: it is built once per input and shared by every session.
    """
    built = getattr(charts, builder)(*args)
    if isinstance(built, dict):  # already plain data
        return [_finished_spec(built, large)]
    # No JSON-schema validation on every new input (a third of the cost): the builders are
    # fixed code, and tests/test_charts_specs.py validates each one's output.
    with alt.theme.enable("none"):  # as st.altair_chart does: no default view size
        return [_finished(chart, large).to_dict(validate=False)
                for chart in (built if isinstance(built, tuple) else (built,))]


def chart(builder: str, *args: Any, key: str, part: int = 0) -> None:
    """Draw `charts.<builder>(*args)` (its chart number `part` when it returns several) as `altair`
    would, from the spec cached across sessions."""
    st.vega_lite_chart(spec=_chart_specs(builder, _presenting(), *args)[part], key=key, width="stretch")


def plotly(figure: go.Figure, key: str) -> None:
    """A plotly figure with its modebar (PNG download) kept; larger text in presentation mode."""
    if _presenting():
        figure = go.Figure(figure)
        figure.update_layout(font={"size": 16, "color": FULL_CONTRAST}, title_font={"size": 22, "color": FULL_CONTRAST})
        figure.update_xaxes(tickfont={"size": 15, "color": FULL_CONTRAST})
        figure.update_yaxes(tickfont={"size": 17, "color": FULL_CONTRAST})
        figure.update_traces(colorbar={"tickfont": {"size": 15, "color": FULL_CONTRAST}}, selector={"type": "heatmap"})
        # The pooled cells' numbers: one model fills the width on a projector, so its cells are wider than the
        # side-by-side sizes these labels were chosen for.
        figure.for_each_annotation(lambda label: label.update(font_size=(label.font.size or 12) + 3))
    st.plotly_chart(figure, key=key, width="stretch",
                    config={"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}})


def _presenting() -> bool:
    return bool(st.session_state.get(PRESENT))


def picker(options: Sequence[str], state_key: str, key: str, label: str, help: str | None = None,
           on_pick: Callable[[int], None] | None = None) -> int:
    """A selectbox over `options` (plain text) kept in sync with the integer in st.session_state[state_key]."""
    current = int(st.session_state.get(state_key, 0) or 0)
    current = current if 0 <= current < len(options) else 0
    st.session_state[key] = current

    def changed() -> None:
        st.session_state[state_key] = int(st.session_state[key])
        if on_pick:
            on_pick(int(st.session_state[key]))

    return int(st.selectbox(label, range(len(options)), format_func=lambda i: options[i], key=key,
                            on_change=changed, help=help))


def candidate_options(candidates: Sequence[str], ranks: Mapping[str, Sequence[int]] | None = None) -> list[str]:
    labels = []
    for index, text in enumerate(candidates):
        rank_text = ""
        if ranks:
            rank_text = "  [ranks " + " ".join(str(int(r[index])) for r in ranks.values()) + "]"
        labels.append(f"#{index + 1}  {short(text, 90)}{rank_text}")
    return labels


def model_status(loaded: Sequence[str], errors: Mapping[str, str], key: str) -> None:
    """Which models are on, and why the others are off (shown in the sidebar)."""
    with st.container(key=key):
        st.caption(f":material/model_training: {len(loaded)} model(s) loaded"
                   + (f", {len(errors)} disabled" if errors else ""))
        for folder, reason in errors.items():
            st.error(f"**{md(folder)}** is disabled: {md(reason)}", icon=":material/block:")


def comparison_view(comparison: Comparison | None, key: str, selected: int | None = None, pinned: bool = False,
                    on_pin: Callable[[], None] | None = None, on_unpin: Callable[[], None] | None = None) -> None:
    """What changed since the starting point: the words, and every model's old and new rank ('4 → 3').

    The starting point is the input before the last edit (shown for counterfactual-sized edits only)
    or, when `pinned`, an input the person pinned (always shown). With `selected`, one row per model
    for that candidate; else one row per candidate and one column per model.
    """
    if comparison is not None and comparison.changed and not (comparison.small or pinned):
        # Said, not left out unsaid: the edit box promises that the changes are listed.
        st.caption(":material/compare_arrows: The last edit changed more than a counterfactual's few words (up to 8 "
                   "words, 2 candidates added or removed), so no before and after is listed for it.")
        return
    if comparison is None or not comparison.changed:
        if pinned and on_unpin is not None:
            with st.container(key=key, horizontal=True, vertical_alignment="center"):
                st.caption(":material/keep: A starting point is pinned: edits will be compared with it.")
                st.button("Unpin", key=f"{key}_unpin", on_click=on_unpin, icon=":material/keep_off:")
        return
    with st.container(border=True, key=key):
        head = st.columns([4, 1], vertical_alignment="center")
        title = "Since your pinned starting point" if pinned else "Since your last edit"
        head[0].markdown(f"**:material/compare_arrows: {title}**")
        if pinned and on_unpin is not None:
            head[1].button("Unpin", key=f"{key}_unpin", on_click=on_unpin, icon=":material/keep_off:",
                           help="Compare with the input before the last edit again.", width="stretch")
        elif not pinned and on_pin is not None:
            head[1].button("Pin this start", key=f"{key}_pin", on_click=on_pin, icon=":material/keep:",
                           help="Keep comparing every later edit with the input before this edit.",
                           width="stretch")
        if comparison.changes:
            st.caption(" · ".join(md(change.describe()) for change in comparison.changes[:8])
                       + (" · …" if len(comparison.changes) > 8 else ""))
        if comparison.added or comparison.removed:
            st.caption(f"{comparison.added} candidate(s) added, {comparison.removed} removed; "
                       "the others are compared by their text.")
        if not comparison.rows or not comparison.models:
            return
        moved = ", ".join(f"{m}: {comparison.moved(m)}" for m in comparison.models)
        st.caption(f"Candidates that changed rank, per model: {moved}. Ranks read 'before → now'.")
        if selected is not None:
            row = next((r for r in comparison.rows if r["#"] == selected + 1), None)
            if row is None:
                return
            frame = pd.DataFrame([{"model": m, "rank": row[f"{m} rank"], "score change": row[f"{m} score change"]}
                                  for m in comparison.models])
            st.dataframe(frame, hide_index=True, width="stretch", key=f"{key}_table", column_config={
                "rank": st.column_config.TextColumn("rank (before → now)"),
                "score change": st.column_config.NumberColumn("score change", format="%+.4f")})
            return
        frame = pd.DataFrame([{"#": r["#"], **{m: f"{r[f'{m} rank']}  ({float(r[f'{m} score change']):+.3f})"  # type: ignore[arg-type]
                                                for m in comparison.models}} for r in comparison.rows])
        st.dataframe(frame, hide_index=True, width="stretch", key=f"{key}_table", column_config={
            "#": st.column_config.NumberColumn("#", width="small"),
            **{m: st.column_config.TextColumn(m, help=f"{m}: rank before → now (score change)")
               for m in comparison.models}})


def download(label: str, data: str | bytes | Callable[[], str | bytes], file_name: str, mime: str, key: str,
             icon: str) -> None:
    """A download button; pass `data` as a function to build the file only when it is clicked."""
    st.download_button(label, data=data, file_name=file_name, mime=mime, key=key, icon=icon,
                       on_click="ignore")



# ---------------------------------------------------------------- teaching: glossary and presentation mode

def glossary(names: Sequence[str], key: str, label: str = "Terms on this page") -> None:
    """A popover explaining each named term in one plain line (the text lives in `matching.explain.glossary`)."""
    with st.popover(label, icon=":material/menu_book:", key=key):
        for entry in terms.entries(names):
            st.markdown(f"**{entry.name}**: {entry.plain}")


def model_names_legend(models: Sequence[str], key: str) -> None:
    """What each short model name in a compact table stands for."""
    pairs = [f"**{terms.short_name(m)}** = {md(m)}" for m in models if terms.short_name(m) != m]
    if pairs:
        with st.container(key=key):
            st.caption("Short names: " + " · ".join(pairs))


def small_table(frame: pd.DataFrame, key: str, formats: Mapping[str, str] | None = None, height: int | None = None,
                placeholder: str | None = None, signed: Sequence[str] = ()) -> None:
    """A short table: an interactive dataframe, or on a projector an HTML table in the page's large type (a dataframe
    draws its cells on a canvas, in its own small type, whatever the page's). `formats`: a printf format per number
    column ("%.4f"), for both; `signed`: columns drawn signed to four decimals, never -0.0000 (`signed_columns`)."""
    formats = dict(formats or {})
    if _presenting():
        def cell(column: str, value: Any) -> str:
            if column in signed or column in formats:
                if pd.isna(value):
                    return md(placeholder or "")  # "-" alone is a Markdown list: an empty bullet in the cell
                return terms.signed(float(value), 4) if column in signed else formats[column] % value
            return "" if value is None else md(str(value))  # st.table reads every cell as Markdown: user words too

        shown = frame.reset_index(drop=True)  # st.table draws an index other than 0, 1, ... as a column, hidden or not
        for column in shown.columns:
            shown[column] = [cell(column, value) for value in shown[column]]
        shown.columns = [md(str(c)) for c in shown.columns]
        with st.container(key=f"{key}_large"):
            st.table(shown.style.hide(axis="index"))
        return
    config = {c: st.column_config.NumberColumn(c, format=f) for c, f in formats.items() if c in frame.columns}
    st.dataframe(signed_columns(frame, signed) if signed else frame, hide_index=True, width="stretch", key=key,
                 column_config=config,
                 **({} if height is None else {"height": height}), **({} if placeholder is None else
                                                                      {"placeholder": placeholder}))


PRESENTATION_CSS = """
<style>
/* Presentation mode: projector-sized type, full-contrast text, no decoration that competes. */
html { font-size: 22px; }
[data-testid="stAppViewContainer"], [data-testid="stMain"] { color: #000; background: #fff; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1rem; color: #000; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 1rem; color: #111;
  opacity: 1; }
[data-testid="stWidgetLabel"] p { font-size: 1rem; color: #000; }
[data-testid="stTable"] table { font-size: 1rem; }
[data-testid="stTable"] th, [data-testid="stTable"] td { padding: .25rem .5rem; color: #000;
  border-color: #555; }
[data-testid="stTable"] th, [data-testid="stTable"] th * { white-space: nowrap !important; }
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; padding-left: 1.2rem; padding-right: 1.2rem; }
h1 { font-size: 2rem !important; }
a { text-decoration: underline; }
/* The app's own page links (app.py), in the header bar where Streamlit's top bar was: one row, scrolled sideways on
   a screen too narrow for it rather than laid over the page. */
.st-key-present_nav { position: fixed; top: .8rem; left: 3rem; width: auto !important; max-width: calc(100vw - 3.6rem);
  z-index: 999991; flex-wrap: nowrap; gap: .1rem; overflow-x: auto; }
.st-key-present_nav a { text-decoration: none; padding: .1rem .25rem; }
.st-key-present_nav a p, .st-key-present_nav a span { font-size: .75rem; white-space: nowrap; }
@media (max-width: 1200px) { .st-key-present_nav a > span:has([data-testid="stIconMaterial"]) { display: none; } }
</style>
"""


def presentation_style() -> None:
    """Large type and high contrast for a projector (fixed CSS, no user text)."""
    st.html(PRESENTATION_CSS)
