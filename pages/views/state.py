"""The app's shared state: loaded models, the current input, its ranking and the URL.

Every page reads the same canonical input from `st.session_state` (question,
candidate lines, gold marks, the candidate being explained, chosen models) and
gets its ranking from `current()`, which is cached per input. Widgets are
"controlled": each is seeded from the canonical value before it is drawn and
writes back through a callback, so pages never disagree about the input.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from matching import urlstate
from matching.checkpoint import load_all
from matching.counterfactual import Comparison, compare
from matching.examples import EXAMPLES, Example
from matching.inputs import (
    CandidateInput,
    clean_gold,
    join_candidates,
    parse_input,
    remap_gold,
    split_candidates,
)
from matching.matcher import Matcher
from matching.ranking import Ranking, rank_tokens
from matching.text import TextError, Token

log = logging.getLogger("matchlens")

APP_DIR = Path(__file__).resolve().parents[2]  # pages/views/state.py -> the folder of app.py
DEFAULT_MODELS = APP_DIR / "pretrained"

QUESTION, CANDIDATES, GOLD, PICK, MODELS = "ml_question", "ml_candidates", "ml_gold", "ml_pick", "ml_models"
BEFORE, URL_DONE, URL_ERROR, URL_NOTE = "ml_before", "ml_url_done", "ml_url_error", "ml_url_note"


def models_root() -> str:
    """The checkpoint folder: $MATCHLENS_MODELS, else pretrained/ next to app.py."""
    return os.environ.get("MATCHLENS_MODELS") or str(DEFAULT_MODELS)


@st.cache_resource(show_spinner="Loading the models (once per server)...")
def _load_models(root: str) -> tuple[dict[str, Matcher], dict[str, str]]:
    # The models are tiny: one thread per forward pass is faster than a pool that contends
    # with other sessions (and other processes) for the cores (measured: 20 ms vs up to 3 s).
    import torch

    torch.set_num_threads(1)
    try:
        return load_all(root)
    except Exception as error:  # vectors missing, torch trouble: disable all, keep the app up
        log.exception("loading models from %s failed", root)
        return {}, {root: f"could not load models: {type(error).__name__}: {error}"}


def models() -> dict[str, Matcher]:
    return _load_models(models_root())[0]


def load_errors() -> dict[str, str]:
    return _load_models(models_root())[1]


# A ranking keeps every explanation (matrices included): up to ~15 MB for 100 candidates and five
# models, so the cache is kept small; it serves re-draws, page switches and the "before" comparison.
@st.cache_resource(max_entries=32, ttl=3600, show_spinner=False)
def _rank_cached(root: str, question: str, candidates: tuple[str, ...], labels: tuple[int, ...] | None,
                 names: tuple[str, ...], _request: Request) -> tuple[Ranking, float]:
    # Keyed by the texts; the request carries their words, parsed once (not hashed: underscore).
    loaded = _load_models(root)[0]
    start = time.perf_counter()
    ranking = rank_tokens(question, _request.question_tokens, list(candidates), list(_request.parsed.tokens),
                          {n: loaded[n] for n in names if n in loaded},
                          labels=None if labels is None else list(labels))
    return ranking, time.perf_counter() - start


# ---------------------------------------------------------------- canonical input

def _default_example() -> Example:
    return EXAMPLES[0]


def init() -> None:
    """Seed the canonical state once per session (from the link when it carries state)."""
    ss = st.session_state
    if QUESTION not in ss:
        example = _default_example()
        ss[QUESTION] = example.question
        ss[CANDIDATES] = join_candidates(example.candidates)
        ss[GOLD] = list(example.gold)
        ss[PICK] = 0
        ss[MODELS] = None
        ss[BEFORE] = None
    if not ss.get(URL_DONE):
        ss[URL_DONE] = True
        _read_link()


def _read_link() -> None:
    ss = st.session_state
    params = {key: st.query_params.get_all(key) for key in st.query_params.keys()}  # noqa: SIM118
    try:
        shared = urlstate.decode(params)
    except urlstate.UrlStateError as error:
        ss[URL_ERROR] = f"This link could not be opened: {error}. The default example is shown instead."
        return
    if shared is None:
        return
    ss[QUESTION] = shared.question
    ss[CANDIDATES] = join_candidates(shared.candidates)
    ss[GOLD] = list(shared.gold)
    ss[PICK] = shared.pick
    if shared.models is not None:
        known = [n for n in shared.models if n in models()]
        unknown = [n for n in shared.models if n not in models()]
        ss[MODELS] = known or None
        if unknown:
            ss[URL_NOTE] = f"The link names model(s) that are not available here: {', '.join(unknown)}."


def write_link() -> None:
    """Put the current input in the URL (unless it is too large for a link)."""
    ss = st.session_state
    request = current_request()
    shared = urlstate.SharedState(question=ss[QUESTION], candidates=request.parsed.candidates,
                                  gold=tuple(clean_gold(ss[GOLD], len(request.parsed.candidates))),
                                  pick=pick_index(len(request.parsed.candidates)),
                                  models=None if ss[MODELS] is None else tuple(ss[MODELS]))
    params = urlstate.encode(shared)
    if params is None:
        ss["ml_link_too_long"] = True
        wanted: dict[str, str] = {}
    else:
        ss["ml_link_too_long"] = False
        wanted = params
    current = {key: st.query_params.get(key) for key in st.query_params.keys()}  # noqa: SIM118
    if current != wanted:
        st.query_params.from_dict(wanted)


def inputs_snapshot() -> dict[str, object]:
    ss = st.session_state
    return {"question": ss[QUESTION], "candidates": ss[CANDIDATES], "gold": list(ss[GOLD])}


def set_inputs(question: str | None = None, candidates: str | None = None, gold: Sequence[int] | None = None,
               pick: int | None = None, remember: bool = True) -> None:
    """Change the canonical input; the input before a text edit is kept for the comparison."""
    ss = st.session_state
    new_question = ss[QUESTION] if question is None else question
    new_candidates = ss[CANDIDATES] if candidates is None else candidates
    if (new_question, new_candidates) != (ss[QUESTION], ss[CANDIDATES]):
        ss[BEFORE] = inputs_snapshot() if remember else None
        ss.pop(URL_ERROR, None)
    if gold is None and new_candidates != ss[CANDIDATES]:
        gold = remap_gold(split_candidates(ss[CANDIDATES]).candidates, split_candidates(new_candidates).candidates,
                          ss[GOLD])
    ss[QUESTION], ss[CANDIDATES] = new_question, new_candidates
    if gold is not None:
        ss[GOLD] = sorted({int(i) for i in gold})
    if pick is not None:
        ss[PICK] = int(pick)


def load_example(example: Example) -> None:
    set_inputs(example.question, join_candidates(example.candidates), example.gold, pick=0, remember=False)


def pick_index(count: int) -> int:
    pick = int(st.session_state.get(PICK, 0) or 0)
    return pick if 0 <= pick < count else 0


def chosen_models() -> list[str]:
    loaded = list(models())
    chosen = st.session_state.get(MODELS)
    if chosen is None:
        return loaded
    return [n for n in chosen if n in loaded]


# ---------------------------------------------------------------- derived: request and ranking

@dataclass(frozen=True)
class Request:
    question: str
    question_tokens: tuple[Token, ...]
    parsed: CandidateInput
    labels: tuple[int, ...] | None
    models: tuple[str, ...]
    problem: str | None
    """Why nothing can be ranked (None when ranking is possible)."""

    @property
    def digest(self) -> str:
        text = "\x00".join((self.question, *self.parsed.candidates, str(self.labels), *self.models))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def _request(question: str, candidates_text: str, gold: Sequence[int], names: Sequence[str]) -> Request:
    parsed = parse_input(question, candidates_text, gold)
    return Request(question, parsed.question_tokens, parsed.candidates, parsed.labels, tuple(names), parsed.problem)


def current_request() -> Request:
    ss = st.session_state
    return _request(ss[QUESTION], ss[CANDIDATES], ss[GOLD], chosen_models())


@dataclass(frozen=True)
class Current:
    request: Request
    ranking: Ranking | None
    problem: str | None
    seconds: float
    """Time the models took for this input (when it was first ranked)."""


def _rank_request(request: Request) -> tuple[Ranking | None, str | None, float]:
    if request.problem:
        return None, request.problem, 0.0
    try:
        ranking, seconds = _rank_cached(models_root(), request.question, request.parsed.candidates,
                                        request.labels, request.models, request)
    except TextError as error:
        return None, f"This input cannot be ranked: {error}.", 0.0
    return ranking, None, seconds


def current() -> Current:
    request = current_request()
    ranking, problem, seconds = _rank_request(request)
    return Current(request, ranking, problem, seconds)


def before_comparison(now: Ranking) -> Comparison | None:
    """The ranking before the last edit compared with `now`, when there was an edit."""
    before = st.session_state.get(BEFORE)
    if not before:
        return None
    request = _request(str(before["question"]), str(before["candidates"]), list(before["gold"]),  # type: ignore[call-overload]
                       list(now.models))
    ranking, _, _ = _rank_request(request)
    if ranking is None:
        return None
    return compare(ranking, now)
