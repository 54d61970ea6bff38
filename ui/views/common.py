"""Pieces shared by the explanation pages (Attention, Interactions, Pooled cells).

Each page needs the same three things: the current ranking (or a clear note on why
there is none), the candidate being explained, and a place to edit the input and see
what the edit changed. They combine `state` (data) with `components` (drawing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from matching.explain.ranking import Ranking, keyword_decisions
from matching.explain.trust import candidate_warning, trust_warning
from matching.models.parts import Part
from matching.text.data import RankingList, content_key, parse_ranking_file
from matching.text.datasets import (
    DATA_VARIABLE,
    built_in_splits,
    data_root,
    link_name,
    sample_file,
    shipped_collections,
)
from matching.text.inputs import join_candidates
from ui.views import components, state
from ui.views.session import DATA_SET

ss = st.session_state


def ranking_or_note(truncation: bool = True) -> tuple[Ranking, int] | None:
    """The current ranking and the picked candidate, or None after telling the reader why not. `truncation`:
    say which texts are longer than the models read (the walkthrough says it at its words step instead)."""
    current = state.current()
    components.notes(current.request.parsed.notes, key="page_notes", compact=state.presenting())
    if current.problem or current.ranking is None:
        st.info(components.md(current.problem or "Nothing to explain yet."), icon=":material/edit_note:")
        st.page_link("ui/screens/rank.py", label="Enter a question and candidates on the Rank page",
                     icon=":material/format_list_numbered:")
        return None
    ranking = current.ranking
    trust_note = trust_warning(ranking)
    if trust_note:
        st.warning(trust_note, icon=":material/help:")
    for message in ranking.truncation_notes() if truncation else []:  # on every page that explains, as on Rank
        st.warning(message, icon=":material/content_cut:")
    return ranking, state.pick_index(len(ranking.candidates))


def candidate_picker(ranking: Ranking, key: str) -> int:
    """Choose the candidate to explain (shared with every page through the session state)."""
    ranks = {name: result.ranks for name, result in ranking.models.items()}
    options = components.candidate_options(ranking.candidates, ranks)
    help_text = "Ranks in brackets: " + ", ".join(ranks) if ranks else None
    return components.picker(options, state.PICK, key=key, label="Candidate to explain", help=help_text)


def apply_edit(question: str | None, index: int, candidate: str, request: state.Request | None = None) -> None:
    """A counterfactual edit: a new question (None keeps it) and a new text for candidate `index`.

    The candidate's own line is replaced, so blank lines and the other candidates stay as typed.
    """
    request = request or state.current_request()
    lines = ss[state.CANDIDATES].splitlines()
    number = request.parsed.lines[index] - 1
    if 0 <= number < len(lines):
        lines[number] = join_candidates([candidate])
    state.set_inputs(question=question, candidates="\n".join(lines))


def edit_sidebar(ranking: Ranking, pick: int, key: str) -> None:
    """Counterfactual editing from any explanation page: change a word, see everything update."""
    request = state.current_request()
    candidate = ranking.candidates[pick]
    ss[f"{key}_question"] = ss[state.QUESTION]
    ss[f"{key}_candidate"] = candidate

    def question_changed() -> None:
        state.set_inputs(question=ss[f"{key}_question"])

    def candidate_changed() -> None:
        apply_edit(None, pick, ss[f"{key}_candidate"], request)

    with st.sidebar, st.container(border=True, key=f"{key}_box"):
        st.markdown("**:material/edit: Counterfactual edit**")
        st.caption("Change a word, then press Enter in the question or Ctrl+Enter in the candidate (or click "
                   "outside the box): ranks, attention and pooled cells update, and an edit of a few words is listed "
                   "with every model's rank before and after.")
        st.text_input("Question", key=f"{key}_question", on_change=question_changed)
        st.text_area(f"Candidate #{pick + 1}", key=f"{key}_candidate", on_change=candidate_changed, height=110,
                     help="Ctrl+Enter to apply.")


def changes(ranking: Ranking, key: str, selected: int | None = None) -> None:
    """What changed since the starting point (the input before the last edit, or a pinned one)."""
    start = state.before_snapshot()
    components.comparison_view(state.before_comparison(ranking), key=key, selected=selected, pinned=state.pinned(),
                               on_pin=lambda: state.pin(start), on_unpin=state.unpin)


def changes_for_pick(ranking: Ranking, pick: int, key: str) -> None:
    """Rank/score change of the explained candidate since the starting point (nothing when there was no edit)."""
    changes(ranking, key=key, selected=pick)


def explained_candidate(page: str) -> tuple[Ranking, int] | None:
    """The storyboard head of every explanation page: ranking, edit box, picker, changes.

    Returns (ranking, picked candidate), or None when there is nothing to explain or no
    model is chosen (the reader has been told why). Widget keys are prefixed with `page`.
    """
    found = ranking_or_note()
    if found is None:
        return None
    ranking, pick = found
    if not state.presenting():  # presentation mode shows no editing controls
        edit_sidebar(ranking, pick, key=f"{page}_edit")
    pick = candidate_picker(ranking, key=f"{page}_pick")
    note = candidate_warning(ranking, [pick])
    if note:
        st.warning(note, icon=":material/help:")
    changes_for_pick(ranking, pick, key=f"{page}_changes")
    if not ranking.models:
        st.info("No model chosen: choose models on the Rank page.", icon=":material/info:")
        return None
    top_answer_note(ranking, decided_only=True)
    return ranking, pick


def top_answer_note(ranking: Ranking, decided_only: bool = False) -> None:
    """Whether each keyword model's keyword term changed its top answer here (`ranking.keyword_decisions`, from the pass
    that ranked): where it did, the views of the learned match explain a part that alone would have put another
    candidate first. With `decided_only` (the pages of those views), nothing is said where no keyword term decided."""
    answers = keyword_decisions(ranking)
    decided = [answer for answer in answers if answer.keywords_decide]

    def numbers(indices: tuple[int, ...]) -> str:
        return " and ".join(f"#{index + 1}" for index in indices)

    if decided:
        same = [components.md(answer.model) for answer in answers if not answer.keywords_decide]
        st.caption(":material/info: " + " ".join(
            f"{components.md(answer.model)}: the keyword term decides the top answer; by its learned match alone "
            f"{numbers(answer.learned)} would be first, not {numbers(answer.whole)}." for answer in decided)
            + (f" {', '.join(same)}: the same candidate first either way." if same else "")
            + " The pages that show the network's inner parts explain the learned match alone.")
    elif answers and not decided_only:
        whose = "every keyword model's" if len(answers) > 1 else f"{components.md(answers[0].model)}'s"
        st.caption(f":material/info: The keyword term does not change the top answer here: {whose} learned match "
                   "alone puts the same candidate first.")


def explained_with(page: str, part: Part, what: str) -> tuple[Ranking, int, list[str]] | None:
    """`explained_candidate`, then the chosen models whose explanation has `part`: (ranking, pick, those
    models), or None after telling the reader why (and which loaded models have `part`, named `what`)."""
    found = explained_candidate(page)
    if found is None:
        return None
    ranking, pick = found
    names = models_with(ranking, pick, part)
    if not names:
        lacking_part_note(part, what, key=f"{page}_lacking")
        return None
    lacking = [name for name in ranking.models if name not in names]
    if lacking:  # said in one line, so that a chosen model is never silently left out
        st.caption(f":material/visibility_off: {components.md(', '.join(lacking))}: no {what} in "
                   f"{'this model' if len(lacking) == 1 else 'these models'}, so not shown here.")
    return ranking, pick, names


def attending_models(ranking: Ranking, pick: int) -> list[str]:
    """The models that weigh words (an attention gate, a co-attention): their explanation has word weights."""
    return models_with(ranking, pick, Part.WORD_WEIGHTS)


def models_with(ranking: Ranking, pick: int, part: Part) -> list[str]:
    """The chosen models whose explanation of the picked candidate has `part`."""
    return [name for name, result in ranking.models.items() if result.explanations[pick].has(part)]


def lacking_part_note(part: Part, what: str, key: str) -> None:
    """One line saying that no chosen model has `part`, and which loaded models do (to choose on Rank)."""
    offer = state.models_having(part)
    st.info(f"None of the chosen models has {what}. "
            + (f"Models that have it: {components.md(', '.join(offer))}. Choose one on the Rank page."
               if offer else "No loaded model has it."), icon=":material/visibility_off:")
    st.page_link("ui/screens/rank.py", label="Choose models on the Rank page", icon=":material/format_list_numbered:")


def one_model(names: list[str], key: str, default: str | None = None) -> str:
    """Presentation mode's one view at a time: the model to show, picked with a segmented control."""
    fallback = default if default in names else names[0]
    chosen = st.segmented_control("Model", names, default=fallback, key=key,
                                  help="Presentation mode shows one model at a time.")
    return chosen if chosen in names else fallback


