"""The app's shareable state in the URL: plain strings and one JSON list, validated and capped.

A link carries the question (`q`), the candidates (`c`, a JSON list of strings),
the correct candidates (`gold`, 1-based numbers such as "1,3"), the candidate being
explained (`pick`, 1-based), the chosen models (`models`, comma-separated names) and the
pair on the Compare page (`pair`, two 1-based numbers such as "1,3").
How the view is shown travels apart (`ViewState`): presentation mode (`present=1`),
the walkthrough's step (`step`, 1-based) and model (`model`), the Interactions page's models
and matrices (`matrices`), and the data set of the Evaluate and Sanity pages (`data`, never an
upload); a link with only these carries no input.
Decoding only parses strings and JSON (never evaluates anything), checks every
field's type and size, and raises `UrlStateError` with a sentence a person can act
on when the input itself (question, candidates) was cut short or edited by hand. A broken
secondary part (`gold`, `pick`, `pair`, `models`) does not cost the reader the input: it is
left at its default and named in `SharedState.ignored`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import unquote, urlsplit

from matching.text.inputs import join_candidates, split_candidates

MAX_LINK_CHARS = 8_000
"""Longest state put in a link (sum of the parameter values); browsers and servers cut longer URLs."""
MAX_QUESTION_CHARS = 2_000
MAX_CANDIDATE_CHARS = 4_000
MAX_LINK_CANDIDATES = 100
MAX_MODELS = 64
"""Most model names a link carries: above the 36 checkpoints shipped, so that every model the picker offers ("Select
all" included) travels in a link (16 refused the link the app itself wrote for all of them)."""
KEYS = ("q", "c", "gold", "pick", "models", "pair")
VIEW_KEYS = ("present", "step", "model", "matrices", "data")
_DATA_SET = re.compile(r"^[a-z0-9-]{1,64}$")  # `datasets.link_name`: "wikiqa-test", "section-questions-set-a"
_MATRIX_VIEW = re.compile(r"^[a-z0-9 ]{1,32}$")  # a matrix view's name: "combined", "exact match", "slice 2"
MAX_STEP = 99
_MODEL_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
_NUMBERS = re.compile(r"^\d{1,4}(,\d{1,4})*$")
_T = TypeVar("_T")


class UrlStateError(ValueError):
    """A link whose state cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class SharedState:
    question: str
    candidates: tuple[str, ...]
    gold: tuple[int, ...] = ()
    """0-based indices of the correct candidates."""
    pick: int = 0
    """0-based index of the candidate being explained."""
    models: tuple[str, ...] | None = None
    """Chosen model names, or None for the app's default."""
    pair: tuple[int, int] | None = None
    """0-based (A, B) compared on the Compare page, or None for its default."""
    ignored: tuple[str, ...] = ()
    """What was wrong with each secondary part of the link that was left at its default instead."""


def _single(params: Mapping[str, str | Sequence[str]], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    values = list(value)
    if len(values) != 1 or not isinstance(values[0], str):
        raise UrlStateError(f"the link gives '{key}' {len(values)} times; it should appear once")
    return values[0]


def has_state(params: Mapping[str, object]) -> bool:
    return any(key in params for key in KEYS)


def unknown_page(url: str | None, base_path: str, known: Collection[str]) -> str | None:
    """The page a link's address names that is none of `known` (the pages' url paths, "" the default), or None:
    Streamlit opens the default page for `/nosuchpage?q=...` and says nothing, so the reader took the Rank page for
    the page the link meant. `base_path`: the server's base URL path (server.baseUrlPath), left out first."""
    if not url:
        return None
    path = urlsplit(url).path.strip("/")
    base = base_path.strip("/")
    if base:
        if path != base and not path.startswith(base + "/"):
            return None  # not an address of this app's: nothing to say about it
        path = path[len(base):].strip("/")
    name = unquote(path)
    return None if name in known else name


STREAMLIT_KEYS = ("embed", "embed_options")
"""Query keys Streamlit itself reads (an app shown inside another page): not the app's, but not unknown either."""


def unread_keys(params: Mapping[str, object]) -> list[str]:
    """The keys of a link that nothing reads, in the order given: a hand-edited link's `candidate=` or `question=` was
    dropped without a word, and its reader saw the default example with no hint why (`KEYS`, `VIEW_KEYS` and
    Streamlit's own keys are read)."""
    read = {*KEYS, *VIEW_KEYS, *STREAMLIT_KEYS}
    return [key for key in params if key not in read]


def unread_note(keys: Sequence[str]) -> str:
    """The sentence a reader is shown for `unread_keys` (at most five named, each cut to 24 characters)."""
    named = ", ".join(_quoted(key, 24) for key in keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5
                                                                      else "")
    return (f"This link's {named} {'is' if len(keys) == 1 else 'are'} not read by MatchLens (it reads "
            f"{', '.join(KEYS + VIEW_KEYS)}).")


def encode(state: SharedState) -> dict[str, str] | None:
    """Query parameters for `state`, or None when it is too large for a link."""
    params = {"q": state.question,
              "c": json.dumps(list(state.candidates), ensure_ascii=False, separators=(",", ":"))}
    if state.gold:
        params["gold"] = ",".join(str(i + 1) for i in sorted(set(state.gold)))
    if state.pick:
        params["pick"] = str(state.pick + 1)
    if state.models is not None:
        params["models"] = ",".join(state.models)
    if state.pair is not None:
        params["pair"] = f"{state.pair[0] + 1},{state.pair[1] + 1}"
    too_big = (sum(len(v) for v in params.values()) > MAX_LINK_CHARS
               or len(state.question) > MAX_QUESTION_CHARS
               or len(state.candidates) > MAX_LINK_CANDIDATES
               or (state.models is not None and len(state.models) > MAX_MODELS)
               or any(len(c) > MAX_CANDIDATE_CHARS for c in state.candidates))
    return None if too_big else params


def _quoted(text: str, limit: int) -> str:
    """A value from the link as a message quotes it: its first `limit` characters, and how many more where it goes
    on, so that a message never quotes as the link's value a number the link does not hold (an ellipsis there ran
    into the sentence's full stop: "…'999'….")."""
    rest = len(text) - limit
    return repr(text[:limit]) + (f" and {rest:,} more character{'s' if rest > 1 else ''}" if rest > 0 else "")


def _numbers(text: str, key: str, count: int) -> list[int]:
    if not _NUMBERS.match(text):
        raise UrlStateError(f"the link's '{key}' should be candidate numbers such as 1,3; got {_quoted(text, 40)}")
    numbers = [int(part) for part in text.split(",")]
    bad = [n for n in numbers if not 1 <= n <= count]
    if bad:
        raise UrlStateError(f"the link's '{key}' names candidate {bad[0]}, but there are {count}")
    return [n - 1 for n in numbers]


def decode(params: Mapping[str, str | Sequence[str]]) -> SharedState | None:
    """The state a link carries, None when it carries none; UrlStateError when it is broken."""
    if not has_state(params):
        return None
    total = 0
    values: dict[str, str | None] = {}
    for key in KEYS:
        values[key] = _single(params, key)
        total += len(values[key] or "")
    if total > MAX_LINK_CHARS:
        raise UrlStateError(f"the link carries {total:,} characters of state; the limit is {MAX_LINK_CHARS:,}")
    question, raw_candidates = values["q"], values["c"]
    if question is None or raw_candidates is None:
        raise UrlStateError("the link needs both a question ('q') and candidates ('c'); it may have been cut short")
    if len(question) > MAX_QUESTION_CHARS:
        raise UrlStateError(f"the link's question has {len(question):,} characters; the limit is "
                            f"{MAX_QUESTION_CHARS:,}")
    try:
        candidates = json.loads(raw_candidates)
    except (json.JSONDecodeError, RecursionError):
        raise UrlStateError("the link's candidates ('c') are not valid JSON; the link may have been "
                            "cut short or edited") from None
    if not isinstance(candidates, list) or not all(isinstance(c, str) for c in candidates):
        raise UrlStateError("the link's candidates ('c') should be a JSON list of texts")
    if not candidates:
        raise UrlStateError("the link's candidate list ('c') is empty")
    if len(candidates) > MAX_LINK_CANDIDATES:
        raise UrlStateError(f"the link has {len(candidates)} candidates; the limit is {MAX_LINK_CANDIDATES}")
    long = [n for n, c in enumerate(candidates, start=1) if len(c) > MAX_CANDIDATE_CHARS]
    if long:
        raise UrlStateError(f"the link's candidate {long[0]} is longer than {MAX_CANDIDATE_CHARS:,} characters")
    ignored: list[str] = []
    count = len(candidates)
    # The page leaves out a candidate without words (blank, spaces, invisible characters), and the numbers after it
    # would then name the next one: they are read against the link's own numbering and carried to what is kept.
    kept = split_candidates(join_candidates(candidates), max_candidates=MAX_LINK_CANDIDATES).lines
    if not kept:
        raise UrlStateError("the link's candidates ('c') have no words")
    place = {line - 1: index for index, line in enumerate(kept)}
    dropped = [number for number in range(1, count + 1) if number - 1 not in place]
    if dropped:
        numbers = ", ".join(map(str, dropped))
        ignored.append(f"the link's candidate {numbers} has no words, so it was left out" if len(dropped) == 1 else
                       f"the link's candidates {numbers} have no words, so they were left out")

    def kept_numbers(key: str) -> list[int]:
        numbers = _numbers(values[key] or "", key, count)
        left_out = [n + 1 for n in numbers if n not in place]
        if left_out:
            raise UrlStateError(f"the link's '{key}' names candidate {left_out[0]}, which has no words")
        return [place[n] for n in numbers]

    def gold() -> tuple[int, ...]:
        return tuple(sorted(set(kept_numbers("gold")))) if values["gold"] else ()

    def pick() -> int:
        return kept_numbers("pick")[0] if values["pick"] else 0

    def pair() -> tuple[int, int] | None:
        if not values["pair"]:
            return None
        numbers = kept_numbers("pair")
        if len(numbers) != 2 or numbers[0] == numbers[1]:
            raise UrlStateError("the link's 'pair' should be two different candidate numbers such as 1,3")
        return numbers[0], numbers[1]

    def or_default(read: Callable[[], _T], default: _T) -> _T:
        try:
            return read()
        except UrlStateError as error:
            ignored.append(str(error))
            return default

    return SharedState(question=question, candidates=tuple(candidates[line - 1] for line in kept),
                       gold=or_default(gold, ()),
                       pick=or_default(pick, 0), models=or_default(lambda: decode_models(params), None),
                       pair=or_default(pair, None), ignored=tuple(ignored))


def decode_models(params: Mapping[str, str | Sequence[str]]) -> tuple[str, ...] | None:
    """The model names a link carries (None when it names none; () for "models=", no model chosen, baselines only);
    UrlStateError when they are not names.
    Read on their own too: a link may choose the models and leave the input to the default example."""
    value = _single(params, "models")
    if value is None:
        return None
    names = [n for n in value.split(",") if n]
    if not names and value:  # "models=,," opened the default models without a word
        raise UrlStateError("the link's 'models' names no model")
    if len(names) > MAX_MODELS:
        raise UrlStateError(f"the link names {len(names):,} models; the limit is {MAX_MODELS}")
    if not all(_MODEL_NAME.match(n) for n in names):
        raise UrlStateError("the link's 'models' should be model names separated by commas")
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class ViewState:
    """How the input is shown: presentation mode, and where the walkthrough stands."""

    present: bool = False
    step: int = 0
    """0-based walkthrough step (the page clamps it to its own number of steps)."""
    model: str | None = None
    """The model the walkthrough explains, or None for the page's default."""
    matrices: tuple[tuple[str, str], ...] = ()
    """The Interactions page's (model, matrix view) on each side, or () for the page's defaults."""
    data: str | None = None
    """The data set chosen on the Evaluate and Sanity pages (`datasets.link_name`), or None (none, or an upload)."""


def encode_view(view: ViewState) -> dict[str, str]:
    """Query parameters for `view` (only what differs from the defaults)."""
    params = {}
    if view.present:
        params["present"] = "1"
    if view.step:
        params["step"] = str(view.step + 1)
    if view.model is not None:
        params["model"] = view.model
    if view.matrices:
        params["matrices"] = ",".join(f"{model}:{shown}" for model, shown in view.matrices)
    if view.data is not None:
        params["data"] = view.data
    return params


def decode_view(params: Mapping[str, str | Sequence[str]]) -> ViewState:
    """The view a link asks for; UrlStateError (with the defaults unusable) when it is malformed."""
    present, step, model, matrices, data = (_single(params, key) for key in VIEW_KEYS)
    problems = []  # every one said: "present=yes&step=abc" named 'present' alone, and 'step' fell back unsaid
    if present not in (None, "0", "1"):
        problems.append(f"the link's 'present' should be 1 or 0; got {_quoted(present, 20)}")
    if step is not None and not (step.isdigit() and 1 <= int(step) <= MAX_STEP):
        problems.append(f"the link's 'step' should be a walkthrough step number such as 3; got {_quoted(step, 20)}")
    if model is not None and not _MODEL_NAME.match(model):
        problems.append("the link's 'model' should be one model name")
    sides = [tuple(side.split(":", 1)) for side in matrices.split(",")] if matrices else []
    if len(sides) > 2 or not all(len(side) == 2 and _MODEL_NAME.match(side[0]) and _MATRIX_VIEW.match(side[1])
                                 for side in sides):
        problems.append("the link's 'matrices' should be one or two model:view pairs, such as "
                        "mvlstm:cosine,mcan:affinity")
    if data is not None and not _DATA_SET.match(data):
        problems.append("the link's 'data' should name a data set, such as wikiqa-test or section-questions-set-a")
    if problems:
        raise UrlStateError("; ".join(problems))
    return ViewState(present=present == "1", step=int(step) - 1 if step else 0, model=model,
                     matrices=tuple(sides), data=data)  # type: ignore[arg-type]
