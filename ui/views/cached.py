"""Cached services: what depends only on the input, computed once per server, shared by every session.

The models are loaded once per process; an input (question, candidate lines, gold marks, chosen
models) is parsed and ranked once, whoever asks for it; a teacher's shared link opened by twenty
students costs one ranking. Nothing here reads or writes `st.session_state`.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from matching.explain.matcher import Matcher
from matching.explain.passes import PassCache
from matching.explain.ranking import Ranking, rank_tokens
from matching.models.parts import Part
from matching.text.data import content_key
from matching.text.inputs import CandidateInput, parse_input
from matching.text.tokens import TextError, Token
from matching.training.checkpoint import load_all

log = logging.getLogger("matchlens")

APP_DIR = Path(__file__).resolve().parents[2]  # ui/views/cached.py -> the folder of app.py
DEFAULT_MODELS = APP_DIR / "pretrained"


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


def models_having(part: Part) -> list[str]:
    """The loaded models whose explanations carry `part`."""
    return [name for name, matcher in models().items() if part in matcher.parts]


def load_errors() -> dict[str, str]:
    return _load_models(models_root())[1]


def page_modules(folder: Path = APP_DIR / "ui" / "screens") -> list[str]:
    """Every module the page scripts import, `from package import module` included (read from their
    source, never run)."""
    found: set[str] = set()
    for script in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != "__future__":
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names
                             if _is_module(f"{node.module}.{alias.name}"))
    return sorted(found)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, AttributeError, ValueError):  # a name inside a module, not a module
        return False


@st.cache_resource(show_spinner="Starting MatchLens (once per server)...")
def _warm(root: str) -> float:
    # One thread does this; every other run that arrives meanwhile waits on the cache's lock, blocked,
    # instead of 30 runs importing and loading side by side and then all taking their turns at once.
    start = time.perf_counter()
    loaded, _ = _load_models(root)
    for module in page_modules():
        try:
            importlib.import_module(module)
        except ImportError:  # an optional page dependency: the page itself says what is missing
            log.warning("warm-up: could not import %s", module, exc_info=True)
    from matching.text.examples import EXAMPLES
    from matching.text.inputs import join_candidates
    from matching.training.cards import default_models

    example = EXAMPLES[0]  # what a visit without a link opens: the first example, the default models
    rank_request(request_for(example.question, join_candidates(example.candidates), example.gold,
                             default_models(list(loaded))))
    return time.perf_counter() - start


def warm_up() -> float:
    """Load the models, import what the pages draw with and rank the first example, once per process
    (the first run of a fresh server does it; the runs that arrive meanwhile wait for it). Seconds taken."""
    return _warm(models_root())


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
        return content_key(self.question, *self.parsed.candidates, self.labels, *self.models, length=6)


# Requests are immutable and small: shared as they are (no copy), keyed by the raw input.
@st.cache_resource(max_entries=256, ttl=3600, show_spinner=False)
def _parsed_request(question: str, candidates_text: str, gold: tuple[int, ...], names: tuple[str, ...]) -> Request:
    parsed = parse_input(question, candidates_text, list(gold))
    return Request(parsed.question, parsed.question_tokens, parsed.candidates, parsed.labels, names, parsed.problem)


def request_for(question: str, candidates_text: str, gold: Sequence[int], names: Sequence[str]) -> Request:
    """The parsed input (question words, candidate lines and words, labels, what is wrong with it)."""
    return _parsed_request(question, candidates_text, tuple(int(i) for i in gold), tuple(names))


PASSES = PassCache(max_bytes=int(os.environ.get("MATCHLENS_PASS_CACHE_MIB", "256")) * 2**20)
"""Each model's traced pass over an input, shared by every session of this process (matching.explain.passes):
a session that adds a model to a ranking another session made computes that model's pass alone."""


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
                          labels=None if labels is None else list(labels), passes=PASSES)
    return ranking, time.perf_counter() - start


def rank_request(request: Request) -> tuple[Ranking | None, str | None, float]:
    """(ranking, None, model seconds) or (None, why not, 0)."""
    if request.problem:
        return None, request.problem, 0.0
    try:
        ranking, seconds = _rank_cached(models_root(), request.question, request.parsed.candidates,
                                        request.labels, request.models, request)
    except TextError as error:
        return None, f"This input cannot be ranked: {error}.", 0.0
    return ranking, None, seconds