def panels(count: int, gap: str = "large") -> list:  # type: ignore[type-arg]
    """`count` side-by-side columns, or in presentation mode `count` full-width blocks one under another."""
    if state.presenting():
        return [st.container() for _ in range(count)]
    return list(st.columns(count, gap=gap))  # type: ignore[arg-type]


@dataclass(frozen=True)
class RankingSource:
    """The ranking data a person chose: its name, a key that changes with its content, and its lists."""

    name: str
    key: str
    read: Callable[[], list[RankingList]]


def ranking_file(key: str) -> RankingSource | None:
    """An uploaded ranking file, the sample file or a built-in data set (WikiQA, TrecQA where this
    machine has them; the section collection, which ships), whichever the person chose last (None: none yet).

    The uploader cannot be emptied from code, so choosing the sample or a data set sets the upload
    aside and says so; choosing a file again makes the upload the source again.
    """
    source, built_in_key = f"{key}_source", f"{key}_builtin"
    on_disk = built_in_splits()
    offered = {option.label: option for option in [*on_disk, *shipped_collections()]}
    shipped = sample_file()
    by_link_name = {link_name(label): label for label in offered}

    def uploaded() -> None:
        ss[source] = "upload" if ss.get(f"{key}_upload") is not None else None
        ss[built_in_key] = ss[DATA_SET] = None  # an upload is not in the link

    def sample() -> None:
        ss[source] = "sample"
        ss[built_in_key] = None
        ss[DATA_SET] = link_name(shipped.label)

    def built_in() -> None:
        ss[source] = "builtin" if ss.get(built_in_key) else None
        ss[DATA_SET] = link_name(ss[built_in_key]) if ss.get(built_in_key) else None

    # The data set in the link (this page's choice, the other page's, or a shared link's) is the choice: the
    # widgets are seeded from it before they are drawn, so a link opens on its data set, and Back returns to the one
    # before. A link that names none leaves an upload as it is.
    wanted = ss.get(DATA_SET)
    if wanted == link_name(shipped.label):
        ss[source], ss[built_in_key] = "sample", None
    elif wanted in by_link_name:
        ss[source], ss[built_in_key] = "builtin", by_link_name[wanted]
    elif wanted is not None:
        st.warning(f"The link's data set {components.md(wanted)} is not on this machine: choose one of those offered "
                   "below.", icon=":material/link_off:")
    elif ss.get(source) in ("builtin", "sample"):
        ss[source], ss[built_in_key] = None, None

    # 5:2:2, not 3:1:1: at 1280 px the button's label was cut to "Try the sample ..."; on a projector's large type
    # the data set's name was cut instead ("Section questions, s"), so the choice a class sees gets the most room.
    widths = [3, 2, 4] if state.presenting() else [5, 2, 2]
    upload_column, sample_column, built_in_column = st.columns(widths, vertical_alignment="bottom")
    with upload_column:
        file = st.file_uploader("Ranking file", type=["csv", "tsv", "txt"], key=f"{key}_upload", on_change=uploaded,
                                help="WikiQA TSV or CSV (question, candidate, label); UTF-8 text, up to 20 MB.")
    with sample_column:
        st.button("Try the sample file", icon=":material/science:", key=f"{key}_sample", on_click=sample,
                  help="8 questions written for MatchLens, 4 candidates each.", width="stretch")
    with built_in_column:
        found = (f"WikiQA and TrecQA: found in {data_root()}." if on_disk else
                 f"WikiQA and TrecQA: none found in {data_root()}; they do not ship with MatchLens. Set "
                 f"{DATA_VARIABLE} to a folder holding wikiqa/ and trecqa/ (train/, dev/, test/ of "
                 "a.toks, b.toks, id.txt, sim.txt) and restart the app.")
        st.selectbox("Built-in data set", list(offered), index=None, key=built_in_key, on_change=built_in,
                     placeholder="Choose a data set",  # the sets are in its list and help; a longer text was cut
                     disabled=not offered,
                     help=f"The standard test and dev splits, read from disk. {found} Section questions (ship with "
                          "MatchLens): 75 questions a set, each written from one sentence of an encyclopedia "
                          "section, every sentence of the section a candidate.")
    chosen = ss.get(source) or ("upload" if file is not None else None)
    set_aside = (f":material/info: Your file {components.md(file.name)} is set aside. Remove it (×) and choose it "
                 "again to use it.") if file is not None else None
    if chosen == "builtin" and ss.get(built_in_key) in offered:
        option = offered[ss[built_in_key]]
        if set_aside:
            st.caption(set_aside)
        return RankingSource(option.label, option.key, option.read)
    if chosen == "sample":
        if set_aside:
            st.caption(set_aside)
        return RankingSource(shipped.label, shipped.key, shipped.read)
    if file is not None:
        raw, name = file.getvalue(), file.name
        return RankingSource(name, content_key(raw), lambda: parse_ranking_file(raw, name))
    return None
